"""Field and relation filters compiled to SQL over ``records.data`` and ``links``.

A filter names a field of the searched section, or a path across portals
(``["oh1", "oh24", "rsc197", "rsc85"]``: interviews whose informant's name ...). Text comparisons
ignore case and accents (the ``arxiu_fold`` SQL function); numbers and date strings compare as
numbers when the value is a number, and as text otherwise.

The SQL is the archive engine's (``archive.db.dialect``): SQLite reads a field's items with
``json_each`` and ``json_extract``, and folds with :func:`~app.core.tools.resolve.fold`
registered on the connection; PostgreSQL reads the ``jsonb`` with ``jsonb_array_elements`` and
``->>`` and folds with the server's ``arxiu_fold``
(:func:`app.core.archive.postgres.schema.fold_function_sql`). Both give the same answers: a
number compares with the leading number of a text (``"1936-05-02"`` as 1936, as SQLite's
``CAST`` reads it), other texts compare code point by code point.
"""

from __future__ import annotations

import sqlite3
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from app.core.archive.model import Record
from app.core.archive.records import row_to_record
from app.core.errors import ArchiveError, ToolError
from app.core.phrases import Phrase
from app.core.tools.resolve import fold, names_section, resolve_field, resolve_tipo_path

if TYPE_CHECKING:
    from app.core.archive.engine import Connection, Engine
    from app.core.archive.store import Archive

Op = Literal[
    "contains", "equals", "starts_with", "gt", "gte", "lt", "lte", "between", "exists", "missing"
]
_COMPARE = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
POSTGRESQL = "postgresql"


@dataclass(frozen=True)
class _Dialect:
    """How one engine reads an item ``j`` of a field (``records.data``: ``{field tipo: [item,
    ...]}``, an item ``{"id", "lang", "value"}``)."""

    items: str
    """The items of field ``{param}`` of record ``{alias}``, as rows ``j``."""
    value: str
    """The item's value (text, number or boolean, as the engine reads it)."""
    lang: str
    """The item's language."""
    is_number: str
    """Whether the value is a number or a text starting like one."""
    number: str
    """The value as a number (a text's leading number)."""
    text: str
    """The value as text compared code point by code point."""
    is_true: str
    """Whether the value is the boolean ``{json}`` or the number ``{number}`` (SQLite reads
    JSON ``true`` as 1)."""
    text_anywhere: str
    """Whether some text at a key ``value`` anywhere in record ``r0``, folded, is ``LIKE``
    ``{pattern}`` (as SQLite's ``json_tree`` walks it)."""


_SQLITE = _Dialect(
    items="json_each({alias}.data, {param}) AS j",
    value="json_extract(j.value, '$.value')",
    lang="json_extract(j.value, '$.lang')",
    is_number="(typeof(json_extract(j.value, '$.value')) IN ('integer', 'real') "
    "OR json_extract(j.value, '$.value') GLOB '[0-9-]*')",
    number="CAST(json_extract(j.value, '$.value') AS REAL)",
    text="CAST(json_extract(j.value, '$.value') AS TEXT)",
    is_true="json_extract(j.value, '$.value') = {number}",
    text_anywhere="EXISTS (SELECT 1 FROM json_tree(r0.data) AS t WHERE t.key = 'value' "
    "AND t.type = 'text' AND arxiu_fold(t.atom) LIKE {pattern} ESCAPE '\\')",
)
_LEADING_NUMBER = "'^-?[0-9]+(?:[.][0-9]*)?(?:[eE][-+]?[0-9]{1,3})?'"
"""A text's leading number as SQLite's ``CAST(... AS REAL)`` reads it (an exponent of three
digits at most, so ``numeric`` holds it)."""
_POSTGRESQL = _Dialect(
    items="jsonb_array_elements(CASE WHEN jsonb_typeof({alias}.data -> {param}) = 'array' "
    "THEN {alias}.data -> {param} END) AS j",
    value="(j.value ->> 'value')",
    lang="(j.value ->> 'lang')",
    is_number="(jsonb_typeof(j.value -> 'value') = 'number' OR (j.value ->> 'value') ~ '^[0-9-]')",
    number="CAST(coalesce(substring(j.value ->> 'value' from "
    + _LEADING_NUMBER
    + "), '0') AS numeric)",
    text="(j.value ->> 'value') COLLATE \"C\"",
    is_true="(j.value -> 'value') IN (CAST({json} AS jsonb), CAST({number} AS jsonb))",
    text_anywhere="EXISTS (SELECT 1 FROM jsonb_path_query(r0.data, "
    "'lax $.**.value ? (@.type() == \"string\")') AS t(value) "
    "WHERE arxiu_fold(t.value #>> '{{}}') LIKE {pattern} ESCAPE '\\')",
)


