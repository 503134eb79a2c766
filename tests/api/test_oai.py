"""The OAI-PMH provider at ``/oai``: the protocol on the demo archive, and a real harvest of it.

What is "open" is computed here independently, from the archive's flags and links in Python:
a record is served when neither it nor any record it links to is restricted (its section's
flag or its own).
"""

from __future__ import annotations

import json
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from lxml import etree

from app.api.context import ApiContext
from app.api.oai import PAGE_SIZE, ListQuery
from app.api.server import create_app
from app.api.users import UserStore
from app.core.archive import Archive, open_archive
from app.core.archive.importers import run_import
from app.core.archive.importers.base import external_keys
from app.core.archive.importers.ead_fields import PART_OF, TITLE
from app.core.archive.importers.oai_pmh import (
    RetryPolicy,
    harvest,
    harvest_key,
    normalise_base_url,
)
from app.core.archive.model import RecordKey
from app.core.archive.postgres.connect import database_name
from app.core.archive.postgres.transfer import copy_archive
from tests.api.conftest import Live, start_server, stop_server
from tests.api.serving import serve_env, serve_url, start_serve
from tests.conftest import shared_data

NS = {"o": "http://www.openarchives.org/OAI/2.0/", "dc": "http://purl.org/dc/elements/1.1/"}
OLD = "2025-01-01T00:00:00+00:00"
FLAGGED = RecordKey("tp1", 30)
"""An open-section record the tests flag restricted."""
POINTING = RecordKey("rsc197", 2)
"""An open record the tests make point at a restricted oral history."""
HUGE_TOKEN = ListQuery("ListRecords", "oai_dc", None, None, "2099-01-01T00:00:00").token(
    ("rsc197", 10**30), 0
)
"""A well-formed token whose key no SQLite integer can hold."""


def restricted_keys(archive: Archive) -> set[RecordKey]:
    """The restricted records: in a restricted section, or flagged themselves."""
    restricted = {s.tipo for s in archive.sections() if s.restricted}
    return {r.key for r in archive.iter_records() if r.section_tipo in restricted or r.restricted}


def open_keys(archive: Archive) -> set[RecordKey]:
    """The records that may leave: not restricted, linking to nothing restricted."""
    closed = restricted_keys(archive)
    return {
        r.key
        for r in archive.iter_records()
        if r.key not in closed
        and not any(link.target in closed for link in archive.links_from(r.key))
    }


def prepare(folder: Path, demo: Path) -> None:
    """A copy of the demo with one open record flagged restricted, one pointing at a restricted
    record, and every datestamp set to 2025-01-01."""
    shutil.copytree(demo, folder)
    with open_archive(folder) as archive:
        archive.update_record(
            POINTING,
            {"rsc95": [{"lang": "lg-nolan", "value": {"section_tipo": "oh1", "section_id": 1}}]},
        )
        archive.db.write(
            lambda c: c.execute(
                "UPDATE records SET restricted = 1 WHERE section_tipo = ? AND section_id = ?",
                (FLAGGED.section_tipo, FLAGGED.section_id),
            )
        )
        archive.db.write(lambda c: c.execute("UPDATE records SET updated_at = ?", (OLD,)))


@pytest.fixture
def served(tmp_path: Path, demo_archive_dir: Path) -> Path:
    """The prepared copy of the demo archive."""
    folder = tmp_path / "demo"
    prepare(folder, demo_archive_dir)
    return folder


@pytest.fixture
def oai(served: Path, tmp_path: Path) -> Iterator[Live]:
    """The API app over the copy, on a loopback port."""
    ctx = ApiContext(archive_dir=served, users=UserStore(tmp_path / "users.json"))
    live = start_server(create_app(ctx))
    yield live
    stop_server(live)


def ask(live: Live, **params: str) -> etree._Element:
    """GET ``/oai`` with ``params``; the parsed response (HTTP 200 always)."""
    response = httpx.get(live.url + "/oai", params=params, timeout=30)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/xml")
    return etree.fromstring(response.content)


def error_code(root: etree._Element) -> str | None:
    """The OAI error code of a response, if any."""
    found = root.find("o:error", NS)
    return None if found is None else found.get("code")


