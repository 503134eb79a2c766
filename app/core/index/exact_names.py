"""Records whose title or name *is* the query: they rank first in the results by record.

An archivist who types ``Barcino`` means the mint of that name, not the mints whose
descriptions mention it nor a neighbour in embedding space (``Barya``). A record is an exact
match when one of its titles (its section's label field, in any language) or its reference
code equals the whole query, compared accent- and case-folded with punctuation as spaces
(:func:`app.core.index.names.fold`). Candidates are the ranked records and those whose chunk
labels hold every word of the query (FTS5 over the ``label`` column, so a title the ranking
missed is still found; the server's ``tsvector`` and folded label on a shared archive, see
:mod:`app.core.index.record_reads`), under the search's own filter.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from app.core.archive.model import Record, RecordKey
from app.core.archive.store import Archive
from app.core.index.hits import SearchFilter
from app.core.index.names import fold
from app.core.index.record_reading import record_reads
from app.core.index.record_reads import RecordReads


@dataclass(frozen=True)
class ExactName:
    """A record whose title or code equals the query, and the value that did."""

    key: RecordKey
    name: str


def titles(archive: Archive, record: Record) -> list[str]:
    """Every title of ``record`` (its label field in each language) and its reference code."""
    section = archive.section(record.section_tipo)
    values: list[str] = []
    for tipo in (section.label_field, archive.code_field(record.section_tipo)):
        if tipo:
            items = record.items(tipo)
            values.extend(str(i["value"]) for i in items if isinstance(i.get("value"), str))
    return values


def matching_name(archive: Archive, record: Record, query: str) -> str | None:
    """The title or code of ``record`` that equals ``query`` (folded), else ``None``."""
    wanted = fold(query)
    if not wanted:
        return None
    label = archive.label_of(record)
    for value in (label, *titles(archive, record)):
        if fold(value) == wanted:
            return value
    return None


def exact_names(
    archive: Archive,
    query: str,
    candidates: Iterable[RecordKey],
    flt: SearchFilter,
    reads: RecordReads | None = None,
) -> list[ExactName]:
    """The records among ``candidates`` and the label lookup whose title equals ``query``,
    the ranked candidates first; a restricted record is left out of an egress-filtered
    search (read live, as the search itself does). ``reads``: the index reads to use (default:
    the archive's, for this call)."""
    if reads is None:
        with record_reads(archive) as lent:
            found = lent.label_candidates(query, flt)
    else:
        found = reads.label_candidates(query, flt)
    keys = list(dict.fromkeys([*candidates, *found]))
    out: list[ExactName] = []
    for key in keys:
        record = archive.find_record(key)
        if record is None or (flt.exclude_restricted and archive.is_restricted(key)):
            continue
        name = matching_name(archive, record, query)
        if name is not None:
            out.append(ExactName(key, name))
    return out
