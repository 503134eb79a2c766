"""Discovery tools (egress class ``structure``): sections and fields, never records."""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from app.core.archive.model import Field, Section
from app.core.errors import ToolError
from app.core.phrases import Phrase
from app.core.tools.base import ToolContext, ToolResult, tool
from app.core.tools.resolve import (
    field_candidates,
    resolve_section,
    resolve_tipo_path,
    section_candidates,
    split_label_path,
)


class SectionInfo(TypedDict):
    """A section as the model sees it."""

    tipo: str
    label: str
    labels: dict[str, str]
    description: str
    restricted: bool
    writable: bool
    label_field: str | None


class FieldInfo(TypedDict):
    """A field as the model sees it (a relation's target section, and its label if known)."""

    tipo: str
    section_tipo: str
    label: str
    labels: dict[str, str]
    kind: str
    multilingual: bool
    target_section: NotRequired[str]
    target_label: NotRequired[str]


def section_info(section: Section, lang: str) -> SectionInfo:
    """A section as the model sees it."""
    return {
        "tipo": section.tipo,
        "label": section.label(lang),
        "labels": section.labels,
        "description": section.description,
        "restricted": section.restricted,
        "writable": section.writable,
        "label_field": section.label_field,
    }


def field_info(ctx: ToolContext, fld: Field) -> FieldInfo:
    """A field as the model sees it (with its relation target's label)."""
    out: FieldInfo = {
        "tipo": fld.tipo,
        "section_tipo": fld.section_tipo,
        "label": fld.label(ctx.lang),
        "labels": fld.labels,
        "kind": fld.kind,
        "multilingual": fld.multilingual,
    }
    if fld.target_section:
        out["target_section"] = fld.target_section
        if ctx.archive.has_section(fld.target_section):
            out["target_label"] = ctx.archive.section(fld.target_section).label(ctx.lang)
    return out


@tool("structure", "List the archive's sections")
async def dedalo_list_sections(ctx: ToolContext) -> ToolResult:
    """List every section (kind of record) of the archive with its tipo, labels and flags.

    Call this first when you do not know which section holds what.
    """
    sections = ctx.archive.sections()
    data = [section_info(s, ctx.lang) for s in sections]
    return ToolResult(ok=True, data={"sections": data}, sections=tuple(s.tipo for s in sections))


@tool("structure", "Describe section {section_tipo}")
async def dedalo_describe_section(ctx: ToolContext, section_tipo: str) -> ToolResult:
    """Describe one section: its fields with tipos, labels, kinds and relation targets.

    Args:
        section_tipo: the section's tipo (e.g. oh1) or its exact label.
    """
    section = resolve_section(ctx.archive, section_tipo, ctx.lang)
    fields = [field_info(ctx, f) for f in ctx.archive.fields(section.tipo)]
    data = {**section_info(section, ctx.lang), "fields": fields}
    targets = {f["target_section"] for f in fields if "target_section" in f}
    return ToolResult(ok=True, data=data, sections=(section.tipo, *sorted(targets)))


@tool("structure", "Resolve “{name}”")
async def dedalo_resolve(
    ctx: ToolContext,
    name: str,
    kind: Literal["any", "section", "field"] = "any",
    section_tipo: str | None = None,
) -> ToolResult:
    """Find the sections or fields a name or label may mean; returns candidates, never a guess.

    Matches tipos and labels in every language, ignoring case and accents; exact matches come
    first, then partial and similar ones. Pick a candidate by its tipo.

    Args:
        name: the name, label or tipo to look up (e.g. "People", "informant").
        kind: look only for sections, only for fields, or for both.
        section_tipo: when looking for fields, only those of this section.
    """
    candidates = []
    if kind in ("any", "section"):
        candidates += section_candidates(ctx.archive, name, ctx.lang)
    if kind in ("any", "field"):
        within = resolve_section(ctx.archive, section_tipo, ctx.lang).tipo if section_tipo else None
        candidates += field_candidates(ctx.archive, name, within, ctx.lang)
    exact = [c for c in candidates if c.match in ("tipo", "label")]
    data = {
        "name": name,
        "candidates": [c.to_dict() for c in candidates],
        "unique": len(exact) == 1,
    }
    sections = {c.section_tipo or c.tipo for c in candidates}
    return ToolResult(ok=True, data=data, sections=tuple(sorted(sections)))


@tool("structure", "Resolve the path “{path}”")
async def dedalo_resolve_path(ctx: ToolContext, path: str) -> ToolResult:
    """Turn a label path such as "Oral history > Informant > Name" into a tipo path.

    The first step is a section, then fields; a relation (portal) field leads into its target
    section, whose tipo appears in the result (["oh1", "oh24", "rsc197", "rsc85"]). Use the
    result as a filter path in dedalo_search_records.

    Args:
        path: section and field labels (or tipos) separated by ">".
    """
    parts = split_label_path(path)
    tipos = resolve_tipo_path(ctx.archive, parts, ctx.lang)
    steps = []
    for position, tipo in enumerate(tipos):
        node = ctx.archive.section(tipo) if position % 2 == 0 else ctx.archive.field(tipo)
        steps.append(
            {
                "tipo": tipo,
                "kind": "section" if position % 2 == 0 else "field",
                "label": node.label(ctx.lang),
            }
        )
    data = {"path": tipos, "steps": steps}
    return ToolResult(ok=True, data=data, sections=tuple(sorted(set(tipos[0::2]))))


@tool("structure", "Describe {tipo}")
async def dedalo_describe_node(ctx: ToolContext, tipo: str) -> ToolResult:
    """Describe one node of the archive's structure: a section or a field, by tipo.

    Args:
        tipo: a section tipo (e.g. oh1) or a field tipo (e.g. oh24).
    """
    archive = ctx.archive
    if archive.has_section(tipo):
        section = archive.section(tipo)
        data = {"node": "section", **section_info(section, ctx.lang)}
        data["fields"] = [f.tipo for f in archive.fields(tipo)]
        return ToolResult(ok=True, data=data, sections=(tipo,))
    matches = [f for f in archive.fields() if f.tipo == tipo]
    if not matches:
        raise ToolError(
            "mcp.node_unknown",
            Phrase.of("There is no section or field with tipo {tipo!r}.", tipo=tipo),
            hint="Use dedalo_resolve to find a tipo from a name.",
        )
    fld = matches[0]
    data = {"node": "field", **field_info(ctx, fld)}
    sections = tuple(s for s in (fld.section_tipo, fld.target_section) if s)
    return ToolResult(ok=True, data=data, sections=sections)


TOOLS = (
    dedalo_list_sections,
    dedalo_describe_section,
    dedalo_resolve,
    dedalo_resolve_path,
    dedalo_describe_node,
)
