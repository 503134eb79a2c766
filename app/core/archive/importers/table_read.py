"""Reading a CSV file as a table: its encoding and separator detected, its rows checked.

Encodings: a byte-order mark says UTF-8, UTF-16 LE or UTF-16 BE; without one, UTF-16 is told
by its zero bytes, then UTF-8 is tried, then Windows-1252 (which reads Latin-1 text the same).
A file whose lines are mostly valid UTF-8 stays UTF-8. Nothing is replaced silently: a byte
sequence that is not valid in the detected encoding makes its row a ``import.encoding`` skip
naming the line. Quoting is strict (RFC 4180): a malformed row is an ``import.bad_row`` skip, and
a file that ends inside a quoted cell keeps the rows before it and reports ``import.truncated``.
Separators ``;``, ``,`` and tab are sniffed (:class:`csv.Sniffer` over the first lines, then a
count on the header line); ``.tsv`` files are tab-separated.

Leading lines starting with ``# `` are comments (Arxiu's CSV export writes its restricted-records
notice there); the first non-empty row is the header. Bounds: :data:`MAX_TABLE_BYTES`,
:data:`MAX_ROWS`, :data:`MAX_COLUMNS`, :data:`MAX_CELL_CHARS`.
"""

from __future__ import annotations

import codecs
import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from app.core.archive.importers.base import BAD_ROW, Skip
from app.core.errors import ImportFailed
from app.core.phrases import Phrase

MAX_TABLE_BYTES = 256 * 1024 * 1024
MAX_ROWS = 1_000_000
MAX_COLUMNS = 1_000
MAX_CELL_CHARS = 1_000_000
SNIFF_CHARS = 32_768
SNIFF_LINES = 20

ENCODING = "import.encoding"
"""A row holding bytes that are not valid in the file's encoding."""
CELL_TOO_LARGE = "import.cell_too_large"
TOO_MANY_ROWS = "import.too_many_rows"
TOO_MANY_COLUMNS = "import.too_many_columns"
TRUNCATED = "import.truncated"

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""Cell starts a spreadsheet would read as a formula (OWASP CSV injection)."""

_MARK = "\udcff"
"""Stands for an undecodable byte sequence: a lone surrogate no valid decoding yields."""


def _mark(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeDecodeError):
        raise error
    return _MARK, error.end


codecs.register_error("arxiu.mark", _mark)

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


@dataclass(frozen=True)
class TableRow:
    """One data row: the line (or spreadsheet row) it starts on and its cells."""

    line: int
    cells: tuple[str, ...]


@dataclass
class Table:
    """A table read from one file."""

    file: str
    encoding: str
    delimiter: str
    header: list[str]
    rows: list[TableRow] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    error: ImportFailed | None = None
    """Why reading stopped early (what was read before is kept)."""


def detect_encoding(data: bytes) -> tuple[str, int]:
    """``(encoding, length of the byte-order mark)`` of a text file's bytes."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name, len(bom)
    utf16 = _utf16_without_bom(data[:4096])
    if utf16:
        return utf16, 0
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return ("utf-8", 0) if _mostly_utf8(data) else ("cp1252", 0)
    return "utf-8", 0


def _utf16_without_bom(sample: bytes) -> str | None:
    half = len(sample) // 2
    if half < 2:
        return None
    odd = sample[1::2].count(0)
    even = sample[0::2].count(0)
    if odd > 0.3 * half and even < 0.05 * half:
        return "utf-16-le"
    if even > 0.3 * half and odd < 0.05 * half:
        return "utf-16-be"
    return None


def _mostly_utf8(data: bytes) -> bool:
    """Whether more non-ASCII lines are valid UTF-8 than not (a few broken rows in UTF-8)."""
    good = bad = 0
    for line in data.splitlines():
        if line.isascii():
            continue
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            bad += 1
        else:
            good += 1
    return good > 0 and good >= bad


def sniff_delimiter(sample: str, suffix: str = "") -> str:
    """The separator of a CSV sample: ``;``, ``,`` or tab."""
    if suffix.lower() == ".tsv":
        return "\t"
    header = sample.splitlines()[0] if sample else ""
    try:
        found = csv.Sniffer().sniff(sample, delimiters=",;\t").delimiter
    except csv.Error:
        found = ""
    if found and found in header:
        return found
    counts = {d: _outside_quotes(header, d) for d in (",", ";", "\t")}
    best = max(counts, key=lambda d: (counts[d], d == ","))
    return best if counts[best] else ","


