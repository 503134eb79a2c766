"""The CLI's help in the CLI's language: every help text of the parser tree has its Catalan and
Spanish; ``--help`` and argparse's errors are said in the language (``ARXIU_LANG``), with the
same exit codes; English stays as argparse writes it. Also ``archive set``'s note."""

from __future__ import annotations

import argparse
import gettext
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import build_parser, main
from app.commands.help_words import (
    ARGPARSE_WORDS,
    HELP_WORDS,
    LANGS,
    help_texts,
    localize,
    translated,
)
from app.core.archive import open_archive

PLACEHOLDER = re.compile(r"%\(\w+\)[a-z]|%[a-z%]")
"""An argparse placeholder (``%(default)s``, ``%s``, ``%r``) or a ``%%``."""


@pytest.fixture
def lang(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The CLI's language, and a wide terminal: argparse wraps no help text."""
    chosen = str(request.param)
    monkeypatch.setenv("ARXIU_LANG", chosen)
    monkeypatch.setenv("COLUMNS", "1000")
    return chosen


def said(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of ``arxiu ARGS`` that argparse ends (help, an error)."""
    with pytest.raises(SystemExit) as ended:
        main(list(args))
    captured = capsys.readouterr()
    code = ended.value.code
    assert isinstance(code, int)
    return code, captured.out, captured.err


def test_every_help_text_of_the_parser_has_its_catalan_and_spanish() -> None:
    """Walks the whole tree: a help text, description or group title added in English alone
    fails here; so does a translation whose English the parser no longer has."""
    texts = help_texts(build_parser())
    assert len(texts) > 100
    assert [text for text in texts if text not in HELP_WORDS] == []
    assert [text for text in HELP_WORDS if text not in texts] == []


@pytest.mark.parametrize("table", [HELP_WORDS, ARGPARSE_WORDS], ids=["help", "argparse"])
def test_each_translation_keeps_argparse_s_placeholders(table: dict[str, tuple[str, str]]) -> None:
    for english, both in table.items():
        assert len(both) == len(LANGS)
        for text in both:
            assert text.strip() and text.endswith(" ") == english.endswith(" ")
            assert PLACEHOLDER.findall(text) == PLACEHOLDER.findall(english), (english, text)


@pytest.mark.parametrize("chosen", LANGS)
def test_a_localized_parser_keeps_no_english_help(chosen: str) -> None:
    parser = build_parser()
    localize(parser, chosen)
    left = [text for text in help_texts(parser) if translated(text, chosen) != text]
    assert left == []
    english = build_parser()
    localize(english, "en")
    assert help_texts(english) == help_texts(build_parser())


def commands(
    parser: argparse.ArgumentParser,
) -> argparse._SubParsersAction[argparse.ArgumentParser]:
    """``parser``'s subcommands."""
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def own_texts(parser: argparse.ArgumentParser) -> list[str]:
    """What ``parser``'s ``--help`` says in English: its description, its groups' titles, the
    help of its arguments and of its subcommands (not the subcommands' own)."""
    actions = list(parser._actions)
    if any(isinstance(a, argparse._SubParsersAction) for a in actions):
        actions += commands(parser)._choices_actions
    texts = [parser.description, *(g.title for g in parser._action_groups)]
    texts += [a.help for a in actions]
    return [t for t in texts if t and t != argparse.SUPPRESS]


COMMANDS = [(), ("import",), ("archive", "set")]
"""The parsers whose ``--help`` is read: the main one and two subcommands."""
USAGE = {"ca": "ús: arxiu", "es": "uso: arxiu", "en": "usage: arxiu"}


@pytest.mark.parametrize("lang", LANGS, indirect=True)
@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_is_said_in_the_language(
    capsys: pytest.CaptureFixture[str], lang: str, command: tuple[str, ...]
) -> None:
    code, out, err = said(capsys, *command, "--help")
    assert (code, err) == (0, "")
    assert out.startswith(USAGE[lang])
    parser = build_parser()
    for name in command:  # the subcommand's own parser, in English
        parser = commands(parser).choices[name]
    for english in own_texts(parser):
        assert translated(english, lang) in out, english
    for english, both in HELP_WORDS.items():
        if english not in both:
            assert english not in out, english
    assert "positional arguments" not in out and "options:" not in out


@pytest.mark.parametrize("lang", ["en"], indirect=True)
def test_english_help_is_argparse_s_own(capsys: pytest.CaptureFixture[str], lang: str) -> None:
    code, out, _err = said(capsys, "archive", "set", "--help")
    assert code == 0
    assert out == (
        "usage: arxiu archive set [-h] [--archive DIR|URL] {write_allowed} value\n\n"
        "positional arguments:\n"
        "  {write_allowed}    write_allowed: the assistant may write\n"
        "  value              true or false\n\n"
        "options:\n"
        "  -h, --help         show this help message and exit\n"
        "  --archive DIR|URL  archive folder, or postgresql://USER@HOST:PORT/DATABASE for a "
        "shared archive (default: the demo archive)\n"
    )


ERRORS = {
    "ca": (
        "arxiu: error: arguments no reconeguts: --bogus",
        "arxiu archive set: error: argument key: valor no vàlid: 'nope' (trieu entre "
        "'write_allowed')",
        "arxiu search: error: calen els arguments següents: query",
    ),
    "es": (
        "arxiu: error: argumentos no reconocidos: --bogus",
        "arxiu archive set: error: argumento key: valor no válido: 'nope' (elija entre "
        "'write_allowed')",
        "arxiu search: error: se requieren los argumentos siguientes: query",
    ),
    "en": (
        "arxiu: error: unrecognized arguments: --bogus",
        "arxiu archive set: error: argument key: invalid choice: 'nope' (choose from "
        "'write_allowed')",
        "arxiu search: error: the following arguments are required: query",
    ),
}
"""The last line of an unknown option, a value not among the choices, a missing argument."""


@pytest.mark.parametrize("lang", ["ca", "es", "en"], indirect=True)
def test_argparse_s_errors_are_said_in_the_language_with_the_same_exit_code(
    capsys: pytest.CaptureFixture[str], lang: str
) -> None:
    wrong = (["search", "pantà", "--bogus"], ["archive", "set", "nope", "true"], ["search"])
    for args, last in zip(wrong, ERRORS[lang], strict=True):
        code, out, err = said(capsys, *args)
        assert (code, out) == (2, "")
        assert err.startswith(USAGE[lang])
        assert err.splitlines()[-1] == last
    assert vars(argparse)["_"] is gettext.gettext  # argparse's words are put back
    assert vars(argparse)["ngettext"] is gettext.ngettext


@pytest.mark.parametrize("chosen", ["ca", "es"])
def test_a_real_process_says_its_errors_in_the_language(chosen: str) -> None:
    env = {**os.environ, "ARXIU_LANG": chosen}
    done = subprocess.run(
        [sys.executable, "-m", "app", "search", "pantà", "--bogus"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[-1] == ERRORS[chosen][0]


SWITCHED = {
    "ca": ("activada: l'assistent pot proposar canvis", "desactivada: no s'hi pot escriure res"),
    "es": (
        "activada: el asistente puede proponer cambios",
        "desactivada: no se puede escribir nada",
    ),
    "en": ("on: the assistant may propose changes", "off: nothing can be written"),
}


@pytest.mark.parametrize("lang", ["ca", "es", "en"], indirect=True)
def test_archive_set_says_what_the_switch_does_in_the_language(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lang: str
) -> None:
    """``write_allowed = true`` stays as it is (a key and its value); the note is translated."""
    where = tmp_path / "a"
    open_archive(where, create=True).close()
    on, off = SWITCHED[lang]
    assert main(["archive", "set", "write_allowed", "true", "--archive", str(where)]) == 0
    assert capsys.readouterr().out == f"write_allowed = true ({on})\n"
    assert main(["archive", "set", "write_allowed", "false", "--archive", str(where)]) == 0
    assert capsys.readouterr().out == f"write_allowed = false ({off})\n"
