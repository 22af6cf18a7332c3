"""The gateway client alone, over httpx.MockTransport: request shape, usage, error
classes, the JSON-mode fallback and the one repair. No database, no socket."""

import json

import httpx
import pytest

from reviews.llm import errors
from reviews.llm.client import Gateway
from reviews.llm.replies import parse_reply, parse_usage
from reviews.llm.schemas import SpecialistReply

MODEL = "google/gemini-2.5-flash-lite"
MESSAGES = [{"role": "system", "content": "rules"}, {"role": "user", "content": "task"}]
GOOD = {"add": [], "adjust": [], "dismiss": [{"ref": "f1", "reason": "two people"}]}


def ok(content, usage=None, model=MODEL):
    text = content if isinstance(content, str) else json.dumps(content)
    body = {"model": model, "choices": [{"message": {"role": "assistant", "content": text}}]}
    if usage is not None:
        body["usage"] = usage
    return httpx.Response(200, json=body)


def gateway(*responses, key="sk-unit", json_schema=True):
    """A Gateway whose transport answers `responses` in order and records the requests."""
    sent: list[dict] = []
    queue = list(responses)

    def handle(request: httpx.Request) -> httpx.Response:
        sent.append(
            {
                "url": str(request.url),
                "headers": request.headers,
                "body": json.loads(request.content),
            }
        )
        reply = queue.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply

    client = Gateway(
        "http://gw.test/v1/",
        key,
        timeout=5,
        max_output_tokens=500,
        json_schema=json_schema,
        transport=httpx.MockTransport(handle),
    )
    return client, sent


