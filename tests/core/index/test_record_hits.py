"""Results by record: each record once, exact titles first, a passage worth reading with the
query's words marked; on real nomisma concepts, the Vitet finding aid and the demo archive."""

from __future__ import annotations

import gzip
import json
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from lxml import etree

from app.core.archive import Archive, RecordKey, open_archive
from app.core.archive.hierarchy import breadcrumbs, child_keys
from app.core.archive.importers import run_import
from app.core.archive.importers.nomisma import concept_key
from app.core.archive.postgres.transfer import copy_archive
from app.core.index import ArchiveIndex, HashingEmbedder, open_index
from app.core.index.hit_passages import HitPassage, choose, is_identifiers, marks, query_words
from app.core.index.hits import SearchFilter, SearchHit, SearchMode, Via
from app.core.index.record_hits import RecordHit, search_records
from tests.conftest import ENGINES, shared_data
from tests.postgres_server import PgServer, fresh_database

NEIGHBOURS = ("barcino", "barcelona", "barkeno", "madinat_barshilunah", "barce", "arssama_xanthus")
"""The nomisma concepts whose labels or definitions say "Barcino" or look like it."""
OTHERS = 150
"""Other concepts (the first lines of the file) around them."""


@contextmanager
def new_location(engine: str, folder: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """Where a new archive goes on ``engine``: ``folder``, or a database of its own on the tests'
    server (for a module-scoped fixture: ``pg_database`` is a test's), dropped afterwards."""
    if engine == "sqlite":
        yield str(folder)
        return
    server: PgServer = request.getfixturevalue("pg_server")
    with fresh_database(server, f"arxiu_r{secrets.token_hex(5)}") as url:
        yield url


@pytest.fixture(scope="module", params=ENGINES)
def nomisma(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[tuple[Archive, ArchiveIndex]]:
    """The real Barcino neighbourhood of nomisma and 150 other concepts, indexed (on each
    engine)."""
    source = shared_data("nomisma", "concepts.jsonl.gz")
    folder = tmp_path_factory.mktemp("nomisma")
    lines = []
    with gzip.open(source, "rt", encoding="utf-8") as rows:
        for number, line in enumerate(rows):
            if number < OTHERS or json.loads(line)["id"] in NEIGHBOURS:
                lines.append(line)
    with gzip.open(folder / "concepts.jsonl.gz", "wt", encoding="utf-8") as out:
        out.writelines(lines)
    with new_location(request.param, folder / "archive", request) as location:
        archive = open_archive(location, create=True)
        run_import(archive, "nomisma", folder / "concepts.jsonl.gz")
        index = open_index(archive, HashingEmbedder())
        index.index_now()
        yield archive, index
        index.close()
        archive.close()


def _keys(hits: list[RecordHit]) -> list[str]:
    return [str(h.key) for h in hits]


@pytest.mark.parametrize("mode", ["hybrid", "lexical"])
def test_barcino_lists_each_record_once_the_mint_barcino_first(
    nomisma: tuple[Archive, ArchiveIndex], mode: SearchMode
) -> None:
    archive, index = nomisma
    barcino, barcelona = concept_key(archive, "barcino"), concept_key(archive, "barcelona")
    assert barcino is not None and barcelona is not None
    hits = search_records(index, archive, "Barcino", k=30, mode=mode, lang="lg-cat")
    assert len(hits) == len(set(_keys(hits))), _keys(hits)
    assert hits[0].key == barcino
    # In Catalan the mint's title is "Barcelona"; the name that matched is shown beside it.
    assert hits[0].title == "Barcelona" and hits[0].exact_name == "Barcino"
    assert not any(h.exact for h in hits[1:])
    assert barcelona in {h.key for h in hits}  # the medieval mint, once, further down
    passage = hits[0].passage
    assert passage is not None and "Colonia Barcino" in passage.text  # its definition
    marked = [passage.text[a:b] for a, b in passage.marks]
    assert marked == ["Barcino"]
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))


def test_an_exact_title_the_ranking_missed_is_still_first(
    nomisma: tuple[Archive, ArchiveIndex],
) -> None:
    """Only the first record is asked for: the exact name comes from the label lookup."""
    archive, index = nomisma
    hits = search_records(index, archive, "barkeno", k=1, mode="lexical")
    assert [h.key for h in hits] == [concept_key(archive, "barkeno")]
    assert hits[0].exact_name == "Barkeno" and hits[0].title == "Barkeno"


def test_the_filter_holds_for_exact_names_too(nomisma: tuple[Archive, ArchiveIndex]) -> None:
    archive, index = nomisma
    elsewhere = SearchFilter(sections=("no_such_section",))
    assert search_records(index, archive, "Barcino", filter=elsewhere) == []


@pytest.fixture(params=ENGINES)
def vitet(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[Archive, ArchiveIndex]]:
    """The ANF's Vitet family papers (572AP), imported and indexed (on each engine)."""
    with new_location(request.param, tmp_path / "archive", request) as location:
        archive = open_archive(location, create=True)
        run_import(archive, "ead", shared_data("ead", "anf", "FRAN_IR_003500.xml"))
        index = open_index(archive, HashingEmbedder())
        index.index_now()
        yield archive, index
        index.close()
        archive.close()


