"""``arxiu users`` speaks the CLI's language (``ARXIU_LANG``): its prompts, what it did and the
permissions; ``--json`` and the token it issues are the same in every language."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from app.api.users import UserStore
from app.cli import main

LANGS = ["ca", "es", "en"]
SAID = {
    "en": {
        "added": ("added anna (read)", "added joan (read, write, restricted)"),
        "listed": ("anna\tread", "joan\tread, write, restricted"),
        "none": "no users yet: add one with `arxiu users add NAME`",
        "passwd": "password changed for anna",
        "removed": "removed anna",
        "prompts": ["Password: ", "Again: "],
    },
    "ca": {
        "added": ("s'ha afegit anna (lectura)",
                  "s'ha afegit joan (lectura, escriptura, restringits)"),
        "listed": ("anna\tlectura", "joan\tlectura, escriptura, restringits"),
        "none": "encara no hi ha cap usuari: afegiu-ne un amb `arxiu users add NAME`",
        "passwd": "s'ha canviat la contrasenya de l'usuari anna",
        "removed": "s'ha suprimit anna",
        "prompts": ["Contrasenya: ", "Repetiu-la: "],
    },
    "es": {
        "added": ("se ha añadido anna (lectura)",
                  "se ha añadido joan (lectura, escritura, restringidos)"),
        "listed": ("anna\tlectura", "joan\tlectura, escritura, restringidos"),
        "none": "todavía no hay ningún usuario: añada uno con `arxiu users add NAME`",
        "passwd": "se ha cambiado la contraseña de anna",
        "removed": "se ha eliminado anna",
        "prompts": ["Contraseña: ", "Repítala: "],
    },
}  # fmt: skip


class Terminal(io.StringIO):
    """A standard input a person types at."""

    def isatty(self) -> bool:
        return True


def _run(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *argv: str, stdin: str = ""
) -> tuple[str, str]:
    """``arxiu ARGV`` with ``stdin`` on its standard input: its stdout and stderr."""
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    assert main(list(argv)) == 0
    out, err = capsys.readouterr()
    return out.rstrip("\n"), err.rstrip("\n")


@pytest.mark.parametrize("lang", LANGS)
def test_the_users_commands_speak_the_cli_language(
    arxiu_home: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    lang: str,
) -> None:
    monkeypatch.setenv("ARXIU_LANG", lang)
    said, m = SAID[lang], monkeypatch
    assert _run(capsys, m, "users", "list") == ("", said["none"])
    add = ("users", "add", "--password-stdin")
    assert _run(capsys, m, *add, "anna", stdin="pw-anna\n")[0] == said["added"][0]
    both = ("--can-write", "--can-read-restricted")
    assert _run(capsys, m, *add, "joan", *both, stdin="pw-joan\n")[0] == said["added"][1]
    assert _run(capsys, m, "users", "list")[0].splitlines() == list(said["listed"])
    passwd = _run(capsys, m, "users", "passwd", "anna", "--password-stdin", stdin="pw-new\n")
    assert passwd[0] == said["passwd"]
    assert UserStore().authenticate("anna", "pw-new") is not None
    assert _run(capsys, m, "users", "remove", "anna")[0] == said["removed"]


@pytest.mark.parametrize("lang", LANGS)
def test_the_password_is_asked_twice_in_the_cli_language(
    arxiu_home: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    lang: str,
) -> None:
    monkeypatch.setenv("ARXIU_LANG", lang)
    asked: list[str] = []

    def typed(prompt: str) -> str:
        asked.append(prompt)
        return "pw-typed"

    monkeypatch.setattr("getpass.getpass", typed)
    monkeypatch.setattr("sys.stdin", Terminal())
    assert main(["users", "add", "anna"]) == 0
    assert asked == SAID[lang]["prompts"]
    assert UserStore().authenticate("anna", "pw-typed") is not None


def test_json_and_the_token_are_the_same_in_every_language(
    arxiu_home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    UserStore().add("anna", "pw-anna", can_write=True)
    listed = set()
    for lang in LANGS:
        monkeypatch.setenv("ARXIU_LANG", lang)
        assert main(["users", "list", "--json"]) == 0
        listed.add(capsys.readouterr().out)
        assert main(["users", "token", "anna"]) == 0
        token = capsys.readouterr().out
        assert token.count("\n") == 1 and UserStore().user_for_token(token.strip()) is not None
    assert len(listed) == 1
    assert json.loads(listed.pop()) == [
        {"name": "anna", "can_write": True, "can_read_restricted": False}
    ]
