"""The OAI-PMH harvester: ``arxiu import oai URL [--set S] [--from DATE]``.

:func:`harvest` asks a repository for ``ListRecords`` and follows its resumption tokens until
the list ends. Each record goes through the crosswalk of its metadata format
(:mod:`.oai_crosswalks`; ``oai_dc``: the Dublin Core importer's, one record each; ``ead``/
``oai_ead``: the EAD importer's, a whole finding aid each, see :mod:`.oai_ead`) under the source
``the base URL, normalised`` (:func:`normalise_base_url`), so harvesting again updates records
instead of duplicating them. ``summary.read`` counts the records read: one per ``oai_dc``
record, one per archival unit (archdesc or component) of an EAD finding aid, and one per
deleted or unusable OAI record.

* **Incremental.** The ``responseDate`` of the first response of the last complete harvest is
  kept per (base URL, set, metadata prefix) in the archive's meta (:func:`harvest_key`) and
  sent as ``from=`` next time (cut to the day when the repository's granularity, read from
  ``Identify``, is ``YYYY-MM-DD``); ``from_date`` overrides it. A harvest that stops early
  stores nothing, so the next one asks again from the same point.
* **Deleted records** (``header/@status="deleted"``) are deleted locally, with an audit row
  holding their last values, when the archive still has them from this source *and no person
  has edited them* (no audit row of their own) *and no other record links to them*. Otherwise
  they are kept and listed as skips (``import.oai_deleted_kept``), so a person's work never
  vanishes because a repository withdrew a record. ``summary.deleted`` counts the deletions.
  What a deleted record stands for is the reader's to say (:meth:`~.oai_reader.Reader.withdrawn`):
  for a finding aid, its whole hierarchy, deepest first, and the components a new version of
  it left out (:mod:`.oai_ead`).
* **Transient HTTP failures** (429, 500, 502, 503, 504, dropped connections, timeouts) are
  retried with exponential backoff, honouring ``Retry-After``, at most
  :attr:`RetryPolicy.attempts` times; then ``import.oai_unreachable``.
* **OAI errors**: ``noRecordsMatch`` is an empty harvest, not an error. On the first request
  ``badArgument``, ``cannotDisseminateFormat``, ``idDoesNotExist``, ``badVerb`` and anything
  else raise a coded :class:`~app.core.errors.ImportFailed`; once records were harvested, an
  error (``badResumptionToken`` above all, or ``import.oai_unreachable``, or a malformed page)
  is kept in ``summary.error`` and what was harvested stays.

======================================  =============================================
code                                    why
======================================  =============================================
``import.oai_bad_url``                  not an http(s) URL with a host
``import.oai_bad_date``                 ``from`` is not ``YYYY-MM-DD[Thh:mm:ssZ]``
``import.oai_format_unsupported``       no crosswalk for that metadata prefix
``import.oai_bad_argument``             the repository refused the request's arguments
``import.oai_cannot_disseminate``       the repository does not offer that format
``import.oai_id_does_not_exist``        the repository knows no such record
``import.oai_bad_token``                the repository refused a resumption token
``import.oai_token_loop``               the repository sent the same token twice
``import.oai_error``                    any other OAI error code
``import.oai_not_oai``                  the answer is XML but not an OAI-PMH response
``import.oai_http``                     an HTTP status that is neither OK nor transient
``import.oai_unreachable``              still failing after every retry
======================================  =============================================

Every response is parsed by :func:`~app.core.archive.importers.safe_xml.parse_bytes`.
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

import httpx

from app.core.archive.importers.base import (
    ImportOptions,
    ImportRun,
    ImportSummary,
    ProgressFn,
    Skip,
    ensure_schema,
)
from app.core.archive.importers.oai_crosswalks import CROSSWALKS, Crosswalk
from app.core.archive.importers.oai_reader import Reader, Target, Withdrawal, line_of
from app.core.archive.importers.safe_xml import (
    MAX_BYTES,
    Element,
    attr,
    child,
    children,
    parse_bytes,
    text_of,
    too_large,
)
from app.core.archive.model import RecordKey
from app.core.errors import ArchiveError, ImportFailed
from app.core.phrases import Phrase, PhraseParam

if TYPE_CHECKING:
    from app.core.archive.store import Archive

KIND = "oai"
OAI_NS = "http://www.openarchives.org/OAI/2.0/"
META_PREFIX = "oai.harvested:"
"""Archive meta key prefix of the last complete harvest's ``responseDate``."""
TRANSIENT = frozenset({429, 500, 502, 503, 504})
AUDIT_ACTOR = "oai-harvest"
DAY = "YYYY-MM-DD"

