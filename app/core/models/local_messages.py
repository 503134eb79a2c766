"""What the local model and its worker process say over their pipe: one frozen dataclass a kind.

Parent → worker: :class:`Generate` (answer one conversation) or :class:`Close`. Worker →
parent: :class:`Ready` once the model is loaded, then per request any number of :class:`Text`
pieces and one terminal message: :class:`Done`, :class:`Stopped` or :class:`Failed`. The
worker starts from a :class:`WorkerConfig`. Every value here is plain and picklable (it crosses
a ``multiprocessing`` pipe); the conversation travels as the provider-neutral
:class:`~app.core.models.base.Message` values and is rendered in the worker.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from app.core.errors import ModelError
from app.core.models.base import Message, ToolSpec, Usage
from app.core.phrases import Phrase

MAX_SAMPLING_S = 900.0
"""The longest one reply may sample (a request's ``max_seconds`` may lower it); past it the
reply ends with ``ai.stream_timeout`` (same limit as HTTP providers' turns)."""


@dataclass(frozen=True)
class WorkerConfig:
    """How the worker loads its model."""

    path: str
    n_ctx: int
    n_threads: int | None = None
    extra_buffers: bool = True
    """``False``: load without llama.cpp's extra (AMX/repacked) weight buffers."""


@dataclass(frozen=True)
class Sampling:
    """llama.cpp sampling settings (``None``: llama-cpp-python's default)."""

    top_k: int | None = None
    top_p: float | None = None
    min_p: float | None = None
    repeat_penalty: float | None = None
    presence_penalty: float | None = None

    def kwargs(self) -> dict[str, float]:
        """The settings that are set, as ``Llama.generate`` keyword arguments."""
        values = {item.name: getattr(self, item.name) for item in fields(self)}
        return {name: value for name, value in values.items() if value is not None}

    def updated(self, extra: Mapping[str, object]) -> Sampling:
        """These settings with those named in ``extra`` (``StreamOptions.extra``) replaced.

        Raises:
            ModelError: ``ai.model_options_invalid`` for a setting that is not a number.
        """
        top_k = _setting(extra, "top_k", self.top_k)
        return Sampling(
            top_k=None if top_k is None else int(top_k),
            top_p=_setting(extra, "top_p", self.top_p),
            min_p=_setting(extra, "min_p", self.min_p),
            repeat_penalty=_setting(extra, "repeat_penalty", self.repeat_penalty),
            presence_penalty=_setting(extra, "presence_penalty", self.presence_penalty),
        )


def _setting(extra: Mapping[str, object], name: str, current: float | None) -> float | None:
    if name not in extra:
        return current
    value = extra[name]
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise ModelError(
            "ai.model_options_invalid",
            Phrase.of("The sampling setting {name} must be a number.", name=name),
            category="input",
            details={"setting": name},
        )
    return float(value)


@dataclass(frozen=True)
class Generate:
    """Parent → worker: stream the reply to ``messages``.

    ``tools`` are described in the system text, or, with ``native``, handed to a chat template
    that renders tools itself (falling back to the text description if the template refuses);
    with ``constrained`` a JSON-schema grammar makes the reply one call of one of them.
    """

    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    native: bool = False
    constrained: bool = False
    max_tokens: int = 1024
    temperature: float = 0.2
    sampling: Sampling = field(default_factory=Sampling)
    max_seconds: float = MAX_SAMPLING_S


@dataclass(frozen=True)
class Close:
    """Parent → worker: exit."""


@dataclass(frozen=True)
class Ready:
    """Worker → parent: the model is loaded."""

    n_ctx: int
    tool_template: bool
    """Whether the model's chat template renders tools."""


@dataclass(frozen=True)
class Text:
    """Worker → parent: the next piece of the reply."""

    piece: str


@dataclass(frozen=True)
class Done:
    """Worker → parent: the reply ended (an end-of-generation token, or ``max_tokens``)."""

    reason: Literal["stop", "length"]
    usage: Usage
    prompt_s: float
    """Seconds from the request to the first sampled token."""


@dataclass(frozen=True)
class Stopped:
    """Worker → parent: Stop ended the reply, while the prompt was read or while sampling."""

    usage: Usage
    phase: Literal["prompt", "reply"]


@dataclass(frozen=True)
class Failed:
    """Worker → parent: the request (or loading) failed with a coded error."""

    code: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)
    """Machine-readable extras, as :class:`~app.core.errors.ArxiuError` carries them."""


ToWorker = Generate | Close
FromWorker = Ready | Text | Done | Stopped | Failed
Terminal = Done | Stopped | Failed
"""The messages that end a request."""
