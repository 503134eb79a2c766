"""Importer of OHMS oral histories (Oral History Metadata Synchronizer XML, 5.x and 6.0).

PATH is an OHMS XML file or a folder of them (its ``*.xml`` files, in name order). Each
``ROOT/record`` is one interview, one record of section ``ohms1`` "Oral-history interviews
(OHMS)"; source ``ohms``, external id = the ``accession`` (``OH0344``), else ``id:`` + the
record's ``@id``, else ``file:`` + the file's stem. Every file is parsed with
:mod:`~app.core.archive.importers.safe_xml`; a file that is not well-formed (or declares
entities, or is too large or deep) is skipped with its code and the others are imported.

========  ==================  =============  ===================================================
tipo      label               kind           from
========  ==================  =============  ===================================================
ohms2     title               text           ``title``
ohms3     accession           text           ``accession``
ohms4     interviewees        relation       ``interviewee`` → ``agent1`` persons
ohms5     interviewee         text           ``interviewee`` as written (else from the title,
                                             "Oral history interview with …")
ohms6     interviewers        relation       ``interviewer`` → ``agent1`` persons
ohms7     interviewer         text           ``interviewer`` as written
ohms8     date                date           ``date/@value``
ohms9     date as written     text           ``date_nonpreferred_format``
ohms10    repository          text           ``repository``
ohms11    collection          text           ``collection_name`` / ``collection_id``
ohms12    series              text           ``series_name`` (``series_id``)
ohms13    duration            text           ``duration`` (left out when ``0:00:00``)
ohms14    media URL           iri            ``media_url``
ohms15    subjects            relation       ``subject`` and every point's ``subjects`` and
                                             ``keywords`` → ``subject1``
ohms16    keywords            text           the same terms, ``; ``-separated
ohms17    index               transcription  each ``index/point``: ``[TC_…]`` at its ``time``,
                                             then its title, synopsis, keywords, subjects,
                                             place and links (its partial transcript too when
                                             the interview has no transcript)
ohms18    transcript          transcription  ``transcript`` with ``[TC_…]`` from the ``sync``
                                             map, or ``vtt_transcript`` (WebVTT) cue by cue
ohms19    places              geo            every point's ``gpspoints/gps`` "lat, long"
ohms20    place names         text           ``gps_text``
ohms21    description         text           ``description``
ohms22    rights              text           ``rights``
ohms23    usage               text           ``usage``
ohms24    funding             text           ``funding``
ohms25    links               iri            every point's ``hyperlinks/hyperlink``
ohms26    language            text           ``language`` as written
ohms27    source file         text           the XML file's name
ohms28    OHMS version        text           ``version``
ohms29    media file          text           ``file_name``
========  ==================  =============  ===================================================

The OHMS ``sync`` string ``1:|13(3)|19(14)|…`` says: every 1 minute, the n-th mark falls at
transcript line 13 (1-based), word 3; and so on. Each mark becomes a ``[TC_…]`` before that
word, so the index cuts the transcript where the recording is. ``[[footnote]]N[[/footnote]]``
becomes ``[N]``. A ``userestrict`` of 1, or ``rights``/``usage`` saying the interview is closed,
restricted or embargoed (and not "no restrictions"), makes the record *restricted*.

Language: ``language`` (``English``, ``Català``, ``es``...) gives the values' language; when it
is empty the language is guessed from the text and marked ``lang_guessed``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.archive.bulk import NewRecord
from app.core.archive.importers.authorities import (
    AGENTS,
    SUBJECTS,
    Mention,
    ensure_authorities,
)
from app.core.archive.importers.base import (
    DUPLICATE,
    Built,
    ImportRun,
    ImportSummary,
    ProgressFn,
    Skip,
    Values,
    ensure_schema,
    geo,
    put,
    report_file,
    schema_field,
    section_schema,
)
from app.core.archive.importers.languages import archive_lang
from app.core.archive.importers.safe_xml import Element, child, children, local, parse_file
from app.core.archive.importers.transcripts import parse_vtt, timecode, timecoded
from app.core.archive.language import guess_import_lang
from app.core.archive.model import NEUTRAL_LANG, RecordKey
from app.core.errors import ImportFailed
from app.core.phrases import Phrase

if TYPE_CHECKING:
    from app.core.archive.store import Archive

SOURCE = "ohms"
SECTION = "ohms1"
MAX_FILES = 10_000
NO_RECORD = "import.ohms_no_record"
BAD_POINT = "import.ohms_bad_point"

LANGUAGE_NAMES = {
    "english": "en",
    "inglés": "en",
    "anglès": "en",
    "spanish": "es",
    "español": "es",
    "castellano": "es",
    "castellà": "es",
    "catalan": "ca",
    "català": "ca",
    "catalán": "ca",
    "french": "fr",
    "français": "fr",
    "german": "de",
    "deutsch": "de",
    "italian": "it",
    "portuguese": "pt",
}
_CLOSED = re.compile(r"\b(closed|embargo(?:ed)?|sealed|restricted)\b", re.IGNORECASE)
_OPEN = re.compile(r"\b(no (?:access )?restrictions?|unrestricted|not restricted)\b", re.IGNORECASE)
_TITLE_NAME = re.compile(r"\binterview(?:s)? with\s+(.+)$", re.IGNORECASE)
_SYNC_MARK = re.compile(r"^(\d+)\((\d+)\)$")
_WORD = re.compile(r"\S+")
_FOOTNOTE = re.compile(r"\[\[footnote\]\]\s*(\w+)\s*\[\[/footnote\]\]")
_NOTE_TAGS = re.compile(r"\[\[/?(?:footnotes|note)\]\]")
_SPACE = re.compile(r"[ \t]+")

_f = functools.partial(schema_field, SECTION)

SCHEMA = section_schema(
    SECTION,
    (
        "Oral-history interviews (OHMS)",
        "Entrevistes d'història oral (OHMS)",
        "Entrevistas de historia oral (OHMS)",
    ),
    "Oral-history interviews imported from OHMS XML: timecoded index segments, "
    "transcripts synchronised with the recording, interviewees and subjects.",
    label_field="ohms2",
    fields=(
        _f("ohms2", ("Title", "Títol", "Título"), multilingual=True),
        _f("ohms3", ("Accession", "Número d'entrada", "Número de entrada")),
        _f(
            "ohms4",
            ("Interviewees", "Persones entrevistades", "Personas entrevistadas"),
            "relation",
            target_section=AGENTS,
        ),
        _f("ohms5", ("Interviewee", "Persona entrevistada", "Persona entrevistada")),
        _f(
            "ohms6",
            ("Interviewers", "Entrevistadors", "Entrevistadores"),
            "relation",
            target_section=AGENTS,
        ),
        _f("ohms7", ("Interviewer", "Entrevistador", "Entrevistador")),
        _f("ohms8", ("Date", "Data", "Fecha"), "date"),
        _f("ohms9", ("Date as written", "Data tal com consta", "Fecha tal como consta")),
        _f("ohms10", ("Repository", "Institució", "Institución")),
        _f("ohms11", ("Collection", "Col·lecció", "Colección")),
        _f("ohms12", ("Series", "Sèrie", "Serie")),
        _f("ohms13", ("Duration", "Durada", "Duración")),
        _f("ohms14", ("Media URL", "URL del mitjà", "URL del medio"), "iri"),
        _f(
            "ohms15",
            ("Subjects", "Matèries", "Materias"),
            "relation",
            target_section=SUBJECTS,
        ),
        _f("ohms16", ("Keywords", "Paraules clau", "Palabras clave"), multilingual=True),
        _f(
            "ohms17",
            ("Index", "Índex", "Índice"),
            "transcription",
            multilingual=True,
        ),
        _f(
            "ohms18",
            ("Transcript", "Transcripció", "Transcripción"),
            "transcription",
            multilingual=True,
        ),
        _f("ohms19", ("Places", "Llocs", "Lugares"), "geo"),
        _f("ohms20", ("Place names", "Noms de lloc", "Nombres de lugar"), multilingual=True),
        _f("ohms21", ("Description", "Descripció", "Descripción"), multilingual=True),
        _f("ohms22", ("Rights", "Drets", "Derechos"), multilingual=True),
        _f("ohms23", ("Usage", "Condicions d'ús", "Condiciones de uso"), multilingual=True),
        _f("ohms24", ("Funding", "Finançament", "Financiación"), multilingual=True),
        _f("ohms25", ("Links", "Enllaços", "Enlaces"), "iri"),
        _f("ohms26", ("Language", "Llengua", "Idioma")),
        _f("ohms27", ("Source file", "Fitxer d'origen", "Fichero de origen")),
        _f("ohms28", ("OHMS version", "Versió d'OHMS", "Versión de OHMS")),
        _f("ohms29", ("Media file", "Fitxer del mitjà", "Fichero del medio")),
    ),
)


# -- reading -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Point:
    """One index segment: where it starts (seconds) and what it says."""

    seconds: float
    title: str
    synopsis: str = ""
    partial: str = ""
    keywords: tuple[str, ...] = ()
    subjects: tuple[str, ...] = ()
    gps: tuple[float, float] | None = None
    place: str = ""
    links: tuple[tuple[str, str], ...] = ()
    """``(url, text)`` pairs."""


@dataclass
class Interview:
    """What one OHMS ``record`` says, read into plain values."""

    file: str
    line: int
    external_id: str
    text: dict[str, str]
    """Every single-valued element's text by name (``title``, ``accession``...)."""
    interviewees: list[str] = field(default_factory=list)
    interviewers: list[str] = field(default_factory=list)
    subjects: list[str] = field(default_factory=list)
    points: list[Point] = field(default_factory=list)
    alt_points: list[Point] = field(default_factory=list)
    transcript: str = ""
    alt_transcript: str = ""
    bad_points: list[int] = field(default_factory=list)
    """Source lines of the index points without a usable ``time`` (left out)."""

    def get(self, name: str) -> str:
        """The text of element ``name`` ("" when absent or empty)."""
        return self.text.get(name, "")

    def terms(self) -> list[str]:
        """The record's subjects and every point's subjects and keywords, once each."""
        found = [*self.subjects]
        for point in self.points:
            found.extend(point.subjects)
            found.extend(point.keywords)
        return list(dict.fromkeys(t for t in found if t))


