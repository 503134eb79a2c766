"""The EAD importer on the three real sets (ANF, University of Washington, Caltech OAI-PMH).

Counts are checked against XPath counts made here with a plain lxml parse of the same files,
not against numbers copied from the importer's output.
"""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest
from lxml import etree

from app.core.archive import Archive, open_archive
from app.core.archive.importers import run_import
from app.core.archive.importers.access import closes_access
from app.core.archive.importers.authorities import AGENTS, PLACES, SUBJECTS
from app.core.archive.importers.base import ImportSummary, external_keys
from app.core.archive.importers.ead import iso_range
from app.core.archive.importers.ead_fields import (
    CONTAINER,
    DAO,
    DATES,
    FINDING_AID,
    FROM,
    LEVEL,
    ORDER,
    PART_OF,
    TITLE,
    TO,
    UNITID,
)
from app.core.archive.model import Record
from app.core.archive.records import locators
from app.core.errors import ImportFailed
from app.core.importing import import_dataset
from tests.conftest import shared_data
from tests.core.archive.importers.lookups import lexical_records
from tests.core.archive.xml_query import XPath

SETS = ("anf", "uw-labor-archives", "caltech-aspace-oai")
COMPONENTS = (
    "//*[local-name()='c' or (string-length(local-name())=3 and starts-with(local-name(),'c')"
    " and translate(substring(local-name(),2),'0123456789','')=''"
    " and number(substring(local-name(),2))>=1 and number(substring(local-name(),2))<=12)]"
)
"""Every EAD component element: ``c`` and ``c01`` … ``c12`` (namespaced or not)."""
UNITS = f"{COMPONENTS} | //*[local-name()='archdesc']"
KNOWN_SKIPS = {"import.date_unreadable"}
"""The only skips these real sets give: ``unitdate/@normal`` such as ``1989 October``."""

_PARSER = etree.XMLParser(load_dtd=False, no_network=True, resolve_entities=False)
elements = XPath().nodes


def xml_files(name: str) -> list[Path]:
    """The set's files."""
    return sorted(shared_data("ead", name).rglob("*.xml"))


def parse(path: Path) -> etree._Element:
    """The root of an XML file, parsed with no DTD and no network."""
    return etree.parse(str(path), _PARSER).getroot()


def xpath_units(name: str) -> list[etree._Element]:
    """Every archdesc and component of the set, by XPath."""
    return [u for f in xml_files(name) for u in elements(parse(f), UNITS)]


ACCESS_POINTS = (
    "//*[local-name()='controlaccess']//*[local-name()='persname' or local-name()='famname'"
    " or local-name()='corpname' or local-name()='geogname' or local-name()='subject'"
    " or local-name()='genreform' or local-name()='function' or local-name()='occupation']"
    " | //*[local-name()='origination']/*[local-name()='persname' or local-name()='famname'"
    " or local-name()='corpname']"
)
"""Every name, place and subject a finding aid links to (``controlaccess``, ``origination``)."""
SECTION_OF = {"persname": AGENTS, "famname": AGENTS, "corpname": AGENTS, "geogname": PLACES}
"""The authority section of each kind of access point (every other kind: ``subject1``)."""


def authority_keys(root: etree._Element, agency: str) -> dict[str, str]:
    """The distinct authorities ``root`` mentions, by XPath, each with its section: one per
    ``@authfilenumber`` (a bare number qualified by ``agency``), else one per kind of name
    (agents, places, each subject kind) and case-folded name."""
    keys: dict[str, str] = {}
    for node in elements(root, ACCESS_POINTS):
        name = " ".join("".join(node.itertext()).split()).casefold()
        number = (node.get("authfilenumber") or "").strip()
        kind = etree.QName(node).localname
        section = SECTION_OF.get(kind, SUBJECTS)
        group = {AGENTS: "agent", PLACES: "place"}.get(section, kind)
        if number:
            keys.setdefault(f"{agency}:{number}" if number.isdigit() else number, section)
        elif name:
            keys.setdefault(f"{group}:{name}", section)
    return keys


