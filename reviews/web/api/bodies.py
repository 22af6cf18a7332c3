"""What the bodies the API reads by hand hold, for its OpenAPI document: the upload
(a JSON batch, or multipart files) and a dataset's pipelines. Each schema says what
the reader refuses with 400, so a request the schema calls valid is not refused for
its shape; what JSON Schema cannot say (ids unique within a list, what is inside an
uploaded file) is in the descriptions. tests/web/api/test_openapi_schemathesis.py holds
the server to them; tests/web/api/test_bodies.py checks them against the readers."""

from __future__ import annotations

from reviews.engine.ingest.json_batch import DATASET_NAME_MAX
from reviews.engine.ingest.pipelines import MAX_PIPELINES, MAX_STAGES
from reviews.engine.ingest.records import COMPANIES, CONTACTS, DEALS, LEADS
from reviews.web.api.common import MOMENT_HELP, MOMENT_SCHEMA

# A dataset name as reviews.engine.ingest.json_batch.dataset_name_problem accepts it:
# 1 to DATASET_NAME_MAX characters once stripped of white space, none of them a control
# character. (Python's `\s` is str.isspace, what strip() removes.) A lone surrogate,
# which only a JSON body can carry, is refused too; the pattern does not name that
# range, which schemathesis's generators cannot read.
_NAME_CHAR = r"[^\x00-\x1f]"
_NAME_EDGE = r"[^\s\x00-\x1f]"
DATASET_NAME_PATTERN = (
    rf"^\s*(?:{_NAME_EDGE}|{_NAME_EDGE}{_NAME_CHAR}{{0,{DATASET_NAME_MAX - 2}}}{_NAME_EDGE})\s*$"
)
DATASET_NAME_HELP = (
    f"a dataset name: up to {DATASET_NAME_MAX} characters once trimmed, no control characters"
)
# Beside the upload (query parameter or form field) a blank name means none.
DATASET_PARAM_SCHEMA = {
    "type": "string",
    "pattern": rf"^\s*$|{DATASET_NAME_PATTERN}",
    "description": f"The dataset this batch is a sync of (wins over the batch's own key): "
    f"{DATASET_NAME_HELP}; blank for none.",
}

# Record ids are text with something in it (reviews.engine.ingest.records.record_id).
_RECORD_ID = {"type": "string", "pattern": r"\S", "description": "the CRM's own id"}
# Past these, a date is not one Python can hold: an invalid exportedAt.
_EPOCH_MS = {"type": "number", "minimum": -62135596800000, "maximum": 253402300799999}


def _records(kind) -> dict:
    read = ", ".join(f"`{field.key}`" for field in kind.fields)
    return {
        "type": "array",
        "description": f"Its {kind.name}, each id unique within the list. Fields read: {read}; "
        "a value that cannot be read is a finding, not a refusal; other fields are kept.",
        "items": {
            "type": "object",
            "required": ["id"],
            "properties": {"id": _RECORD_ID},
        },
    }


def _text_or_null(description: str) -> dict:
    return {"type": ["string", "null"], "description": description}


_STAGE = {
    "type": "object",
    "required": ["id"],
    "properties": {
        "id": _RECORD_ID,
        "label": _text_or_null("its name as HubSpot shows it"),
        "closed": {"type": ["boolean", "null"]},
        "won": {"type": ["boolean", "null"], "description": "a won stage is closed"},
        "probability": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
    },
}
_NATIVE_PIPELINES = {
    "type": ["array", "null"],
    "description": "The deal pipelines, each id unique, each stage id unique within its "
    "pipeline (docs/input.md#pipelines-and-stages).",
    "items": {
        "type": "object",
        "required": ["id", "stages"],
        "properties": {
            "id": _RECORD_ID,
            "label": _text_or_null("its name"),
            "stages": {"type": "array", "items": _STAGE},
        },
    },
}

