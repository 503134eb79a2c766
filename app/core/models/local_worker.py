"""The child process that runs llama.cpp (imported in the child only; llama_cpp loaded lazily).

The messages over the ``multiprocessing`` pipe are the typed values of
:mod:`~app.core.models.local_messages`: parent → child :class:`Generate` or :class:`Close`;
child → parent :class:`Ready` once loaded, then per request any number of :class:`Text` and one
terminal :class:`Done`, :class:`Stopped` or :class:`Failed`. A shared ``stop`` event is checked
inside the prompt's evaluation (llama.cpp's abort callback) and between tokens.

The prompt is evaluated in one ``Llama.eval`` call after the longest prefix already in the KV
cache (llama.cpp's own ``n_batch`` batching, the speed of a bare llama-cpp-python prefill: 32-token
slices measured 2.34× the wall time of one batch). Stop still lands within one graph node: while
the prompt is read, llama.cpp's abort callback (``llama_set_abort_callback``, polled between
graph nodes, several hundred times a batch) returns the stop event, ``llama_decode`` gives up with
code 2 and drops the unfinished batch's cells; the tokens of the batches already finished stay
cached. ``Llama.generate`` then finds the whole prompt but its last token cached, so only that
token is re-evaluated before sampling. The callback is removed again before sampling (a Python
call per graph node would cost each sampled token about a millisecond).

llama.cpp's CPU threads meet at an OpenMP barrier after every graph node, and libgomp's default
is to spin there for 300,000 iterations before sleeping. When other work holds a core (the
indexer running in the background, another program), the thread that arrives first spins
while the one it waits for is not running: measured on these 2 cores at load 3.4–4.2 (one run,
two rounds), a 281-token prefill on 2 threads took 3.0–5.5 s and 3.4–3.9 s of CPU with
libgomp's default against 2.5 s and 1.9 s with a 1,000-iteration spin, about what 1 thread
took there (1.9–2.8 s, 1.7–1.9 s CPU). :func:`share_the_cores` sets that short spin in the
child before llama.cpp (and libgomp with it) loads, unless the environment already chose a
policy.
"""

from __future__ import annotations

import codecs
import json
import os
import time
from collections.abc import Generator, Iterator, MutableMapping
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Event
from typing import Any, Literal

from app.core.models.base import ToolSpec, Usage
from app.core.models.chat_prompt import render, template_messages, tool_call_schema
from app.core.models.chat_template import native_messages, native_tools, template_supports_tools
from app.core.models.local_messages import (
    MAX_SAMPLING_S,
    Done,
    Failed,
    FromWorker,
    Generate,
    Ready,
    Stopped,
    Text,
    WorkerConfig,
)

ABORTED = 2
"""``llama_decode``'s return code when the abort callback stopped it."""
SPIN_COUNT = "1000"
"""libgomp's ``GOMP_SPINCOUNT`` in the worker: spin briefly at a barrier, then sleep (default
300,000; of 1,000 and 10,000, 1,000 measured as fast as ``OMP_WAIT_POLICY=PASSIVE`` here)."""
OPENMP_POLICY = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")
"""The environment variables by which a person chooses libgomp's waiting instead."""


def share_the_cores(environ: MutableMapping[str, str] = os.environ) -> bool:
    """Make llama.cpp's OpenMP threads sleep soon at a barrier (``GOMP_SPINCOUNT``), so a busy
    core does not cost a prefill its spinning partner's time; ``False`` if ``environ`` already
    sets a policy (left as it is). libgomp reads it once, when it loads: call before
    ``llama_cpp`` is imported (a no-op for a llama.cpp built without OpenMP)."""
    if any(name in environ for name in OPENMP_POLICY):
        return False
    environ["GOMP_SPINCOUNT"] = SPIN_COUNT
    return True


def serve(conn: Connection, stop: Event, config: WorkerConfig) -> None:
    """Load the model, then answer requests until :class:`Close` or the parent goes away."""
    share_the_cores()
    try:
        llm = _load(config)
    except Exception as error:  # llama.cpp raises ValueError/RuntimeError on bad files
        conn.send(Failed("ai.model_file_invalid", f"llama.cpp cannot load it: {error}"))
        return
    template = llm.metadata.get("tokenizer.chat_template")
    conn.send(Ready(llm.n_ctx(), template_supports_tools(template)))
    grammars = GrammarCache()
    abort = PromptAbort(llm, stop)
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        if not isinstance(request, Generate):  # Close
            return
        try:
            for message in _generate(llm, abort, request, grammars):
                conn.send(message)
        except Exception as error:  # a failure inside llama.cpp's Python layer
            conn.send(Failed("ai.model_failed", f"The local model failed: {error}"))


