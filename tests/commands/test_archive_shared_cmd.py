"""``arxiu archive copy|checksum|grant|revoke`` on the real test server."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli import main
from app.commands.archive_shared_cmd import copy_lines
from app.commands.common import shown
from app.core.archive.postgres.checksum import archive_digest
from app.core.archive.postgres.connect import connect, database_name
from app.core.archive.postgres.transfer import CopyReport
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


SAID = {
    "en": {
        "copied": "Copied {source} -> {destination}",
        "resumed": "Resumed {source} -> {destination}",
        "records": "  records                  192  (192 this run)",
        "again": "  records                  192  (0 this run)",
        "archive": "Archive  {location}",
        "all": "all",
        "rights": "{role}: read, restricted",
        "none": "{role}: no rights",
    },
    "ca": {
        "copied": "S'ha copiat {source} -> {destination}",
        "resumed": "S'ha reprès la còpia {source} -> {destination}",
        "records": "  records                  192  (192 en aquesta execució)",
        "again": "  records                  192  (0 en aquesta execució)",
        "archive": "Arxiu  {location}",
        "all": "total",
        "rights": "{role}: lectura, restringits",
        "none": "{role}: cap dret",
    },
    "es": {
        "copied": "Se ha copiado {source} -> {destination}",
        "resumed": "Se ha reanudado la copia {source} -> {destination}",
        "records": "  records                  192  (192 en esta ejecución)",
        "again": "  records                  192  (0 en esta ejecución)",
        "archive": "Archivo  {location}",
        "all": "total",
        "rights": "{role}: lectura, restringidos",
        "none": "{role}: ningún derecho",
    },
}
"""What ``copy``, ``checksum``, ``grant`` and ``revoke`` say in each language (the demo
archive's 192 records; table names, URLs and digests stay as they are)."""


@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_copy_checksum_grant_and_revoke_speak_the_language(
    demo_archive_dir: Path,
    pg_database: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    lang: str,
) -> None:
    monkeypatch.setenv("ARXIU_LANG", lang)
    said = SAID[lang]
    where = {"source": str(demo_archive_dir), "destination": shown(pg_database)}
    assert main(["archive", "copy", str(demo_archive_dir), pg_database]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == said["copied"].format(**where)
    assert said["records"] in lines
    assert main(["archive", "copy", str(demo_archive_dir), pg_database]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == said["resumed"].format(**where) and said["again"] in lines

    assert main(["archive", "checksum", pg_database]) == 0
    lines = capsys.readouterr().out.splitlines()
    digest = archive_digest(pg_database)
    assert lines[0] == said["archive"].format(location=digest.location)
    rows = sum(t.rows for t in digest.tables)  # plain digits, as in --json
    total = f"{said['all']:<{len('tainted_shingles')}}  {rows:>9}  {digest.sha256}"
    assert lines[1:] == [*digest.lines()[:-1], total]  # the tables as the core writes them
    assert lang != "en" or lines[1:] == digest.lines()  # English: the core's lines, all of them

    role = database_name(pg_database) + "_dolors"
    with connect(pg_database, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw'")
    assert main(["archive", "grant", role, "--restricted", "--archive", pg_database]) == 0
    assert capsys.readouterr().out == said["rights"].format(role=role) + "\n"
    assert main(["archive", "revoke", role, "--archive", pg_database]) == 0
    assert capsys.readouterr().out == said["none"].format(role=role) + "\n"


@pytest.mark.parametrize(
    ("lang", "first", "row"),
    [
        ("en", "Resumed", "  index_vectors         72,736  (1,536 this run)"),
        (
            "ca",
            "S'ha reprès la còpia",
            "  index_vectors         72.736  (1.536 en aquesta execució)",
        ),
        (
            "es",
            "Se ha reanudado la copia",
            "  index_vectors         72.736  (1536 en esta ejecución)",
        ),
    ],
)
def test_the_copy_s_counts_have_the_language_s_separators(
    monkeypatch: pytest.MonkeyPatch, lang: str, first: str, row: str
) -> None:
    """A resumed copy of a large index: thousands as ``72,736`` or ``72.736`` (and ``1536``
    in Spanish, which groups from five digits on)."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    report = CopyReport("/srv/arxiu", "postgresql://ana:***@db/arxiu", resumed=True)
    report.totals["index_vectors"], report.copied["index_vectors"] = 72_736, 1_536
    assert copy_lines(report) == [f"{first} /srv/arxiu -> postgresql://ana:***@db/arxiu", row]
