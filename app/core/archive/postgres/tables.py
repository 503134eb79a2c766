"""Every table of an archive that holds data, engine-neutral: columns, kinds and key.

One list for the copy and the checksum, in an order that satisfies the foreign keys (sections
before fields and records). Each column has a kind that says how it is stored on each engine
and how it is written in the canonical form (:mod:`.canonical`):

========  ==================  ==========================  ====================================
kind      SQLite              PostgreSQL                  canonical
========  ==================  ==========================  ====================================
int       INTEGER             bigint / integer            decimal
real      REAL                double precision            shortest repr of the float
text      TEXT                text                        the text
bool      INTEGER 0/1         boolean                     0 / 1
json      TEXT (JSON)         jsonb                       compact JSON, keys sorted
ts        TEXT (ISO 8601)     timestamptz                 UTC ISO 8601 (+00:00)
blob      BLOB                bytea                       hex
vector    BLOB (float32 LE)   vector                      hex of the float32 LE bytes
========  ==================  ==========================  ====================================

``media_files`` is not a SQLite table: on SQLite it is the files under the archive's
``media/`` folder (path, size, SHA-256); on PostgreSQL a table, with the bytes in
``media_parts``.
"""

from __future__ import annotations

from dataclasses import dataclass

KINDS = frozenset({"int", "real", "text", "bool", "json", "ts", "blob", "vector"})


@dataclass(frozen=True)
class Column:
    """A column: its name, its kind and, for a timestamp, how SQLite writes it."""

    name: str
    kind: str = "text"
    sql_stamp: bool = False
    """A ``ts`` column SQLite fills with ``datetime('now')`` (``YYYY-MM-DD HH:MM:SS``), not with
    ISO 8601: written back the same way."""


@dataclass(frozen=True)
class Table:
    """A table that holds archive data: its name, columns in order, and its key columns."""

    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]

    @property
    def names(self) -> tuple[str, ...]:
        """The column names in order."""
        return tuple(c.name for c in self.columns)

    def column(self, name: str) -> Column:
        """The column ``name``."""
        return next(c for c in self.columns if c.name == name)


def _cols(spec: str) -> tuple[Column, ...]:
    """Columns from ``"name:kind name ..."`` (kind ``text`` when left out; ``ts!`` for a
    timestamp SQLite writes with ``datetime('now')``)."""
    out = []
    for item in spec.split():
        name, _, kind = item.partition(":")
        stamp = kind == "ts!"
        out.append(Column(name, "ts" if stamp else (kind or "text"), sql_stamp=stamp))
    return tuple(out)


def _t(name: str, spec: str, key: str) -> Table:
    return Table(name, _cols(spec), tuple(key.split()))


MEDIA_FILES = "media_files"

TABLES: tuple[Table, ...] = (
    _t("meta", "key value", "key"),
    _t(
        "sections",
        "tipo labels:json description restricted:bool writable:bool label_field",
        "tipo",
    ),
    _t(
        "fields",
        "tipo section_tipo labels:json kind multilingual:bool target_section position:int",
        "tipo",
    ),
    _t(
        "records",
        "section_tipo section_id:int data:json version:int restricted:bool "
        "created_at:ts updated_at:ts",
        "section_tipo section_id",
    ),
    _t(
        "links",
        "from_section from_id:int field_tipo to_section to_id:int",
        "from_section from_id field_tipo to_section to_id",
    ),
    _t(
        "media",
        "id:int section_tipo section_id:int field_tipo path mime size:int sha256 width:int "
        "height:int duration_s:real thumbnail created_at:ts!",
        "id",
    ),
    _t(
        "audit",
        "id:int at:ts action section_tipo section_id:int plan_hash op_id before:json "
        "after:json model egress actor plan_id",
        "id",
    ),
    _t(
        "conversations",
        "id title model created_at:ts updated_at:ts history:json transcript:json pending_plan:json "
        "owner",
        "id",
    ),
    _t("external_ids", "source external_id section_tipo section_id:int", "source external_id"),
    _t(
        "plans",
        "id plan_hash plan:json conversation_id model_id egress tainted:bool "
        "restricted_text:bool status owner report created_at:ts updated_at:ts proposer "
        "bound_hash",
        "id",
    ),
    _t("id_marks", "section_tipo high:int", "section_tipo"),
    _t("archive_secrets", "name value:blob", "name"),
    _t("answer_ledger", "owner digest tainted:bool", "owner digest"),
    _t("tainted_shingles", "digest", "digest"),
    _t(
        "index_chunks",
        "id:int section_tipo section_id:int field_tipo lang position:int timecode page label "
        "text content_hash restricted:bool",
        "id",
    ),
    _t("index_vectors", "content_hash model dim:int vector:vector", "content_hash model"),
    _t("index_records", "section_tipo section_id:int version:int", "section_tipo section_id"),
    _t("index_state", "key value", "key"),
    _t(MEDIA_FILES, "path size:int sha256", "path"),
)
"""Every table that holds data, in copy order (a referenced table before its referrers)."""

BY_NAME = {t.name: t for t in TABLES}

SQLITE_DERIVED = ("_migrations", "sqlite_sequence", "index_generations", "archive_copy")
"""SQLite tables that hold no archive data of their own: the schema's history, AUTOINCREMENT's
counter, the index's change counters (re-made by the index), the copy's own progress."""
SQLITE_DERIVED_PREFIXES = ("index_fts",)
"""The chunks' FTS5 table and its shadow tables (re-made from ``index_chunks``)."""


def is_derived(sqlite_table: str) -> bool:
    """Whether a SQLite table holds only what the copy need not carry (see ``SQLITE_DERIVED``)."""
    return sqlite_table in SQLITE_DERIVED or sqlite_table.startswith(SQLITE_DERIVED_PREFIXES)
