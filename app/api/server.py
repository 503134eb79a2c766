"""The local API server: one Starlette app mounting every dialect behind the hardening layer.

Each dialect module (``app.api.dedalo``, ``app.api.vadalog``, ``app.api.dezfil``) exposes
``routes(ctx) -> list[BaseRoute]``; :func:`create_app` mounts them all on one app. Unknown
paths and methods, and any unexpected fault, are answered with the coded JSON failure
envelope, never with a traceback.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute

from app.api import dedalo, dezfil, oai, vadalog
from app.api.context import ApiContext
from app.api.hardening import HardeningMiddleware, error_body

log = logging.getLogger(__name__)

DIALECTS = (dedalo, vadalog, dezfil, oai)
"""The dialect modules mounted, each with ``routes(ctx)`` (``oai``: the OAI-PMH provider)."""

_STATUS_CODES = {
    404: ("request.not_found", "There is nothing at this address."),
    405: ("request.method_not_allowed", "This address does not take that method."),
}


def dialect_routes(ctx: ApiContext) -> list[BaseRoute]:
    """The routes of every dialect."""
    return [route for module in DIALECTS for route in module.routes(ctx)]


async def _http_error(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    code, message = _STATUS_CODES.get(status, ("request.invalid", "The request was refused."))
    return JSONResponse(error_body(code, message), status_code=status)


async def _internal_error(request: Request, exc: Exception) -> Response:
    log.exception("API request failed", exc_info=exc)
    body = error_body("api.internal", "The server failed unexpectedly.", "Try again.")
    body["error"]["category"] = "internal"
    return JSONResponse(body, status_code=500)


def create_app(ctx: ApiContext) -> Starlette:
    """The ASGI app serving ``ctx`` on every dialect."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await ctx.aclose()

    handlers: dict[Any, Any] = {HTTPException: _http_error, Exception: _internal_error}
    app = Starlette(
        routes=dialect_routes(ctx),
        middleware=[
            Middleware(
                HardeningMiddleware,
                allowed_hosts=ctx.allowed_hosts,
                max_body_bytes=ctx.limits.max_body_bytes,
            )
        ],
        exception_handlers=handlers,
        lifespan=lifespan,
    )
    app.state.ctx = ctx
    return app
