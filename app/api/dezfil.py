"""The Dezfil dialect (seed 004): reserved runs, AssistantRequest submissions, one resolution.

* ``GET /api/assistant`` — what this instance offers: models with their efforts, the default,
  and whether this user's plans may be applied;
* ``POST /api/assistant/runs`` — reserve a run: ``{runId}``;
* ``POST /api/assistant`` — an AssistantRequest: either a message ``{runId, message, history?,
  context?, supersedes?, choice?}`` answered with an NDJSON stream of the core's events
  (``{"event", "data"}`` lines, as ``arxiu ask --json-events``), or a resolution
  ``{resolution: {pending, approved}}`` (a ``runId``, ``context`` or ``choice`` beside it is
  ignored) answered with JSON. Never both.

Every request needs a bearer token (``arxiu users token NAME``). Conversations are not stored
server-side: the client resends ``history``, whose taint the server judges from digests of its
own answers (never from the client's flags). A change plan arrives as a ``confirm_required``
event carrying its pending id; at most one resolution ever takes effect (the session's resolve
claims it before anything runs). The ``start`` and ``final`` events carry ``runId`` and the
run's ``provenance`` (what was requested, what it resolved to).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from app.api.bearer import authenticate
from app.api.bodies import parse_body
from app.api.context import ApiContext
from app.api.dezfil_runs import Choice, DezfilRefusal, Run, RunBook, check_choice, offered
from app.api.permissions import check_apply
from app.api.refusals import refusal_response
from app.api.reports import plain
from app.api.run_bugs import coded_bugs
from app.api.users import User
from app.core.agent.events import Event, FinalEvent, StartEvent
from app.core.agent.request import ChatRequest
from app.core.errors import ArxiuError
from app.core.json_types import JsonObject
from app.core.phrases import Phrase
from app.core.session import AssistantSession

NDJSON = "application/x-ndjson"
MESSAGE_KEYS = frozenset({"runId", "message", "context", "history", "supersedes", "choice"})
RESOLUTION_KEYS = frozenset({"runId", "resolution", "context", "choice"})


def request_invalid(message: str | Phrase) -> DezfilRefusal:
    """``assistant_request_invalid`` (400): not an AssistantRequest."""
    return DezfilRefusal(
        "assistant_request_invalid", message, hint="Send a message or a resolution."
    )


def refuse(error: ArxiuError) -> Response:
    """The JSON refusal for ``error`` (a Dezfil code keeps its own status)."""
    status = error.status if isinstance(error, DezfilRefusal) else None
    return refusal_response(error, status=status)


class DezfilDialect:
    """The routes' shared state: the reserved runs."""

    def __init__(self, ctx: ApiContext) -> None:
        self.ctx = ctx
        self.runs = RunBook()

    def routes(self) -> list[BaseRoute]:
        """The dialect's routes."""
        return [
            Route("/api/assistant", self.status, methods=["GET"]),
            Route("/api/assistant", self.submit, methods=["POST"]),
            Route("/api/assistant/runs", self.reserve, methods=["POST"]),
        ]

    async def status(self, request: Request) -> Response:
        """``GET /api/assistant``: the models offered, each with its efforts."""
        user = authenticate(request, self.ctx)
        if isinstance(user, Response):
            return user
        catalog = self.ctx.session_for(user).catalog
        if isinstance(catalog, ArxiuError):
            return refuse(catalog)
        return JSONResponse(
            {
                "models": offered(catalog),
                "default": catalog.default_id,
                "write_allowed": self.ctx.session_for(user).write_allowed,
            }
        )

    async def reserve(self, request: Request) -> Response:
        """``POST /api/assistant/runs``: a new run identity."""
        user = authenticate(request, self.ctx)
        if isinstance(user, Response):
            return user
        return JSONResponse({"runId": self.runs.reserve(user.id).id}, status_code=201)

    async def submit(self, request: Request) -> Response:
        """``POST /api/assistant``: a message (a stream) or a resolution (JSON)."""
        user = authenticate(request, self.ctx)
        if isinstance(user, Response):
            return user
        try:
            raw = parse_body(await request.body())
        except ArxiuError as error:
            return refuse(error)
        try:
            if not isinstance(raw, dict):
                raise request_invalid("An AssistantRequest is a JSON object.")
            if "resolution" in raw:
                return await self._resolve(user, raw)
            return await self._message(user, raw)
        except ArxiuError as error:
            return refuse(error)

    # -- a message ---------------------------------------------------------------------------
    async def _message(self, user: User, raw: dict[str, Any]) -> Response:
        unknown = sorted(set(raw) - MESSAGE_KEYS)
        if unknown:
            raise request_invalid(
                Phrase.of("Unknown AssistantRequest field {name!r}.", name=unknown[0])
            )
        if "message" not in raw:
            raise request_invalid("An AssistantRequest needs a message or a resolution.")
        message = raw["message"]
        if not isinstance(message, str) or not message.strip():
            raise request_invalid("message must be a non-empty string.")
        limit = self.ctx.limits.max_question_chars
        if len(message) > limit:
            raise request_invalid(
                Phrase.of("The message is longer than {limit:,} characters.", limit=limit)
            )
        run = self.runs.get(user.id, raw.get("runId"))
        if run.choice is not None:
            raise DezfilRefusal(
                "assistant_run_bound",
                "This run already has its submission.",
                status=409,
                hint="Reserve a new run for the next message.",
            )
        session = self.ctx.session_for(user)
        catalog = session.catalog
        if isinstance(catalog, ArxiuError):
            raise catalog
        choice = check_choice(raw.get("choice"), catalog)
        events = coded_bugs(
            await session.chat(
                self._core_request(raw, choice, session),
                supersedes=_supersedes(raw),
                history_owner=user.id,  # the client's history is judged from the server's ledger
            )
        )
        if not self.runs.bind(run, choice):
            await _drain(events)
            raise DezfilRefusal(
                "assistant_run_bound", "This run already has its submission.", status=409
            )
        return StreamingResponse(self._lines(run, choice, events), media_type=NDJSON)

    def _core_request(
        self, raw: dict[str, Any], choice: Choice, session: AssistantSession
    ) -> ChatRequest:
        catalog = session.catalog
        assert not isinstance(catalog, ArxiuError)
        entry = catalog.get(choice.model)
        writes = session.write_allowed and entry.supports_tools  # the archive's switch too
        request: dict[str, Any] = {
            "question": raw["message"],
            "model": choice.model,
            "mode": "write" if writes else "read",
        }
        for key in ("history", "context"):
            if raw.get(key) is not None:
                request[key] = raw[key]
        if choice.effort is not None:
            request["effort"] = choice.effort
        return ChatRequest.from_dict(request)

    async def _lines(
        self, run: Run, choice: Choice, events: AsyncIterator[Event]
    ) -> AsyncIterator[bytes]:
        extra: JsonObject = {"runId": run.id, "provenance": choice.provenance()}
        try:
            async for event in events:
                data = event.to_dict()
                if isinstance(event, StartEvent | FinalEvent):
                    data = {**data, **extra}
                wire: JsonObject = {"event": event.kind, "data": data}  # to_wire's, extended
                plan = event.change_plan if isinstance(event, FinalEvent) else None
                if plan is not None:
                    run.pending.add(plan.pending_id)
                    confirm = {"pending": plan.pending_id, "runId": run.id, "plan": plan.to_dict()}
                    yield _line({"event": "confirm_required", "data": confirm})
                yield _line(wire)
        finally:  # a client gone mid-stream: stop the run now, not at garbage collection
            await _drain(events)

    # -- a resolution ------------------------------------------------------------------------
    async def _resolve(self, user: User, raw: dict[str, Any]) -> Response:
        if "message" in raw:
            raise request_invalid("Send either a message or a resolution, never both.")
        unknown = sorted(set(raw) - RESOLUTION_KEYS)
        if unknown:
            raise request_invalid(
                Phrase.of("Unknown AssistantRequest field {name!r}.", name=unknown[0])
            )
        resolution = raw["resolution"]
        if (
            not isinstance(resolution, Mapping)
            or set(resolution) != {"pending", "approved"}
            or not isinstance(resolution["pending"], str)
            or not isinstance(resolution["approved"], bool)
        ):
            raise request_invalid("resolution must be {pending: string, approved: boolean}.")
        if raw.get("runId") is not None:
            self.runs.get(user.id, raw["runId"])
        pending, approved = resolution["pending"], resolution["approved"]
        owner = self.runs.owner_of(pending)
        if owner is not None and owner != user.id:
            raise ArxiuError(
                "mcp.plan_unknown",
                "There is no pending change plan with that id.",
                category="input",
            )
        session = self.ctx.session_for(user)
        found = await session.plans.get(pending)
        if approved and found is not None:
            plan = found.plan.to_dict()
            check_apply(user, self.ctx.write_allowed(user), plan, self.ctx.open_archive())
        report = plain(await session.plans.resolve(pending, approved))
        after = await session.plans.get(pending)
        status = after.status if after else "applied" if approved else "declined"
        body = {
            "ok": True,
            "pending": pending,
            "approved": approved,
            "status": status,
            "report": report,
        }
        return JSONResponse(body)


def _supersedes(raw: dict[str, Any]) -> str | None:
    value = raw.get("supersedes")
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise request_invalid("supersedes must be a pending-action id.")
    return value


async def _drain(events: AsyncIterator[Event]) -> None:
    """Close a run's event stream (its ``finally`` stops the run and frees its slot)."""
    closer = getattr(events, "aclose", None)
    if closer is not None:
        await closer()


def _line(value: dict[str, Any]) -> bytes:
    return (json.dumps(value, ensure_ascii=False, default=str) + "\n").encode("utf-8")


def routes(ctx: ApiContext) -> list[BaseRoute]:
    """The Dezfil dialect's routes over ``ctx``."""
    return DezfilDialect(ctx).routes()