def ohms_files(path: Path) -> list[Path]:
    """The OHMS file at ``path``, or the ``*.xml`` files of the folder ``path``.

    Raises:
        ImportFailed: ``import.file_missing`` when there is nothing to read.
    """
    if path.is_file():
        return [path]
    files = sorted(p for p in path.glob("*.xml") if p.is_file()) if path.is_dir() else []
    if not files:
        raise ImportFailed(
            "import.file_missing",
            Phrase.of("There is no OHMS XML file at {path}.", path=str(path)),
            hint="Choose an OHMS .xml export or the folder that holds them.",
            details={"path": str(path)},
        )
    return files[:MAX_FILES]


def line_of(node: Element) -> int:
    """The line ``node`` starts on (0 when lxml does not know)."""
    line = node.sourceline
    return line if isinstance(line, int) else 0


def _clean(text: str) -> str:
    return " ".join(text.split())


def _texts(node: Element) -> dict[str, str]:
    """The text of every child element that has no element children, by local name."""
    out: dict[str, str] = {}
    for item in children(node):
        if len(item) == 0 and item.text and item.text.strip():
            out.setdefault(local(item), item.text)
    return out


def read_interviews(root: Element, file: str) -> list[Interview]:
    """The interviews (``record`` elements) of an OHMS document."""
    records = [root] if local(root) == "record" else list(children(root, "record"))
    return [_interview(record, file) for record in records]


