"""A model's reply is made storable where it enters (reviews.llm.apply, with the one
sanitiser reviews.engine.storable): NUL and lone surrogates become visible escapes."""

from __future__ import annotations

from reviews.llm.apply import apply_specialist_reply
from reviews.llm.schemas import SpecialistReply
from tests.engine.specialists.factories import company, make_batch


def test_a_model_reply_is_made_storable_where_it_enters():
    batch = make_batch([company("co_1", domain="a.example"), company("co_2", domain="b.example")])
    # As the client reads a reply: a JSON escape gives a NUL (pydantic refuses a lone
    # surrogate escape as invalid JSON, so that one can only come from Python).
    reply = SpecialistReply.model_validate_json(
        b'{"add": [{"kind": "odd_pair", "severity": "suggestion", "title": "x\\u0000y",'
        b' "detail": "d", "record_ids": ["co_1", "co_2"], "suggested_fix": "f\\u0000"}]}'
    )
    reply.add[0].detail = "d\ud800"
    applied = apply_specialist_reply("dedup", batch, [], {}, reply)
    (added,) = applied.findings
    assert (added.title, added.suggested_fix) == ("x\\u0000y", "f\\u0000")
    assert added.detail == "d\\ud800"