def texts(root: etree._Element, path: str) -> list[str]:
    """The text of every node at ``path``."""
    return [node.text or "" for node in root.iterfind(path, NS)]


def identifier(served: Path, key: RecordKey) -> str:
    """The OAI identifier of ``key`` in the served archive."""
    return f"oai:arxiu:{served.name}:{key}"


# -- the protocol ------------------------------------------------------------------------------


def test_identify_formats_and_sets(oai: Live, served: Path) -> None:
    root = ask(oai, verb="Identify")
    assert error_code(root) is None
    assert texts(root, "o:Identify/o:baseURL") == [oai.url + "/oai"]
    assert texts(root, "o:Identify/o:granularity") == ["YYYY-MM-DDThh:mm:ssZ"]
    assert texts(root, "o:Identify/o:earliestDatestamp") == ["2025-01-01T00:00:00Z"]
    formats = ask(oai, verb="ListMetadataFormats")
    assert "oai_dc" in texts(formats, ".//o:metadataPrefix")
    sets = ask(oai, verb="ListSets")
    with open_archive(served) as archive:
        expected = {s.tipo: s.label("lg-eng") for s in archive.sections() if not s.restricted}
        assert any(s.restricted for s in archive.sections())
    specs = texts(sets, ".//o:setSpec")
    assert dict(zip(specs, texts(sets, ".//o:setName"), strict=True)) == expected
    assert "oh1" not in specs


