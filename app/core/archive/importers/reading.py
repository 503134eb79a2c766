"""Reading JSON Lines datasets (gzip or plain) line by line, and checking the rows' fields.

A file that cannot be opened raises a coded :class:`~app.core.errors.ImportFailed`
(``import.file_missing``, ``import.unreadable``). A bad line never raises: the reader yields its
line number with the reason (bad JSON, not UTF-8, nested too deeply, a lone surrogate escape
such as ``"\\ud800"``, longer than :data:`MAX_LINE_BYTES`), and the importer records it as
skipped. The reasons, the reader's and a :class:`BadRow`'s, are
:class:`~app.core.phrases.Phrase` s, which the app and the CLI say in their language
(``resources/i18n``). A gzip stream that ends early (truncated download) stops the reading;
:attr:`JsonlReader.error` then says after which line, and everything before it is imported.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import orjson

from app.core.errors import ImportFailed
from app.core.json_types import JsonList, JsonObject
from app.core.phrases import Phrase, PhraseParam

GZIP_MAGIC = b"\x1f\x8b"
STREAM_ERRORS = (EOFError, OSError, zlib.error)
MAX_LINE_BYTES = 8 << 20
"""The longest line read (8 MiB; the longest in the bundled datasets is 16 KB). A longer line
is skipped without being held in memory."""
SKIP_BLOCK = 1 << 20
SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
DIGITS = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x78 for byte in range(256))
"""A byte table: every digit to ``0``, every other byte to ``x``."""
BIG_NUMBER = b"0" * 19
"""Digits enough for an integer past 64 bits, which ``orjson`` would read as a float (looked
for in the line passed through :data:`DIGITS`: ten times faster than a regular expression)."""
MAX_FAST_OPENINGS = 256
"""Lines with more ``[`` and ``{`` than this go to the standard parser, whose recursion limit
decides what is "nested too deeply" (``orjson`` reads any depth)."""
TOO_LONG = Phrase.of("longer than {limit:,} bytes", limit=MAX_LINE_BYTES)
"""Why a line over :data:`MAX_LINE_BYTES` is skipped."""


class BadRow(ValueError):
    """A row that parses as JSON but lacks a required key or has a value of the wrong type.

    Its text is the reason in English; ``phrase``, when it was made with :meth:`said`, is the
    same reason as a template and its parameters, which the app and the CLI say in their
    language (a ``BadRow`` made from an error's message has none and is said after the label
    of ``import.bad_row``).
    """

    def __init__(self, reason: str | Phrase) -> None:
        phrase = reason if isinstance(reason, Phrase) else None
        super().__init__(reason if phrase is None else phrase.english())
        self.phrase = phrase

    @classmethod
    def said(cls, template: str, /, **params: PhraseParam) -> BadRow:
        """The bad row whose reason is ``template`` filled with ``params``."""
        return cls(Phrase.of(template, **params))


def dataset_file(path: Path, default_name: str) -> Path:
    """``path`` itself, or ``path/default_name`` when ``path`` is a folder.

    Raises:
        ImportFailed: ``import.file_missing`` when the file does not exist.
    """
    path = Path(path).expanduser()
    candidate = path / default_name if path.is_dir() else path
    if not candidate.exists():
        raise missing(candidate, default_name)
    return candidate


def missing(path: Path, default_name: str | Phrase) -> ImportFailed:
    """The ``import.file_missing`` error for ``path``."""
    return ImportFailed(
        "import.file_missing",
        Phrase.of("There is no dataset file at {path}.", path=str(path)),
        hint=Phrase.of("Check the path; a dataset folder must hold {name}.", name=default_name),
        details={"path": str(path)},
    )


def _unreadable(path: Path, why: str | Phrase) -> ImportFailed:
    return ImportFailed(
        "import.unreadable",
        Phrase.of("The dataset file {path} cannot be read: {why}.", path=str(path), why=why),
        hint="Check that it is a JSON Lines file (optionally gzip-compressed) you may read.",
        category="environment",
        details={"path": str(path)},
    )


def open_stream(path: Path, stack: contextlib.ExitStack) -> io.BufferedIOBase:
    """Open ``path`` for binary reading, decompressing gzip (detected by its magic bytes)."""
    try:
        handle = stack.enter_context(path.open("rb"))
        magic = handle.read(2)
        handle.seek(0)
    except FileNotFoundError as exc:
        raise missing(path, path.name) from exc
    except OSError as exc:
        raise _unreadable(path, exc.strerror or str(exc)) from exc
    if magic == GZIP_MAGIC:
        return stack.enter_context(gzip.GzipFile(fileobj=handle, mode="rb"))
    if path.suffix == ".gz":
        raise _unreadable(path, Phrase.of("it is named .gz but is not gzip data"))
    return handle


def count_lines(path: Path) -> int:
    """How many lines the file holds (as many as can be read, for a damaged file)."""
    count = 0
    with contextlib.ExitStack() as stack:
        stream = open_stream(path, stack)
        last = b"\n"
        try:
            for block in iter(lambda: stream.read(1 << 20), b""):
                count += block.count(b"\n")
                last = block[-1:]
        except STREAM_ERRORS:
            return count
        return count + (last != b"\n")
    return count  # pragma: no cover - ExitStack never swallows


class JsonlReader:
    """Iterate ``(line_number, row_or_reason)`` over a JSON Lines file.

    A row is a JSON object; a :class:`~app.core.phrases.Phrase` is the reason the line was not
    usable (bad JSON, not an object, not UTF-8). Blank lines are passed over silently.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.error: ImportFailed | None = None
        self.last_line = 0

    def __iter__(self) -> Iterator[tuple[int, JsonObject | Phrase]]:
        with contextlib.ExitStack() as stack:
            stream = open_stream(self.path, stack)
            try:
                for raw in _lines(stream):
                    self.last_line += 1
                    if raw is None:
                        yield self.last_line, TOO_LONG
                    elif raw.strip():
                        yield self.last_line, parse_line(raw, self.last_line)
            except STREAM_ERRORS as exc:
                if self.last_line == 0:
                    raise _unreadable(self.path, str(exc)) from exc
                self.error = ImportFailed(
                    "import.truncated",
                    Phrase.of(
                        "{name} ends early after line {line}: {why}.",
                        name=self.path.name,
                        line=self.last_line,
                        why=str(exc),
                    ),
                    hint="The lines before it were imported; fetch the file again to import "
                    "the rest.",
                    details={"path": str(self.path), "last_line": self.last_line},
                )


def _lines(stream: io.BufferedIOBase) -> Iterator[bytes | None]:
    """The lines of ``stream``; ``None`` for a line over :data:`MAX_LINE_BYTES` (passed over)."""
    while raw := stream.readline(MAX_LINE_BYTES + 1):
        if len(raw) <= MAX_LINE_BYTES or raw.endswith(b"\n"):
            yield raw
            continue
        while (rest := stream.readline(SKIP_BLOCK)) and not rest.endswith(b"\n"):
            pass
        yield None


def parse_line(raw: bytes, number: int) -> JsonObject | Phrase:
    """One line as a JSON object, or the reason it is not one.

    ``orjson`` reads it first (twice as fast); whatever it refuses (bad JSON, not UTF-8, a BOM,
    ``NaN``, a lone surrogate escape), any line with an integer it would read as a float (19
    digits or more in a row) and any line that may nest deeper than :data:`MAX_FAST_OPENINGS`
    go to the standard parser, which gives the reason in its words or the row as before.
    """
    if _reads_alike(raw):
        try:
            fast = orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
        else:
            if type(fast) is dict:
                return cast(JsonObject, fast)
    return _parse_slowly(raw, number)


def _reads_alike(raw: bytes) -> bool:
    """Whether ``orjson`` reads ``raw`` as the standard parser would, where it reads it at all:
    no integer past 64 bits, no nesting that might pass the standard parser's limit."""
    openings = raw.count(b"[") + raw.count(b"{")
    return openings <= MAX_FAST_OPENINGS and BIG_NUMBER not in raw.translate(DIGITS)


def _parse_slowly(raw: bytes, number: int) -> JsonObject | Phrase:
    """:func:`parse_line` through the standard library: the row, or the reason (the decoder's
    and the parser's own words, English, kept as parameters)."""
    try:
        text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
    except UnicodeDecodeError as exc:
        return Phrase.of("not UTF-8 text ({why} at byte {byte})", why=exc.reason, byte=exc.start)
    try:
        row = json.loads(text)
    except json.JSONDecodeError as exc:
        return Phrase.of("bad JSON: {why} (column {column})", why=exc.msg, column=exc.colno)
    except RecursionError:
        return Phrase.of("bad JSON: nested too deeply")
    if not isinstance(row, dict):
        return Phrase.of("expected a JSON object, got {type}", type=type(row).__name__)
    obj: JsonObject = row  # json.loads makes only JSON values
    if SURROGATE_ESCAPE.search(raw) and not _encodable(obj):
        return Phrase.of("a lone surrogate escape (such as \\ud800) is not text")
    return obj


def _encodable(row: JsonObject) -> bool:
    """Whether every string in ``row`` can be written as UTF-8 (no lone surrogates)."""
    try:
        json.dumps(row, ensure_ascii=False).encode("utf-8")
    except (UnicodeEncodeError, RecursionError):
        return False
    return True


# -- checking fields -------------------------------------------------------------------------


def _wrong(key: str, expected: str, value: object) -> BadRow:
    """``key`` holds a ``value`` of the wrong type; ``expected`` (``a string``) is a phrase of
    its own, translated by the same tables."""
    reason = "'{key}' must be {expected}, not {type}"
    return BadRow.said(reason, key=key, expected=Phrase.of(expected), type=type(value).__name__)


def require_id(row: JsonObject, key: str = "id") -> str:
    """A required identifier (non-empty string, or integer) as a string."""
    value = row.get(key)
    if value is None:
        raise BadRow.said("missing required key '{key}'", key=key)
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise _wrong(key, "a string or an integer", value)
    text = str(value).strip()
    if not text:
        raise BadRow.said("'{key}' is empty", key=key)
    return text


def opt_str(row: JsonObject, key: str) -> str | None:
    """An optional string; empty strings count as absent."""
    value = row.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _wrong(key, "a string", value)
    return value if value.strip() else None


def opt_int(row: JsonObject, key: str) -> int | None:
    """An optional integer."""
    value = row.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise _wrong(key, "an integer", value)
    return value


def opt_num(row: JsonObject, key: str) -> float | None:
    """An optional number (integer or float)."""
    value = row.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _wrong(key, "a number", value)
    return float(value)


def opt_list(row: JsonObject, key: str) -> JsonList:
    """An optional list (absent → empty)."""
    value = row.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise _wrong(key, "a list", value)
    return value


def opt_dict(row: JsonObject, key: str) -> JsonObject:
    """An optional object (absent → empty)."""
    value = row.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _wrong(key, "an object", value)
    return value


def str_list(row: JsonObject, key: str) -> list[str]:
    """An optional list of strings."""
    items = opt_list(row, key)
    if not all(isinstance(item, str) for item in items):
        raise BadRow.said("'{key}' must be a list of strings", key=key)
    return [item for item in items if isinstance(item, str)]
