"""The replies a model may give, as pydantic models: sent as the JSON schema of the
request and used to validate what comes back. What a reply may change is decided in
reviews.llm.apply; these only fix its shape."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from reviews.engine.findings import Severity as _Severity
from reviews.engine.specialists import NAMES

# Derived from the engine: a new severity or specialist changes the reply schema with it.
Severity = Literal[tuple(s.value for s in _Severity)]  # type: ignore[valid-type]
Category = Literal[NAMES]  # type: ignore[valid-type]


class _Reply(BaseModel):
    # Unknown keys are ignored rather than failing the whole reply.
    model_config = {"extra": "ignore"}


class NewFinding(_Reply):
    kind: str = Field(description="snake_case name of the problem, e.g. amount_looks_like_typo")
    severity: Severity
    title: str
    detail: str
    record_ids: list[str] = Field(description="ids of records in the batch, as given")
    suggested_fix: str = ""
    confidence: float = Field(default=0.8, ge=0, le=1)


class SeverityChange(_Reply):
    ref: str = Field(description="the finding's ref, e.g. f3")
    severity: Severity
    reason: str = Field(min_length=1)


class Dismissal(_Reply):
    ref: str = Field(description="the finding's ref, e.g. f3")
    reason: str = Field(min_length=1)


class SpecialistReply(_Reply):
    add: list[NewFinding] = Field(default_factory=list)
    adjust: list[SeverityChange] = Field(default_factory=list)
    dismiss: list[Dismissal] = Field(default_factory=list)


class Merge(_Reply):
    refs: list[str] = Field(min_length=2, description="refs of findings that are one problem")
    reason: str = Field(min_length=1)


class Recategorisation(_Reply):
    ref: str
    category: Category
    reason: str = Field(min_length=1)


class Drop(_Reply):
    ref: str
    reason: str = Field(min_length=1)


class CoordinatorReply(_Reply):
    merge: list[Merge] = Field(default_factory=list)
    recategorise: list[Recategorisation] = Field(default_factory=list)
    drop: list[Drop] = Field(default_factory=list)
    summary: str = Field(min_length=1, description="one short paragraph for a RevOps lead")
