"""Reading an XLSX workbook as a table, after checking the zip before openpyxl expands it.

A workbook is a zip of XML parts. Before :func:`openpyxl.load_workbook` (read-only, cached
values rather than formulas) sees it, :func:`check_workbook` refuses with a code:

=========================  ======================================================================
code                       refused
=========================  ======================================================================
``import.not_zip``         a file that is not a zip archive (or a damaged one)
``import.zip_bomb``        members expanding past :data:`MAX_UNCOMPRESSED` in all, or one member
                           past :data:`MAX_RATIO` times its compressed size (above 1 MiB)
``import.too_large``       a file past :data:`MAX_XLSX_BYTES`, more than :data:`MAX_MEMBERS`
                           members, a shared-strings table past :data:`MAX_SHARED_STRINGS`
                           strings or :data:`MAX_SHARED_BYTES` bytes
``import.xml_entity``      a DOCTYPE or entity declaration in any XML part (openpyxl does not use
                           defusedxml unless it is installed, and it is not a dependency)
``import.too_many_rows``   a sheet whose dimension says more than :data:`~.table_read.MAX_ROWS`
``import.too_many_columns``  more than :data:`~.table_read.MAX_COLUMNS` columns
=========================  ======================================================================

The sizes checked are the ones the zip's directory declares; the scan for entities reads each
part through :mod:`zipfile`, which stops at the declared size, so a lying directory cannot make
it read more.
"""

from __future__ import annotations

import datetime as dt
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from app.core.archive.importers.table_read import (
    MAX_COLUMNS,
    MAX_ROWS,
    TOO_MANY_COLUMNS,
    TOO_MANY_ROWS,
    Table,
    fill,
)
from app.core.errors import ImportFailed
from app.core.phrases import Phrase

MAX_XLSX_BYTES = 100 * 1024 * 1024
MAX_UNCOMPRESSED = 512 * 1024 * 1024
MAX_RATIO = 100
MAX_MEMBERS = 10_000
MAX_SHARED_BYTES = 128 * 1024 * 1024
MAX_SHARED_STRINGS = 2_000_000
SCAN_CHUNK = 1 << 20

_ENTITY = re.compile(rb"<!(?:DOCTYPE|ENTITY)", re.IGNORECASE)
_COUNT = re.compile(rb'uniqueCount="(\d+)"')
_DIMENSION = re.compile(rb'<dimension[^>]*ref="(?:[A-Z]+\d+:)?([A-Z]+)(\d+)"')


def _refuse(code: str, message: Phrase, path: Path, **details: Any) -> ImportFailed:
    return ImportFailed(
        code,
        message,
        hint="Open the workbook in a spreadsheet program and save it again, or export it as CSV.",
        details={"path": str(path), **details},
    )


def check_workbook(path: Path) -> None:
    """Refuse a hostile or damaged workbook with a code (see the module doc)."""
    size = path.stat().st_size
    if size > MAX_XLSX_BYTES:
        raise _refuse(
            "import.too_large",
            Phrase.of("{name} is {size:,} bytes.", name=path.name, size=size),
            path,
            size=size,
        )
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            _check_sizes(members, path)
            for member in members:
                if member.filename.endswith((".xml", ".rels", ".vml")):
                    _scan(archive, member, path)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError) as exc:
        raise _refuse(
            "import.not_zip",
            Phrase.of(
                "{name} is not a readable XLSX (zip) file: {why}.", name=path.name, why=str(exc)
            ),
            path,
        ) from exc
    except NotImplementedError as exc:  # an unsupported compression method
        raise _refuse(
            "import.not_zip", Phrase.of("{name}: {why}.", name=path.name, why=str(exc)), path
        ) from exc