NO_RECORDS = "noRecordsMatch"
BAD_RECORD = "import.oai_bad_record"
DELETED_KEPT = "import.oai_deleted_kept"
ERROR_CODES = {
    "badArgument": "import.oai_bad_argument",
    "cannotDisseminateFormat": "import.oai_cannot_disseminate",
    "idDoesNotExist": "import.oai_id_does_not_exist",
    "badResumptionToken": "import.oai_bad_token",
}
"""OAI error code → the harvester's coded error (others: ``import.oai_error``)."""

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}Z)?$")

Sleep = Callable[[float], None]


@dataclass(frozen=True)
class RetryPolicy:
    """How long to wait for a repository, and how often to try again."""

    attempts: int = 6
    """Tries per request, the first included."""
    base_delay_s: float = 1.0
    """The first backoff; each further one doubles."""
    max_delay_s: float = 120.0
    """The longest wait, ``Retry-After`` included."""
    timeout_s: float = 60.0
    """Per read/write of one request (connecting: at most 15 s)."""


@dataclass
class _Harvest:
    """One harvest's request and state."""

    archive: Archive
    source: str
    set_spec: str | None
    prefix: str
    crosswalk: Crosswalk
    run: ImportRun
    progress: ProgressFn | None
    reader: Reader = field(init=False)
    from_date: str | None = None
    response_date: str | None = None
    pages: int = 0
    listed: int = 0
    """``<record>`` elements seen (the progress; ``completeListSize`` counts them too)."""
    deleted: list[tuple[str, int, str]] = field(default_factory=list)
    """``(identifier, line, where)`` of the deleted records of the page."""
    withdrawals: list[Withdrawal] = field(default_factory=list)
    """What the reader found withdrawn on the page besides (components left out)."""
    tokens: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.reader = self.crosswalk.start(Target(self.archive, self.run, self.source))


# -- entry points ------------------------------------------------------------------------------


def import_oai(
    archive: Archive, url: str, options: ImportOptions, progress: ProgressFn | None = None
) -> ImportSummary:
    """``run_import``'s entry: :func:`harvest` with the command's options."""
    return harvest(
        archive,
        url,
        set_spec=options.set_spec,
        from_date=options.from_date,
        metadata_prefix=options.metadata_prefix or "oai_dc",
        progress=progress,
    )


def harvest(
    archive: Archive,
    base_url: str,
    *,
    set_spec: str | None = None,
    from_date: str | None = None,
    metadata_prefix: str = "oai_dc",
    progress: ProgressFn | None = None,
    retry: RetryPolicy | None = None,
    sleep: Sleep = time.sleep,
) -> ImportSummary:
    """Harvest ``base_url`` into ``archive`` (see the module doc).

    Args:
        archive: the open archive.
        base_url: the repository's OAI-PMH base URL.
        set_spec: only this set.
        from_date: ask for records changed since this date (else since the last harvest).
        metadata_prefix: ``oai_dc`` (default), ``oai_ead`` (ArchivesSpace's EAD) or ``ead``
            (Arxiu's EAD3): a finding aid per record, each with its whole hierarchy.
        progress: ``progress(records read, complete list size or records read)``.
        retry: the retry policy (default :class:`RetryPolicy`).
        sleep: how to wait between tries.

    Raises:
        ImportFailed: a bad URL, date or format, or an error on the first request.
    """
    source = normalise_base_url(base_url)
    if from_date is not None and not _DATE.match(from_date):
        raise ImportFailed(
            "import.oai_bad_date",
            Phrase.of("{date!r} is not an OAI-PMH date.", date=from_date),
            hint="Use YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ (UTC).",
            details={"from": from_date},
        )
    summary = ImportSummary(KIND, source, read_unit="records")
    crosswalk = crosswalk_for(metadata_prefix)
    state = _Harvest(
        archive,
        source,
        set_spec or None,
        metadata_prefix,
        crosswalk,
        ImportRun(archive, summary, source),
        progress,
    )
    with _Fetcher(base_url.strip(), retry or RetryPolicy(), sleep) as fetch:  # as given
        granularity = _granularity(fetch)
        stored = None if from_date else archive.meta(harvest_key(source, set_spec, metadata_prefix))
        state.from_date = _since(from_date or stored, granularity)
        _walk(state, fetch)
    if summary.error is None and state.response_date:
        archive.set_meta(harvest_key(source, set_spec, metadata_prefix), state.response_date)
    return summary


