"""Indexing killed with SIGKILL at many points: the archive stays sound and the index resumes.

The child is ``arxiu index --model hashing`` on an imported archive, killed at SQL statements
spread over the whole run. After each kill: ``PRAGMA integrity_check`` is ok (and the full-text
index's own integrity check), the archive opens, no chunk belongs to a missing record, no
vector lacks its chunk, and indexing again completes with exactly the totals of an
uninterrupted run.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from app.core.archive import open_archive
from app.core.archive.importers import run_import
from tests.conftest import shared_data
from tests.core.archive.importers.conftest import first_lines, write_gz
from tests.core.kill_points import integrity, run_child, spread

ROWS = 300
COUNTS = {
    "chunks": "SELECT count(*) FROM index_chunks",
    "vectors": "SELECT count(*) FROM index_vectors",
    "records": "SELECT count(*) FROM index_records",
    "fts": "SELECT count(*) FROM index_fts",
}


@pytest.fixture
def pristine(tmp_path: Path) -> Path:
    """An archive of 300 imported BEIR documents, closed (nothing in a WAL)."""
    good = first_lines(shared_data("beir-dbpedia-5k", "corpus.jsonl.gz"), ROWS)
    path = write_gz(tmp_path / "data" / "corpus.jsonl.gz", good)
    folder = tmp_path / "pristine"
    with open_archive(folder, create=True) as archive:
        run_import(archive, "beir", path)
    return folder


def counts(folder: Path) -> dict[str, int]:
    conn = sqlite3.connect(folder / "archive.db")
    try:
        return {name: int(conn.execute(sql).fetchone()[0]) for name, sql in COUNTS.items()}
    finally:
        conn.close()


def check_after_kill(folder: Path) -> None:
    db_file = folder / "archive.db"
    assert integrity(db_file) == ["ok"]
    conn = sqlite3.connect(db_file)
    try:
        conn.execute("INSERT INTO index_fts(index_fts) VALUES ('integrity-check')")
        stray = conn.execute(
            "SELECT count(*) FROM index_chunks c LEFT JOIN records r ON "
            "r.section_tipo = c.section_tipo AND r.section_id = c.section_id "
            "WHERE r.section_id IS NULL"
        ).fetchone()[0]
        assert stray == 0
        orphan_vectors = conn.execute(
            "SELECT count(*) FROM index_vectors v WHERE NOT EXISTS "
            "(SELECT 1 FROM index_chunks c WHERE c.content_hash = v.content_hash)"
        ).fetchone()[0]
        assert orphan_vectors == 0
    finally:
        conn.close()
    with open_archive(folder) as archive:
        assert archive.count_records() == ROWS


def kill_and_resume(tmp_path: Path, pristine: Path, points: int) -> list[int]:
    reference = tmp_path / "reference"
    shutil.copytree(pristine, reference)
    argv = ["index", "--model", "hashing", "--archive"]
    code, total = run_child([*argv, str(reference)], 0, tmp_path)
    assert code == 0 and total > 0
    expected = counts(reference)
    assert expected["vectors"] > 0 and expected["chunks"] == expected["fts"]
    tried = spread(total, points)
    for number, kill_at in enumerate(tried):
        folder = tmp_path / f"killed-{number}"
        shutil.copytree(pristine, folder)
        run_child([*argv, str(folder)], kill_at, tmp_path)
        check_after_kill(folder)
        code, _ = run_child([*argv, str(folder)], 0, tmp_path)
        assert code == 0
        assert counts(folder) == expected
    return tried


def test_indexing_killed_at_any_point_resumes_to_the_right_totals(
    tmp_path: Path, pristine: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tried = kill_and_resume(tmp_path, pristine, 8)
    with capsys.disabled():
        print(f"\nindex kill points tried: {len(tried)} (statements {tried})")


@pytest.mark.slow
def test_indexing_killed_at_many_points_resumes_to_the_right_totals(
    tmp_path: Path, pristine: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tried = kill_and_resume(tmp_path, pristine, 60)
    with capsys.disabled():
        print(f"\nindex kill points tried (long): {len(tried)}")