def test_request_is_an_openai_chat_completion_with_a_json_schema():
    client, sent = gateway(ok(GOOD))
    completion = client.complete(MODEL, MESSAGES, SpecialistReply)
    assert completion.data.dismiss[0].reason == "two people"
    request = sent[0]
    assert request["url"] == "http://gw.test/v1/chat/completions"
    assert request["headers"]["authorization"] == "Bearer sk-unit"
    assert request["body"]["model"] == MODEL
    assert request["body"]["messages"] == MESSAGES
    assert request["body"]["max_tokens"] == 500
    response_format = request["body"]["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["schema"] == SpecialistReply.model_json_schema()


def test_usage_is_read_with_cached_tokens():
    usage = {
        "prompt_tokens": 900,
        "completion_tokens": 80,
        "prompt_tokens_details": {"cached_tokens": 512},
    }
    client, _ = gateway(ok(GOOD, usage))
    completion = client.complete(MODEL, MESSAGES, SpecialistReply)
    assert completion.usage == errors.Usage(900, 512, 80)


def test_usage_reads_litellm_cache_reads_and_survives_its_absence():
    assert parse_usage(
        {"prompt_tokens": 10, "completion_tokens": 2, "cache_read_input_tokens": 4}
    ) == errors.Usage(10, 4, 2)
    assert parse_usage(None) == errors.Usage()
    assert parse_usage({"prompt_tokens": "many"}) == errors.Usage()


def test_the_served_model_is_the_one_the_gateway_names():
    client, _ = gateway(ok(GOOD, model="google/gemini-2.5-flash-lite-001"))
    assert client.complete(MODEL, MESSAGES, SpecialistReply).model_served == (
        "google/gemini-2.5-flash-lite-001"
    )


@pytest.mark.parametrize(
    ("response", "error_class", "failback"),
    [
        (httpx.Response(429, json={"error": {"message": "slow down"}}), errors.RateLimited, True),
        (httpx.Response(500, text="boom"), errors.ProviderUnavailable, True),
        (
            httpx.Response(503, json={"error": {"message": "overloaded"}}),
            errors.ProviderUnavailable,
            True,
        ),
        (httpx.Response(401, json={"error": {"message": "bad key"}}), errors.AuthFailed, False),
        (httpx.Response(403, json={"error": {"message": "forbidden"}}), errors.AuthFailed, False),
        (
            httpx.Response(
                400,
                json={
                    "error": {
                        "code": "context_length_exceeded",
                        "message": "maximum context length is 8192",
                    }
                },
            ),
            errors.ContextOverflow,
            False,
        ),
        (httpx.Response(413, text="too large"), errors.ContextOverflow, False),
        (
            httpx.Response(404, json={"error": {"message": "no such model"}}),
            errors.BadRequest,
            False,
        ),
        (httpx.Response(200, text="<html>proxy error</html>"), errors.ProviderUnavailable, True),
        (
            httpx.Response(200, json={"error": {"code": 502, "message": "upstream"}}),
            errors.ProviderUnavailable,
            True,
        ),
        (httpx.ReadTimeout("slow"), errors.CallTimeout, True),
        (httpx.ConnectError("refused"), errors.ConnectionFailed, True),
    ],
)
def test_errors_are_classified(response, error_class, failback):
    client, _ = gateway(response)
    with pytest.raises(error_class) as raised:
        client.complete(MODEL, MESSAGES, SpecialistReply)
    assert raised.value.failback is failback


def test_a_redirect_is_an_answer_never_followed():
    """A gateway answering 302 (towards the key's next stop): one request, no second,
    and a BadRequest that does not fail back to send the key there by another model."""
    moved = httpx.Response(302, headers={"Location": "http://127.0.0.1:9/redirected"})
    client, sent = gateway(moved, ok(GOOD))
    with pytest.raises(errors.BadRequest, match="HTTP 302") as raised:
        client.complete(MODEL, MESSAGES, SpecialistReply)
    assert raised.value.failback is False
    assert [request["url"] for request in sent] == ["http://gw.test/v1/chat/completions"]


def test_a_provider_without_json_schema_is_asked_again_in_json_mode():
    rejected = httpx.Response(
        400, json={"error": {"message": "response_format json_schema is not supported"}}
    )
    attempts = []
    client, sent = gateway(rejected, ok(GOOD), ok(GOOD))
    client.complete(
        MODEL, MESSAGES, SpecialistReply, on_attempt=lambda *attempt: attempts.append(attempt)
    )
    assert attempts == [(None, errors.Usage(), attempts[0][2], "http_error")]
    assert sent[1]["body"]["response_format"] == {"type": "json_object"}
    assert "JSON Schema" in sent[1]["body"]["messages"][-1]["content"]
    # Remembered: the next call goes straight to JSON mode.
    client.complete(MODEL, MESSAGES, SpecialistReply)
    assert sent[2]["body"]["response_format"] == {"type": "json_object"}


def test_json_mode_can_be_chosen_by_setting():
    client, sent = gateway(ok(GOOD), json_schema=False)
    client.complete(MODEL, MESSAGES, SpecialistReply)
    assert sent[0]["body"]["response_format"] == {"type": "json_object"}


def test_invalid_json_gets_one_repair_request():
    attempts = []
    client, sent = gateway(
        ok("not json {", {"prompt_tokens": 50, "completion_tokens": 5}), ok(GOOD)
    )
    completion = client.complete(
        MODEL, MESSAGES, SpecialistReply, on_attempt=lambda *attempt: attempts.append(attempt)
    )
    assert completion.data.dismiss[0].ref == "f1"
    assert [a[3] for a in attempts] == ["invalid_output"]
    assert attempts[0][1] == errors.Usage(50, 0, 5)  # the bad reply's tokens are billed too
    repair = sent[1]["body"]["messages"]
    assert repair[-2] == {"role": "assistant", "content": "not json {"}
    assert "not valid" in repair[-1]["content"]


def test_a_second_invalid_reply_is_a_structured_output_error():
    client, _ = gateway(ok("{}oops"), ok({"dismiss": [{"ref": "f1"}]}))
    with pytest.raises(errors.StructuredOutputError) as raised:
        client.complete(MODEL, MESSAGES, SpecialistReply)
    assert raised.value.failback is False
    assert "reason" in str(raised.value)


def test_a_json_fence_around_the_reply_is_tolerated():
    data, problem = parse_reply("```json\n" + json.dumps(GOOD) + "\n```", SpecialistReply)
    assert problem == "" and data.dismiss[0].ref == "f1"


def test_the_api_key_echoed_in_an_error_is_redacted():
    key = "sk-secret-echo-123"
    client, _ = gateway(httpx.Response(401, json={"error": {"message": f"bad key {key}"}}), key=key)
    with pytest.raises(errors.AuthFailed) as raised:
        client.complete(MODEL, MESSAGES, SpecialistReply)
    assert key not in str(raised.value)
    assert "[redacted]" in str(raised.value)


# --- the gateway's own cost (OpenRouter's usage.cost) ------------------------------


def test_the_gateway_cost_is_read_in_micro_dollars():
    # OpenRouter's usage accounting: `cost` in USD beside the token counts.
    usage = {"prompt_tokens": 194, "completion_tokens": 2, "cost": 0.000095, "total_tokens": 196}
    client, _ = gateway(ok(GOOD, usage))
    completion = client.complete(MODEL, MESSAGES, SpecialistReply)
    assert completion.usage == errors.Usage(194, 0, 2, gateway_cost_micros=95)


def test_no_cost_in_the_reply_means_none_not_zero():
    client, _ = gateway(ok(GOOD, {"prompt_tokens": 10, "completion_tokens": 1}))
    assert client.complete(MODEL, MESSAGES, SpecialistReply).usage.gateway_cost_micros is None


def reply_with_raw_usage(usage_json: str) -> httpx.Response:
    """A good reply whose usage object is `usage_json` exactly as written (JSON that
    json.dumps would never produce: NaN, 1e400, 5000-digit integers)."""
    message = {"role": "assistant", "content": json.dumps(GOOD)}
    head = json.dumps({"model": "m", "choices": [{"message": message}]})
    body = head[:-1] + ', "usage": ' + usage_json + "}"
    return httpx.Response(200, content=body.encode())


@pytest.mark.parametrize(
    "raw_cost", ['"0.5"', "-0.01", "true", "1e400", "NaN", "20000", "null", "{}"]
)
def test_an_unbelievable_cost_is_ignored_and_the_reply_kept(raw_cost):
    usage = f'{{"prompt_tokens": 5, "completion_tokens": 1, "cost": {raw_cost}}}'
    client, _ = gateway(reply_with_raw_usage(usage))
    completion = client.complete(MODEL, MESSAGES, SpecialistReply)
    assert completion.usage == errors.Usage(5, 0, 1, gateway_cost_micros=None)
    assert completion.data == SpecialistReply.model_validate(GOOD)


def test_a_5000_digit_number_in_the_reply_does_not_lose_it():
    huge = "9" * 5000
    usage = f'{{"prompt_tokens": {huge}, "completion_tokens": 3, "cost": {huge}}}'
    client, _ = gateway(reply_with_raw_usage(usage))
    completion = client.complete(MODEL, MESSAGES, SpecialistReply)
    assert completion.usage == errors.Usage(0, 0, 3, gateway_cost_micros=None)
    assert completion.data == SpecialistReply.model_validate(GOOD)


def test_a_retired_model_is_its_own_error_that_fails_back():
    body = {
        "error": {"message": "google/gemini-2.0-flash-001 is not a valid model ID", "code": 400}
    }
    client, _ = gateway(httpx.Response(400, json=body))
    with pytest.raises(errors.ModelUnavailable) as raised:
        client.complete("google/gemini-2.0-flash-001", MESSAGES, SpecialistReply)
    assert raised.value.failback
    assert "is not a valid model ID" in str(raised.value)