def _interview(record: Element, file: str) -> Interview:
    text = _texts(record)
    ident = _clean(text.get("accession", ""))
    number = record.get("id")
    external = ident or (f"id:{number}" if number else f"file:{Path(file).stem}")
    interview = Interview(file, line_of(record), external, text)
    interview.interviewees = _names(record, "interviewee")
    interview.interviewers = _names(record, "interviewer")
    interview.subjects = [_clean(s.text or "") for s in children(record, "subject") if s.text]
    index = child(record, "index")
    for point in children(index, "point") if index is not None else iter(()):
        read = list(_point(point, ""))
        if not read:
            interview.bad_points.append(line_of(point))
        interview.points.extend(read)
        interview.alt_points.extend(p for p in _point(point, "_alt") if p.title or p.synopsis)
    date = child(record, "date")
    value = (date.get("value") or "").strip() if date is not None else ""
    if re.fullmatch(r"\d{4}(-\d{2}(-\d{2})?)?", value):
        text["date_value"] = value
    interview.transcript = text.get("transcript", "")
    interview.alt_transcript = text.get("transcript_alt", "")
    if not interview.interviewees and (match := _TITLE_NAME.search(_clean(text.get("title", "")))):
        interview.interviewees = [match.group(1).strip(" .")]
    return interview


