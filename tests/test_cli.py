"""``arxiu``'s error printer: a coded error's label in the CLI's language (``ARXIU_LANG``),
then the message and the hint as the core wrote them; the code and the exit status stay."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main

LABELS = {
    "ca": ("No s'ha trobat el fitxer: ", "No s'ha trobat cap arxiu: "),
    "es": ("No se ha encontrado el archivo: ", "No se ha encontrado ningún archivo: "),
    "en": ("", ""),
}


@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_an_import_of_a_missing_file_says_its_label_in_the_language(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, lang: str
) -> None:
    monkeypatch.setenv("ARXIU_LANG", lang)
    absent = tmp_path / "absent"

    code = main(["import", "ead", str(absent), "--archive", str(tmp_path / "a")])

    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.splitlines() == [
        f"error [import.file_missing]: {LABELS[lang][0]}There is no EAD file or folder at "
        f"{absent}.",
        "hint: Give an EAD .xml file or a folder of them.",
    ]


@pytest.mark.parametrize("lang", ["ca", "es"])
def test_a_missing_archive_is_labelled_in_the_language_of_a_real_process(
    tmp_path: Path, lang: str
) -> None:
    """``arxiu records list`` run as a process, with ``--json`` (which changes only stdout)."""
    absent = tmp_path / "none"
    env = {**os.environ, "ARXIU_LANG": lang}
    command = [sys.executable, "-m", "app.cli", "records", "list", "oh1", "--archive", str(absent)]
    for extra in ([], ["--json"]):
        done = subprocess.run(
            command + extra, env=env, capture_output=True, text=True, timeout=120, check=False
        )
        assert done.returncode == 2 and done.stdout == ""
        first = done.stderr.splitlines()[0]
        assert first == (
            f"error [archive.not_found]: {LABELS[lang][1]}No archive at {absent} "
            "(there is no archive.db)."
        )
