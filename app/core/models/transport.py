"""What the HTTP providers share: SSE parsing, Stop racing, error mapping and early retries.

* :func:`sse_events` turns a stream of text lines into ``(event, data)`` pairs (an event's data is
  capped; lone surrogates in its JSON strings become U+FFFD);
* :func:`until_stopped` ends an async iteration as soon as the caller's stop event is set, or a
  :class:`~app.core.models.stream_limits.StreamClock` runs out, even while the server is silent;
* :func:`status_error` / :func:`transport_error` map HTTP statuses and httpx exceptions to coded
  :class:`~app.core.errors.ModelError` values (never carrying a key or header);
* :func:`retry_before_first_event` retries a stream only while it has yielded nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx

from app.core.errors import ModelError
from app.core.models.base import ModelEvent, StreamOptions
from app.core.models.stream_limits import MAX_LINE_BYTES, StreamClock, stream_too_large
from app.core.phrases import Phrase

T = TypeVar("T")
ERROR_BODY_BYTES = 64 << 10
"""How much of an HTTP error's body is read for its message."""
SURROGATE = re.compile(r"[\ud800-\udfff]")
RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})


@dataclass(frozen=True)
class SSEEvent:
    """One server-sent event: its ``event`` name (``""`` when absent) and joined ``data``."""

    event: str
    data: str

    def json(self) -> Any:
        """The data parsed as JSON.

        Raises:
            ModelError: ``ai.provider_failed`` when the data is not JSON.
        """
        try:
            value = json.loads(self.data)
            return _without_surrogates(value) if "\\u" in self.data else value
        except (json.JSONDecodeError, RecursionError) as error:
            raise ModelError(
                "ai.provider_failed",
                "The model server sent a malformed event.",
                retryable=True,
                details={"reason": "malformed_event", "data": _printable(self.data[:200])},
            ) from error

    def is_keepalive(self) -> bool:
        """Whether the event is a keep-alive (Anthropic's ``ping``): no progress."""
        return self.event == "ping"


def _printable(text: str) -> str:
    return SURROGATE.sub("\ufffd", text)


