"""The OAI-PMH 2.0 provider at ``/oai``: the archive's open records, for any harvester.

Read-only and without login, so it serves only what may leave the institution: a record is
served when its section is open, the record is not restricted (``archive.is_restricted``), and
the egress gate would hand it to an external model through ``dedalo_read_record`` (so neither
a restricted record nor an open record that points at one ever leaves). Restricted sections
are not sets; a restricted record's identifier answers ``idDoesNotExist``, as a missing one
does.

* Verbs: ``Identify``, ``ListMetadataFormats``, ``ListSets`` (one set per open section:
  ``setSpec`` the section tipo, ``setName`` its label), ``ListIdentifiers``, ``ListRecords``,
  ``GetRecord``; GET or POST (form-encoded).
* Identifiers: ``oai:arxiu:{archive folder}:{section_tipo}/{section_id}``.
* Datestamps: ``records.updated_at`` in UTC, seconds granularity; ``from``/``until`` take
  ``YYYY-MM-DD`` or ``YYYY-MM-DDThh:mm:ssZ``. In ``ead`` a description's datestamp is the
  latest change of its hierarchy (itself and every record "part of" it, to any depth), so an
  incremental harvest gets a finding aid again when any of its components changed.
* Resumption tokens are stateless: base64 of the query, the last key served, the cursor and
  the list's ``until`` bound (the first page's response date), so records changed during a
  harvest wait for the next incremental one and ``completeListSize`` holds still.
* Every protocol error (``badVerb``, ``badArgument``, ``badResumptionToken``,
  ``cannotDisseminateFormat``, ``idDoesNotExist``, ``noRecordsMatch``, ``noSetHierarchy``) is
  the OAI XML error response, with HTTP 200 as the protocol says.
* Formats: ``oai_dc`` for every record (the Dublin Core exporter's crosswalk); ``ead`` (EAD3,
  the EAD3 exporter's) for the archival descriptions of ``ead1`` and of every table whose rows
  name their parent (a catalogue kept in a spreadsheet, :mod:`~app.core.archive.exporters.
  ead3_tables`): a list in ``ead`` holds the finding aids (descriptions that are part of
  nothing), each with its open hierarchy, and ``GetRecord`` gives any description with
  everything under it. A description whose hierarchy holds a record the gate withholds is
  offered in ``oai_dc`` only.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import re
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, quote, unquote

from lxml import etree
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from app.core.agent.egress import EgressGate
from app.core.archive.exporters import ExportRequest, run_export
from app.core.archive.exporters.dublin_core import dc_element, dc_values
from app.core.archive.exporters.ead3 import NS as EAD3_NS
from app.core.archive.exporters.ead3 import Tree, load_tree, tree_of
from app.core.archive.exporters.ead3_tables import described
from app.core.archive.hierarchy import hierarchy_of
from app.core.archive.ids import SQLITE_MAX
from app.core.archive.importers.ead_fields import SECTION as EAD_SECTION
from app.core.archive.importers.safe_xml import parse_file
from app.core.archive.model import Field, Record, RecordKey, Section
from app.core.archive.records import row_to_record
from app.core.json_types import JsonObject
from app.core.tools.base import Tool, ToolResult
from app.core.tools.registry import build_registry

if TYPE_CHECKING:
    from app.api.context import ApiContext
    from app.core.archive.store import Archive

PATH = "/oai"
POSTGRESQL = "postgresql"
PAGE_SIZE = 50
"""Records (or headers) per list response."""
OAI_NS = "http://www.openarchives.org/OAI/2.0/"
OAI_SCHEMA = "http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd"
DC_PREFIX = "oai_dc"
OAI_DC_NS = "http://www.openarchives.org/OAI/2.0/oai_dc/"
OAI_DC_SCHEMA = "http://www.openarchives.org/OAI/2.0/oai_dc.xsd"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
GRANULARITY = "YYYY-MM-DDThh:mm:ssZ"
READ_TOOL = "dedalo_read_record"
MAX_ID = SQLITE_MAX
"""The largest record id SQLite holds (a larger one names no record)."""
LABEL_LANG = "lg-eng"

_DEFAULT_NS: dict[Any, str] = {None: OAI_NS}
"""The OAI namespace as the default one (typed ``Any``: the stubs want ``str`` prefixes)."""

EAD_PREFIX = "ead"
EAD3_SCHEMA = "https://www.loc.gov/ead/ead3.xsd"
EAD_PAGE_SIZE = 5
"""Finding aids per ``ListRecords`` page in ``ead`` (each holds its whole hierarchy)."""

FORMATS = {
    DC_PREFIX: (OAI_DC_SCHEMA, OAI_DC_NS),
    EAD_PREFIX: (EAD3_SCHEMA, EAD3_NS),
}
"""Metadata prefix → (schema, namespace) of every format served."""

_VERB_ARGS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "Identify": (frozenset(), frozenset()),
    "ListMetadataFormats": (frozenset(), frozenset({"identifier"})),
    "ListSets": (frozenset(), frozenset({"resumptionToken"})),
    "ListIdentifiers": (frozenset({"metadataPrefix"}), frozenset({"from", "until", "set"})),
    "ListRecords": (frozenset({"metadataPrefix"}), frozenset({"from", "until", "set"})),
    "GetRecord": (frozenset({"identifier", "metadataPrefix"}), frozenset()),
}
"""Verb → (required, optional) arguments (``resumptionToken`` is exclusive where allowed)."""
_LISTS = frozenset({"ListIdentifiers", "ListRecords"})
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_SECOND = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


class OaiRefusal(Exception):
    """A protocol error: the ``<error code=...>`` answered instead of the verb."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def routes(ctx: ApiContext) -> list[BaseRoute]:
    """The ``/oai`` route (GET and POST)."""

    async def endpoint(request: Request) -> Response:
        pairs = parse_qsl(request.url.query, keep_blank_values=True)
        if request.method == "POST":
            body = (await request.body()).decode("utf-8", "replace")
            pairs += parse_qsl(body, keep_blank_values=True)
        base_url = str(request.url.replace(query="", fragment=""))
        archive = await run_in_threadpool(ctx.open_archive)
        data = await run_in_threadpool(respond, archive, base_url, pairs)
        return Response(data, media_type="text/xml; charset=utf-8")

    return [Route(PATH, endpoint, methods=["GET", "POST"])]