def disable_extra_buffers() -> None:
    """Make ``Llama`` load weights without extra buffer types (AMX / repacked weights).

    llama.cpp selects those kernels from the CPU's flags; in some virtual machines the flags
    are advertised but the instructions trap (``SIGILL``). Only ever called in a child process.
    """
    import llama_cpp.llama_cpp as lib

    base = lib.llama_model_default_params

    def params() -> Any:
        value = base()
        value.use_extra_bufts = False
        return value

    lib.llama_model_default_params = params


def _load(config: WorkerConfig) -> Any:
    from llama_cpp import Llama

    if not config.extra_buffers:
        disable_extra_buffers()
    if config.n_threads:
        return Llama(
            model_path=config.path, n_ctx=config.n_ctx, n_threads=config.n_threads, verbose=False
        )
    return Llama(model_path=config.path, n_ctx=config.n_ctx, verbose=False)


def prompt_text(llm: Any, request: Generate) -> str:
    """The request rendered with the model's chat template.

    A ``native`` request hands its tools to the template (one that renders them); if the
    template refuses, the tools are described in the system text instead, as for any other.
    """
    from jinja2.exceptions import TemplateError

    meta = llm.metadata
    vocab_text = llm._model.token_get_text  # llama-cpp-python's model wrapper
    bos, eos = llm.token_bos(), llm.token_eos()
    bos_text = vocab_text(bos) if bos >= 0 else ""
    eos_text = vocab_text(eos) if eos >= 0 else ""
    template = meta.get("tokenizer.chat_template")
    messages, tools = list(request.messages), list(request.tools)
    if request.native and tools:
        try:
            return render(
                template,
                native_messages(messages),
                tools=native_tools(tools),
                bos_token=bos_text,
                eos_token=eos_text,
            )
        except TemplateError:
            pass
    text = template_messages(messages, tools)
    return render(template, text, bos_token=bos_text, eos_token=eos_text)


def prompt_tokens(llm: Any, request: Generate) -> list[int]:
    """Render the request's messages with the model's chat template and tokenize them."""
    text = prompt_text(llm, request)
    bos = llm.token_bos()
    add_bos = llm.metadata.get("tokenizer.ggml.add_bos_token", "true") == "true"
    tokens: list[int] = llm.tokenize(text.encode("utf-8"), add_bos=add_bos, special=True)
    if len(tokens) > 1 and tokens[0] == tokens[1] == bos:
        tokens = tokens[1:]
    return tokens


class PromptAbort:
    """llama.cpp's abort callback bound to the ``stop`` event, installed only while a prompt is
    read (:meth:`evaluate`); keeps the ctypes callback alive as long as the model."""

    def __init__(self, llm: Any, stop: Event) -> None:
        import llama_cpp

        self._lib = llama_cpp
        self._ctx = llm._ctx.ctx  # llama-cpp-python's context wrapper
        self._callback = llama_cpp.ggml_abort_callback(lambda _data: bool(stop.is_set()))
        self._none = llama_cpp.ggml_abort_callback()  # a NULL callback: never abort
        self.llm, self.stop = llm, stop

    def evaluate(self, tokens: list[int]) -> bool:
        """Evaluate ``tokens`` after the cached ones; ``False`` if Stop aborted it (the
        unfinished batch is dropped from the KV cache, ``llm.n_tokens`` counts what stayed)."""
        if self.stop.is_set():
            return False
        self._lib.llama_set_abort_callback(self._ctx, self._callback, None)
        try:
            self.llm.eval(tokens)
        except RuntimeError as error:
            if not (self.stop.is_set() and str(error).endswith(f"returned {ABORTED}")):
                raise
            self.llm._ctx.kv_cache_seq_rm(-1, self.llm.n_tokens, -1)
            return False
        finally:
            self._lib.llama_set_abort_callback(self._ctx, self._none, None)
        return True


def _prefill(llm: Any, abort: PromptAbort, tokens: list[int]) -> int | None:
    """Evaluate all but the last prompt token, reusing the cached prefix; ``None`` if stopped.

    One ``eval`` call (llama.cpp batches it by ``n_batch``); Stop aborts it within one graph
    node (see :class:`PromptAbort`).
    """
    cached = 0
    for old, new in zip(llm.input_ids[: llm.n_tokens].tolist(), tokens[:-1], strict=False):
        if old != new:
            break
        cached += 1
    if cached < llm.n_tokens and not llm._ctx.kv_cache_seq_rm(-1, cached, -1):
        cached = 0
        llm.reset()
    llm.n_tokens = cached
    if not abort.evaluate(tokens[cached:-1]):
        return None
    return cached