def xpath_authorities(name: str) -> dict[str, str]:
    """The distinct authorities a whole set mentions (:func:`authority_keys`)."""
    found: dict[str, str] = {}
    for file in xml_files(name):
        root = parse(file)
        eadid = elements(root, "//*[local-name()='eadid']")
        agency = eadid[0].get("mainagencycode", "") if eadid else ""
        for key, section in authority_keys(root, agency).items():
            found.setdefault(key, section)
    return found


@pytest.fixture(scope="module")
def imported_sets(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[str, tuple[Archive, ImportSummary]]]:
    """Each set imported (records and lexical index) into an archive of its own, once."""
    done: dict[str, tuple[Archive, ImportSummary]] = {}
    for name in SETS:
        archive = open_archive(tmp_path_factory.mktemp(name) / "archive", create=True)
        done[name] = (archive, import_dataset(archive, "ead", shared_data("ead", name)))
    yield done
    for archive, _ in done.values():
        archive.close()


@pytest.fixture
def imported(imported_sets: dict[str, tuple[Archive, ImportSummary]]) -> dict[str, Archive]:
    """Each set's archive."""
    return {name: archive for name, (archive, _) in imported_sets.items()}


@pytest.fixture
def summaries(
    imported_sets: dict[str, tuple[Archive, ImportSummary]],
) -> dict[str, ImportSummary]:
    """Each set's import summary."""
    return {name: summary for name, (_, summary) in imported_sets.items()}


def records_by_id(archive: Archive) -> dict[str, Record]:
    """Every imported description by its external id."""
    return {ext: archive.get_record(key) for ext, key in external_keys(archive, "ead").items()}


def first(record: Record, tipo: str) -> object:
    """The first value of a field."""
    items = record.items(tipo)
    return items[0]["value"] if items else None


@pytest.mark.parametrize("name", SETS)
def test_every_archdesc_and_component_becomes_one_record(
    imported: dict[str, Archive], summaries: dict[str, ImportSummary], name: str
) -> None:
    summary = summaries[name]
    units = xpath_units(name)
    archdescs = [u for u in units if etree.QName(u).localname == "archdesc"]

    stubs = len(xpath_authorities(name))
    assert summary.sections["ead1"] == len(units) and summary.created == len(units) + stubs
    assert len(archdescs) == len(xml_files(name))
    assert {s.code for s in summary.skipped} <= KNOWN_SKIPS
    records = records_by_id(imported[name])
    parts_of = sum(1 for r in records.values() if r.items(PART_OF))
    assert parts_of == len(units) - len(archdescs)  # every component names its parent


@pytest.mark.parametrize("name", SETS)
def test_levels_and_media_links_match_the_files(
    imported: dict[str, Archive], summaries: dict[str, ImportSummary], name: str
) -> None:
    expected_levels: Counter[str | None] = Counter()
    for unit in xpath_units(name):
        level = unit.get("level") or ""
        if level == "otherlevel" and unit.get("otherlevel"):
            level = unit.get("otherlevel") or ""
        expected_levels[level or None] += 1
    hrefs = 0
    for file in xml_files(name):
        hrefs += len(
            elements(
                parse(file),
                "//*[(local-name()='dao' or local-name()='daoloc') and @*[local-name()='href']]",
            )
        )
    records = records_by_id(imported[name]).values()

    assert Counter(first(r, LEVEL) for r in records) == expected_levels
    assert sum(len(r.items(DAO)) for r in records) == hrefs == summaries[name].media_linked


