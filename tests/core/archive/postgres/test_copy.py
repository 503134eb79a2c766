"""``arxiu archive copy`` and ``checksum``: the demo archive, indexed, to PostgreSQL and back,
equal digests; an interrupted copy resumes to the same digests; foreign destinations refused."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import psycopg
import pytest

from app.core.agent.plan_book import NewPlan, PlanBook
from app.core.agent.plans import validate_plan
from app.core.archive import open_archive
from app.core.archive.postgres.checksum import archive_digest
from app.core.archive.postgres.tables import TABLES
from app.core.archive.postgres.transfer import copy_archive
from app.core.errors import ArchiveError
from app.core.tools.registry import build_registry
from tests.postgres_server import PgServer


def copy_folder(folder: Path, to: Path) -> None:
    """A copy of the shared indexed demo folder, without the ``-wal``/``-shm`` files a reader
    still holding it open may be making or removing meanwhile (they hold nothing: the folder
    was closed after indexing)."""
    shutil.copytree(folder, to, ignore=shutil.ignore_patterns("*-wal", "*-shm"))


class Interrupted(Exception):
    """Raised from the batch hook: the copy stops as if killed after a committed batch."""


def stop_after(batches: int):  # type: ignore[no-untyped-def]
    seen = []

    def hook(table: str, copied: int) -> None:
        seen.append(table)
        if len(seen) == batches:
            raise Interrupted(f"stopped after {table} ({copied} rows)")

    return hook


def test_the_demo_round_trips_with_equal_checksums(
    indexed_demo_dir: Path, pg_database: str, tmp_path: Path
) -> None:
    on_sqlite = archive_digest(str(indexed_demo_dir))
    report = copy_archive(str(indexed_demo_dir), pg_database)
    on_postgres = archive_digest(pg_database)
    back = tmp_path / "back"
    copy_archive(pg_database, str(back))
    back_again = archive_digest(str(back))
    print("\n" + "\n".join(on_sqlite.lines()))
    assert on_sqlite.lines()[:-1] == on_postgres.lines()[:-1] == back_again.lines()[:-1]
    assert on_sqlite.sha256 == on_postgres.sha256 == back_again.sha256
    rows = {t.table: t.rows for t in on_sqlite.tables}
    assert report.totals == rows
    assert rows["records"] == 192 and rows["index_chunks"] > 1000
    assert rows["index_vectors"] > 1000 and rows["media_files"] > 0 and rows["links"] > 0
    assert rows["archive_secrets"] == 1


def test_the_copy_back_is_a_working_archive(
    indexed_demo_dir: Path, demo_on_postgres: str, tmp_path: Path
) -> None:
    copy_archive(demo_on_postgres, str(tmp_path / "back"))
    with open_archive(tmp_path / "back") as archive:
        assert archive.count_records("oh1") == 42
        assert archive.is_restricted(next(archive.iter_records("oh1")).key)
    query = "SELECT count(*) FROM index_fts WHERE index_fts MATCH 'reservoir'"
    counts = []
    for folder in (indexed_demo_dir, tmp_path / "back"):
        with sqlite3.connect(folder / "archive.db") as conn:
            counts.append(conn.execute(query).fetchone()[0])
    assert counts[0] > 0 and counts[0] == counts[1]
    media = sorted(p.name for p in (tmp_path / "back" / "media").rglob("*") if p.is_file())
    assert media == sorted(p.name for p in (indexed_demo_dir / "media").rglob("*") if p.is_file())


@pytest.mark.parametrize("batches", [1, 7])
def test_an_interrupted_copy_to_postgres_resumes(
    indexed_demo_dir: Path, pg_database: str, batches: int
) -> None:
    with pytest.raises(Interrupted):
        copy_archive(
            str(indexed_demo_dir), pg_database, batch_rows=100, on_batch=stop_after(batches)
        )
    report = copy_archive(str(indexed_demo_dir), pg_database, batch_rows=100)
    assert report.resumed
    assert sum(report.copied.values()) < sum(report.totals.values())
    assert archive_digest(pg_database).sha256 == archive_digest(str(indexed_demo_dir)).sha256
    again = copy_archive(str(indexed_demo_dir), pg_database)
    assert again.resumed and sum(again.copied.values()) == 0


def test_an_interrupted_copy_back_resumes(
    indexed_demo_dir: Path, demo_on_postgres: str, tmp_path: Path
) -> None:
    back = str(tmp_path / "back")
    with pytest.raises(Interrupted):
        copy_archive(demo_on_postgres, back, batch_rows=50, on_batch=stop_after(12))
    assert copy_archive(demo_on_postgres, back, batch_rows=50).resumed
    assert archive_digest(back).sha256 == archive_digest(str(indexed_demo_dir)).sha256


def test_a_copy_of_another_archive_is_refused(
    indexed_demo_dir: Path, demo_on_postgres: str, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    open_archive(other, create=True).close()
    with pytest.raises(ArchiveError) as refused:
        copy_archive(str(other), demo_on_postgres)
    assert refused.value.code == "archive.copy_destination_not_empty"
    assert refused.value.category == "input"


def test_a_database_with_other_tables_is_refused(
    indexed_demo_dir: Path, pg_server: PgServer, pg_database: str
) -> None:
    with psycopg.connect(pg_database, autocommit=True) as conn:
        conn.execute("CREATE TABLE invoices (id int PRIMARY KEY)")
    with pytest.raises(ArchiveError) as refused:
        copy_archive(str(indexed_demo_dir), pg_database)
    assert refused.value.code == "archive.copy_destination_not_empty"


def test_a_folder_with_an_archive_or_other_files_is_refused(
    indexed_demo_dir: Path, demo_on_postgres: str, tmp_path: Path
) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("mine")
    with pytest.raises(ArchiveError) as refused:
        copy_archive(demo_on_postgres, str(tmp_path / "notes"))
    assert refused.value.code == "archive.copy_destination_not_empty"
    copy_folder(indexed_demo_dir, tmp_path / "full")
    with pytest.raises(ArchiveError) as refused:
        copy_archive(demo_on_postgres, str(tmp_path / "full"))
    assert refused.value.code == "archive.copy_destination_not_empty"


def test_a_table_the_copy_does_not_know_is_refused(
    indexed_demo_dir: Path, pg_database: str, tmp_path: Path
) -> None:
    source = tmp_path / "source"
    copy_folder(indexed_demo_dir, source)
    with sqlite3.connect(source / "archive.db") as conn:
        conn.execute("CREATE TABLE loans (id INTEGER PRIMARY KEY, who TEXT)")
    with pytest.raises(ArchiveError) as refused:
        copy_archive(str(source), pg_database)
    assert refused.value.code == "archive.copy_unknown_table"
    with psycopg.connect(pg_database) as conn:
        assert conn.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
        ).fetchone() == (0,)


def test_two_folders_are_not_a_copy(tmp_path: Path, indexed_demo_dir: Path) -> None:
    with pytest.raises(ArchiveError) as refused:
        copy_archive(str(indexed_demo_dir), str(tmp_path / "x"))
    assert refused.value.code == "archive.copy_same_engine"


def test_every_table_the_sqlite_schema_holds_is_copied_or_derived(indexed_demo_dir: Path) -> None:
    with sqlite3.connect(indexed_demo_dir / "archive.db") as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    copied = {t.name for t in TABLES} - {"media_files"}
    assert copied <= names
    assert names - copied == {
        "_migrations", "sqlite_sequence", "index_generations", "index_fts", "index_fts_config",
        "index_fts_data", "index_fts_docsize", "index_fts_idx", "index_fts_lexemes",
    }  # fmt: skip


async def test_a_persons_work_round_trips_too(
    indexed_demo_dir: Path, pg_database: str, tmp_path: Path
) -> None:
    """Audit rows, plans and conversations, which the indexed demo has none of, copied both
    ways with equal digests."""
    source = tmp_path / "worked"
    copy_folder(indexed_demo_dir, source)
    with open_archive(source) as archive:
        key = next(archive.iter_records("rsc197")).key
        name = [{"lang": "lg-cat", "value": "Anna Puig"}]
        archive.update_record(key, {"rsc85": name}, audit={"actor": "anna", "op_id": "u1"})
        plan = validate_plan(
            {"summary": "a person", "ops": [{"op_id": "c1", "tool": "dedalo_create_record",
             "args": {"section_tipo": "rsc197", "values": {"rsc85": "Pere Vila"}},
             "summary": "create Pere Vila"}]},
            archive,
            build_registry(),
        )  # fmt: skip
        await PlanBook(archive).add(NewPlan(plan, conversation_id="c-1", model_id="local",
                                            egress="local"))  # fmt: skip
        await archive.save_conversation({"id": "c-1", "title": "Qui és l'Anna?"})
    on_sqlite = archive_digest(str(source))
    copy_archive(str(source), pg_database)
    back = tmp_path / "back"
    copy_archive(pg_database, str(back))
    rows = {t.table: t.rows for t in on_sqlite.tables}
    assert rows["audit"] == 1 and rows["plans"] == 1 and rows["conversations"] == 1
    assert (
        on_sqlite.sha256 == archive_digest(pg_database).sha256 == archive_digest(str(back)).sha256
    )