def test_an_archival_unit_shows_its_text_not_its_identifiers(
    vitet: tuple[Archive, ArchiveIndex],
) -> None:
    """Words of the units' call-number chunks ("cote de consultation") make those chunks the
    best of many units; none is shown by them."""
    archive, index = vitet
    query = "cote de consultation des lettres de Ludovic Vitet"
    best = index.search(query, k=30, group_by_record=True)
    assert any(is_identifiers(h.snippet, h.lang) for h in best)  # what the rows used to show
    hits = search_records(index, archive, query, k=30, lang="lg-cat")
    assert hits and len(hits) == len(set(_keys(hits)))
    for hit in hits:
        for passage in hit.passages:
            assert not is_identifiers(passage.text, passage.lang), passage.text


def test_a_unit_is_not_shown_by_the_name_of_its_fonds(vitet: tuple[Archive, ArchiveIndex]) -> None:
    """The lead's query: a unit titled with Vitet's name shows its title, the words marked,
    not "Fonds Vitet (XIXe-XXe siècles)" again."""
    archive, index = vitet
    hits = search_records(
        index, archive, "cartes de Ludovic Vitet a la seva família", k=30, lang="lg-cat"
    )
    assert hits and len(hits) == len(set(_keys(hits)))
    units = [h for h in hits if "Vitet" in h.title and h.key.section_tipo == "ead1"]
    assert units
    for hit in units:
        assert "Vitet" in [hit.title[a:b] for a, b in hit.title_marks]
        assert all("Fonds Vitet" not in p.text for p in hit.passages), hit.passages


def test_a_call_number_query_keeps_the_identifier_passage(
    vitet: tuple[Archive, ArchiveIndex],
) -> None:
    archive, index = vitet
    code = "572AP/14"
    hits = search_records(index, archive, code, k=5, mode="lexical")
    assert hits[0].exact_name == code
    assert hits[0].passage is not None and code in hits[0].passage.text


def test_a_unit_says_the_fonds_it_is_in_and_the_fonds_says_nothing(
    vitet: tuple[Archive, ArchiveIndex],
) -> None:
    """Every unit of the Vitet papers found is said to be in the fonds (its top record, read
    from the file: the archdesc); the fonds itself and the persons, places and subjects it
    names are in nothing."""
    archive, index = vitet
    source = etree.parse(str(shared_data("ead", "anf", "FRAN_IR_003500.xml")))
    fonds = "572AP/1-572AP/122 · " + " ".join(source.findtext("archdesc/did/unittitle").split())

    hits = search_records(index, archive, "Ludovic Vitet", k=50, mode="lexical", lang="lg-cat")

    units = [h for h in hits if h.key.section_tipo == "ead1"]
    assert len(units) > 10
    top = [h for h in units if "Fonds Vitet" in h.title and h.within is None]
    assert len(top) == 1
    assert {h.within for h in units if h is not top[0]} == {fonds}
    assert all(h.within is None for h in hits if h.key.section_tipo != "ead1")
    assert all(h.to_dict()["within"] == h.within for h in hits)


def test_a_unit_below_a_series_says_the_series_too(vitet: tuple[Archive, ArchiveIndex]) -> None:
    """A file two levels down reads "in Fonds Vitet › … › 572AP/2 · Correspondance active":
    its top, then the record it is directly part of (its trail read with ``breadcrumbs``),
    "…" where levels between are left out; a unit directly under the fonds adds nothing."""
    archive, index = vitet
    hits = search_records(index, archive, "correspondance", k=50, mode="lexical", lang="lg-cat")

    units = [h for h in hits if h.key.section_tipo == "ead1" and h.within is not None]
    assert len(units) > 10
    depths = set()
    for hit in units:
        trail = breadcrumbs(archive, hit.key, "lg-cat")
        depths.add(len(trail))
        if len(trail) == 1:
            assert hit.path is None and hit.where == hit.within
            continue
        parent = archive.record_label(trail[-1].key, "lg-cat")
        expected = parent if len(trail) == 2 else f"… › {parent}"
        assert hit.path == expected and hit.where == f"{hit.within} › {expected}"
        assert hit.to_dict()["path"] == expected
    assert 2 in depths and max(depths) > 2
    fonds = breadcrumbs(archive, units[0].key)[0].key
    first = child_keys(archive, fonds)[0]
    title = archive.record_label(first, "lg-cat").split(" · ")[-1]
    [direct] = search_records(
        index, archive, title, mode="lexical", filter=SearchFilter(records=(first,))
    )
    assert direct.within and direct.path is None and direct.where == direct.within


