"""``arxiu search`` and ``arxiu eval retrieval`` with ``--archive postgresql://…``, in-process,
against the same commands on the SQLite archive the server's copy came from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from app.core.archive.postgres.transfer import copy_archive
from tests.commands.test_index_cmd import _beir


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> object:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def beir_on_both(
    tmp_path: Path, pg_database: str, capsys: pytest.CaptureFixture[str]
) -> tuple[list[str], Path, str]:
    """The small BEIR corpus evaluated once on SQLite (its scratch archive kept), then that
    archive copied into the server."""
    files = [str(p) for p in _beir(tmp_path / "beir")]
    work = tmp_path / "work"
    main(["eval", "retrieval", *files, "--model", "hashing", "--workdir", str(work), "--json"])
    capsys.readouterr()
    copy_archive(str(work / "archive"), pg_database)
    return files, work / "archive", pg_database


def test_eval_retrieval_on_postgres_scores_as_on_sqlite(
    beir_on_both: tuple[list[str], Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    files, folder, url = beir_on_both
    on_sqlite = _json(capsys, ["eval", "retrieval", *files, "--model", "hashing",
                               "--workdir", str(folder.parent), "--json"])  # fmt: skip
    on_postgres = _json(
        capsys, ["eval", "retrieval", *files, "--model", "hashing", "--archive", url, "--json"]
    )
    assert isinstance(on_sqlite, dict) and isinstance(on_postgres, dict)
    assert set(on_postgres) == {"dense", "lexical", "hybrid"}
    assert on_postgres["dense"] == on_sqlite["dense"]
    assert on_postgres["lexical"] == {"ndcg@10": 1.0, "recall@100": 1.0, "mrr@10": 1.0}


def test_eval_retrieval_archive_must_be_a_url(
    beir_on_both: tuple[list[str], Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    files, folder, _ = beir_on_both
    code = main(["eval", "retrieval", *files, "--archive", str(folder)])
    assert code == 2 and "archive.pg_url_invalid" in capsys.readouterr().err


def test_search_on_postgres_lists_the_records_sqlite_lists(
    beir_on_both: tuple[list[str], Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    _, folder, url = beir_on_both
    for mode in ("dense", "hybrid"):
        args = ["search", "flooded town", "--model", "hashing", "--mode", mode, "--json"]
        on_sqlite = _json(capsys, [*args, "--archive", str(folder)])
        on_postgres = _json(capsys, [*args, "--archive", url])
        assert isinstance(on_sqlite, list) and isinstance(on_postgres, list)
        keys = [(h["section_tipo"], h["section_id"], h["label"]) for h in on_postgres]
        assert keys == [(h["section_tipo"], h["section_id"], h["label"]) for h in on_sqlite]
        assert on_postgres[0]["label"] == "Mequinensa"
    assert main(["search", "flooded town", "--model", "hashing", "--archive", url]) == 0
    out = capsys.readouterr().out
    assert "Mequinensa" in out and "[flooded]" in out
    chunks = _json(capsys, ["search", "flooded", "--chunks", "--model", "hashing", "--json",
                            "--archive", url])  # fmt: skip
    assert isinstance(chunks, list) and chunks[0]["label"] == "Mequinensa"
