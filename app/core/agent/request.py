"""The chat request: what a front end asks, and the same request checked and bound to a model.

A front end builds a :class:`ChatRequest` (the app directly; the API and ``arxiu ask --server``
read a body ``{question, model?, history?, context?, images?, mode?, effort?}`` with
:meth:`ChatRequest.from_dict`, the only place a request dict is parsed).
:func:`check_request` checks it completely *before* anything streams and binds it to its
catalog entry (a :class:`CheckedRequest`), raising a coded error: ``request.invalid`` (shape
and limits), ``ai.models_unconfigured`` (no catalog), ``ai.model_unknown``,
``ai.model_no_vision``, ``ai.model_cannot_plan`` (write mode on a model that does not call
tools), ``ai.effort_not_offered`` and ``mcp.write_disabled`` (write mode while writes are off).
A catalog that failed to load is passed in as its error and re-raised
(``ai.model_catalog_invalid``).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from app.core.agent.history_entry import HistoryEntry, entry_json
from app.core.archive.ids import check_id, lone_surrogate_at
from app.core.errors import ArxiuError, ModelError
from app.core.json_types import JsonObject, JsonValue
from app.core.phrases import Phrase

if TYPE_CHECKING:
    from app.core.models.catalog import Catalog, ModelEntry

MAX_QUESTION_CHARS = 32_768
MAX_HISTORY_ENTRIES = 64
MAX_HISTORY_BYTES = 256 * 1024
MAX_IMAGES = 8
MAX_IMAGE_BYTES = 5 * 1024 * 1024
MAX_IMAGES_TOTAL_BYTES = 15 * 1024 * 1024
MAX_CONTEXT_SUMMARY_CHARS = 2_000
REQUEST_KEYS = frozenset({"question", "model", "history", "context", "images", "mode", "effort"})
HISTORY_KEYS = frozenset({"role", "text", "tainted"})
CONTEXT_KEYS = frozenset({"section_tipo", "section_id", "mode", "summary"})

Mode = Literal["read", "write"]


class RequestInvalid(ArxiuError):
    """A request refused before streaming (``request.invalid``)."""

    default_category = "input"

    def __init__(
        self, message: str | Phrase, *, field: str, hint: str | Phrase | None = None
    ) -> None:
        super().__init__(
            "request.invalid",
            message,
            hint=hint or "Fix the request and send it again.",
            details={"field": field},
        )


@dataclass(frozen=True)
class RecordContext:
    """The record the person is looking at (sent in front of the user's turn)."""

    section_tipo: str
    section_id: int
    summary: str = ""
    mode: str = "view"

    def to_dict(self) -> JsonObject:
        """The request form ``{section_tipo, section_id, mode?, summary?}``."""
        out: JsonObject = {"section_tipo": self.section_tipo, "section_id": self.section_id}
        if self.summary:
            out["summary"] = self.summary
        if self.mode != "view":
            out["mode"] = self.mode
        return out


@dataclass(frozen=True)
class Image:
    """An image sent with the question: its mime type and bytes."""

    mime: str
    data: bytes

    def to_dict(self) -> JsonObject:
        """The request form ``{mime, data}`` (``data`` in base64)."""
        return {"mime": self.mime, "data": base64.b64encode(self.data).decode("ascii")}


@dataclass(frozen=True)
class ChatRequest:
    """What a front end asks, typed but not yet checked against its limits or the catalog.

    The app builds it directly; a request body (the API, ``arxiu ask --server``) is read with
    :meth:`from_dict`. :meth:`AssistantSession.chat <app.core.session.AssistantSession.chat>`
    checks it (:func:`check_request`) before anything streams.
    """

    question: str
    model: str | None = None
    history: tuple[HistoryEntry, ...] = ()
    context: RecordContext | None = None
    images: tuple[Image, ...] = ()
    mode: Mode = "read"
    effort: str | None = None

    @classmethod
    def from_dict(cls, raw: Any) -> ChatRequest:
        """Read a request body (its shape only; :func:`check_request` checks its limits).

        Raises:
            RequestInvalid: ``request.invalid`` naming the field.
        """
        return parse_request(raw)

    def to_dict(self) -> JsonObject:
        """The request body ``{question, model?, history?, context?, images?, mode?, effort?}``."""
        out: JsonObject = {"question": self.question}
        optional: JsonObject = {
            "model": self.model,
            "history": [entry_json(entry) for entry in self.history] or None,
            "context": self.context.to_dict() if self.context else None,
            "images": [image.to_dict() for image in self.images] or None,
            "mode": self.mode if self.mode != "read" else None,
            "effort": self.effort,
        }
        out.update({key: value for key, value in optional.items() if value is not None})
        return out


@dataclass(frozen=True)
class CheckedRequest:
    """A request checked completely and bound to its catalog entry (what a run is given)."""

    question: str
    entry: ModelEntry
    history: tuple[HistoryEntry, ...] = ()
    context: RecordContext | None = None
    images: tuple[tuple[str, bytes], ...] = ()
    mode: Mode = "read"
    effort: str | None = None

    @property
    def model_id(self) -> str:
        """The id of the model the run is bound to."""
        return self.entry.id


def validate_request(
    raw: Mapping[str, Any],
    catalog: Catalog | ArxiuError | None,
    *,
    write_allowed: bool,
) -> CheckedRequest:
    """Read a request body and check it completely (:func:`parse_request`, then
    :func:`check_request`).

    Raises:
        ArxiuError: the first problem found (see the module docstring for the codes).
    """
    return check_request(parse_request(raw), catalog, write_allowed=write_allowed)


def parse_request(raw: Any) -> ChatRequest:
    """A request body's shape read into a :class:`ChatRequest` (the API's edge).

    Raises:
        RequestInvalid: ``request.invalid`` naming the field.
    """
    if not isinstance(raw, Mapping):
        raise RequestInvalid("The request must be an object.", field="")
    unknown = sorted(set(raw) - REQUEST_KEYS)
    if unknown:
        raise RequestInvalid(
            Phrase.of("Unknown request field {name!r}.", name=unknown[0]), field=unknown[0]
        )
    question = raw.get("question")
    if not isinstance(question, str):
        raise RequestInvalid("The question is missing.", field="question")
    model = raw.get("model")
    if model is not None and (not isinstance(model, str) or not model):
        raise RequestInvalid("model must be a model id.", field="model")
    return ChatRequest(
        question=question,
        model=model,
        history=_history(raw.get("history")),
        context=_context(raw.get("context")),
        images=_images(raw.get("images")),
        mode=_mode(raw.get("mode")),
        effort=_effort_text(raw.get("effort")),
    )


def check_request(
    request: ChatRequest,
    catalog: Catalog | ArxiuError | None,
    *,
    write_allowed: bool,
) -> CheckedRequest:
    """Check ``request`` completely (text, limits, write mode) and bind it to a catalog entry.

    Raises:
        ArxiuError: the first problem found (see the module docstring for the codes).
    """
    where = lone_surrogate_at(_texts(request))
    if where is not None:  # no provider, index or log could take it
        raise RequestInvalid(
            Phrase.of("{where} holds a lone surrogate, which is not text.", where=where),
            field=where,
            hint="Send the text as valid Unicode.",
        )
    _check_question(request.question)
    _check_history(request.history)
    _check_context(request.context)
    images = _check_images(request.images)
    if request.mode == "write" and not write_allowed:
        raise ArxiuError(
            "mcp.write_disabled",
            "Write mode is turned off for this archive.",
            hint="Turn on write mode in the settings, or ask in read mode.",
            category="permission",
        )
    entry = _entry(catalog, request.model)
    _check_model(entry, images, request.mode)
    effort = _effort(request.effort, entry)
    return CheckedRequest(
        request.question, entry, request.history, request.context, images, request.mode, effort
    )


def _texts(request: ChatRequest) -> JsonObject:
    """The request's text, keyed as in its body (where a lone surrogate is reported)."""
    history: list[JsonValue] = [entry_json(entry) for entry in request.history]
    return {
        "question": request.question,
        "model": request.model,
        "history": history,
        "context": request.context.to_dict() if request.context else None,
        "effort": request.effort,
    }


def _check_model(entry: ModelEntry, images: tuple[tuple[str, bytes], ...], mode: Mode) -> None:
    if images and not entry.vision:
        raise ModelError(
            "ai.model_no_vision",
            Phrase.of('The model "{model}" cannot read images.', model=entry.id),
            hint="Pick a model marked as vision-capable, or remove the images.",
            category="input",
            details={"model": entry.id},
        )
    if mode == "write" and not entry.supports_tools:
        raise ModelError(
            "ai.model_cannot_plan",
            Phrase.of(
                'The model "{model}" cannot propose changes: it does not call tools.',
                model=entry.id,
            ),
            hint="Write mode needs a model that calls tools (an OpenAI-compatible server such "
            "as Ollama, or Anthropic); add one with `arxiu models add`.",
            category="input",
            details={"model": entry.id},
        )


def _check_question(value: str) -> None:
    if not value.strip():
        raise RequestInvalid("The question is missing.", field="question")
    if len(value) > MAX_QUESTION_CHARS:
        raise RequestInvalid(
            Phrase.of(
                "The question is longer than {limit:,} characters.", limit=MAX_QUESTION_CHARS
            ),
            field="question",
            hint="Shorten the question.",
        )


def _history(value: Any) -> tuple[HistoryEntry, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise RequestInvalid("history must be a list of {role, text}.", field="history")
    _check_count(len(value))
    out = []
    for number, item in enumerate(value):
        where = f"history[{number}]"
        if not isinstance(item, Mapping) or set(item) - HISTORY_KEYS:
            raise RequestInvalid(
                Phrase.of("{where} must be {{role, text}} only (text-only).", where=where),
                field=where,
            )
        if item.get("role") not in ("user", "assistant") or not isinstance(item.get("text"), str):
            raise RequestInvalid(
                Phrase.of("{where} needs role user/assistant and a text.", where=where),
                field=where,
            )
        entry: HistoryEntry = {"role": item["role"], "text": item["text"]}
        if item.get("tainted") is True:
            entry["tainted"] = True
        out.append(entry)
    return tuple(out)


def _check_count(entries: int) -> None:
    if entries > MAX_HISTORY_ENTRIES:
        raise RequestInvalid(
            Phrase.of("history has more than {limit} entries.", limit=MAX_HISTORY_ENTRIES),
            field="history",
            hint="Start a new conversation or reset this one.",
        )


def _check_history(history: tuple[HistoryEntry, ...]) -> None:
    _check_count(len(history))
    for number, entry in enumerate(history):
        if entry.get("role") not in ("user", "assistant") or not isinstance(entry.get("text"), str):
            where = f"history[{number}]"
            raise RequestInvalid(
                Phrase.of("{where} needs role user/assistant and a text.", where=where),
                field=where,
            )
    size = len(json.dumps(list(history), ensure_ascii=False).encode("utf-8"))
    if size > MAX_HISTORY_BYTES:
        raise RequestInvalid(
            "history is larger than 256 KB.",
            field="history",
            hint="Start a new conversation or reset this one.",
        )


def _context(value: Any) -> RecordContext | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or set(value) - CONTEXT_KEYS:
        raise RequestInvalid(
            "context must be {section_tipo, section_id, mode?, summary?}.", field="context"
        )
    tipo, sid = value.get("section_tipo"), value.get("section_id")
    if not isinstance(tipo, str) or not tipo or isinstance(sid, bool) or not isinstance(sid, int):
        raise RequestInvalid(
            "context needs a section_tipo and an integer section_id.", field="context"
        )
    summary = value.get("summary") or ""
    if not isinstance(summary, str):
        raise RequestInvalid(_SUMMARY_LIMIT, field="context.summary")
    return RecordContext(tipo, sid, summary, str(value.get("mode") or "view"))


_SUMMARY_LIMIT = Phrase.of(
    "context.summary must be text of at most {limit:,} characters.",
    limit=MAX_CONTEXT_SUMMARY_CHARS,
)


def _check_context(context: RecordContext | None) -> None:
    if context is None:
        return
    check_id(context.section_id, "context.section_id")
    if len(context.summary) > MAX_CONTEXT_SUMMARY_CHARS:
        raise RequestInvalid(_SUMMARY_LIMIT, field="context.summary")


def _images(value: Any) -> tuple[Image, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise RequestInvalid("images must be a list of {mime, data}.", field="images")
    if len(value) > MAX_IMAGES:
        raise RequestInvalid(
            Phrase.of("At most {limit} images per request.", limit=MAX_IMAGES), field="images"
        )
    return tuple(_image(item, number) for number, item in enumerate(value))


def _image(item: Any, number: int) -> Image:
    where = f"images[{number}]"
    if not isinstance(item, Mapping):
        raise RequestInvalid(Phrase.of("{where} must be {{mime, data}}.", where=where), field=where)
    mime, data = item.get("mime"), item.get("data")
    if not isinstance(mime, str):
        raise RequestInvalid(
            Phrase.of("{where} needs an image/* mime type.", where=where), field=where
        )
    if isinstance(data, str):
        try:
            data = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError) as error:
            raise RequestInvalid(
                Phrase.of("{where}: data is not base64.", where=where), field=where
            ) from error
    if not isinstance(data, bytes):
        raise RequestInvalid(Phrase.of("{where} has no image data.", where=where), field=where)
    return Image(mime, data)


def _check_images(images: tuple[Image, ...]) -> tuple[tuple[str, bytes], ...]:
    if len(images) > MAX_IMAGES:
        raise RequestInvalid(
            Phrase.of("At most {limit} images per request.", limit=MAX_IMAGES), field="images"
        )
    for number, image in enumerate(images):
        where = f"images[{number}]"
        if not image.mime.startswith("image/"):
            raise RequestInvalid(
                Phrase.of("{where} needs an image/* mime type.", where=where), field=where
            )
        if not image.data:
            raise RequestInvalid(Phrase.of("{where} has no image data.", where=where), field=where)
        if len(image.data) > MAX_IMAGE_BYTES:
            raise RequestInvalid(
                Phrase.of("{where} is larger than 5 MiB.", where=where), field=where
            )
    if sum(len(image.data) for image in images) > MAX_IMAGES_TOTAL_BYTES:
        raise RequestInvalid("The images add up to more than 15 MiB.", field="images")
    return tuple((image.mime, image.data) for image in images)


def _mode(value: Any) -> Mode:
    if value in (None, "read"):
        return "read"
    if value != "write":
        raise RequestInvalid('mode must be "read" or "write".', field="mode")
    return "write"


def _effort_text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise RequestInvalid("effort must be the name of an effort.", field="effort")


def _entry(catalog: Catalog | ArxiuError | None, model: str | None) -> ModelEntry:
    if isinstance(catalog, ArxiuError):
        raise catalog
    if catalog is None or len(catalog) == 0:
        raise ModelError(
            "ai.models_unconfigured",
            "No model is configured, so the assistant is unavailable.",
            hint="Add a model with `arxiu models add`.",
        )
    if model is not None and not model:
        raise RequestInvalid("model must be a model id.", field="model")
    return catalog.get(model)


def _effort(value: str | None, entry: ModelEntry) -> str | None:
    if value is None or value == "default":
        return None
    if value not in entry.efforts:
        offered = ", ".join(["default", *entry.efforts])
        raise ModelError(
            "ai.effort_not_offered",
            Phrase.of(
                'The model "{model}" does not offer the effort {effort!r}.',
                model=entry.id,
                effort=value,
            ),
            hint=Phrase.of("Pick one of: {efforts}.", efforts=offered),
            category="input",
            details={"model": entry.id, "efforts": ["default", *entry.efforts]},
        )
    return value
