"""EAC-CPF export of the 101 real ANF authority records: schema-valid, restricted records
handled, and imported back into the same names, dates, types, histories and relations.

The EAC-CPF 2010 schema is read from ``shared/data/schemas/eac-cpf-2010.xsd``; the two schemas
it imports by URL (XLink, the XML namespace) resolve to the small local copies in
``tests/data/schemas/``: nothing is fetched.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from app.core.archive import Archive, RecordKey
from app.core.archive.bulk import NewRecord
from app.core.archive.exporters import RESTRICTED_NOTICE, ExportRequest, run_export
from app.core.archive.importers.authorities import AGENTS, SOURCE
from app.core.archive.importers.base import external_keys
from app.core.errors import ArxiuError
from tests.conftest import REPO, shared_data
from tests.core.archive.exporters.round_trip import Exported, round_trip
from tests.core.archive.xml_query import XPath

NS = {"e": "urn:isbn:1-931666-33-4", "x": "http://www.w3.org/1999/xlink"}
LOCAL_SCHEMAS = {
    "http://www.loc.gov/standards/xlink/xlink.xsd": REPO / "tests/data/schemas/xlink.xsd",
    "http://www.w3.org/2007/08/xml.xsd": REPO / "tests/data/schemas/xml.xsd",
}
XML = XPath(NS)
nodes, strings = XML.nodes, XML.strings


class LocalSchemas(etree.Resolver):
    """Resolves the schema's two remote imports to local files; refuses any other URL."""

    def resolve(self, system_url: str, public_id: str, context: Any = None) -> Any:
        """The local copy of ``system_url`` (a relative path is left to lxml)."""
        if system_url in LOCAL_SCHEMAS:
            found = LOCAL_SCHEMAS[system_url]
            return self.resolve_filename(str(found), context)  # type: ignore[attr-defined]
        if "://" in system_url:
            raise AssertionError(f"the schema asked for {system_url}, which is never fetched")
        return None


@pytest.fixture(scope="module")
def schema() -> etree.XMLSchema:
    """The EAC-CPF 2010 schema, loaded offline."""
    parser = etree.XMLParser(no_network=True, resolve_entities=False, load_dtd=False)
    parser.resolvers.add(LocalSchemas())
    return etree.XMLSchema(etree.parse(str(shared_data("schemas", "eac-cpf-2010.xsd")), parser))


RESTRICTED = "FRAN_NP_050312"


def restrict_one(archive: Archive) -> None:
    """Make the record ``RESTRICTED`` restricted."""
    key = archive.external_key(SOURCE, RESTRICTED)
    assert key is not None
    values = archive.get_record(key).values
    archive.upsert_records(
        [NewRecord(AGENTS, values, external_id=RESTRICTED, restricted=True)], source=SOURCE
    )


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Exported]:
    """ANF imported, one record made restricted, all exported, the export imported anew."""
    work = tmp_path_factory.mktemp("eac")
    request = ExportRequest(AGENTS, work / "out", include_restricted=True)
    sources = [shared_data("eac-cpf", "anf")]
    with round_trip(work, ("eac-cpf", "eac-cpf"), sources, request, restrict_one) as done:
        yield done


def test_every_file_validates_against_the_schema(
    exported: Exported, schema: etree.XMLSchema
) -> None:
    files = sorted(exported.out.glob("*.xml"))

    assert len(files) == exported.summary.records == 101
    for file in files:
        assert schema.validate(etree.parse(str(file))), (file.name, schema.error_log)
    originals = sorted(f.name for f in shared_data("eac-cpf", "anf").glob("*.xml"))
    assert [f.name for f in files] == originals  # one file per record, named by its recordId


def _comparable(archive: Archive, key: RecordKey, ids: dict[RecordKey, str]) -> dict[str, Any]:
    """A record's values with relations as the external ids of their targets."""
    out: dict[str, Any] = {}
    for tipo, items in archive.get_record(key).values.items():
        if tipo == "agent16":
            continue  # the source file's name
        values = []
        for item in items:
            value = item["value"]
            if isinstance(value, dict):
                target = RecordKey(value["section_tipo"], value["section_id"])
                value = (ids.get(target, str(target)), value.get("role"))
            values.append((item["lang"], value))
        out[tipo] = values
    return out


