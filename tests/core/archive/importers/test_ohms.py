"""OHMS oral histories: the real Science History Institute interviews, timecoded and linked."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lxml import etree

from app.core.archive import Archive
from app.core.archive.importers import run_import
from app.core.archive.importers.authorities import AGENTS, PLACES, SUBJECTS, Mention
from app.core.archive.importers.ohms import SECTION, SOURCE, synced_transcript
from app.core.archive.model import Record, RecordKey
from app.core.importing import import_dataset
from app.core.index import lexical
from app.core.index.chunking import TIMECODE
from app.core.tools.search import split_passages
from tests.conftest import shared_data
from tests.core.archive.importers.lookups import authority_records, own_sections

NS = {"o": "https://www.weareavp.com/nunncenter/ohms"}
SET = "oral-history-ohms"


def xml(name: str) -> etree._ElementTree:
    """A file of the real set, parsed for independent counts (no entities, no network)."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    return etree.parse(str(shared_data(SET, name)), parser)


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Archive:
    """The whole real set imported once (with the lexical index) for the read-only tests."""
    from app.core.archive.store import open_archive

    archive = open_archive(tmp_path_factory.mktemp("ohms") / "archive", create=True)
    import_dataset(archive, "ohms", shared_data(SET))
    return archive


def interview(archive: Archive, accession: str) -> Record:
    key = archive.external_key(SOURCE, accession)
    assert key is not None, accession
    return archive.get_record(key)


def best_records(archive: Archive, query: str, lang: str) -> list[tuple[RecordKey, str, str]]:
    """``(record, field, chunk text)`` of the best lexical chunks among the interviews."""
    where = lexical.SqlFilter(sections=(SECTION,))
    with archive.db.reading() as conn:
        out = []
        for chunk_id, _ in lexical.search(conn, query, 10, where, lang=lang):
            row = conn.execute(
                "SELECT section_tipo, section_id, field_tipo, text FROM index_chunks WHERE id = ?",
                (chunk_id,),
            ).fetchone()
            out.append((RecordKey(row[0], row[1]), row[2], row[3]))
    return out


def passage_at(record: Record, field: str, seconds: int) -> str:
    """The text of ``field``'s passage that starts at ``seconds``."""
    stamp = f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.000"
    value = str(record.items(field)[0]["value"])
    found = [p.text for p in split_passages(field, "", value) if p.timecode == stamp]
    assert found, (field, stamp)
    return found[0]


def test_one_record_per_interview_and_every_index_segment_timecoded(imported: Archive) -> None:
    files = sorted(shared_data(SET).glob("*.xml"))
    assert imported.count_records(SECTION) == len(files) == 6
    for file in files:
        tree = xml(file.name)
        accession = tree.xpath("string(//o:record/o:accession)", namespaces=NS)
        points = int(tree.xpath("count(//o:index/o:point[normalize-space(o:time)])", namespaces=NS))
        record = interview(imported, accession)
        index = record.items("ohms17")
        marks = TIMECODE.findall(str(index[0]["value"])) if index else []
        assert len(marks) == points, file.name
        title = " ".join(tree.xpath("string(//o:record/o:title)", namespaces=NS).split())
        assert record.text("ohms2") == title


