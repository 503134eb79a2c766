"""The child process that runs llama.cpp (imported in the child only; llama_cpp loaded lazily).

Protocol over a ``multiprocessing`` pipe. Parent → child: ``("generate", request)`` or
``("close", None)``. Child → parent: ``("ready", info)`` once loaded, then per request any number
of ``("text", str)`` and one terminal message: ``("done", result)``, ``("stopped", result)`` or
``("error", {code, message, details})``. A shared ``stop`` event is checked inside the prompt's
evaluation (llama.cpp's abort callback) and between tokens.

The prompt is evaluated in one ``Llama.eval`` call after the longest prefix already in the KV
cache (llama.cpp's own ``n_batch`` batching, the speed of a bare llama-cpp-python prefill: 32-token
slices measured 2.34× the wall time of one batch). Stop still lands within one graph node: while
the prompt is read, llama.cpp's abort callback (``llama_set_abort_callback``, polled between
graph nodes, several hundred times a batch) returns the stop event, ``llama_decode`` gives up with
code 2 and drops the unfinished batch's cells; the tokens of the batches already finished stay
cached. ``Llama.generate`` then finds the whole prompt but its last token cached, so only that
token is re-evaluated before sampling. The callback is removed again before sampling (a Python
call per graph node would cost each sampled token about a millisecond).
"""

from __future__ import annotations

import codecs
import json
import time
from typing import Any

from app.core.models.chat_prompt import render
from app.core.models.chat_template import template_supports_tools

ABORTED = 2
"""``llama_decode``'s return code when the abort callback stopped it."""
MAX_SAMPLING_S = 900.0
"""The longest one reply may sample (a request's ``max_seconds`` may lower it); past it the
reply ends with ``ai.stream_timeout`` (same limit as HTTP providers' turns)."""


def serve(conn: Any, stop: Any, config: dict[str, Any]) -> None:
    """Load the model, then answer requests until ``close`` or the parent goes away."""
    try:
        llm = _load(config)
    except Exception as error:  # llama.cpp raises ValueError/RuntimeError on bad files
        conn.send(("error", _error("ai.model_file_invalid", f"llama.cpp cannot load it: {error}")))
        return
    template = llm.metadata.get("tokenizer.chat_template")
    ready = {
        "n_ctx": llm.n_ctx(),
        "pid_ok": True,
        "tool_template": template_supports_tools(template),
    }
    conn.send(("ready", ready))
    grammars: dict[str, Any] = {}
    abort = PromptAbort(llm, stop)
    while True:
        try:
            kind, request = conn.recv()
        except (EOFError, OSError):
            return
        if kind == "close":
            return
        try:
            _generate(llm, conn, abort, request, grammars)
        except Exception as error:  # a failure inside llama.cpp's Python layer
            conn.send(("error", _error("ai.model_failed", f"The local model failed: {error}")))


def _error(code: str, message: str, **details: Any) -> dict[str, Any]:
    return {"code": code, "message": message, "details": details}


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


def _load(config: dict[str, Any]) -> Any:
    from llama_cpp import Llama

    if not config.get("extra_buffers", True):
        disable_extra_buffers()
    kwargs: dict[str, Any] = {"n_ctx": config["n_ctx"], "verbose": False}
    if config.get("n_threads"):
        kwargs["n_threads"] = config["n_threads"]
    return Llama(model_path=config["path"], **kwargs)


def prompt_text(llm: Any, request: dict[str, Any]) -> str:
    """The request rendered with the model's chat template.

    A request with native ``tools`` (for a template that renders them) falls back to its
    ``text_messages`` (tools described in the system text) if the template refuses it.
    """
    from jinja2.exceptions import TemplateError

    meta = llm.metadata
    vocab_text = llm._model.token_get_text  # llama-cpp-python's model wrapper
    bos, eos = llm.token_bos(), llm.token_eos()
    bos_text = vocab_text(bos) if bos >= 0 else ""
    eos_text = vocab_text(eos) if eos >= 0 else ""
    template = meta.get("tokenizer.chat_template")
    messages, tools = request["messages"], request.get("tools")
    if tools:
        try:
            return render(template, messages, tools=tools, bos_token=bos_text, eos_token=eos_text)
        except TemplateError:
            messages = request["text_messages"]
    return render(template, messages, bos_token=bos_text, eos_token=eos_text)


def prompt_tokens(llm: Any, request: dict[str, Any]) -> list[int]:
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

    def __init__(self, llm: Any, stop: Any) -> None:
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


def _grammar(schema: dict[str, Any] | None, cache: dict[str, Any]) -> Any:
    if schema is None:
        return None
    from llama_cpp.llama_grammar import LlamaGrammar

    key = json.dumps(schema, sort_keys=True)
    if key not in cache:
        cache[key] = LlamaGrammar.from_json_schema(key, verbose=False)
    return cache[key]


def _generate(
    llm: Any, conn: Any, abort: PromptAbort, request: dict[str, Any], grammars: dict[str, Any]
) -> None:
    started = time.perf_counter()
    tokens = prompt_tokens(llm, request)
    n_ctx = llm.n_ctx()
    if len(tokens) >= n_ctx:
        message = f"The prompt has {len(tokens)} tokens; the context holds {n_ctx}."
        conn.send(
            (
                "error",
                _error("ai.context_overflow", message, prompt_tokens=len(tokens), n_ctx=n_ctx),
            )
        )
        return
    cached = _prefill(llm, abort, tokens)
    usage = {"input_tokens": len(tokens), "cached_tokens": cached or 0, "output_tokens": 0}
    if cached is None:
        conn.send(("stopped", {"usage": usage, "phase": "prompt"}))
        return
    max_tokens = max(1, min(int(request["max_tokens"]), n_ctx - len(tokens)))
    reason, count, first = _sample(llm, conn, abort.stop, tokens, request, grammars, max_tokens)
    usage["output_tokens"] = count
    if reason == "timeout":
        limit = _max_seconds(request)
        message = f"The local model did not finish its reply within {limit:g} s."
        conn.send(("error", _error("ai.stream_timeout", message, limit_s=limit, usage=usage)))
        return
    result = {
        "reason": reason,
        "usage": usage,
        "timings": {"prompt_s": (first or time.perf_counter()) - started},
    }
    conn.send(("stopped" if reason == "stopped" else "done", result))


def _max_seconds(request: dict[str, Any]) -> float:
    return min(float(request.get("max_seconds") or MAX_SAMPLING_S), MAX_SAMPLING_S)


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


def _sample(
    llm: Any,
    conn: Any,
    stop: Any,
    tokens: list[int],
    request: dict[str, Any],
    grammars: dict[str, Any],
    max_tokens: int,
) -> tuple[str, int, float | None]:
    """Sample and send tokens; returns ``(reason, tokens generated, time of the first)``."""
    import llama_cpp

    vocab = llama_cpp.llama_model_get_vocab(llm.model)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    generator = llm.generate(
        tokens,
        temp=request["temperature"],
        grammar=_grammar(request.get("grammar"), grammars),
        **request.get("sampling", {}),
    )
    count, first, reason = 0, None, "length"
    text = ""
    special = bool(request.get("tools"))  # tool-call markers may be control tokens
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
            conn.send(("text", piece))
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
        conn.send(("text", tail))
    return reason, count, first
