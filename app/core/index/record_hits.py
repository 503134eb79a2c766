"""Search results by record: each record once, with its title, section, date, languages and
the passages that matched, an exact title or name first.

The search ranks chunks; a person reads records. :func:`search_records` asks the searcher for
its ranking *by record* (:meth:`~app.core.index.hits.Searcher.search` with
``group_by_record``: a record scored by how well its fields agree) and for the chunk ranking
beneath it, and gives one :class:`RecordHit` per record:

* the records whose title or code equals the query (:mod:`app.core.index.exact_names`) come
  first, even one the ranking missed (``Barcino``: the mint of that name above the mints that
  mention it);
* each record's passages are its matching chunks, the one worth reading first
  (:mod:`app.core.index.hit_passages`): real text with the query's words marked, not its
  identifiers nor its title again, nor the trail its metadata chunk starts with (the titles
  above it, :mod:`app.core.index.chunk_context`: the row's ``within`` says where it sits);
* title and section are in the person's language, the date is the record's first date field
  (else a year-numbered field: a coin's "Date from", a concept's "Start year");
* a record found through a heading it links to rather than its own words
  (:mod:`app.core.index.heading_links`) says which, and in what field (``via``: "Subjects:
  Chemical warfare"), so that the row says why it is there.

It reads the index through :func:`~app.core.index.record_reads.record_reads`, so a folder
archive and a shared one (PostgreSQL) give the same list.

The desktop app's results view and ``arxiu search`` both show this list, so the two agree; the
assistant's search tool keeps its own per-chunk output (:mod:`app.core.tools.search`).
:mod:`app.core.index.hit_order` filters, sorts and groups it by section.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from app.core.archive import language
from app.core.archive.hierarchy import MAX_DEPTH, breadcrumbs, parent_of
from app.core.archive.lexemes import GATHERED
from app.core.archive.model import Field, Record, RecordKey
from app.core.archive.records import locators
from app.core.archive.store import Archive
from app.core.index.chunk_context import ELIDED, SEPARATOR, archive_trails
from app.core.index.exact_names import exact_names, titles
from app.core.index.hit_passages import HitPassage, Span, choose, marks, query_words
from app.core.index.hits import Searcher, SearchFilter, SearchHit, SearchMode, Via
from app.core.index.record_reading import record_reads
from app.core.index.record_reads import RecordReads
from app.core.index.search import snippet
from app.core.index.section_shapes import SectionShapes
from app.core.index.storage import ChunkRow
from app.core.json_types import JsonObject

CHUNK_DEPTH = 200
"""Chunks of the per-chunk ranking read for passages (at least; five per record asked)."""
PASSAGES = 3
"""Passages kept per record, best first."""
_YEAR = re.compile(r"^\s*(-?\d{1,4})(?!\d)")
_YEAR_FIELD = re.compile(r"\b(year|date)\b", re.IGNORECASE)


@dataclass(frozen=True)
class ViaHeading:
    """The heading a record was found through, as its row says it: the record's field that
    links to it (``field_label``, in the person's language) and the heading's ``title``, with
    the query's words marked (``title_marks``)."""

    key: RecordKey
    field_label: str
    title: str
    title_marks: tuple[Span, ...] = ()

    def to_dict(self) -> JsonObject:
        """JSON form."""
        return {
            "section_tipo": self.key.section_tipo,
            "section_id": self.key.section_id,
            "field": self.field_label,
            "label": self.title,
        }


@dataclass(frozen=True)
class RecordHit:
    """One record in the results: what a person reads, and why it matched.

    ``rank`` is the record's place by relevance (1 is best) whatever order it is shown in;
    ``exact_name`` the title or code that equals the query (``None``: no exact match);
    ``title_marks`` the spans of the query's words in ``title``. ``passages`` may be empty:
    a record whose chunks say nothing its title does not is shown by its title.
    """

    key: RecordKey
    title: str
    section_label: str
    score: float
    rank: int
    passages: tuple[HitPassage, ...] = ()
    langs: tuple[str, ...] = ()
    date: str | None = None
    exact_name: str | None = None
    title_marks: tuple[Span, ...] = ()
    path: str | None = None
    """The label of the record the record is directly part of, when that is not the top (its
    series or file: ``572AP/2 · Correspondance active``), after ``… › `` where levels between
    the top and it are left out (not for a level titled as the top, EAD's one ``c01``);
    ``None`` for a record directly under its top, or none."""
    within: str | None = None
    """The label of the top record of the record's hierarchy (its fonds: ``572AP/1-572AP/122
    · Fonds Vitet``), for a record that is part of one; ``None`` for a top record or a record
    of a section that is not a hierarchy."""
    via: ViaHeading | None = None
    """The heading the record was found through (not its own words), when the row does not
    already name it as where the record sits."""

    @property
    def exact(self) -> bool:
        """Whether the record's title or code is the query itself."""
        return self.exact_name is not None

    @property
    def passage(self) -> HitPassage | None:
        """The passage to show (the best), if the record has one."""
        return self.passages[0] if self.passages else None

    @property
    def year(self) -> int | None:
        """The year the date starts with (negative: BC), else ``None``."""
        found = _YEAR.match(self.date or "")
        return int(found.group(1)) if found else None

    @property
    def where(self) -> str | None:
        """Where the record sits, as a row says it: its top and the record it is directly
        part of (``572AP/1-572AP/122 · Fonds Vitet › 572AP/2 · Correspondance active``)."""
        return SEPARATOR.join(p for p in (self.within, self.path) if p) or None

    def to_dict(self) -> JsonObject:
        """JSON form (``arxiu search --json``): the best passage's text, timecode and page at
        the top level, as a per-chunk hit has them, and every passage."""
        best = self.passage
        return {
            "section_tipo": self.key.section_tipo,
            "section_id": self.key.section_id,
            "label": self.title,
            "section": self.section_label,
            "date": self.date,
            "within": self.within,
            "path": self.path,
            "record_langs": list(self.langs),
            "score": round(self.score, 6),
            "rank": self.rank,
            "exact": self.exact_name,
            "snippet": best.text if best else "",
            "timecode": best.timecode if best else None,
            "page": best.page if best else None,
            "title_marks": [list(span) for span in self.title_marks],
            "passages": [p.to_dict() for p in self.passages],
            "via": self.via.to_dict() if self.via else None,
        }


def search_records(
    searcher: Searcher,
    archive: Archive,
    query: str,
    *,
    k: int = 30,
    mode: SearchMode = "hybrid",
    filter: SearchFilter | None = None,
    lang: str = "lg-eng",
    query_lang: str | None = None,
) -> list[RecordHit]:
    """The ``k`` best records for ``query``, each once, exact titles first.

    Args:
        searcher: the index.
        archive: the archive it indexes (titles, sections, dates).
        query: what the person typed.
        k: how many records.
        mode: hybrid, dense or lexical.
        filter: restrictions applied inside the search (sections, records, egress).
        lang: the language of titles and section names (``lg-cat``…).
        query_lang: the query's language when known (else guessed, as the search does).
    """
    flt = filter or SearchFilter()
    found = searcher.search(
        query, k=k, mode=mode, filter=flt, group_by_record=True, lang=query_lang
    )
    if not found:
        return []
    depth = max(CHUNK_DEPTH, 5 * k)
    chunks = searcher.search(query, k=depth, mode=mode, filter=flt, lang=query_lang)
    best = {h.key: h for h in found}
    per_record: dict[RecordKey, list[SearchHit]] = {}
    for hit in (*found, *chunks):
        per_record.setdefault(hit.key, []).append(hit)
    guessed = language.detect(query) if query_lang is None else query_lang
    words = query_words(query, None if guessed == language.NEUTRAL else guessed)
    readers = tuple(c for c in dict.fromkeys((guessed, lang)) if c and c != language.NEUTRAL)
    builder = _Builder(archive, query, words, lang, readers)
    top = found[0].score
    with record_reads(archive) as reads:
        named = exact_names(archive, query, [h.key for h in found], flt, reads)
        exact = {e.key: e.name for e in named}
        order = list(dict.fromkeys([*exact, *best]))[:k]
        missing = [key for key in order if key not in best]
        langs = reads.languages(missing)
        hits = [
            builder.build(
                reads,
                key,
                rank,
                best[key].score if key in best else top,
                per_record.get(key, []),
                best[key].record_langs if key in best else tuple(sorted(langs.get(key, ()))),
                exact.get(key),
                best[key].via if key in best else None,
            )
            for rank, key in enumerate(order, start=1)
        ]
    return [hit for hit in hits if hit is not None]


def _without_trail(text: str, trail: str) -> str:
    """A passage without the trail its metadata chunk starts with (``Fonds Vitet › …``): the
    row says where the record sits (``within``), its passages what the record says."""
    if trail and text.startswith(trail):
        return text[len(trail) :].lstrip(f" {GATHERED}")
    return text


class _Builder:
    """Turns a ranked key and its chunk hits into a :class:`RecordHit`."""

    def __init__(
        self,
        archive: Archive,
        query: str,
        words: Sequence[str],
        lang: str,
        prefer: tuple[str, ...] = (),
    ) -> None:
        self.archive = archive
        self.query = query
        self.words = words
        self.lang = lang
        self.prefer = prefer
        self._fields: dict[str, list[Field]] = {}
        self._labels: dict[str, dict[str, str]] = {}
        self.shapes = SectionShapes(archive)
        self._tops: dict[RecordKey, RecordKey] = {}
        self.trails = archive_trails(self.shapes)

    def build(
        self,
        reads: RecordReads,
        key: RecordKey,
        rank: int,
        score: float,
        hits: list[SearchHit],
        langs: tuple[str, ...],
        exact_name: str | None,
        via: Via | None = None,
    ) -> RecordHit | None:
        """The record's hit (``None``: the record was deleted since it was indexed)."""
        record = self.archive.find_record(key)
        if record is None:
            return None
        title = self.archive.label_of(record, self.lang)
        names = {title, *titles(self.archive, record)}
        trail = self.trails.context(key, record.values, record.restricted)
        lead = trail.text if trail else ""
        shown = [self._passage(hit, lead) for hit in hits]
        passages = choose(shown, names, self.query, self.words, self.prefer)
        if not passages:
            more = [self._row_passage(row, lead) for row in reads.chunks_of(key)]
            passages = choose(more, names, self.query, self.words, self.prefer)
        within, path = self.within(record), self.path(record)
        return RecordHit(
            key=key,
            title=title,
            section_label=self.archive.section(key.section_tipo).label(self.lang),
            score=score,
            rank=rank,
            passages=tuple(passages[:PASSAGES]),
            title_marks=marks(title, self.words),
            langs=langs,
            date=self.date(record),
            exact_name=exact_name,
            within=within,
            path=path,
            via=self.via(key.section_tipo, via, (within, path)),
        )

    def via(self, tipo: str, via: Via | None, where: tuple[str | None, ...]) -> ViaHeading | None:
        """How the row of a record of section ``tipo`` names the heading ``via`` (``None``
        when there is none, or when the row already names it as the record's fonds or
        series)."""
        if via is None:
            return None
        title = self.archive.record_label(via.key, self.lang)
        if title == str(via.key):  # gone since it was indexed
            title = via.label
        if any(place.endswith(title) for place in where if place):
            return None
        if tipo not in self._labels:
            self._labels[tipo] = {f.tipo: f.label(self.lang) for f in self.archive.fields(tipo)}
        field = self._labels[tipo].get(via.field_tipo, via.field_tipo)
        return ViaHeading(via.key, field, title, marks(title, self.words))

    def within(self, record: Record) -> str | None:
        """The label of the top of ``record``'s hierarchy (its fonds), ``None`` for a top record
        or outside a hierarchy. The ancestors met are remembered for the other hits of the
        search (siblings share them)."""
        shape = self.shapes.hierarchy(record.section_tipo)
        if shape is None:
            return None
        parents = [k for k in locators(record.items(shape.parent_field)) if k != record.key]
        if not parents:
            return None
        trail, current = [record.key], parents[0]
        while current not in self._tops and current not in trail and len(trail) < MAX_DEPTH:
            trail.append(current)
            parent = parent_of(self.archive, current, shape)
            if parent is None:
                break
            current = parent
        top = self._tops.get(current, current)
        for key in trail[1:]:
            self._tops[key] = top
        if top == record.key:
            return None
        return self.archive.record_label(top, self.lang)

    def path(self, record: Record) -> str | None:
        """The label of the record ``record`` is directly part of, when that is not its top
        (call after :meth:`within`, which remembers the tops), ``… › `` before it where levels
        between are left out (not for levels titled as the top: EAD's one ``c01``)."""
        shape = self.shapes.hierarchy(record.section_tipo)
        if shape is None:
            return None
        parents = [k for k in locators(record.items(shape.parent_field)) if k != record.key]
        if not parents or parents[0] not in self._tops:
            return None
        parent, top = parents[0], self._tops[parents[0]]
        if parent == top:
            return None
        label = self.archive.record_label(parent, self.lang)
        nodes = breadcrumbs(self.archive, record.key, self.lang, shape)  # top … parent
        tops = [i for i, node in enumerate(nodes) if node.key == top]
        if tops and all(n.label == nodes[tops[0]].label for n in nodes[tops[0] + 1 : -1]):
            return label
        return f"{ELIDED}{SEPARATOR}{label}"

    def _passage(self, hit: SearchHit, trail: str) -> HitPassage:
        text = _without_trail(hit.snippet.strip(), trail)
        return HitPassage(
            text, hit.field_tipo, hit.lang, hit.score, hit.timecode, hit.page,
            marks(text, self.words),
        )  # fmt: skip

    def _row_passage(self, row: ChunkRow, trail: str) -> HitPassage:
        text = _without_trail(snippet(row.text, self.query).strip(), trail)
        return HitPassage(
            text, row.field_tipo, row.lang, 0.0, row.timecode, row.page, marks(text, self.words)
        )

    def date(self, record: Record) -> str | None:
        """The record's date: its first date field with a value, else a year field's."""
        tipo = record.section_tipo
        if tipo not in self._fields:
            fields = self.archive.fields(tipo)
            dated = [f for f in fields if f.kind == "date"]
            dated += [
                f for f in fields if f.kind == "number" and _YEAR_FIELD.search(f.label("lg-eng"))
            ]
            self._fields[tipo] = dated
        for field in self._fields[tipo]:
            value = record.text(field.tipo, self.lang)
            if value:
                return value
        return None