class Filter(TypedDict, total=False):
    """One condition on the records searched.

    Args:
        field: a field tipo or label of the searched section (or give a path).
        path: a tipo path across portals, e.g. ["oh1", "oh24", "rsc197", "rsc85"] (from
            dedalo_resolve_path); a path ending at a relation field tests the link itself.
        op: contains, equals, starts_with, gt, gte, lt, lte, between ([low, high]), exists or
            missing; on a relation field: equals {section_tipo, section_id}, exists or missing.
        value: the value to compare with.
        lang: only compare values in this language (e.g. lg-cat).
    """

    field: str
    path: list[str]
    op: Op
    value: Any
    lang: str


@dataclass
class Compiled:
    """SQL conditions on ``r0`` with their named parameters, and the sections they touch."""

    sql: list[str] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    sections: set[str] = field(default_factory=set)
    dialect: str = "sqlite"
    """The engine the SQL is for (``archive.db.dialect``)."""

    def param(self, value: Any) -> str:
        """A new named parameter holding ``value``."""
        name = f"p{len(self.params)}"
        self.params[name] = value
        return ":" + name

    @property
    def sql_forms(self) -> _Dialect:
        """The engine's forms of the JSON reads."""
        return _POSTGRESQL if self.dialect == POSTGRESQL else _SQLITE

    def text_anywhere(self, pattern: str) -> str:
        """Whether some text value of record ``r0``, folded, is ``LIKE`` ``pattern`` (a
        folded pattern, ``\\`` its escape)."""
        return self.sql_forms.text_anywhere.format(pattern=self.param(pattern))


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def restricted_sql(alias: str) -> str:
    """Whether record ``alias`` is restricted: its own flag, else its section's (a boolean on
    both engines)."""
    return (
        f"coalesce({alias}.restricted, (SELECT s.restricted FROM sections s "
        f"WHERE s.tipo = {alias}.section_tipo), TRUE)"
    )


def filter_path(archive: Archive, section_tipo: str, flt: Filter) -> list[str]:
    """The tipo path a filter tests, starting at ``section_tipo``."""
    if flt.get("path"):
        parts = [str(p) for p in flt["path"]]
        if not names_section(archive, parts[0], section_tipo):
            parts = [section_tipo, *parts]
        return resolve_tipo_path(archive, parts)
    if flt.get("field"):
        fld = resolve_field(archive, section_tipo, str(flt["field"]))
        target = fld.target_section if fld.kind == "relation" else None
        return [section_tipo, fld.tipo, *([target] if target else [])]
    raise ToolError(
        "mcp.invalid_filter", "A filter needs a field or a path.", hint="Add field or path."
    )


def _to_label_field(archive: Archive, path: list[str], op: str, flt: Filter) -> list[str]:
    """A text test on a relation field tests the linked records' label field."""
    value = flt.get("value")
    on_link = op in ("exists", "missing") or (
        op == "equals" and (isinstance(value, dict | int) and not isinstance(value, bool))
    )
    if len(path) % 2 == 0 or on_link or len(path) < 3:
        return path
    label_field = archive.section(path[-1]).label_field if archive.has_section(path[-1]) else None
    return [*path, label_field] if label_field else path


