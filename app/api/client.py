"""An httpx client of the Dédalo dialect: log in, list models, chat (streamed or not), apply.

Streamed events come back as the core's own event types (:mod:`app.core.agent.events`), so a
front end renders a remote run exactly as a local one. A refused call raises the server's coded
error as an :class:`~app.core.errors.ArxiuError` (code, message, hint, category and details
kept); a server that cannot be reached raises ``api.unreachable``.

    async with DedaloClient("http://127.0.0.1:8765") as client:
        await client.login("anna", "secret")
        async for event in client.stream({"question": "what sections can I search?"}):
            ...
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Any

import httpx

from app.core.agent.events import EVENT_NAMES, Event, from_wire
from app.core.errors import ArxiuError, read_words
from app.core.phrases import Phrase

API_PATH = "/dedalo/core/api/v1/json/"
CSRF_HEADER = "X-Dedalo-Csrf-Token"


def event_from_wire(name: str, data: Any) -> Event:
    """The core event for one SSE record (``api.protocol`` for an unknown or bad one).

    Keys the event type does not know (a newer server's) are dropped."""
    if name not in EVENT_NAMES or not isinstance(data, dict):
        raise ArxiuError(
            "api.protocol",
            Phrase.of("The server sent an unknown event {name!r}.", name=name),
            category="provider",
        )
    try:
        return from_wire(name, data)
    except (KeyError, TypeError, ValueError) as error:
        raise ArxiuError(
            "api.protocol",
            Phrase.of("The server sent a malformed {name} event.", name=name),
            category="provider",
        ) from error


def error_from_envelope(body: Any, status: int) -> ArxiuError:
    """The coded error of a failure envelope (or a generic one for a body that is not one)."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict) or not isinstance(error.get("code"), str):
        return ArxiuError(
            "api.protocol",
            Phrase.of("The server answered HTTP {status} without a coded error.", status=status),
            category="provider",
        )
    hint = error.get("hint")
    message, said_hint = read_words(
        error, str(error.get("message", "")), hint if isinstance(hint, str) else None
    )
    return ArxiuError(
        error["code"],
        message,
        hint=said_hint,
        category=str(error.get("category", "input")),
        retryable=bool(error.get("retryable", False)),
        details=error.get("details") if isinstance(error.get("details"), dict) else None,
    )


async def sse_records(lines: AsyncIterator[str]) -> AsyncIterator[tuple[str, str]]:
    """``(event, data)`` for each SSE record; comments (``: ping``) are skipped."""
    event = "message"
    data: list[str] = []
    async for line in lines:
        if not line:
            if data:
                yield event, "\n".join(data)
            event, data = "message", []
        elif line.startswith(":"):
            continue
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    if data:
        yield event, "\n".join(data)


class DedaloClient:
    """A client of one Arxiu server's Dédalo dialect (keeps the login cookie and CSRF token)."""

    def __init__(
        self,
        base_url: str,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        timeout: float = 300.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.csrf_token: str | None = None
        if transport is None:  # send each request at once (no Nagle wait between its parts)
            nodelay = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
            transport = httpx.AsyncHTTPTransport(socket_options=nodelay)
        self.http = httpx.AsyncClient(
            base_url=self.base_url, transport=transport, timeout=httpx.Timeout(timeout)
        )

    async def __aenter__(self) -> DedaloClient:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self.http.aclose()

    def _body(self, action: str, options: dict[str, Any], dd_api: str = "dd_mcp_api") -> bytes:
        return json.dumps({"action": action, "dd_api": dd_api, "options": options}).encode()

    def _headers(self, accept: str = "application/json") -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": accept}
        if self.csrf_token:
            headers[CSRF_HEADER] = self.csrf_token
        return headers

    async def call(
        self, action: str, options: dict[str, Any], dd_api: str = "dd_mcp_api"
    ) -> dict[str, Any]:
        """One JSON call; the whole success envelope (raises the coded error of a failure)."""
        try:
            response = await self.http.post(
                API_PATH, content=self._body(action, options, dd_api), headers=self._headers()
            )
        except httpx.HTTPError as error:
            raise unreachable(self.base_url, error) from error
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.status_code != 200 or not isinstance(body, dict) or body.get("ok") is False:
            raise error_from_envelope(body, response.status_code)
        return body

    async def login(self, username: str, password: str) -> dict[str, Any]:
        """Log in; keeps the cookie and the CSRF token. Returns the user's permissions."""
        body = await self.call("login", {"username": username, "auth": password}, "dd_utils_api")
        self.csrf_token = str(body["csrf_token"])
        data: dict[str, Any] = body["data"]
        return data

    async def models(self) -> dict[str, Any]:
        """``{models, write_allowed}``."""
        data: dict[str, Any] = (await self.call("agent_models", {}))["data"]
        return data

    async def chat(self, options: dict[str, Any]) -> dict[str, Any]:
        """One non-streamed answer: ``{answer, stop, change_plan, turns, model, usage,
        history}``."""
        data: dict[str, Any] = (await self.call("agent_chat", options))["data"]
        return data

    async def apply(
        self, plan: dict[str, Any], plan_hash: str, *, confirm_restricted: bool = False
    ) -> dict[str, Any]:
        """Apply a confirmed plan; the report ``{applied, skipped, failed?, created}``.

        ``confirm_restricted`` is the second confirmation a plan flagged ``restricted_text``
        needs; it is sent only when given.
        """
        options: dict[str, Any] = {"plan": plan, "plan_hash": plan_hash}
        if confirm_restricted:
            options["confirm_restricted"] = True
        body = await self.call("agent_apply", options)
        report: dict[str, Any] = body["data"]["data"]
        return report

    async def stream(self, options: dict[str, Any]) -> AsyncIterator[Event]:
        """The run's events as they stream (a refusal before streaming raises its error)."""
        request = self.http.build_request(
            "POST",
            API_PATH,
            content=self._body("agent_chat_stream", options),
            headers=self._headers("text/event-stream"),
        )
        try:
            response = await self.http.send(request, stream=True)
        except httpx.HTTPError as error:
            raise unreachable(self.base_url, error) from error
        try:
            if "text/event-stream" not in response.headers.get("content-type", ""):
                await response.aread()
                try:
                    body = response.json()
                except ValueError:
                    body = None
                raise error_from_envelope(body, response.status_code)
            async for name, data in sse_records(response.aiter_lines()):
                yield event_from_wire(name, json.loads(data))
        except httpx.HTTPError as error:
            raise unreachable(self.base_url, error) from error
        finally:
            await response.aclose()


def unreachable(url: str, error: Exception) -> ArxiuError:
    """``api.unreachable``: the server could not be reached or the connection broke."""
    return ArxiuError(
        "api.unreachable",
        Phrase.of(
            "The Arxiu server at {url} cannot be reached ({kind}).",
            url=url,
            kind=type(error).__name__,
        ),
        hint="Check the URL and that `arxiu serve` is running there.",
        retryable=True,
    )