def test_the_authority_stubs_are_counted_as_created_per_section(
    imported: dict[str, Archive], summaries: dict[str, ImportSummary]
) -> None:
    summary, archive = summaries["anf"], imported["anf"]
    expected = Counter(xpath_authorities("anf").values())
    stubs = {tipo: summary.sections[tipo] for tipo in (AGENTS, PLACES, SUBJECTS)}

    assert stubs == {tipo: expected[tipo] for tipo in stubs}
    assert summary.created == summary.sections["ead1"] + expected.total()
    assert summary.named == expected.total() == summary.records - summary.read  # said apart
    assert stubs == {tipo: archive.count_records(tipo) for tipo in stubs}
    assert summary.records == summary.created == sum(summary.sections.values())


def test_a_known_component_has_its_parent_order_and_siblings(imported: dict[str, Archive]) -> None:
    records = records_by_id(imported["anf"])
    keys = external_keys(imported["anf"], "ead")
    letters = records["FRAN_IR_003500#d_1_2_1"]
    tree = parse(shared_data("ead", "anf", "FRAN_IR_003500.xml"))
    siblings = [c.get("id") for c in elements(tree, "//c[@id='d_1_2']/c")]

    assert first(letters, TITLE) == "Copie de 157 lettres de Ludovic Vitet. 1830-1872."
    assert len(letters.items(TITLE)) == 4 and first(letters, UNITID) == "Dossier 1"
    assert locators(letters.items(PART_OF)) == [keys["FRAN_IR_003500#d_1_2"]]
    assert first(letters, ORDER) == 1
    children = [
        ext
        for ext, r in records.items()
        if locators(r.items(PART_OF)) == [keys["FRAN_IR_003500#d_1_2"]]
    ]
    ordered = sorted(children, key=lambda ext: first(records[ext], ORDER))  # type: ignore[arg-type,return-value]
    assert [ext.partition("#")[2] for ext in ordered] == siblings
    chain = [letters]
    while chain[-1].items(PART_OF):
        chain.append(imported["anf"].get_record(locators(chain[-1].items(PART_OF))[0]))
    assert [first(r, TITLE) for r in chain][1:] == [
        "Correspondance active",
        "LUDOVIC VITET (1802-1873)",
        "Fonds Vitet",
    ]
    assert [i["value"] for i in chain[-1].items(FINDING_AID)] == [
        "Fonds Vitet (XIXe-XXe siècles)",
        "FRAN_IR_003500",
    ]
    assert not [r for r in chain[:-1] if r.items(FINDING_AID)]  # said once, by the fonds


def test_the_fonds_keeps_its_dates_as_written_and_as_a_range(imported: dict[str, Archive]) -> None:
    fonds = records_by_id(imported["anf"])["FRAN_IR_003500"]

    assert first(fonds, DATES) == "XIXe-XXe siècles"
    assert (first(fonds, FROM), first(fonds, TO)) == ("1801-01-01", "2000-12-31")
    assert first(fonds, LEVEL) == "fonds"


def test_the_vitet_family_is_one_agent_however_many_mentions(
    imported: dict[str, Archive],
) -> None:
    archive = imported["anf"]
    agents = external_keys(archive, "authority")
    mentions = 0
    for file in xml_files("anf"):
        for unit in elements(parse(file), UNITS):
            found = elements(
                unit, "(did/origination | controlaccess)//*[@authfilenumber='FRAN_NP_050218']"
            )
            mentions += bool(found)
    family = archive.get_record(agents["FRAN_NP_050218"])
    linking = {link.source for link in archive.links_to(family.key)}

    assert family.text("agent2") == "Vitet (famille)" and family.text("agent4") == "family"
    assert sum(1 for ext in agents if ext == "FRAN_NP_050218") == 1
    assert len(linking) == mentions >= 1


