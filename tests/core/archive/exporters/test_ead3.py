"""EAD3 export of the real ANF and UW finding aids: schema-valid, restricted records handled,
and imported back into the same records, fields and links.

The EAD3 schema is read from ``shared/data/schemas/ead3.xsd`` (EAD3 1.1.1, which imports no
other schema, so nothing is fetched or copied).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from app.core.archive import Archive
from app.core.archive.exporters import RESTRICTED_NOTICE, ExportRequest, run_export
from app.core.archive.importers import run_import
from app.core.archive.importers.base import external_keys
from app.core.archive.importers.ead_fields import EAD3_NS, SOURCE_FILE
from app.core.archive.model import RecordKey
from app.core.errors import ArxiuError
from tests.conftest import shared_data
from tests.core.archive.exporters.round_trip import Exported, round_trip
from tests.core.archive.xml_query import XPath

NS = {"e": EAD3_NS}
SETS = ("anf", "uw-labor-archives")
elements = XPath(NS).nodes


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Exported]:
    """ANF + UW imported, exported as EAD3 with restricted records, imported into a new archive."""
    work = tmp_path_factory.mktemp("ead3")
    request = ExportRequest("ead1", work / "out", include_restricted=True)
    sources = [shared_data("ead", name) for name in SETS]
    with round_trip(work, ("ead", "ead3"), sources, request) as done:
        yield done


@pytest.fixture(scope="module")
def schema() -> etree.XMLSchema:
    """The EAD3 1.1.1 schema."""
    return etree.XMLSchema(etree.parse(str(shared_data("schemas", "ead3.xsd"))))


def parse(path: Path) -> etree._Element:
    """The root element of an exported file."""
    return etree.parse(str(path)).getroot()


def source_units() -> int:
    """Archdescs and components in the original files (XPath)."""
    total = 0
    for name in SETS:
        for file in shared_data("ead", name).rglob("*.xml"):
            root = etree.parse(str(file), etree.XMLParser(load_dtd=False, no_network=True))
            found = root.xpath(
                "//*[local-name()='archdesc' or local-name()='c' or "
                "(string-length(local-name())=3 and starts-with(local-name(),'c0')) or "
                "local-name()='c10' or local-name()='c11' or local-name()='c12']"
            )
            assert isinstance(found, list)
            total += len(found)
    return total


def test_every_finding_aid_is_written_and_valid_ead3(
    exported: Exported, schema: etree.XMLSchema
) -> None:
    files = sorted(exported.out.glob("*.xml"))
    sources = [f for name in SETS for f in shared_data("ead", name).glob("*.xml")]
    units = 0
    for file in files:
        document = etree.parse(str(file))
        assert schema.validate(document), (file.name, str(schema.error_log))
        units += len(elements(document.getroot(), "//e:archdesc | //e:c"))

    assert len(files) == len(sources)
    assert units == exported.summary.records == source_units()


def test_restricted_records_included_are_announced_first(exported: Exported) -> None:
    assert exported.summary.restricted_included > 0
    announced = 0
    for file in exported.out.glob("*.xml"):
        root = parse(file)
        internal = elements(root, "//e:*[@audience='internal']")
        rights = elements(root, "e:control/e:rightsdeclaration[@localtype='restricted']")
        if internal:
            assert rights and rights[0].findtext(f"{{{EAD3_NS}}}citation") == RESTRICTED_NOTICE
            assert RESTRICTED_NOTICE in file.read_text(encoding="utf-8").splitlines()[1]
            announced += len(internal)
        else:
            assert not rights
    assert announced == exported.summary.restricted_included


def test_restricted_records_are_left_out_unless_asked(exported: Exported, tmp_path: Path) -> None:
    summary = run_export(exported.archive, "ead3", ExportRequest("ead1", tmp_path / "open"))
    written: set[str] = set()
    for file in (tmp_path / "open").glob("*.xml"):
        root = parse(file)
        eadid = root.findtext(f"{{{EAD3_NS}}}control/{{{EAD3_NS}}}recordid")
        written.add(str(eadid))
        written.update(f"{eadid}#{c.get('id')}" for c in elements(root, "//e:c"))
        assert RESTRICTED_NOTICE not in file.read_text(encoding="utf-8")
    keys = external_keys(exported.archive, "ead")
    restricted = {ext for ext, key in keys.items() if exported.archive.is_restricted(key)}

    assert summary.restricted_left_out > 0 and summary.restricted_included == 0
    assert not written & restricted
    assert summary.records == len(written) <= len(keys) - len(restricted)


def snapshot(archive: Archive) -> dict[str, tuple[dict[str, list[Any]], bool | None]]:
    """Every description by external id: its values (links as the targets' external ids,
    the source file left out) and its restricted flag."""
    descriptions = external_keys(archive, "ead")
    names = {key: ext for ext, key in descriptions.items()}
    names.update({key: ext for ext, key in external_keys(archive, "authority").items()})
    out: dict[str, tuple[dict[str, list[Any]], bool | None]] = {}
    for ext, key in descriptions.items():
        record = archive.get_record(key)
        values: dict[str, list[Any]] = {}
        for tipo, items in record.values.items():
            if tipo == SOURCE_FILE:
                continue
            values[tipo] = [
                (item["lang"], _target(item["value"], names), item.get("lang_guessed", False))
                for item in items
            ]
        out[ext] = (values, record.restricted)
    return out


def _target(value: Any, names: dict[RecordKey, str]) -> Any:
    if isinstance(value, dict) and "section_tipo" in value:
        return names[RecordKey(value["section_tipo"], value["section_id"])]
    return value


def test_round_trip_gives_the_same_records_fields_and_links(exported: Exported) -> None:
    before, after = snapshot(exported.archive), snapshot(exported.again)

    assert set(before) == set(after)
    for ext, (values, restricted) in before.items():
        assert after[ext] == (values, restricted), ext
    agents = {
        exported.archive.get_record(key).text("agent2")
        for key in external_keys(exported.archive, "authority").values()
    }
    agents_again = {
        exported.again.get_record(key).text("agent2")
        for key in external_keys(exported.again, "authority").values()
    }
    assert agents == agents_again
    assert len(exported.archive.links_from(_key(exported.archive, "FRAN_IR_003500"))) == len(
        exported.again.links_from(_key(exported.again, "FRAN_IR_003500"))
    )


def _key(archive: Archive, ext: str) -> RecordKey:
    return external_keys(archive, "ead")[ext]


def test_a_subtree_is_written_with_its_children_in_order(
    exported: Exported, schema: etree.XMLSchema, tmp_path: Path
) -> None:
    key = _key(exported.archive, "FRAN_IR_003500#d_1_2")
    out = tmp_path / "subtree.xml"

    summary = run_export(exported.archive, "ead3", ExportRequest("ead1", out, record=key))

    document = etree.parse(str(out))
    assert schema.validate(document)
    root = document.getroot()
    assert root.findtext(f"{{{EAD3_NS}}}control/{{{EAD3_NS}}}recordid") == "FRAN_IR_003500#d_1_2"
    original = etree.parse(
        str(shared_data("ead", "anf", "FRAN_IR_003500.xml")),
        etree.XMLParser(load_dtd=False, no_network=True),
    )
    expected = original.xpath("//c[@id='d_1_2']/c/@id")
    assert [c.get("id") for c in elements(root, "e:archdesc/e:dsc/e:c")] == expected
    assert summary.records == 1 + len(expected)


def test_only_descriptions_export_as_ead3(exported: Exported, tmp_path: Path) -> None:
    with pytest.raises(ArxiuError) as caught:
        run_export(exported.archive, "ead3", ExportRequest("agent1", tmp_path / "x.xml"))
    assert caught.value.code == "export.section_unsupported"


def test_many_finding_aids_are_not_written_into_one_file_name(
    exported: Exported, tmp_path: Path
) -> None:
    """A section of several finding aids sent to ``fons.xml``: refused before anything is
    written (no folder called ``fons.xml``); the same name takes one subtree."""
    out = tmp_path / "fons.xml"
    with pytest.raises(ArxiuError) as caught:
        run_export(exported.archive, "ead3", ExportRequest("ead1", out))
    assert caught.value.code == "export.one_file_named" and "fons.xml" in caught.value.message
    assert not out.exists()
    key = exported.archive.iter_records("ead1").__next__().key
    run_export(exported.archive, "ead3", ExportRequest("ead1", out, record=key))
    assert out.is_file()


def test_a_subtree_imported_back_goes_back_under_its_parent(
    archive: Archive, schema: etree.XMLSchema, tmp_path: Path
) -> None:
    run_import(archive, "ead", shared_data("ead", "anf", "FRAN_IR_003500.xml"))
    before = snapshot(archive)
    key = _key(archive, "FRAN_IR_003500#d_1_2")
    out = tmp_path / "d_1_2.xml"
    run_export(archive, "ead3", ExportRequest("ead1", out, record=key))
    assert schema.validate(etree.parse(str(out)))

    again = run_import(archive, "ead", out)

    assert again.created == 0
    assert snapshot(archive) == before  # part of, order, ids: all as they were
