"""The Dédalo dialect (seed 000): ``POST /dedalo/core/api/v1/json/`` with ``{action, dd_api,
options}``.

* ``login`` (``dd_api: "dd_utils_api"``, ``{username, auth}``) sets an HttpOnly,
  SameSite=Strict session cookie and returns ``csrf_token``; ``logout`` ends the session.
  Failed logins are rate-limited per client address and user name, and per user name from
  clients it never logged in from (429; :class:`~app.api.hardening.LoginThrottle`), so that
  one attacker cannot lock other people out.
* Every ``dd_mcp_api`` action needs the cookie and ``X-Dedalo-Csrf-Token``; none is exempt:
  ``agent_models``, ``agent_chat`` (one JSON answer), ``agent_chat_stream`` (SSE with ``: ping``
  heartbeats) and ``agent_apply`` (``{plan, plan_hash}`` → the nested apply report): only a
  plan the core proposed to this user, once (``mcp.plan_resolved`` after), unedited
  (``plan_hash`` is the bound hash the server sent: ``mcp.plan_hash_mismatch`` otherwise).
* Refusals before streaming are the JSON failure envelope with the code's HTTP status.
* ``thinking`` is an indicator only (``{state}``, no reasoning text); history is text-only
  and the server keeps none (the client resends ``final.history``); the server does keep
  digests of what it answered, so a resent answer's taint is its own, never the client's.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from app.api.bodies import parse_body
from app.api.context import ApiContext
from app.api.envelopes import failure, failure_body, invalid, new_request_id, status_for, success
from app.api.hardening import LoginThrottle
from app.api.logins import COOKIE_NAME, CSRF_HEADER, LoginTable, csrf_matches
from app.api.permissions import check_apply, write_refused
from app.api.run_bugs import coded_bugs
from app.api.sse import PING, SSE_HEADERS, frame, with_heartbeats
from app.api.users import User
from app.core.agent.events import ErrorEvent, Event, FinalEvent, ThinkingEvent
from app.core.agent.request import ChatRequest
from app.core.errors import ArxiuError
from app.core.phrases import Phrase

PATH = "/dedalo/core/api/v1/json/"
CHAT_KEYS = ("answer", "stop", "change_plan", "turns", "model", "usage", "history")


def auth_error(code: str, message: str | Phrase, hint: str | Phrase) -> ArxiuError:
    """An ``auth.*`` refusal."""
    return ArxiuError(code, message, hint=hint, category="permission")


@dataclass
class Call:
    """One parsed call: who (once authenticated), what, with which options."""

    request: Request
    request_id: str
    action: str
    dd_api: str
    options: dict[str, Any]
    user: User | None = None


class DedaloApi:
    """The dialect's state: the context, the logins and the login rate limiters."""

    def __init__(self, ctx: ApiContext) -> None:
        self.ctx = ctx
        self.logins = LoginTable(ctx.limits.session_ttl_s)
        self.limiter = LoginThrottle(ctx.limits.login_attempts, ctx.limits.login_window_s)

    async def endpoint(self, request: Request) -> Response:
        """Parse, authenticate and dispatch one call."""
        request_id = new_request_id()
        try:
            call = await self._parse(request, request_id)
            if call.action in {"login", "logout"} and call.dd_api == "dd_utils_api":
                return await self._login(call) if call.action == "login" else self._logout(call)
            if call.dd_api != "dd_mcp_api":
                raise invalid(
                    Phrase.of("Unknown API {api!r}.", api=call.dd_api), "dd_api", "Use dd_mcp_api."
                )
            call.user = self._authenticated(request)
            return await self._dispatch(call)
        except ArxiuError as error:
            return failure(error, request_id, _retry_headers(error))

    async def _parse(self, request: Request, request_id: str) -> Call:
        data = parse_body(await request.body())
        if not isinstance(data, dict):
            raise invalid("The body must be a JSON object.", "body")
        action, dd_api = data.get("action"), data.get("dd_api")
        options = data.get("options", {})
        if not isinstance(action, str) or not action:
            raise invalid("`action` must be a string.", "action")
        if not isinstance(dd_api, str):
            raise invalid("`dd_api` must be a string.", "dd_api")
        if not isinstance(options, dict):
            raise invalid("`options` must be an object.", "options")
        return Call(request, request_id, action, dd_api, options)

    # -- login -------------------------------------------------------------------------------
    async def _login(self, call: Call) -> Response:
        name, password = call.options.get("username"), call.options.get("auth")
        if not isinstance(name, str) or not isinstance(password, str):
            raise invalid("`username` and `auth` must be strings.", "options")
        address, name_key = _client(call.request), name[:128]
        wait = self.limiter.retry_after(address, name_key)
        if wait > 0:
            raise ArxiuError(
                "auth.rate_limited",
                "Too many failed logins; wait before trying again.",
                hint=Phrase.of("Try again in {seconds} s.", seconds=math.ceil(wait)),
                category="permission",
                retryable=True,
                details={"retry_after": math.ceil(wait)},
            )
        user = self.ctx.users.authenticate(name, password)
        if user is None:
            self.limiter.failed(address, name_key)
            raise auth_error(
                "auth.invalid_credentials",
                "Wrong user name or password.",
                "Check them; `arxiu users list` shows the users.",
            )
        self.limiter.succeeded(address, name_key)
        session_id, login = self.logins.create(user.name, user.id)
        data = {
            "username": user.name,
            "can_write": user.can_write,
            "can_read_restricted": user.can_read_restricted,
        }
        response = success(data, call.request_id, csrf_token=login.csrf_token)
        response.set_cookie(
            COOKIE_NAME,
            session_id,
            max_age=int(self.ctx.limits.session_ttl_s),
            path="/",
            httponly=True,
            samesite="strict",
            secure=call.request.url.scheme == "https",
        )
        return response

    def _logout(self, call: Call) -> Response:
        self._authenticated(call.request)
        self.logins.drop(call.request.cookies.get(COOKIE_NAME))
        response = success(None, call.request_id)
        response.delete_cookie(COOKIE_NAME, path="/")
        return response

    def _authenticated(self, request: Request) -> User:
        login = self.logins.get(request.cookies.get(COOKIE_NAME))
        if login is None:
            raise auth_error("auth.required", "Log in first.", "Call the login action.")
        if not csrf_matches(login, request.headers.get(CSRF_HEADER)):
            raise auth_error(
                "auth.csrf_invalid",
                "The CSRF token is missing or wrong.",
                "Send the login's csrf_token in X-Dedalo-Csrf-Token.",
            )
        user = self.ctx.users.get(login.user_name)
        if user is None or user.id != login.user_id:  # removed (and maybe re-added) since
            self.logins.drop_user(login.user_name)
            raise auth_error("auth.required", "This user no longer exists.", "Log in again.")
        return user

    # -- assistant actions -------------------------------------------------------------------
    async def _dispatch(self, call: Call) -> Response:
        assert call.user is not None
        if call.action == "agent_models":
            return success(self.ctx.session_for(call.user).models(), call.request_id)
        if call.action in {"agent_chat", "agent_chat_stream"}:
            events = await self._start_chat(call)
            if call.action == "agent_chat":
                return await _chat_answer(call.request, events, call.request_id)
            return StreamingResponse(
                self._sse(events), headers=dict(SSE_HEADERS), media_type="text/event-stream"
            )
        if call.action == "agent_apply":
            return await self._apply(call)
        raise invalid(
            Phrase.of("Unknown action {action!r}.", action=call.action),
            "action",
            "See the seed's four actions.",
        )

    async def _start_chat(self, call: Call) -> AsyncIterator[Event]:
        assert call.user is not None
        question = call.options.get("question")
        limit = self.ctx.limits.max_question_chars
        if isinstance(question, str) and len(question) > limit:
            raise invalid(
                Phrase.of("The question is over {limit} characters.", limit=limit), "question"
            )
        if call.options.get("mode") == "write" and not self.ctx.write_allowed(call.user):
            raise write_refused()  # the server's or the user's wall, named as such
        request = ChatRequest.from_dict(
            {k: v for k, v in call.options.items() if k != "supersedes"}
        )
        # the history is the client's copy: its taint is judged from the server's own ledger
        session = self.ctx.session_for(call.user)
        return coded_bugs(await session.chat(request, history_owner=call.user.id))

    async def _sse(self, events: AsyncIterator[Event]) -> AsyncIterator[bytes]:
        async for event in with_heartbeats(events, self.ctx.limits.heartbeat_s):
            if event is None:
                yield PING
                continue
            payload = wire_payload(event)
            if payload is not None:
                yield frame(event.kind, payload)

    async def _apply(self, call: Call) -> Response:
        assert call.user is not None
        plan, plan_hash = call.options.get("plan"), call.options.get("plan_hash")
        if not isinstance(plan, dict) or not isinstance(plan_hash, str):
            raise invalid("`plan` must be an object and `plan_hash` a string.", "options")
        session = self.ctx.session_for(call.user)
        check_apply(call.user, self.ctx.write_allowed(call.user), plan, session.archive)
        # Arxiu's one addition to the seed's options: the second confirmation that a plan
        # flagged ``restricted_text`` needs (a tainted run's plan writing into an open section).
        second = call.options.get("confirm_restricted", False)
        if not isinstance(second, bool):
            raise invalid("`confirm_restricted` must be true or false.", "options")
        # only a plan the core proposed to this user, once: by its pending id or (the seed's
        # body, without one) by its bound hash
        report = await session.plans.apply_posted(plan, plan_hash, confirm_restricted=second)
        return JSONResponse(
            {
                "ok": True,
                "request_id": call.request_id,
                "data": {"ok": True, "data": _as_dict(report)},
            }
        )


