"""Which sections a tool call names: what the egress gate checks before a content call runs.

A call names a section through ``section_tipo`` / ``target_section`` values, ``sections`` lists,
filter ``path`` lists and ``field`` / ``fields`` names (a relation counts for its target), at
any depth. What does not resolve is returned as written, so that a gate treating unknown
sections as restricted fails closed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.core.errors import ArxiuError
from app.core.tools.resolve import (
    fold,
    names_section,
    resolve_field,
    resolve_section,
    resolve_tipo_path,
)

if TYPE_CHECKING:
    from app.core.archive.store import Archive

SECTION_KEYS = ("section_tipo", "target_section")
SECTION_LIST_KEYS = ("sections",)


def sections_named(args: Any, archive: Archive | None = None) -> set[str]:
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
    collector = SectionCollector(archive)
    collector.collect(args, None)
    return collector.found


class SectionCollector:
    """Walks a call's arguments collecting section tipos (see :func:`sections_named`)."""

    def __init__(self, archive: Archive | None) -> None:
        self.archive = archive
        self.found: set[str] = set()

    def section(self, name: str) -> str:
        """``name`` as a section tipo when the archive resolves it, else as written."""
        if self.archive is None or self.archive.has_section(name):
            return name
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
        try:
            fld = resolve_field(self.archive, context, name)
        except ArxiuError:
            return {name}  # unresolvable: counts as named (fails closed)
        return {fld.target_section} if fld.target_section else set()

    def field_anywhere(self, name: str) -> set[str]:
        """Owner and target sections of every field named ``name`` (tipo or exact label)."""
        assert self.archive is not None
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
        if context is not None and not names_section(self.archive, path[0], context):
            path = [context, *path]
        try:
            tipos = resolve_tipo_path(self.archive, path)
        except ArxiuError:
            return set(path)  # unresolvable: everything named counts (fails closed)
        return {t for t in tipos if self.archive.has_section(t)}
