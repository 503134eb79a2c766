"""The Vadalog dialect (seed 003): NDJSON agent chat over server-side sessions.

``POST /api/v1/agent/{archive}/chat`` takes ``{message, session_id?, model?, mode?}`` with a
bearer token and answers with an NDJSON stream (see :mod:`app.api.vadalog_stream`);
``POST /api/v1/agent/{archive}/reset`` takes ``{session_id?}`` and forgets that conversation.
``{archive}`` is the served archive's folder name.

Sessions are kept on the server, keyed by the user's id and ``session_id`` (default
``"default"``), and evicted least-recently-used past ``Limits.agent_sessions``. A client that
sends ``mode`` (``"read"`` or ``"write"``) is an authorizing client: a change plan then pauses on an
``authorization_request`` line, and nothing is written until the client posts
``{session_id, approved_calls: [op_id...]}`` and/or ``{authorized_tools: [tool...]}`` (tools
authorized for the rest of the session); a plan applies as a whole, so it runs only when every
operation is approved. A new message instead supersedes the waiting plan. Over
``Limits.agent_messages_per_month`` a chat is answered with HTTP 402
``{code: "AGENT_MESSAGE_LIMIT_REACHED", used, limit, resets_at}``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from app.api import vadalog_stream as wire
from app.api.bearer import authenticate
from app.api.bodies import parse_body
from app.api.context import ApiContext
from app.api.permissions import check_apply
from app.api.refusals import invalid, refusal_response
from app.api.reports import plain
from app.api.run_bugs import coded_bugs
from app.api.users import User
from app.api.vadalog_sessions import (
    DEFAULT_SESSION_ID,
    AgentSession,
    MessageQuota,
    SessionStore,
)
from app.core.agent.conversations import make_title
from app.core.agent.events import Event, FinalEvent
from app.core.agent.history_entry import HistoryEntry
from app.core.agent.plan_types import PendingPlan
from app.core.agent.request import ChatRequest, Mode
from app.core.errors import ArxiuError
from app.core.phrases import Phrase

NDJSON = "application/x-ndjson"
CHAT_KEYS = frozenset(
    {
        "message",
        "session_id",
        "model",
        "mode",
        "approved_calls",
        "authorized_tools",
        "confirm_restricted",
    }
)
MAX_SESSION_ID_CHARS = 128
MAX_LIST_ITEMS = 128


@dataclass(frozen=True)
class ChatBody:
    """A checked chat body."""

    session_id: str
    message: str | None
    model: str | None
    mode: Mode | None
    approved_calls: frozenset[str] | None
    authorized_tools: frozenset[str] | None
    confirm_restricted: bool = False
    """On a reply: the second confirmation a plan flagged ``restricted_text`` needs."""

    @property
    def is_reply(self) -> bool:
        """Whether this answers an ``authorization_request`` rather than sending a message."""
        return self.message is None


class VadalogDialect:
    """The routes' shared state: the sessions and the message allowance."""

    def __init__(self, ctx: ApiContext, quota: MessageQuota | None = None) -> None:
        self.ctx = ctx
        self.sessions = SessionStore(ctx.limits.agent_sessions)
        self.quota = quota or MessageQuota(ctx.limits.agent_messages_per_month)

    def routes(self) -> list[BaseRoute]:
        """The dialect's two routes."""
        return [
            Route("/api/v1/agent/{archive}/chat", self.chat, methods=["POST"]),
            Route("/api/v1/agent/{archive}/reset", self.reset, methods=["POST"]),
        ]

    # -- endpoints ---------------------------------------------------------------------------
    async def chat(self, request: Request) -> Response:
        """``POST …/chat``: a message (or an authorization reply) → an NDJSON stream."""
        found = await self._caller(request)
        if isinstance(found, Response):
            return found
        user, raw = found
        try:
            body = parse_chat(raw, self.ctx.limits.max_question_chars)
        except ArxiuError as error:
            return refusal_response(error)
        if body.is_reply:
            return await self._reply(user, body)
        return await self._message(user, body)

    async def reset(self, request: Request) -> Response:
        """``POST …/reset``: forget a session's conversation (declining its waiting plan)."""
        found = await self._caller(request)
        if isinstance(found, Response):
            return found
        user, raw = found
        session_id = raw.get("session_id", DEFAULT_SESSION_ID)
        if not valid_session_id(session_id):
            return refusal_response(
                invalid("session_id must be a short string.", field="session_id")
            )
        held = self.sessions.get(user.id, session_id)
        if held is not None and held.pending is not None:
            await self._decline(user, held)
        existed = self.sessions.reset(user.id, session_id)
        return JSONResponse({"ok": True, "session_id": session_id, "reset": existed})

    # -- a message ---------------------------------------------------------------------------
    async def _message(self, user: User, body: ChatBody) -> Response:
        refused = self.quota.take(user.id)
        if refused is not None:
            return JSONResponse(refused.to_dict(), status_code=402)
        session = self.sessions.open(user.id, body.session_id)
        if session.busy:
            self.quota.give_back(user.id)
            return refusal_response(busy())
        assistant = self.ctx.session_for(user)
        model = body.model or session.model
        request = ChatRequest(
            str(body.message),
            model=model or None,
            history=tuple(session.history),
            mode=body.mode or "read",
        )
        waiting = session.pending.pending_id if session.pending else None
        try:
            events = coded_bugs(
                await assistant.chat(request, supersedes=waiting, history_owner=user.id)
            )
        except ArxiuError as error:
            self.quota.give_back(user.id)
            return refusal_response(error)
        session.pending = None
        if body.model:
            session.model = body.model
        turn = Turn(self, user, session, body, model or self._default_model(assistant))
        return StreamingResponse(turn.lines(events), media_type=NDJSON)

    async def _reply(self, user: User, body: ChatBody) -> Response:
        session = self.sessions.get(user.id, body.session_id)
        if session is None or session.pending is None:
            error = ArxiuError(
                "agent.nothing_to_authorize",
                "This session has no change plan waiting for authorization.",
                hint="Send a message in write mode first; authorize the plan it proposes.",
                category="conflict",
            )
            return refusal_response(error)
        if session.busy:
            return refusal_response(busy())
        plan, session.pending = session.pending, None
        session.authorized_tools |= body.authorized_tools or set()
        approved = authorized(plan, body.approved_calls or frozenset(), session.authorized_tools)
        turn = Turn(self, user, session, body, session.model or "")
        return StreamingResponse(turn.resolution_lines(plan, approved), media_type=NDJSON)

    # -- helpers -----------------------------------------------------------------------------
    async def _caller(self, request: Request) -> tuple[User, dict[str, Any]] | Response:
        user = authenticate(request, self.ctx)
        if isinstance(user, Response):
            return user
        name = request.path_params["archive"]
        served = self.ctx.open_archive().folder.name
        if name != served:
            error = ArxiuError(
                "archive.unknown",
                Phrase.of("This server does not serve an archive called {name!r}.", name=name),
                hint=Phrase.of("Use /api/v1/agent/{served}/….", served=served),
                category="input",
                details={"archive": served},
            )
            return refusal_response(error, status=404)
        try:
            raw = parse_body(await request.body(), empty={})
        except ArxiuError as error:
            return refusal_response(error)
        if not isinstance(raw, dict):
            return refusal_response(invalid("The body must be a JSON object."))
        return user, raw

    async def _decline(self, user: User, session: AgentSession) -> None:
        """Decline the session's waiting plan (a reset abandons it)."""
        pending, session.pending = session.pending, None
        if pending is None:
            return
        with contextlib.suppress(ArxiuError):  # resolved elsewhere: nothing left to decline
            await self.ctx.session_for(user).plans.resolve(pending.pending_id, False)

    def _default_model(self, assistant: Any) -> str:
        catalog = assistant.catalog
        return "" if isinstance(catalog, ArxiuError) else str(catalog.default_id)