def test_uw_names_lose_marc_markers_and_titles_their_line_breaks(
    imported: dict[str, Archive],
) -> None:
    archive = imported["uw-labor-archives"]
    names = [r.text("agent2") or "" for r in archive.iter_records("agent1")]
    bulosan = records_by_id(archive)["BulosanCarlos0581.xml"]

    assert not [n for n in names if "$" in n]
    assert "Yoneda, Karl G., 1906-" in names
    terms = {r.text("subject2") or "" for r in archive.iter_records(SUBJECTS)}
    # CaughlanJohn0704.xml: Lawyers$zWashington (State)$zSeattle$vArchives
    assert "Lawyers -- Washington (State) -- Seattle -- Archives" in terms
    assert not [t for t in terms if "$" in t or t.startswith("--")]
    # CaughlanJohn0704.xml, a code letter left out:
    # Cannery workers$xLabor unions$zWashington (State)$Seattle
    assert "Cannery workers -- Labor unions -- Washington (State) -- Seattle" in terms
    assert first(bulosan, TITLE) == "Carlos Bulosan papers"
    assert first(bulosan, FINDING_AID) == "Guide to the Carlos Bulosan Papers"
    assert [i["value"] for i in bulosan.items("ead9")][:2] == ["4.99 cubic feet", "7 boxes"]
    assert (first(bulosan, FROM), first(bulosan, TO)) == ("1914", "1976")
    assert bulosan.items("ead2")[0]["lang"] == "lg-eng"


def test_a_container_with_no_number_is_no_container(imported: dict[str, Archive]) -> None:
    """UW's template left ``<container type="box-folder"><?xm-replace_text {…}?></container>``
    in its files: stored as "Box-folder" alone it said nothing (233 units)."""
    records = records_by_id(imported["uw-labor-archives"])
    web = records["APhilipRandolphInstitute5903.xml#c1.5"]
    drawer = records["APhilipRandolphInstitute5903.xml#c1.1"]

    assert web.items(CONTAINER) == [] and first(drawer, CONTAINER) == "Box 1"
    assert not [
        r for r in records.values() for i in r.items(CONTAINER) if i["value"] in ("", "Box-folder")
    ]


def test_caltech_component_has_box_and_folder_and_digital_objects(
    imported: dict[str, Archive],
) -> None:
    records = records_by_id(imported["caltech-aspace-oai"])
    reunion = records["maccready.xml#aspace_id267181"]

    assert first(reunion, TITLE) == "Gossamer Condor 20th year reunion"
    assert first(reunion, UNITID) == "MacCreadyPB_01_02_004_10"
    assert first(reunion, CONTAINER) == "Box 1.4, Folder 10"
    assert (first(reunion, FROM), first(reunion, TO)) == ("1997-08-23", "1997-08-23")
    assert reunion.items(DAO)[0]["value"] == (
        "https://digital.archives.caltech.edu/collections/MacCreadyPB/MacCreadyPB_01_02_004_10"
    )
    assert len(reunion.items(DAO)) == 2


def test_languages_declared_or_guessed(imported: dict[str, Archive]) -> None:
    records = records_by_id(imported["anf"])
    untagged = records["FRAN_IR_003500#d_1_2_1"].items(TITLE)[0]  # no langcode in the file
    tagged = records["FRAN_IR_041661"].items(TITLE)[0]  # <language langcode="fre">

    assert untagged["lang"] == "lg-fra" and untagged.get("lang_guessed") is True
    assert tagged["lang"] == "lg-fra" and "lang_guessed" not in tagged


def test_closed_access_makes_records_restricted_and_their_parts_too(
    imported: dict[str, Archive],
) -> None:
    archive = imported["anf"]
    keys = external_keys(archive, "ead")
    closed = []
    for file in xml_files("anf"):
        tree = parse(file)
        eadid = tree.findtext("eadheader/eadid")
        for unit in elements(tree, "//c[accessrestrict and c and not(c/accessrestrict)]"):
            note = elements(unit, "accessrestrict")[0]
            text = " ".join("".join(str(t) for t in note.itertext()).split())
            if "délai de 50 ans à compter du 31 décembre 1986" in text:
                closed.append((f"{eadid}#{unit.get('id')}", f"{eadid}#{unit[-1].get('id')}"))
    assert closed
    for parent, child in closed:
        assert archive.is_restricted(keys[parent]) and archive.is_restricted(keys[child])
    bulosan = records_by_id(imported["uw-labor-archives"])["BulosanCarlos0581.xml#c1"]
    assert first(bulosan, "ead17") == "Open to all users."
    assert not imported["uw-labor-archives"].is_restricted(
        external_keys(imported["uw-labor-archives"], "ead")["BulosanCarlos0581.xml#c1"]
    )


