"""The CLI speaks the UI's language (``ARXIU_LANG``, else the settings' ``language``, else the
system's): headings and counts of ``search``, ``ask``, ``archive info``, ``records`` and
``index`` in Catalan, Spanish and English; ``--json`` prints the same in all three."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app.cli import main
from app.commands.ask_citations import citation_lines, claim_lines
from app.commands.cli_words import cli_language
from app.core.agent.citations import Citation
from app.core.agent.claims import Claim

LANGS = ["ca", "es", "en"]
HEADINGS = {
    "ca": ("registres per a «pantà»", "Cites:", "Arxiu  ", "Enllaçat des de"),
    "es": ("registros para «pantà»", "Citas:", "Archivo  ", "Enlazado desde"),
    "en": ('records for "pantà"', "Citations:", "Archive  ", "Linked from"),
}


@pytest.fixture(scope="module")
def demo(demo_archive_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the demo archive with its hashing index built."""
    folder = tmp_path_factory.mktemp("words") / "demo"
    shutil.copytree(demo_archive_dir, folder)
    assert main(["index", "--archive", str(folder), "--model", "hashing"]) == 0
    return folder


def _out(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(list(args)) == 0
    return capsys.readouterr().out


@pytest.fixture
def lang(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    chosen = str(request.param)
    monkeypatch.setenv("ARXIU_LANG", chosen)
    return chosen


@pytest.mark.parametrize("lang", LANGS, indirect=True)
def test_search_archive_and_records_headings_follow_the_language(
    demo: Path, capsys: pytest.CaptureFixture[str], lang: str
) -> None:
    search, _citations, archive, linked = HEADINGS[lang]
    out = _out(capsys, "search", "pantà", "--archive", str(demo), "--model", "hashing")
    assert out.splitlines()[0].endswith(search), out.splitlines()[0]
    info = _out(capsys, "archive", "info", "--archive", str(demo))
    assert info.startswith(archive)
    shown = _out(capsys, "records", "show", "rsc197", "1", "--archive", str(demo))
    assert f"\n{linked}\n" in shown
    listing = _out(capsys, "records", "list", "oh1", "--archive", str(demo), "--limit", "2")
    word = {"ca": "registres", "es": "registros", "en": "records"}[lang]
    assert listing.splitlines()[0].endswith(f" {word}")
    assert "--offset" in listing.splitlines()[-1]


def test_json_is_the_same_in_every_language(
    demo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    printed = set()
    for chosen in LANGS:
        monkeypatch.setenv("ARXIU_LANG", chosen)
        info = _out(capsys, "archive", "info", "--archive", str(demo), "--json")
        search = _out(
            capsys, "search", "pantà", "--archive", str(demo), "--model", "hashing", "--json",
            "--lang", "lg-eng",
        )  # fmt: skip
        printed.add((info, search))
        json.loads(info), json.loads(search)
    assert len(printed) == 1


@pytest.mark.parametrize("lang", LANGS, indirect=True)
def test_ask_s_citation_and_claim_blocks_follow_the_language(lang: str) -> None:
    good = Citation("oh1", 1, "El pantà", verified=True)
    bad = Citation("oh1", 9, "", verified=False)
    lines = citation_lines([good, bad])
    assert lines[0] == HEADINGS[lang][1]
    unverified = {"ca": "1 de 2 cites", "es": "1 de 2 citas", "en": "1 of 2 citations"}[lang]
    assert any(unverified in line for line in lines)
    answer = "Es va acabar el 1963."
    claim = Claim("1963", answer.index("1963"), answer.index("1963") + 4, "date", found=False)
    heading = claim_lines(answer, [claim])[0]
    start = {"ca": "Afirmacions: 1", "es": "Afirmaciones: 1", "en": "Claims: 1"}[lang]
    assert heading.startswith(start)


def test_the_language_comes_from_the_settings_then_the_system(
    arxiu_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ARXIU_LANG", raising=False)
    for name in ("LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "es_ES.UTF-8")
    assert cli_language() == "es"
    monkeypatch.setenv("LANG", "C.UTF-8")
    assert cli_language() == "en"
    settings = arxiu_home / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"language": "ca"}), encoding="utf-8")
    assert cli_language() == "ca"
    monkeypatch.setenv("ARXIU_LANG", "es")
    assert cli_language() == "es"