def wire_payload(event: Event) -> dict[str, Any] | None:
    """An event's payload on this dialect (``None``: not sent; thinking is an indicator)."""
    if isinstance(event, ThinkingEvent):
        return {"state": event.state} if event.state != "delta" else None
    return event.to_dict()


async def _chat_answer(request: Request, events: AsyncIterator[Event], request_id: str) -> Response:
    """The run's one JSON answer; a client that disconnects first stops the run."""
    collecting = asyncio.ensure_future(_last_event(events))
    watching = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait({collecting, watching}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watching.cancel()
        if not collecting.done():
            collecting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await collecting
            await events.aclose()  # type: ignore[attr-defined]
    if collecting.cancelled():
        return Response(status_code=499)  # nobody is listening any more
    last = collecting.result()
    if isinstance(last, ErrorEvent):
        error = last.error()
        return JSONResponse(failure_body(error, request_id), status_code=status_for(error))
    if not isinstance(last, FinalEvent):  # pragma: no cover - runs end with final or error
        raise ArxiuError("api.internal", "The run ended without an answer.", category="internal")
    body = last.to_dict()
    return success({k: body[k] for k in CHAT_KEYS}, request_id)


async def _last_event(events: AsyncIterator[Event]) -> Event | None:
    last: Event | None = None
    async for event in events:
        last = event
    return last


async def _disconnected(request: Request) -> None:
    """Return when the client goes away (the body was already read by the middleware)."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


def _as_dict(value: Any) -> Any:
    """A plan record or apply report as JSON (typed values carry ``to_dict``)."""
    to_dict = getattr(value, "to_dict", None)
    return to_dict() if callable(to_dict) else value


def _client(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def _retry_headers(error: ArxiuError) -> dict[str, str] | None:
    after = error.details.get("retry_after") if error.code == "auth.rate_limited" else None
    return {"Retry-After": str(after)} if after is not None else None


def routes(ctx: ApiContext) -> list[BaseRoute]:
    """The dialect's routes (with and without the trailing slash)."""
    api = DedaloApi(ctx)
    return [
        Route(PATH, api.endpoint, methods=["POST"]),
        Route(PATH.rstrip("/"), api.endpoint, methods=["POST"]),
    ]