def test_list_records_pages_through_exactly_the_open_records(oai: Live, served: Path) -> None:
    with open_archive(served) as archive:
        expected = {identifier(served, k) for k in open_keys(archive)}
        total = archive.count_records()
    assert 0 < len(expected) < total
    assert identifier(served, FLAGGED) not in expected
    assert identifier(served, POINTING) not in expected
    seen: list[str] = []
    root = ask(oai, verb="ListRecords", metadataPrefix="oai_dc")
    pages = 1
    while True:
        assert error_code(root) is None
        seen += texts(root, ".//o:record/o:header/o:identifier")
        token = root.find(".//o:resumptionToken", NS)
        assert token is not None and token.get("completeListSize") == str(len(expected))
        if not token.text:
            break
        assert int(token.get("cursor") or -1) == (pages - 1) * PAGE_SIZE
        root = ask(oai, verb="ListRecords", resumptionToken=token.text)
        pages += 1
    assert pages == -(-len(expected) // PAGE_SIZE)
    assert sorted(seen) == sorted(expected)
    headers = ask(oai, verb="ListIdentifiers", metadataPrefix="oai_dc", set="tp1")
    with open_archive(served) as archive:
        places = {identifier(served, k) for k in open_keys(archive) if k.section_tipo == "tp1"}
    assert set(texts(headers, ".//o:header/o:identifier")) == places
    assert set(texts(headers, ".//o:header/o:setSpec")) == {"tp1"}


def test_from_and_until_select_by_datestamp(oai: Live, served: Path) -> None:
    changed = RecordKey("tp1", 3)
    with open_archive(served) as archive:
        archive.update_record(changed, {"tp3": [{"lang": "lg-eng", "value": "Renamed"}]})
        opened = len(open_keys(archive))
    recent = ask(oai, verb="ListIdentifiers", metadataPrefix="oai_dc", **{"from": "2025-06-01"})
    assert texts(recent, ".//o:identifier") == [identifier(served, changed)]
    older = ask(oai, verb="ListIdentifiers", metadataPrefix="oai_dc", until="2025-01-01")
    token = older.find(".//o:resumptionToken", NS)
    assert token is not None and token.get("completeListSize") == str(opened - 1)
    exact = ask(
        oai,
        verb="ListIdentifiers",
        metadataPrefix="oai_dc",
        **{"from": "2025-01-01T00:00:00Z", "until": "2025-01-01T00:00:00Z"},
    )
    assert error_code(exact) is None
    future = ask(oai, verb="ListRecords", metadataPrefix="oai_dc", **{"from": "2099-01-01"})
    assert error_code(future) == "noRecordsMatch"


def test_get_record_serves_open_records_only(oai: Live, served: Path) -> None:
    key = RecordKey("rsc197", 1)
    with open_archive(served) as archive:
        label = archive.record_label(key)
    root = ask(oai, verb="GetRecord", identifier=identifier(served, key), metadataPrefix="oai_dc")
    assert error_code(root) is None
    assert label in texts(root, ".//dc:title")
    assert texts(root, ".//o:header/o:identifier") == [identifier(served, key)]
    for hidden in (
        RecordKey("oh1", 1),
        FLAGGED,
        POINTING,
        RecordKey("rsc197", 99999),
        RecordKey("rsc197", 10**30),
    ):
        refused = ask(
            oai, verb="GetRecord", identifier=identifier(served, hidden), metadataPrefix="oai_dc"
        )
        assert error_code(refused) == "idDoesNotExist"
    refused = ask(oai, verb="ListMetadataFormats", identifier=identifier(served, FLAGGED))
    assert error_code(refused) == "idDoesNotExist"
    other = ask(
        oai, verb="GetRecord", identifier="oai:arxiu:elsewhere:rsc197/1", metadataPrefix="oai_dc"
    )
    assert error_code(other) == "idDoesNotExist"
    marc = ask(oai, verb="GetRecord", identifier=identifier(served, key), metadataPrefix="marc21")
    assert error_code(marc) == "cannotDisseminateFormat"
    restricted_set = ask(oai, verb="ListRecords", metadataPrefix="oai_dc", set="oh1")
    assert error_code(restricted_set) == "noRecordsMatch"


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({}, "badVerb"),
        ({"verb": "Harvest"}, "badVerb"),
        ({"verb": "Identify", "extra": "1"}, "badArgument"),
        ({"verb": "GetRecord", "metadataPrefix": "oai_dc"}, "badArgument"),
        ({"verb": "ListRecords"}, "badArgument"),
        ({"verb": "ListRecords", "metadataPrefix": "oai_dc", "from": "yesterday"}, "badArgument"),
        ({"verb": "ListRecords", "metadataPrefix": "oai_dc", "from": "2025-02-30"}, "badArgument"),
        (
            {
                "verb": "ListRecords",
                "metadataPrefix": "oai_dc",
                "from": "2025-02-01",
                "until": "2025-01-01",
            },
            "badArgument",
        ),
        (
            {
                "verb": "ListRecords",
                "metadataPrefix": "oai_dc",
                "from": "2025-01-01",
                "until": "2025-02-01T00:00:00Z",
            },
            "badArgument",
        ),
        (
            {"verb": "ListRecords", "resumptionToken": "x", "metadataPrefix": "oai_dc"},
            "badArgument",
        ),
        ({"verb": "ListRecords", "resumptionToken": "not-a-token"}, "badResumptionToken"),
        ({"verb": "ListIdentifiers", "resumptionToken": "e30"}, "badResumptionToken"),
        ({"verb": "ListRecords", "resumptionToken": HUGE_TOKEN}, "badResumptionToken"),
        ({"verb": "ListSets", "resumptionToken": "abc"}, "badResumptionToken"),
        ({"verb": "ListRecords", "metadataPrefix": "ead9"}, "cannotDisseminateFormat"),
    ],
)
def test_protocol_errors(oai: Live, params: dict[str, str], code: str) -> None:
    root = ask(oai, **params)
    assert error_code(root) == code
    request = root.find("o:request", NS)
    assert request is not None and request.text == oai.url + "/oai"
    if code in {"badVerb", "badArgument"}:
        assert dict(request.attrib) == {}
    assert root.find("o:ListRecords", NS) is None


def test_repeated_arguments_post_and_the_host_allow_list(oai: Live) -> None:
    url = oai.url + "/oai"
    twice = httpx.get(url + "?verb=Identify&verb=Identify", timeout=30)
    assert error_code(etree.fromstring(twice.content)) == "badVerb"
    repeated = httpx.get(url + "?verb=ListSets&resumptionToken=a&resumptionToken=b", timeout=30)
    assert error_code(etree.fromstring(repeated.content)) == "badArgument"
    posted = httpx.post(url, data={"verb": "ListSets"}, timeout=30)
    assert error_code(etree.fromstring(posted.content)) is None
    foreign = httpx.get(url, params={"verb": "Identify"}, headers={"Host": "evil.example"})
    assert foreign.status_code == 421


