"""``--archive postgresql://…`` in every command, on the tests' real PostgreSQL server: the same
output as on a folder, the password never printed, an empty database made an archive by
``import``, and a command that needs a folder saying so."""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import shutil
import signal
import time
from pathlib import Path

import httpx
import pytest

from app.api.context import ApiContext
from app.api.users import UserStore
from app.cli import main
from app.commands.common import archive_dir, archive_location, shown
from app.core.archive import open_archive
from app.core.archive.postgres.transfer import copy_archive
from app.core.errors import ArchiveError
from app.core.models.scripted import ScriptedModel, Turn, call
from app.core.tools.matching import find_matches
from tests.api.serving import login_body, serve_env, serve_url, start_serve
from tests.commands.test_ask_cmd import CATALOG, QUESTION, lines_of
from tests.commands.test_serve_cmd import READY, read_lines
from tests.conftest import shared_data
from tests.core.agent.conftest import build_archive as build_agent_archive
from tests.core.agent.test_plans import ANNA_OPS, ANNA_QUESTION
from tests.postgres_server import PgServer


@pytest.fixture
def demo_url(demo_archive_dir: Path, pg_database: str) -> str:
    """The demo archive copied into a fresh database (its owner's URL, password included)."""
    copy_archive(str(demo_archive_dir), pg_database)
    return pg_database


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> object:
    assert main(argv) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_a_url_is_an_archive_location_and_is_shown_without_its_password() -> None:
    url = "postgresql://ana:s3cret@db.example.org:5432/arxiu?sslmode=require"
    args = argparse.Namespace(archive=url)
    assert archive_location(args) == url  # not a Path: "//" would collapse
    assert shown(url) == "postgresql://ana:***@db.example.org:5432/arxiu?sslmode=require"
    with pytest.raises(ArchiveError) as refused:
        archive_dir(args)
    assert refused.value.code == "archive.shared_not_local"
    assert "s3cret" not in refused.value.message