def _names(record: Element, name: str) -> list[str]:
    """Every non-empty ``name`` child's names (one element may hold several, ``;``-separated)."""
    out: list[str] = []
    for item in children(record, name):
        out.extend(n for n in (_clean(p) for p in (item.text or "").split(";")) if n)
    return out


def _point(point: Element, suffix: str) -> Iterator[Point]:
    """The segment in ``point`` (``suffix`` ``_alt`` for its translation); none without a time."""
    text = _texts(point)
    raw = _clean(text.get("time", ""))
    try:
        seconds = float(raw)
    except ValueError:
        return
    gps = child(point, "gpspoints")
    links = child(point, "hyperlinks")
    yield Point(
        seconds=max(seconds, 0.0),
        title=_clean(text.get("title" + suffix, "")),
        synopsis=_clean(text.get("synopsis" + suffix, "")),
        partial=text.get("partial_transcript" + suffix, "").strip(),
        keywords=_terms(text.get("keywords" + suffix, "")),
        subjects=_terms(text.get("subjects" + suffix, "")),
        gps=_gps(_texts(gps).get("gps", "")) if gps is not None and not suffix else None,
        place=_clean(_texts(gps).get("gps_text" + suffix, "")) if gps is not None else "",
        links=_links(links, suffix) if links is not None else (),
    )


def _terms(text: str) -> tuple[str, ...]:
    return tuple(t for t in (_clean(p) for p in text.split(";")) if t)


def _gps(text: str) -> tuple[float, float] | None:
    parts = [p.strip() for p in text.split(",")]
    try:
        lat, lon = float(parts[0]), float(parts[1])
    except (IndexError, ValueError):
        return None
    return (lat, lon) if -90 <= lat <= 90 and -180 <= lon <= 180 else None


def _links(node: Element, suffix: str) -> tuple[tuple[str, str], ...]:
    texts = _texts(node)
    url = _clean(texts.get("hyperlink", ""))
    return ((url, _clean(texts.get("hyperlink_text" + suffix, ""))),) if url else ()


# -- transcripts ---------------------------------------------------------------------------------


