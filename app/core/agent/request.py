"""The chat request ``{question, model?, history?, context?, images?, mode?, effort?}``.

:func:`validate_request` checks a request completely *before* anything streams and raises a
coded error: ``request.invalid`` (shape and limits), ``ai.models_unconfigured`` (no catalog),
``ai.model_unknown``, ``ai.model_no_vision``, ``ai.model_cannot_plan`` (write mode on a
model that does not call tools), ``ai.effort_not_offered`` and
``mcp.write_disabled`` (write mode while writes are off). A catalog that failed to load is
passed in as its error and re-raised (``ai.model_catalog_invalid``).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from app.core.archive.ids import check_id, lone_surrogate_at
from app.core.errors import ArxiuError, ModelError

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

    def __init__(self, message: str, *, field: str, hint: str | None = None) -> None:
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


@dataclass(frozen=True)
class ChatRequest:
    """A validated request, bound to its catalog entry."""

    question: str
    entry: ModelEntry
    history: tuple[dict[str, Any], ...] = ()
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
) -> ChatRequest:
    """Check ``raw`` completely and bind it to a catalog entry.

    Raises:
        ArxiuError: the first problem found (see the module docstring for the codes).
    """
    if not isinstance(raw, Mapping):
        raise RequestInvalid("The request must be an object.", field="")
    unknown = sorted(set(raw) - REQUEST_KEYS)
    if unknown:
        raise RequestInvalid(f"Unknown request field {unknown[0]!r}.", field=unknown[0])
    where = lone_surrogate_at(dict(raw))
    if where is not None:  # no provider, index or log could take it
        raise RequestInvalid(
            f"{where} holds a lone surrogate, which is not text.",
            field=where,
            hint="Send the text as valid Unicode.",
        )
    question = _question(raw.get("question"))
    history = _history(raw.get("history"))
    context = _context(raw.get("context"))
    images = _images(raw.get("images"))
    mode = _mode(raw.get("mode"), write_allowed)
    entry = _entry(catalog, raw.get("model"))
    if images and not entry.vision:
        raise ModelError(
            "ai.model_no_vision",
            f'The model "{entry.id}" cannot read images.',
            hint="Pick a model marked as vision-capable, or remove the images.",
            category="input",
            details={"model": entry.id},
        )
    if mode == "write" and not entry.supports_tools:
        raise ModelError(
            "ai.model_cannot_plan",
            f'The model "{entry.id}" cannot propose changes: it does not call tools.',
            hint="Write mode needs a model that calls tools (an OpenAI-compatible server such "
            "as Ollama, or Anthropic); add one with `arxiu models add`.",
            category="input",
            details={"model": entry.id},
        )
    effort = _effort(raw.get("effort"), entry)
    return ChatRequest(question, entry, history, context, images, mode, effort)


def _question(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise RequestInvalid("The question is missing.", field="question")
    if len(value) > MAX_QUESTION_CHARS:
        raise RequestInvalid(
            f"The question is longer than {MAX_QUESTION_CHARS:,} characters.",
            field="question",
            hint="Shorten the question.",
        )
    return value


def _history(value: Any) -> tuple[dict[str, Any], ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise RequestInvalid("history must be a list of {role, text}.", field="history")
    if len(value) > MAX_HISTORY_ENTRIES:
        raise RequestInvalid(
            f"history has more than {MAX_HISTORY_ENTRIES} entries.",
            field="history",
            hint="Start a new conversation or reset this one.",
        )
    out = []
    for number, item in enumerate(value):
        where = f"history[{number}]"
        if not isinstance(item, Mapping) or set(item) - HISTORY_KEYS:
            raise RequestInvalid(f"{where} must be {{role, text}} only (text-only).", field=where)
        if item.get("role") not in ("user", "assistant") or not isinstance(item.get("text"), str):
            raise RequestInvalid(f"{where} needs role user/assistant and a text.", field=where)
        entry: dict[str, Any] = {"role": item["role"], "text": item["text"]}
        if item.get("tainted") is True:
            entry["tainted"] = True
        out.append(entry)
    size = len(json.dumps(out, ensure_ascii=False).encode("utf-8"))
    if size > MAX_HISTORY_BYTES:
        raise RequestInvalid(
            "history is larger than 256 KB.",
            field="history",
            hint="Start a new conversation or reset this one.",
        )
    return tuple(out)


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
    check_id(sid, "context.section_id")
    summary = value.get("summary") or ""
    if not isinstance(summary, str) or len(summary) > MAX_CONTEXT_SUMMARY_CHARS:
        raise RequestInvalid(
            f"context.summary must be text of at most {MAX_CONTEXT_SUMMARY_CHARS:,} characters.",
            field="context.summary",
        )
    return RecordContext(tipo, sid, summary, str(value.get("mode") or "view"))


def _images(value: Any) -> tuple[tuple[str, bytes], ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise RequestInvalid("images must be a list of {mime, data}.", field="images")
    if len(value) > MAX_IMAGES:
        raise RequestInvalid(f"At most {MAX_IMAGES} images per request.", field="images")
    out = [_image(item, number) for number, item in enumerate(value)]
    if sum(len(data) for _, data in out) > MAX_IMAGES_TOTAL_BYTES:
        raise RequestInvalid("The images add up to more than 15 MiB.", field="images")
    return tuple(out)


def _image(item: Any, number: int) -> tuple[str, bytes]:
    where = f"images[{number}]"
    if not isinstance(item, Mapping):
        raise RequestInvalid(f"{where} must be {{mime, data}}.", field=where)
    mime, data = item.get("mime"), item.get("data")
    if not isinstance(mime, str) or not mime.startswith("image/"):
        raise RequestInvalid(f"{where} needs an image/* mime type.", field=where)
    if isinstance(data, str):
        try:
            data = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError) as error:
            raise RequestInvalid(f"{where}: data is not base64.", field=where) from error
    if not isinstance(data, bytes) or not data:
        raise RequestInvalid(f"{where} has no image data.", field=where)
    if len(data) > MAX_IMAGE_BYTES:
        raise RequestInvalid(f"{where} is larger than 5 MiB.", field=where)
    return mime, data


def _mode(value: Any, write_allowed: bool) -> Mode:
    if value in (None, "read"):
        return "read"
    if value != "write":
        raise RequestInvalid('mode must be "read" or "write".', field="mode")
    if not write_allowed:
        raise ArxiuError(
            "mcp.write_disabled",
            "Write mode is turned off for this archive.",
            hint="Turn on write mode in the settings, or ask in read mode.",
            category="permission",
        )
    return "write"


def _entry(catalog: Catalog | ArxiuError | None, model: Any) -> ModelEntry:
    if isinstance(catalog, ArxiuError):
        raise catalog
    if catalog is None or len(catalog) == 0:
        raise ModelError(
            "ai.models_unconfigured",
            "No model is configured, so the assistant is unavailable.",
            hint="Add a model with `arxiu models add`.",
        )
    if model is not None and (not isinstance(model, str) or not model):
        raise RequestInvalid("model must be a model id.", field="model")
    return catalog.get(model)


def _effort(value: Any, entry: ModelEntry) -> str | None:
    if value is None or value == "default":
        return None
    if not isinstance(value, str) or value not in entry.efforts:
        offered = ", ".join(["default", *entry.efforts])
        raise ModelError(
            "ai.effort_not_offered",
            f'The model "{entry.id}" does not offer the effort {value!r}.',
            hint=f"Pick one of: {offered}.",
            category="input",
            details={"model": entry.id, "efforts": ["default", *entry.efforts]},
        )
    return value