def normalise_base_url(url: str) -> str:
    """``url`` as the harvest's source: scheme and host lower-cased, default port, fragment and
    trailing slash dropped (``HTTP://Example.org:80/oai/`` → ``http://example.org/oai``).

    Raises:
        ImportFailed: ``import.oai_bad_url``.
    """
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise _bad_url(url) from exc
    scheme = parts.scheme.lower()
    if scheme not in {"http", "https"} or not parts.hostname:
        raise _bad_url(url)
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    if port is not None and (scheme, port) not in {("http", 80), ("https", 443)}:
        host = f"{host}:{port}"
    return urlunsplit((scheme, host, parts.path.rstrip("/"), parts.query, ""))


def harvest_key(source: str, set_spec: str | None, prefix: str) -> str:
    """The archive meta key holding the last complete harvest's ``responseDate``."""
    return f"{META_PREFIX}{source}|{set_spec or ''}|{prefix}"


def crosswalk_for(prefix: str) -> Crosswalk:
    """The crosswalk of metadata ``prefix``.

    Raises:
        ImportFailed: ``import.oai_format_unsupported``.
    """
    found = CROSSWALKS.get(prefix)
    crosswalk = found() if found is not None else None
    if crosswalk is None:
        raise ImportFailed(
            "import.oai_format_unsupported",
            Phrase.of(
                "Arxiu cannot read records in the metadata format {prefix!r}.", prefix=prefix
            ),
            hint="Harvest with --metadata-prefix oai_dc (every repository offers it), "
            "or ead/oai_ead for finding aids.",
            details={"metadata_prefix": prefix},
        )
    return crosswalk


# -- the harvest -------------------------------------------------------------------------------


def _walk(state: _Harvest, fetch: _Fetcher) -> None:
    """Ask for every page of the list, writing each page's records."""
    first = {"verb": "ListRecords", "metadataPrefix": state.prefix}
    if state.set_spec:
        first["set"] = state.set_spec
    if state.from_date:
        first["from"] = state.from_date
    params: dict[str, str] | None = first
    summary = state.run.summary
    while params is not None:
        state.pages += 1
        try:
            params = _page(state, fetch, params)
        except ImportFailed as exc:
            if state.pages == 1:
                raise
            summary.error = exc
            params = None
        state.run.flush()
        _apply_deletions(state)
    if state.progress is not None:
        state.progress(state.listed, state.listed)


def _page(state: _Harvest, fetch: _Fetcher, params: dict[str, str]) -> dict[str, str] | None:
    """Fetch and import one page; the next page's parameters, or ``None`` at the end."""
    where = f"{state.source} page {state.pages}"
    root = fetch.oai(params, where)
    if state.response_date is None:
        state.response_date = text_of(child(root, "responseDate")) or None
    error = child(root, "error")
    if error is not None:
        if attr(error, "code") == NO_RECORDS:
            return None
        raise oai_error(error, where, params)
    listing = child(root, "ListRecords")
    if listing is None:
        raise _not_oai(where)
    live = []
    for record in children(listing, "record"):
        state.listed += 1
        if _usable(state, record, where):
            live.append(record)
    if live:
        ensure_schema(state.archive, state.crosswalk.schema)
        state.withdrawals.extend(state.reader.read(live, where))
    token = child(listing, "resumptionToken")
    value = (token.text or "").strip() if token is not None else ""
    if value in state.tokens:
        raise ImportFailed(
            "import.oai_token_loop",
            Phrase.of(
                "{where}: the repository sent a resumption token it had sent before.", where=where
            ),
            hint="The repository's list does not end; what was harvested so far is kept.",
            category="provider",
            details={"where": where},
        )
    state.tokens.add(value)
    if state.progress is not None:
        size = attr(token, "completeListSize")
        total = int(size) if size.isdigit() else state.listed
        state.progress(state.listed, max(total, state.listed))
    return {"verb": "ListRecords", "resumptionToken": value} if value else None


def _usable(state: _Harvest, record: Element, where: str) -> bool:
    """Whether a ``<record>`` goes to the crosswalk; a deleted one is queued, a bad one skipped
    (both counted as read here: the reader counts the others)."""
    line = line_of(record)
    header = child(record, "header")
    identifier = text_of(child(header, "identifier")) if header is not None else ""
    summary = state.run.summary
    metadata = child(record, "metadata")
    deleted = attr(header, "status") == "deleted"
    if identifier and not deleted and metadata is not None and child(metadata) is not None:
        return True
    summary.read += 1
    if not identifier:
        summary.skipped.append(Skip.said(line, where, BAD_RECORD, "a record without an identifier"))
    elif deleted:
        state.deleted.append((identifier, line, where))
    else:
        reason = "{identifier}: a record without metadata"
        summary.skipped.append(Skip.said(line, where, BAD_RECORD, reason, identifier=identifier))
    return False