@pytest.fixture(scope="module", params=ENGINES)
def demo(
    tmp_path_factory: pytest.TempPathFactory,
    demo_archive_dir: Path,
    request: pytest.FixtureRequest,
) -> Iterator[ArchiveIndex]:
    """The demo archive indexed on each engine (copied into the server for PostgreSQL)."""
    folder = tmp_path_factory.mktemp("demo") / "demo"
    shutil.copytree(demo_archive_dir, folder)
    with new_location(request.param, folder, request) as location:
        if location != str(folder):
            copy_archive(str(folder), location)
        archive = open_archive(location)
        index = open_index(archive, HashingEmbedder())
        index.index_now()
        yield index
        index.close()
        archive.close()


@pytest.mark.parametrize(
    ("query", "lang"),
    [
        ("Quines entrevistes parlen de les famílies que van haver de marxar pel pantà?", "lg-cat"),
        ("familias que tuvieron que irse por el embalse", "lg-spa"),
        ("families who had to leave when the reservoir flooded the valley", "lg-eng"),
        ("Sant Romà", "lg-cat"),
    ],
)
def test_demo_searches_list_records_once_with_their_facts(
    demo: ArchiveIndex, query: str, lang: str
) -> None:
    archive = demo.archive
    hits = search_records(demo, archive, query, k=40, lang=lang)
    keys = _keys(hits)
    assert len(keys) == len(set(keys)) and len(hits) >= 10
    for hit in hits:
        section = archive.section(hit.key.section_tipo)
        assert hit.section_label == section.label(lang)
        assert hit.title == archive.label_of(archive.get_record(hit.key), lang)
    interviews = [h for h in hits if h.key.section_tipo == "oh1"]
    assert interviews and all(h.date and h.year for h in interviews)  # oh29, the interview date
    assert all(h.langs for h in interviews)


def test_query_words_are_marked_in_their_inflections() -> None:
    question = "Quines entrevistes parlen de les famílies que van haver de marxar?"
    words = query_words(question, "lg-cat")
    assert "entrevistes" not in words and "van" not in words  # the frame; function words
    text = "La família Vilaseca va marxar del mas; les families van marxar-ne."
    assert [text[a:b] for a, b in marks(text, words)] == [
        "família",
        "marxar",
        "families",
        "marxar",
    ]


def test_real_text_is_chosen_over_identifiers_and_titles() -> None:
    coded = HitPassage(
        "572AP/14 · cote-de-consultation: 572AP/14 · FRAN_IR_003500 · "
        "FRAN_IR_003500#d_1_4_1 · FRAN_IR_003500.xml",
        "ead2",
        "lg-fra",
        3.0,
    )
    title = HitPassage("Lettres de Ludovic Vitet", "ead1", "lg-fra", 2.0)
    text = HitPassage(
        "Lettres adressées par Ludovic Vitet à sa famille, 1830-1870.", "ead6", "lg-fra", 1.0
    )
    titles = ["572AP/14 · Lettres de Ludovic Vitet", "Lettres de Ludovic Vitet"]
    assert is_identifiers(coded.text, coded.lang) and not is_identifiers(text.text, text.lang)
    words = query_words("Ludovic Vitet")
    assert choose([coded, title, text], titles, "Ludovic Vitet", words) == [text]
    coded_marked = HitPassage(coded.text, coded.field_tipo, coded.lang, 3.0, marks=((0, 8),))
    assert choose([text, coded_marked], titles, "572AP/14", ("572ap", "14"))[0] is coded_marked


class _Through:
    """A searcher that finds one record through a heading (as
    :mod:`app.core.index.heading_links` reports it), whatever the query."""

    def __init__(self, key: RecordKey, via: Via) -> None:
        self.key, self.via = key, via

    def search(self, query: str, **_: object) -> list[SearchHit]:
        return [SearchHit(self.key, "", "", "csv2", "lg-cat", 0.5, via=self.via)]


def test_a_row_does_not_name_again_the_series_it_says_it_is_in(tmp_path: Path) -> None:
    """An item found through its series ("part of": a title-only series brings its units) is
    shown in that series already (``path``), so its row does not name the series a second
    time; found through a record it is not in, it does."""
    table = tmp_path / "atom.csv"
    table.write_text(
        "legacyId,parentId,identifier,title\nF1,,ES-1,Fons Puig\n"
        "S1,F1,ES-1.1,Correspondència\nI1,S1,ES-1.1.1,Carta a Gaudí\n"
        "F2,,ES-2,Fons Gaudí\n",
        encoding="utf-8",
    )
    archive = open_archive(tmp_path / "a", create=True)
    [section] = [s for s in run_import(archive, "csv", table).sections if s.startswith("csv")]
    item, series, other = (RecordKey(section, n) for n in (3, 2, 4))
    parent = next(f.tipo for f in archive.fields(section) if f.target_section == section)

    [shown] = search_records(
        _Through(item, Via(series, "Correspondència", parent)), archive, "x", lang="lg-cat"
    )
    assert shown.path == "ES-1.1 · Correspondència" and shown.via is None

    [shown] = search_records(
        _Through(item, Via(other, "Fons Gaudí", parent)), archive, "x", lang="lg-cat"
    )
    assert shown.via is not None and shown.via.title == "ES-2 · Fons Gaudí"
    archive.close()
