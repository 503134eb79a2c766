"""Typed values of the archive: sections, fields, records, links, media."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypedDict

FIELD_KINDS = (
    "text",
    "rich_text",
    "transcription",
    "date",
    "number",
    "geo",
    "iri",
    "relation",
    "media",
)
"""Kinds of field (Dédalo components) that the archive knows."""

NEUTRAL_LANG = "lg-nolan"
"""Language code of language-neutral values (dates, numbers, relations, media)."""

PREFERRED_LANGS = ("lg-eng", "lg-cat", "lg-spa")


class Locator(TypedDict):
    """A record's identity as Dédalo writes it: a relation's value, a tool's target.

    Args:
        section_tipo: the record's section tipo.
        section_id: the record's id within its section.
    """

    section_tipo: str
    section_id: int


class AuditInfo(TypedDict, total=False):
    """Who and what a write's audit row names (each key optional; an absent one is NULL).

    ``plan_hash``, ``plan_id`` and ``op_id``: the confirmed change plan and its op that made
    the write; ``model`` and ``egress``: the model that proposed it and its egress class;
    ``actor``: who applied it (``assistant``, an importer's name...).
    """

    plan_hash: str
    plan_id: str | None
    op_id: str
    model: str
    egress: str
    actor: str


class AuditRow(TypedDict):
    """One row of the append-only ``audit`` table, ``before`` and ``after`` decoded from JSON
    (the changed fields' items, or ``None``)."""

    id: int
    at: str
    action: str
    section_tipo: str | None
    section_id: int | None
    plan_hash: str | None
    op_id: str | None
    before: object
    after: object
    model: str | None
    egress: str | None
    actor: str | None
    plan_id: str | None


@dataclass(frozen=True, order=True)
class RecordKey:
    """A record's identity: ``(section_tipo, section_id)``."""

    section_tipo: str
    section_id: int

    def __str__(self) -> str:
        return f"{self.section_tipo}/{self.section_id}"

    def to_locator(self) -> Locator:
        """The Dédalo locator form ``{section_tipo, section_id}``."""
        return {"section_tipo": self.section_tipo, "section_id": self.section_id}

    @classmethod
    def parse(cls, text: str) -> RecordKey:
        """Parse ``tipo/id`` (raises ``ValueError`` on anything else)."""
        tipo, _, sid = text.strip().partition("/")
        if not tipo or not sid.isdigit():
            raise ValueError(f"not a record key: {text!r} (expected SECTION/ID)")
        return cls(tipo, int(sid))


@dataclass(frozen=True)
class Section:
    """A kind of record, e.g. ``oh1`` oral histories."""

    tipo: str
    labels: dict[str, str]
    description: str = ""
    restricted: bool = False
    writable: bool = False
    label_field: str | None = None

    def label(self, lang: str = "lg-eng") -> str:
        """The label in ``lang`` or the best available one."""
        return pick_label(self.labels, lang) or self.tipo


@dataclass(frozen=True)
class Field:
    """A field (component) of a section."""

    tipo: str
    section_tipo: str
    labels: dict[str, str]
    kind: str = "text"
    multilingual: bool = False
    target_section: str | None = None
    position: int = 0

    def label(self, lang: str = "lg-eng") -> str:
        """The label in ``lang`` or the best available one."""
        return pick_label(self.labels, lang) or self.tipo


@dataclass(frozen=True)
class Record:
    """A record with its values per field.

    ``values`` maps a field tipo to a list of items ``{"id", "lang", "value"}``; a relation's
    value is a locator ``{"section_tipo", "section_id"}``.
    """

    section_tipo: str
    section_id: int
    values: dict[str, list[dict[str, Any]]]
    version: int = 1
    restricted: bool | None = None
    created_at: str = ""
    updated_at: str = ""

    @property
    def key(self) -> RecordKey:
        """This record's key."""
        return RecordKey(self.section_tipo, self.section_id)

    def items(self, field_tipo: str) -> list[dict[str, Any]]:
        """The items of one field (empty when unset)."""
        return list(self.values.get(field_tipo, []))

    def text(self, field_tipo: str, lang: str = "lg-eng") -> str | None:
        """The field's value in ``lang`` (or the best available language) as a string.

        Of several items in one language the first non-empty one is the value (a component's
        first ``unittitle``, a record's first title), as the items are stored in order.
        """
        items = self.values.get(field_tipo) or []
        if not items:
            return None
        if len(items) == 1:  # whatever its language, the choice below would take it
            return str(items[0].get("value"))
        by_lang: dict[str, Any] = {}
        for item in items:
            value = item.get("value")
            if value is not None and value != "":
                by_lang.setdefault(str(item.get("lang")), value)
        for candidate in (lang, NEUTRAL_LANG, *PREFERRED_LANGS):
            if candidate in by_lang:
                return str(by_lang[candidate])
        return str(items[0].get("value"))


@dataclass(frozen=True)
class Link:
    """A relation from one record's field to another record."""

    source: RecordKey
    field_tipo: str
    target: RecordKey


@dataclass(frozen=True)
class Media:
    """A media file stored beside the archive database."""

    id: int
    key: RecordKey
    field_tipo: str
    path: str
    mime: str
    size: int
    sha256: str
    width: int | None = None
    height: int | None = None
    duration_s: float | None = None
    thumbnail: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def pick_label(labels: dict[str, str], lang: str = "lg-eng") -> str | None:
    """The label in ``lang``, else English, Catalan, Spanish, else any."""
    for candidate in (lang, *PREFERRED_LANGS):
        if labels.get(candidate):
            return labels[candidate]
    return next((v for v in labels.values() if v), None)
