"""``arxiu ask --server``: what it says for a person is in the CLI's language (``ARXIU_LANG``):
the prompt for the password, a declined plan that wrote nothing on the server, and a plan
applied there after the language's yes."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.cli import main
from app.core.archive import Archive
from app.core.models.scripted import ScriptedModel, Turn, call
from app.core.tools.matching import find_matches
from tests.api.conftest import Live, ctx, live, models, oh_archive, password, users, users_file
from tests.core.agent.test_plans import ANNA_OPS

__all__ = ["ctx", "live", "models", "oh_archive", "users", "users_file"]  # tests/api's server

CANCELLED = {
    "ca": "Cancel·lat: no s'ha escrit res.",
    "es": "Cancelado: no se ha escrito nada.",
    "en": "Cancelled: nothing was written.",
}
PROMPT = {
    "ca": "Contrasenya de l'usuari anna: ",
    "es": "Contraseña de anna: ",
    "en": "Password for anna: ",
}


@pytest.mark.sqlite_only("the words are the same on either engine")
@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_a_declined_plan_says_nothing_was_written_in_the_language(
    live: Live,
    models: dict[str, ScriptedModel],
    oh_archive: Archive,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    lang: str,
) -> None:
    monkeypatch.setenv("ARXIU_LANG", lang)
    monkeypatch.setenv("ARXIU_PASSWORD", password("writer"))
    models["local"].extend(
        Turn(tool_calls=(call("propose_change_plan", {"summary": "Anna", "ops": ANNA_OPS}),))
    )
    monkeypatch.setattr("sys.stdin", io.StringIO("no\n"))
    argv = ["ask", "--server", live.url, "--user", "writer", "--write", "Create Anna Pujol"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines()[-1] == CANCELLED[lang]
    assert "applied" not in captured.out
    assert not find_matches(oh_archive, "rsc197", {"rsc85": "Anna Pujol"})  # nothing written


APPLIED = {
    "ca": ("Escriviu sí per aplicar-lo: ", "aplicat p1", "creat p1: section_id "),
    "es": ("Escriba sí para aplicarlo: ", "aplicado p1", "creado p1: section_id "),
}


@pytest.mark.sqlite_only("the words are the same on either engine")
@pytest.mark.parametrize("lang", ["ca", "es"])
def test_the_language_s_yes_applies_the_plan_on_the_server(
    live: Live,
    models: dict[str, ScriptedModel],
    oh_archive: Archive,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    lang: str,
) -> None:
    """The prompt asks for ``sí``; ``Si`` (no accent, any case) applies the plan on the server
    and the report is in the language; ``sí`` in English is no yes, and nothing is written."""
    argv = ["ask", "--server", live.url, "--user", "writer", "--write", "Create Anna Pujol"]
    plan = call("propose_change_plan", {"summary": "Anna", "ops": ANNA_OPS})
    monkeypatch.setenv("ARXIU_PASSWORD", password("writer"))
    monkeypatch.setenv("ARXIU_LANG", "en")
    models["local"].extend(Turn(tool_calls=(plan,)))
    monkeypatch.setattr("sys.stdin", io.StringIO("sí\n"))
    assert main(argv) == 0
    assert capsys.readouterr().err.splitlines()[-1] == CANCELLED["en"]
    assert not find_matches(oh_archive, "rsc197", {"rsc85": "Anna Pujol"})

    monkeypatch.setenv("ARXIU_LANG", lang)
    models["local"].extend(Turn(tool_calls=(plan,)))
    monkeypatch.setattr("sys.stdin", io.StringIO("Si\n"))
    assert main(argv) == 0
    captured = capsys.readouterr()
    prompt, applied, created = APPLIED[lang]
    assert captured.err.splitlines()[-1] == prompt
    lines = captured.out.splitlines()
    assert applied in lines and any(line.startswith(created) for line in lines)
    assert len(find_matches(oh_archive, "rsc197", {"rsc85": "Anna Pujol"})) == 1


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal")
@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_the_password_prompt_is_in_the_language(arxiu_home: Path, lang: str) -> None:
    """``arxiu ask --server`` run in a terminal of its own (a pseudo-terminal, in a session of
    its own so that the prompt never reaches the terminal running the tests), no password in
    the environment: the prompt names the user in the language."""
    env = {k: v for k, v in os.environ.items() if k not in ("ARXIU_PASSWORD", "ARXIU_USER")}
    env.update(ARXIU_LANG=lang, ARXIU_HOME=str(arxiu_home))
    leader, follower = pty.openpty()
    command = [sys.executable, "-m", "app", "ask", "--server", "http://127.0.0.1:9"]
    process = subprocess.Popen(
        [*command, "--user", "anna", "hi"],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env,
        start_new_session=True,
    )
    os.close(follower)
    shown = b""
    try:
        deadline = time.monotonic() + 120
        while PROMPT[lang].encode() not in shown and time.monotonic() < deadline:
            if process.poll() is not None and not select.select([leader], [], [], 0)[0]:
                break
            if select.select([leader], [], [], 0.2)[0]:
                try:
                    shown += os.read(leader, 4096)
                except OSError:  # the process closed its side
                    break
    finally:
        process.kill()
        process.wait(timeout=60)
        os.close(leader)
    assert shown.decode().strip() == PROMPT[lang].strip()
