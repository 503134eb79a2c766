"""``arxiu import csv PATH`` with ``--preview``, ``--mapping``, ``--source``; then ``export``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from app.core.archive import open_archive

TABLE = "Codi de referència;Títol;Data;Notes\nA-1;Primer;1901;una\nA-2;Segon;1902;dues\n"


def table(tmp_path: Path) -> Path:
    path = tmp_path / "inventari.csv"
    path.write_text(TABLE, encoding="cp1252")
    return path


def test_preview_prints_the_mapping_and_rows_and_imports_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "archive"

    code = main(["import", "csv", str(table(tmp_path)), "--preview", "--archive", str(folder)])

    out = capsys.readouterr().out
    assert code == 0
    assert "inventari.csv: 2 rows, cp1252, separator ;" in out
    assert "'Títol'" in out and "-> title" in out and "-> identifier" in out
    assert "line 2 (A-1):" in out
    with open_archive(folder) as archive:
        assert archive.count_records() == 0


def test_mapping_and_source_options_reach_the_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "archive"
    mapping = tmp_path / "mapping.json"
    mapping.write_text(json.dumps({"columns": [{"column": "Notes", "role": "ignore"}]}))
    path = table(tmp_path)

    args = ["import", "csv", str(path), "--archive", str(folder), "--json"]
    code = main([*args, "--mapping", str(mapping), "--source", "inventari"])

    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["created"] == 2
    with open_archive(folder) as archive:
        labels = {f.label("lg-eng") for f in archive.fields("csv1")}
        assert "Notes" not in labels and "Title" in labels
        assert archive.external_key("inventari", "A-1") is not None

    out = tmp_path / "out.csv"
    assert main(["export", "csv", "--section", "csv1", str(out), "--archive", str(folder)]) == 0
    assert out.read_text(encoding="utf-8-sig").splitlines()[1].startswith("csv1/1,A-1,")
