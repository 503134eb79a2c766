"""``arxiu export``: what it wrote, said in Catalan, Spanish and English with each count in the
form that agrees with it (1 registre, 2 registres); ``--json`` the same in every language."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main
from app.commands.export_cmd import summary_lines
from app.core.archive import Field, Section, open_archive
from app.core.archive.exporters import ExportSummary
from app.core.archive.exporters.ead3 import FINDING_AIDS
from app.core.phrases import Phrase

LANGS = ["ca", "es", "en"]


def letters(folder: Path, count: int) -> Path:
    """An archive whose section ``c1`` holds ``count`` open letters and ``count`` restricted."""
    with open_archive(folder, create=True) as archive:
        archive.put_section(Section("c1", {"lg-eng": "Letters"}, label_field="c2"))
        archive.put_field(Field("c2", "c1", {"lg-eng": "Title"}, "text", position=1))
        for number in range(count):
            title = {"c2": [{"lang": "lg-cat", "value": f"Carta {number}"}]}
            archive.create_record("c1", title)
            archive.create_record("c1", title, restricted=True)
    return folder


CSV_LINES = {
    "ca": {
        0: ["S'han exportat 0 registres com a csv a {out}"],
        1: ["S'ha exportat 1 registre com a csv a {out}", "  1 registre restringit exclòs"],
        2: ["S'han exportat 2 registres com a csv a {out}", "  2 registres restringits exclosos"],
    },
    "es": {
        0: ["Se han exportado 0 registros como csv en {out}"],
        1: ["Se ha exportado 1 registro como csv en {out}", "  1 registro restringido excluido"],
        2: [
            "Se han exportado 2 registros como csv en {out}",
            "  2 registros restringidos excluidos",
        ],
    },
    "en": {
        0: ["Exported 0 records as csv to {out}"],
        1: ["Exported 1 record as csv to {out}", "  1 restricted record left out"],
        2: ["Exported 2 records as csv to {out}", "  2 restricted records left out"],
    },
}


@pytest.mark.parametrize("count", [0, 1, 2])
@pytest.mark.parametrize("lang", LANGS)
def test_the_records_written_and_left_out_agree_with_their_number(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    lang: str,
    count: int,
) -> None:
    monkeypatch.setenv("ARXIU_LANG", lang)
    folder = letters(tmp_path / "a", count)
    out = tmp_path / "out.csv"
    assert main(["export", "csv", str(out), "--section", "c1", "--archive", str(folder)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed == [line.format(out=out) for line in CSV_LINES[lang][count]]
    rows = out.read_text(encoding="utf-8-sig").splitlines()
    assert len(rows) == 1 + count  # the header, then the open letters only


INCLUDED = {
    "ca": (
        "S'han exportat 2 registres com a dc a {out}",
        "  1 registre restringit inclòs (ho diu al començament)",
        "  Aquesta exportació inclou registres restringits, que no poden sortir de la institució "
        "sense permís.",
    ),
    "es": (
        "Se han exportado 2 registros como dc en {out}",
        "  1 registro restringido incluido (lo dice al principio)",
        "  Esta exportación incluye registros restringidos, que no pueden salir de la institución "
        "sin permiso.",
    ),
    "en": (
        "Exported 2 records as dc to {out}",
        "  1 restricted record included (said at the top)",
        "  This export includes restricted records, which must not leave the institution without "
        "permission.",
    ),
}


@pytest.mark.parametrize("lang", LANGS)
def test_a_real_process_says_the_restricted_records_it_included(tmp_path: Path, lang: str) -> None:
    """``arxiu export dc --include-restricted`` run as a process: the count and the exporter's
    notice in the language; ``--json`` keeps the English notice and is the same in every
    language (but for the seconds)."""
    folder = letters(tmp_path / "a", 1)
    out = tmp_path / "out.xml"
    env = {**os.environ, "ARXIU_LANG": lang}
    command = [sys.executable, "-m", "app.cli", "export", "dc", str(out), "--section", "c1"]
    command += ["--include-restricted", "--archive", str(folder)]
    said, as_json = (
        subprocess.run(
            command + extra, env=env, capture_output=True, text=True, timeout=120, check=True
        ).stdout
        for extra in ([], ["--json"])
    )
    assert said.splitlines() == [line.format(out=out) for line in INCLUDED[lang]]
    summary = json.loads(as_json)
    summary.pop("seconds")
    assert summary == {
        "format": "dc",
        "path": str(out),
        "records": 2,
        "restricted_left_out": 0,
        "restricted_included": 1,
        "notes": [INCLUDED["en"][2].strip()],
    }
    assert out.read_text(encoding="utf-8").count("<oai_dc:dc") == 2


FOLDER_NOTES = {
    "ca": ("  1 instrument de descripció, un fitxer a ead", "  1.200 instruments de descripció"),
    "es": ("  1 instrumento de descripción, un archivo en ead", "  1200 instrumentos de"),
    "en": ("  1 finding aid, one file in ead", "  1,200 finding aids, one file each in ead"),
}


@pytest.mark.parametrize("lang", LANGS)
def test_the_finding_aids_note_agrees_with_their_number(
    monkeypatch: pytest.MonkeyPatch, lang: str
) -> None:
    """The EAD3 exporter's note of finding aids written into a folder, for one and for 1,200
    (with the language's thousands separator)."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    for count, expected in zip((1, 1200), FOLDER_NOTES[lang], strict=True):
        summary = ExportSummary("ead3", "ead", records=count)
        summary.notes.append(Phrase.of(FINDING_AIDS.template(count), n=count, out="ead"))
        assert summary_lines(summary)[1].startswith(expected)


@pytest.mark.parametrize(("lang", "title"), [("ca", "Títol"), ("es", "Título"), ("en", "Title")])
def test_the_headings_are_in_the_cli_language_unless_lang_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lang: str, title: str
) -> None:
    """A CSV's column headings follow ``ARXIU_LANG`` as the window's export follows its UI
    language; ``--lang`` chooses another."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    folder = tmp_path / "a"
    with open_archive(folder, create=True) as archive:
        archive.put_section(Section("c1", {"lg-eng": "Letters"}, label_field="c2"))
        labels = {"lg-eng": "Title", "lg-cat": "Títol", "lg-spa": "Título"}
        archive.put_field(Field("c2", "c1", labels, "text", position=1))
        archive.create_record("c1", {"c2": [{"lang": "lg-cat", "value": "Carta"}]})
    out, chosen = tmp_path / "out.csv", tmp_path / "chosen.csv"
    base = ["--section", "c1", "--archive", str(folder)]

    assert main(["export", "csv", str(out), *base]) == 0
    assert main(["export", "csv", str(chosen), *base, "--lang", "lg-eng"]) == 0

    assert title in out.read_text(encoding="utf-8-sig").splitlines()[0]
    assert "Title" in chosen.read_text(encoding="utf-8-sig").splitlines()[0]
