"""EAD over OAI-PMH: a real HTTP repository on 127.0.0.1 serving the real finding aids.

The ANF files (``ead/anf``) are served one finding aid per record, five a page with resumption
tokens; the Caltech ArchivesSpace ``oai_ead`` responses (``ead/caltech-aspace-oai``) with their
own identifiers. Counts come from XPath over the files; the records are compared with what
``arxiu import ead`` makes of the same files.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from app.cli import main
from app.core.archive import Archive, open_archive
from app.core.archive.importers import run_import
from app.core.archive.importers.base import external_keys
from app.core.archive.importers.ead import NOT_EAD
from app.core.archive.importers.ead_fields import PART_OF, SECTION, SOURCE_FILE, TITLE
from app.core.archive.importers.oai_ead import mapping_key
from app.core.archive.importers.oai_pmh import (
    AUDIT_ACTOR,
    DELETED_KEPT,
    RetryPolicy,
    harvest,
    harvest_key,
    normalise_base_url,
)
from app.core.archive.model import RecordKey
from tests.conftest import shared_data
from tests.core.archive.importers.lookups import authority_records
from tests.core.archive.importers.oai_server import Item, OaiServer, load_caltech, load_ead

FAST = RetryPolicy(attempts=3, base_delay_s=0.05, max_delay_s=2.0, timeout_s=30.0)
PREFIX = "oai_ead"
_PARSER = etree.XMLParser(load_dtd=False, no_network=True, resolve_entities=False)
VITET = "oai:test:FRAN_IR_003500"
SMALL = ("FRAN_IR_003500.xml", "FRAN_IR_054848.xml", "FRAN_IR_055604.xml")
"""The Vitet papers and two small fonds."""


def anf() -> Path:
    """The ANF finding aids."""
    return shared_data("ead", "anf")


def units(root: etree._Element) -> int:
    """The archdesc and every component of a finding aid (XPath, any EAD numbering)."""
    query = (
        "count(//*[local-name()='archdesc' or local-name()='c' or starts-with(local-name(), 'c0')])"
    )
    return int(root.xpath(query))


def parsed(path: Path) -> etree._Element:
    """A finding aid's root (no DTD, no network)."""
    return etree.parse(str(path), _PARSER).getroot()


def serve(items: list[Item], page_size: int = 5) -> OaiServer:
    """A repository of ``items`` in ``oai_ead``."""
    return OaiServer(items, page_size=page_size, formats=frozenset({PREFIX})).start()


@pytest.fixture
def repository() -> Iterator[OaiServer]:
    """The 17 ANF finding aids, five a page."""
    server = serve(load_ead(anf(), "anf"))
    yield server
    server.stop()


@pytest.fixture
def small() -> Iterator[OaiServer]:
    """Three ANF finding aids, two a page."""
    items = [i for i in load_ead(anf(), "anf") if f"{i.identifier[9:]}.xml" in SMALL]
    server = serve(items, page_size=2)
    yield server
    server.stop()


def portable(archive: Archive, source: str) -> dict[str, dict[str, Any]]:
    """External id → values, relations written as their target's external id and item ids
    dropped, so that two archives can be compared."""
    with archive.db.reading() as conn:
        rows = conn.execute("SELECT external_id, section_tipo, section_id FROM external_ids")
        names = {RecordKey(r[1], r[2]): r[0] for r in rows.fetchall()}

    def plain(value: Any) -> Any:
        if isinstance(value, dict) and set(value) == {"section_tipo", "section_id"}:
            return names[RecordKey(value["section_tipo"], value["section_id"])]
        return value

    return {
        external_id: {
            tipo: [{**i, "value": plain(i["value"]), "id": None} for i in items]
            for tipo, items in archive.get_record(key).values.items()
            if tipo != SOURCE_FILE
        }
        for external_id, key in external_keys(archive, source).items()
    }


def part_of_links(archive: Archive) -> int:
    """The "part of" links of the archive."""
    with archive.db.reading() as conn:
        query = "SELECT count(*) FROM links WHERE from_section = ? AND field_tipo = ?"
        return int(conn.execute(query, (SECTION, PART_OF)).fetchone()[0])