def compile_filters(
    archive: Archive, section_tipo: str, filters: list[Filter], exclude_restricted: bool
) -> Compiled:
    """The SQL for ``filters`` on records ``r0`` of ``section_tipo``."""
    out = Compiled(sections={section_tipo}, dialect=archive.db.dialect)
    out.sql.append(f"r0.section_tipo = {out.param(section_tipo)}")
    if exclude_restricted:
        out.sql.append(f"NOT {restricted_sql('r0')}")
    for flt in filters:
        op = flt.get("op", "contains")
        path = _to_label_field(archive, filter_path(archive, section_tipo, flt), op, flt)
        out.sections.update(path[0::2])
        out.sql.append(_step(out, path, "r0", 0, op, flt, exclude_restricted))
    return out


def _step(
    out: Compiled, path: list[str], alias: str, depth: int, op: str, flt: Filter, excl: bool
) -> str:
    field_tipo, rest = path[1], path[2:]
    if len(rest) == 1:
        return _link_condition(out, alias, field_tipo, rest[0], op, flt.get("value"))
    if rest:
        hop, rec = f"l{depth + 1}", f"r{depth + 1}"
        inner = _step(out, rest, rec, depth + 1, op, flt, excl)
        guard = f" AND NOT {restricted_sql(rec)}" if excl else ""
        return (
            f"EXISTS (SELECT 1 FROM links {hop} JOIN records {rec} "
            f"ON {rec}.section_tipo = {hop}.to_section AND {rec}.section_id = {hop}.to_id "
            f"WHERE {hop}.from_section = {alias}.section_tipo AND {hop}.from_id = "
            f"{alias}.section_id AND {hop}.field_tipo = {out.param(field_tipo)}{guard} "
            f"AND {inner})"
        )
    return _value_condition(out, alias, field_tipo, op, flt)


def _link_condition(
    out: Compiled, alias: str, field_tipo: str, target: str, op: str, value: Any
) -> str:
    base = (
        f"SELECT 1 FROM links lk WHERE lk.from_section = {alias}.section_tipo "
        f"AND lk.from_id = {alias}.section_id AND lk.field_tipo = {out.param(field_tipo)}"
    )
    if op == "exists":
        return f"EXISTS ({base})"
    if op == "missing":
        return f"NOT EXISTS ({base})"
    if op == "equals":
        sid = value.get("section_id") if isinstance(value, dict) else value
        tipo = value.get("section_tipo", target) if isinstance(value, dict) else target
        if isinstance(sid, int | str) and str(sid).isdigit():
            return (
                f"EXISTS ({base} AND lk.to_section = {out.param(str(tipo))} "
                f"AND lk.to_id = {out.param(int(sid))})"
            )
    raise ToolError(
        "mcp.invalid_filter",
        Phrase.of(
            "On the relation field {field} use equals {{section_tipo, section_id}}, exists or "
            "missing (got {op!r}).",
            field=field_tipo,
            op=op,
        ),
        hint="To filter on the linked records' values, continue the path into their fields.",
    )


def _value_condition(out: Compiled, alias: str, field_tipo: str, op: str, flt: Filter) -> str:
    forms = out.sql_forms
    key = field_tipo if out.dialect == POSTGRESQL else '$."' + field_tipo + '"'
    source = forms.items.format(alias=alias, param=out.param(key))
    if op in ("exists", "missing"):
        test = f"EXISTS (SELECT 1 FROM {source})"
        return test if op == "exists" else f"NOT {test}"
    where = [_comparison(out, op, flt.get("value"))]
    if flt.get("lang"):
        where.append(f"{forms.lang} = {out.param(flt['lang'])}")
    return f"EXISTS (SELECT 1 FROM {source} WHERE {' AND '.join(where)})"