@pytest.mark.parametrize(
    ("text", "closed"),
    [
        ("Open to all users.", False),
        ("No restrictions on access.", False),
        ("Open to all users, but access to portions of the papers is restricted.", False),
        ("Access restricted: For terms of access, contact Special Collections.", True),
        ("Closed until 2050.", True),
        ("L'ensemble du fonds est librement communicable", False),
        ("Dossier fermé.", True),
        ("Non communicable.", True),
        ("Document réservé.", True),
        ("Communicable au terme d'un délai de 50 ans à compter du 31 décembre 1986.", True),
        ("Communicable au terme d'un délai de 50 ans à compter du 31 décembre 1950.", False),
        ("Sous réserve des restrictions imposées par l'état matériel.", False),
        ("Documentación no consultable.", True),
        ("Acceso restringido por datos personales.", True),
        ("Sin restricciones de acceso.", False),
        ("Expedient tancat fins al 2040.", True),
        ("Accés lliure, sense restriccions.", False),
    ],
)
def test_access_statements_are_classified(text: str, closed: bool) -> None:
    assert closes_access(text, date(2026, 1, 1)) is closed


def test_iso_ranges() -> None:
    assert iso_range("1846-01-01/1846-12-31,1898-01-01/1932-12-31") == (
        "1846-01-01",
        "1932-12-31",
    )
    assert iso_range("19970823") == ("1997-08-23", "1997-08-23")
    assert iso_range("1914/1976") == ("1914", "1976")
    assert iso_range("circa 1900") is None
    assert iso_range("1989 1990 October") is None


def test_a_placeholder_normal_is_no_date_and_no_skip(archive: Archive, tmp_path: Path) -> None:
    units = "".join(
        f'<c01 id="c{i}"><did><unittitle>Box {i}</unittitle>'
        f'<unitdate normal="{normal}">undated</unitdate></did></c01>'
        for i, normal in enumerate(["/", "0", "0/0", "Undated", "s.d.", "c. 1980s"])
    )
    path = tmp_path / "placeholders.xml"
    path.write_text(
        "<ead><eadheader><eadid>PH1</eadid></eadheader><archdesc level='fonds'><did>"
        f"<unittitle>Placeholders</unittitle></did><dsc>{units}</dsc></archdesc></ead>"
    )
    summary = run_import(archive, "ead", path)
    assert summary.created == 7
    assert [s.code for s in summary.skipped] == ["import.date_unreadable"]  # c. 1980s only
    assert "c. 1980s" in summary.skipped[0].reason


@pytest.mark.parametrize(
    ("normal", "expected"),
    [
        ("1989 October", ("1989-10", "1989-10")),  # as the UW converter writes @normal
        ("October 1989", ("1989-10", "1989-10")),
        ("1990 Feb. 3", ("1990-02-03", "1990-02-03")),
        ("1989 October/1990 May", ("1989-10", "1990-05")),
        ("août 1887", ("1887-08", "1887-08")),
    ],
)
def test_a_year_with_a_month_name_is_read(normal: str, expected: tuple[str, str]) -> None:
    assert iso_range(normal) == expected


