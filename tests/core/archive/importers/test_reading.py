"""Bad input for every importer: malformed lines, missing and unreadable files, truncated gzip."""

from __future__ import annotations

import gzip
import io
import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from app.core.archive import Archive
from app.core.archive.importers import KINDS, SERVICES, run_import
from app.core.archive.importers.languages import archive_lang
from app.core.archive.importers.reading import count_lines, parse_line
from app.core.errors import ImportFailed
from app.core.phrases import Phrase
from tests.conftest import shared_data
from tests.core.archive.importers.conftest import SliceFn, first_lines, write_gz


def _with_bad_lines(tmp_path: Path, good: list[bytes]) -> tuple[Path, dict[int, str]]:
    """The good lines with bad ones spliced in; returns the file and {line: expected reason}."""
    first = json.loads(good[0])
    no_id = {k: v for k, v in first.items() if k != "_id"}
    bad = {
        2: (b'{"_id": "x", "title": \n', "bad JSON"),
        4: (b"[1, 2, 3]\n", "expected a JSON object"),
        6: (json.dumps(no_id).encode() + b"\n", "missing required key '_id'"),
        8: (json.dumps({**first, "_id": "y", "title": 7}).encode() + b"\n", "'title' must be"),
        10: (b'{"_id": "caf\xe9"}\n', "not UTF-8"),
        12: (good[0], "duplicate id"),
    }
    lines = list(good)
    for number in sorted(bad):
        lines.insert(number - 1, bad[number][0])
    lines.insert(13, b"   \n")  # blank lines are passed over, not reported
    path = write_gz(tmp_path / "bad" / "corpus.jsonl.gz", lines)
    return path, {n: reason for n, (_, reason) in bad.items()}


def test_malformed_lines_are_skipped_with_their_line_numbers(
    archive: Archive, tmp_path: Path
) -> None:
    good = first_lines(shared_data("beir-dbpedia-5k", "corpus.jsonl.gz"), 30)
    path, expected = _with_bad_lines(tmp_path, good)

    summary = run_import(archive, "beir", path)

    assert summary.created == len(good)
    assert summary.error is None
    assert [s.line for s in summary.skipped] == sorted(expected)
    for skip in summary.skipped:
        assert expected[skip.line] in skip.reason
        assert skip.file == "corpus.jsonl.gz"
    assert archive.count_records("beir1") == len(good)


def test_a_truncated_gzip_imports_what_was_read_and_reports_the_error(
    archive: Archive, tmp_path: Path
) -> None:
    source = shared_data("beir-dbpedia-5k", "corpus.jsonl.gz")
    data = source.read_bytes()
    path = tmp_path / "cut" / "corpus.jsonl.gz"
    path.parent.mkdir()
    path.write_bytes(data[: len(data) // 2])

    summary = run_import(archive, "beir", path)

    assert summary.error is not None
    assert summary.error.code == "import.truncated"
    last_line = summary.error.details["last_line"]
    assert 0 < summary.created == last_line < 5000
    assert archive.count_records("beir1") == summary.created
    assert str(last_line) in summary.error.message


@pytest.mark.parametrize("kind", [kind for kind in KINDS if kind not in SERVICES])
def test_a_missing_file_is_a_coded_error(archive: Archive, tmp_path: Path, kind: str) -> None:
    with pytest.raises(ImportFailed) as caught:
        run_import(archive, kind, tmp_path / "nothing-here")
    assert caught.value.code == "import.file_missing"
    assert archive.count_records() == 0


@pytest.mark.parametrize("kind", list(SERVICES))
def test_a_service_kind_given_a_path_is_a_coded_error(
    archive: Archive, tmp_path: Path, kind: str
) -> None:
    with pytest.raises(ImportFailed) as caught:
        run_import(archive, kind, tmp_path / "nothing-here")
    assert caught.value.code == "import.oai_bad_url"
    assert archive.count_records() == 0


def test_an_empty_folder_is_a_missing_file(archive: Archive, tmp_path: Path) -> None:
    with pytest.raises(ImportFailed) as caught:
        run_import(archive, "nomisma", tmp_path)
    assert caught.value.code == "import.file_missing"
    assert "concepts.jsonl.gz" in caught.value.message


def test_a_gz_file_that_is_not_gzip_is_unreadable(archive: Archive, tmp_path: Path) -> None:
    path = tmp_path / "hoards.jsonl.gz"
    path.write_text('{"id": "igch0001"}\n', encoding="utf-8")
    with pytest.raises(ImportFailed) as caught:
        run_import(archive, "igch", path)
    assert caught.value.code == "import.unreadable"


def test_a_corrupt_gzip_stream_with_no_line_is_unreadable(archive: Archive, tmp_path: Path) -> None:
    path = tmp_path / "wills.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"id": 1}\n' * 100)[:12])
    with pytest.raises(ImportFailed) as caught:
        run_import(archive, "poilus", path)
    assert caught.value.code == "import.unreadable"


def test_an_unknown_kind_is_a_coded_error(archive: Archive, tmp_path: Path) -> None:
    with pytest.raises(ImportFailed) as caught:
        run_import(archive, "dublin-core", tmp_path)
    assert caught.value.code == "import.kind_unknown"


def test_plain_jsonl_is_read_like_gzip(archive: Archive, tmp_path: Path) -> None:
    good = first_lines(shared_data("beir-dbpedia-5k", "corpus.jsonl.gz"), 5)
    folder = tmp_path / "plain-corpus"
    folder.mkdir()
    (folder / "corpus.jsonl").write_bytes(b"".join(good))

    summary = run_import(archive, "beir", folder)

    assert summary.created == 5
    assert count_lines(folder / "corpus.jsonl") == 5


def test_progress_reaches_the_total(archive: Archive, data_slice: SliceFn) -> None:
    path = data_slice("igch/hoards.jsonl.gz", 1200)
    calls: list[tuple[int, int]] = []

    run_import(archive, "igch", path, progress=lambda done, total: calls.append((done, total)))

    assert calls[-1] == (1200, 1200)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)
    assert len(calls) >= 3


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("en", "lg-eng"),
        ("ca", "lg-cat"),
        ("es", "lg-spa"),
        ("pt-BR", "lg-por"),
        ("grc", "lg-grc"),
        ("", "lg-nolan"),
    ],
)
def test_language_codes_become_archive_codes(code: str, expected: str) -> None:
    assert archive_lang(code) == expected