def _without_surrogates(value: Any) -> Any:
    """``value`` with lone surrogates (``"\\ud800"`` escapes) in its strings replaced by U+FFFD.

    Such a string cannot be encoded as UTF-8: printing or storing it would fail mid-answer.
    """
    if isinstance(value, str):
        return _printable(value)
    if isinstance(value, list):
        return [_without_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {_printable(k): _without_surrogates(v) for k, v in value.items()}
    return value


async def sse_events(
    lines: AsyncIterator[str], *, max_event_chars: int = MAX_LINE_BYTES, provider: str = "model"
) -> AsyncIterator[SSEEvent]:
    """Parse SSE ``lines`` into events (blank line dispatches; ``:`` lines are comments).

    Raises:
        ModelError: ``ai.stream_too_large`` when one event's data passes ``max_event_chars``.
    """
    event = ""
    data: list[str] = []
    size = 0
    async for raw in lines:
        line = raw.rstrip("\r")
        if not line:
            if data:
                yield SSEEvent(event, "\n".join(data))
            event, data, size = "", [], 0
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            event = value
        elif name == "data":
            size += len(value) + 1
            if size > max_event_chars:
                raise stream_too_large(provider, Phrase.of("an event"), max_event_chars)
            data.append(value)
    if data:
        yield SSEEvent(event, "\n".join(data))


def stop_requested(options: StreamOptions) -> bool:
    """Whether the caller asked to stop (its :class:`~app.core.models.stop_signal.StopSignal`
    is set)."""
    event = options.stop_event
    return bool(event is not None and event.is_set())


class Stopped(Exception):
    """Raised by :func:`until_stopped` inside a provider when the caller pressed Stop."""


async def until_stopped(
    source: AsyncIterator[T], options: StreamOptions, clock: StreamClock | None = None
) -> AsyncIterator[T]:
    """Items of ``source``; raises :class:`Stopped` as soon as a stop is requested.

    With a ``clock``, waiting for the next item also ends when the turn's deadline or idle timer
    runs out (the caller restarts the idle timer on progress).

    Raises:
        Stopped: the caller pressed Stop.
        ModelError: ``ai.stream_timeout`` or ``ai.stream_idle`` from the clock.
    """
    if options.stop_event is None and clock is None:
        async for item in source:
            yield item
        return
    iterator = aiter(source)
    while True:
        if stop_requested(options):
            raise Stopped
        step = asyncio.ensure_future(anext(iterator))
        try:
            await _wait_step(step, options, clock)
        except BaseException:
            step.cancel()
            await asyncio.wait({step}, timeout=1.0)
            raise
        try:
            item = step.result()
        except StopAsyncIteration:
            return
        yield item


async def _wait_step(
    step: asyncio.Future[T], options: StreamOptions, clock: StreamClock | None
) -> None:
    signal = options.stop_event
    with signal.future() if signal is not None else contextlib.nullcontext(None) as stopped:
        waiting: set[asyncio.Future[Any]] = {step} if stopped is None else {step, stopped}
        while not step.done():
            wait = None
            if clock is not None:
                wait = clock.remaining()
                if wait <= 0:
                    raise clock.expired()
            await asyncio.wait(waiting, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
            if not step.done() and stop_requested(options):
                raise Stopped


async def bounded(awaitable: Any, clock: StreamClock) -> Any:
    """Await ``awaitable`` (sending the request) within the clock's time left."""
    try:
        async with asyncio.timeout(max(clock.remaining(), 0.0)):
            return await awaitable
    except TimeoutError:
        raise clock.expired() from None


def status_error(provider: str, status: int, body: str) -> ModelError:
    """The coded error for an HTTP error status (``body`` is the server's text, trimmed)."""
    message = _server_message(body)
    details = {"provider": provider, "status": status, "server_message": message[:500]}
    if status in (401, 403):
        return ModelError(
            "ai.provider_auth",
            Phrase.of(
                "The {provider} server refused the API key (HTTP {status}).",
                provider=provider,
                status=status,
            ),
            hint="Check the key in the keyring or the model's api_key_env variable.",
            category="permission",
            details=details,
        )
    if status in (429, 529):
        return ModelError(
            "ai.provider_overloaded",
            Phrase.of(
                "The {provider} server is busy (HTTP {status}); try again shortly.",
                provider=provider,
                status=status,
            ),
            retryable=True,
            details=details,
        )
    retryable = status in RETRYABLE_STATUS
    return ModelError(
        "ai.provider_failed",
        Phrase.of(
            "The {provider} server answered HTTP {status}: {why}.",
            provider=provider,
            status=status,
            why=message[:200] or Phrase.of("no details"),
        ),
        hint=None if retryable else "Check the model name and the endpoint in the catalog.",
        retryable=retryable,
        details=details,
    )


def _server_message(body: str) -> str:
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, ValueError, RecursionError):
        return body.strip()
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        return str(error.get("message") or error.get("type") or "")
    if isinstance(error, str):
        return error
    return body.strip()


def transport_error(provider: str, error: httpx.HTTPError, timeout_s: float) -> ModelError:
    """The coded error for an httpx transport failure (timeouts, refused connections, resets)."""
    details: dict[str, Any] = {"provider": provider, "reason": type(error).__name__}
    if isinstance(error, httpx.TimeoutException):
        return ModelError(
            "ai.provider_timeout",
            Phrase.of(
                "The {provider} server sent nothing for {timeout_s:g} s.",
                provider=provider,
                timeout_s=timeout_s,
            ),
            hint="The server may be overloaded; try again or raise timeout_s in the catalog.",
            retryable=True,
            details=details,
        )
    if isinstance(error, httpx.ConnectError):
        return ModelError(
            "ai.provider_unreachable",
            Phrase.of("Cannot reach the {provider} server.", provider=provider),
            hint="Check that the server is running and the endpoint in the catalog is right.",
            retryable=True,
            details=details,
        )
    return ModelError(
        "ai.provider_failed",
        Phrase.of("The connection to the {provider} server failed mid-stream.", provider=provider),
        retryable=True,
        details=details,
    )


def ended_early(provider: str) -> ModelError:
    """The error for a stream that ended without its closing event (a dropped connection)."""
    return ModelError(
        "ai.provider_failed",
        Phrase.of("The {provider} stream ended before the reply was complete.", provider=provider),
        retryable=True,
        details={"provider": provider, "reason": "stream_ended_early"},
    )


async def retry_before_first_event(
    attempt: Callable[[], AsyncIterator[ModelEvent]],
    delays: Sequence[float],
) -> AsyncIterator[ModelEvent]:
    """Run ``attempt`` and retry retryable errors, but only while nothing has been yielded."""
    for tries in range(len(delays) + 1):
        yielded = False
        try:
            async for event in attempt():
                yielded = True
                yield event
            return
        except ModelError as error:
            if yielded or not error.retryable or tries >= len(delays):
                raise
        await asyncio.sleep(delays[tries])


def timeout_for(timeout_s: float) -> httpx.Timeout:
    """An httpx timeout where ``timeout_s`` is the idle (read) timeout of the stream."""
    return httpx.Timeout(timeout_s, connect=min(timeout_s, 15.0))


async def raise_for_status(provider: str, response: httpx.Response) -> None:
    """Raise the coded error of a non-2xx streaming response (after reading its body)."""
    if response.is_success:
        return
    head = bytearray()
    async for chunk in response.aiter_bytes():
        head += chunk
        if len(head) >= ERROR_BODY_BYTES:
            break
    body = bytes(head[:ERROR_BODY_BYTES]).decode("utf-8", "replace")
    raise status_error(provider, response.status_code, body)