def _comparison(out: Compiled, op: str, value: Any) -> str:
    if value is None:
        raise ToolError(
            "mcp.invalid_filter",
            Phrase.of("The filter op {op!r} needs a value.", op=op),
            hint="Add a value.",
        )
    forms = out.sql_forms
    if op in ("contains", "starts_with"):
        pattern = _like(fold(str(value))) + "%"
        pattern = pattern if op == "starts_with" else "%" + pattern
        return f"arxiu_fold({forms.value}) LIKE {out.param(pattern)} ESCAPE '\\'"
    if op == "between":
        if not isinstance(value, list) or len(value) != 2:
            raise ToolError(
                "mcp.invalid_filter", "between needs [low, high].", hint="Give two values."
            )
        return f"{_comparison(out, 'gte', value[0])} AND {_comparison(out, 'lte', value[1])}"
    if op == "equals" and isinstance(value, str):
        return f"arxiu_fold({forms.value}) = {out.param(fold(value))}"
    if op == "equals" and isinstance(value, bool):
        if out.dialect != POSTGRESQL:
            return forms.is_true.format(number=out.param(int(value)))
        json_value, number = ("true", "1") if value else ("false", "0")
        return forms.is_true.format(json=out.param(json_value), number=out.param(number))
    if op in _COMPARE or op == "equals":
        sign = _COMPARE.get(op, "=")
        if isinstance(value, int | float):
            number = out.param(value)
            if out.dialect == POSTGRESQL:
                number = f"CAST({number} AS numeric)"
            return f"{forms.is_number} AND {forms.number} {sign} {number}"
        return f"{forms.text} {sign} {out.param(str(value))}"
    raise ToolError(
        "mcp.invalid_filter", Phrase.of("Unknown filter op {op!r}.", op=op), hint="See the schema."
    )


def _fold_sql(value: Any) -> str | None:
    return None if value is None else fold(str(value))


_FOLD_FOUND: weakref.WeakSet[Engine] = weakref.WeakSet()
"""The PostgreSQL engines whose server was seen to have ``arxiu_fold``."""


def prepare(engine: Engine, conn: Connection) -> None:
    """Make ``arxiu_fold`` callable on ``conn``: registered on a SQLite connection (idempotent);
    on PostgreSQL the server's function, whose presence is checked once per engine.

    Raises:
        ArchiveError: ``archive.pg_no_fold`` when the database lacks the function (an archive
            copied before it existed, not yet opened by its owner).
    """
    if isinstance(conn, sqlite3.Connection):
        conn.create_function("arxiu_fold", 1, _fold_sql, deterministic=True)
        return
    if engine.dialect != POSTGRESQL or engine in _FOLD_FOUND:
        return
    row = conn.execute("SELECT to_regprocedure('arxiu_fold(text)') IS NOT NULL").fetchone()
    if not row or not row[0]:
        raise ArchiveError(
            "archive.pg_no_fold",
            "This shared archive's database has no arxiu_fold function yet (it was copied "
            "before the function existed), so field filters cannot compare texts.",
            hint="Open the archive once as its owner: the function is then added.",
        )
    _FOLD_FOUND.add(engine)


def run_search(
    archive: Archive, compiled: Compiled, *, limit: int, offset: int
) -> tuple[int, list[Record]]:
    """The total number of matches and one page of them, ordered by id."""
    where = " AND ".join(compiled.sql)
    params = dict(compiled.params, limit=limit, offset=offset)
    with archive.db.reading() as conn:
        if "arxiu_fold(" in where:
            prepare(archive.db, conn)
        total = conn.execute(f"SELECT count(*) FROM records r0 WHERE {where}", params).fetchone()
        rows = conn.execute(
            f"SELECT r0.* FROM records r0 WHERE {where} ORDER BY r0.section_id "
            "LIMIT :limit OFFSET :offset",
            params,
        ).fetchall()
    return int(total[0]), [row_to_record(r) for r in rows]


def matching_ids(engine: Engine, conn: Connection, compiled: Compiled, limit: int) -> list[int]:
    """The ids of the first ``limit`` matches, read on ``conn`` of ``engine`` (e.g. inside a
    write)."""
    where = " AND ".join(compiled.sql)
    if "arxiu_fold(" in where:
        prepare(engine, conn)
    rows = conn.execute(
        f"SELECT r0.section_id FROM records r0 WHERE {where} ORDER BY r0.section_id LIMIT :limit",
        dict(compiled.params, limit=limit),
    ).fetchall()
    return [int(row[0]) for row in rows]
