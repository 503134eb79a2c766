"""The local llama.cpp model, run in a child process so a llama.cpp abort cannot take the app down.

Why a process and not a thread: llama.cpp aborts (``GGML_ASSERT``) on some bad inputs and
files, which would kill the whole window from a thread; a spawned child just exits and the next
request starts a fresh one. The cost is one pipe message per token (microseconds) and the time to
start the child once (model load included), paid lazily on the first request, off the event loop.
The messages are the typed values of :mod:`~app.core.models.local_messages`; a reader thread
blocks on the pipe and wakes the event loop as each one lands
(:class:`~app.core.models.pipe_reader.PipeReader`), so no token waits for a poll.

Stop works between tokens and inside the prompt's evaluation (llama.cpp's abort callback, see
:mod:`~app.core.models.local_worker`); if the child does not acknowledge a stop within
``stop_grace_s`` (a child stuck elsewhere), it is killed and restarted on the next request. A
child that dies mid-reply is a coded ``ai.model_crashed``; :meth:`LocalLlamaModel.aclose` during a
reply ends that reply with ``Stop("stopped")``. The child keeps one ``Llama`` object, so the
stable prompt prefix (system prompt + tool definitions) stays in its KV cache across turns.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import signal
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from multiprocessing.synchronize import Event
from pathlib import Path

from app.core.errors import ModelError
from app.core.models import local_worker
from app.core.models.base import (
    Message,
    ModelEvent,
    Stop,
    StopReason,
    StreamOptions,
    TextDelta,
    ToolCallEvent,
    ToolSpec,
    Usage,
)
from app.core.models.catalog import ModelEntry
from app.core.models.chat_prompt import parse_tool_call
from app.core.models.chat_template import marker_split, parse_native_calls
from app.core.models.gguf import available_memory_bytes, bundled_gguf, check_memory, read_gguf
from app.core.models.local_messages import (
    Close,
    Done,
    Failed,
    Generate,
    Ready,
    Sampling,
    Stopped,
    Terminal,
    Text,
    WorkerConfig,
)
from app.core.models.pipe_reader import MessageSource, PipeClosed, PipeReader
from app.core.models.transport import stop_requested
from app.core.phrases import Phrase

DEFAULT_SAMPLING = Sampling(repeat_penalty=1.15)
"""Small models loop on a phrase without a repetition penalty (llama-cpp-python's
``generate`` defaults to none); ``StreamOptions.extra`` overrides it."""
"""How often the caller's Stop (a ``threading.Event``, which cannot wake an event loop) is
checked while the worker sends nothing; the worker's messages never wait for it."""
REASONS: dict[str, StopReason] = {"stop": "end_turn", "length": "max_tokens"}
HINTS = {
    "ai.context_overflow": "Start a new conversation or ask a shorter question.",
    "ai.model_file_invalid": "Download the model again or choose another GGUF file.",
}
_SAFE = [False]
"""Set once a child died of an illegal instruction: later children run without llama.cpp's
extra (repacked/AMX) weight buffers, which some CPUs and virtual machines cannot execute."""
log = logging.getLogger(__name__)


class _WorkerDied(Exception):
    def __init__(self, exitcode: int | None) -> None:
        super().__init__(exitcode)
        self.exitcode = exitcode

    @property
    def illegal_instruction(self) -> bool:
        return self.exitcode == -getattr(signal, "SIGILL", 4)


def _enter_safe_mode(exitcode: int | None) -> None:
    log.info(
        "llama.cpp died of an illegal instruction (exit %s); retrying without extra weight "
        "buffers (AMX/repack)",
        exitcode,
    )
    _SAFE[0] = True


@dataclass
class _Worker:
    process: BaseProcess
    conn: Connection
    stop: Event
    reader: MessageSource
    n_ctx: int
    abandoned: bool = False
    """A reply is under way that nobody reads any more (stopped; drained before the next)."""
    closing: bool = False
    """:meth:`LocalLlamaModel.aclose` is ending it: its end is a Stop, not a crash."""
    native_tools: bool = False
    """Whether the model's chat template renders tools (real tool calls, no grammar)."""