class Turn:
    """One streamed answer of a session."""

    def __init__(
        self, dialect: VadalogDialect, user: User, session: AgentSession, body: ChatBody, model: str
    ) -> None:
        self.dialect = dialect
        self.user = user
        self.session = session
        self.body = body
        self.model = model
        self.archive_name = dialect.ctx.open_archive().folder.name

    def metadata(self, context_count: int) -> bytes:
        """The first line of a turn."""
        data = {
            "ontology_id": self.archive_name,
            "model": self.model,
            "context_loaded": bool(context_count),
        }
        return wire.line("metadata", {**data, "session_id": self.session.session_id})

    async def lines(self, events: AsyncIterator[Event]) -> AsyncIterator[bytes]:
        """The NDJSON lines of a message's turn."""
        session = self.session
        first = not session.history
        session.busy = True  # set here, so a response never started cannot leave it set
        try:
            yield self.metadata(len(session.history))
            yield wire.line("context_loaded", context_notes(session.history))
            final: FinalEvent | None = None
            try:
                async for event in events:
                    if isinstance(event, FinalEvent):
                        final = event
                    shown = wire.event_line(event)
                    if shown is not None:
                        yield shown
            finally:  # a client gone mid-stream: stop the run now, not at garbage collection
                await wire.close(events)
            if final is not None:
                async for shown in self._finish(final):
                    yield shown
            yield wire.line("done", {"ontology_id": self.archive_name})
            if first and final is not None:
                session.title = session.title or make_title(self.body.message or "")
                yield wire.line(
                    "session_meta", {"session_id": session.session_id, "title": session.title}
                )
        finally:
            session.busy = False

    async def _finish(self, final: FinalEvent) -> AsyncIterator[bytes]:
        self.session.history = list(final.history)
        plan = final.change_plan
        if plan is None:
            return
        yield wire.proposal_line(plan)
        tools = {op.tool for op in plan.plan.ops}
        if tools <= self.session.authorized_tools:
            async for shown in self._apply(plan):
                yield shown
            return
        self.session.pending = plan
        yield wire.authorization_line(plan)

    async def resolution_lines(self, plan: PendingPlan, approved: bool) -> AsyncIterator[bytes]:
        """The NDJSON lines answering an authorization reply."""
        self.session.busy = True
        try:
            yield self.metadata(len(self.session.history))
            if approved:
                async for shown in self._apply(plan):
                    yield shown
            else:
                assistant = self.dialect.ctx.session_for(self.user)
                try:
                    await assistant.plans.resolve(plan.pending_id, False)
                except ArxiuError as error:
                    yield wire.arxiu_error_line(error)
                yield wire.line("content", {"chunk": wire.report_text(None, False)})
            yield wire.line("done", {"ontology_id": self.archive_name})
        finally:
            self.session.busy = False

    async def _apply(self, plan: PendingPlan) -> AsyncIterator[bytes]:
        assistant = self.dialect.ctx.session_for(self.user)
        for op in plan.plan.ops:
            yield wire.line("tool_start", {"tool": op.tool, "input": op.args})
        ctx = self.dialect.ctx
        try:
            check_apply(self.user, ctx.write_allowed(self.user), plan.to_dict(), ctx.open_archive())
            resolved = await assistant.plans.resolve(
                plan.pending_id, True, confirm_restricted=self.body.confirm_restricted
            )
        except ArxiuError as error:
            if error.code == "mcp.plan_needs_confirmation":
                self.session.pending = plan  # still waiting: reply with confirm_restricted
            yield wire.arxiu_error_line(error)
            return
        report = plain(resolved) or {}
        for op in plan.plan.ops:
            yield wire.line(
                "tool_result", {"tool": op.tool, "result": wire.op_result(report, op.op_id)}
            )
        yield wire.line("content", {"chunk": wire.report_text(report, True)})


