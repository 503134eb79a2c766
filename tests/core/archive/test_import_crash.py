"""An import killed with SIGKILL at many points: the archive stays sound and the import resumes.

The child is ``arxiu import beir`` into a new archive, killed at SQL statements spread over the
whole run (creating the archive, each batch's inserts, commits, the lexical chunks). After each
kill: ``PRAGMA integrity_check`` is ok, the archive opens, only whole batches are stored (every
record with its external id, no half-written record), and importing again completes with the
right totals.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.archive import open_archive
from tests.conftest import shared_data
from tests.core.archive.importers.conftest import first_lines, write_gz
from tests.core.kill_points import integrity, run_child, spread

ROWS = 200
BATCH = 40


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[Path, set[str]]:
    """200 real BEIR rows and two bad lines; the ids of the good rows."""
    good = first_lines(shared_data("beir-dbpedia-5k", "corpus.jsonl.gz"), ROWS)
    lines = [*good[:50], b"{not json\n", *good[50:120], b'{"title": "no id"}\n', *good[120:]]
    path = write_gz(tmp_path / "data" / "corpus.jsonl.gz", lines)
    return path, {json.loads(line)["_id"] for line in good}


def check_after_kill(folder: Path, ids: set[str]) -> int:
    """Assert what a kill may leave; returns how many records were stored."""
    db_file = folder / "archive.db"
    if not db_file.exists():  # killed before the new archive was complete: nothing made
        assert not folder.exists() or "archive.db" not in {p.name for p in folder.iterdir()}
        return 0
    assert integrity(db_file) == ["ok"]
    with open_archive(folder) as archive:
        count = archive.count_records()
        with archive.db.reading() as conn:
            rows = conn.execute("SELECT external_id, section_tipo, section_id FROM external_ids")
            external = {r[0]: (r[1], r[2]) for r in rows}
            keys = {
                (r[0], r[1]) for r in conn.execute("SELECT section_tipo, section_id FROM records")
            }
        records = list(archive.iter_records())
    assert count % BATCH == 0 or count == len(ids), count  # only whole batches
    assert len(external) == count and set(external.values()) == keys
    assert all(r.text("beir2", "lg-eng") for r in records)  # no half-written record
    assert set(external) <= ids
    return count


def check_resumed(folder: Path, ids: set[str]) -> None:
    assert integrity(folder / "archive.db") == ["ok"]
    with open_archive(folder) as archive:
        assert archive.count_records("beir1") == len(ids)
        with archive.db.reading() as conn:
            external = [r[0] for r in conn.execute("SELECT external_id FROM external_ids")]
    assert sorted(external) == sorted(ids)


def kill_and_resume(tmp_path: Path, corpus: tuple[Path, set[str]], points: int) -> list[int]:
    path, ids = corpus
    argv = ["import", "beir", str(path), "--archive"]
    reference = tmp_path / "reference"
    code, total = run_child([*argv, str(reference)], 0, tmp_path, batch=BATCH)
    assert code == 0 and total > 0
    check_resumed(reference, ids)
    tried = spread(total, points)
    for number, kill_at in enumerate(tried):
        folder = tmp_path / f"killed-{number}"
        code, _ = run_child([*argv, str(folder)], kill_at, tmp_path, batch=BATCH)
        check_after_kill(folder, ids)
        code, _ = run_child([*argv, str(folder)], 0, tmp_path, batch=BATCH)
        assert code == 0
        check_resumed(folder, ids)
    return tried


def test_an_import_killed_at_any_point_resumes_to_the_right_totals(
    tmp_path: Path, corpus: tuple[Path, set[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    tried = kill_and_resume(tmp_path, corpus, 8)
    with capsys.disabled():
        print(f"\nimport kill points tried: {len(tried)} (statements {tried})")


@pytest.mark.slow
def test_an_import_killed_at_many_points_resumes_to_the_right_totals(
    tmp_path: Path, corpus: tuple[Path, set[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    tried = kill_and_resume(tmp_path, corpus, 80)
    with capsys.disabled():
        print(f"\nimport kill points tried (long): {len(tried)}")