def test_a_token_from_another_verb_is_refused(oai: Live) -> None:
    root = ask(oai, verb="ListIdentifiers", metadataPrefix="oai_dc")
    token = root.find(".//o:resumptionToken", NS)
    assert token is not None and token.text
    assert (
        error_code(ask(oai, verb="ListRecords", resumptionToken=token.text)) == "badResumptionToken"
    )
    assert error_code(ask(oai, verb="ListIdentifiers", resumptionToken=token.text)) is None


# -- two processes ------------------------------------------------------------------------------


def restricted_strings(archive: Archive) -> set[str]:
    """Texts of the restricted records that appear in no other record's text."""

    def strings(values: Any) -> set[str]:
        found: set[str] = set()
        if isinstance(values, str) and len(values) >= 8:
            found.add(values)
        elif isinstance(values, dict):
            for item in values.values():
                found |= strings(item)
        elif isinstance(values, list):
            for item in values:
                found |= strings(item)
        return found

    closed_keys = restricted_keys(archive)
    closed: set[str] = set()
    shown = []
    for record in archive.iter_records():
        if record.key in closed_keys:
            closed |= strings(record.values)
        else:
            shown.append(json.dumps(record.values, ensure_ascii=False))
    text = "\n".join(shown)
    return {s for s in closed if json.dumps(s, ensure_ascii=False)[1:-1] not in text}


def test_another_process_harvests_the_open_records_and_nothing_restricted(
    tmp_path: Path, served: Path, arxiu_home: Path
) -> None:
    with open_archive(served) as archive:
        expected = {identifier(served, k) for k in open_keys(archive)}
        secrets = restricted_strings(archive)
    assert len(secrets) > 40  # every oral history holds text of its own
    process = start_serve(["--port", "0", "--archive", str(served)], serve_env(arxiu_home))
    try:
        base = serve_url(process).split("/dedalo/", 1)[0] + "/oai"
        with open_archive(tmp_path / "harvester", create=True) as mine:
            first = harvest(mine, base, retry=RetryPolicy(attempts=2, timeout_s=30))
            assert first.error is None
            assert first.created == len(expected) and first.read == len(expected)
            source = normalise_base_url(base)
            assert set(external_keys(mine, source)) == expected
            dump = json.dumps([r.values for r in mine.iter_records()], ensure_ascii=False)
            assert mine.meta(harvest_key(source, None, "oai_dc"))  # the next one sends from=
            second = harvest(mine, base, retry=RetryPolicy(attempts=2, timeout_s=30))
            assert second.error is None
            assert (second.read, second.created, second.updated) == (0, 0, 0)
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert f"OAI-PMH (open records) at {base}" in err
    leaked = sorted(s for s in secrets if json.dumps(s, ensure_ascii=False)[1:-1] in dump)
    assert leaked == []
    assert ":oh1/" not in dump


# -- EAD3 ---------------------------------------------------------------------------------------

EAD3 = "http://ead3.archivists.org/schema/"
EAD_FILES = ("FRAN_IR_054848.xml", "FRAN_IR_055604.xml")
CLOSED_COMPONENT = "FRAN_IR_055604#c2ndr7pqqhdz-1b9nbz25cnqnr"
"""A component (with five below it) the tests flag restricted."""
CHANGED = "FRAN_IR_055604#c2ndr7pqqoix--i0lypel8t4il"
"""An open component the two-process test changes in the served archive."""


def source_counts() -> dict[str, int]:
    """EADID → ``c`` elements in its file, less the flagged component's subtree (XPath)."""
    counts = {}
    parser = etree.XMLParser(load_dtd=False, no_network=True)
    for name in EAD_FILES:
        root = etree.parse(str(shared_data("ead", "anf", name)), parser).getroot()
        eadid = root.findtext(".//eadid")
        assert eadid is not None
        closed = 0
        if CLOSED_COMPONENT.startswith(eadid + "#"):
            component_id = CLOSED_COMPONENT.split("#", 1)[1]
            closed = int(root.xpath(f"count(//c[@id='{component_id}']/descendant-or-self::c)"))
        assert int(root.xpath("count(//archdesc)")) == 1
        counts[eadid] = int(root.xpath("count(//c)")) - closed
    return counts


