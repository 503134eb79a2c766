"""``arxiu``'s error printer: a coded error's message and its hint (after ``hint:``) in the
CLI's language (``ARXIU_LANG``); the code and the exit status stay."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from app.cli import main
from app.commands.exits import EXIT_BUG, EXIT_INTERRUPTED
from app.commands.users_cmd import read_password
from app.core.models.scripted import ScriptedModel
from tests.commands.test_ask_bugs import folder, model

__all__ = ["folder", "model"]  # the fixtures of test_ask_bugs (a tool with a bug), used here too

HINT = {"ca": "suggeriment: ", "es": "sugerencia: ", "en": "hint: "}
NO_EAD = {
    "ca": ("No hi ha cap fitxer ni carpeta EAD a {path}.",
           "Indica un fitxer .xml EAD o una carpeta que en contingui."),
    "es": ("No hay ningún archivo ni carpeta EAD en {path}.",
           "Indica un archivo .xml EAD o una carpeta que los contenga."),
    "en": ("There is no EAD file or folder at {path}.",
           "Give an EAD .xml file or a folder of them."),
}  # fmt: skip
NO_ARCHIVE = {
    "ca": "No hi ha cap arxiu a {path} (hi falta archive.db).",
    "es": "No hay ningún archivo en {path} (falta archive.db).",
}


@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_an_import_of_a_missing_file_is_said_in_the_language(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, lang: str
) -> None:
    monkeypatch.setenv("ARXIU_LANG", lang)
    absent = tmp_path / "absent"

    code = main(["import", "ead", str(absent), "--archive", str(tmp_path / "a")])

    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    message, hint = NO_EAD[lang]
    assert captured.err.splitlines() == [
        f"error [import.file_missing]: {message.format(path=absent)}",
        f"{HINT[lang]}{hint}",
    ]


@pytest.mark.parametrize("lang", ["ca", "es"])
def test_a_missing_archive_is_said_in_the_language_of_a_real_process(
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
        said = NO_ARCHIVE[lang].format(path=absent)
        assert first == f"error [archive.not_found]: {said}"


BUG = {
    "ca": "l'Arxiu ha trobat un error de programació (ZeroDivisionError); si us plau, "
    "notifiqueu-lo.",
    "es": "Arxiu ha encontrado un error de programación (ZeroDivisionError); por favor, "
    "notifíquelo.",
    "en": "arxiu hit a bug (ZeroDivisionError); please report it.",
}
INTERRUPTED = {"ca": "interromput", "es": "interrumpido", "en": "interrupted"}


@pytest.mark.parametrize("lang", ["ca", "es", "en"])
@pytest.mark.allow_log("app.core.agent.loop", message="ZeroDivisionError")
def test_a_bug_is_said_in_the_language(
    folder: Path,
    model: ScriptedModel,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    lang: str,
) -> None:
    """A tool with a bug in it ends ``arxiu ask``: the bug's line in the language, the class
    of the error as Python names it, exit code 1."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    code = main(["ask", "How many sections does the archive have?", "--archive", str(folder)])
    assert code == EXIT_BUG
    assert capsys.readouterr().err.splitlines()[-1] == BUG[lang]


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT is sent with os.kill")
@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_ctrl_c_is_said_in_the_language(
    arxiu_home: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    lang: str,
) -> None:
    """A real SIGINT while ``arxiu users add --password-stdin`` waits for its password on a
    pipe: the command stops with exit code 130 and says so in the language."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    read, write = os.pipe()
    with os.fdopen(read, encoding="utf-8") as stdin:
        monkeypatch.setattr("sys.stdin", stdin)
        waiting = threading.Thread(target=_interrupt_when_reading, args=(threading.get_ident(),))
        waiting.start()
        try:
            code = main(["users", "add", "anna", "--password-stdin"])
        finally:
            waiting.join()
            os.close(write)
    assert code == EXIT_INTERRUPTED
    assert capsys.readouterr().err == INTERRUPTED[lang] + "\n"
    assert not (arxiu_home / "api_users.json").exists()  # nothing was added


def _interrupt_when_reading(main_thread: int) -> None:
    """Send SIGINT to this process once ``main_thread`` waits in ``read_password``."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        frame = sys._current_frames().get(main_thread)
        if frame is not None and frame.f_code is read_password.__code__:
            os.kill(os.getpid(), signal.SIGINT)
            return
        time.sleep(0.01)
