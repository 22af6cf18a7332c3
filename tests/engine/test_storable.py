"""One sanitiser (reviews.engine.storable): NUL and lone surrogates become their visible
escape text everywhere text enters or leaves the engine, and values stay distinct."""

from __future__ import annotations

import ast

import orjson

from reviews.engine.findings import RawFinding, pack_exact, unpack
from reviews.engine.storable import is_storable, storable, storable_tree
from tests.services import ROOT


def finding(**fields) -> RawFinding:
    values = {
        "category": "dedup",
        "kind": "company_same_domain",
        "severity": "warning",
        "title": "t",
        "detail": "d",
        "record_ids": ["co_1"],
    }
    return RawFinding(**{**values, **fields})


def test_escapes_keep_values_visible_and_distinct():
    assert storable("co_\x00") == "co_\\u0000"
    assert storable("co_\ud800") == "co_\\ud800"
    assert len({storable(t) for t in ("co_\x00", "co_\ud800", "co_\udfff", "co_")}) == 4
    assert all(is_storable(storable(t)) for t in ("\x00", "\ud800x", "a\udfffb\x00"))
    text = "plain ✓ 😀"
    assert storable(text) is text


def test_a_tree_is_made_storable_keys_too_and_says_whether_it_changed():
    clean = {"a": ["b", ("c",)], "n": 1}
    assert storable_tree(clean) == (clean, False)
    dirty = {"k\x00": ["x", ("y\ud800",)], "n": 1}
    assert storable_tree(dirty) == ({"k\\u0000": ["x", ["y\\ud800"]], "n": 1}, True)


def test_the_findings_blob_escapes_what_utf8_cannot_hold_keeping_ids_apart():
    blob, exact = pack_exact([finding(title="A\x00", record_ids=["co_\x00", "co_\ud800"])])
    assert not exact
    (read,) = unpack(blob)
    assert (read.title, read.record_ids) == ("A\\u0000", ["co_\\u0000", "co_\\ud800"])
    assert pack_exact([finding()])[1]
    # A NUL alone is bytes a blob holds: kept exact; the findings writer escapes it.
    nul, exact = pack_exact([finding(title="A\x00")])
    assert exact and unpack(nul)[0].title == "A\x00"
    assert orjson.loads(blob)["fields"][0] == "category"


def test_there_is_one_sanitiser():
    """No other module replaces unstorable text (the API refuses it, by another name)."""
    offenders = []
    for path in ROOT.glob("reviews/**/*.py"):
        if path.name == "storable.py" or "migrations" in path.parts:
            continue
        text = path.read_text()
        tree = ast.parse(text)
        names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        if names & {"clean_text", "make_safe", "safe_tree"} or "\\ufffd" in text:
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []
