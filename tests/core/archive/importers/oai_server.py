"""A small OAI-PMH repository on 127.0.0.1 for the harvester's tests, serving real records.

It reads the Caltech static-repository files (``oai-dc/caltech``) with lxml, one set per file
(``resources-197``, ``resources-34``), or real EAD finding aids (:func:`load_ead`: the ANF files
of ``ead/anf``, each a record whose metadata is its ``<ead>``; the ArchivesSpace ``oai_ead``
responses of ``ead/caltech-aspace-oai``, their own records), and answers ``Identify`` and
``ListRecords`` in pages of ``page_size`` with resumption tokens, ``from``/``until``/``set``
filtering and ``noRecordsMatch``. Every request's arguments are logged with the time it arrived.

Faults are injected per ``ListRecords`` request number (1-based), so a test says exactly which
request fails: ``"503"`` (with ``Retry-After: 1``), ``"404"``, ``"drop"`` (the connection
closes without an answer), ``"malformed"`` (a truncated XML body), ``"bad_token"``
(``badResumptionToken``), ``"repeat"`` (the token asked with is sent back), ``"slow"`` (2 s
of silence, then the connection closes).
``fail_from`` makes every ``ListRecords`` request from that number on answer 503.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit
from xml.sax.saxutils import escape

from lxml import etree

OAI = "http://www.openarchives.org/OAI/2.0/"
DC = "http://purl.org/dc/elements/1.1/"
NS = {"oai": OAI, "dc": DC}
EAD_DAY = "2024-05-02T10:00:00Z"
"""The datestamp of every finding aid :func:`load_ead` reads."""
SECONDS = "YYYY-MM-DDThh:mm:ssZ"
SLOW = "X-Test-Slow"


def stamp(moment: datetime | None = None) -> str:
    """A UTC datestamp in seconds granularity."""
    return (moment or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Item:
    """One record of the repository (``metadata`` ``None``: deleted)."""

    identifier: str
    datestamp: str
    set_spec: str
    metadata: bytes | None


def load_caltech(folder: Path) -> list[Item]:
    """Every ``oai:record`` of the static-repository files in ``folder``, one set per file."""
    items: list[Item] = []
    for path in sorted(folder.glob("*.xml")):
        set_spec = path.stem.rsplit("-", 2)[-2] + "-" + path.stem.rsplit("-", 1)[-1]
        root = etree.parse(str(path)).getroot()
        for record in root.iterfind(".//oai:record", NS):
            identifier = record.findtext("oai:header/oai:identifier", namespaces=NS).strip()
            day = record.findtext("oai:header/oai:datestamp", namespaces=NS).strip()
            dc = record.find("oai:metadata/*", NS)
            items.append(Item(identifier, day + "T00:00:00Z", set_spec, etree.tostring(dc)))
    return items


def load_ead(folder: Path, set_spec: str) -> list[Item]:
    """Every finding aid of ``folder``: a bare ``<ead>`` file becomes the record
    ``oai:test:{EADID}`` (an EAD without a namespace gets ``xmlns=""``, so that it stays out
    of the OAI namespace); an OAI-PMH response keeps its records' identifiers."""
    parser = etree.XMLParser(load_dtd=False, no_network=True, resolve_entities=False)
    items: list[Item] = []
    for path in sorted(folder.glob("*.xml")):
        root = etree.parse(str(path), parser).getroot()
        if etree.QName(root).localname == "ead":
            identifier = f"oai:test:{root.findtext('eadheader/eadid')}"
            body = etree.tostring(root)
            if etree.QName(root).namespace is None:
                body = body.replace(b"<ead", b'<ead xmlns=""', 1)
            items.append(Item(identifier, EAD_DAY, set_spec, body))
            continue
        for record in root.iterfind(".//oai:record", NS):
            identifier = record.findtext("oai:header/oai:identifier", namespaces=NS).strip()
            ead = record.find("oai:metadata/*", NS)
            items.append(Item(identifier, EAD_DAY, set_spec, etree.tostring(ead)))
    return items


@dataclass
class OaiServer:
    """The repository, its request log and its faults."""

    items: list[Item]
    page_size: int = 500
    granularity: str = SECONDS
    formats: frozenset[str] = frozenset({"oai_dc"})
    faults: dict[int, str] = field(default_factory=dict)
    fail_from: int | None = None
    error_status: int = 200
    """The HTTP status of OAI error answers (some repositories send 400)."""
    log: list[tuple[float, dict[str, str]]] = field(default_factory=list)
    list_requests: int = 0
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        """The base URL."""
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/oai"

    def start(self) -> OaiServer:
        """Serve in a thread."""
        handler = type("Handler", (_Handler,), {"repository": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        """Stop serving."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def requests(self, verb: str = "ListRecords") -> list[dict[str, str]]:
        """The arguments of every request, of one verb (the token counts as ListRecords)."""
        return [args for _, args in self.log if args.get("verb") == verb]

    def change(self, identifier: str, title: str) -> None:
        """Give a record a new first title and a datestamp of now."""
        item = self._find(identifier)
        assert item.metadata is not None
        dc = etree.fromstring(item.metadata)
        dc.find("dc:title", NS).text = title
        item.metadata = etree.tostring(dc)
        item.datestamp = stamp()

    def replace(self, identifier: str, metadata: bytes) -> None:
        """Give a record new metadata and a datestamp of now."""
        item = self._find(identifier)
        item.metadata = metadata
        item.datestamp = stamp()

    def delete(self, identifier: str) -> None:
        """Withdraw a record (it is then served as a deleted header)."""
        item = self._find(identifier)
        item.metadata = None
        item.datestamp = stamp()

    def _find(self, identifier: str) -> Item:
        return next(i for i in self.items if i.identifier == identifier)

    # -- answers ---------------------------------------------------------------------------
    def answer(self, args: dict[str, str]) -> tuple[int, bytes, dict[str, str]] | None:
        """The status, body and headers for ``args`` (``None``: drop the connection)."""
        with self._lock:
            self.log.append((time.monotonic(), dict(args)))
            verb = args.get("verb")
            if verb == "Identify":
                return 200, self._identify(), {}
            if verb != "ListRecords":
                return 200, self._error(args, "badVerb", "Illegal verb"), {}
            self.list_requests += 1
            fault = self.faults.get(self.list_requests)
            if self.fail_from is not None and self.list_requests >= self.fail_from:
                fault = "503"
            if fault == "503":
                return 503, b"busy", {"Retry-After": "1"}
            if fault == "drop":
                return None
            if fault == "404":
                return 404, b"Not Found", {}
            if fault == "slow":
                return 200, b"", {SLOW: "2"}  # the handler waits 2 s and then sends nothing
            body = self._list(args, fault == "bad_token", fault == "repeat")
            if fault == "malformed":
                body = body[: len(body) // 2]
            return (self.error_status if b"<error " in body else 200), body, {}

    def _identify(self) -> bytes:
        return self._envelope(
            '<request verb="Identify">oai</request><Identify>'
            "<repositoryName>Caltech test</repositoryName><baseURL>oai</baseURL>"
            "<protocolVersion>2.0</protocolVersion><adminEmail>a@example.org</adminEmail>"
            "<earliestDatestamp>2023-09-05T00:00:00Z</earliestDatestamp>"
            f"<deletedRecord>transient</deletedRecord><granularity>{self.granularity}"
            "</granularity></Identify>"
        )

    def _list(self, args: dict[str, str], bad_token: bool, repeat: bool = False) -> bytes:
        token = args.get("resumptionToken")
        if token is not None:
            if bad_token:
                return self._error(args, "badResumptionToken", "expired")
            offset, set_spec, since, prefix = token.split("!")
        else:
            offset, set_spec, since = "0", args.get("set", ""), args.get("from", "")
            prefix = args.get("metadataPrefix", "")
            if " " in set_spec:
                return self._error(args, "badArgument", "bad set")
            if prefix not in self.formats:
                return self._error(args, "cannotDisseminateFormat", prefix)
        since = since + "T00:00:00Z" if len(since) == 10 else since
        chosen = [
            i
            for i in self.items
            if (not set_spec or i.set_spec == set_spec) and (not since or i.datestamp >= since)
        ]
        if not chosen:
            return self._error(args, "noRecordsMatch", "nothing")
        start = int(offset)
        page = chosen[start : start + self.page_size]
        parts = ['<request verb="ListRecords">oai</request><ListRecords>']
        parts.extend(self._record(item) for item in page)
        end = start + len(page)
        next_token = f"{end}!{set_spec}!{since}!{prefix}" if end < len(chosen) else ""
        if repeat and token is not None:
            next_token = token  # a repository whose list never ends
        parts.append(
            f'<resumptionToken completeListSize="{len(chosen)}" cursor="{start}">'
            f"{escape(next_token)}</resumptionToken></ListRecords>"
        )
        return self._envelope("".join(parts))

    def _record(self, item: Item) -> str:
        day = item.datestamp[:10] if self.granularity != SECONDS else item.datestamp
        status = ' status="deleted"' if item.metadata is None else ""
        header = (
            f"<header{status}><identifier>{escape(item.identifier)}</identifier>"
            f"<datestamp>{day}</datestamp><setSpec>{item.set_spec}</setSpec></header>"
        )
        if item.metadata is None:
            return f"<record>{header}</record>"
        return f"<record>{header}<metadata>{item.metadata.decode()}</metadata></record>"

    def _error(self, args: dict[str, str], code: str, text: str) -> bytes:
        return self._envelope(f'<request>oai</request><error code="{code}">{text}</error>')

    def _envelope(self, inner: str) -> bytes:
        return (
            f'<?xml version="1.0" encoding="UTF-8"?><OAI-PMH xmlns="{OAI}">'
            f"<responseDate>{stamp()}</responseDate>{inner}</OAI-PMH>"
        ).encode()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    repository: OaiServer

    def do_GET(self) -> None:
        query = parse_qs(urlsplit(self.path).query)
        args = {k: v[0] for k, v in query.items()}
        answer = self.repository.answer(args)
        if answer is None:
            self.close_connection = True
            return
        status, body, headers = answer
        if SLOW in headers:
            time.sleep(float(headers[SLOW]))
            self.close_connection = True
            return
        self.send_response(status)
        self.send_header("Content-Type", "text/xml; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the repository keeps its own log."""