@dataclass
class _Reply:
    """Decides what the streamed text is: answer text, a tool call, or maybe a call.

    Modes: ``text``; ``tool`` (grammar-constrained call); ``auto`` (text unless it is a JSON
    call); ``native`` (a tool-calling chat template: text up to a tool-call marker, the
    calls after it).
    """

    mode: str
    tools: list[ToolSpec]
    buffer: list[str] = field(default_factory=list)
    streaming: bool = False
    calling: bool = False

    def text(self, piece: str) -> list[ModelEvent]:
        if self.mode == "native":
            return self._native(piece)
        if self.mode == "text" or self.streaming:
            return [TextDelta(piece)]
        self.buffer.append(piece)
        head = "".join(self.buffer).lstrip()
        if self.mode == "auto" and head and head[0] not in "{<":
            self.streaming = True
            self.buffer.clear()
            return [TextDelta(head)]
        return []

    def _native(self, piece: str) -> list[ModelEvent]:
        self.buffer.append(piece)
        if self.calling:
            return []
        pending = "".join(self.buffer)
        if not self.streaming:
            head = pending.lstrip()
            if not head:
                return []
            if head[0] in "{[":
                self.calling = True
                return []
            self.streaming = True
        safe, self.calling = marker_split(pending)
        self.buffer = [pending[safe:]] if safe < len(pending) else []
        return [TextDelta(pending[:safe])] if safe else []

    def finish(self) -> tuple[list[ModelEvent], StopReason | None]:
        if not self.buffer:
            return [], None
        text = "".join(self.buffer)
        if self.mode == "native":
            calls = parse_native_calls(text, self.tools)
            if calls:
                return [ToolCallEvent(call) for call in calls], "tool_use"
            return [TextDelta(text)], None
        call = parse_tool_call(text, self.tools)
        if call is not None:
            return [ToolCallEvent(call)], "tool_use"
        if self.mode == "tool":
            raise ModelError(
                "ai.tool_call_invalid",
                "The local model did not finish a valid tool call.",
                hint="Raise max_tokens, or simplify the tool's arguments.",
                retryable=True,
                details={"text": text[:300]},
            )
        return [TextDelta(text)], None


