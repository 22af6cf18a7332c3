"""Prompts are files in reviews/prompts/ (DESIGN principle 6): shared.md for every
agent, specialist.md for the four specialists, and one per agent."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"
_NAME = re.compile(r"[a-z_]+")


@cache
def load(name: str) -> str:
    """The prompt file `name`.md, read once per process."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"not a prompt name: {name!r}")
    return (PROMPTS_DIR / f"{name}.md").read_text(encoding="utf-8").strip()
