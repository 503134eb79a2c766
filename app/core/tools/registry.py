"""The tool registry: typed functions in, JSON schemas, summaries and safe calls out.

Tools are declared with :func:`~app.core.tools.base.tool` (in ``base``, so that tool modules
never import the registry), which records the egress class and the summary template;
:meth:`ToolRegistry.register` refuses a function without a class or a docstring. A call is
validated against the derived schema, and any :class:`~app.core.errors.ArxiuError` raised inside a
tool comes back as ``ToolResult(ok=False, ...)`` — a tool failure is a result for the model, not a
crash.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from app.core.archive.ids import check_ids, lone_surrogate_at
from app.core.errors import ArxiuError
from app.core.models.base import ToolSpec
from app.core.phrases import Phrase
from app.core.tools.base import (
    EGRESS_CLASSES,
    EgressClass,
    Summary,
    Tool,
    ToolContext,
    ToolResult,
    tool_meta,
)
from app.core.tools.schema import function_schema, validate
from app.core.tools.summary_words import summary_template

SUMMARY_VALUE_CHARS = 60


class _Shown(dict[str, str]):
    """Arguments rendered short for a summary; unknown names show as ``?``."""

    def __missing__(self, key: str) -> str:
        return "?"


def short(value: Any) -> str:
    """A compact rendering of an argument value for a human summary."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= SUMMARY_VALUE_CHARS else text[: SUMMARY_VALUE_CHARS - 1] + "…"


def make_summarizer(template: Summary) -> Callable[[Mapping[str, object], str], str]:
    """A ``summary(args, lang)`` function from a template string or a callable (whose
    English template, once chosen from the arguments, is put in ``lang`` the same way)."""

    def summarize(args: Mapping[str, object], lang: str) -> str:
        chosen, slots = template(args) if callable(template) else (template, {})
        shown = _Shown({k: short(v) for k, v in args.items()} | slots)
        return summary_template(chosen, lang).format_map(shown)

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
        """Register ``fn`` (marked with :func:`~app.core.tools.base.tool`, or given ``egress``
        and ``summary``).

        Raises:
            TypeError: no egress class, an unknown class, no docstring, a duplicate name, or an
                annotation that has no JSON schema.
        """
        meta = tool_meta(fn)
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
                Phrase.of("There is no tool called {name!r}.", name=name),
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

    def summary(self, name: str, args: Mapping[str, object], lang: str = "lg-eng") -> str:
        """The human summary of a call (for ``tool_use`` events) in ``lang``; unknown tools
        show their name."""
        found = self._tools.get(name)
        if found is None:
            return name
        try:
            return found.summarize(args, lang)
        except (KeyError, IndexError, ValueError, TypeError):
            return name

    # -- calls -------------------------------------------------------------------------------
    def check_args(self, name: str, args: object) -> dict[str, object]:
        """The arguments checked against the tool's schema (digit strings become integers).

        Raises:
            ArxiuError: ``mcp.tool_unknown``, ``mcp.invalid_args`` naming every problem (a
                lone surrogate in a string too), or ``archive.id_out_of_range`` for an id
                SQLite cannot hold.
        """
        found = self.get(name)
        where = lone_surrogate_at(args)
        if where is not None:
            raise ArxiuError(
                "mcp.invalid_args",
                Phrase.of(
                    "Invalid arguments for {name}: {where} holds a lone surrogate, "
                    "which is not text.",
                    name=name,
                    where=where,
                ),
                hint="Send the text as valid Unicode.",
                category="input",
                details={"problems": [f"{where}: lone surrogate"]},
            )
        fixed, problems = validate(args if args is not None else {}, found.parameters)
        check_ids(fixed)
        if problems or not isinstance(fixed, dict):
            raise ArxiuError(
                "mcp.invalid_args",
                Phrase.of(
                    "Invalid arguments for {name}: {problems}",
                    name=name,
                    problems="; ".join(problems[:8]),
                ),
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
                words=exc.words,
            )
        return result


def build_registry() -> ToolRegistry:
    """A registry holding every tool of the assistant (discovery, read, search, write)."""
    from app.core.tools import discovery, read, search, write

    registry = ToolRegistry()
    for module in (discovery, read, search, write):
        for fn in module.TOOLS:
            registry.register(fn)
    return registry
