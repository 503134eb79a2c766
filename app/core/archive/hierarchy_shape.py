"""Which fields make a section an archival hierarchy (no archive access: definitions only).

A section is hierarchical when one of its relation fields targets the section itself and says
it names the parent: EAD's ``ead1`` "part of", or a table imported with a ``parent`` column. A
relation among records of one section that names no parent ("related agents", "related
people") makes no hierarchy. :func:`shape_of` finds that field, the order field (a number
field labelled "order"), and the fields that hold a reference code, a level, the dates and the
container, from the field definitions and from the column roles that table imports saved (the
JSON mappings under :data:`TABLE_LAYOUTS` in the archive's meta). Used by
:mod:`app.core.archive.hierarchy` and by the archive's labels, which lead with the reference code.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from app.core.archive.model import Field, Section

TABLE_LAYOUTS = "import.csv.layout."
"""Where table imports keep their column mappings (``tabular``: role and field per column)."""

PARENT_WORDS = frozenset(
    {"part of", "parent", "is part of", "part de", "parte de", "forma part de", "forma parte de"}
)
ORDER_WORDS = frozenset({"order", "ordre", "orden", "sequence", "position"})
REFERENCE_WORDS = frozenset(
    {"reference code", "identifier", "unitid", "codi de referencia", "codigo de referencia"}
)
LEVEL_WORDS = frozenset(
    {"level", "level of description", "nivell", "nivel", "nivel de descripcion"}
)
DATE_WORDS = frozenset({"dates", "date", "date(s)", "data", "fecha", "fechas"})
CONTAINER_WORDS = frozenset({"container", "contenidor", "contenedor", "box", "caixa", "caja"})


@dataclass(frozen=True)
class Hierarchy:
    """The fields that make a section a hierarchy."""

    section: str
    parent_field: str
    """The relation field naming the parent record (its target is ``section``)."""
    order_field: str | None = None
    """A number field with the position among siblings, if the section has one."""
    reference_field: str | None = None
    level_field: str | None = None
    label_field: str | None = None
    """The section's label field (a node's label without a query per record)."""
    date_field: str | None = None
    """A text field with the dates as shown (EAD's ``unitdate``, a table's date column)."""
    container_field: str | None = None
    """A text field with the box or folder (EAD's ``container``)."""


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return " ".join("".join(c for c in decomposed if not unicodedata.combining(c)).lower().split())


def _named(field: Field, words: frozenset[str]) -> bool:
    return any(_fold(label) in words for label in field.labels.values() if label)


def layout_columns(layouts: Iterable[str], section: str) -> list[tuple[str, str, str]]:
    """``(column, role, field tipo)`` of each column that makes a field, from the saved table
    mappings (JSON texts) for ``section``, in their order."""
    found: list[tuple[str, str, str]] = []
    for text in layouts:
        try:
            data: Any = json.loads(text)
        except ValueError:
            continue
        if not isinstance(data, dict) or data.get("section") != section:
            continue
        for column in data.get("columns") or []:
            if not isinstance(column, dict) or not isinstance(column.get("field"), str):
                continue
            found.append((str(column.get("column")), str(column.get("role")), column["field"]))
    return found


def layout_roles(layouts: Iterable[str], section: str) -> dict[str, str]:
    """``role → field tipo`` from the saved table mappings (JSON texts) for ``section``."""
    roles: dict[str, str] = {}
    for _, role, tipo in layout_columns(layouts, section):
        roles.setdefault(role, tipo)
    return roles


def shape_of(section: Section, fields: list[Field], roles: dict[str, str]) -> Hierarchy | None:
    """The hierarchy fields of ``section`` (with its ``fields``), or ``None`` when it is not one."""
    tipo = section.tipo
    own = [f for f in fields if f.kind == "relation" and f.target_section == tipo]
    if not own:
        return None
    by_tipo = {f.tipo: f for f in fields}
    parent = by_tipo.get(roles.get("parent", "")) or next(
        (f for f in own if _named(f, PARENT_WORDS)), None
    )
    if parent is None:  # "related agents", "see also": links among equals, not a tree
        return None

    def find(role: str, words: frozenset[str], kinds: tuple[str, ...]) -> str | None:
        chosen = by_tipo.get(roles.get(role, ""))
        if chosen is None:
            chosen = next((f for f in fields if f.kind in kinds and _named(f, words)), None)
        return chosen.tipo if chosen is not None else None

    return Hierarchy(
        tipo,
        parent.tipo,
        order_field=find("order", ORDER_WORDS, ("number",)),
        reference_field=find("identifier", REFERENCE_WORDS, ("text",)),
        level_field=find("level", LEVEL_WORDS, ("text",)),
        label_field=section.label_field,
        date_field=find("date", DATE_WORDS, ("text",)),
        container_field=find("container", CONTAINER_WORDS, ("text",)),
    )


def lead_with_code(title: str, code: str | None) -> str:
    """A unit's label as archivists cite it: ``572AP/1 · Copie de 157 lettres…`` (the title
    alone when there is no code or the title already holds it; the code when there is no
    title)."""
    if title and code and code not in title:
        return f"{code} · {title}"
    return title or code or ""