def test_a_harvest_gives_each_finding_aids_whole_hierarchy_and_a_second_creates_nothing(
    archive: Archive, repository: OaiServer, tmp_path: Path
) -> None:
    files = sorted(anf().glob("*.xml"))
    expected = sum(units(parsed(f)) for f in files)
    components = sum(int(parsed(f).xpath("count(//c)")) for f in files)
    assert (len(files), expected, components) == (17, 3028, 3011)
    first = harvest(archive, repository.url, metadata_prefix=PREFIX, retry=FAST)
    assert first.error is None and first.skipped == []
    assert (first.read, first.sections[SECTION], first.updated) == (expected, expected, 0)
    assert first.created == expected + authority_records(archive)
    assert archive.count_records(SECTION) == expected
    assert part_of_links(archive) == components
    asked = repository.requests()
    assert len(asked) == math.ceil(len(files) / repository.page_size) == 4
    assert asked[0] == {"verb": "ListRecords", "metadataPrefix": PREFIX}
    assert all(set(a) == {"verb", "resumptionToken"} for a in asked[1:])

    source = normalise_base_url(repository.url)
    with open_archive(tmp_path / "files", create=True) as other:
        from_files = run_import(other, "ead", anf())
        assert portable(archive, source) == portable(other, "ead")
    assert (
        (first.links, first.media_linked)
        == (from_files.links, from_files.media_linked)
        == (3110, 33)
    )
    key = external_keys(archive, source)["FRAN_IR_003500#d_1_2_1"]
    record = archive.get_record(key)
    assert record.text(SOURCE_FILE) == VITET
    assert record.text(TITLE) == "Copie de 157 lettres de Ludovic Vitet. 1830-1872."
    assert archive.meta(mapping_key(source, VITET)) == "FRAN_IR_003500"

    stored = archive.meta(harvest_key(source, None, PREFIX))
    assert stored is not None
    second = harvest(archive, repository.url, metadata_prefix=PREFIX, retry=FAST)
    assert repository.requests()[-1] == {
        "verb": "ListRecords",
        "metadataPrefix": PREFIX,
        "from": stored,
    }
    assert second.error is None and (second.read, second.created, second.updated) == (0, 0, 0)
    again = harvest(archive, repository.url, metadata_prefix=PREFIX, from_date="2000-01-01")
    assert again.error is None
    assert (again.read, again.created, again.updated, again.unchanged) == (expected, 0, 0, expected)
    assert archive.count_records(SECTION) == expected


def test_a_changed_finding_aid_comes_back_alone_and_its_left_out_components_go(
    archive: Archive, small: OaiServer
) -> None:
    harvest(archive, small.url, metadata_prefix=PREFIX, retry=FAST)
    source = normalise_base_url(small.url)
    stored = archive.meta(harvest_key(source, None, PREFIX))
    before = archive.count_records(SECTION)
    root = parsed(anf() / "FRAN_IR_003500.xml")
    series = root.xpath("//c[@id='d_1_2']")[0]  # "Correspondance active" and its four files
    removed = {f"FRAN_IR_003500#{c.get('id')}" for c in series.iter("c")}
    assert len(removed) == 5
    series.getparent().remove(series)
    root.find("archdesc/did/unittitle").text = "Fonds Vitet, revised upstream"
    small.replace(VITET, etree.tostring(root).replace(b"<ead", b'<ead xmlns=""', 1))

    summary = harvest(archive, small.url, metadata_prefix=PREFIX, retry=FAST)
    assert small.requests()[-1]["from"] == stored
    assert summary.error is None and summary.skipped == []
    assert (summary.read, summary.created, summary.deleted) == (units(root), 0, len(removed))
    assert summary.updated >= 1  # the archdesc (and the siblings after the series, renumbered)
    keys = external_keys(archive, source)
    assert removed.isdisjoint(keys)
    assert archive.get_record(keys["FRAN_IR_003500"]).text(TITLE) == "Fonds Vitet, revised upstream"
    assert archive.count_records(SECTION) == before - len(removed)
    deletions = [r for r in archive.audit_rows() if r["action"] == "delete"]
    assert len(deletions) == len(removed)
    assert {(d["actor"], d["op_id"]) for d in deletions} == {(AUDIT_ACTOR, VITET)}