class _EndlessLine(io.RawIOBase):
    """A 300 MB line without a newline, then one short line, generated as it is read."""

    def __init__(self, size: int) -> None:
        self.left = size
        self.tail = b'\n{"_id": "after"}\n'

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.left > 0:
            count = min(len(buffer), self.left)
            buffer[:count] = b"x" * count
            self.left -= count
            return count
        count = min(len(buffer), len(self.tail))
        buffer[:count], self.tail = self.tail[:count], self.tail[count:]
        return count


def test_a_300_mb_line_is_passed_over_holding_at_most_the_cap() -> None:
    from app.core.archive.importers.reading import MAX_LINE_BYTES, _lines

    stream = io.BufferedReader(_EndlessLine(300 << 20))
    tracemalloc.start()
    try:
        results = list(_lines(stream))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert results == [None, b'{"_id": "after"}\n']
    assert peak < 3 * MAX_LINE_BYTES < 300 << 20


def _standard(raw: bytes, number: int) -> object:
    """What the standard library alone makes of a line (the reader before ``orjson``)."""
    try:
        return json.loads(raw.decode("utf-8-sig" if number == 1 else "utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        return type(exc).__name__


@pytest.mark.parametrize(
    "raw",
    [
        b'{"id": 12345678901234567890123, "n": 1}\n',  # past 64 bits: orjson reads a float
        b'{"id": -9223372036854775809}\n',
        b'{"x": 1E400, "y": NaN, "z": -Infinity}\n',  # standard-only numbers
        b'{"a": 0.1, "b": 5e-324, "c": 1.7976931348623157e308, "d": -0.0}\n',
        b'{"a": "caf\\u00e9 \\ud83d\\ude00", "a": 2}\n',  # escapes, a repeated key
        b"\xef\xbb\xbf" + b'{"bom": true}\n',  # a BOM on line 1
        b'{"deep": ' + b"[" * 300 + b"]" * 300 + b"}\n",  # nesting a standard limit may refuse
        b'{"deep": ' + b"[" * 5000 + b"]" * 5000 + b"}\n",
    ],
    ids=["big-int", "big-negative", "nan-inf", "floats", "escapes", "bom", "deep-300", "deep-5k"],
)
def test_a_line_reads_as_the_standard_library_reads_it(raw: bytes) -> None:
    row = parse_line(raw, 1)
    expected = _standard(raw, 1)

    if isinstance(expected, dict):
        assert row == expected and repr(row) == repr(expected)  # int stays int, -0.0 stays
    elif expected == "RecursionError":
        assert isinstance(row, Phrase) and row.english() == "bad JSON: nested too deeply"
    else:
        assert isinstance(row, Phrase) and row.english().startswith("bad JSON")