def import_fonds(tmp_path: Path) -> Path:
    """An archive of the two ANF finding aids with one component flagged restricted."""
    folder = tmp_path / "fonds"
    files = tmp_path / "ead"
    files.mkdir()
    for name in EAD_FILES:
        shutil.copy(shared_data("ead", "anf", name), files / name)
    with open_archive(folder, create=True) as archive:
        summary = run_import(archive, "ead", files)
        assert summary.error is None and not summary.skipped
        closed = external_keys(archive, "ead")[CLOSED_COMPONENT]
        archive.db.write(
            lambda c: c.execute(
                "UPDATE records SET restricted = 1 WHERE section_tipo = ? AND section_id = ?",
                (closed.section_tipo, closed.section_id),
            )
        )
    return folder


@pytest.fixture
def fonds(tmp_path: Path) -> Iterator[tuple[Live, Path]]:
    """Two ANF finding aids imported, one component flagged restricted, served on loopback."""
    folder = import_fonds(tmp_path)
    ctx = ApiContext(archive_dir=folder, users=UserStore(tmp_path / "users.json"))
    live = start_server(create_app(ctx))
    yield live, folder
    stop_server(live)


def test_ead_lists_each_finding_aid_with_its_open_hierarchy(fonds: tuple[Live, Path]) -> None:
    live, folder = fonds
    assert "ead" in texts(ask(live, verb="ListMetadataFormats"), ".//o:metadataPrefix")
    root = ask(live, verb="ListRecords", metadataPrefix="ead")
    assert error_code(root) is None
    aids = root.findall(f".//o:metadata/{{{EAD3}}}ead", NS)
    counts = {
        aid.findtext(f".//{{{EAD3}}}recordid"): len(aid.findall(f".//{{{EAD3}}}c")) for aid in aids
    }
    assert counts == source_counts()
    with open_archive(folder) as archive:
        keys = external_keys(archive, "ead")
        component = keys["FRAN_IR_055604#c2ndr7pqqoix--i0lypel8t4il"]
        closed = keys[CLOSED_COMPONENT]
    one = ask(
        live, verb="GetRecord", metadataPrefix="ead", identifier=identifier(folder, component)
    )
    assert len(one.findall(f".//{{{EAD3}}}ead")) == 1
    hidden = ask(
        live, verb="GetRecord", metadataPrefix="ead", identifier=identifier(folder, closed)
    )
    assert error_code(hidden) == "idDoesNotExist"
    body = etree.tostring(root, encoding="unicode")
    assert "c2ndr7pqqhdz-1b9nbz25cnqnr" not in body


def test_a_finding_aid_holding_a_withheld_record_is_offered_in_oai_dc_only(
    fonds: tuple[Live, Path],
) -> None:
    live, folder = fonds
    with open_archive(folder) as archive:
        keys = external_keys(archive, "ead")
        agent = external_keys(archive, "authority")["FRAN_NP_005422"]
        archive.db.write(
            lambda c: c.execute(
                "UPDATE records SET restricted = 1 WHERE section_tipo = ? AND section_id = ?",
                (agent.section_tipo, agent.section_id),
            )
        )
        component = keys["FRAN_IR_055604#c2ndr7pqqoix--i0lypel8t4il"]
        archive.update_record(
            component, {"ead22": [{"lang": "lg-nolan", "value": agent.to_locator()}]}
        )
    root = identifier(folder, keys["FRAN_IR_055604"])
    formats = ask(live, verb="ListMetadataFormats", identifier=root)
    assert texts(formats, ".//o:metadataPrefix") == ["oai_dc"]
    refused = ask(live, verb="GetRecord", metadataPrefix="ead", identifier=root)
    assert error_code(refused) == "cannotDisseminateFormat"
    assert error_code(ask(live, verb="GetRecord", metadataPrefix="oai_dc", identifier=root)) is None
    citing = identifier(folder, keys["FRAN_IR_054848"])  # its origination names the agent
    assert error_code(ask(live, verb="GetRecord", metadataPrefix="oai_dc", identifier=citing)) == (
        "idDoesNotExist"
    )
    assert error_code(ask(live, verb="ListRecords", metadataPrefix="ead")) == "noRecordsMatch"


