"""A rule file: YAML (JSON is YAML too) holding `{"rules": [{id, object, when, severity,
title, fix, owner_from?}, ...]}`. A file is taken whole or refused whole, with every
problem listed, each naming its rule and, in `when`, where (RuleFileError)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml
from sqlglot import exp

from reviews.engine.findings import Severity
from reviews.engine.specialists import KINDS
from reviews.engine.specialists.spec import OBJECTS, FixTarget, Kind, Match
from reviews.engine.team_rules import language

FIELDS = ("id", "object", "when", "severity", "title", "fix", "owner_from")
REQUIRED = ("id", "object", "when", "severity", "title", "fix")
SLUG = re.compile(r"^[a-z][a-z0-9_]{1,63}$")  # a finding's kind holds 64 characters
MAX_BYTES = 256 * 1024
MAX_RULES = 200
MAX_NESTING = 20  # lists and mappings inside one another
TEXT_MAX = {"title": 300, "fix": 2000, "when": 20000, "owner_from": 200}
# An object's record in words (leads too: the tables of a CRM that has them keep them).
ONE = {"companies": "company", "contacts": "contact", "deals": "deal", "leads": "lead"}


class RuleFileError(ValueError):
    """A rule file refused, with every problem found (one line each)."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("\n".join(problems))


@dataclass(frozen=True, slots=True)
class TeamRule:
    id: str
    object: str
    when: str
    severity: str
    title: str
    fix: str
    owner_from: str = ""

    def as_data(self) -> dict[str, str]:
        data = {name: getattr(self, name) for name in FIELDS}
        if not self.owner_from:
            del data["owner_from"]
        return data

    @property
    def tree(self) -> exp.Expression:
        tree, problems = language.parse(self.when)
        if tree is None:  # a TeamRule is only made from a checked file
            raise RuleFileError([f"rule {self.id}: {p.text(self.when)}" for p in problems])
        return tree

    @property
    def kind(self) -> Kind:
        """The rule as a kind of finding, with every fact the review needs of one."""
        return Kind(
            self.id,
            (Severity(self.severity),),
            # the label is a format string (Kind.heading): the team's braces are text
            (ONE[self.object], self.object, self.title.replace("{", "{{").replace("}", "}}")),
            Match.EXACT,
            finds=f"the team's rule: `{self.when}`",
            fix=FixTarget(self.object, ""),
        )


def load(text: str | bytes) -> list[TeamRule]:
    """The rules of a rule file's text; RuleFileError listing every problem."""
    if isinstance(text, bytes):
        if len(text) > MAX_BYTES:
            raise RuleFileError([f"the file is {len(text):,} bytes; at most {MAX_BYTES:,}"])
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as error:
            raise RuleFileError([f"the file is not UTF-8 (byte {error.start})"]) from None
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise RuleFileError([f"the file is larger than {MAX_BYTES:,} bytes"])
    if "\x00" in text or _has_surrogate(text):
        where = "a NUL byte" if "\x00" in text else "a lone surrogate"
        raise RuleFileError([f"the file holds {where}: a rule file is text"])
    try:
        _check_events(yaml.parse(text))
        document = yaml.safe_load(text)
    except RecursionError:  # _check_events bounds the nesting; this is a last guard
        raise RuleFileError([f"the file is nested more than {MAX_NESTING} deep"]) from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or "cannot be read"
        raise RuleFileError([f"not YAML or JSON{where}: {problem}"]) from None
    if not isinstance(document, dict) or not isinstance(document.get("rules"), list):
        raise RuleFileError(['the file must hold {"rules": [...]}, a list of rules'])
    unknown = sorted(repr(key)[:60] for key in set(document) - {"rules"})
    if unknown:
        raise RuleFileError([f"unknown top-level key(s): {', '.join(unknown)}"])
    return check_rules(document["rules"])


def _check_events(events: Iterable[yaml.Event]) -> None:
    """Refuse aliases, and nesting deeper than a rule file has (the file, its list, a
    rule: 3 levels) by far, before the loader's recursion meets it."""
    depth = 0
    for event in events:
        if isinstance(event, yaml.AliasEvent):
            raise RuleFileError(["YAML aliases (*name) are not allowed in a rule file"])
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_NESTING:
                mark = event.start_mark
                raise RuleFileError(
                    [
                        f"the file is nested more than {MAX_NESTING} deep (line "
                        f"{mark.line + 1}, column {mark.column + 1}); a rule file needs 3"
                    ]
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def check_rules(items: Iterable[Any]) -> list[TeamRule]:
    """The rules `items` describe (mappings), or RuleFileError with every problem."""
    items = list(items)
    if len(items) > MAX_RULES:
        raise RuleFileError([f"{len(items)} rules; at most {MAX_RULES} in one file"])
    problems: list[str] = []
    rules: list[TeamRule] = []
    seen: set[str] = set()
    for number, item in enumerate(items, 1):
        found = _problems(item, number, seen)
        if found:
            problems += found
        else:
            rules.append(TeamRule(**{k: str(v) for k, v in item.items()}))
    if problems:
        raise RuleFileError(problems)
    return rules


def _problems(item: Any, number: int, seen: set[str]) -> list[str]:
    if not isinstance(item, Mapping):
        return [f"rule {number}: must be a mapping of {', '.join(REQUIRED)}"]
    rule_id = item.get("id")
    name = f"rule {number}"
    if isinstance(rule_id, str) and rule_id:  # a rule is named by its id, shown safely
        name = f"rule {rule_id}" if SLUG.fullmatch(rule_id) else f"rule {rule_id[:64]!r}"
    problems = [f"{name}: unknown field {repr(key)[:60]}" for key in item if key not in FIELDS]
    problems += [f"{name}: {key} is missing" for key in REQUIRED if key not in item]
    for key, value in item.items():
        if key in FIELDS and not isinstance(value, str):
            problems.append(f"{name}: {key} must be text, not {type(value).__name__}")
        elif key in FIELDS and ("\x00" in value or _has_surrogate(value)):
            problems.append(f"{name}: {key} holds a NUL byte or a lone surrogate")
        elif key in TEXT_MAX and len(value) > TEXT_MAX[key]:
            problems.append(
                f"{name}: {key} is {len(value):,} characters; at most {TEXT_MAX[key]:,}"
            )
    if problems:
        return problems
    if not SLUG.fullmatch(rule_id):
        problems.append(
            f"{name}: id must be a slug: a lowercase letter, then lowercase letters, digits "
            "or _ (2 to 64 characters)"
        )
    elif rule_id in KINDS:
        problems.append(f"{name}: id {rule_id!r} is a built-in kind; choose another")
    elif rule_id in seen:
        problems.append(f"{name}: id {rule_id!r} is used twice")
    seen.add(rule_id)
    if item["object"] not in OBJECTS:
        problems.append(f"{name}: unknown object {item['object']!r}; one of {', '.join(OBJECTS)}")
    if item["severity"] not in {s.value for s in Severity}:
        problems.append(
            f"{name}: unknown severity {item['severity']!r}; one of "
            f"{', '.join(s.value for s in Severity)}"
        )
    for key in ("title", "when"):
        if not item[key].strip():
            problems.append(f"{name}: {key} is empty")
    if item["when"].strip():
        _tree, found = language.parse(item["when"])
        problems += [f"{name}: when: {p.text(item['when'])}" for p in found]
    return problems


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def dump(rules: Iterable[TeamRule]) -> str:
    """A rule file holding `rules` (YAML; `load` reads it back)."""
    return yaml.safe_dump(
        {"rules": [rule.as_data() for rule in rules]}, sort_keys=False, allow_unicode=True
    )
