"""The contract between tools, the registry, the egress gate and change plans.

A tool is a typed function with a docstring. The registry derives its JSON schema and a human
summary; each tool declares its egress class:

* ``structure`` — describes the archive's shape only (sections, fields); always allowed;
* ``content`` — returns record content; gated for external models;
* ``write`` — changes the archive; only ever executed by applying a confirmed change plan.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, Required, TypedDict, TypeVar

from app.core.archive.model import AuditInfo, RecordKey
from app.core.errors import ErrorWords

if TYPE_CHECKING:
    from app.core.archive.store import Archive
    from app.core.index.hits import Searcher

EgressClass = Literal["structure", "content", "write"]
EGRESS_CLASSES: tuple[EgressClass, ...] = ("structure", "content", "write")
F = TypeVar("F", bound=Callable[..., Any])
Summary = str | Callable[[Mapping[str, object]], tuple[str, dict[str, str]]]
"""A summary template (English; see :mod:`~app.core.tools.summary_words`) filled in from the
call's arguments, or a function of the arguments that returns the template and the values of
its slots that are not arguments."""
"""A tool's summary: a template formatted with the call's arguments, or a function of them."""


class ErrorPayload(TypedDict, total=False):
    """A failed call's error as the model sees it."""

    code: Required[str | None]
    message: Required[str]
    hint: str
    details: dict[str, Any]


class ModelPayload(TypedDict, total=False):
    """What the model sees of a call: ``{ok, data}`` or ``{ok, error}``."""

    ok: Required[bool]
    data: object
    error: ErrorPayload


@dataclass
class ToolContext:
    """What a tool may use: the archive, the index, the run's language and model."""

    archive: Archive
    searcher: Searcher | None = None
    lang: str = "lg-eng"
    model_id: str = ""
    egress: Literal["local", "external"] = "local"
    exclude_restricted: bool = False
    """Set for runs on external models: searches drop restricted chunks *inside* the index."""
    audit: AuditInfo = field(default_factory=AuditInfo)
    """For write tools run by a plan's apply: ``plan_hash``, ``op_id``, ``model``, ``egress``."""


@dataclass(frozen=True)
class ToolResult:
    """The outcome of one tool call.

    ``data`` goes back to the model as JSON. ``records`` and ``sections`` list every record and
    section the result refers to (hits, portal targets, contributors), so the egress gate can
    check the result end; a tool that cannot list them must not claim ``ok``.
    """

    ok: bool
    data: Any = None
    code: str | None = None
    message: str = ""
    hint: str | None = None
    records: tuple[RecordKey, ...] = ()
    sections: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)
    """For failures: machine-readable extras the model may use (e.g. ``candidates``)."""
    words: ErrorWords | None = field(default=None, compare=False, repr=False)
    """For a failure made of a coded error: its message and hint as raised (the model reads
    the English; a person is told them in their language)."""

    def to_model_payload(self) -> ModelPayload:
        """What the model sees: ``{ok, data}`` or ``{ok, error: {code, message, hint}}``."""
        if self.ok:
            return {"ok": True, "data": self.data}
        error: ErrorPayload = {"code": self.code, "message": self.message}
        if self.hint:
            error["hint"] = self.hint
        if self.details:
            error["details"] = self.details
        return {"ok": False, "error": error}


ToolFunction = Callable[..., Awaitable[ToolResult]]


@dataclass(frozen=True)
class Tool:
    """A registered tool."""

    name: str
    egress: EgressClass
    description: str
    parameters: dict[str, Any]
    function: ToolFunction
    summarize: Callable[[Mapping[str, object], str], str]


@dataclass(frozen=True)
class ToolMeta:
    """What :func:`tool` attaches to a function."""

    egress: EgressClass
    summary: Summary


def tool(egress: EgressClass, summary: Summary) -> Callable[[F], F]:
    """Mark an async function as a tool of class ``egress`` with a summary template.

    The template is formatted with the call's arguments (``"Read {section_tipo}/{section_id}"``);
    a callable gets the arguments and returns the text.
    """

    def mark(fn: F) -> F:
        fn.__arxiu_tool__ = ToolMeta(egress, summary)  # type: ignore[attr-defined]
        return fn

    return mark


def tool_meta(fn: Callable[..., Any]) -> ToolMeta | None:
    """What :func:`tool` attached to ``fn`` (``None`` for an unmarked function)."""
    meta = getattr(fn, "__arxiu_tool__", None)
    return meta if isinstance(meta, ToolMeta) else None


class ToolLookup(Protocol):
    """What checking a call's arguments needs from the registry (write ops' validation)."""

    def get(self, name: str) -> Tool:
        """One registered tool (``mcp.tool_unknown`` when there is none by that name)."""
        ...

    def check_args(self, name: str, args: object) -> dict[str, object]:
        """The arguments checked against the tool's schema (``mcp.invalid_args``)."""
        ...