def _check_sizes(members: list[zipfile.ZipInfo], path: Path) -> None:
    if len(members) > MAX_MEMBERS:
        raise _refuse(
            "import.too_large",
            Phrase.of("{name} holds {parts:,} parts.", name=path.name, parts=len(members)),
            path,
        )
    total = sum(m.file_size for m in members)
    if total > MAX_UNCOMPRESSED:
        raise _refuse(
            "import.zip_bomb",
            Phrase.of(
                "{name} expands to {size:,} bytes (at most {most:,}).",
                name=path.name,
                size=total,
                most=MAX_UNCOMPRESSED,
            ),
            path,
            uncompressed=total,
        )
    for member in members:
        ratio = member.file_size / max(member.compress_size, 1)
        if member.file_size > 1024 * 1024 and ratio > MAX_RATIO:
            raise _refuse(
                "import.zip_bomb",
                Phrase.of(
                    "{member} in {name} expands {ratio:,.0f} times.",
                    member=member.filename,
                    name=path.name,
                    ratio=ratio,
                ),
                path,
                member=member.filename,
                ratio=round(ratio),
            )
        if member.filename.endswith("sharedStrings.xml") and member.file_size > MAX_SHARED_BYTES:
            raise _refuse(
                "import.too_large",
                Phrase.of(
                    "The shared strings of {name} are {size:,} bytes.",
                    name=path.name,
                    size=member.file_size,
                ),
                path,
            )


def _scan(archive: zipfile.ZipFile, member: zipfile.ZipInfo, path: Path) -> None:
    """Refuse entity declarations anywhere in one part; check its declared bounds."""
    tail = b""
    first = True
    with archive.open(member) as handle:
        while chunk := handle.read(SCAN_CHUNK):
            window = tail + chunk
            if _ENTITY.search(window):
                raise _refuse(
                    "import.xml_entity",
                    Phrase.of(
                        "{member} in {name} declares a DOCTYPE or entities.",
                        member=member.filename,
                        name=path.name,
                    ),
                    path,
                    member=member.filename,
                )
            if first:
                _check_head(window[:4096], member.filename, path)
                first = False
            tail = chunk[-16:]


def _check_head(head: bytes, name: str, path: Path) -> None:
    if name.endswith("sharedStrings.xml"):
        count = _COUNT.search(head)
        if count and int(count.group(1)) > MAX_SHARED_STRINGS:
            raise _refuse(
                "import.too_large",
                Phrase.of(
                    "The shared strings table of {name} holds {strings:,} strings.",
                    name=path.name,
                    strings=int(count.group(1)),
                ),
                path,
            )
    dimension = _DIMENSION.search(head)
    if dimension and name.startswith("xl/worksheets/"):
        columns, rows = _column_number(dimension.group(1).decode()), int(dimension.group(2))
        if rows > MAX_ROWS + 1:
            raise _refuse(
                TOO_MANY_ROWS,
                Phrase.of("{name} has {rows:,} rows.", name=name, rows=rows),
                path,
                rows=rows,
            )
        if columns > MAX_COLUMNS:
            raise _refuse(
                TOO_MANY_COLUMNS,
                Phrase.of("{name} has {columns:,} columns.", name=name, columns=columns),
                path,
            )


def _column_number(letters: str) -> int:
    number = 0
    for ch in letters:
        number = number * 26 + ord(ch) - ord("A") + 1
    return number


def read_xlsx(path: Path, sheet: str | None = None) -> Table:
    """The table in a workbook's first sheet (or ``sheet``), after :func:`check_workbook`.

    Raises:
        ImportFailed: the codes of :func:`check_workbook`; ``import.sheet_unknown``.
    """
    check_workbook(path)
    import openpyxl  # a dependency of table imports only

    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        message = Phrase.of(
            "{name} is not a readable workbook: {why}.", name=path.name, why=str(exc)
        )
        raise _refuse("import.not_zip", message, path) from exc
    try:
        if sheet is not None and sheet not in book.sheetnames:
            raise ImportFailed(
                "import.sheet_unknown",
                Phrase.of("{name} has no sheet {sheet!r}.", name=path.name, sheet=sheet),
                hint=Phrase.of("Its sheets: {sheets}.", sheets=", ".join(book.sheetnames)),
            )
        worksheet = book[sheet] if sheet is not None else book.worksheets[0]
        table = Table(path.name if sheet is None else f"{path.name}:{sheet}", "xlsx", "", [])
        fill(table, _rows(worksheet.iter_rows(values_only=True)))
    finally:
        book.close()
    return table


def _rows(rows: Iterator[tuple[Any, ...]]) -> Iterator[tuple[int, list[str]]]:
    for number, row in enumerate(rows, start=1):
        yield number, [cell_text(value) for value in row]


def cell_text(value: Any) -> str:
    """A cell's value as text: ISO dates, integral numbers without ``.0``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        if value.time() == dt.time(0, 0):
            return value.date().isoformat()
        return value.isoformat()
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