def test_the_export_imports_back_field_by_field(exported: Exported) -> None:
    first = external_keys(exported.archive, SOURCE)
    second = external_keys(exported.again, SOURCE)
    first_ids = {key: i for i, key in first.items()}
    second_ids = {key: i for i, key in second.items()}

    agents = sorted(i for i, key in first.items() if key.section_tipo == AGENTS)
    assert agents == sorted(i for i, key in second.items() if key.section_tipo == AGENTS)
    for record_id in agents:
        before = _comparable(exported.archive, first[record_id], first_ids)
        after = _comparable(exported.again, second[record_id], second_ids)
        assert after == before, record_id
    links = sum(len(exported.archive.links_from(first[i])) for i in agents)
    assert links > 0
    assert links == sum(len(exported.again.links_from(second[i])) for i in agents)


def test_a_restricted_record_says_so_first(exported: Exported, schema: etree.XMLSchema) -> None:
    path = exported.out / f"{RESTRICTED}.xml"
    text = path.read_text(encoding="utf-8")
    doc = etree.parse(str(path))

    assert RESTRICTED_NOTICE in text.splitlines()[0]
    assert doc.findtext("e:control/e:conventionDeclaration/e:citation", namespaces=NS) == (
        RESTRICTED_NOTICE
    )
    assert exported.summary.restricted_included == 1
    again = exported.again.external_key(SOURCE, RESTRICTED)
    assert again is not None and exported.again.is_restricted(again)  # imported back as such
    vitet = exported.again.external_key(SOURCE, "FRAN_NP_051234")
    assert vitet is not None and not exported.again.is_restricted(vitet)
    other = (exported.out / "FRAN_NP_051234.xml").read_text(encoding="utf-8")
    assert RESTRICTED_NOTICE not in other


def test_restricted_records_are_left_out_unless_asked_for(
    exported: Exported, tmp_path: Path
) -> None:
    out = tmp_path / "open"

    summary = run_export(exported.archive, "eac-cpf", ExportRequest(AGENTS, out))

    assert summary.restricted_left_out == 1 and summary.records == 100
    assert not (out / f"{RESTRICTED}.xml").exists()
    assert not any(RESTRICTED_NOTICE in f.read_text(encoding="utf-8") for f in out.glob("*.xml"))


def test_one_record_to_one_file_with_its_relations(
    exported: Exported, schema: etree.XMLSchema, tmp_path: Path
) -> None:
    key = exported.archive.external_key(SOURCE, "FRAN_NP_051234")
    assert key is not None
    original = etree.parse(str(shared_data("eac-cpf", "anf", "FRAN_NP_051234.xml")))
    out = tmp_path / "vitet.xml"

    summary = run_export(exported.archive, "eac-cpf", ExportRequest(AGENTS, out, record=key))

    doc = etree.parse(str(out))
    assert summary.records == 1 and schema.validate(doc)
    for path in ("//e:cpfRelation", "//e:resourceRelation", "//e:identity/e:nameEntry"):
        assert len(nodes(doc, path)) == len(nodes(original, path))
    hrefs = strings(doc, "//e:resourceRelation/@x:href")
    assert hrefs == strings(original, "//e:resourceRelation/@x:href")
    assert strings(doc, "//e:existDates//e:fromDate/@standardDate") == ["1802-10-18"]


def test_many_authorities_are_not_written_into_one_file_name(
    exported: Exported, tmp_path: Path
) -> None:
    out = tmp_path / "agents.xml"
    with pytest.raises(ArxiuError) as caught:
        run_export(exported.archive, "eac-cpf", ExportRequest(AGENTS, out))
    assert caught.value.code == "export.one_file_named" and not out.exists()


def test_only_agents_are_exported_as_eac_cpf(exported: Exported, tmp_path: Path) -> None:
    with pytest.raises(ArxiuError) as caught:
        run_export(exported.archive, "eac-cpf", ExportRequest("place1", tmp_path / "x"))

    assert caught.value.code == "export.section_unsupported"