def _apply_deletions(state: _Harvest) -> None:
    """Delete the records the repository withdrew, unless a person edited or links them."""
    pending = [state.reader.withdrawn(*deleted) for deleted in state.deleted]
    withdrawals = [w for w in pending if w is not None] + state.withdrawals
    state.deleted.clear()
    state.withdrawals = []
    for withdrawal in withdrawals:
        gone = [key for key in withdrawal.keys if _withdraw(state, withdrawal, key)]
        state.reader.forget(withdrawal, gone)


def _withdraw(state: _Harvest, withdrawal: Withdrawal, key: RecordKey) -> bool:
    """Delete one withdrawn record, or report why it is kept; whether it was deleted."""
    archive, summary = state.archive, state.run.summary
    if archive.find_record(key) is None:
        return False  # already gone
    why = Phrase.of(withdrawal.why)  # "deleted upstream", "left out of its finding aid upstream"
    said: dict[str, PhraseParam] = {
        "identifier": withdrawal.identifier,
        "why": why,
        "key": str(key),
    }
    if _edited_locally(archive, key):
        reason = "{identifier}: {why}, kept because it was edited here ({key})"
        skip = Skip.said(withdrawal.line, withdrawal.where, DELETED_KEPT, reason, **said)
        summary.skipped.append(skip)
        return False
    try:
        archive.delete_record(key, audit={"actor": AUDIT_ACTOR, "op_id": withdrawal.identifier})
    except ArchiveError as exc:
        if exc.code != "archive.record_linked":
            raise
        reason = "{identifier}: {why}, kept because other records link to {key}"
        skip = Skip.said(withdrawal.line, withdrawal.where, DELETED_KEPT, reason, **said)
        summary.skipped.append(skip)
        return False
    _forget_external(archive, state.source, key)
    summary.deleted += 1
    return True


def _edited_locally(archive: Archive, key: RecordKey) -> bool:
    """Whether a person changed the record here (imports write no audit rows; people do)."""
    with archive.db.reading() as conn:
        row = conn.execute(
            "SELECT 1 FROM audit WHERE section_tipo = ? AND section_id = ? "
            "AND coalesce(actor, '') != ? LIMIT 1",
            (key.section_tipo, key.section_id, AUDIT_ACTOR),
        ).fetchone()
    return row is not None


def _forget_external(archive: Archive, source: str, key: RecordKey) -> None:
    """Drop the id mapping of a deleted record: if it comes back, it gets a new id."""
    archive.db.write(
        lambda c: c.execute(
            "DELETE FROM external_ids WHERE source = ? AND section_tipo = ? AND section_id = ?",
            (source, key.section_tipo, key.section_id),
        )
    )


def _granularity(fetch: _Fetcher) -> str:
    """The repository's datestamp granularity, from ``Identify``."""
    where = f"{fetch.base_url} Identify"
    params = {"verb": "Identify"}
    root = fetch.oai(params, where)
    error = child(root, "error")
    if error is not None:
        raise oai_error(error, where, params)
    identify = child(root, "Identify")
    if identify is None:
        raise _not_oai(where)
    return text_of(child(identify, "granularity")) or DAY


def _since(date: str | None, granularity: str) -> str | None:
    """``date`` in the repository's granularity (a full UTC datetime cut to the day)."""
    if not date:
        return None
    return date[:10] if granularity == DAY else date


# -- errors ------------------------------------------------------------------------------------


def oai_error(error: Element, where: str, params: dict[str, str]) -> ImportFailed:
    """The coded error for an OAI ``<error code=...>`` element."""
    code = attr(error, "code")
    text = text_of(error)
    asked = {k: v for k, v in params.items() if k != "resumptionToken"}
    hints = {
        "badArgument": "Check --set and --from (YYYY-MM-DD).",
        "cannotDisseminateFormat": "Harvest with --metadata-prefix oai_dc.",
        "badResumptionToken": "Harvest again: the repository forgot where the list was.",
        "idDoesNotExist": "Check the record's identifier.",
    }
    answer: str | Phrase = code or Phrase.of("an error")
    if text:
        message = Phrase.of(
            "{where}: the repository answered {answer}: {text}",
            where=where,
            answer=answer,
            text=text,
        )
    else:
        message = Phrase.of(
            "{where}: the repository answered {answer}.", where=where, answer=answer
        )
    return ImportFailed(
        ERROR_CODES.get(code, "import.oai_error"),
        message,
        hint=hints.get(code, "Check the base URL and the options."),
        category="provider",
        details={"oai_code": code, "where": where, "request": asked},
    )


