"""Text files in the encodings editors write, detected and never mangled."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from app.core.archive.importers.text_files import decode_text, read_text_file
from app.core.errors import ImportFailed

TEXT = "L'àvia va escriure: «Què farem?» — Señor Muñoz, 1950.\nSegona línia."


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        (TEXT.encode("utf-8"), "utf-8"),
        (codecs.BOM_UTF8 + TEXT.encode("utf-8"), "utf-8-sig"),
        (codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le"), "utf-16-le"),
        (codecs.BOM_UTF16_BE + TEXT.encode("utf-16-be"), "utf-16-be"),
        (TEXT.encode("utf-16-le"), "utf-16-le"),
        (TEXT.encode("cp1252"), "cp1252"),
    ],
)
def test_each_encoding_is_detected_and_the_text_kept(data: bytes, encoding: str) -> None:
    decoded = decode_text(data)

    assert (decoded.text, decoded.encoding) == (TEXT, encoding)


def test_windows_line_ends_become_newlines_and_latin1_is_the_last_resort() -> None:
    assert decode_text(b"one\r\ntwo\rthree").text == "one\ntwo\nthree"
    assert decode_text(b"caf\xe9 \x81").encoding == "latin-1"  # 0x81 is undefined in cp1252


def test_a_text_file_over_the_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_bytes(b"x" * 100)

    with pytest.raises(ImportFailed) as caught:
        read_text_file(path, limit=10)

    assert caught.value.code == "import.too_large"
