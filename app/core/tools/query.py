"""Field and relation filters compiled to SQL over ``records.data`` (``json_each``) and ``links``.

A filter names a field of the searched section, or a path across portals
(``["oh1", "oh24", "rsc197", "rsc85"]``: interviews whose informant's name ...). Text comparisons
ignore case and accents (the ``arxiu_fold`` SQL function); numbers and date strings compare as
numbers when the value is a number, and as text otherwise.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from app.core.archive.model import Record
from app.core.archive.records import row_to_record
from app.core.errors import ToolError
from app.core.tools.resolve import fold, names_section, resolve_field, resolve_tipo_path

if TYPE_CHECKING:
    from app.core.archive.database import Connection
    from app.core.archive.store import Archive

Op = Literal[
    "contains", "equals", "starts_with", "gt", "gte", "lt", "lte", "between", "exists", "missing"
]
_COMPARE = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
_VALUE = "json_extract(j.value, '$.value')"
_NUMERIC_GUARD = f"(typeof({_VALUE}) IN ('integer', 'real') OR {_VALUE} GLOB '[0-9-]*')"


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

    def param(self, value: Any) -> str:
        """A new named parameter holding ``value``."""
        name = f"p{len(self.params)}"
        self.params[name] = value
        return ":" + name


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def restricted_sql(alias: str) -> str:
    return (
        f"coalesce({alias}.restricted, (SELECT s.restricted FROM sections s "
        f"WHERE s.tipo = {alias}.section_tipo), 1)"
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
    out = Compiled(sections={section_tipo})
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
        f"On the relation field {field_tipo} use equals {{section_tipo, section_id}}, exists or "
        f"missing (got {op!r}).",
        hint="To filter on the linked records' values, continue the path into their fields.",
    )


def _value_condition(out: Compiled, alias: str, field_tipo: str, op: str, flt: Filter) -> str:
    json_path = '$."' + field_tipo + '"'
    source = f"json_each({alias}.data, {out.param(json_path)}) AS j"
    if op in ("exists", "missing"):
        test = f"EXISTS (SELECT 1 FROM {source})"
        return test if op == "exists" else f"NOT {test}"
    where = [_comparison(out, op, flt.get("value"))]
    if flt.get("lang"):
        where.append(f"json_extract(j.value, '$.lang') = {out.param(flt['lang'])}")
    return f"EXISTS (SELECT 1 FROM {source} WHERE {' AND '.join(where)})"


def _comparison(out: Compiled, op: str, value: Any) -> str:
    if value is None:
        raise ToolError(
            "mcp.invalid_filter", f"The filter op {op!r} needs a value.", hint="Add a value."
        )
    if op in ("contains", "starts_with"):
        pattern = _like(fold(str(value))) + "%"
        pattern = pattern if op == "starts_with" else "%" + pattern
        return f"arxiu_fold({_VALUE}) LIKE {out.param(pattern)} ESCAPE '\\'"
    if op == "between":
        if not isinstance(value, list) or len(value) != 2:
            raise ToolError(
                "mcp.invalid_filter", "between needs [low, high].", hint="Give two values."
            )
        return f"{_comparison(out, 'gte', value[0])} AND {_comparison(out, 'lte', value[1])}"
    if op == "equals" and isinstance(value, str):
        return f"arxiu_fold({_VALUE}) = {out.param(fold(value))}"
    if op == "equals" and isinstance(value, bool):
        return f"{_VALUE} = {out.param(int(value))}"
    if op in _COMPARE or op == "equals":
        sign = _COMPARE.get(op, "=")
        if isinstance(value, int | float):
            return f"{_NUMERIC_GUARD} AND CAST({_VALUE} AS REAL) {sign} {out.param(value)}"
        return f"CAST({_VALUE} AS TEXT) {sign} {out.param(str(value))}"
    raise ToolError("mcp.invalid_filter", f"Unknown filter op {op!r}.", hint="See the schema.")


def _fold_sql(value: Any) -> str | None:
    return None if value is None else fold(str(value))


def prepare(conn: Connection) -> None:
    """Register ``arxiu_fold`` on a SQLite connection (idempotent; a shared archive's server
    has it as a SQL function)."""
    if isinstance(conn, sqlite3.Connection):
        conn.create_function("arxiu_fold", 1, _fold_sql, deterministic=True)


def run_search(
    archive: Archive, compiled: Compiled, *, limit: int, offset: int
) -> tuple[int, list[Record]]:
    """The total number of matches and one page of them, ordered by id."""
    where = " AND ".join(compiled.sql)
    params = dict(compiled.params, limit=limit, offset=offset)
    with archive.db.reading() as conn:
        prepare(conn)
        total = conn.execute(f"SELECT count(*) FROM records r0 WHERE {where}", params).fetchone()
        rows = conn.execute(
            f"SELECT r0.* FROM records r0 WHERE {where} ORDER BY r0.section_id "
            "LIMIT :limit OFFSET :offset",
            params,
        ).fetchall()
    return int(total[0]), [row_to_record(r) for r in rows]


def matching_ids(conn: Connection, compiled: Compiled, limit: int) -> list[int]:
    """The ids of the first ``limit`` matches, read on ``conn`` (e.g. inside a write)."""
    prepare(conn)
    where = " AND ".join(compiled.sql)
    rows = conn.execute(
        f"SELECT r0.section_id FROM records r0 WHERE {where} ORDER BY r0.section_id LIMIT :limit",
        dict(compiled.params, limit=limit),
    ).fetchall()
    return [int(row[0]) for row in rows]