def test_a_deleted_finding_aid_takes_its_hierarchy_but_a_persons_edit_keeps_its_branch(
    archive: Archive, small: OaiServer
) -> None:
    harvest(archive, small.url, metadata_prefix=PREFIX, retry=FAST)
    source = normalise_base_url(small.url)
    keys = external_keys(archive, source)
    root = parsed(anf() / "FRAN_IR_003500.xml")
    branch = 1 + int(root.xpath("count(//c[@id='d_1_2_1']/ancestor::c)"))  # and the archdesc
    assert branch == 3
    edited = keys["FRAN_IR_003500#d_1_2_1"]
    note = [{"lang": "lg-fra", "value": "Vérifié sur la boîte, 2 décembre"}]
    archive.update_record(edited, {TITLE: note}, audit={"actor": "anna"})
    others = archive.count_records(SECTION) - units(root)

    small.delete(VITET)
    summary = harvest(archive, small.url, metadata_prefix=PREFIX, retry=FAST)
    assert summary.error is None
    assert summary.deleted == units(root) - 1 - branch
    kept = [s for s in summary.skipped if s.code == DELETED_KEPT]
    assert len(kept) == 1 + branch
    assert all(s.reason.startswith(f"{VITET}: deleted upstream, kept because") for s in kept)
    assert sum("edited here" in s.reason for s in kept) == 1
    left = external_keys(archive, source)
    vitet = sorted(e for e in left if e.partition("#")[0] == "FRAN_IR_003500")
    ancestors = [
        f"FRAN_IR_003500#{c.get('id')}" for c in root.xpath("//c[@id='d_1_2_1']/ancestor::c")
    ]
    assert vitet == sorted(["FRAN_IR_003500", *ancestors, "FRAN_IR_003500#d_1_2_1"])
    assert archive.get_record(edited).values[TITLE][0]["value"] == note[0]["value"]
    assert archive.count_records(SECTION) == others + 1 + branch
    assert archive.meta(mapping_key(source, VITET)) == "FRAN_IR_003500"  # its archdesc stays

    whole = "oai:test:FRAN_IR_054848"
    small.delete(whole)
    gone = harvest(archive, small.url, metadata_prefix=PREFIX, retry=FAST)
    assert gone.deleted == units(parsed(anf() / "FRAN_IR_054848.xml"))
    assert [s for s in gone.skipped if whole in s.reason] == []
    assert archive.meta(mapping_key(source, whole)) is None
    assert not any(e.startswith("FRAN_IR_054848") for e in external_keys(archive, source))
    later = harvest(archive, small.url, metadata_prefix=PREFIX, from_date="2000-01-01")
    assert (later.created, later.deleted) == (0, 0)  # nothing comes back, nothing more goes


def test_archivesspace_oai_ead_and_a_record_that_holds_no_ead(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = shared_data("ead", "caltech-aspace-oai")
    items = load_ead(folder, "caltech")
    assert [i.identifier for i in items] == [
        "oai:caltech//repositories/2/resources/34",
        "oai:caltech//repositories/2/resources/197",
    ]
    dc = load_caltech(shared_data("oai-dc", "caltech"))[0]
    server = serve([*items, Item(dc.identifier, items[0].datestamp, "caltech", dc.metadata)])
    try:
        target = tmp_path / "harvested"
        argv = ["import", "oai", server.url, "--metadata-prefix", PREFIX, "--set", "caltech"]
        assert main([*argv, "--archive", str(target), "--json"]) == 0
        printed = json.loads(capsys.readouterr().out)
    finally:
        server.stop()
    expected = sum(units(parsed(f)) for f in sorted(folder.glob("*.xml")))
    assert expected == 2 + 2484
    assert (printed["sections"]["ead1"], printed["read"]) == (expected, expected + 1)
    assert printed["created"] == sum(printed["sections"].values()) > expected  # and the stubs
    assert [(s["code"], dc.identifier in s["reason"]) for s in printed["skipped"]] == [
        (NOT_EAD, True)
    ]
    assert server.requests()[0] == {
        "verb": "ListRecords",
        "metadataPrefix": PREFIX,
        "set": "caltech",
    }
    with open_archive(target) as archive:
        keys = external_keys(archive, normalise_base_url(server.url))
        glaser = archive.get_record(keys["GlaserDA"])
        assert glaser.text(SOURCE_FILE) == "oai:caltech//repositories/2/resources/34"
        assert printed["media_linked"] > 0 and printed["media"] == 0
