"""Reading plain text from outside: the encoding detected, never silently mangled.

Text files an archivist brings in (``.txt``, ``.md``, ``.vtt``, ``.srt``) come from Windows,
macOS and Linux editors, in UTF-8 with or without a byte-order mark, in UTF-16 (Windows
"Unicode"), or in Windows-1252. :func:`decode_text` tries, in order:

1. a byte-order mark (UTF-8, UTF-16 LE/BE, UTF-32 LE/BE): that encoding;
2. UTF-16 without a mark, when every other byte of the start is NUL (LE or BE);
3. strict UTF-8;
4. Windows-1252, where it defines every byte; else Latin-1 (which never fails).

The encoding used is returned with the text, so an importer can say which it chose.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from pathlib import Path

from app.core.errors import ImportFailed
from app.core.phrases import Phrase

MAX_TEXT_BYTES = 32 << 20
"""The largest text file read (32 MiB)."""

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_SAMPLE = 4096


@dataclass(frozen=True)
class DecodedText:
    """A text file's text and the encoding it was read in."""

    text: str
    encoding: str


def decode_text(data: bytes) -> DecodedText:
    """The text of ``data``, decoded as described in the module doc (never raises)."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            text = data[len(bom) :].decode(encoding.replace("-sig", ""), errors="replace")
            return DecodedText(_newlines(text), encoding)
    utf16 = _utf16_without_bom(data[:_SAMPLE])
    if utf16 is not None:
        return DecodedText(_newlines(data.decode(utf16, errors="replace")), utf16)
    try:
        return DecodedText(_newlines(data.decode("utf-8")), "utf-8")
    except UnicodeDecodeError:
        pass
    try:
        return DecodedText(_newlines(data.decode("cp1252")), "cp1252")
    except UnicodeDecodeError:
        return DecodedText(_newlines(data.decode("latin-1")), "latin-1")


def _utf16_without_bom(sample: bytes) -> str | None:
    """``utf-16-le``/``utf-16-be`` when the sample looks like UTF-16 text of Latin script."""
    if len(sample) < 4:
        return None
    even, odd = sample[0::2], sample[1::2]
    if odd.count(0) >= len(odd) * 0.9 and even.count(0) == 0:
        return "utf-16-le"
    if even.count(0) >= len(even) * 0.9 and odd.count(0) == 0:
        return "utf-16-be"
    return None


def _newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_text_file(path: Path, limit: int = MAX_TEXT_BYTES) -> DecodedText:
    """The decoded text of the file at ``path``.

    Raises:
        ImportFailed: ``import.too_large`` over ``limit`` bytes; ``import.unreadable``.
    """
    data = read_limited(
        path, limit, Phrase.of("text file"), hint="Split the file into smaller ones."
    )
    return decode_text(data)


def read_limited(
    path: Path, limit: int, kind: str | Phrase, hint: str | Phrase | None = None
) -> bytes:
    """The bytes of the file at ``path``, which must be at most ``limit`` bytes long.

    ``kind`` names the sort of file in the message ("PDF", "text file"); ``hint`` goes with
    ``import.too_large``.

    Raises:
        ImportFailed: ``import.too_large`` over ``limit`` bytes; ``import.unreadable``.
    """
    try:
        size = path.stat().st_size
        if size > limit:
            raise ImportFailed(
                "import.too_large",
                Phrase.of(
                    "{name} is {size:,} bytes; the largest {kind} read is {most:,}.",
                    name=path.name,
                    size=size,
                    kind=kind,
                    most=limit,
                ),
                hint=hint,
                details={"path": str(path), "size": size},
            )
        return path.read_bytes()
    except OSError as exc:
        raise unreadable(path, exc) from exc


def unreadable(path: Path, exc: OSError) -> ImportFailed:
    """The ``import.unreadable`` error for the file at ``path``, which ``exc`` kept from being
    read."""
    return ImportFailed(
        "import.unreadable",
        Phrase.of(
            "The file {path} cannot be read: {why}.", path=str(path), why=exc.strerror or str(exc)
        ),
        category="environment",
        details={"path": str(path)},
    )
