"""Bearer-token authentication for the Vadalog and Dezfil dialects (``arxiu users token NAME``).

A request carries ``Authorization: Bearer TOKEN``; the token is looked up in the users file
(only its SHA-256 is stored there), so a token issued or a user removed takes effect at once.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse

from app.api.context import ApiContext
from app.api.refusals import refusal_response
from app.api.users import User
from app.core.errors import ArxiuError

SCHEME = "bearer"


def bearer_token(request: Request) -> str | None:
    """The token of the request's ``Authorization: Bearer`` header, if any."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != SCHEME or not token.strip():
        return None
    return token.strip()


def authenticate(request: Request, ctx: ApiContext) -> User | JSONResponse:
    """The user the request's bearer token belongs to, or the 401 answer to send."""
    token = bearer_token(request)
    user = ctx.users.user_for_token(token) if token else None
    if user is not None:
        return user
    error = ArxiuError(
        "auth.token_invalid",
        "This endpoint needs a valid bearer token." if token else "No bearer token was sent.",
        hint="Send `Authorization: Bearer TOKEN`; an administrator issues one with "
        "`arxiu users token NAME`.",
        category="permission",
    )
    response = refusal_response(error, status=401)
    response.headers["www-authenticate"] = 'Bearer realm="arxiu"'
    return response