def _outside_quotes(line: str, delimiter: str) -> int:
    count, quoted = 0, False
    for ch in line:
        if ch == '"':
            quoted = not quoted
        elif ch == delimiter and not quoted:
            count += 1
    return count


def unescape_cell(value: str) -> str:
    """A cell with the ``'`` that guards a formula-like start (Arxiu's CSV export) removed."""
    if value[:1] == "'" and value[1:2] and value[1] in (*FORMULA_START, "'"):
        return value[1:]
    return value


TABLE_SUFFIXES = (".csv", ".tsv", ".txt", ".xlsx")
"""The files a table import reads, as a folder's hint names them."""


def _tables_in(folder: Path) -> Phrase:
    """The hint for a folder given as a table: the tables in it, or what to give instead."""
    try:
        names = sorted(
            p.name for p in folder.iterdir() if p.suffix.lower() in TABLE_SUFFIXES and p.is_file()
        )
    except OSError:
        names = []
    if names:
        shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
        return Phrase.of("Give one of its tables: {names}.", names=shown)
    return Phrase.of(
        "Give a .csv or .xlsx file; a folder of documents imports with `arxiu import folder`."
    )


def read_bytes(path: Path, limit: int) -> bytes:
    """The file's bytes (``import.file_missing``, ``import.unreadable``, ``import.too_large``;
    a folder is ``import.unreadable`` with the tables it holds named in the hint)."""
    if path.is_dir():
        raise ImportFailed(
            "import.unreadable",
            Phrase.of("{path} is a folder: a table import reads one file.", path=str(path)),
            hint=_tables_in(path),
            details={"path": str(path)},
        )
    try:
        size = path.stat().st_size
    except FileNotFoundError as exc:
        raise ImportFailed(
            "import.file_missing",
            Phrase.of("There is no file {path}.", path=str(path)),
            details={"path": str(path)},
        ) from exc
    except OSError as exc:
        raise ImportFailed(
            "import.unreadable",
            Phrase.of("Cannot read {path}: {why}.", path=str(path), why=str(exc)),
        ) from exc
    if size > limit:
        raise ImportFailed(
            "import.too_large",
            Phrase.of(
                "{name} is {size:,} bytes; tables up to {most:,} bytes are imported.",
                name=path.name,
                size=size,
                most=limit,
            ),
            hint="Split the file, or import it in parts.",
            details={"path": str(path), "size": size, "limit": limit},
        )
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ImportFailed(
            "import.unreadable",
            Phrase.of("Cannot read {path}: {why}.", path=str(path), why=str(exc)),
        ) from exc


def read_csv(path: Path) -> Table:
    """The table in a CSV/TSV file (see the module doc).

    Raises:
        ImportFailed: missing, unreadable or too large a file; a header past the bounds.
    """
    data = read_bytes(path, MAX_TABLE_BYTES)
    encoding, bom = detect_encoding(data)
    text = data[bom:].decode(encoding, errors="arxiu.mark")
    comments, text, first_line = _comments(text)
    delimiter = sniff_delimiter(
        "\n".join(text[:SNIFF_CHARS].splitlines()[:SNIFF_LINES]), path.suffix
    )
    table = Table(path.name, encoding, delimiter, [], comments=comments)
    if csv.field_size_limit() < MAX_TABLE_BYTES:
        csv.field_size_limit(MAX_TABLE_BYTES)  # cells are bounded below, per row, with a code
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    fill(table, _parsed(reader, first_line, table), unescape=True)
    return table


def _comments(text: str) -> tuple[list[str], str, int]:
    """The leading ``# `` comment lines, the text after them, and the next line's number."""
    comments: list[str] = []
    line = 1
    while text.startswith("# "):
        head, _, text = text.partition("\n")
        comments.append(head[2:].rstrip("\r"))
        line += 1
    return comments, text, line


