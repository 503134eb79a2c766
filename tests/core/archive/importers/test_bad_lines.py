"""Bad lines lose nothing: each is reported with its code and line, every valid row is imported."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.archive import Archive, Field, Section
from app.core.archive.bulk import NewRecord
from app.core.archive.importers import run_import
from app.core.archive.importers.base import (
    BAD_LINE,
    ROW_FAILED,
    Built,
    ImportSummary,
    import_file,
)
from app.core.archive.importers.reading import MAX_LINE_BYTES
from tests.conftest import shared_data
from tests.core.archive.importers.conftest import first_lines, write_gz

DEEP = b'{"_id": "deep", "title": "t", "text": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
SURROGATE = b'{"_id": "sur", "title": "bad \\ud800 title", "text": "x"}\n'
PAIR = b'{"_id": "pair", "title": "an emoji \\ud83d\\ude00", "text": "fine"}\n'


def corpus(tmp_path: Path, bad: dict[int, bytes], count: int = 40) -> tuple[Path, list[bytes]]:
    """A BEIR corpus of real lines with ``bad`` lines spliced in at their (1-based) numbers."""
    good = first_lines(shared_data("beir-dbpedia-5k", "corpus.jsonl.gz"), count)
    lines = list(good)
    for number in sorted(bad):
        lines.insert(number - 1, bad[number])
    return write_gz(tmp_path / "bad" / "corpus.jsonl.gz", lines), good


def stored_titles(archive: Archive) -> set[str]:
    return {r.text("beir2", "lg-eng") or "" for r in archive.iter_records("beir1")}


@pytest.mark.parametrize(
    ("line", "reason"),
    [(DEEP, "nested too deeply"), (SURROGATE, "lone surrogate")],
    ids=["100k-nested-brackets", "lone-surrogate"],
)
def test_a_bad_line_is_reported_and_every_valid_row_is_kept(
    archive: Archive, tmp_path: Path, line: bytes, reason: str
) -> None:
    path, good = corpus(tmp_path, {3: line})

    summary = run_import(archive, "beir", path)

    assert [(s.line, s.code) for s in summary.skipped] == [(3, BAD_LINE)]
    assert reason in summary.skipped[0].reason
    assert summary.error is None
    assert summary.created == len(good) == archive.count_records("beir1")
    assert stored_titles(archive) == {json.loads(g)["title"] for g in good}


def test_a_surrogate_pair_is_text_and_is_imported(archive: Archive, tmp_path: Path) -> None:
    path, good = corpus(tmp_path, {2: PAIR}, count=5)

    summary = run_import(archive, "beir", path)

    assert summary.skipped == []
    assert "an emoji \U0001f600" in stored_titles(archive)
    assert summary.created == len(good) + 1


def test_a_line_over_the_cap_is_skipped_and_the_rest_imported(
    archive: Archive, tmp_path: Path
) -> None:
    huge = b'{"_id": "huge", "title": "' + b"h" * (MAX_LINE_BYTES + 10) + b'"}\n'
    path, good = corpus(tmp_path, {2: huge, 5: DEEP, 9: SURROGATE})

    summary = run_import(archive, "beir", path)

    assert [s.line for s in summary.skipped] == [2, 5, 9]
    assert "longer than" in summary.skipped[0].reason
    assert summary.created == len(good) == archive.count_records("beir1")


def test_a_row_the_archive_cannot_store_is_left_out_of_its_batch_alone(
    archive: Archive, tmp_path: Path
) -> None:
    """A value that reaches the database unencodable fails that row only, not its batch."""
    archive.put_section(Section("s1", {"lg-eng": "S"}))
    archive.put_field(Field("f1", "s1", {"lg-eng": "F"}))
    rows = [{"id": str(n), "v": f"row {n}"} for n in range(1, 13)]
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")

    def build(row: dict[str, Any]) -> Built:
        value = row["v"] + ("\ud800" if row["id"] in ("4", "9") else "")  # injected past reading
        return Built(NewRecord("s1", {"f1": [{"value": value}]}, external_id=row["id"]))

    summary = ImportSummary(kind="test", path=str(path))
    import_file(archive, summary, path, "test", build)

    assert [(s.line, s.code) for s in summary.skipped] == [(4, ROW_FAILED), (9, ROW_FAILED)]
    assert "UnicodeEncodeError" in summary.skipped[0].reason
    assert summary.created == 10 == archive.count_records("s1")
    json.dumps(summary.to_dict(), ensure_ascii=False).encode("utf-8")  # printable as is


def test_per_row_upsert_reports_positions_and_keeps_the_rest(archive: Archive) -> None:
    archive.put_section(Section("s1", {"lg-eng": "S"}))
    records = [NewRecord("s1", {"f1": [{"value": v}]}) for v in ("a", "b\udfff", "c")]

    result = archive.submit_upsert(records, per_row=True).result()

    assert [position for position, _ in result.failed] == [1]
    assert result.created == 2 and len(result.keys) == 2
    assert archive.count_records("s1") == 2


def test_without_per_row_a_bad_record_rolls_the_batch_back(archive: Archive) -> None:
    archive.put_section(Section("s1", {"lg-eng": "S"}))
    records = [NewRecord("s1", {"f1": [{"value": v}]}) for v in ("a", "b\udfff", "c")]

    with pytest.raises(UnicodeEncodeError):
        archive.upsert_records(records)
    assert archive.count_records("s1") == 0