@pytest.mark.parametrize(
    ("normal", "expected"),
    [
        ("1890-1975", ("1890", "1975")),  # read as 1890-19-75 before
        ("19950909-19951023", ("1995-09-09", "1995-10-23")),  # as the UW set writes one
        ("1914-08", ("1914-08", "1914-08")),
        ("1975-1890", None),  # backwards
        ("1989-13", None),
        ("19891340", None),
        ("1900-02-29", None),
        ("2000-02-29", ("2000-02-29", "2000-02-29")),
        ("199991231-20001231", None),  # a typo in the UW set: still reported
    ],
)
def test_a_hyphened_range_is_read_and_no_month_13(
    normal: str, expected: tuple[str, str] | None
) -> None:
    assert iso_range(normal) == expected


def test_a_second_import_creates_nothing(
    imported: dict[str, Archive], summaries: dict[str, ImportSummary]
) -> None:
    again = run_import(imported["anf"], "ead", shared_data("ead", "anf"))

    assert again.created == 0 and again.updated == 0
    assert again.unchanged == summaries["anf"].sections["ead1"]


def dump(archive: Archive) -> list[tuple[object, ...]]:
    """Every record and external id, as stored."""
    with archive.db.reading() as conn:
        rows = conn.execute(
            "SELECT section_tipo, section_id, data, version, restricted FROM records "
            "ORDER BY section_tipo, section_id"
        ).fetchall()
        ids = conn.execute("SELECT * FROM external_ids ORDER BY 1, 2").fetchall()
    return [tuple(r) for r in rows] + [tuple(r) for r in ids]