def test_people_and_subjects_are_linked_authority_records(imported: Archive) -> None:
    duarte = interview(imported, "OH0344")
    tree = xml("duarte_OH0344.xml")
    terms = set(tree.xpath("//o:record/o:subject/text()", namespaces=NS))
    for point in tree.xpath("//o:point", namespaces=NS):
        for name in ("keywords", "subjects"):
            text = point.findtext(f"o:{name}", default="", namespaces=NS)
            terms.update(t.strip() for t in text.split(";") if t.strip())

    person = imported.external_key(
        "authority", Mention(AGENTS, "person", "Ronald Duarte").external_id
    )
    brock = imported.external_key(
        "authority", Mention(AGENTS, "person", "David C. Brock").external_id
    )
    links = imported.links_from(duarte.key)
    assert [link.target for link in links if link.field_tipo == "ohms4"] == [person]
    assert [link.target for link in links if link.field_tipo == "ohms6"] == [brock]
    subjects = {link.target for link in links if link.field_tipo == "ohms15"}
    assert len(subjects) == len(terms) == 17
    assert all(t.section_tipo == SUBJECTS for t in subjects)
    assert imported.get_record(person).text("agent4") == "person"
    assert duarte.items("ohms19")[0]["value"] == {"lat": 37.211, "lon": -122.273}
    assert duarte.text("ohms8") == "2006-06-13" and duarte.text("ohms13") == "0:28:06"
    assert duarte.items("ohms18")[0]["lang"] == "lg-eng"


def test_the_sync_map_puts_timecodes_in_the_transcript(imported: Archive) -> None:
    tree = xml("duarte_OH0344.xml")
    sync = tree.xpath("string(//o:sync)", namespaces=NS)
    marks = [m for m in sync.partition(":")[2].split("|") if m.strip()]

    transcript = str(interview(imported, "OH0344").items("ohms18")[0]["value"])

    stamps = TIMECODE.findall(transcript)
    assert stamps[0] == "00:00:00.000" and stamps[1] == "00:01:00.000"
    assert len(stamps) == len(marks) + 1  # the start, then one a minute
    first_line, first_word = (int(n) for n in marks[0].strip(")").split("("))
    raw = tree.xpath("string(//o:transcript)", namespaces=NS).split("\n")
    before = " ".join(raw[first_line - 1].split()[: first_word - 1])  # the words before the mark
    assert passage_at(interview(imported, "OH0344"), "ohms18", 0).endswith(before)
    assert passage_at(interview(imported, "OH0344"), "ohms18", 60).startswith(
        raw[first_line - 1].split()[first_word - 1]
    )


def test_sync_anchors_words_and_drops_runs_of_adjacent_anchors() -> None:
    text = "ONE: a b c d\nTWO: e f g h\nTHREE: i j"

    synced = synced_transcript(text, "1:|2(3)|3(1)|3(2)|1(9)")

    assert synced.splitlines() == [
        "[TC_00:00:00.000_TC] ONE: a b c d [TC_00:04:00.000_TC]",
        "TWO: e [TC_00:01:00.000_TC] f g h",
        "THREE: i j",
    ]


def test_the_embedded_webvtt_is_the_transcript(imported: Archive) -> None:
    chappelear = interview(imported, "OH1153")
    cues = xml("chappelear-ohmsvtt-example.xml").xpath("string(//o:vtt_transcript)", namespaces=NS)
    timings = [line for line in cues.splitlines() if "-->" in line]

    item = chappelear.items("ohms18")[0]

    assert len(TIMECODE.findall(item["value"])) == len(timings) == 13
    assert (item["lang"], item.get("lang_guessed")) == ("lg-eng", True)  # <language/> is empty
    assert chappelear.text("ohms5") == "Patsy Stallings Chappelear"  # from the title


def test_readme_questions_in_english(imported: Archive) -> None:
    duarte, hanford, alyea = (interview(imported, a) for a in ("OH0344", "OH0139", "OH0010"))

    born = best_records(imported, "When and where was Ronald Duarte born?", "lg-eng")
    assert born[0][0] == duarte.key
    assert any("7 May 1930" in text for key, _, text in born if key == duarte.key)

    dupont = best_records(
        imported, "At what point in the Hanford interview does he talk about DuPont?", "lg-eng"
    )
    assert dupont[0][0] == hanford.key
    assert passage_at(hanford, "ohms17", 1614).startswith("E.I. DuPont de Nemours & Company")

    polio = best_records(imported, "Which Alyea segment covers his mother and polio?", "lg-eng")
    assert (polio[0][0], polio[0][1]) == (alyea.key, "ohms17")
    assert passage_at(alyea, "ohms17", 930).startswith("Hubert's Mother, and Polio")