def parents(archive: Archive, source: str) -> dict[str, tuple[str | None, str | None]]:
    """External id → (its parent's external id, its first title), of the ``ead1`` records
    imported under ``source``."""
    keys = external_keys(archive, source)
    names = {key: name for name, key in keys.items()}
    found: dict[str, tuple[str | None, str | None]] = {}
    for name, key in keys.items():
        up = [link.target for link in archive.links_from(key) if link.field_tipo == PART_OF]
        record = archive.get_record(key)
        found[name] = (names.get(up[0]) if up else None, record.text(TITLE, "lg-fra"))
    return found


def test_another_process_serves_finding_aids_in_ead_to_the_harvester_and_nothing_restricted(
    tmp_path: Path, arxiu_home: Path
) -> None:
    folder = import_fonds(tmp_path)
    # OAI-PMH's ``from`` is inclusive at the repository's granularity (seconds): a first harvest
    # answered within the second of the import's last writes (a server that starts in under a
    # second) is asked that second again and sent those records again. The first harvest
    # starts in a later second, so that "only changes" below means no record at all.
    time.sleep(1.1)
    with open_archive(folder) as archive:
        served = parents(archive, "ead")
        keys = external_keys(archive, "ead")
    closed = {CLOSED_COMPONENT}
    while grown := {n for n, (up, _) in served.items() if up in closed} - closed:
        closed |= grown
    assert len(closed) == 6  # the flagged component and the five below it
    expected = {n: v for n, v in served.items() if n not in closed}
    assert len(expected) == sum(source_counts().values()) + len(EAD_FILES)
    secrets = {title for n, (_, title) in served.items() if n in closed and title}
    process = start_serve(["--port", "0", "--archive", str(folder)], serve_env(arxiu_home))
    policy = RetryPolicy(attempts=2, timeout_s=60)
    try:
        base = serve_url(process).split("/dedalo/", 1)[0] + "/oai"
        with open_archive(tmp_path / "harvester", create=True) as mine:
            first = harvest(mine, base, metadata_prefix="ead", retry=policy)
            assert first.error is None and first.skipped == []
            assert first.sections["ead1"] == first.read == len(expected)
            assert first.created == mine.count_records()  # the components and their names
            source = normalise_base_url(base)
            assert parents(mine, source) == expected  # the same hierarchy, the same titles
            dump = json.dumps([r.values for r in mine.iter_records()], ensure_ascii=False)
            second = harvest(mine, base, metadata_prefix="ead", retry=policy)
            assert second.error is None
            assert (second.read, second.created, second.updated) == (0, 0, 0)

            with open_archive(folder) as archive:  # a component deep in one finding aid changes
                title = [{"lang": "lg-fra", "value": "Dossier revu aux Archives nationales"}]
                archive.update_record(keys[CHANGED], {TITLE: title}, audit={"actor": "anna"})
            third = harvest(mine, base, metadata_prefix="ead", retry=policy)
            assert third.error is None
            base_id = CHANGED.partition("#")[0]
            units = sum(1 for n in expected if n.partition("#")[0] == base_id)
            assert (third.read, third.created, third.updated) == (units, 0, 1)
            changed = mine.get_record(external_keys(mine, source)[CHANGED])
            assert changed.text(TITLE, "lg-fra") == title[0]["value"]
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert secrets and not {s for s in secrets if s in dump}
    assert not any(n.split("#")[-1] in dump for n in closed)


# -- a shared archive ---------------------------------------------------------------------------


def serve(archive_dir: Path | str, users: Path) -> Live:
    """The API app over ``archive_dir`` (a folder or a ``postgresql://`` URL), on loopback."""
    return start_server(create_app(ApiContext(archive_dir=archive_dir, users=UserStore(users))))


def harvest_identifiers(live: Live, **params: str) -> list[str]:
    """Every identifier of a ``ListIdentifiers`` list, following its resumption tokens."""
    seen: list[str] = []
    root = ask(live, verb="ListIdentifiers", **params)
    while True:
        assert error_code(root) is None
        seen += texts(root, ".//o:header/o:identifier")
        token = root.find(".//o:resumptionToken", NS)
        if token is None or not token.text:
            return seen
        root = ask(live, verb="ListIdentifiers", resumptionToken=token.text)