def test_a_broken_file_is_reported_and_changes_nothing(archive: Archive, tmp_path: Path) -> None:
    folder = tmp_path / "ead"
    folder.mkdir()
    for name in ("FRAN_IR_003500.xml", "FRAN_IR_041661.xml"):
        shutil.copy(shared_data("ead", "anf", name), folder / name)
    first_run = run_import(archive, "ead", folder)
    before = dump(archive)
    data = shared_data("ead", "anf", "FRAN_IR_050629.xml").read_bytes()
    (folder / "FRAN_IR_050629.xml").write_bytes(data[: len(data) // 2])
    (folder / "not-ead.xml").write_bytes(b"<catalogue><item/></catalogue>")

    second = run_import(archive, "ead", folder)

    codes = {(s.file, s.code) for s in second.skipped}
    assert ("FRAN_IR_050629.xml", "import.xml_malformed") in codes
    assert ("not-ead.xml", "import.not_ead") in codes
    assert second.created == 0 and second.unchanged == first_run.sections["ead1"]
    assert dump(archive) == before


def test_the_same_finding_aid_twice_in_one_import_is_reported(
    archive: Archive, tmp_path: Path
) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        shutil.copy(shared_data("ead", "anf", "FRAN_IR_003500.xml"), tmp_path / folder)

    summary = run_import(archive, "ead", tmp_path)

    assert [(s.file, s.code) for s in summary.skipped if s.code == "import.duplicate_id"] == [
        ("FRAN_IR_003500.xml", "import.duplicate_id")
    ]
    root = parse(tmp_path / "a" / "FRAN_IR_003500.xml")
    units, stubs = elements(root, UNITS), authority_keys(root, "FR-FRAN")
    assert summary.sections["ead1"] == len(units) and summary.created == len(units) + len(stubs)


STEMMED_LOWER = pytest.mark.xfail(
    strict=True,
    reason="with stemmed lexemes, BM25 alone puts each set's accession and file records whose "
    "labels repeat the collection's title above the collection (records 27 and 44 of the lexical "
    "list; the app's lexical search by record, search_records, ranks it 5th and 7th): measured "
    "when a folder archive's lexemes became PostgreSQL's (docs/shared-archive.md)",
)
QUESTIONS = [
    ("anf", "Where are the copies of Ludovic Vitet's 157 letters?", "lg-eng",
     "FRAN_IR_003500#d_1_2_1"),
    ("anf", "Which files of Jean-Noël Jeanneney's Radio France papers concern the Festival "
     "international de Radio France et de Montpellier?", "lg-eng", "FRAN_IR_050629#d15e2696-c"),
    ("anf", "Is there a digitised (image) version of notary Vallée's repertories for 1884?",
     "lg-eng", "FRAN_IR_051211#c1nnlr73nudo-fleae0yqubr0"),
    ("anf", "Quin és el fons de la família Vitet i quines dates cobreix?", "lg-cat",
     "FRAN_IR_003500"),
    ("anf", "¿Qué minutas notariales hay de agosto de 1887?", "lg-spa",
     "FRAN_IR_041661#c1p6whohk3b7--mtg00detfkhe"),
    pytest.param("uw-labor-archives", "What are the dates and extent of the Carlos Bulosan "
                 "papers?", "lg-eng", "BulosanCarlos0581.xml", marks=STEMMED_LOWER),
    ("uw-labor-archives", "Which collection documents the Mixteco and Triqui farmworker union?",
     "lg-eng", "FamiliasUnidasporlaJusticia6251.xml"),
    ("uw-labor-archives", "Hi ha entrevistes en vídeo de l'Oral History Project dels "
     "pensionistes de la costa del Pacífic?", "lg-cat", "ILWU_PCPAOralHistoryProject6194.xml"),
    ("uw-labor-archives", "¿Qué documentos hay del sindicato Familias Unidas por la Justicia?",
     "lg-spa", "FamiliasUnidasporlaJusticia6251.xml"),
    pytest.param("caltech-aspace-oai", "How big are the Paul B. MacCready Papers and what dates "
                 "do they cover?", "lg-eng", "maccready.xml", marks=STEMMED_LOWER),
    ("caltech-aspace-oai", "Is there anything about the Gossamer Condor reunion?", "lg-eng",
     "maccready.xml#aspace_id267181"),
    ("caltech-aspace-oai", "Hi ha documents de la «20th year reunion» del Gossamer Condor?",
     "lg-cat", "maccready.xml#aspace_id267181"),
    ("caltech-aspace-oai", "¿Dónde están los diarios y agendas de Glaser (1958, 1964, 1969) y "
     "están digitalizados?", "lg-spa", "GlaserDA#aspace_2027cb0df95e8258bc8e538d96e783bc"),
]  # fmt: skip
"""README test questions (English) and a Catalan and a Spanish one per set → the answer."""
TOP = 25
"""How many records a lexical search may return before the answer (of 2,500–7,700 per set)."""


@pytest.mark.parametrize(("name", "question", "lang", "answer"), QUESTIONS)
def test_lexical_search_finds_the_answer_after_import(
    imported: dict[str, Archive], name: str, question: str, lang: str, answer: str
) -> None:
    archive = imported[name]
    key = external_keys(archive, "ead")[answer]

    assert key in lexical_records(archive, question, 200, lang)[:TOP]


EAD3_SAMPLE = """<?xml version="1.0" encoding="UTF-8"?>
<ead xmlns="http://ead3.archivists.org/schema/">
  <control>
    <recordid>ES-TEST-001</recordid>
    <filedesc><titlestmt><titleproper>Fons Puig i Cadafalch</titleproper></titlestmt></filedesc>
    <maintenancestatus value="new"/>
    <maintenanceagency><agencycode>ES-08019</agencycode><agencyname>Arxiu</agencyname>
    </maintenanceagency>
    <languagedeclaration><language langcode="cat"/><script scriptcode="Latn"/></languagedeclaration>
    <maintenancehistory><maintenanceevent><eventtype value="created"/>
      <eventdatetime>2026</eventdatetime><agenttype value="human"/><agent>Test</agent>
    </maintenanceevent></maintenancehistory>
  </control>
  <archdesc level="fonds">
    <did>
      <unitid localtype="signatura">ES-08019-01</unitid>
      <unittitle>Fons Puig i Cadafalch</unittitle>
      <unittitle lang="spa">Fondo Puig i Cadafalch</unittitle>
      <unitdatestructured><daterange><fromdate standarddate="1890">1890</fromdate>
        <todate standarddate="1956">1956</todate></daterange></unitdatestructured>
      <physdescstructured physdescstructuredtype="spaceoccupied" coverage="whole">
        <quantity>12</quantity><unittype>capses</unittype></physdescstructured>
      <origination><persname identifier="42"><part>Puig i Cadafalch, Josep</part>
        <part>1867-1956</part></persname></origination>
    </did>
    <accessrestrict><head>Accés</head><p>Documentació tancada fins al 2060.</p></accessrestrict>
    <dsc>
      <c level="file">
        <did><unittitle>Plànols</unittitle><container localtype="box">3</container>
          <daoset><dao daotype="derived" href="plans-1.jpg"/>
            <dao daotype="derived" href="plans-2.jpg"/></daoset>
        </did>
        <accessrestrict><p>Accés lliure, sense restriccions.</p></accessrestrict>
        <controlaccess><geogname><part>Barcelona</part></geogname><subject><part>Arquitectura</part></subject></controlaccess>
      </c>
    </dsc>
  </archdesc>
</ead>
"""


def test_an_ead3_file_is_read_with_its_structured_elements(
    archive: Archive, tmp_path: Path
) -> None:
    schema = etree.XMLSchema(etree.parse(str(shared_data("schemas", "ead3.xsd"))))
    assert schema.validate(etree.fromstring(EAD3_SAMPLE.encode()))  # it is real EAD3
    path = tmp_path / "ead3.xml"
    path.write_text(EAD3_SAMPLE, encoding="utf-8")

    summary = run_import(archive, "ead", path)

    records = records_by_id(archive)
    fonds, plans = records["ES-TEST-001"], records["ES-TEST-001#c1"]
    assert summary.sections == {"ead1": 2, AGENTS: 1, PLACES: 1, SUBJECTS: 1}
    assert summary.created == 5 and summary.media_linked == 2 and summary.media == 0
    assert [(i["lang"], i["value"]) for i in fonds.items(TITLE)] == [
        ("lg-cat", "Fons Puig i Cadafalch"),
        ("lg-spa", "Fondo Puig i Cadafalch"),
    ]
    assert (first(fonds, FROM), first(fonds, TO)) == ("1890", "1956")
    assert first(fonds, "ead9") == "12 capses" and first(fonds, "ead4") == "signatura: ES-08019-01"
    assert first(fonds, "ead17") == "Documentació tancada fins al 2060."
    assert archive.is_restricted(fonds.key) and not archive.is_restricted(plans.key)
    assert first(plans, CONTAINER) == "Box 3"
    assert [i["value"] for i in plans.items(DAO)] == ["plans-1.jpg", "plans-2.jpg"]
    agents = external_keys(archive, "authority")
    creator = archive.get_record(agents["ES-08019:42"])  # a bare number, qualified
    assert creator.text("agent2") == "Puig i Cadafalch, Josep 1867-1956"
    assert {"Barcelona", "Arquitectura"} <= {
        r.text("place2") or r.text("subject2")
        for key in agents.values()
        if (r := archive.get_record(key))
    }


def test_a_folder_with_no_finding_aid_is_refused_not_imported_as_nothing(tmp_path: Path) -> None:
    """As the EAC-CPF and Dublin Core imports say it: ``import.file_missing``, not "0 records"."""
    folder = tmp_path / "empty"
    folder.mkdir()
    (folder / "readme.txt").write_text("no EAD here", encoding="utf-8")

    with open_archive(tmp_path / "a", create=True) as archive:
        with pytest.raises(ImportFailed) as caught:
            run_import(archive, "ead", folder)

        assert caught.value.code == "import.file_missing"
        assert caught.value.message == f"The folder {folder} holds no .xml file."
        assert archive.count_records() == 0
