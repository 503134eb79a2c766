"""``arxiu import KIND PATH``: summary, JSON, --archive on either side, coded exit codes."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from app.cli import main
from app.commands.import_cmd import summary_lines
from app.core.archive import open_archive
from app.core.archive.importers import (
    DATASET_KINDS,
    IMPORTERS,
    KINDS,
    SERVICES,
    STANDARD_KINDS,
    ImportSummary,
)
from tests.conftest import shared_data


def _slice(source: Path, target: Path, count: int) -> Path:
    with gzip.open(source, "rb") as handle:
        lines = [line for _, line in zip(range(count), handle, strict=False)]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(gzip.compress(b"".join(lines)))
    return target


def test_import_prints_a_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hoards = _slice(
        shared_data("igch", "hoards.jsonl.gz"), tmp_path / "igch" / "hoards.jsonl.gz", 30
    )
    folder = tmp_path / "archive"

    code = main(["--archive", str(folder), "import", "igch", str(hoards)])

    out = capsys.readouterr().out
    assert code == 0
    assert "records   30 (30 created, 0 updated, 0 unchanged)" in out
    assert "unresolved" in out  # no nomisma in this archive
    with open_archive(folder) as archive:
        assert archive.count_records("igch1") == 30


def test_archive_after_the_subcommand_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = shared_data("beir-dbpedia-5k", "corpus.jsonl.gz")
    path = _slice(corpus, tmp_path / "beir-dbpedia-5k" / "corpus.jsonl.gz", 25)
    folder = tmp_path / "archive"
    args = ["import", "beir", str(path.parent), "--archive", str(folder), "--json"]

    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(args) == 0
    second = json.loads(capsys.readouterr().out)

    assert (first["created"], first["sections"]) == (25, {"beir1": 25})
    assert (second["created"], second["unchanged"]) == (0, 25)
    assert first["skipped"] == [] and first["error"] is None


def test_bad_lines_are_listed_with_their_numbers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "poilus" / "wills.jsonl.gz"
    good = _slice(shared_data("poilus", "wills.jsonl.gz"), tmp_path / "w.jsonl.gz", 3)
    lines = gzip.decompress(good.read_bytes()).splitlines(keepends=True)
    path.parent.mkdir()
    path.write_bytes(gzip.compress(lines[0] + b"not json\n" + lines[1] + b'{"id": 5}\n'))

    code = main(["import", "poilus", str(path), "--archive", str(tmp_path / "a")])

    out = capsys.readouterr().out
    assert code == 0
    assert "skipped   2" in out
    assert "wills.jsonl.gz:2: bad JSON" in out
    assert "wills.jsonl.gz:4: no 'page_texts' and no 'text'" in out


def test_a_missing_file_exits_with_its_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["import", "nomisma", str(tmp_path / "absent"), "--archive", str(tmp_path / "a")])

    assert code == 2
    assert "error [import.file_missing]" in capsys.readouterr().err


def test_a_truncated_file_imports_what_it_read_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = shared_data("tate", "artists.jsonl.gz").read_bytes()
    path = tmp_path / "tate" / "artists.jsonl.gz"
    path.parent.mkdir()
    path.write_bytes(data[: len(data) // 3])

    code = main(["import", "tate", str(path), "--archive", str(tmp_path / "a"), "--json"])

    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert code == 2
    assert summary["error"]["code"] == "import.truncated"
    assert summary["created"] == summary["error"]["details"]["last_line"] > 0
    assert "error [import.truncated]" in captured.err


def test_an_unknown_kind_is_refused_by_the_parser(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["import", "marc21", str(tmp_path)])
    assert caught.value.code == 2


@pytest.mark.parametrize(
    ("lang", "datasets"),
    [
        ("en", "test datasets"),
        ("ca", "conjunts de dades de prova"),
        ("es", "conjuntos de datos de prueba"),
    ],
)
def test_the_help_leads_with_the_archivist_s_formats(
    lang: str, datasets: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``arxiu --help`` and ``arxiu import --help`` list EAD first and the public datasets this
    project tests with last, under their own name; every kind is listed once."""
    assert sorted(KINDS) == sorted({*IMPORTERS, *SERVICES})
    assert KINDS[0] == "ead" and set(KINDS[-len(DATASET_KINDS) :]) == set(DATASET_KINDS)
    monkeypatch.setenv("ARXIU_LANG", lang)
    monkeypatch.setenv("COLUMNS", "1000")
    outs = []
    for args in (["--help"], ["import", "--help"]):
        with pytest.raises(SystemExit):
            main(args)
        outs.append(capsys.readouterr().out)
    for out in outs:
        assert ", ".join(STANDARD_KINDS) in out and out.index("ead") < out.index("nomisma")
    assert f"{datasets}: {', '.join(DATASET_KINDS)}" in outs[0]


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        (
            "ca",
            (
                "  registres   1 (1 nou, 0 actualitzats, 0 sense canvis) de 3 files",
                "  omesos      2",
                "    fons.csv:3: la fila té 5 cel·les i la capçalera, 3",
                "    fons.csv:4: identificador duplicat «r1» (apareix primer a la línia 2)",
            ),
        ),
        (
            "es",
            (
                "  registros   1 (1 nuevo, 0 actualizados, 0 sin cambios) de 3 filas",
                "  omitidos    2",
                "    fons.csv:3: la fila tiene 5 celdas y la cabecera, 3",
                "    fons.csv:4: identificador duplicado «r1» (aparece primero en la línea 2)",
            ),
        ),
        (
            "en",
            (
                "  records   1 (1 created, 0 updated, 0 unchanged) from 3 rows",
                "  skipped   2",
                "    fons.csv:3: the row has 5 cells, the header 3",
                "    fons.csv:4: duplicate id 'r1' (first on line 2)",
            ),
        ),
    ],
)
def test_the_summary_and_the_skip_reasons_follow_the_language(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    lang: str,
    said: tuple[str, ...],
) -> None:
    path = tmp_path / "fons.csv"
    path.write_text(
        "Identifier,Title,Date\nr1,Carta del batlle,1912\nr2,Plànol del pantà,1950,extra,cells\n"
        "r1,Carta repetida,1913\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("ARXIU_LANG", lang)

    assert main(["import", "csv", str(path), "--archive", str(tmp_path / "a")]) == 0

    lines = capsys.readouterr().out.splitlines()
    assert all(line in lines for line in said), lines
    printed = main(["import", "csv", str(path), "--archive", str(tmp_path / "a"), "--json"])
    skipped = json.loads(capsys.readouterr().out)["skipped"]
    assert printed == 0 and [s["reason"] for s in skipped] == [  # JSON stays English
        "the row has 5 cells, the header 3",
        "duplicate id 'r1' (first on line 2)",
    ]
    assert skipped[0]["params"] == {"cells": 5, "width": 3}


RECORDS_LINES = {
    "ca": (
        "  registres   1 (1 nou, 0 actualitzats, 0 sense canvis) d'1 fila",
        "  registres   1 (0 nous, 0 actualitzats, 1 sense canvis) d'1 fila",
        "  registres   2 (1 nou, 0 actualitzats, 1 sense canvis) de 2 files",
    ),
    "es": (
        "  registros   1 (1 nuevo, 0 actualizados, 0 sin cambios) de 1 fila",
        "  registros   1 (0 nuevos, 0 actualizados, 1 sin cambios) de 1 fila",
        "  registros   2 (1 nuevo, 0 actualizados, 1 sin cambios) de 2 filas",
    ),
    "en": (
        "  records   1 (1 created, 0 updated, 0 unchanged) from 1 row",
        "  records   1 (0 created, 0 updated, 1 unchanged) from 1 row",
        "  records   2 (1 created, 0 updated, 1 unchanged) from 2 rows",
    ),
}


@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_one_record_from_one_row_is_said_in_the_singular(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, lang: str
) -> None:
    """A real CSV of one row imported, imported again, then grown to two rows."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    path = tmp_path / "fons.csv"
    archive = str(tmp_path / "a")
    printed = []
    for rows in ("r1,Carta del batlle,1912\n",) * 2 + (
        "r1,Carta del batlle,1912\nr2,Plànol,1950\n",
    ):
        path.write_text("Identifier,Title,Date\n" + rows, encoding="utf-8")
        assert main(["import", "csv", str(path), "--archive", archive]) == 0
        printed.append(capsys.readouterr().out.splitlines()[2])
    assert tuple(printed) == RECORDS_LINES[lang]


READ_WORDS = {
    "ca": ("de 3.028 registres llegits", "de 2 fitxers", "d'1 línia"),
    "es": ("de 3028 registros leídos", "de 2 archivos", "de 1 línea"),
    "en": ("from 3,028 records read", "from 2 files", "from 1 line"),
}


@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_the_summary_names_what_was_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, lang: str
) -> None:
    """An EAD set counts the components it read (3,028 in the ANF set's 17 finding aids, 3,096
    records with the authorities their names made), a folder its files, a JSONL file its
    lines: never "lines" for what has none."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "a.txt").write_text("Carta del batlle, 1912.", encoding="utf-8")
    (folder / "b.md").write_text("# Plànol\n\nPlànol del pantà, 1950.", encoding="utf-8")
    hoards = _slice(shared_data("igch", "hoards.jsonl.gz"), tmp_path / "h" / "h.jsonl.gz", 1)
    said = []
    for kind, path in (("ead", shared_data("ead", "anf")), ("folder", folder), ("igch", hoards)):
        assert main(["import", kind, str(path), "--archive", str(tmp_path / kind)]) == 0
        said.append(capsys.readouterr().out.splitlines()[2])
    for line, words in zip(said, READ_WORDS[lang], strict=True):
        assert line.endswith(f") {words}"), line


COUNT_LINES = {
    "ca": {
        0: ("  multimèdia  0 adjuntats, 2 no trobats",),
        1: ("  suprimits   1 (retirat a l'origen)", "  multimèdia  1 adjuntat, 1 no trobat"),
        2: ("  suprimits   2 (retirats a l'origen)", "  multimèdia  2 adjuntats, 0 no trobats"),
    },
    "es": {
        0: ("  multimedia  0 adjuntos, 2 no encontrados",),
        1: ("  eliminados  1 (retirado en el origen)", "  multimedia  1 adjunto, 1 no encontrado"),
        2: (
            "  eliminados  2 (retirados en el origen)",
            "  multimedia  2 adjuntos, 0 no encontrados",
        ),
    },
    "en": {
        0: ("  media     0 attached, 2 not found",),
        1: ("  deleted   1 (withdrawn at the source)", "  media     1 attached, 1 not found"),
        2: ("  deleted   2 (withdrawn at the source)", "  media     2 attached, 0 not found"),
    },
}
HEADS = {"suprimits", "eliminados", "deleted", "multimèdia", "multimedia", "media"}


@pytest.mark.parametrize("count", [0, 1, 2])
@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_withdrawn_and_media_counts_agree_with_their_number(
    monkeypatch: pytest.MonkeyPatch, lang: str, count: int
) -> None:
    """``count`` records withdrawn (no line for none), ``count`` files attached and the other
    ``2 - count`` not found."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    summary = ImportSummary(kind="oai", path="https://example.org/oai", deleted=count)
    summary.media, summary.media_missing = count, 2 - count
    lines = summary_lines(summary, "a")
    assert [line for line in lines if line.split()[0] in HEADS] == list(COUNT_LINES[lang][count])


NAMED_LINES = {
    "ca": (
        "  esmentats   1 d'ells, d'una persona, un lloc o una matèria que els registres esmenten",
        "  esmentats   68 d'ells, de les persones, llocs i matèries que els registres esmenten",
    ),
    "es": (
        "  mencionados 1 de ellos, de una persona, un lugar o una materia que los registros "
        "mencionan",
        "  mencionados 68 de ellos, de las personas, lugares y materias que los registros "
        "mencionan",
    ),
    "en": (
        "  named     1 of them for a person, place or subject the records name",
        "  named     68 of them for the persons, places and subjects the records name",
    ),
}


@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_the_records_made_for_names_are_said_apart(
    monkeypatch: pytest.MonkeyPatch, lang: str
) -> None:
    """3,096 records from 3,028 read: the line after says what the 68 others are (none when
    there are none)."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    for count, said in zip((1, 68), NAMED_LINES[lang], strict=True):
        summary = ImportSummary(kind="ead", path="fons", created=3028 + count, named=count)
        assert summary_lines(summary, "a")[3] == said
    plain = summary_lines(ImportSummary(kind="ead", path="fons", created=3), "a")
    assert not any(line in plain for line in NAMED_LINES[lang])
    assert plain[3].split()[0] in {"enllaços", "enlaces", "links"}


LINKED_LINES = {
    "ca": "  multimèdia  33 objectes digitals enllaçats per la seva adreça (no se'n baixa res)",
    "es": "  multimedia  33 objetos digitales enlazados por su dirección (no se descarga nada)",
    "en": "  media     33 digital objects linked by their addresses (nothing downloaded)",
}


@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_digital_objects_linked_are_not_said_to_be_attached(
    monkeypatch: pytest.MonkeyPatch, lang: str
) -> None:
    """An EAD ``dao`` is recorded by its address: the summary says it was linked, not
    attached (no line on attached files when there are none)."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    summary = ImportSummary(kind="ead", path="fons", created=3, media_linked=33)
    lines = [line for line in summary_lines(summary, "a") if line.split()[0] in HEADS]
    assert lines == [LINKED_LINES[lang]]


JSONL_SKIPS = {
    "ca": (
        "    wills.jsonl.gz:2: JSON no vàlid: Expecting value (columna 1)",
        "    wills.jsonl.gz:4: no hi ha ni «page_texts» ni «text»",
        "    wills.jsonl.gz:5: «testator» ha de ser una cadena, no pas int",
    ),
    "es": (
        "    wills.jsonl.gz:2: JSON no válido: Expecting value (columna 1)",
        "    wills.jsonl.gz:4: no hay ni «page_texts» ni «text»",
        "    wills.jsonl.gz:5: «testator» debe ser una cadena, no int",
    ),
}


@pytest.mark.parametrize("lang", ["ca", "es"])
def test_a_json_lines_import_says_its_skips_in_the_language(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, lang: str
) -> None:
    """Real Poilus wills with a line that is not JSON, a will with no text and one whose
    testator is a number spliced in; ``--json`` keeps the English reasons."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    good = _slice(shared_data("poilus", "wills.jsonl.gz"), tmp_path / "w.jsonl.gz", 3)
    lines = gzip.decompress(good.read_bytes()).splitlines(keepends=True)
    wrong = json.loads(lines[2])
    wrong["testator"] = 1917
    path = tmp_path / "poilus" / "wills.jsonl.gz"
    path.parent.mkdir()
    spliced = lines[0] + b"not json\n" + lines[1] + b'{"id": 5}\n' + json.dumps(wrong).encode()
    path.write_bytes(gzip.compress(spliced))

    assert main(["import", "poilus", str(path), "--archive", str(tmp_path / "a")]) == 0

    printed = capsys.readouterr().out.splitlines()
    assert [line for line in printed if line.startswith("    wills")] == list(JSONL_SKIPS[lang])
    assert main(["import", "poilus", str(path), "--archive", str(tmp_path / "a"), "--json"]) == 0
    skipped = json.loads(capsys.readouterr().out)["skipped"]
    assert [s["reason"] for s in skipped] == [
        "bad JSON: Expecting value (column 1)",
        "no 'page_texts' and no 'text'",
        "'testator' must be a string, not int",
    ]
    assert skipped[2]["template"] == "'{key}' must be {expected}, not {type}"


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        ("ca", "error: --preview mostra com s'importaria una taula (KIND csv)"),
        ("es", "error: --preview muestra cómo se importaría una tabla (KIND csv)"),
        ("en", "error: --preview shows how a table (KIND csv) would import"),
    ],
)
def test_a_preview_of_what_is_not_a_table_is_refused_in_the_language(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    lang: str,
    said: str,
) -> None:
    monkeypatch.setenv("ARXIU_LANG", lang)
    ead = tmp_path / "fons.xml"
    ead.write_text("<ead/>", encoding="utf-8")
    folder = tmp_path / "archive"
    assert main(["import", "ead", str(ead), "--preview", "--archive", str(folder)]) == 2
    assert capsys.readouterr() == ("", said + "\n")
    assert not folder.exists()  # nothing was imported, no archive made