def _bad_url(url: str) -> ImportFailed:
    return ImportFailed(
        "import.oai_bad_url",
        Phrase.of("{url!r} is not the address of an OAI-PMH repository.", url=url),
        hint="Give the repository's base URL, such as https://example.org/oai.",
        details={"url": url},
    )


def _not_oai(where: str) -> ImportFailed:
    return ImportFailed(
        "import.oai_not_oai",
        Phrase.of("{where} is XML but not the OAI-PMH answer that was asked for.", where=where),
        hint="Check that the URL is the repository's OAI-PMH base URL.",
        category="provider",
        details={"where": where},
    )


# -- HTTP --------------------------------------------------------------------------------------


class _Fetcher:
    """GETs OAI-PMH requests of one repository, retrying transient failures."""

    def __init__(self, base_url: str, policy: RetryPolicy, sleep: Sleep) -> None:
        self.base_url = base_url
        self.policy = policy
        self.sleep = sleep
        timeout = httpx.Timeout(policy.timeout_s, connect=min(15.0, policy.timeout_s))
        self.client = httpx.Client(
            timeout=timeout,
            follow_redirects=True,
            headers={"User-Agent": "Arxiu OAI-PMH harvester", "Accept": "text/xml"},
        )

    def __enter__(self) -> _Fetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.close()

    def oai(self, params: dict[str, str], where: str) -> Element:
        """The parsed ``<OAI-PMH>`` root answering ``params``.

        Raises:
            ImportFailed: ``import.oai_unreachable``, ``import.oai_http``, ``import.oai_not_oai``
                and the parse errors of ``safe_xml``.
        """
        root = parse_bytes(self.get(params, where), where)
        if root.tag != f"{{{OAI_NS}}}OAI-PMH":
            raise _not_oai(where)
        return root

    def get(self, params: dict[str, str], where: str) -> bytes:
        """The body answering ``params``, after at most ``policy.attempts`` tries."""
        last = ""
        for attempt in range(self.policy.attempts):
            wait: float | None = None
            try:
                status, body, retry_after = self._once(params)
            except httpx.TransportError as exc:
                last = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            else:
                if status == 200:
                    return body
                if status not in TRANSIENT:
                    raise _http_error(where, status)
                last = f"HTTP {status}"
                wait = retry_after
            if attempt + 1 < self.policy.attempts:
                self.sleep(self._delay(attempt, wait))
        raise ImportFailed(
            "import.oai_unreachable",
            Phrase.of(
                "{where}: the repository did not answer after {attempts} tries ({last}).",
                where=where,
                attempts=self.policy.attempts,
                last=last,
            ),
            hint="Try again later; what was harvested so far is kept.",
            category="environment",
            retryable=True,
            details={"where": where, "attempts": self.policy.attempts, "last": last},
        )

    def _once(self, params: dict[str, str]) -> tuple[int, bytes, float | None]:
        """One GET: its status, its body (bounded) and its ``Retry-After`` in seconds."""
        with self.client.stream("GET", self.base_url, params=params) as response:
            status = response.status_code
            if status in TRANSIENT:
                return status, b"", retry_after_s(response.headers)
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > MAX_BYTES:
                    raise too_large(self.base_url, size)
                chunks.append(chunk)
            body = b"".join(chunks)
            if status != 200 and b"<OAI-PMH" in body[:4096]:
                status = 200  # an OAI error sent with a 4xx status: read it as the protocol says
            return status, body, None

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(self.policy.max_delay_s, max(0.0, retry_after))
        return min(self.policy.max_delay_s, self.policy.base_delay_s * 2.0**attempt)


def retry_after_s(headers: httpx.Headers, now: datetime | None = None) -> float | None:
    """A ``Retry-After`` header in seconds (delta-seconds or an HTTP date), else ``None``."""
    value = headers.get("retry-after", "").strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _http_error(where: str, status: int) -> ImportFailed:
    return ImportFailed(
        "import.oai_http",
        Phrase.of("{where}: the repository answered HTTP {status}.", where=where, status=status),
        hint="Check the base URL.",
        category="provider",
        details={"where": where, "status": status},
    )