class GrammarCache:
    """The JSON-schema grammars of the tool sets seen so far (building one takes a while)."""

    def __init__(self) -> None:
        self._grammars: dict[str, object] = {}

    def get(self, tools: tuple[ToolSpec, ...]) -> Any:
        """The ``LlamaGrammar`` that allows one call of one of ``tools``."""
        from llama_cpp.llama_grammar import LlamaGrammar

        key = json.dumps(tool_call_schema(list(tools)), sort_keys=True)
        if key not in self._grammars:
            self._grammars[key] = LlamaGrammar.from_json_schema(key, verbose=False)
        return self._grammars[key]


def _generate(
    llm: Any, abort: PromptAbort, request: Generate, grammars: GrammarCache
) -> Iterator[FromWorker]:
    """The messages answering ``request``: the reply's :class:`Text` pieces, then one
    terminal message."""
    started = time.perf_counter()
    tokens = prompt_tokens(llm, request)
    n_ctx = llm.n_ctx()
    if len(tokens) >= n_ctx:
        message = f"The prompt has {len(tokens)} tokens; the context holds {n_ctx}."
        details = {"prompt_tokens": len(tokens), "n_ctx": n_ctx}
        yield Failed("ai.context_overflow", message, details)
        return
    cached = _prefill(llm, abort, tokens)
    if cached is None:
        yield Stopped(Usage(input_tokens=len(tokens)), "prompt")
        return
    max_tokens = max(1, min(request.max_tokens, n_ctx - len(tokens)))
    reason, count, first = yield from _sample(
        llm, abort.stop, tokens, request, grammars, max_tokens
    )
    usage = Usage(len(tokens), count, cached)
    if reason == "timeout":
        limit = _max_seconds(request)
        message = f"The local model did not finish its reply within {limit:g} s."
        details = {"limit_s": limit, "usage": _usage_details(usage)}
        yield Failed("ai.stream_timeout", message, details)
    elif reason == "stopped":
        yield Stopped(usage, "reply")
    else:
        yield Done(reason, usage, (first or time.perf_counter()) - started)


def _usage_details(usage: Usage) -> dict[str, int]:
    return {
        "input_tokens": usage.input_tokens,
        "cached_tokens": usage.cached_tokens,
        "output_tokens": usage.output_tokens,
    }


def _max_seconds(request: Generate) -> float:
    return min(request.max_seconds or MAX_SAMPLING_S, MAX_SAMPLING_S)


REPEAT_WINDOW = 600
"""Characters of recent output kept to notice a degenerate loop."""


def is_looping(text: str, times: int = 4) -> bool:
    """Whether ``text`` ends with the same phrase (8–120 characters) repeated ``times`` times:
    a small model stuck in a loop, which no sampling setting reliably prevents."""
    for period in range(8, min(120, len(text) // times) + 1):
        tail = text[-period:]
        if text.endswith(tail * times):
            return True
    return False


SampleEnd = Literal["stop", "length", "stopped", "timeout"]


def _sample(
    llm: Any,
    stop: Event,
    tokens: list[int],
    request: Generate,
    grammars: GrammarCache,
    max_tokens: int,
) -> Generator[Text, None, tuple[SampleEnd, int, float | None]]:
    """Sample tokens, yielding their text; returns ``(reason, tokens generated, time of the
    first)``."""
    import llama_cpp

    vocab = llama_cpp.llama_model_get_vocab(llm.model)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    generator = llm.generate(
        tokens,
        temp=request.temperature,
        grammar=grammars.get(request.tools) if request.constrained else None,
        **request.sampling.kwargs(),
    )
    count, first = 0, None
    reason: SampleEnd = "length"
    text = ""
    special = request.native  # tool-call markers may be control tokens
    deadline = time.monotonic() + _max_seconds(request)
    for token in generator:
        if stop.is_set():
            reason = "stopped"
            break
        if llama_cpp.llama_vocab_is_eog(vocab, token):
            reason = "stop"
            break
        count += 1
        first = first or time.perf_counter()
        piece = decoder.decode(llm.detokenize([token], special=special))
        if piece:
            yield Text(piece)
            text = (text + piece)[-REPEAT_WINDOW:]
            if is_looping(text):
                reason = "stop"
                break
        if count >= max_tokens:
            break
        if time.monotonic() > deadline:
            reason = "timeout"
            break
    generator.close()
    tail = decoder.decode(b"", final=True)
    if tail and reason != "stopped":
        yield Text(tail)
    return reason, count, first
