"""``arxiu search`` lists records, each once, grouped by section; ``--chunks`` the passages."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from app.cli import main
from app.commands.search_cmd import format_record
from tests.commands.test_index_progress import BAR

QUERIES = [
    ("Quines entrevistes parlen de les famílies que van haver de marxar pel pantà?", "lg-cat"),
    ("la presa i el poble negat", "lg-cat"),
    ("¿Qué entrevistas hablan de las familias que tuvieron que irse por el embalse?", "lg-spa"),
    ("la escuela del pueblo", "lg-spa"),
    ("Which interviews talk about families who left when the valley flooded?", "lg-eng"),
    ("Roman coins of Emporion", "lg-eng"),
]
HEAD = re.compile(r"^\s*\d+\. (\S+/\d+)  ")


@pytest.fixture(scope="module")
def demo(demo_archive_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the demo archive with its hashing index built."""
    folder = tmp_path_factory.mktemp("search") / "demo"
    shutil.copytree(demo_archive_dir, folder)
    assert main(["index", "--archive", str(folder), "--model", "hashing"]) == 0
    return folder


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["search", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(("query", "lang"), QUERIES)
def test_no_record_is_listed_twice(
    demo: Path, capsys: pytest.CaptureFixture[str], query: str, lang: str
) -> None:
    base = [query, "--archive", str(demo), "--model", "hashing", "--k", "30", "--lang", lang]
    code, out, _ = _run(capsys, *base, "--json")
    hits = json.loads(out)
    keys = [f"{h['section_tipo']}/{h['section_id']}" for h in hits]
    assert code == 0 and len(hits) >= 5 and len(keys) == len(set(keys))
    code, out, _ = _run(capsys, *base)
    listed = [m.group(1) for line in out.splitlines() if (m := HEAD.match(line))]
    assert code == 0 and listed and len(listed) == len(set(listed))
    assert sorted(listed) == sorted(keys)
    assert out.splitlines()[0] == f'{len(keys)} records for "{query}"'


def test_records_are_grouped_under_their_section_in_the_label_language(
    demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["pantà", "--archive", str(demo), "--model", "hashing", "--k", "20"]
    _, out, _ = _run(capsys, *args, "--lang", "lg-cat")
    sections = [line for line in out.splitlines() if re.match(r"^\S.* \(\d+\)$", line)]
    assert "Història oral" in " ".join(sections)
    assert len(sections) == len(set(sections))  # each section once
    _, english, _ = _run(capsys, *args, "--lang", "lg-eng")
    assert "Oral history (" in english and "Història oral (" not in english
    assert "[pantà]" in out  # the query's word marked in a passage
    # a record's languages tagged as the app's result rows tag them
    assert re.search(r" · (CA|ES|EN)(/(CA|ES|EN))* · ", out)
    assert not re.search(r"\b(cat|spa|eng)\b", out)


def test_the_chunks_view_lists_passages_several_per_record(
    demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    query = "famílies que van haver de marxar pel pantà"
    code, out, _ = _run(
        capsys, query, "--archive", str(demo), "--model", "hashing", "--k", "40", "--chunks",
        "--json",
    )  # fmt: skip
    keys = [f"{h['section_tipo']}/{h['section_id']}" for h in json.loads(out)]
    assert code == 0 and len(keys) > len(set(keys))  # what the records view folds together


def test_sorting_and_filtering_by_date_and_language(
    demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["pantà expropiació", "--archive", str(demo), "--model", "hashing", "--json"]
    _, out, _ = _run(capsys, *base, "--k", "30", "--section", "oh1", "--sort", "oldest")
    dates = [h["date"] for h in json.loads(out)]
    assert dates and dates == sorted(dates)
    _, out, _ = _run(capsys, *base, "--k", "30", "--from", "1990", "--to", "1999")
    years = [int(h["date"][:4]) for h in json.loads(out)]
    assert years and all(1990 <= y <= 1999 for y in years)
    _, out, _ = _run(capsys, *base, "--k", "30", "--lang-filter", "lg-spa")
    assert all("lg-spa" in h["record_langs"] for h in json.loads(out))
    code, _, err = _run(capsys, *base, "--from", "2000", "--to", "1990")
    assert code == 2 and "index.bad_date_range" in err


SAID = {
    "ca": ("indexant", "(coincidència exacta)"),
    "es": ("indexando", "(coincidencia exacta)"),
    "en": ("indexing", "(exact)"),
}
"""``--wait``'s progress label and the mark of a title that is the query, by language."""


@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_the_wait_bar_and_the_exact_mark_are_in_the_language(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    lang: str,
) -> None:
    """A CSV of two rows imported, then searched for one title with ``--wait``: the bar's
    lines on stderr (not a terminal: one every 10%) and the exact title's mark, in the
    language; ``--json`` says nothing of either."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    path = tmp_path / "fons.csv"
    path.write_text(
        "Identifier,Title,Date\nr1,Carta del batlle,1912\nr2,Plànol del pantà,1950\n",
        encoding="utf-8",
    )
    archive = str(tmp_path / "a")
    assert main(["import", "csv", str(path), "--archive", archive]) == 0
    capsys.readouterr()
    args = ["Carta del batlle", "--archive", archive, "--model", "hashing"]
    code, out, err = _run(capsys, *args, "--wait")
    bar, exact = SAID[lang]
    labels = {m["label"] for line in err.splitlines() if (m := BAR.match(line))}
    assert code == 0 and labels == {bar}
    assert "  1. csv1/1  Carta del batlle  " + exact in out.splitlines()
    code, out, _ = _run(capsys, *args, "--json")
    assert code == 0 and exact not in out and json.loads(out)[0]["exact"] == "Carta del batlle"


WITHIN_SAID = {"ca": "dins de ES-1 · Fons Puig", "es": "dentro de ES-1 · Fons Puig",
               "en": "in ES-1 · Fons Puig"}  # fmt: skip


@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_a_unit_found_says_the_fonds_it_is_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, lang: str
) -> None:
    """An AtoM catalogue's item and series found by a word they share: each says the fonds
    it is in (its top record), in the language, and the item the series it is in; the fonds
    says nothing of the kind, and ``--json`` gives the same as ``within`` and ``path``."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    archive = _atom_catalogue(tmp_path, capsys)
    args = ["Puig", "--archive", archive, "--model", "hashing", "--mode", "lexical"]

    code, out, _ = _run(capsys, *args)

    lines = out.splitlines()
    heads = {m.group(1): n for n, line in enumerate(lines) if (m := HEAD.match(line))}
    assert code == 0 and set(heads) == {"csv1/1", "csv1/2", "csv1/3"}
    assert lines[heads["csv1/2"] + 1].strip().startswith(WITHIN_SAID[lang] + " · ")
    series = " › ES-1.1 · Cartes de Puig · "  # the item is in the series, in the fonds
    assert lines[heads["csv1/3"] + 1].strip().startswith(WITHIN_SAID[lang] + series)
    assert WITHIN_SAID[lang] not in lines[heads["csv1/1"] + 1]
    code, out, _ = _run(capsys, *args, "--json")
    found = json.loads(out)
    within = {f"{h['section_tipo']}/{h['section_id']}": h["within"] for h in found}
    assert within == {"csv1/1": None, "csv1/2": "ES-1 · Fons Puig", "csv1/3": "ES-1 · Fons Puig"}
    path = {f"{h['section_tipo']}/{h['section_id']}": h["path"] for h in found}
    assert path == {"csv1/1": None, "csv1/2": None, "csv1/3": "ES-1.1 · Cartes de Puig"}


def test_within_searches_a_fonds_and_what_it_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--within`` keeps the records of one fonds (to any depth); the other fonds's records
    that match are left out; a record that is not there is a coded error."""
    archive = _atom_catalogue(
        tmp_path, capsys, "F2,,ES-2,Fons Mas\nS2,F2,ES-2.1,Cartes de Puig a Mas\n"
    )
    args = ["Puig", "--archive", archive, "--model", "hashing", "--json"]

    everywhere = {h["section_id"] for h in json.loads(_run(capsys, *args)[1])}
    in_puig = {h["section_id"] for h in json.loads(_run(capsys, *args, "--within", "csv1/1")[1])}
    in_series = {h["section_id"] for h in json.loads(_run(capsys, *args, "--within", "csv1/2")[1])}
    in_mas = {h["section_id"] for h in json.loads(_run(capsys, *args, "--within", "csv1/4")[1])}
    code, _, err = _run(capsys, *args, "--within", "csv1/99")

    assert everywhere == {1, 2, 3, 5}
    assert in_puig == {1, 2, 3} and in_series == {2, 3} and in_mas == {5}
    assert code != 0 and "archive.record_not_found" in err


def _atom_catalogue(tmp_path: Path, capsys: pytest.CaptureFixture[str], more: str = "") -> str:
    """An archive of an AtoM catalogue imported by the CLI: fonds ES-1 with a series and an
    item (``csv1/1-3``), then the rows ``more``."""
    path = tmp_path / "atom.csv"
    path.write_text(
        "legacyId,parentId,identifier,title\nF1,,ES-1,Fons Puig\n"
        "S1,F1,ES-1.1,Cartes de Puig\nI1,S1,ES-1.1.1,Carta de Puig a Gaudí\n" + more,
        encoding="utf-8",
    )
    archive = str(tmp_path / "a")
    assert main(["import", "csv", str(path), "--archive", archive]) == 0
    capsys.readouterr()
    return archive


def test_a_record_found_through_a_heading_names_it_under_its_details() -> None:
    """``arxiu search`` prints the field and the heading a record was found through on a line
    of its own, the query's words in brackets, before the passage."""
    from app.core.archive import RecordKey
    from app.core.index.hit_passages import HitPassage
    from app.core.index.record_hits import RecordHit, ViaHeading

    via = ViaHeading(RecordKey("subject1", 2), "Materias", "Chemical warfare", ((0, 8),))
    passage = HitPassage("Appendix: Paris in wartime.", "ohms18", "lg-eng", 0.2, None, None, ())
    hit = RecordHit(RecordKey("ohms1", 6), "Interview with Charles P. Smyth", "Entrevistas",
                    0.25, 4, passages=(passage,), via=via)  # fmt: skip
    lines = format_record(hit).splitlines()
    assert lines[2:] == ["     Materias: [Chemical] warfare", "     Appendix: Paris in wartime."]