# -- the response ------------------------------------------------------------------------------


def respond(
    archive: Archive, base_url: str, pairs: list[tuple[str, str]], now: datetime | None = None
) -> bytes:
    """The OAI-PMH response (XML bytes) to the request arguments ``pairs``."""
    moment = (now or datetime.now(UTC)).replace(microsecond=0)
    root = etree.Element(f"{{{OAI_NS}}}OAI-PMH", nsmap=_DEFAULT_NS)
    root.set(f"{{{XSI}}}schemaLocation", f"{OAI_NS} {OAI_SCHEMA}")
    _sub(root, "responseDate", stamp(moment))
    request = _sub(root, "request", base_url)
    try:
        verb, args = parse_arguments(pairs)
        for name, value in args.items():
            request.set(name, value)
        request.set("verb", verb)
        Provider(archive, base_url, moment).answer(root, verb, args)
    except OaiRefusal as refusal:
        if refusal.code in {"badVerb", "badArgument"}:
            request.attrib.clear()  # the protocol: only the base URL for these
        for late in list(root)[2:]:
            root.remove(late)
        error = _sub(root, "error", refusal.message)
        error.set("code", refusal.code)
    return bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8"))


def parse_arguments(pairs: list[tuple[str, str]]) -> tuple[str, dict[str, str]]:
    """The verb and its arguments, checked against the verb's signature.

    Raises:
        OaiRefusal: ``badVerb`` or ``badArgument``.
    """
    verbs = [value for name, value in pairs if name == "verb"]
    if len(verbs) != 1 or verbs[0] not in _VERB_ARGS:
        shown = verbs[0] if len(verbs) == 1 else ("several verbs" if verbs else "no verb")
        raise OaiRefusal("badVerb", f"{shown!r} is not a verb of OAI-PMH 2.0.")
    verb = verbs[0]
    args: dict[str, str] = {}
    for name, value in pairs:
        if name == "verb":
            continue
        if name in args:
            raise OaiRefusal("badArgument", f"The argument {name!r} is repeated.")
        if not value:
            raise OaiRefusal("badArgument", f"The argument {name!r} is empty.")
        args[name] = value
    required, optional = _VERB_ARGS[verb]
    if "resumptionToken" in args and (verb in _LISTS or "resumptionToken" in optional):
        if set(args) != {"resumptionToken"}:
            raise OaiRefusal("badArgument", "resumptionToken is an exclusive argument.")
        return verb, args
    unknown = set(args) - required - optional
    if unknown:
        raise OaiRefusal("badArgument", f"{verb} does not take {', '.join(sorted(unknown))}.")
    missing = required - set(args)
    if missing:
        raise OaiRefusal("badArgument", f"{verb} needs {', '.join(sorted(missing))}.")
    return verb, args