def synced_transcript(transcript: str, sync: str) -> str:
    """``transcript`` with a ``[TC_…]`` before each word the OHMS ``sync`` map anchors.

    ``sync`` is ``MINUTES:|LINE(WORD)|LINE(WORD)|…``: the n-th mark (counting the empty one
    after the colon as the 0th) is at ``n × MINUTES`` minutes. The transcript starts at 0.
    """
    lines = transcript.split("\n")
    marks: dict[int, list[tuple[int, float]]] = {}
    head, _, stamps = sync.partition(":")
    try:
        step = float(head) * 60
    except ValueError:
        step = 0.0
    for number, stamp in enumerate(stamps.split("|") if step > 0 else []):
        match = _SYNC_MARK.match(stamp.strip())
        if match and 1 <= int(match.group(1)) <= len(lines):
            line, word = int(match.group(1)), int(match.group(2))
            marks.setdefault(line - 1, []).append((word, number * step))
    for index, anchors in marks.items():
        lines[index] = _mark_line(lines[index], _without_neighbours(anchors))
    text = "\n".join(lines).strip()
    if not text.startswith("[TC_"):
        text = f"{timecode(0)} {text}"
    return notes_text(text)


def _without_neighbours(anchors: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """The anchors of a line less those on adjacent words (``3(2)|3(3)|3(4)``): OHMS writes
    such runs where a sync point was not placed, as the Science History Institute's viewer
    also assumes."""
    words = {word for word, _ in anchors}
    return [(w, s) for w, s in anchors if w - 1 not in words and w + 1 not in words]


def _mark_line(line: str, anchors: list[tuple[int, float]]) -> str:
    """``line`` with a timecode before each anchored word (1-based; past the end: at the end)."""
    starts = [m.start() for m in _WORD.finditer(line)]
    for word, seconds in sorted(anchors, reverse=True):
        if 1 <= word <= len(starts):
            at = starts[word - 1]
            line = f"{line[:at]}{timecode(seconds)} {line[at:]}"
        else:
            line = f"{line.rstrip()} {timecode(seconds)}"
    return line


def notes_text(text: str) -> str:
    """OHMS footnote markup as plain text: ``[[footnote]]2[[/footnote]]`` → ``[2]``."""
    text = _FOOTNOTE.sub(r"[\1]", text)
    return _SPACE.sub(" ", _NOTE_TAGS.sub(" ", text)).strip()


def index_text(points: list[Point], *, with_partial: bool) -> str:
    """The index segments, each after its ``[TC_…]``: title, synopsis, keywords, place, links."""
    parts = []
    for point in sorted(points, key=lambda p: p.seconds):
        lines = [f"{timecode(point.seconds)} {point.title}".rstrip()]
        lines += [point.synopsis] if point.synopsis else []
        lines += [f"Keywords: {'; '.join(point.keywords)}"] if point.keywords else []
        lines += [f"Subjects: {'; '.join(point.subjects)}"] if point.subjects else []
        lines += [f"Place: {point.place}"] if point.place else []
        lines += [f"Link: {text or url} ({url})" for url, text in point.links]
        lines += [point.partial] if with_partial and point.partial else []
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


# -- the records ---------------------------------------------------------------------------------


def interview_lang(interview: Interview) -> tuple[str, bool]:
    """The interview's language code and whether it was guessed."""
    written = interview.get("language").strip()
    code = LANGUAGE_NAMES.get(written.casefold(), written if len(written) in (2, 3) else "")
    if code:
        return archive_lang(code), False
    sample = " ".join(
        [interview.transcript[:3000], interview.get("vtt_transcript")[:3000]]
        + [p.synopsis for p in interview.points[:20]]
    )
    guess = guess_import_lang(sample) if sample.strip() else None
    return (guess, True) if guess else (NEUTRAL_LANG, False)


def is_closed(interview: Interview) -> bool:
    """Whether ``userestrict``, ``rights`` or ``usage`` close the interview."""
    if interview.get("userestrict").strip().lower() in ("1", "true", "yes"):
        return True
    for name in ("rights", "usage"):
        text = interview.get(name)
        if _CLOSED.search(text) and not _OPEN.search(text):
            return True
    return False


def mentions(interview: Interview) -> list[Mention]:
    """The authority records the interview links to: people and subjects."""
    people = [*interview.interviewees, *interview.interviewers]
    found = [Mention(AGENTS, "person", name) for name in people]
    return found + [Mention(SUBJECTS, "subject", term) for term in interview.terms()]


class _Writer:
    """Puts an interview's values in one language, marking guessed ones."""

    def __init__(self, values: Values, lang: str, guessed: bool) -> None:
        self.values = values
        self.lang = lang
        self.guessed = guessed

    def text(self, tipo: str, value: str, lang: str | None = None) -> None:
        """Add a language-tagged text value (skipped when empty)."""
        value = value.strip()
        if not value:
            return
        item: dict[str, Any] = {"lang": lang or self.lang, "value": value}
        if self.guessed and lang is None and self.lang != NEUTRAL_LANG:
            item["lang_guessed"] = True
        self.values.setdefault(tipo, []).append(item)


def build_interview(interview: Interview, keys: dict[str, RecordKey]) -> Built:
    """The record of one interview; ``keys`` holds the authority records by external id."""
    values: Values = {}
    lang, guessed = interview_lang(interview)
    write = _Writer(values, lang, guessed)
    get = interview.get
    write.text("ohms2", _clean(get("title")) or interview.external_id)
    put(values, "ohms3", _clean(get("accession")) or None)
    links = _relations(values, interview, keys)
    put(values, "ohms5", "; ".join(interview.interviewees) or None)
    put(values, "ohms7", "; ".join(interview.interviewers) or None)
    date = get("date_value")
    put(values, "ohms8", date or None)
    put(values, "ohms9", _clean(get("date_nonpreferred_format")) or None)
    put(values, "ohms10", _clean(get("repository")) or None)
    collection = _clean(get("collection_name")) or _clean(get("collection_id"))
    put(values, "ohms11", collection or None)
    series = " ".join(p for p in (_clean(get("series_name")), _series_id(get("series_id"))) if p)
    put(values, "ohms12", series or None)
    duration = _clean(get("duration"))
    put(values, "ohms13", duration if duration.strip("0:") else None)
    put(values, "ohms14", _clean(get("media_url")) or None)
    write.text("ohms16", "; ".join(interview.terms()))
    _timecoded(write, interview)
    _places(values, write, interview.points)
    for tipo, name in (("ohms21", "description"), ("ohms22", "rights"), ("ohms23", "usage")):
        write.text(tipo, get(name))
    write.text("ohms24", get("funding"))
    put(values, "ohms26", _clean(get("language")) or None)
    put(values, "ohms27", Path(interview.file).name or None)
    put(values, "ohms28", _clean(get("version")) or None)
    put(values, "ohms29", _clean(get("file_name")) or None)
    restricted = True if is_closed(interview) else None
    record = NewRecord(SECTION, values, external_id=interview.external_id, restricted=restricted)
    return Built(record, links=links)


def _series_id(value: str) -> str:
    return f"({_clean(value)})" if value.strip() else ""


def _relations(values: Values, interview: Interview, keys: dict[str, RecordKey]) -> int:
    """Link the interviewees, interviewers and subjects; the number of links written."""
    count = 0
    groups = (
        ("ohms4", AGENTS, "person", interview.interviewees),
        ("ohms6", AGENTS, "person", interview.interviewers),
        ("ohms15", SUBJECTS, "subject", interview.terms()),
    )
    for tipo, section, kind, names in groups:
        seen: set[RecordKey] = set()
        for name in names:
            key = keys.get(Mention(section, kind, name).external_id)
            if key is not None and key not in seen:
                seen.add(key)
                put(values, tipo, key.to_locator())
                count += 1
    return count


def _timecoded(write: _Writer, interview: Interview) -> None:
    """The index and transcript fields, in the interview's language and its translation's."""
    transcript = interview.transcript.strip()
    vtt = interview.get("vtt_transcript")
    alt_lang = archive_lang(_language_code(interview.get("transcript_alt_lang")))
    has_text = bool(transcript or vtt.strip())
    write.text("ohms17", index_text(interview.points, with_partial=not has_text))
    if interview.alt_points:
        alt_text = index_text(interview.alt_points, with_partial=False)
        write.text("ohms17", alt_text, alt_lang if alt_lang != NEUTRAL_LANG else None)
    if transcript and transcript.lower() != "no transcript.":
        write.text("ohms18", synced_transcript(interview.transcript, interview.get("sync")))
    elif vtt.strip():
        write.text("ohms18", timecoded(parse_vtt(vtt).cues))
    if interview.alt_transcript.strip():
        alt = synced_transcript(interview.alt_transcript, interview.get("sync_alt"))
        write.text("ohms18", alt, alt_lang if alt_lang != NEUTRAL_LANG else None)


def _language_code(written: str) -> str:
    written = written.strip()
    return LANGUAGE_NAMES.get(written.casefold(), written if len(written) in (2, 3) else "")


def _places(values: Values, write: _Writer, points: list[Point]) -> None:
    seen_gps: set[tuple[float, float]] = set()
    seen_names: set[str] = set()
    for point in points:
        if point.gps is not None and point.gps not in seen_gps:
            seen_gps.add(point.gps)
            put(values, "ohms19", geo(*point.gps))
        if point.place and point.place not in seen_names:
            seen_names.add(point.place)
            write.text("ohms20", point.place)
        for url, _ in point.links:
            put(values, "ohms25", url)


# -- the import ----------------------------------------------------------------------------------


def import_ohms(archive: Archive, path: Path, progress: ProgressFn | None = None) -> ImportSummary:
    """Import the OHMS interviews at ``path`` (a file or a folder; see the module doc)."""
    files = ohms_files(path)
    ensure_schema(archive, SCHEMA)
    summary = ImportSummary(kind="ohms", path=str(path), read_unit="records")
    interviews = _read_all(files, summary, progress)
    found = [m for interview in interviews for m in mentions(interview)]
    keys = ensure_authorities(archive, found, path.name, summary=summary) if found else {}
    run = ImportRun(archive, summary, SOURCE)
    seen: dict[str, str] = {}
    for interview in interviews:
        summary.read += 1
        first = seen.get(interview.external_id)
        if first is not None:
            reason = "duplicate accession {id!r} (first in {first})"
            said = {"id": interview.external_id, "first": first}
            skip = Skip.said(interview.line, interview.file, DUPLICATE, reason, **said)
            summary.skipped.append(skip)
            continue
        seen[interview.external_id] = interview.file
        run.add(build_interview(interview, keys), interview.line, interview.file)
    run.flush()
    return summary


def _read_all(
    files: list[Path], summary: ImportSummary, progress: ProgressFn | None
) -> list[Interview]:
    """Every interview of ``files``; files that cannot be parsed are reported and left out."""
    interviews: list[Interview] = []
    for number, file in enumerate(files, start=1):
        report_file(progress, file.name)
        try:
            root = parse_file(file)
        except ImportFailed as exc:
            line = exc.line
            summary.skipped.append(Skip.of_error(line, file.name, exc))
            continue
        found = read_interviews(root, file.name)
        if not found:
            reason = "no OHMS record element (the root is <{root}>)"
            skip = Skip.said(line_of(root), file.name, NO_RECORD, reason, root=local(root))
            summary.skipped.append(skip)
        for interview in found:
            for line in interview.bad_points:
                reason = "index point without a usable <time>: left out"
                summary.skipped.append(Skip.said(line, file.name, BAD_POINT, reason))
        interviews.extend(found)
        if progress is not None:
            progress(number, len(files))
    return interviews