def key_part(identifiers: list[str], repository: str) -> list[str]:
    """The ``section_tipo/section_id`` of each identifier of ``repository``, sorted."""
    prefix = f"oai:arxiu:{repository}:"
    assert all(i.startswith(prefix) for i in identifiers)
    return sorted(i[len(prefix) :] for i in identifiers)


def test_a_copy_on_postgresql_serves_the_same_open_records(
    oai: Live, served: Path, pg_database: str, tmp_path: Path
) -> None:
    copy_archive(str(served), pg_database)
    repository = database_name(pg_database)
    with open_archive(served) as archive:
        expected = sorted(str(k) for k in open_keys(archive))
    shared = serve(pg_database, tmp_path / "users-pg.json")
    try:
        on_sqlite = harvest_identifiers(oai, metadataPrefix="oai_dc")
        on_postgres = harvest_identifiers(shared, metadataPrefix="oai_dc")
        assert key_part(on_sqlite, served.name) == key_part(on_postgres, repository) == expected
        assert not {str(FLAGGED), str(POINTING)} & set(expected)
        assert not [k for k in expected if k.startswith("oh1/")]
        for hidden in (FLAGGED, POINTING, RecordKey("oh1", 1)):
            refused = ask(
                shared,
                verb="GetRecord",
                identifier=f"oai:arxiu:{repository}:{hidden}",
                metadataPrefix="oai_dc",
            )
            assert error_code(refused) == "idDoesNotExist"
        shown = ask(
            shared,
            verb="GetRecord",
            identifier=f"oai:arxiu:{repository}:rsc197/1",
            metadataPrefix="oai_dc",
        )
        assert error_code(shown) is None
        for live in (oai, shared):  # datestamps as on SQLite (timestamptz there)
            identify = ask(live, verb="Identify")
            assert texts(identify, ".//o:earliestDatestamp") == ["2025-01-01T00:00:00Z"]
            exact = {"from": "2025-01-01T00:00:00Z", "until": "2025-01-01T00:00:00Z"}
            assert len(harvest_identifiers(live, metadataPrefix="oai_dc", **exact)) == len(expected)
            later = ask(
                live, verb="ListIdentifiers", metadataPrefix="oai_dc", **{"from": "2025-01-02"}
            )
            assert error_code(later) == "noRecordsMatch"
            before = ask(live, verb="ListIdentifiers", metadataPrefix="oai_dc", until="2024-12-31")
            assert error_code(before) == "noRecordsMatch"
        changed = RecordKey("tp1", 3)
        with open_archive(pg_database) as archive:
            archive.update_record(changed, {"tp3": [{"lang": "lg-eng", "value": "Renamed"}]})
        recent = harvest_identifiers(shared, metadataPrefix="oai_dc", **{"from": "2025-06-01"})
        assert recent == [f"oai:arxiu:{repository}:{changed}"]
        older = harvest_identifiers(shared, metadataPrefix="oai_dc", until="2025-01-01")
        assert len(older) == len(expected) - 1
    finally:
        stop_server(shared)


def test_a_copy_on_postgresql_serves_each_finding_aid_in_ead_as_on_sqlite(
    fonds: tuple[Live, Path], pg_database: str, tmp_path: Path
) -> None:
    live, folder = fonds
    copy_archive(str(folder), pg_database)
    repository = database_name(pg_database)
    shared = serve(pg_database, tmp_path / "users-pg.json")
    try:
        on_sqlite = harvest_identifiers(live, metadataPrefix="ead")
        on_postgres = harvest_identifiers(shared, metadataPrefix="ead")
        assert key_part(on_postgres, repository) == key_part(on_sqlite, folder.name)
        assert len(on_postgres) == len(EAD_FILES)
        root = ask(shared, verb="ListRecords", metadataPrefix="ead")
        assert error_code(root) is None
        aids = root.findall(f".//o:metadata/{{{EAD3}}}ead", NS)
        counts = {
            aid.findtext(f".//{{{EAD3}}}recordid"): len(aid.findall(f".//{{{EAD3}}}c"))
            for aid in aids
        }
        assert counts == source_counts()
        assert "c2ndr7pqqhdz-1b9nbz25cnqnr" not in etree.tostring(root, encoding="unicode")
        on_each = [
            ask(server, verb="ListIdentifiers", metadataPrefix="ead") for server in (live, shared)
        ]
        sqlite_stamps, postgres_stamps = (texts(r, ".//o:datestamp") for r in on_each)
        assert sqlite_stamps == postgres_stamps and len(sqlite_stamps) == len(EAD_FILES)
    finally:
        stop_server(shared)