def test_readme_questions_in_catalan_and_spanish(imported: Archive) -> None:
    smyth, chappelear = interview(imported, "OH0042"), interview(imported, "OH1153")

    hits = best_records(
        imported, "En quin segment parla Charles P. Smyth del Chemical Warfare Service?", "lg-cat"
    )
    assert hits[0][0] == smyth.key
    assert "Chemical Warfare Service" in passage_at(smyth, "ohms17", 1374)

    hits = best_records(imported, "¿Dónde nació Patsy Chappelear y quién la entrevistó?", "lg-spa")
    assert hits[0][0] == chappelear.key
    first = passage_at(chappelear, "ohms18", 4)
    assert "Burnet, Texas" in first and "Sarah Schneider" in first and "Gayle J. Gibson" in first


def test_a_second_import_changes_nothing(archive: Archive) -> None:
    first = run_import(archive, "ohms", shared_data(SET))
    agents, subjects = archive.count_records(AGENTS), archive.count_records(SUBJECTS)

    second = run_import(archive, "ohms", shared_data(SET))

    stubs = agents + subjects + archive.count_records(PLACES)
    assert (first.created, second.created, second.updated, second.unchanged) == (6 + stubs, 0, 0, 6)
    assert first.sections == {"ohms1": 6, AGENTS: agents, SUBJECTS: subjects} and stubs > 0
    assert second.links == first.links
    assert (archive.count_records(AGENTS), archive.count_records(SUBJECTS)) == (agents, subjects)


def test_a_closed_interview_is_restricted_and_a_broken_file_skipped(
    archive: Archive, tmp_path: Path
) -> None:
    folder = tmp_path / "ohms"
    folder.mkdir()
    source = shared_data(SET, "duarte_OH0344.xml").read_text(encoding="utf-8")
    closed = source.replace("<userestrict>0</userestrict>", "<userestrict>1</userestrict>")
    (folder / "closed.xml").write_text(closed.replace("OH0344", "OH9344"), encoding="utf-8")
    embargo = source.replace("No restrictions on access.", "Closed; it will open in 2040.")
    (folder / "embargo.xml").write_text(embargo.replace("OH0344", "OH9345"), encoding="utf-8")
    shutil.copy(shared_data(SET, "alyea_OH0010.xml"), folder / "open.xml")
    (folder / "broken.xml").write_text(source[: len(source) // 2], encoding="utf-8")
    (folder / "xxe.xml").write_text(
        '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><ROOT>&x;</ROOT>'
    )

    summary = run_import(archive, "ohms", folder)

    assert summary.created == 3 + authority_records(archive) and own_sections(summary) == {
        "ohms1": 3
    }
    assert {(s.file, s.code) for s in summary.skipped} == {
        ("broken.xml", "import.xml_malformed"),
        ("xxe.xml", "import.xml_entity"),
    }
    restricted = {
        a: archive.is_restricted(interview(archive, a).key) for a in ("OH9344", "OH9345", "OH0010")
    }
    assert restricted == {"OH9344": True, "OH9345": True, "OH0010": False}


def test_json_export_imports_back_into_the_same_records_and_links(
    imported: Archive, tmp_path: Path
) -> None:
    from app.core.archive.exporters import run_export
    from app.core.archive.exporters.base import ExportRequest
    from app.core.archive.store import open_archive

    out = tmp_path / "export"
    out.mkdir()
    for section in (SECTION, AGENTS, SUBJECTS):
        run_export(imported, "json", ExportRequest(section, out / f"{section}.json"))
    again = open_archive(tmp_path / "again", create=True)

    summary = run_import(again, "json", out)

    assert summary.skipped == []
    for record in imported.iter_records(SECTION):
        copy = again.get_record(record.key)
        assert (copy.values, copy.restricted) == (record.values, record.restricted)
        assert again.links_from(record.key) == imported.links_from(record.key)