JSON_BATCH = {
    "type": "object",
    "title": "JSON batch",
    "description": "A JSON batch (docs/input.md#the-json-batch), stored byte for byte. The "
    "body may also be HubSpot CRM API JSON (docs/input.md#hubspot-crm-api-json): a document "
    "with `results`, or whose first record has `properties`, is read as that.",
    "required": [COMPANIES.name, CONTACTS.name, DEALS.name],
    "properties": {
        "id": _text_or_null("the batch's own name"),
        "dataset": {
            "anyOf": [
                {"type": "null"},
                {"const": ""},
                {"type": "string", "pattern": DATASET_NAME_PATTERN},
            ],
            "description": f"{DATASET_NAME_HELP} (the `dataset` parameter wins over it)",
        },
        "exportedAt": {
            "anyOf": [*MOMENT_SCHEMA["anyOf"], _EPOCH_MS, {"type": "null"}],
            "description": "the as-of time: an ISO 8601 date-time or date, or epoch milliseconds",
        },
        "source": _text_or_null("kept and shown"),
        "pipelines": _NATIVE_PIPELINES,
        COMPANIES.name: _records(COMPANIES),
        CONTACTS.name: _records(CONTACTS),
        DEALS.name: _records(DEALS),
        LEADS.name: _records(LEADS),  # optional: Salesforce's leads
    },
}

MULTIPART_UPLOAD = {
    "type": "object",
    "required": ["files"],
    "properties": {
        "files": {
            "type": "array",
            "minItems": 1,
            "items": {"type": "string", "format": "binary"},
            "description": "One JSON batch, one to three HubSpot CSV, XLSX or CRM API JSON "
            "exports, or a ZIP holding them, with HubSpot's pipelines response beside them if "
            "wanted (docs/input.md). What a file holds is read as it is; one that is not a "
            "batch is kept and answered 400 with its errors.",
        },
        "dataset": DATASET_PARAM_SCHEMA,
        "as_of": {
            "anyOf": [*MOMENT_SCHEMA["anyOf"], {"const": ""}],
            "description": f"Date rules count from this time: {MOMENT_HELP}; empty for none "
            "(the `as_of` parameter wins over it).",
        },
    },
}

UPLOAD_BODY = {
    "required": True,
    "content": {
        "application/json": {"schema": JSON_BATCH},
        "multipart/form-data": {"schema": MULTIPART_UPLOAD},
    },
}

# HubSpot's `GET /crm/v3/pipelines/deals` answer as it is sent
# (reviews.engine.ingest.pipelines.pipelines_from_hubspot): ids may be numbers.
_HUBSPOT_ID = {"anyOf": [_RECORD_ID, {"type": "integer"}]}
_HUBSPOT_PIPELINE = {
    "type": "object",
    "required": ["id", "stages"],
    "properties": {
        "id": _HUBSPOT_ID,
        "stages": {
            "type": "array",
            "description": f"at most {MAX_STAGES}",
            "items": {
                "type": "object",
                "required": ["id"],
                "properties": {"id": _HUBSPOT_ID},
                "description": "`metadata.isClosed` and `metadata.probability` say whether "
                "it is closed and won",
            },
        },
    },
}
# The limits (MAX_PIPELINES, MAX_STAGES) are in the descriptions, not maxItems: with
# those bounds schemathesis sends bodies of a thousand pipelines.
_PIPELINE_LIST = {
    "type": "array",
    "minItems": 1,
    "description": f"at most {MAX_PIPELINES}",
    "items": _HUBSPOT_PIPELINE,
}
PIPELINES_BODY = {
    "required": True,
    "description": "HubSpot's GET /crm/v3/pipelines/deals response, as sent (or its list "
    "of pipelines, or one pipeline); pipeline ids unique, stage ids unique within each.",
    "content": {
        "application/json": {
            "schema": {
                "anyOf": [
                    {
                        "type": "object",
                        "required": ["results"],
                        "properties": {"results": _PIPELINE_LIST},
                        "not": {"required": ["stages"]},
                    },
                    _PIPELINE_LIST,
                    _HUBSPOT_PIPELINE,
                ]
            }
        }
    },
}