def _parsed(
    reader: Iterator[list[str]], first_line: int, table: Table
) -> Iterator[tuple[int, list[str]]]:
    """``(line, cells)`` of every row; a row the csv module cannot parse is skipped."""
    offset = first_line - 1
    consumed = 0
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            line = offset + consumed + 1
            consumed = getattr(reader, "line_num", consumed)
            if "unexpected end of data" in str(exc):
                _truncated(table, line)
                return
            skip = Skip.said(line, table.file, BAD_ROW, "not a CSV row: {why}", why=str(exc))
            table.skipped.append(skip)
            continue
        line = offset + consumed + 1
        consumed = getattr(reader, "line_num", consumed)
        yield line, cells


def _truncated(table: Table, line: int) -> None:
    """The file ends inside a quoted cell: the rows before it are kept, the error says where."""
    skip = Skip.said(
        line,
        table.file,
        TRUNCATED,
        "the file ends inside a quoted cell of the row on line {line}",
        line=line,
    )
    reason = skip.phrase or skip.reason
    table.skipped.append(skip)
    table.error = ImportFailed(
        TRUNCATED,
        Phrase.of(
            "{file} ends early: {reason}; the rows before it were read.",
            file=table.file,
            reason=reason,
        ),
        hint="The file may have been cut short; export or copy it again.",
        details={"line": line},
    )


def fill(table: Table, rows: Iterator[tuple[int, list[str]]], *, unescape: bool = False) -> None:
    """Put the header and the checked rows of ``rows`` into ``table`` (CSV and XLSX alike).

    Raises:
        ImportFailed: ``import.too_many_columns`` for a header past :data:`MAX_COLUMNS`.
    """
    for line, cells in rows:
        if not any(c.strip() for c in cells):
            continue  # blank lines are not rows
        if not table.header:
            table.header = _header(cells, table.file)
            continue
        if len(table.rows) >= MAX_ROWS:
            table.error = ImportFailed(
                TOO_MANY_ROWS,
                Phrase.of(
                    "{file} has more than {most:,} rows; reading stopped at line {line}.",
                    file=table.file,
                    most=MAX_ROWS,
                    line=line,
                ),
                hint="Split the file; the rows before were imported.",
                details={"line": line, "limit": MAX_ROWS},
            )
            return
        checked = _check(cells, len(table.header), table.encoding)
        if isinstance(checked, Skip):
            table.skipped.append(
                Skip(line, checked.reason, table.file, checked.code, checked.phrase)
            )
            continue
        if unescape:
            checked = tuple(unescape_cell(c) for c in checked)
        table.rows.append(TableRow(line, checked))


def _header(cells: list[str], file: str) -> list[str]:
    if len(cells) > MAX_COLUMNS:
        raise ImportFailed(
            TOO_MANY_COLUMNS,
            Phrase.of(
                "{file} has {columns:,} columns; tables up to {most:,} are imported.",
                file=file,
                columns=len(cells),
                most=MAX_COLUMNS,
            ),
            details={"columns": len(cells), "limit": MAX_COLUMNS},
        )
    if any(_MARK in c or "\x00" in c for c in cells):
        raise ImportFailed(
            ENCODING,
            Phrase.of("The header of {file} holds bytes that are not valid text.", file=file),
            hint="Save the file as UTF-8 and import it again.",
        )
    while cells and not cells[-1].strip():
        cells = cells[:-1]
    return [c.strip() or f"({i + 1})" for i, c in enumerate(cells)]


def _check(cells: list[str], width: int, encoding: str) -> tuple[str, ...] | Skip:
    """The row's cells padded to the header's width, or why the row is skipped."""
    if len(cells) > width:
        if any(c.strip() for c in cells[width:]):
            reason = "the row has {cells} cells, the header {width}"
            return Skip.said(0, "", BAD_ROW, reason, cells=len(cells), width=width)
        cells = cells[:width]
    for number, cell in enumerate(cells, start=1):
        if _MARK in cell:
            reason = "cell {number} holds bytes that are not valid {encoding}"
            return Skip.said(0, "", ENCODING, reason, number=number, encoding=encoding)
        if "\x00" in cell:
            return Skip.said(0, "", BAD_ROW, "cell {number} holds a NUL byte", number=number)
        if len(cell) > MAX_CELL_CHARS:
            reason = "cell {number} holds {chars:,} characters (at most {most:,})"
            said = {"number": number, "chars": len(cell), "most": MAX_CELL_CHARS}
            return Skip.said(0, "", CELL_TOO_LARGE, reason, **said)
    return tuple(cells) + ("",) * (width - len(cells))
