"""The tool registry: typed functions in, JSON schemas, summaries and safe calls out.

Tools are declared with :func:`tool`, which records the egress class and the summary template;
:meth:`ToolRegistry.register` refuses a function without a class or a docstring. A call is
validated against the derived schema, and any :class:`~app.core.errors.ArxiuError` raised inside a
tool comes back as ``ToolResult(ok=False, ...)`` — a tool failure is a result for the model, not a
crash.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from app.core.errors import ArxiuError
from app.core.models.base import ToolSpec
from app.core.tools.base import EGRESS_CLASSES, EgressClass, Tool, ToolContext, ToolResult
from app.core.tools.schema import function_schema, validate

if TYPE_CHECKING:
    from app.core.archive.store import Archive

F = TypeVar("F", bound=Callable[..., Any])
Summary = str | Callable[[dict[str, Any]], str]

SECTION_KEYS = ("section_tipo", "target_section")
SECTION_LIST_KEYS = ("sections",)
SUMMARY_VALUE_CHARS = 60


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


class _Shown(dict[str, str]):
    """Arguments rendered short for a summary; unknown names show as ``?``."""

    def __missing__(self, key: str) -> str:
        return "?"


def short(value: Any) -> str:
    """A compact rendering of an argument value for a human summary."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= SUMMARY_VALUE_CHARS else text[: SUMMARY_VALUE_CHARS - 1] + "…"


def make_summarizer(template: Summary) -> Callable[[dict[str, Any]], str]:
    """A ``summary(args)`` function from a template string or a callable."""
    if callable(template):
        return template

    def summarize(args: dict[str, Any]) -> str:
        return template.format_map(_Shown({k: short(v) for k, v in args.items()}))

    return summarize


class ToolRegistry:
    """The tools the assistant can call, by name."""

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}

    def register(
        self,
        fn: Callable[..., Any],
        *,
        egress: EgressClass | None = None,
        summary: Summary | None = None,
        name: str | None = None,
    ) -> Tool:
        """Register ``fn`` (marked with :func:`tool`, or given ``egress`` and ``summary``).

        Raises:
            TypeError: no egress class, an unknown class, no docstring, a duplicate name, or an
                annotation that has no JSON schema.
        """
        meta: ToolMeta | None = getattr(fn, "__arxiu_tool__", None)
        tool_name = name or fn.__name__
        egress = egress or (meta.egress if meta else None)
        if egress not in EGRESS_CLASSES:
            raise TypeError(f"tool {tool_name} declares no egress class (got {egress!r})")
        if not (fn.__doc__ or "").strip():
            raise TypeError(f"tool {tool_name} has no docstring to describe it")
        if tool_name in self._tools:
            raise TypeError(f"tool {tool_name} is registered twice")
        description, parameters = function_schema(fn)
        template = summary or (meta.summary if meta else tool_name)
        registered = Tool(
            name=tool_name,
            egress=egress,
            description=description,
            parameters=parameters,
            function=fn,
            summarize=make_summarizer(template),
        )
        self._tools[tool_name] = registered
        return registered

    # -- lookup ------------------------------------------------------------------------------
    def names(self) -> list[str]:
        """Every tool name, in registration order."""
        return list(self._tools)

    def get(self, name: str) -> Tool:
        """One tool (``mcp.tool_unknown`` when there is none by that name)."""
        found = self._tools.get(name)
        if found is None:
            raise ArxiuError(
                "mcp.tool_unknown",
                f"There is no tool called {name!r}.",
                hint="Call one of the tools offered to you.",
                category="input",
            )
        return found

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def tools(self, classes: Iterable[EgressClass] | None = None) -> list[Tool]:
        """The tools of the given egress classes (all when ``None``)."""
        wanted = set(classes) if classes is not None else set(EGRESS_CLASSES)
        return [t for t in self._tools.values() if t.egress in wanted]

    def specs(self, classes: Iterable[EgressClass] | None = None) -> list[ToolSpec]:
        """What the model is offered: name, description, parameters' schema."""
        return [ToolSpec(t.name, t.description, t.parameters) for t in self.tools(classes)]

    def summary(self, name: str, args: dict[str, Any]) -> str:
        """The human summary of a call (for ``tool_use`` events); unknown tools show their name."""
        found = self._tools.get(name)
        if found is None:
            return name
        try:
            return found.summarize(args)
        except (KeyError, IndexError, ValueError, TypeError):
            return name

    # -- calls -------------------------------------------------------------------------------
    def check_args(self, name: str, args: Any) -> dict[str, Any]:
        """The arguments checked against the tool's schema (digit strings become integers).

        Raises:
            ArxiuError: ``mcp.tool_unknown``, or ``mcp.invalid_args`` naming every problem.
        """
        found = self.get(name)
        fixed, problems = validate(args if args is not None else {}, found.parameters)
        if problems:
            raise ArxiuError(
                "mcp.invalid_args",
                f"Invalid arguments for {name}: " + "; ".join(problems[:8]),
                hint="Fix the arguments to match the tool's schema and call it again.",
                category="input",
                details={"problems": problems},
            )
        return dict(fixed)

    async def call(self, name: str, args: Any, ctx: ToolContext) -> ToolResult:
        """Run one tool call; every known error becomes ``ToolResult(ok=False, ...)``."""
        try:
            checked = self.check_args(name, args)
            result: ToolResult = await self._tools[name].function(ctx, **checked)
        except ArxiuError as exc:
            return ToolResult(
                ok=False,
                code=exc.code,
                message=exc.message,
                hint=exc.hint,
                details=dict(exc.details),
            )
        return result

    def sections_named(self, args: Any, archive: Archive | None = None) -> set[str]:
        """Every section tipo named anywhere in a call's arguments, for the egress gate.

        Looks at ``section_tipo`` / ``target_section`` values, ``sections`` lists and filter
        ``path`` lists (sections at even positions: ``[section, field, section, field...]``),
        at any depth; ``{"ref": ...}`` objects (plan references) are skipped. With ``archive``,
        section labels and paths are resolved (labels, relative paths, skipped target sections),
        and a ``field`` (or each of ``fields``) named by tipo or label is resolved in the
        section of the call or object it appears in: a relation adds its target section. What
        does not resolve is returned as written, so that a gate treating unknown sections as
        restricted fails closed.
        """
        collector = _SectionCollector(archive)
        collector.collect(args, None)
        return collector.found


