"""``arxiu archive info`` and ``arxiu records list|show`` on the demo archive and a finding aid."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from lxml import etree

from app.cli import main
from app.core.archive import open_archive
from app.core.archive.importers.base import external_keys
from tests.conftest import shared_data


def test_first_command_creates_the_demo_archive_in_arxiu_home(
    arxiu_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["archive", "info", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert Path(info["path"]) == arxiu_home / "archives" / "demo"
    counts = {s["tipo"]: s["records"] for s in info["sections"]}
    assert counts["oh1"] >= 40 and counts["rsc197"] >= 60 and counts["numisdata4"] >= 40
    assert {s["tipo"] for s in info["sections"] if s["restricted"]} == {"oh1"}
    assert main(["archive", "info"]) == 0
    assert "Oral history" in capsys.readouterr().out


def test_records_list_and_show(
    demo_archive_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "demo"
    shutil.copytree(demo_archive_dir, folder)
    assert main(["--archive", str(folder), "records", "list", "oh1", "--json", "--limit", "5"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert listing["total"] >= 40 and len(listing["records"]) == 5
    assert main(["records", "show", "oh1", "4", "--json", "--archive", str(folder)]) == 0
    view = json.loads(capsys.readouterr().out)
    assert view["restricted"] is True
    informant = next(f for f in view["fields"] if f["tipo"] == "oh24")
    target = informant["values"][0]["record"]
    section, sid = target.split("/")
    assert main(["--archive", str(folder), "records", "show", section, sid, "--json"]) == 0
    person = json.loads(capsys.readouterr().out)
    assert any(link["record"] == "oh1/4" for link in person["linked_from"])


def test_errors_are_coded_with_exit_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--archive", str(tmp_path / "none"), "archive", "info"]) == 2
    assert "error [archive.not_found]" in capsys.readouterr().err
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "archive.db").write_bytes(b"garbage" * 100)
    assert main(["--archive", str(bad), "archive", "info"]) == 3
    err = capsys.readouterr().err
    assert "error [archive.corrupt]" in err and "hint:" in err


def test_a_closed_pipe_ends_the_command_quietly(tmp_path: Path) -> None:
    import subprocess
    import sys

    from app.core.archive import Field, Section, open_archive
    from app.core.archive.bulk import NewRecord

    folder = tmp_path / "big"
    with open_archive(folder, create=True) as archive:
        archive.put_section(Section("s1", {"lg-eng": "Things"}, label_field="f1"))
        archive.put_field(Field("f1", "s1", {"lg-eng": "Name"}))
        rows = [
            NewRecord("s1", {"f1": [{"value": f"thing number {i:05d}" * 3}]}) for i in range(4000)
        ]
        archive.upsert_records(rows)
    script = (
        "import sys; from app.cli import main; "
        f"sys.exit(main(['--archive', {str(folder)!r}, 'records', 'list', 's1', "
        "'--limit', '4000']))"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None
    proc.stdout.read(10)
    proc.stdout.close()  # like `| head -c 10`, long before the ~250 KB listing is written
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 141
    assert b"Traceback" not in err


SHOWN = {
    "ca": ("Llengua", "Castellà", "Enllaçat des de", "mitjançant Informant", "fons"),
    "es": ("Lengua", "Castellano", "Enlazado desde", "mediante Informante", "fondo"),
    "en": ("Language", "Spanish", "Linked from", "via Informant", "fonds"),
}


@pytest.mark.parametrize("lang", sorted(SHOWN))
def test_records_show_says_values_in_the_readers_language(
    lang: str,
    demo_archive_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``records show`` reads as the record view: a value's language as a short tag in a
    field with one value per language, none on a language-neutral value, a language code as
    the language's name, a level of description as the reader's term, a link back named by
    its field's label; ``--json`` keeps the codes."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    heading, language, linked, via, level = SHOWN[lang]
    folder = tmp_path / "demo"
    shutil.copytree(demo_archive_dir, folder)
    assert main(["--archive", str(folder), "records", "show", "oh1", "4"]) == 0
    shown = capsys.readouterr().out
    assert "lg-" not in shown
    assert "  CA  Ens van fer fora de la vall quan va arribar el pantà" in shown
    assert "  EN  They threw us out of the valley when the reservoir came" in shown
    assert "\n  1992-11-10\n" in shown  # the date is language-neutral: no tag
    assert f"\n{heading} [oh31]\n  {language}\n" in shown
    assert "\n  [TC_00:02:48.000_TC] Cuando" in shown  # a transcript's lines stay indented
    assert main(["--archive", str(folder), "records", "show", "rsc197", "9"]) == 0
    person = capsys.readouterr().out
    assert f"\n{linked}\n" in person and f"(oh1/4) {via}" in person
    assert main(["--archive", str(folder), "records", "show", "oh1", "4", "--json"]) == 0
    view = json.loads(capsys.readouterr().out)
    spoken = next(f for f in view["fields"] if f["tipo"] == "oh31")
    assert spoken["values"][0]["value"] == "lg-spa"

    ead, finding_aid = tmp_path / "ead", shared_data("ead", "anf", "FRAN_IR_003500.xml")
    assert main(["--archive", str(ead), "import", "ead", str(finding_aid)]) == 0
    capsys.readouterr()
    assert main(["--archive", str(ead), "records", "show", "ead1", "1"]) == 0
    fonds = capsys.readouterr().out
    assert "  FR  Fonds Vitet\n" in fonds and f"\n  {level}\n" in fonds and "lg-" not in fonds


CONTENTS = {
    "ca": ("Contingut", "expedient", "Enllaçat des de"),
    "es": ("Contenido", "expediente", "Enlazado desde"),
}


@pytest.mark.parametrize("lang", sorted(CONTENTS))
def test_records_show_lists_a_units_contents_in_order_with_dates_and_box(
    lang: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """UW's AFL-CIO records: six files all titled "Oregon State Correspondence" under one
    subseries were six identical "Linked from" lines; they are its contents, in order, each
    with its level, dates and box-folder, and not listed again."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    heading, level, linked = CONTENTS[lang]
    path = shared_data("ead", "uw-labor-archives", "AFL-CIORegion9_5189.xml_LinkedDataProject.xml")
    units = etree.parse(str(path)).xpath("/ead/archdesc/dsc/c01[4]/c02[1]/c03[4]/c04")
    folder = tmp_path / "uw"
    assert main(["--archive", str(folder), "import", "ead", str(path)]) == 0
    with open_archive(folder) as archive:
        key = external_keys(archive, "ead")["AFL-CIORegion9_5189.xml#c4.1.4"]
    capsys.readouterr()

    assert (
        main(["--archive", str(folder), "records", "show", key.section_tipo, str(key.section_id)])
        == 0
    )
    shown = capsys.readouterr().out

    start = shown.splitlines().index(f"{heading} ({len(units)})") + 1
    listed = shown.splitlines()[start : start + len(units)]
    assert [line.split(" (ead1/")[0] for line in listed] == [
        f"  {n}. Oregon State Correspondence · {level} · {u.findtext('did/unitdate').strip()}"
        f" · Box-folder {u.findtext('did/container').strip()}"
        for n, u in enumerate(units, 1)
    ]
    assert "Oregon State Correspondence" not in shown.split(f"\n{heading} (")[0]
    assert linked not in shown  # its only links back are its children's
