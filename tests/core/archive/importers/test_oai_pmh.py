"""The OAI-PMH harvester against a real HTTP repository on 127.0.0.1 serving the Caltech records.

Counts are checked against an independent XPath count of ``oai:record`` in the static-repository
files; the repository's request log shows what the harvester asked for.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from lxml import etree

from app.cli import main
from app.core.archive import Archive, open_archive
from app.core.archive.importers import run_import
from app.core.archive.importers.base import ImportOptions, external_keys
from app.core.archive.importers.dublin_core import SECTION as DC_SECTION
from app.core.archive.importers.oai_pmh import (
    DELETED_KEPT,
    RetryPolicy,
    harvest,
    harvest_key,
    normalise_base_url,
    oai_error,
    retry_after_s,
)
from app.core.archive.importers.safe_xml import parse_bytes
from app.core.errors import ImportFailed
from tests.conftest import shared_data
from tests.core.archive.importers.oai_server import NS, OaiServer, load_caltech

FAST = RetryPolicy(attempts=4, base_delay_s=0.05, max_delay_s=5.0, timeout_s=10.0)
SMALL = "caltecharchives-repositories-2-resources-34.xml"
BIG = "caltecharchives-repositories-2-resources-197.xml"


def caltech() -> Path:
    """The Caltech static-repository files."""
    return shared_data("oai-dc", "caltech")


def count_records(*names: str, day: str | None = None) -> int:
    """``oai:record`` elements in the named files (with datestamp ``day``), counted by XPath."""
    total = 0
    for name in names:
        root = etree.parse(str(caltech() / name)).getroot()
        if day is None:
            total += int(root.xpath("count(//oai:record)", namespaces=NS))
        else:
            query = f"count(//oai:record[oai:header/oai:datestamp = '{day}'])"
            total += int(root.xpath(query, namespaces=NS))
    return total


@pytest.fixture
def repository() -> Iterator[OaiServer]:
    """Both Caltech files, 500 records a page."""
    server = OaiServer(load_caltech(caltech())).start()
    yield server
    server.stop()


@pytest.fixture
def small() -> Iterator[OaiServer]:
    """The Glaser papers (resources-34) alone, 200 records a page."""
    items = [i for i in load_caltech(caltech()) if i.set_spec == "resources-34"]
    server = OaiServer(items, page_size=200).start()
    yield server
    server.stop()


def test_a_harvest_follows_every_token_and_the_next_asks_only_for_changes(
    archive: Archive, repository: OaiServer
) -> None:
    expected = count_records(SMALL, BIG)
    first = harvest(archive, repository.url, retry=FAST)
    assert first.error is None
    assert (first.created, first.updated, first.read) == (expected, 0, expected)
    assert archive.count_records(DC_SECTION) == expected
    source = normalise_base_url(repository.url)
    assert set(external_keys(archive, source)) == {i.identifier for i in repository.items}
    asked = repository.requests()
    assert len(asked) == math.ceil(expected / repository.page_size)
    assert asked[0] == {"verb": "ListRecords", "metadataPrefix": "oai_dc"}
    assert all(set(a) == {"verb", "resumptionToken"} for a in asked[1:])
    stored = archive.meta(harvest_key(source, None, "oai_dc"))
    assert stored is not None and stored.endswith("Z")

    changed = repository.items[7]
    repository.change(changed.identifier, "A title changed upstream")
    second = harvest(archive, repository.url, retry=FAST)
    assert second.error is None
    assert repository.requests()[-1] == {
        "verb": "ListRecords",
        "metadataPrefix": "oai_dc",
        "from": stored,
    }
    assert (second.read, second.created, second.updated) == (1, 0, 1)
    key = external_keys(archive, source)[changed.identifier]
    assert "A title changed upstream" in json.dumps(archive.get_record(key).values)
    assert archive.count_records(DC_SECTION) == expected

    third = harvest(archive, repository.url, retry=FAST)  # nothing changed since
    assert third.error is None and (third.created, third.updated) == (0, 0)
    assert third.read == third.unchanged <= 1  # `from` is inclusive: same-second changes
    assert repository.requests()[-1]["from"] >= stored


def test_set_and_from_narrow_the_harvest(archive: Archive, repository: OaiServer) -> None:
    only_set = harvest(archive, repository.url, set_spec="resources-34", retry=FAST)
    assert only_set.created == count_records(SMALL)
    assert repository.requests()[0]["set"] == "resources-34"
    asked = len(repository.requests())
    since = harvest(archive, repository.url, from_date="2023-09-06", retry=FAST)
    assert since.read == count_records(SMALL, BIG, day="2023-09-06")
    assert since.created == count_records(BIG)
    assert repository.requests()[asked]["from"] == "2023-09-06"
    nothing = harvest(archive, repository.url, from_date="2030-01-01", retry=FAST)
    assert nothing.error is None and nothing.read == 0


def test_retry_after_and_a_dropped_connection_are_retried(
    archive: Archive, small: OaiServer
) -> None:
    small.faults = {2: "503", 3: "drop"}
    summary = harvest(archive, small.url, retry=FAST)
    assert summary.error is None
    assert summary.created == count_records(SMALL)
    times = [t for t, args in small.log if args.get("verb") == "ListRecords"]
    assert times[2] - times[1] >= 0.95  # Retry-After: 1 was honoured
    tokens = [a.get("resumptionToken") for a in small.requests()]
    assert tokens[1] == tokens[2] == tokens[3]  # the same page, asked three times


def test_a_timeout_is_retried(archive: Archive, small: OaiServer) -> None:
    small.faults = {2: "slow"}
    policy = RetryPolicy(attempts=3, base_delay_s=0.05, max_delay_s=1.0, timeout_s=0.5)
    summary = harvest(archive, small.url, retry=policy)
    assert summary.error is None and summary.created == count_records(SMALL)
    tokens = [a.get("resumptionToken") for a in small.requests()]
    assert tokens[1] == tokens[2]  # the page that timed out was asked again


def test_a_repository_that_stays_down_keeps_what_was_harvested(
    archive: Archive, small: OaiServer
) -> None:
    small.fail_from = 3
    policy = RetryPolicy(attempts=3, base_delay_s=0.01, max_delay_s=0.01, timeout_s=5.0)
    summary = harvest(archive, small.url, retry=policy)
    assert summary.error is not None and summary.error.code == "import.oai_unreachable"
    assert summary.created == 2 * small.page_size
    assert len(small.requests()) == 2 + 3
    assert archive.meta(harvest_key(normalise_base_url(small.url), None, "oai_dc")) is None
    small.fail_from = None
    again = harvest(archive, small.url, retry=FAST)  # no from=: the last one did not finish
    assert "from" not in small.requests()[-5]
    assert (again.created, again.unchanged) == (count_records(SMALL) - 400, 400)


def test_a_bad_resumption_token_keeps_what_was_harvested(
    archive: Archive, small: OaiServer
) -> None:
    small.faults = {3: "bad_token"}
    summary = harvest(archive, small.url, retry=FAST)
    assert summary.error is not None and summary.error.code == "import.oai_bad_token"
    assert summary.created == 2 * small.page_size
    assert archive.count_records(DC_SECTION) == 2 * small.page_size
    assert archive.meta(harvest_key(normalise_base_url(small.url), None, "oai_dc")) is None


def test_a_token_sent_twice_stops_the_harvest(archive: Archive, small: OaiServer) -> None:
    small.faults = {2: "repeat"}
    summary = harvest(archive, small.url, retry=FAST)
    assert summary.error is not None and summary.error.code == "import.oai_token_loop"
    assert summary.created == 2 * small.page_size
    assert len(small.requests()) == 2


def test_a_malformed_page_stops_the_harvest_and_keeps_the_pages_before(
    archive: Archive, small: OaiServer
) -> None:
    small.faults = {2: "malformed"}
    summary = harvest(archive, small.url, retry=FAST)
    assert summary.error is not None and summary.error.code == "import.xml_malformed"
    assert summary.created == small.page_size


def test_a_malformed_first_page_changes_nothing(archive: Archive, small: OaiServer) -> None:
    small.faults = {1: "malformed"}
    with pytest.raises(ImportFailed) as caught:
        harvest(archive, small.url, retry=FAST)
    assert caught.value.code == "import.xml_malformed"
    assert archive.count_records() == 0 and not archive.has_section(DC_SECTION)


def test_oai_errors_on_the_first_request_are_coded(archive: Archive, small: OaiServer) -> None:
    small.error_status = 400  # an OAI error sent as HTTP 400 is still read as OAI
    with pytest.raises(ImportFailed) as caught:
        harvest(archive, small.url, set_spec="no such set", retry=FAST)
    assert caught.value.code == "import.oai_bad_argument"
    small.faults = {small.list_requests + 1: "404"}
    with pytest.raises(ImportFailed) as caught:
        harvest(archive, small.url, retry=FAST)
    assert caught.value.code == "import.oai_http" and caught.value.details["status"] == 404
    small.formats = frozenset({"marc21"})
    with pytest.raises(ImportFailed) as caught:
        harvest(archive, small.url, retry=FAST)
    assert caught.value.code == "import.oai_cannot_disseminate"
    assert caught.value.details["request"]["metadataPrefix"] == "oai_dc"
    with pytest.raises(ImportFailed) as caught:
        harvest(archive, small.url, from_date="last week", retry=FAST)
    assert caught.value.code == "import.oai_bad_date"
    with pytest.raises(ImportFailed) as caught:
        harvest(archive, small.url, metadata_prefix="marc21", retry=FAST)
    assert caught.value.code == "import.oai_format_unsupported"
    with pytest.raises(ImportFailed) as caught:
        harvest(archive, "ftp://example.org/oai")
    assert caught.value.code == "import.oai_bad_url"
    error = parse_bytes(
        b'<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">'
        b'<error code="idDoesNotExist">no such id</error></OAI-PMH>'
    )[0]
    assert oai_error(error, "here", {}).code == "import.oai_id_does_not_exist"
    assert archive.count_records() == 0


def test_deleted_records_go_unless_a_person_edited_them(archive: Archive, small: OaiServer) -> None:
    small.granularity = "YYYY-MM-DD"
    harvest(archive, small.url, retry=FAST)
    source = normalise_base_url(small.url)
    keys = external_keys(archive, source)
    gone, edited = small.items[3].identifier, small.items[4].identifier
    label_field = archive.section(keys[edited].section_tipo).label_field
    assert label_field is not None
    note = [{"lang": "lg-eng", "value": "Checked against the box on 2 December"}]
    archive.update_record(keys[edited], {label_field: note}, audit={"actor": "anna"})
    small.delete(gone)
    small.delete(edited)
    summary = harvest(archive, small.url, retry=FAST)
    assert len(small.requests()[-1]["from"]) == 10  # cut to the repository's granularity
    assert summary.deleted == 1
    assert archive.find_record(keys[gone]) is None
    assert archive.find_record(keys[edited]) is not None
    kept = [s for s in summary.skipped if s.code == DELETED_KEPT]
    assert len(kept) == 1 and edited in kept[0].reason
    deletions = [r for r in archive.audit_rows() if r["action"] == "delete"]
    assert [(d["section_id"], d["actor"]) for d in deletions] == [
        (keys[gone].section_id, "oai-harvest")
    ]
    assert gone not in external_keys(archive, source)
    again = harvest(archive, small.url, from_date="2023-01-01", retry=FAST)
    assert again.deleted == 0 and archive.count_records() == count_records(SMALL) - 1


def test_arxiu_import_oai_with_set_and_from(
    tmp_path: Path, repository: OaiServer, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "harvested"
    argv = ["import", "oai", repository.url, "--archive", str(folder)]
    code = main([*argv, "--set", "resources-34", "--from", "2023-09-01", "--json"])
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["created"] == count_records(SMALL)
    assert repository.requests()[0] == {
        "verb": "ListRecords",
        "metadataPrefix": "oai_dc",
        "set": "resources-34",
        "from": "2023-09-01",
    }
    with open_archive(folder) as archive:
        summary = run_import(
            archive, "oai", repository.url, options=ImportOptions(set_spec="resources-34")
        )
    assert (summary.created, summary.read) == (0, 0)  # since the last harvest: nothing


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert retry_after_s(httpx.Headers({"Retry-After": "7"})) == 7.0
    from datetime import UTC, datetime

    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    later = httpx.Headers({"Retry-After": "Wed, 01 Jan 2025 12:00:30 GMT"})
    assert retry_after_s(later, now) == 30.0
    assert retry_after_s(httpx.Headers({"Retry-After": "soon"})) is None
    assert retry_after_s(httpx.Headers()) is None


def test_the_source_is_the_normalised_base_url() -> None:
    assert normalise_base_url("HTTP://Example.ORG:80/oai/") == "http://example.org/oai"
    assert normalise_base_url("https://example.org:8443/x") == "https://example.org:8443/x"
