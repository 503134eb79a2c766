"""``arxiu archive copy|checksum|grant|revoke`` on the real test server."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli import main
from app.core.archive.postgres.connect import connect, database_name
from tests.postgres_server import PgServer


def checksum(where: str, capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(["archive", "checksum", where]) == 0
    return capsys.readouterr().out.splitlines()[1:]  # the first line names the archive


def test_copy_there_and_back_prints_equal_checksums(
    pg_server: PgServer,
    demo_archive_dir: Path,
    pg_database: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = checksum(str(demo_archive_dir), capsys)
    assert main(["archive", "copy", str(demo_archive_dir), pg_database, "--batch", "64"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Copied ") and pg_server.password not in out and ":***@" in out
    assert "  records                  192  (192 this run)" in out
    on_postgres = checksum(pg_database, capsys)
    assert main(["archive", "copy", pg_database, str(tmp_path / "back")]) == 0
    capsys.readouterr()
    assert before == on_postgres == checksum(str(tmp_path / "back"), capsys)
    assert before[-1].split()[:2] == ["all", str(sum(int(line.split()[1]) for line in before[:-1]))]
    assert main(["archive", "copy", str(demo_archive_dir), pg_database]) == 0
    assert capsys.readouterr().out.startswith("Resumed ")


def test_a_foreign_destination_exits_with_an_input_error(
    demo_archive_dir: Path, pg_database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "letter.txt").write_text("x")
    assert main(["archive", "copy", str(demo_archive_dir), pg_database]) == 0
    capsys.readouterr()
    assert main(["archive", "copy", pg_database, str(tmp_path / "busy")]) == 2
    assert "archive.copy_destination_not_empty" in capsys.readouterr().err


def test_grant_and_revoke(
    pg_server: PgServer,
    demo_archive_dir: Path,
    pg_database: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["archive", "copy", str(demo_archive_dir), pg_database]) == 0
    role = database_name(pg_database) + "_dolors"
    with connect(pg_database, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw'")
    capsys.readouterr()
    assert main(["archive", "grant", role, "--restricted", "--archive", pg_database]) == 0
    assert capsys.readouterr().out == f"{role}: read, restricted\n"
    url = pg_server.url(database_name(pg_database), user=role, password="pw")
    query = "SELECT count(*) FROM records WHERE section_tipo = 'oh1'"
    assert pg_server.psql(url, query).stdout == "42\n"
    assert main(["archive", "revoke", role, "--restricted", "--archive", pg_database]) == 0
    assert capsys.readouterr().out == f"{role}: read\n"
    assert pg_server.psql(url, query).stdout == "0\n"
    assert main(["archive", "revoke", role, "--archive", pg_database]) == 0
    assert capsys.readouterr().out == f"{role}: no rights\n"
    assert main(["archive", "grant", "nobody_here", "--archive", pg_database]) == 2
    assert "archive.pg_role_unknown" in capsys.readouterr().err