def context_notes(history: list[HistoryEntry]) -> dict[str, Any]:
    """``context_loaded``: the session's earlier turns carried into this one."""
    notes = [
        {"role": item["role"], "text": str(item["text"])[:120]}
        for item in history
        if item.get("role") == "user"
    ]
    return {"count": len(history), "notes": notes}


def authorized(plan: PendingPlan, approved_calls: frozenset[str], tools: set[str]) -> bool:
    """Whether every operation of ``plan`` is approved by id or by an authorized tool."""
    return all(op.op_id in approved_calls or op.tool in tools for op in plan.plan.ops)


def busy() -> ArxiuError:
    """The refusal while a session is still streaming its previous answer."""
    return ArxiuError(
        "agent.session_busy",
        "This session is still answering the previous message.",
        hint="Wait for its done line, or use another session_id.",
        category="conflict",
        retryable=True,
    )


def valid_session_id(value: Any) -> bool:
    """Whether ``value`` can name a session."""
    return isinstance(value, str) and 0 < len(value) <= MAX_SESSION_ID_CHARS


def _names(raw: dict[str, Any], key: str) -> frozenset[str] | None:
    value = raw.get(key)
    if value is None:
        return None
    if (
        not isinstance(value, list)
        or len(value) > MAX_LIST_ITEMS
        or not all(isinstance(v, str) for v in value)
    ):
        raise invalid(Phrase.of("{key} must be a list of strings.", key=key), field=key)
    return frozenset(value)


def parse_chat(raw: dict[str, Any], max_chars: int) -> ChatBody:
    """Check a chat body.

    Raises:
        ArxiuError: ``request.invalid`` naming the field.
    """
    unknown = sorted(set(raw) - CHAT_KEYS)
    if unknown:
        raise invalid(Phrase.of("Unknown field {name!r}.", name=unknown[0]), field=unknown[0])
    session_id = raw.get("session_id", DEFAULT_SESSION_ID)
    if not valid_session_id(session_id):
        raise invalid("session_id must be a string of 1-128 characters.", field="session_id")
    approved, tools = _names(raw, "approved_calls"), _names(raw, "authorized_tools")
    message = raw.get("message")
    reply = approved is not None or tools is not None
    if reply and message is not None:
        raise invalid("Send either a message or an authorization reply, not both.", field="message")
    if not reply and (not isinstance(message, str) or not message.strip()):
        raise invalid("The message is missing.", field="message")
    if isinstance(message, str) and len(message) > max_chars:
        raise invalid(
            Phrase.of("The message is longer than {limit:,} characters.", limit=max_chars),
            field="message",
        )
    model, mode = raw.get("model"), raw.get("mode")
    if model is not None and (not isinstance(model, str) or not model):
        raise invalid("model must be a model id.", field="model")
    if mode is not None and mode not in ("read", "write"):
        raise invalid('mode must be "read" or "write".', field="mode")
    confirm = raw.get("confirm_restricted", False)
    if not isinstance(confirm, bool) or (confirm and not reply):
        raise invalid(
            "confirm_restricted is a boolean of an authorization reply.", field="confirm_restricted"
        )
    return ChatBody(session_id, message, model, mode, approved, tools, confirm)


def routes(ctx: ApiContext) -> list[BaseRoute]:
    """The Vadalog dialect's routes over ``ctx``."""
    return VadalogDialect(ctx).routes()
