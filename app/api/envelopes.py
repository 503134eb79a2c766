"""JSON envelopes and HTTP statuses for coded errors, shared by the dialects."""

from __future__ import annotations

import uuid
from typing import Any

from starlette.responses import JSONResponse

from app.core.errors import ArxiuError
from app.core.phrases import Phrase

STATUS_BY_CODE: dict[str, int] = {
    "request.invalid": 400,
    "request.too_large": 413,
    "ai.model_unknown": 400,
    "ai.model_no_vision": 400,
    "ai.model_cannot_plan": 400,
    "ai.effort_not_offered": 400,
    "ai.models_unconfigured": 503,
    "ai.model_catalog_invalid": 503,
    "auth.required": 401,
    "auth.invalid_credentials": 401,
    "auth.csrf_invalid": 403,
    "auth.rate_limited": 429,
    "mcp.write_disabled": 403,
    "mcp.egress_restricted": 403,
    "mcp.plan_hash_mismatch": 409,
    "mcp.plan_resolved": 409,
    "mcp.plan_unknown": 404,
    "mcp.plan_invalid": 400,
}
STATUS_BY_CATEGORY: dict[str, int] = {
    "input": 400,
    "permission": 403,
    "conflict": 409,
    "provider": 502,
    "environment": 503,
    "internal": 500,
}


def new_request_id() -> str:
    """A fresh request id (echoed in every envelope, for logs and support)."""
    return uuid.uuid4().hex


def status_for(error: ArxiuError) -> int:
    """The HTTP status of a coded error: by code, else by category."""
    return STATUS_BY_CODE.get(error.code, STATUS_BY_CATEGORY.get(error.category, 400))


def failure_body(error: ArxiuError, request_id: str) -> dict[str, Any]:
    """The failure envelope ``{ok: false, request_id, error}`` (with ``result``, ``msg`` and
    ``errors``, as Dédalo's work API answers every action)."""
    return {
        "ok": False,
        "result": False,
        "request_id": request_id,
        "msg": error.message,
        "errors": [error.code],
        "error": error.to_dict(),
    }


def failure(
    error: ArxiuError, request_id: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    """The failure envelope as a response with the code's status."""
    return JSONResponse(
        failure_body(error, request_id), status_code=status_for(error), headers=headers
    )


def success(data: Any, request_id: str, **extra: Any) -> JSONResponse:
    """The success envelope ``{ok: true, result: true, msg, errors: [], request_id, data}``."""
    body = {"ok": True, "result": True, "msg": "OK", "errors": [], "request_id": request_id}
    return JSONResponse({**body, **extra, "data": data})


def invalid(message: str | Phrase, field: str, hint: str | Phrase | None = None) -> ArxiuError:
    """A ``request.invalid`` error naming the offending field."""
    return ArxiuError(
        "request.invalid",
        message,
        hint=hint or "Fix the request and send it again.",
        category="input",
        details={"field": field},
    )