IMPORT_BAR = {"ca": "importació csv", "es": "importación csv", "en": "import csv"}


@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_the_progress_bar_is_in_the_language(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, lang: str
) -> None:
    """stderr is not a terminal here: the bar prints a line every 10%, its label in the
    language and the kind as typed."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    path = tmp_path / "fons.csv"
    path.write_text("Identifier,Title\nr1,Carta del batlle\nr2,Plànol\n", encoding="utf-8")
    assert main(["import", "csv", str(path), "--archive", str(tmp_path / "a")]) == 0
    bar = IMPORT_BAR[lang] + " [" + "#" * 30 + "] 2/2 100%"
    assert capsys.readouterr().err.splitlines()[-1] == bar


SECTION_LINES = {
    "ca": "  seccions    Persones, famílies i entitats [agent1] 2, atom [csv1] 3, "
    "Llocs (punts d'accés) [place1] 2, Matèries [subject1] 2",
    "es": "  secciones   Personas, familias y entidades [agent1] 2, atom [csv1] 3, "
    "Lugares (puntos de acceso) [place1] 2, Materias [subject1] 2",
    "en": "  sections  Persons, families and corporate bodies [agent1] 2, atom [csv1] 3, "
    "Places (access points) [place1] 2, Subjects [subject1] 2",
}


@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_the_sections_are_named_in_the_language_with_their_tipo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, lang: str
) -> None:
    """The sections line names each section as ``archive info`` does, not by its tipo alone
    (``agent1 2, csv1 3``), and keeps the tipo ``--section`` takes."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    table = tmp_path / "atom.csv"
    table.write_text(
        "legacyId,parentId,identifier,title,eventActors,subjectAccessPoints,placeAccessPoints\n"
        'F1,,ES-1,Fons Puig,"Puig, Josep|Família Puig",Arquitectura|Urbanisme,Vic\n'
        "S1,F1,ES-1.1,Cartes,,,Girona\n"
        "I1,S1,ES-1.1.1,Carta,,,\n",
        encoding="utf-8",
    )

    assert main(["import", "csv", str(table), "--archive", str(tmp_path / "a")]) == 0

    lines = capsys.readouterr().out.splitlines()
    assert SECTION_LINES[lang] in lines
