"""The streaming plumbing every HTTP chat provider shares: one POST, SSE, retries, Stop, close.

:class:`HttpChatModel` owns (or borrows) the ``httpx.AsyncClient``, sends the request with the
entry's idle timeout, bounds the turn (:mod:`~app.core.models.stream_limits`: a wall-clock limit,
an idle timer that keep-alives do not reset, line and reply caps), maps HTTP and transport
failures to coded errors, retries only before the first event and turns a Stop into
``Stop("stopped")``. A provider subclass supplies what differs:
the URL, the headers, the JSON body and a :class:`StreamReader` for its server-sent events.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any, ClassVar, Protocol

import httpx

from app.core.errors import ModelError
from app.core.json_types import JsonObject
from app.core.models.base import Message, ModelEvent, Stop, StreamOptions, ToolSpec
from app.core.models.catalog import ModelEntry
from app.core.models.stream_limits import StreamClock, StreamLimits, bounded_lines
from app.core.models.transport import (
    SSEEvent,
    Stopped,
    bounded,
    ended_early,
    raise_for_status,
    retry_before_first_event,
    sse_events,
    timeout_for,
    transport_error,
    until_stopped,
)
from app.core.phrases import Phrase

KeySource = Callable[[], str | None]


class StreamReader(Protocol):
    """Turns one response's server-sent events into model events."""

    def read(self, sse: SSEEvent) -> list[ModelEvent]:
        """Events for one server-sent event."""
        ...

    def at_end(self) -> bool:
        """Whether the closing event arrived (nothing more is read)."""
        ...

    def is_complete(self) -> bool:
        """Whether the reply may end here (otherwise the stream ended early)."""
        ...

    def finish(self) -> list[ModelEvent]:
        """The closing events: pending tool calls, usage and the stop reason."""
        ...


class HttpChatModel:
    """A chat model streamed over HTTP with server-sent events.

    Args:
        entry: the catalog entry.
        api_key: the key, or a callable returning it (resolved on each request).
        client: an ``httpx.AsyncClient`` to use (tests inject a ``MockTransport``); by default
            the model owns one.
        retry_delays: waits before each retry; retries happen only before the first event
            (default: the provider's ``default_retry_delays``).
        limits: the bounds of one turn (default: from the entry's ``timeout_s``).

    Raises:
        ModelError: ``ai.model_catalog_invalid`` when the provider ``needs_endpoint`` and the
            entry has none.
    """

    provider: ClassVar[str]
    default_retry_delays: ClassVar[tuple[float, ...]] = (1.0, 4.0)
    needs_endpoint: ClassVar[bool] = False

    def __init__(
        self,
        entry: ModelEntry,
        *,
        api_key: str | KeySource | None = None,
        client: httpx.AsyncClient | None = None,
        retry_delays: tuple[float, ...] | None = None,
        limits: StreamLimits | None = None,
    ) -> None:
        if self.needs_endpoint and not entry.endpoint:
            raise ModelError(
                "ai.model_catalog_invalid",
                Phrase.of('Model "{model}" has no endpoint.', model=entry.id),
            )
        self.id = entry.id
        self.supports_tools = entry.supports_tools
        self.entry = entry
        self._key = api_key
        self._client = client
        self._owns_client = client is None
        self.retry_delays = self.default_retry_delays if retry_delays is None else retry_delays
        self.limits = limits or StreamLimits.for_timeout(entry.timeout_s)

    def _api_key(self) -> str | None:
        return self._key() if callable(self._key) else self._key

    def url(self) -> str:
        """The URL the request is sent to."""
        raise NotImplementedError

    def _headers(self) -> dict[str, str]:
        raise NotImplementedError

    def _reader(self) -> StreamReader:
        raise NotImplementedError

    def request_body(
        self, messages: list[Message], tools: list[ToolSpec], options: StreamOptions
    ) -> JsonObject:
        """The JSON body of the request."""
        raise NotImplementedError

    def _client_for_request(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=timeout_for(self.entry.timeout_s))
        return self._client

    async def stream(
        self, messages: list[Message], tools: list[ToolSpec], options: StreamOptions
    ) -> AsyncIterator[ModelEvent]:
        """Stream the reply; raises coded :class:`~app.core.errors.ModelError` values on failure."""
        body = self.request_body(messages, tools, options)
        clock = StreamClock(self.limits, self.provider)
        try:
            async for event in retry_before_first_event(
                lambda: self._attempt(body, options, clock), self.retry_delays
            ):
                yield event
        except Stopped:
            yield Stop("stopped")

    async def _attempt(
        self, body: JsonObject, options: StreamOptions, clock: StreamClock
    ) -> AsyncIterator[ModelEvent]:
        client = self._client_for_request()
        reader = self._reader()
        request = client.build_request("POST", self.url(), json=body, headers=self._headers())
        request.extensions["timeout"] = timeout_for(self.entry.timeout_s).as_dict()
        clock.progress()  # a new attempt restarts the idle timer, not the turn's deadline
        try:
            response = await bounded(client.send(request, stream=True), clock)
            try:
                await raise_for_status(self.provider, response)
                async for sse in self._events(response, options, clock):
                    if not sse.is_keepalive():
                        clock.progress()
                    for event in _shaped(self.provider, reader.read, sse):
                        yield event
                    if reader.at_end():
                        break
            finally:
                await response.aclose()
        except httpx.HTTPError as error:
            raise transport_error(self.provider, error, self.entry.timeout_s) from None
        if not reader.is_complete():
            raise ended_early(self.provider)
        for event in _shaped(self.provider, lambda _: reader.finish(), None):
            yield event

    def _events(
        self, response: httpx.Response, options: StreamOptions, clock: StreamClock
    ) -> AsyncIterator[SSEEvent]:
        """The response's events; Stop and the clock are raced against each network read."""
        chunks = until_stopped(response.aiter_bytes(), options, clock)
        lines = bounded_lines(chunks, self.limits, self.provider)
        return sse_events(lines, max_event_chars=self.limits.max_line_bytes, provider=self.provider)

    async def aclose(self) -> None:
        """Close the HTTP client if this model owns it."""
        if self._client is not None and self._owns_client:
            await self._client.aclose()
            self._client = None


SHAPE_ERRORS = (AttributeError, TypeError, KeyError, IndexError, ValueError, RecursionError)
"""What a reader raises on JSON of an unexpected shape (a list where an object belongs...)."""


def _shaped(
    provider: str, read: Callable[[Any], list[ModelEvent]], sse: SSEEvent | None
) -> list[ModelEvent]:
    """``read(sse)``, with an event of the wrong shape as a coded ``ai.provider_failed``."""
    try:
        return read(sse)
    except ModelError:
        raise
    except SHAPE_ERRORS as error:
        raise ModelError(
            "ai.provider_failed",
            Phrase.of(
                "The {provider} server sent an event of an unexpected shape.", provider=provider
            ),
            retryable=True,
            details={
                "provider": provider,
                "reason": "unexpected_shape",
                "type": type(error).__name__,
            },
        ) from error