def test_archive_info_and_records_read_the_same_as_the_folder(
    demo_url: str,
    demo_archive_dir: Path,
    pg_server: PgServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    on_folder = _json(capsys, ["archive", "info", "--json", "--archive", str(demo_archive_dir)])
    on_server = _json(capsys, ["--archive", demo_url, "archive", "info", "--json"])
    assert isinstance(on_folder, dict) and isinstance(on_server, dict)
    assert pg_server.password not in json.dumps(on_server)  # the password is never printed
    assert on_server["path"] == shown(demo_url)
    assert on_server["database"] == demo_url.rsplit("/", 1)[1] and on_folder["database"] is None
    for key in ("records", "links", "media", "sections", "write_allowed"):
        assert on_server[key] == on_folder[key], key
    listing = _json(capsys, ["records", "list", "oh1", "--json", "--archive", demo_url])
    assert listing == _json(
        capsys, ["records", "list", "oh1", "--json", "--archive", str(demo_archive_dir)]
    )
    shown_record = _json(capsys, ["--archive", demo_url, "records", "show", "oh1", "4", "--json"])
    assert isinstance(shown_record, dict) and shown_record["restricted"] is True
    said = []  # in words, the same from the server as from the folder
    for where in (demo_url, str(demo_archive_dir)):
        assert main(["--archive", where, "records", "show", "oh1", "4"]) == 0
        said.append(capsys.readouterr().out)
    assert said[0] == said[1] and "\n  Spanish\n" in said[0] and "lg-" not in said[0]
    assert main(["archive", "info", "--archive", demo_url]) == 0
    text = capsys.readouterr().out
    assert "Oral history" in text and pg_server.password not in text
    assert "shared, on PostgreSQL (database arxiu_t" in text


def test_archive_set_turns_the_server_s_switch(
    demo_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["archive", "set", "write_allowed", "true", "--archive", demo_url]) == 0
    assert "write_allowed = true" in capsys.readouterr().out
    with open_archive(demo_url) as archive:
        from app.core.archive.write_switch import writes_allowed

        assert writes_allowed(archive)


def test_export_from_the_server_writes_what_the_folder_writes(
    demo_url: str, demo_archive_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "demo"
    shutil.copytree(demo_archive_dir, folder)
    for where, name in ((str(folder), "folder.csv"), (demo_url, "server.csv")):
        argv = ["export", "csv", str(tmp_path / name), "--section", "rsc197", "--archive", where]
        assert main(argv) == 0
        assert "Exported" in capsys.readouterr().out
    server = (tmp_path / "server.csv").read_text(encoding="utf-8")
    assert server == (tmp_path / "folder.csv").read_text(encoding="utf-8")
    assert server.count("\n") > 60


def test_import_makes_an_empty_database_an_archive(
    pg_database: str, pg_server: PgServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = shared_data("beir-dbpedia-5k", "corpus.jsonl.gz")
    target = tmp_path / "beir-dbpedia-5k" / "corpus.jsonl.gz"
    target.parent.mkdir(parents=True)
    import gzip

    with gzip.open(corpus, "rb") as handle:
        lines = [line for _, line in zip(range(25), handle, strict=False)]
    target.write_bytes(gzip.compress(b"".join(lines)))
    assert main(["--archive", pg_database, "import", "beir", str(target.parent)]) == 0
    out = capsys.readouterr().out
    assert "records   25 (25 created" in out
    assert shown(pg_database) in out and pg_server.password not in out
    argv = ["import", "beir", str(target.parent), "--archive", pg_database, "--json"]
    again = _json(capsys, argv)
    assert isinstance(again, dict) and (again["created"], again["unchanged"]) == (0, 25)
    with open_archive(pg_database) as archive:
        assert archive.shared and archive.count_records("beir1") == 25


def test_a_database_that_is_not_an_archive_is_a_coded_error(
    pg_database: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["records", "list", "oh1", "--archive", pg_database]) == 2
    err = capsys.readouterr().err
    assert "error [archive.not_found]" in err and "hint:" in err


def test_a_wrong_password_is_refused_without_printing_it(
    demo_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", "/nonexistent/.pgpass")
    user, rest = demo_url.removeprefix("postgresql://").split(":", 1)
    wrong = f"postgresql://{user}:not-the-password-5@{rest.split('@', 1)[1]}"
    assert main(["archive", "info", "--archive", wrong]) == 3
    err = capsys.readouterr().err
    assert "error [archive.pg_auth_failed]" in err and "not-the-password-5" not in err


def test_search_in_the_server_lists_what_the_folder_lists(
    demo_url: str,
    demo_archive_dir: Path,
    pg_server: PgServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = tmp_path / "demo"
    shutil.copytree(demo_archive_dir, folder)
    found = {}
    for where in (str(folder), demo_url):
        argv = ["search", "pantà", "--mode", "lexical", "--k", "5", "--json", "--archive", where]
        hits = _json(capsys, argv)
        assert isinstance(hits, list)
        found[where] = [(h["section_tipo"], h["section_id"], h["label"]) for h in hits]
    assert found[demo_url] == found[str(folder)]  # chunked on the server by the search itself
    assert main(["--archive", demo_url, "search", "pantà", "--chunks", "--mode", "lexical"]) == 0
    out = capsys.readouterr().out
    assert "oh1/" in out and pg_server.password not in out


@pytest.fixture
def scripted_home(arxiu_home: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, ScriptedModel]:
    """The scripted catalog of ``arxiu ask``'s tests, the hashing embedder."""
    (arxiu_home / "models.json").write_text(json.dumps(CATALOG), encoding="utf-8")
    monkeypatch.setenv("ARXIU_EMBEDDING_MODEL", "hashing")
    built = {
        "tools": ScriptedModel(id="tools"),
        "small": ScriptedModel(id="small", supports_tools=False),
    }
    monkeypatch.setattr("app.core.models.factory.create_model", lambda entry: built[entry.id])
    return built


def test_ask_searches_the_server_and_cites_its_records(
    pg_database: str,
    scripted_home: dict[str, ScriptedModel],
    capsys: pytest.CaptureFixture[str],
) -> None:
    build_agent_archive(pg_database).close()
    scripted_home["small"].extend(Turn(text="Joan left his village."))
    argv = ["ask", QUESTION, "--model", "small", "--json-events", "--archive", pg_database]
    assert main(argv) == 0
    events = lines_of(capsys.readouterr().out)
    assert [e["event"] for e in events][:3] == ["start", "tool_use", "tool_result"]
    answer = events[-1]["data"]["answer"]
    cited = [line[2:] for line in answer.split("Sources:\n")[1].splitlines()]
    assert "Interview with Joan Vila (oh1/1)" in cited


def test_ask_write_applies_the_confirmed_plan_in_the_server(
    pg_database: str,
    scripted_home: dict[str, ScriptedModel],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    build_agent_archive(pg_database).close()
    scripted_home["tools"].extend(
        Turn(
            text="I'll create Anna Pujol and link her.",
            tool_calls=(
                call("propose_change_plan", {"summary": "Anna as informant", "ops": ANNA_OPS}),
            ),
        )
    )
    monkeypatch.setattr("sys.stdin", io.StringIO("yes\n"))
    argv = ["ask", ANNA_QUESTION, "--write", "--context", "oh1/1", "--archive", pg_database]
    assert main(argv) == 0
    assert "applied p1\napplied l1" in capsys.readouterr().out
    with open_archive(pg_database) as archive:
        assert len(find_matches(archive, "rsc197", {"rsc85": "Anna Pujol"})) == 1
        assert archive.audit_rows()[-1]["plan_hash"]  # applied as a plan, audited


def test_serve_answers_from_a_shared_archive_and_never_prints_its_password(
    demo_url: str, pg_server: PgServer, arxiu_home: Path
) -> None:
    UserStore(arxiu_home / "api_users.json").add("anna", "pw-anna")
    process = start_serve(["--port", "0", "--archive", demo_url], serve_env(arxiu_home))
    err: list[tuple[float, str]] = []
    try:
        assert process.stdout is not None and process.stderr is not None
        read_lines(process.stderr, err)
        url = serve_url(process, err)
        with httpx.Client(timeout=60) as http:
            login = http.post(url, json=login_body("anna", "pw-anna"))
            assert login.status_code == 200, login.text
        deadline = time.monotonic() + 240
        while not any(READY in text for _, text in err) and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
    said = "".join(text for _, text in err)
    assert process.returncode == 0, said
    assert f"Indexing {shown(demo_url)} in the background" in said
    assert READY in said  # the server's index, chunked and embedded by this process
    assert pg_server.password not in said


def test_the_api_context_opens_the_server_s_index(
    demo_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARXIU_EMBEDDING_MODEL", "hashing")
    ctx = ApiContext(archive_dir=demo_url, users=UserStore(tmp_path / "users.json"))
    try:
        searcher = ctx.open_searcher()
        assert ctx.index is searcher and ctx.open_archive().shared
        hits = searcher.search("pantà", k=5, mode="lexical")
        assert hits and all(hit.key.section_tipo == "oh1" for hit in hits)
    finally:
        asyncio.run(ctx.aclose())
