"""The records that link to a record, each once: what a record's page lists as "Linked from".

The ``links`` table holds one row per field and target, so :meth:`Archive.links_to` gives a
record that links to another through two fields (an interview's place of recording and its
places mentioned) twice. A relation kept on both sides is a row each way: two agents each
listing the other as related, an agent's "Created" and its fonds' "Creators"; the record at the
other end is then already on the page, among the record's own fields. :func:`linked_from`
reads the links as a page shows them: one :class:`Backlink` per linking record, with every
field it links through (in its section's field order). It leaves out the record itself, the
records it links to (shown in its fields), and, for a record in a hierarchy, its children's
"part of" links (the page lists them under Contents).
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.archive.model import Link, RecordKey
from app.core.archive.store import Archive


@dataclass(frozen=True)
class Backlink:
    """A record linking to the one shown, and the fields (tipos) it links through."""

    source: RecordKey
    field_tipos: tuple[str, ...]


def linked_from(
    archive: Archive, key: RecordKey, children_field: str | None = None
) -> list[Backlink]:
    """The records linking to ``key``, each once, in the order of :meth:`Archive.links_to`
    (by section and id); ``children_field``: the field by which records of ``key``'s own
    section are its children, whose links are left out."""
    own = {link.target for link in archive.links_from(key)}
    fields: dict[RecordKey, list[str]] = {}
    for link in archive.links_to(key):
        if not _shown_elsewhere(link, key, own, children_field):
            fields.setdefault(link.source, []).append(link.field_tipo)
    return [
        Backlink(source, _in_field_order(archive, source.section_tipo, tipos))
        for source, tipos in fields.items()
    ]


def _shown_elsewhere(
    link: Link,
    key: RecordKey,
    own: set[RecordKey],
    children_field: str | None,
) -> bool:
    """Whether the page shows ``link``'s record already: the record itself, one it links to
    in its own fields, or a child listed under Contents."""
    if link.source == key or link.source in own:
        return True
    return link.field_tipo == children_field and link.source.section_tipo == key.section_tipo


def _in_field_order(archive: Archive, section_tipo: str, tipos: list[str]) -> tuple[str, ...]:
    """``tipos`` without repeats, in the order of the section's fields (unknown ones last)."""
    if not archive.has_section(section_tipo):
        return tuple(dict.fromkeys(tipos))
    order = {field.tipo: n for n, field in enumerate(archive.fields(section_tipo))}
    return tuple(sorted(dict.fromkeys(tipos), key=lambda tipo: (order.get(tipo, len(order)), tipo)))