def stamp(moment: datetime) -> str:
    """A UTC datestamp at seconds granularity (``2026-12-02T00:39:04Z``)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def datestamp(updated_at: str) -> str:
    """A record's ``updated_at`` (ISO 8601) as an OAI datestamp."""
    try:
        return stamp(datetime.fromisoformat(updated_at))
    except ValueError:
        return updated_at[:19] + "Z"


def _sub(parent: etree._Element, name: str, text: str | None = None) -> etree._Element:
    node = etree.SubElement(parent, f"{{{OAI_NS}}}{name}")
    if text is not None:
        node.text = text
    return node


# -- the query ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ListQuery:
    """One list request, as carried from page to page by the resumption token."""

    verb: str
    prefix: str
    set_spec: str | None
    since: str | None
    """Lower bound on ``updated_at`` (``YYYY-MM-DDThh:mm:ss``, UTC), inclusive."""
    until: str
    """Upper bound, inclusive: the request's own ``until`` or the first page's response date."""
    after: tuple[str, int] | None = None
    cursor: int = 0

    def token(self, after: tuple[str, int], cursor: int) -> str:
        """The resumption token of the page after ``after``."""
        data = {
            "v": 1,
            "verb": self.verb,
            "p": self.prefix,
            "s": self.set_spec,
            "f": self.since,
            "u": self.until,
            "a": list(after),
            "c": cursor,
        }
        raw = json.dumps(data, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def from_token(cls, verb: str, token: str) -> ListQuery:
        """The query a token carries.

        Raises:
            OaiRefusal: ``badResumptionToken``.
        """
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
            data = json.loads(raw)
            after = data["a"]
            query = cls(
                verb=str(data["verb"]),
                prefix=str(data["p"]),
                set_spec=None if data["s"] is None else str(data["s"]),
                since=None if data["f"] is None else str(data["f"]),
                until=str(data["u"]),
                after=(str(after[0]), int(after[1])),
                cursor=int(data["c"]),
            )
        except (binascii.Error, ValueError, KeyError, TypeError, IndexError) as exc:
            raise OaiRefusal("badResumptionToken", "The resumption token is not valid.") from exc
        bad_key = query.after is not None and not 0 <= query.after[1] <= MAX_ID
        if data.get("v") != 1 or query.verb != verb or query.cursor < 0 or bad_key:
            raise OaiRefusal("badResumptionToken", "The resumption token is not valid here.")
        return query


def bound(value: str, *, upper: bool) -> str:
    """A ``from``/``until`` argument as an ``updated_at`` bound (``YYYY-MM-DDThh:mm:ss``).

    Raises:
        OaiRefusal: ``badArgument`` for anything but the two granularities.
    """
    if _DAY.match(value):
        day = value
        moment = "T23:59:59" if upper else "T00:00:00"
    elif _SECOND.match(value):
        day, moment = value[:10], value[10:19]
    else:
        raise OaiRefusal("badArgument", f"{value!r} is not a date of this repository.")
    try:
        datetime.fromisoformat(day + moment)
    except ValueError as exc:
        raise OaiRefusal("badArgument", f"{value!r} is not a real date.") from exc
    return day + moment


# -- the open records ----------------------------------------------------------------------------

_OPEN_SQL = """
SELECT r.* FROM records r JOIN sections s ON s.tipo = r.section_tipo
WHERE NOT s.restricted AND NOT coalesce(r.restricted, FALSE)
  AND NOT EXISTS (
    SELECT 1 FROM links l
    LEFT JOIN sections ts ON ts.tipo = l.to_section
    LEFT JOIN records t ON t.section_tipo = l.to_section AND t.section_id = l.to_id
    WHERE l.from_section = r.section_tipo AND l.from_id = r.section_id
      AND (ts.tipo IS NULL OR ts.restricted OR coalesce(t.restricted, FALSE)))
"""
"""The candidates: open records in open sections linking to no restricted record (the gate
then decides on each one served). The flags are booleans on both engines (SQLite's 0/1)."""


_TIPO = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
"""A field tipo the hierarchy query may name inline (Arxiu's own: ``ead18``, ``csv1002``)."""


def _hierarchy_sql(parent_fields: Iterable[str]) -> str:
    """The latest ``updated_at`` of record ``r``'s hierarchy (``r`` and all "part of" it, by
    any of ``parent_fields``: ``ead1``'s "part of", a table's parent column)."""
    named = ", ".join(f"'{tipo}'" for tipo in sorted(parent_fields) if _TIPO.match(tipo))
    return f"""(WITH RECURSIVE tree(tipo, id, depth) AS (
    SELECT r.section_tipo, r.section_id, 0
    UNION
    SELECT l.from_section, l.from_id, t.depth + 1 FROM links l
    JOIN tree t ON l.to_section = t.tipo AND l.to_id = t.id
    WHERE l.field_tipo IN ({named or "''"}) AND t.depth < 64)
  SELECT max(x.updated_at) FROM tree t
  JOIN records x ON x.section_tipo = t.tipo AND x.section_id = t.id)"""


@functools.cache
def read_tool() -> Tool:
    """The ``dedalo_read_record`` tool, whose results the gate is asked about."""
    return build_registry().get(READ_TOOL)


@dataclass
class OpenRecords:
    """The records ``/oai`` may serve, as the egress gate sees them for an external model."""

    archive: Archive
    gate: EgressGate = field(init=False)
    tool: Tool = field(init=False)

    def __post_init__(self) -> None:
        self.gate = EgressGate(self.archive, "external", external_content=True)
        self.tool = read_tool()

    def sections(self) -> list[Section]:
        """The open sections (the sets)."""
        return [s for s in self.archive.sections() if not s.restricted]

    @functools.cached_property
    def hierarchies(self) -> dict[str, str]:
        """``section → its "part of" field`` of every open section served in ``ead``:
        ``ead1``, and each table whose rows name their parent (a CSV catalogue's hierarchy,
        written through its columns' roles)."""
        found: dict[str, str] = {}
        for section in self.sections():
            shape = hierarchy_of(self.archive, section.tipo)
            if shape is not None and _TIPO.match(shape.parent_field):
                found[section.tipo] = shape.parent_field
        return found

    def passes(self, record: Record) -> bool:
        """Whether the gate lets ``dedalo_read_record`` hand ``record`` to an external model."""
        args: JsonObject = {"section_tipo": record.section_tipo, "section_id": record.section_id}
        if self.gate.check_call(self.tool, args) is not None:
            return False
        result = ToolResult(
            ok=True, data=record.values, records=(record.key,), sections=(record.section_tipo,)
        )
        return self.gate.check_result(self.tool, result) is None

    def find(self, key: RecordKey) -> Record | None:
        """The open record ``key``, or ``None`` (missing and withheld alike)."""
        with self.archive.db.reading() as conn:
            row = conn.execute(
                _OPEN_SQL + " AND r.section_tipo = ? AND r.section_id = ?",
                (key.section_tipo, key.section_id),
            ).fetchone()
        if row is None:
            return None
        record = row_to_record(row)
        return record if self.passes(record) else None

    def page(self, query: ListQuery, limit: int) -> tuple[list[Record], int]:
        """Up to ``limit`` records after ``query.after``, and the size of the whole list."""
        where, args = _filters(query, self.archive.db.dialect, self.hierarchies)
        with self.archive.db.reading() as conn:
            counted = conn.execute(f"SELECT count(*) FROM ({_OPEN_SQL}{where}) AS o", args)
            total = counted.fetchone()[0]
            page_where, page_args = where, list(args)
            if query.after is not None:
                page_where += " AND (r.section_tipo, r.section_id) > (?, ?)"
                page_args += list(query.after)
            rows = conn.execute(
                f"{_OPEN_SQL}{page_where} ORDER BY r.section_tipo, r.section_id LIMIT ?",
                (*page_args, limit),
            ).fetchall()
        return [row_to_record(r) for r in rows], int(total)

    def hierarchy_changed(self, key: RecordKey) -> str:
        """The latest ``updated_at`` of ``key`` and every record "part of" it."""
        with self.archive.db.reading() as conn:
            row = conn.execute(
                f"SELECT {_hierarchy_sql(self.hierarchies.values())} FROM records r "
                "WHERE r.section_tipo = ? AND r.section_id = ?",
                (key.section_tipo, key.section_id),
            ).fetchone()
        return str(row[0]) if row is not None and row[0] is not None else ""

    def earliest(self) -> str | None:
        """The oldest ``updated_at`` of an open record."""
        with self.archive.db.reading() as conn:
            row = conn.execute(f"SELECT min(updated_at) FROM ({_OPEN_SQL}) AS o").fetchone()
        return None if row is None or row[0] is None else str(row[0])


def _filters(query: ListQuery, dialect: str, hierarchies: dict[str, str]) -> tuple[str, list[Any]]:
    """The list's conditions on ``r`` after :data:`_OPEN_SQL`, in ``dialect``'s SQL
    (``hierarchies``: :attr:`OpenRecords.hierarchies`)."""
    where, args = "", []
    if query.prefix == EAD_PREFIX:  # finding aids: the descriptions that are part of nothing
        tops = (
            "(r.section_tipo = ? AND NOT EXISTS (SELECT 1 FROM links p JOIN records pr"
            " ON pr.section_tipo = p.to_section AND pr.section_id = p.to_id"
            " WHERE p.from_section = r.section_tipo AND p.from_id = r.section_id"
            " AND p.field_tipo = ?))"
        )
        where += f" AND ({' OR '.join([tops] * len(hierarchies)) or 'FALSE'})"
        for section, parent in sorted(hierarchies.items()):
            args += [section, parent]
    if query.set_spec is not None:
        where += " AND r.section_tipo = ?"
        args.append(query.set_spec)
    tree = _hierarchy_sql(hierarchies.values())
    changed = _seconds(tree if query.prefix == EAD_PREFIX else "r.updated_at", dialect)
    bound = "CAST(? AS timestamptz)" if dialect == POSTGRESQL else "?"
    if query.since is not None:
        where += f" AND {changed} >= {bound}"
        args.append(_utc(query.since, dialect))
    where += f" AND {changed} <= {bound}"
    args.append(_utc(query.until, dialect))
    return where, args


def _seconds(changed: str, dialect: str) -> str:
    """A time column cut to whole seconds (the datestamps' granularity): SQLite's ISO text to
    its first 19 characters, PostgreSQL's ``timestamptz`` truncated."""
    if dialect == POSTGRESQL:
        return f"date_trunc('second', {changed})"
    return f"substr({changed}, 1, 19)"


def _utc(moment: str, dialect: str) -> str:
    """A ``YYYY-MM-DDThh:mm:ss`` bound as the engine compares it (UTC said on PostgreSQL)."""
    return moment + "+00:00" if dialect == POSTGRESQL else moment


# -- the verbs ---------------------------------------------------------------------------------


@dataclass
class Provider:
    """Answers one request over the archive's open records."""

    archive: Archive
    base_url: str
    now: datetime
    open: OpenRecords = field(init=False)
    _fields: dict[str, list[Field]] = field(default_factory=dict, init=False)
    _trees: dict[str, tuple[Tree, dict[RecordKey, Record]]] = field(
        default_factory=dict, init=False
    )

    def __post_init__(self) -> None:
        self.open = OpenRecords(self.archive)

    @property
    def repository(self) -> str:
        """The archive's part of every identifier (its folder name, percent-encoded)."""
        return quote(self.archive.folder.name, safe="")

    def identifier(self, key: RecordKey) -> str:
        """The OAI identifier of ``key``."""
        return f"oai:arxiu:{self.repository}:{key.section_tipo}/{key.section_id}"

    def key_of(self, identifier: str) -> RecordKey | None:
        """The record key an identifier of this archive names, else ``None``."""
        prefix = f"oai:arxiu:{self.repository}:"
        if not identifier.startswith(prefix):
            return None
        try:
            key = RecordKey.parse(unquote(identifier[len(prefix) :]))
        except ValueError:
            return None
        return key if key.section_id <= MAX_ID else None

    def answer(self, root: etree._Element, verb: str, args: dict[str, str]) -> None:
        """Append the verb's answer to ``root`` (raises :class:`OaiRefusal`)."""
        verbs: dict[str, Callable[[etree._Element, dict[str, str]], None]] = {
            "Identify": self.identify,
            "ListMetadataFormats": self.list_formats,
            "ListSets": self.list_sets,
            "ListIdentifiers": self.list_items,
            "ListRecords": self.list_items,
            "GetRecord": self.get_record,
        }
        verbs[verb](_sub(root, verb), args)

    def identify(self, node: etree._Element, args: dict[str, str]) -> None:
        """``Identify``."""
        name = self.archive.meta("name") or self.archive.folder.name
        earliest = self.open.earliest()
        _sub(node, "repositoryName", name)
        _sub(node, "baseURL", self.base_url)
        _sub(node, "protocolVersion", "2.0")
        _sub(node, "adminEmail", self.archive.meta("admin_email") or "archivist@localhost")
        _sub(node, "earliestDatestamp", datestamp(earliest) if earliest else stamp(self.now))
        _sub(node, "deletedRecord", "no")
        _sub(node, "granularity", GRANULARITY)

    def list_formats(self, node: etree._Element, args: dict[str, str]) -> None:
        """``ListMetadataFormats`` (of one item, with ``identifier``)."""
        prefixes = list(FORMATS)
        if "identifier" in args:
            prefixes = self.formats_of(self._require(args["identifier"]))
        for prefix in prefixes:
            schema, namespace = FORMATS[prefix]
            item = _sub(node, "metadataFormat")
            _sub(item, "metadataPrefix", prefix)
            _sub(item, "schema", schema)
            _sub(item, "metadataNamespace", namespace)

    def list_sets(self, node: etree._Element, args: dict[str, str]) -> None:
        """``ListSets``: one set per open section (no tokens: the list is always whole)."""
        if "resumptionToken" in args:
            raise OaiRefusal("badResumptionToken", "ListSets is never split: no token is valid.")
        sections = self.open.sections()
        if not sections:
            raise OaiRefusal("noSetHierarchy", "This archive has no open sections.")
        for section in sections:
            item = _sub(node, "set")
            _sub(item, "setSpec", section.tipo)
            _sub(item, "setName", section.label(LABEL_LANG))

    def get_record(self, node: etree._Element, args: dict[str, str]) -> None:
        """``GetRecord``."""
        record = self._require(args["identifier"])
        prefix = args["metadataPrefix"]
        self._check_prefix(prefix)
        if not self.offers(record, prefix):
            raise OaiRefusal("cannotDisseminateFormat", f"This record is not offered as {prefix}.")
        self.record(_sub(node, "record"), record, prefix)

    def list_items(self, node: etree._Element, args: dict[str, str]) -> None:
        """``ListIdentifiers`` and ``ListRecords``, one page, with a resumption token."""
        verb = etree.QName(node).localname
        query = self._query(verb, args)
        size = EAD_PAGE_SIZE if query.prefix == EAD_PREFIX else PAGE_SIZE
        records, total = self.open.page(query, size)
        if total == 0:
            raise OaiRefusal("noRecordsMatch", "No open record matches the request.")
        if not records and query.after is not None:
            raise OaiRefusal("badResumptionToken", "The list ended before this token.")
        shown = 0
        for record in records:
            if not self.open.passes(record) or not self.offers(record, query.prefix):
                continue
            shown += 1
            if verb == "ListRecords":
                self.record(_sub(node, "record"), record, query.prefix)
            else:
                self.header(node, record, query.prefix)
        served = query.cursor + len(records)
        if query.after is None and served >= total:
            if not shown:
                raise OaiRefusal("noRecordsMatch", "No open record matches the request.")
            return  # the whole list in one response: no token
        token = _sub(node, "resumptionToken")
        token.set("completeListSize", str(total))
        token.set("cursor", str(query.cursor))
        if served < total and records:
            last = records[-1]
            token.text = query.token((last.section_tipo, last.section_id), served)

    def _query(self, verb: str, args: dict[str, str]) -> ListQuery:
        if "resumptionToken" in args:
            query = ListQuery.from_token(verb, args["resumptionToken"])
            if query.prefix not in FORMATS:
                raise OaiRefusal("badResumptionToken", "The resumption token is not valid here.")
            return query
        prefix = args["metadataPrefix"]
        self._check_prefix(prefix)
        since = bound(args["from"], upper=False) if "from" in args else None
        until = bound(args["until"], upper=True) if "until" in args else None
        if "from" in args and "until" in args and len(args["from"]) != len(args["until"]):
            raise OaiRefusal("badArgument", "from and until have different granularities.")
        if since is not None and until is not None and since > until:
            raise OaiRefusal("badArgument", "from is later than until.")
        set_spec = args.get("set")
        if set_spec is not None and set_spec not in {s.tipo for s in self.open.sections()}:
            raise OaiRefusal("noRecordsMatch", f"There is no open set {set_spec!r}.")
        now = stamp(self.now)[:19]
        return ListQuery(verb, prefix, set_spec, since, min(until, now) if until else now)

    def _check_prefix(self, prefix: str) -> None:
        if prefix not in FORMATS:
            raise OaiRefusal("cannotDisseminateFormat", f"{prefix!r} is not served here.")

    def _require(self, identifier: str) -> Record:
        key = self.key_of(identifier)
        record = self.open.find(key) if key is not None else None
        if record is None:
            raise OaiRefusal("idDoesNotExist", f"{identifier!r} is not a record of this archive.")
        return record

    # -- records ---------------------------------------------------------------------------
    def header(self, parent: etree._Element, record: Record, prefix: str = DC_PREFIX) -> None:
        """A record's ``<header>`` (in ``ead``, dated by its hierarchy's latest change)."""
        node = _sub(parent, "header")
        changed = record.updated_at
        if prefix == EAD_PREFIX:
            changed = self.open.hierarchy_changed(record.key) or changed
        _sub(node, "identifier", self.identifier(record.key))
        _sub(node, "datestamp", datestamp(changed))
        _sub(node, "setSpec", record.section_tipo)

    def record(self, node: etree._Element, record: Record, prefix: str) -> None:
        """Fill a ``<record>`` with its header and its metadata in ``prefix``."""
        self.header(node, record, prefix)
        metadata = _sub(node, "metadata")
        if prefix == EAD_PREFIX:
            metadata.append(self.finding_aid(record))
        else:
            metadata.append(dc_metadata(self, record))

    def formats_of(self, record: Record) -> list[str]:
        """The prefixes ``record`` is offered in."""
        return [prefix for prefix in FORMATS if self.offers(record, prefix)]

    def offers(self, record: Record, prefix: str) -> bool:
        """Whether ``record`` is offered in ``prefix``: ``oai_dc`` always; ``ead`` for an
        archival description whose whole open hierarchy the gate lets out."""
        if prefix == EAD_PREFIX:
            return record.section_tipo in self.open.hierarchies and self._hierarchy_open(record.key)
        return prefix == DC_PREFIX

    def _tree(self, section: str) -> tuple[Tree, dict[RecordKey, Record]]:
        """The hierarchy of ``section`` as the EAD3 exporter writes it, and its records as
        stored (what the gate is asked about)."""
        if section not in self._trees:
            if section == EAD_SECTION:
                tree = load_tree(self.archive, section)
                self._trees[section] = (tree, tree.records)
            else:
                table = described(self.archive, section)
                restricted = self.archive.section(section).restricted
                self._trees[section] = (tree_of(table.records, restricted), table.stored)
        return self._trees[section]

    def _hierarchy_open(self, key: RecordKey) -> bool:
        """Whether every record the EAD3 of ``key`` holds passes the gate (the exporter leaves
        restricted ones out with everything under them)."""
        tree, stored = self._tree(key.section_tipo)
        stack = [key]
        while stack:
            current = stack.pop()
            if current not in tree.records or tree.restricted(current):
                continue
            if not self.open.passes(stored[current]):
                return False
            stack.extend(tree.children.get(current, []))
        return True

    def finding_aid(self, record: Record) -> etree._Element:
        """The EAD3 ``<ead>`` of ``record`` and its open hierarchy (the EAD3 exporter's)."""
        with tempfile.TemporaryDirectory(prefix="arxiu-oai-") as folder:
            out = Path(folder) / "ead.xml"
            request = ExportRequest(record.section_tipo, out, record=record.key)
            run_export(self.archive, "ead3", request)
            return parse_file(out)

    def fields(self, section_tipo: str) -> list[Field]:
        """A section's fields (read once per request)."""
        if section_tipo not in self._fields:
            self._fields[section_tipo] = self.archive.fields(section_tipo)
        return self._fields[section_tipo]


# -- oai_dc --------------------------------------------------------------------------------------


def dc_metadata(provider: Provider, record: Record) -> etree._Element:
    """``<oai_dc:dc>`` of any record: the Dublin Core exporter's crosswalk
    (:func:`~app.core.archive.exporters.dublin_core.dc_values`), with characters XML cannot
    carry dropped."""
    fields = provider.fields(record.section_tipo)
    values = dc_values(provider.archive, record, fields)
    return dc_element([replace(v, text=_NOT_XML.sub("", v.text)) for v in values])