# -- a catalogue kept in a spreadsheet, served in ead ---------------------------------------------

ATOM_TABLE = (
    "legacyId,parentId,identifier,title,levelOfDescription,accessConditions,culture\n"
    "F1,,ES-AMV-1,Fons Puig,Fonds,Open,ca\n"
    "S1,F1,ES-AMV-1.1,Correspondència,Series,Closed until 2030,ca\n"
    "I1,S1,ES-AMV-1.1.1,Carta a Gaudí,Item,,ca\n"
    "S2,F1,ES-AMV-1.2,Plànols,Series,,ca\n"
    "I2,S2,ES-AMV-1.2.1,Plànol de la casa,Item,,ca\n"
)
"""AtoM's template: a fonds with a closed series (and its item) and an open one."""


@pytest.fixture
def catalogue(tmp_path: Path) -> Iterator[tuple[Live, Path, str]]:
    """The AtoM table imported into a fresh archive, served on loopback; its section."""
    folder = tmp_path / "cataleg"
    table = tmp_path / "fons-puig.csv"
    table.write_text(ATOM_TABLE, encoding="utf-8")
    with open_archive(folder, create=True) as archive:
        [section] = [s for s in run_import(archive, "csv", table).sections if s.startswith("csv")]
    ctx = ApiContext(archive_dir=folder, users=UserStore(tmp_path / "users.json"))
    live = start_server(create_app(ctx))
    yield live, folder, section
    stop_server(live)


def test_a_spreadsheet_catalogue_is_served_in_ead_without_its_closed_series(
    catalogue: tuple[Live, Path, str],
) -> None:
    """An aggregator asking for EAD (Archives Portal Europe harvests so) gets the table's fonds
    as one finding aid: the open series and its item nested, the closed series and what is
    under it absent; a component's GetRecord is its own subtree; the closed one does not
    exist for the harvester."""
    live, folder, section = catalogue

    root = ask(live, verb="ListRecords", metadataPrefix="ead", set=section)

    assert error_code(root) is None
    [aid] = root.findall(f".//o:metadata/{{{EAD3}}}ead", NS)
    assert aid.findtext(f"{{{EAD3}}}control/{{{EAD3}}}recordid") == "ES-AMV-1"
    codes = [u.text for u in aid.iter(f"{{{EAD3}}}unitid")]
    assert codes == ["ES-AMV-1", "ES-AMV-1.2", "ES-AMV-1.2.1"]
    body = etree.tostring(root, encoding="unicode")
    assert "Correspondència" not in body and "Closed until 2030" not in body
    with open_archive(folder) as archive:
        by_code = {
            r.text(_code_field(archive, section)): r.key for r in archive.iter_records(section)
        }
    plans = ask(
        live,
        verb="GetRecord",
        metadataPrefix="ead",
        identifier=identifier(folder, by_code["ES-AMV-1.2"]),
    )
    assert [u.text for u in plans.iter(f"{{{EAD3}}}unitid")] == ["ES-AMV-1.2", "ES-AMV-1.2.1"]
    closed = identifier(folder, by_code["ES-AMV-1.1"])
    assert error_code(ask(live, verb="GetRecord", metadataPrefix="ead", identifier=closed)) == (
        "idDoesNotExist"
    )
    headers = ask(live, verb="ListIdentifiers", metadataPrefix="ead")
    assert texts(headers, ".//o:header/o:setSpec") == [section]


def _code_field(archive: Archive, section: str) -> str:
    [tipo] = [f.tipo for f in archive.fields(section) if f.label("lg-eng") == "Reference code"]
    return tipo
