"""Importer of a folder of files: PDFs, images, sound and video with transcripts, plain text.

PATH is a folder, walked recursively: symbolic links are never followed (each is reported as
``import.symlink``), hidden files and operating-system junk (``.DS_Store``, ``Thumbs.db``,
``desktop.ini``, ``__MACOSX``, Office ``~$`` lock files) are left out silently, and the walk is
bounded (:data:`MAX_FILES` files, :data:`MAX_DEPTH` folders deep; beyond them the import keeps
what it found and says where it stopped). Source ``folder:<the folder's resolved path>``,
external id = the file's path relative to the folder (``letters/1915-05-12.pdf``).

One record per file in section ``files1`` "Files", label ``files2``:

========  ===================  =============  ==============================================
tipo      label                kind           value
========  ===================  =============  ==============================================
files2    title                text           PDF ``/Title``, XMP/IPTC/EXIF title, else stem
files3    relative path        text           ``letters/1915-05-12.pdf``
files4    kind                 text           ``pdf`` | ``image`` | ``audio`` | ``video`` |
                                              ``text``
files5    date                 date           ``YYYY-MM-DD``
files6    date from            text           ``EXIF DateTimeOriginal``, ``PDF CreationDate``,
                                              ``file modified (mtime)``...
files7    place                geo            EXIF GPS ``{"lat", "lon"}``
files8    place name           text           IPTC/XMP location
files9    caption              text           EXIF ImageDescription, IPTC caption, XMP
                                              ``dc:description`` (language guessed)
files10   text                 text           a ``.txt``/``.md`` file's text (guessed)
files11   transcription        transcription  PDF pages after ``[page-n-N]`` markers; a
                                              transcript's cues after ``[TC_…]`` timecodes
files12   file                 media          the file itself (images get a thumbnail)
files13   size                 number         bytes
files14   pages                number         a PDF's page count
files15   creator              text           PDF ``/Author``, EXIF Artist, IPTC By-line
files16   rights               text           EXIF Copyright, IPTC/XMP rights
files17   notes                text           what the import noticed (``scanned, no text
                                              layer``...)
files18   SHA-256              text           the file's checksum (fixity)
files19   encoding             text           a text file's detected encoding
========  ===================  =============  ==============================================

A sound or video file (``.mp3 .wav .ogg .m4a .flac .mp4 .webm .mov``) takes the ``.vtt`` or
``.srt`` of the same stem beside it (``interview.vtt``, or ``interview.ca.vtt`` for a Catalan
one) as its transcription; a transcript with no media beside it is a ``text`` record of its own.

Re-importing the folder reads only new and changed files: each file's size, modification time
and SHA-256 are kept in the archive's meta (:data:`STATE_KEY`); a file whose size and time are
unchanged is not opened at all, one whose time changed but whose checksum did not is not read
again; both are counted as ``unchanged``. A file gone from the folder is reported as
``import.file_removed`` and its record kept. What the import noticed about a file is reported
as a skip with its code (``import.pdf_no_text``, ``import.pdf_encrypted``,
``import.pdf_active_content``, ``import.pdf_truncated``, ``import.transcript_cue``...); a file
that cannot be read at all (``import.pdf_broken``, ``import.image_bomb``,
``import.image_broken``) is skipped and the import goes on.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import posixpath
import wave
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.archive.bulk import NewRecord
from app.core.archive.importers.base import (
    AfterFlush,
    Built,
    ImportRun,
    ImportSummary,
    ProgressFn,
    Skip,
    Values,
    ensure_schema,
    external_keys,
    geo,
    put,
    report_file,
    schema_field,
    section_schema,
)
from app.core.archive.importers.image_meta import read_image
from app.core.archive.importers.languages import archive_lang
from app.core.archive.importers.pdf_text import read_pdf
from app.core.archive.importers.poilus import transcription
from app.core.archive.importers.text_files import read_text_file
from app.core.archive.importers.transcripts import parse_transcript, timecoded
from app.core.archive.language import guess_import_lang
from app.core.archive.media import add_media, file_sha256, media_of
from app.core.archive.model import NEUTRAL_LANG, RecordKey
from app.core.errors import ArchiveError, ImportFailed, english_of
from app.core.json_types import JsonList, JsonObject, as_list
from app.core.phrases import Phrase

if TYPE_CHECKING:
    from app.core.archive.store import Archive

SOURCE_PREFIX = "folder:"
SECTION = "files1"
MEDIA_FIELD = "files12"
STATE_KEY = "import.folder:"
"""Meta key prefix (+ the folder's resolved path) of the files' sizes, times and checksums."""
MAX_FILES = 50_000
MAX_DEPTH = 32

KINDS = {
    **dict.fromkeys((".pdf",), "pdf"),
    **dict.fromkeys((".jpg", ".jpeg", ".png", ".tif", ".tiff", ".gif", ".webp", ".bmp"), "image"),
    **dict.fromkeys((".mp3", ".wav", ".ogg", ".m4a", ".flac"), "audio"),
    **dict.fromkeys((".mp4", ".webm", ".mov"), "video"),
    **dict.fromkeys((".txt", ".md", ".markdown"), "text"),
}
TRANSCRIPTS = (".vtt", ".srt")
ATTACHED = ("pdf", "image", "audio", "video")
JUNK = frozenset(
    (
        "thumbs.db",
        "desktop.ini",
        "ehthumbs.db",
        "__macosx",
        "$recycle.bin",
        "icon\r",
        "system volume information",
    )
)
MTIME = "file modified (mtime)"

_f = functools.partial(schema_field, SECTION)

SCHEMA = section_schema(
    SECTION,
    ("Files", "Fitxers", "Archivos"),
    "Documents, images, recordings and texts imported from a folder of files.",
    label_field="files2",
    fields=(
        _f("files2", ("Title", "Títol", "Título"), multilingual=True),
        _f("files3", ("Relative path", "Camí relatiu", "Ruta relativa")),
        _f("files4", ("Kind", "Tipus", "Tipo")),
        _f("files5", ("Date", "Data", "Fecha"), "date"),
        _f("files6", ("Date from", "Origen de la data", "Origen de la fecha")),
        _f("files7", ("Place", "Lloc", "Lugar"), "geo"),
        _f("files8", ("Place name", "Nom del lloc", "Nombre del lugar"), multilingual=True),
        _f("files9", ("Caption", "Peu", "Pie"), multilingual=True),
        _f("files10", ("Text", "Text", "Texto"), multilingual=True),
        _f(
            "files11",
            ("Transcription", "Transcripció", "Transcripción"),
            "transcription",
            multilingual=True,
        ),
        _f(MEDIA_FIELD, ("File", "Fitxer", "Archivo"), "media"),
        _f("files13", ("Size (bytes)", "Mida (bytes)", "Tamaño (bytes)"), "number"),
        _f("files14", ("Pages", "Pàgines", "Páginas"), "number"),
        _f("files15", ("Creator", "Autor", "Autor")),
        _f("files16", ("Rights", "Drets", "Derechos")),
        _f("files17", ("Notes", "Notes", "Notas")),
        _f("files18", ("SHA-256", "SHA-256", "SHA-256")),
        _f("files19", ("Encoding", "Codificació", "Codificación")),
    ),
)


# -- the walk ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FoundFile:
    """A file to import, with the transcripts that go with it."""

    rel: str
    path: Path
    kind: str
    transcripts: tuple[Path, ...] = ()

    def files(self) -> tuple[Path, ...]:
        """The file and its transcripts."""
        return (self.path, *self.transcripts)

    def stamp(self) -> JsonList:
        """Size and modification time (ns) of each of its files."""
        out: JsonList = []
        for path in self.files():
            info = path.stat()
            out.append([path.name, info.st_size, info.st_mtime_ns])
        return out

    def digest(self) -> list[str]:
        """The SHA-256 of each of its files."""
        return [file_sha256(path) for path in self.files()]


@dataclass
class FolderScan:
    """What the walk found: files to import, skips, and an error when it stopped early."""

    files: list[FoundFile] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    error: ImportFailed | None = None


def is_junk(name: str) -> bool:
    """Hidden files and the operating systems' own files, which are never imported."""
    return name.startswith((".", "~$")) or name.casefold() in JUNK


def scan_folder(root: Path) -> FolderScan:
    """Every importable file under ``root`` (see the module doc), in path order."""
    scan = FolderScan()
    loose: list[tuple[str, Path]] = []
    for rel, path in _walk(root, scan):
        kind = KINDS.get(path.suffix.lower())
        if kind is not None:
            scan.files.append(FoundFile(rel, path, kind))
        elif path.suffix.lower() in TRANSCRIPTS:
            loose.append((rel, path))
        else:
            if path.suffix:
                reason = "not a kind of file Arxiu imports ({suffix})"
                skip = Skip.said(0, rel, "import.file_kind_unknown", reason, suffix=path.suffix)
            else:
                reason = "not a kind of file Arxiu imports (no extension)"
                skip = Skip.said(0, rel, "import.file_kind_unknown", reason)
            scan.skipped.append(skip)
    _pair_transcripts(scan, loose)
    scan.files.sort(key=lambda f: f.rel)
    return scan


def _walk(root: Path, scan: FolderScan) -> Iterator[tuple[str, Path]]:
    """``(relative path, path)`` of the regular files under ``root``, bounded."""
    stack: list[tuple[Path, int]] = [(root, 0)]
    count = 0
    while stack:
        folder, depth = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            rel = folder.relative_to(root).as_posix()
            reason = "folder not readable: {why}"
            scan.skipped.append(Skip.said(0, rel, "import.unreadable", reason, why=str(exc)))
            continue
        for entry in entries:
            rel = Path(entry.path).relative_to(root).as_posix()
            if is_junk(entry.name):
                continue
            if entry.is_symlink():
                reason = "symbolic link not followed"
                scan.skipped.append(Skip.said(0, rel, "import.symlink", reason))
            elif entry.is_dir(follow_symlinks=False):
                if depth + 1 >= MAX_DEPTH:
                    reason = "folder more than {depth} levels deep not read"
                    skip = Skip.said(0, rel, "import.too_deep", reason, depth=MAX_DEPTH)
                    scan.skipped.append(skip)
                else:
                    stack.append((Path(entry.path), depth + 1))
            elif entry.is_file(follow_symlinks=False):
                count += 1
                if count > MAX_FILES:
                    scan.error = _too_many(rel)
                    return
                yield rel, Path(entry.path)


def _too_many(rel: str) -> ImportFailed:
    return ImportFailed(
        "import.too_many_files",
        Phrase.of(
            "The folder holds more than {most:,} files; the import stopped before {rel}.",
            most=MAX_FILES,
            rel=rel,
        ),
        hint="Import its subfolders one at a time.",
        details={"stopped_at": rel, "max_files": MAX_FILES},
    )


def _pair_transcripts(scan: FolderScan, loose: list[tuple[str, Path]]) -> None:
    """Give each sound/video file the transcripts of its stem; the others become text files."""
    media = {
        (f.path.parent, f.path.stem.casefold()): i
        for i, f in enumerate(scan.files)
        if f.kind in ("audio", "video")
    }
    for rel, path in loose:
        stem = path.stem.casefold()
        owner = media.get((path.parent, stem))
        if owner is None and "." in stem:
            owner = media.get((path.parent, stem.rsplit(".", 1)[0]))
        if owner is None:
            scan.files.append(FoundFile(rel, path, "text"))
            continue
        found = scan.files[owner]
        scan.files[owner] = FoundFile(found.rel, found.path, found.kind, (*found.transcripts, path))


# -- the records ---------------------------------------------------------------------------------


@dataclass
class FileRecord:
    """The values made from one file and what the import noticed about it."""

    values: Values = field(default_factory=dict)
    notes: list[Skip] = field(default_factory=list)
    duration_s: float | None = None

    def note(self, code: str, reason: str | Phrase, file: str, line: int = 0) -> None:
        """Note ``reason`` in the record's notes field (its English) and as a skip with
        ``code`` (a phrase kept, said in the person's language)."""
        phrase = reason if isinstance(reason, Phrase) else None
        english = english_of(reason)
        self.notes.append(Skip(line, english, file, code, phrase))
        if line == 0:
            put(self.values, "files17", english)


def guessed(values: Values, field_tipo: str, text: str, lang: str | None = None) -> None:
    """Add ``text`` in ``lang``, else in its guessed language marked ``lang_guessed``."""
    text = text.strip()
    if not text:
        return
    if lang:
        put(values, field_tipo, text, lang)
        return
    guess = guess_import_lang(text[:4000])
    item: dict[str, Any] = {"lang": guess or NEUTRAL_LANG, "value": text}
    if guess:
        item["lang_guessed"] = True
    values.setdefault(field_tipo, []).append(item)


def build_file(found: FoundFile, sha: str) -> FileRecord:
    """The record of one file (raises ``ImportFailed`` for a file that cannot be read)."""
    record = FileRecord()
    info = found.path.stat()
    put(record.values, "files3", found.rel)
    put(record.values, "files4", found.kind)
    put(record.values, "files13", info.st_size)
    put(record.values, "files18", sha)
    title, date, source = BUILDERS[found.kind](found, record)
    put(record.values, "files2", title or found.path.stem)
    if not date:
        date = dt.datetime.fromtimestamp(info.st_mtime, dt.UTC).date().isoformat()
        source = MTIME
    put(record.values, "files5", date)
    put(record.values, "files6", source)
    return record


def _pdf(found: FoundFile, record: FileRecord) -> tuple[str, str, str]:
    content = read_pdf(found.path)
    values = record.values
    for note in content.notes:
        record.note(note.code, note.phrase or note.reason, found.rel)
    if content.has_text:
        guessed(values, "files11", transcription(content.pages))
    put(values, "files14", content.page_count or None)
    put(values, "files15", content.author or None)
    return content.title, content.created, "PDF CreationDate" if content.created else ""


def _image(found: FoundFile, record: FileRecord) -> tuple[str, str, str]:
    meta = read_image(found.path)
    values = record.values
    put(values, "files7", geo(meta.lat, meta.lon))
    guessed(values, "files8", meta.place)
    guessed(values, "files9", meta.caption)
    put(values, "files15", meta.creator or None)
    put(values, "files16", meta.rights or None)
    return meta.title, meta.date, meta.date_source


def _media(found: FoundFile, record: FileRecord) -> tuple[str, str, str]:
    if found.path.suffix.lower() == ".wav":
        record.duration_s = wav_seconds(found.path)
    for path in found.transcripts:
        rel = posixpath.join(posixpath.dirname(found.rel), path.name)
        try:
            _transcript(path, rel, record)
        except ImportFailed as exc:  # the recording is imported without this transcript
            record.note(exc.code, exc.message_words, rel)
    return "", "", ""


def _transcript(path: Path, rel: str, record: FileRecord) -> None:
    decoded = read_text_file(path)
    parsed = parse_transcript(decoded.text, path.suffix)
    for line in parsed.bad_lines:
        record.note("import.transcript_cue", "not a cue (no timing line): left out", rel, line)
    if not parsed.cues:
        record.note("import.transcript_empty", Phrase.of("{name}: no cues", name=path.name), rel)
        return
    parts = path.stem.rsplit(".", 1)
    code = parts[1] if len(parts) == 2 else ""
    tagged = archive_lang(code) if len(code) in (2, 3) and code.isalpha() else None
    guessed(record.values, "files11", timecoded(parsed.cues), tagged)


def _text(found: FoundFile, record: FileRecord) -> tuple[str, str, str]:
    if found.path.suffix.lower() in TRANSCRIPTS:
        _transcript(found.path, found.rel, record)
        return "", "", ""
    decoded = read_text_file(found.path)
    guessed(record.values, "files10", decoded.text)
    put(record.values, "files19", decoded.encoding)
    return _markdown_title(decoded.text) if found.path.suffix.lower() != ".txt" else "", "", ""


def _markdown_title(text: str) -> str:
    """The first ``# heading`` of a Markdown text, or ""."""
    for line in text.splitlines()[:50]:
        if line.startswith("# "):
            return line[2:].strip()
    return ""


BUILDERS = {"pdf": _pdf, "image": _image, "audio": _media, "video": _media, "text": _text}


def wav_seconds(path: Path) -> float | None:
    """A WAV file's duration in seconds, or ``None`` when its header cannot be read."""
    try:
        with wave.open(str(path), "rb") as sound:
            rate = sound.getframerate()
            return round(sound.getnframes() / rate, 3) if rate else None
    except (wave.Error, EOFError, OSError):
        return None


# -- the import ----------------------------------------------------------------------------------


@dataclass
class _Context:
    """One folder import: its archive, summary, known records and file states."""

    archive: Archive
    root: Path
    summary: ImportSummary
    known: dict[str, RecordKey]
    state: dict[str, JsonObject]
    """Each file's state as the last import stored it: ``{stamp, sha[, skip]}``."""
    new_state: dict[str, JsonObject] = field(default_factory=dict)
    pending: dict[str, tuple[FoundFile, JsonObject, float | None]] = field(default_factory=dict)


def folder_root(path: Path) -> Path:
    """The resolved folder ``path``.

    Raises:
        ImportFailed: ``import.file_missing`` or ``import.not_a_folder``.
    """
    if not path.exists():
        raise ImportFailed(
            "import.file_missing",
            Phrase.of("There is no folder at {path}.", path=str(path)),
            hint="Check the path.",
        )
    if not path.is_dir():
        raise ImportFailed(
            "import.not_a_folder",
            Phrase.of("{path} is a file; this import reads a folder of files.", path=str(path)),
            hint="Choose the folder that holds the files.",
        )
    return path.resolve()


def import_folder(
    archive: Archive, path: Path, progress: ProgressFn | None = None
) -> ImportSummary:
    """Import the files of the folder at ``path`` (see the module doc)."""
    root = folder_root(path)
    ensure_schema(archive, SCHEMA)
    source = SOURCE_PREFIX + str(root)
    summary = ImportSummary(kind="folder", path=str(root), read_unit="files")
    scan = scan_folder(root)
    summary.skipped.extend(scan.skipped)
    ctx = _Context(
        archive, root, summary, external_keys(archive, source), _load_state(archive, root)
    )
    run = ImportRun(archive, summary, source, batch_size=100, after_flush=ctx_attacher(ctx))
    for number, found in enumerate(scan.files, start=1):
        report_file(progress, found.rel)
        _import_one(ctx, run, found)
        if progress is not None:
            progress(number, len(scan.files))
    run.flush()
    if scan.error is not None:
        summary.error = scan.error  # the files after the limit were not looked at
    else:
        for rel in sorted(set(ctx.known) - {f.rel for f in scan.files}):
            reason = "no longer in the folder: its record is kept"
            summary.skipped.append(Skip.said(0, rel, "import.file_removed", reason))
    archive.set_meta(STATE_KEY + str(root), json.dumps(ctx.new_state, sort_keys=True))
    return summary


def _import_one(ctx: _Context, run: ImportRun, found: FoundFile) -> None:
    """Import one file unless it is unchanged since the last import."""
    try:
        stamp = found.stamp()
        key = ctx.known.get(found.rel)
        prior = ctx.state.get(found.rel) if key is not None else None
        last = ctx.state.get(found.rel, {})
        if last.get("skip") and last.get("stamp") == stamp:
            _refused_again(ctx, found.rel, last)
            return
        if prior is not None and not prior.get("skip") and prior.get("stamp") == stamp:
            ctx.summary.unchanged += 1
            ctx.new_state[found.rel] = prior
            return
        digest = found.digest()
    except OSError as exc:
        skip = Skip.said(0, found.rel, "import.unreadable", "not readable: {why}", why=str(exc))
        ctx.summary.skipped.append(skip)
        return
    entry: JsonObject = {"stamp": stamp, "sha": list(digest)}
    if prior is not None and not prior.get("skip") and prior.get("sha") == digest:
        ctx.summary.unchanged += 1
        ctx.new_state[found.rel] = entry
        return
    ctx.summary.read += 1
    try:
        record = build_file(found, digest[0])
    except (ImportFailed, OSError) as exc:
        skip = (
            Skip.of_error(0, found.rel, exc)
            if isinstance(exc, ImportFailed)
            else Skip(0, str(exc), found.rel, "import.unreadable")
        )
        ctx.summary.skipped.append(skip)
        ctx.new_state[found.rel] = {**entry, "skip": [skip.code, skip.reason]}
        return
    ctx.summary.skipped.extend(record.notes)
    if key is not None and found.kind in ATTACHED:
        _keep_media(ctx.archive, key, digest[0], record.values)
    ctx.pending[found.rel] = (found, entry, record.duration_s)
    run.add(Built(NewRecord(SECTION, record.values, external_id=found.rel)), 0, found.rel)


def _refused_again(ctx: _Context, rel: str, entry: JsonObject) -> None:
    """Report again, without reading it, a file refused last time and unchanged since."""
    code, message = as_list(entry["skip"], "'skip'")
    reason = "unchanged since it was refused: {why}"
    ctx.summary.skipped.append(Skip.said(0, rel, str(code), reason, why=str(message)))
    ctx.new_state[rel] = entry


def _keep_media(archive: Archive, key: RecordKey, sha: str, values: Values) -> None:
    """Keep the record's attached file in its new values when the file itself is unchanged."""
    same = {m.id for m in media_of(archive, key) if m.field_tipo == MEDIA_FIELD and m.sha256 == sha}
    record = archive.find_record(key)
    if record is None or not same:
        return
    kept = [item for item in record.items(MEDIA_FIELD) if _media_id(item) in same]
    if kept:
        values[MEDIA_FIELD] = [{"lang": NEUTRAL_LANG, "value": item["value"]} for item in kept]


def _media_id(item: Mapping[str, object]) -> int | None:
    value = item.get("value")
    media_id = value.get("media_id") if isinstance(value, dict) else None
    return media_id if isinstance(media_id, int) else None


def ctx_attacher(ctx: _Context) -> AfterFlush:
    """After each batch: attach the files as media and remember the stored files' states."""

    def attach(written: list[tuple[NewRecord, RecordKey]]) -> None:
        for record, key in written:
            rel = record.external_id or ""
            found, entry, duration = ctx.pending.pop(rel)
            ctx.new_state[rel] = entry
            if found.kind not in ATTACHED:
                continue
            try:
                add_media(
                    ctx.archive, key, MEDIA_FIELD, found.path, duration_s=duration, replace=True
                )
                ctx.summary.media += 1
            except ArchiveError as exc:
                ctx.summary.media_missing += 1
                ctx.summary.skipped.append(Skip.of_error(0, rel, exc))

    return attach


def _load_state(archive: Archive, root: Path) -> dict[str, JsonObject]:
    """The files' states the last import of ``root`` stored (an entry not an object dropped)."""
    raw = archive.meta(STATE_KEY + str(root))
    try:
        state = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    if not isinstance(state, dict):
        return {}
    return {rel: entry for rel, entry in state.items() if isinstance(entry, dict)}