class _SectionCollector:
    """Walks a call's arguments collecting section tipos (see ``sections_named``)."""

    def __init__(self, archive: Archive | None) -> None:
        self.archive = archive
        self.found: set[str] = set()

    def section(self, name: str) -> str:
        """``name`` as a section tipo when the archive resolves it, else as written."""
        if self.archive is None or self.archive.has_section(name):
            return name
        from app.core.tools.resolve import resolve_section

        try:
            return resolve_section(self.archive, name).tipo
        except ArxiuError:
            return name

    def collect(self, value: Any, context: str | None) -> None:
        """Collect from ``value``; ``context`` is the section of the enclosing call or object."""
        if isinstance(value, list):
            for item in value:
                self.collect(item, context)
            return
        if not isinstance(value, dict) or "ref" in value:
            return
        if isinstance(value.get("section_tipo"), str):
            context = self.section(value["section_tipo"])
        for key, item in value.items():
            if key in SECTION_KEYS and isinstance(item, str):
                self.found.add(self.section(item))
            elif key in SECTION_LIST_KEYS and isinstance(item, list):
                self.found.update(self.section(s) for s in item if isinstance(s, str))
            elif key == "path" and isinstance(item, list):
                self.found.update(self.path([str(p) for p in item], context))
            elif key == "field" and isinstance(item, str):
                self.found.update(self.field_target(item, context))
            elif key == "fields" and isinstance(item, list):
                for name in item:
                    if isinstance(name, str):
                        self.found.update(self.field_target(name, context))
            else:
                self.collect(item, context)

    def field_target(self, name: str, context: str | None) -> set[str]:
        """The sections a field named by tipo or label in ``context`` leads to.

        A relation's target section counts as named. Without a known ``context`` section every
        field of the archive carrying that tipo or exact label counts (with its own section).
        What does not resolve is returned as written, so that the gate fails closed.
        """
        if self.archive is None:
            return set()
        if context is None or not self.archive.has_section(context):
            return self.field_anywhere(name)
        from app.core.tools.resolve import resolve_field

        try:
            fld = resolve_field(self.archive, context, name)
        except ArxiuError:
            return {name}  # unresolvable: counts as named (fails closed)
        return {fld.target_section} if fld.target_section else set()

    def field_anywhere(self, name: str) -> set[str]:
        """Owner and target sections of every field named ``name`` (tipo or exact label)."""
        assert self.archive is not None
        from app.core.tools.resolve import fold

        wanted = fold(name)
        found: set[str] = set()
        for fld in self.archive.fields():
            if fld.tipo == name or wanted in {fold(v) for v in fld.labels.values() if v}:
                found.add(fld.section_tipo)
                if fld.target_section:
                    found.add(fld.target_section)
        return found or {name}

    def path(self, path: list[str], context: str | None) -> set[str]:
        """The sections a filter path passes through (relative paths start at ``context``)."""
        if self.archive is None or not path:
            return set(path[0::2])
        from app.core.tools.resolve import names_section, resolve_tipo_path

        if context is not None and not names_section(self.archive, path[0], context):
            path = [context, *path]
        try:
            tipos = resolve_tipo_path(self.archive, path)
        except ArxiuError:
            return set(path)  # unresolvable: everything named counts (fails closed)
        return {t for t in tipos if self.archive.has_section(t)}


def build_registry() -> ToolRegistry:
    """A registry holding every tool of the assistant (discovery, read, search, write)."""
    from app.core.tools import discovery, read, search, write

    registry = ToolRegistry()
    for module in (discovery, read, search, write):
        for fn in module.TOOLS:
            registry.register(fn)
    return registry
