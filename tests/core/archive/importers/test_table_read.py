"""Reading CSV files: encodings detected and never mangled, separators sniffed, odd rows coded."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from app.core.archive.importers import table_read
from app.core.archive.importers.table_read import (
    MAX_CELL_CHARS,
    detect_encoding,
    read_csv,
    sniff_delimiter,
    unescape_cell,
)
from app.core.errors import ImportFailed

CATALAN = (
    "Títol;Data;Descripció\r\nCol·lecció Puig;1936;Façana de la plaça\r\nL'àvia;1950;Cançó\r\n"
)


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def cells(path: Path) -> list[tuple[str, ...]]:
    return [row.cells for row in read_csv(path).rows]


@pytest.mark.parametrize(
    ("encoding", "prefix", "expected"),
    [
        ("utf-8", b"", "utf-8"),
        ("utf-8", b"\xef\xbb\xbf", "utf-8"),
        ("utf-16-le", b"\xff\xfe", "utf-16-le"),
        ("utf-16-be", b"\xfe\xff", "utf-16-be"),
        ("utf-16-le", b"", "utf-16-le"),
        ("cp1252", b"", "cp1252"),
    ],
)
def test_encodings_are_detected_and_the_accents_survive(
    tmp_path: Path, encoding: str, prefix: bytes, expected: str
) -> None:
    path = write(tmp_path, "t.csv", prefix + CATALAN.encode(encoding))

    table = read_csv(path)

    assert table.encoding == expected
    assert table.header == ["Títol", "Data", "Descripció"]
    assert table.delimiter == ";"
    assert [r.cells for r in table.rows] == [
        ("Col·lecció Puig", "1936", "Façana de la plaça"),
        ("L'àvia", "1950", "Cançó"),
    ]
    assert table.skipped == []


def test_a_byte_invalid_in_utf8_is_a_coded_skip_naming_its_line(tmp_path: Path) -> None:
    good = "títol,data\nÀger,1900\n".encode()
    path = write(tmp_path, "t.csv", good + b"Bad \xff\xfe row,1901\nVic,1902\n")

    table = read_csv(path)

    assert table.encoding == "utf-8"
    assert [r.cells[0] for r in table.rows] == ["Àger", "Vic"]
    [skip] = table.skipped
    assert (skip.line, skip.code, skip.file) == (3, "import.encoding", "t.csv")
    assert not any("\ufffd" in c for r in table.rows for c in r.cells)


def test_a_byte_undefined_in_cp1252_is_a_coded_skip(tmp_path: Path) -> None:
    path = write(tmp_path, "t.csv", "Títol,Any\nCol·lecció,1936\n".encode("cp1252") + b"X\x81,1\n")

    table = read_csv(path)

    assert table.encoding == "cp1252"
    assert [r.cells for r in table.rows] == [("Col·lecció", "1936")]
    assert [(s.line, s.code) for s in table.skipped] == [(3, "import.encoding")]


@pytest.mark.parametrize(
    ("text", "suffix", "expected"),
    [
        ("a,b,c\n1,2,3\n", ".csv", ","),
        ("a;b;c\n1;2;3\n", ".csv", ";"),
        ("a\tb\tc\n1\t2\t3\n", ".txt", "\t"),
        ('"x, y";b\n"1, 2";3\n', ".csv", ";"),
        ("only\none\n", ".tsv", "\t"),
        ("single\nvalue\n", ".csv", ","),
    ],
)
def test_separators_are_sniffed(text: str, suffix: str, expected: str) -> None:
    assert sniff_delimiter(text, suffix) == expected


def test_ragged_rows_pad_short_ones_and_skip_long_ones(tmp_path: Path) -> None:
    text = "title,date,notes\nA,1900\nB,1901,x,\nC,1902,y,EXTRA\n\nD,1903,z\n"
    path = write(tmp_path, "t.csv", text.encode())

    table = read_csv(path)

    assert [r.cells for r in table.rows] == [
        ("A", "1900", ""),
        ("B", "1901", "x"),
        ("D", "1903", "z"),
    ]
    assert [r.line for r in table.rows] == [2, 3, 6]
    assert [(s.line, s.code) for s in table.skipped] == [(4, "import.bad_row")]


def test_a_nul_byte_skips_its_row(tmp_path: Path) -> None:
    path = write(tmp_path, "t.csv", b"title,date\nA,1900\nB\x00C,1901\nD,1902\n")

    table = read_csv(path)

    assert [r.cells[0] for r in table.rows] == ["A", "D"]
    assert [(s.line, s.code) for s in table.skipped] == [(3, "import.bad_row")]
    assert "NUL" in table.skipped[0].reason


def test_a_ten_megabyte_field_is_a_coded_skip_and_the_rest_is_read(tmp_path: Path) -> None:
    big = "x" * (10 * 1024 * 1024)
    path = write(tmp_path, "t.csv", f'title,text\nA,short\nB,"{big}"\nC,short\n'.encode())

    table = read_csv(path)

    assert [r.cells[0] for r in table.rows] == ["A", "C"]
    assert [(s.line, s.code) for s in table.skipped] == [(3, "import.cell_too_large")]
    assert len(big) > MAX_CELL_CHARS


def test_quoted_newlines_keep_the_line_numbers_right(tmp_path: Path) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerows([["title", "notes"], ["A", "one\ntwo\nthree"], ["B", "x"]])
    path = write(tmp_path, "t.csv", buffer.getvalue().encode())

    table = read_csv(path)

    assert [(r.line, r.cells) for r in table.rows] == [
        (2, ("A", "one\ntwo\nthree")),
        (5, ("B", "x")),
    ]


def test_comment_lines_before_the_header_are_kept_apart(tmp_path: Path) -> None:
    text = "\ufeff# This export includes restricted records.\r\ntitle,date\r\nA,1\r\n"
    path = write(tmp_path, "t.csv", text.encode())

    table = read_csv(path)

    assert table.comments == ["This export includes restricted records."]
    assert table.header == ["title", "date"]
    assert [(r.line, r.cells) for r in table.rows] == [(3, ("A", "1"))]


def test_formula_cells_are_kept_as_text_and_our_guard_quote_is_removed(tmp_path: Path) -> None:
    text = 'title,link\nA,"=HYPERLINK(""http://x"",""y"")"\nB,\'=1+2\nC,\'plain\n'
    path = write(tmp_path, "t.csv", text.encode())

    assert [r.cells[1] for r in read_csv(path).rows] == [
        '=HYPERLINK("http://x","y")',
        "=1+2",
        "'plain",
    ]
    assert unescape_cell("''=x") == "'=x"


def test_a_missing_file_and_a_bad_header_are_coded_errors(tmp_path: Path) -> None:
    with pytest.raises(ImportFailed) as missing:
        read_csv(tmp_path / "nope.csv")
    assert missing.value.code == "import.file_missing"

    wide = write(tmp_path, "wide.csv", (",".join(f"c{i}" for i in range(1001)) + "\n").encode())
    with pytest.raises(ImportFailed) as too_wide:
        read_csv(wide)
    assert too_wide.value.code == "import.too_many_columns"


def test_mostly_utf8_with_one_latin1_line_stays_utf8() -> None:
    data = "a,b\nÀger,é\nÒdena,ü\n".encode() + "Vic,ç\n".encode("latin-1")
    assert detect_encoding(data) == ("utf-8", 0)
    assert detect_encoding("Vic,ç\nÀger,é\n".encode("latin-1")) == ("cp1252", 0)


def test_bad_quoting_skips_the_row_and_a_cut_file_keeps_what_was_read(tmp_path: Path) -> None:
    bad = write(tmp_path, "bad.csv", b'title,date\nA,1\n"B"x,2\nC,3\n')
    cut = write(tmp_path, "cut.csv", b'title,notes\nA,1\nB,"a long note\ncut sh')

    bad_table, cut_table = read_csv(bad), read_csv(cut)

    assert [r.cells[0] for r in bad_table.rows] == ["A", "C"]
    assert [(s.line, s.code) for s in bad_table.skipped] == [(3, "import.bad_row")]
    assert [r.cells for r in cut_table.rows] == [("A", "1")]
    assert [(s.line, s.code) for s in cut_table.skipped] == [(3, "import.truncated")]
    assert cut_table.error is not None and cut_table.error.code == "import.truncated"


def test_past_the_row_bound_reading_stops_and_says_where(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(table_read, "MAX_ROWS", 3)
    path = write(tmp_path, "t.csv", ("title\n" + "".join(f"r{i}\n" for i in range(10))).encode())

    table = read_csv(path)

    assert [r.cells[0] for r in table.rows] == ["r0", "r1", "r2"]
    assert table.error is not None and table.error.code == "import.too_many_rows"
    assert table.error.details["line"] == 5
