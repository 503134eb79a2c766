"""Finding what an importer wrote: a record by the id its source gave it, the records a
lexical search finds (how the importer tests check that a set answers its README questions),
and the authority stubs an import counted apart from its own sections."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.archive import Archive, RecordKey
from app.core.archive.importers.authorities import AUTHORITY_SECTIONS
from app.core.archive.importers.base import ImportSummary
from app.core.index import lexical


def own_sections(summary: ImportSummary) -> dict[str, int]:
    """The records per section of ``summary``, the authority stubs it created left out."""
    return {t: n for t, n in summary.sections.items() if t not in AUTHORITY_SECTIONS}


def authority_records(archive: Archive) -> int:
    """How many records the authority sections hold."""
    return sum(archive.count_records(tipo) for tipo in AUTHORITY_SECTIONS)


def lexical_records(
    archive: Archive, query: str, chunks: int, lang: str | None = None
) -> list[RecordKey]:
    """The records of the ``chunks`` best lexical chunks for ``query``, best first, each once."""
    found: list[RecordKey] = []
    with archive.db.reading() as conn:
        for chunk_id in lexical_chunks(archive, query, chunks, lang):
            row = conn.execute(
                "SELECT section_tipo, section_id FROM index_chunks WHERE id = ?", (chunk_id,)
            ).fetchone()
            key = RecordKey(row[0], row[1])
            if key not in found:
                found.append(key)
    return found


def lexical_chunks(archive: Archive, query: str, chunks: int, lang: str | None = None) -> list[int]:
    """The ids of the ``chunks`` best chunks for ``query`` by BM25 alone (no ranking after it):
    FTS5 in a folder archive, the server's ``tsvector`` in a shared one."""
    if archive.shared:
        from app.core.index.postgres import lexical as server_lexical

        with archive.db.reading() as conn:
            raw = conn.raw  # type: ignore[attr-defined]  # the PostgreSQL engine's connection
            found = server_lexical.search(raw, query, chunks, lang=lang)
    else:
        with archive.sqlite.reading() as local:
            found = lexical.search(local, query, chunks, lang=lang)
    return [chunk_id for chunk_id, _ in found]


@dataclass(frozen=True)
class BySource:
    """The records one import source wrote, found by their external ids."""

    source: str

    def key(self, archive: Archive, external_id: str) -> RecordKey:
        """The record imported as ``external_id`` (it must be there)."""
        key = archive.external_key(self.source, external_id)
        assert key is not None, external_id
        return key

    def texts(self, archive: Archive, external_id: str, tipo: str) -> list[str]:
        """The values of field ``tipo`` of the record imported as ``external_id``, as text."""
        return [
            str(i["value"]) for i in archive.get_record(self.key(archive, external_id)).items(tipo)
        ]