class LocalLlamaModel:
    """A GGUF model through llama-cpp-python in a child process.

    Args:
        entry: the catalog entry (``gguf`` ``None``: the bundled SmolLM2).
        available_memory: returns the free memory in bytes (tests inject a figure).
        n_threads: llama.cpp threads (``None``: llama-cpp-python's default).
        stop_grace_s: how long a stop may go unacknowledged before the child is killed.
        load_timeout_s: how long loading may take.
    """

    def __init__(
        self,
        entry: ModelEntry,
        *,
        available_memory: Callable[[], int | None] = available_memory_bytes,
        n_threads: int | None = None,
        stop_grace_s: float = 10.0,
        load_timeout_s: float = 300.0,
    ) -> None:
        self.id = entry.id
        self.supports_tools = entry.supports_tools
        self.entry = entry
        self.n_threads = n_threads
        self.stop_grace_s = stop_grace_s
        self.load_timeout_s = load_timeout_s
        self._available = available_memory
        self._worker: _Worker | None = None
        self._lock: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
        self.restarts = 0

    def model_path(self) -> Path:
        """The GGUF file this model loads."""
        return Path(self.entry.gguf).expanduser() if self.entry.gguf else bundled_gguf()

    @property
    def context_size(self) -> int | None:
        """The loaded context size in tokens (``None`` before the first load)."""
        return self._worker.n_ctx if self._worker else None

    @property
    def pid(self) -> int | None:
        """The process id of the running worker (``None`` when none runs)."""
        return self._worker.process.pid if self._worker else None

    async def load(self) -> None:
        """Check the file and memory, start the child and wait until the model is loaded."""
        async with self._get_lock():
            await self._ready_worker()

    def _get_lock(self) -> asyncio.Lock:
        """One reply at a time (a lock per event loop, so tests may share the model)."""
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock[0] is not loop:
            self._lock = (loop, asyncio.Lock())
        return self._lock[1]

    async def _ready_worker(self) -> _Worker:
        worker = self._worker
        if worker is not None and not worker.process.is_alive():
            await self._discard(worker)
            worker = None
        if worker is not None and worker.abandoned:
            await self._settle(worker)
            worker = self._worker
        if worker is None:
            worker = await self._start_with_fallback()
            self._worker = worker
        return worker

    async def _start_with_fallback(self) -> _Worker:
        """Start the child; if llama.cpp dies of an illegal instruction, retry in safe mode."""
        for attempt in range(2):
            try:
                return await self._start()
            except _WorkerDied as died:
                if attempt or not died.illegal_instruction or _SAFE[0]:
                    raise self._crashed(died.exitcode, Phrase.of("while loading")) from None
                _enter_safe_mode(died.exitcode)
        raise AssertionError("unreachable")

    def _spawn(self) -> _Worker:
        path = self.model_path()
        info = read_gguf(path)
        n_ctx = self.entry.context_size or info.default_context()
        check_memory(info, n_ctx, self._available)
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        stop = ctx.Event()
        config = WorkerConfig(str(path), n_ctx, self.n_threads, extra_buffers=not _SAFE[0])
        process = ctx.Process(
            target=local_worker.serve,
            args=(child, stop, config),
            name=f"arxiu-llama-{self.id}",
            daemon=True,
        )
        process.start()
        child.close()
        return _Worker(process, parent, stop, self._reader(parent), n_ctx)

    def _reader(self, conn: Connection) -> MessageSource:
        """What reads the worker's messages: a :class:`PipeReader` thread."""
        return PipeReader(conn, f"arxiu-llama-reader-{self.id}")

    async def _start(self) -> _Worker:
        worker = await asyncio.to_thread(self._spawn)
        deadline = time.monotonic() + self.load_timeout_s
        try:
            while (left := deadline - time.monotonic()) > 0:
                for message in await worker.reader.next_batch(left):
                    if isinstance(message, Ready):
                        worker.n_ctx, worker.native_tools = message.n_ctx, message.tool_template
                        return worker
                    if isinstance(message, Failed):
                        raise _coded(message, self.model_path())
                    if isinstance(message, PipeClosed):
                        await self._kill(worker)
                        raise _WorkerDied(worker.process.exitcode)
        except Exception:
            await self._kill(worker)
            raise
        except BaseException:  # cancelled: nothing may be awaited, but it must not run on
            worker.process.kill()
            raise
        await self._kill(worker)
        raise ModelError("ai.model_load_timeout", "The local model took too long to load.")

    def _crashed(self, exitcode: int | None, when: Phrase) -> ModelError:
        return ModelError(
            "ai.model_crashed",
            Phrase.of("The local model process stopped unexpectedly {when}.", when=when),
            hint="Try again; if it keeps happening, the model file may be damaged.",
            retryable=True,
            details={"exitcode": exitcode},
        )

    def _request(
        self,
        messages: list[Message],
        tools: list[ToolSpec],
        options: StreamOptions,
        native: bool = False,
    ) -> tuple[Generate, _Reply]:
        use_tools = bool(tools) and options.tool_choice != "none"
        use_tools = use_tools and (self.supports_tools or options.tool_choice == "required")
        offered = tools if use_tools else []
        mode = "text" if not offered else "tool" if options.tool_choice == "required" else "auto"
        if mode == "auto" and native:
            mode = "native"
        request = Generate(
            tuple(messages),
            tuple(offered),
            native=mode == "native",
            constrained=mode == "tool",
            max_tokens=min(options.max_tokens, self.entry.max_tokens),
            temperature=options.temperature,
            sampling=DEFAULT_SAMPLING.updated(options.extra),
        )
        return request, _Reply(mode, offered)

    async def stream(
        self, messages: list[Message], tools: list[ToolSpec], options: StreamOptions
    ) -> AsyncIterator[ModelEvent]:
        """Stream the reply token by token; raises coded :class:`ModelError` values."""
        async with self._get_lock():
            for attempt in range(2):
                worker = await self._ready_worker()
                request, reply = self._request(messages, tools, options, worker.native_tools)
                worker.stop.clear()
                worker.abandoned = True
                yielded = False
                try:
                    await self._send(worker, request)
                    async for event in self._events(worker, reply, options):
                        yielded = True
                        yield event
                    return
                except _WorkerDied as died:
                    if yielded or attempt or not died.illegal_instruction or _SAFE[0]:
                        raise self._crashed(died.exitcode, Phrase.of("while answering")) from None
                    _enter_safe_mode(died.exitcode)
                finally:
                    if worker.abandoned:  # the reader left early: stop generating now
                        worker.stop.set()

    async def _send(self, worker: _Worker, request: Generate) -> None:
        try:
            worker.conn.send(request)
        except OSError:  # the child is gone (its end of the pipe is closed)
            await self._discard(worker)
            raise _WorkerDied(worker.process.exitcode) from None

    def _wait_s(self, stop_sent: float | None) -> float | None:
        """How long to wait for the worker's next message: until one comes (Stop wakes the
        wait itself), or, once Stop was passed on, what is left of the child's grace."""
        if stop_sent is not None:
            return max(0.0, stop_sent + self.stop_grace_s - time.monotonic())
        return None

    async def _events(
        self, worker: _Worker, reply: _Reply, options: StreamOptions
    ) -> AsyncIterator[ModelEvent]:
        stop = options.stop_event
        with stop.listening(worker.reader.wake) if stop else contextlib.nullcontext():
            async for event in self._replies(worker, reply, options):
                yield event

    async def _replies(
        self, worker: _Worker, reply: _Reply, options: StreamOptions
    ) -> AsyncIterator[ModelEvent]:
        stop_sent: float | None = None
        while True:
            for message in await worker.reader.next_batch(self._wait_s(stop_sent)):
                if isinstance(message, Text):
                    for event in reply.text(message.piece):
                        yield event
                elif isinstance(message, PipeClosed):
                    for event in await self._pipe_ended(worker):
                        yield event
                    return
                elif not isinstance(message, Ready):
                    worker.abandoned = False
                    for event in self._terminal(message, reply):
                        yield event
                    return
            if stop_sent is None and stop_requested(options):
                worker.stop.set()
                stop_sent = time.monotonic()
            elif stop_sent is not None and time.monotonic() - stop_sent >= self.stop_grace_s:
                await self._discard(worker)
                yield Usage()
                yield Stop("stopped")
                return

    async def _pipe_ended(self, worker: _Worker) -> list[ModelEvent]:
        """The end of a reply whose worker went away: a Stop if :meth:`aclose` ended it."""
        if worker.closing:
            return [Usage(), Stop("stopped")]
        await self._discard(worker)
        raise _WorkerDied(worker.process.exitcode)

    def _terminal(self, message: Terminal, reply: _Reply) -> list[ModelEvent]:
        if isinstance(message, Failed):
            raise _coded(message, self.model_path())
        if isinstance(message, Stopped):
            return [message.usage, Stop("stopped")]
        events, reason = reply.finish()
        return [*events, message.usage, Stop(reason or REASONS.get(message.reason, "end_turn"))]

    async def _settle(self, worker: _Worker) -> None:
        """Finish a reply whose reader went away: stop it and drain to its last message."""
        worker.stop.set()
        deadline = time.monotonic() + self.stop_grace_s
        while (left := deadline - time.monotonic()) > 0:
            batch = await worker.reader.next_batch(left)
            if any(isinstance(message, PipeClosed) for message in batch):
                break
            if any(isinstance(message, Done | Stopped | Failed) for message in batch):
                worker.abandoned = False
                return
        await self._discard(worker)

    async def _kill(self, worker: _Worker) -> None:
        if worker.process.is_alive():
            worker.process.kill()
        await asyncio.to_thread(_reap, worker)

    async def _discard(self, worker: _Worker) -> None:
        """Kill ``worker``; the next request starts a fresh one."""
        if self._worker is worker:
            self._worker = None
            self.restarts += 1
        await self._kill(worker)

    async def aclose(self) -> None:
        """Ask the child to exit (killing it if it does not); a reply under way ends stopped.

        The model may be used again afterwards: the next request starts a fresh child.
        """
        worker, self._worker = self._worker, None
        if worker is None:
            return
        worker.closing = True
        worker.stop.set()
        with contextlib.suppress(OSError, ValueError):
            worker.conn.send(Close())
        await asyncio.to_thread(worker.process.join, 3)
        await self._kill(worker)


def _reap(worker: _Worker) -> None:
    """Wait for a killed or exiting child, then for its reader, and close the pipe."""
    worker.process.join(5)
    worker.reader.join(1.0)  # the pipe ended with the process
    worker.conn.close()


def _coded(failure: Failed, path: Path) -> ModelError:
    code = failure.code or "ai.model_failed"
    details = dict(failure.details)
    if code == "ai.model_file_invalid":
        details.setdefault("path", str(path))
    category = "input" if code == "ai.context_overflow" else "environment"
    return ModelError(
        code, failure.message, hint=HINTS.get(code), category=category, details=details
    )
