"""Coded errors as JSON answers for the Vadalog and Dezfil dialects.

A refusal is the API's failure envelope (:func:`app.api.envelopes.failure_body`) with the
code's HTTP status, or the status a dialect gives its own codes (401 for a missing token, 404
for an unknown run, …).
"""

from __future__ import annotations

from starlette.responses import JSONResponse

from app.api.envelopes import failure_body, new_request_id, status_for
from app.core.errors import ArxiuError
from app.core.phrases import Phrase


def refusal_response(error: ArxiuError, *, status: int | None = None) -> JSONResponse:
    """The JSON answer refusing a request with ``error``."""
    return JSONResponse(
        failure_body(error, new_request_id()), status_code=status or status_for(error)
    )


def invalid(message: str | Phrase, *, field: str = "") -> ArxiuError:
    """``request.invalid`` about the request's shape (naming the field when there is one)."""
    return ArxiuError(
        "request.invalid",
        message,
        hint="Fix the request and send it again.",
        category="input",
        details={"field": field} if field else None,
    )
