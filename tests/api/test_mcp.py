"""``arxiu mcp`` as a child process, driven by the ``mcp`` SDK's own stdio client.

The demo archive's oral-history section is restricted: no text of its records may ever reach
the client, whichever tool it calls. Write tools are not offered.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from app.core.archive import open_archive
from tests.conftest import REPO

STRUCTURE_TOOLS = {
    "dedalo_list_sections",
    "dedalo_describe_section",
    "dedalo_resolve",
    "dedalo_resolve_path",
    "dedalo_describe_node",
}
SHINGLE_WORDS = 6
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("dedalo_list_sections", {}),
    ("dedalo_describe_section", {"section_tipo": "oh1"}),
    ("dedalo_resolve", {"name": "interview"}),
    ("dedalo_read_record", {"section_tipo": "oh1", "section_id": 1}),
    ("dedalo_read_record", {"section_tipo": "Oral history", "section_id": 2}),
    ("dedalo_read_record", {"section_tipo": "rsc197", "section_id": 1}),
    ("dedalo_read_record", {"section_tipo": "numisdata4", "section_id": 1}),
    ("dedalo_search_records", {"section_tipo": "oh1"}),
    ("dedalo_search_records", {"section_tipo": "rsc197", "limit": 50}),
    ("dedalo_count_records", {"section_tipo": "oh1"}),
    ("dedalo_search_section", {"section_tipo": "oh1", "query": "reservoir"}),
    ("dedalo_search_section", {"section_tipo": "rsc197", "query": "Pujol"}),
    ("dedalo_semantic_search", {"query": "families who had to leave when the reservoir came"}),
    ("dedalo_semantic_search", {"query": "pantà", "sections": ["oh1"]}),
    ("dedalo_retrieve_passages", {"section_tipo": "oh1", "section_id": 1}),
    ("dedalo_get_media_info", {"section_tipo": "rsc170", "section_id": 1}),
]


@pytest.fixture
def demo_copy(demo_archive_dir: Path, tmp_path: Path) -> Path:
    """A private copy of the demo archive."""
    return Path(shutil.copytree(demo_archive_dir, tmp_path / "demo"))


@asynccontextmanager
async def mcp_client(archive: Path | str, home: Path, *extra: str) -> AsyncIterator[ClientSession]:
    """An initialized SDK client session with ``arxiu mcp`` running as its child."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "app", "mcp", "--archive", str(archive), *extra],
        env={
            "ARXIU_HOME": str(home),
            "ARXIU_EMBEDDING_MODEL": "hashing",
            "HF_HUB_OFFLINE": "1",
            "PYTHONPATH": str(REPO),
        },
        cwd=str(REPO),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def words(text: str) -> list[str]:
    """Lower-cased words of ``text``."""
    return re.findall(r"\w+", text.lower())


def shingles(text: str) -> set[tuple[str, ...]]:
    """Every run of :data:`SHINGLE_WORDS` consecutive words."""
    found = words(text)
    return {tuple(found[i : i + SHINGLE_WORDS]) for i in range(len(found) - SHINGLE_WORDS + 1)}


def value_texts(values: dict[str, Any]) -> list[str]:
    """Every string in a record's values."""
    out: list[str] = []
    for items in values.values():
        for item in items:
            value = item.get("value") if isinstance(item, dict) else item
            if isinstance(value, str):
                out.append(value)
    return out


def restricted_marks(folder: Path) -> tuple[set[str], set[tuple[str, ...]]]:
    """Texts and 6-word runs of the restricted records that no open record shares."""
    texts: set[str] = set()
    runs: set[tuple[str, ...]] = set()
    public_runs: set[tuple[str, ...]] = set()
    with open_archive(folder, read_only=True) as archive:
        for record in archive.iter_records():
            found = value_texts(record.values)
            if archive.is_restricted(record.key):
                texts.update(t for t in found if len(t) >= 12)
                runs.update(r for t in found for r in shingles(t))
            else:
                public_runs.update(r for t in found for r in shingles(t))
    return texts, runs - public_runs


def leaks(text: str, marks: tuple[set[str], set[tuple[str, ...]]]) -> list[str]:
    """The restricted texts or word runs found in ``text``."""
    texts, runs = marks
    found = [t[:40] for t in texts if t in text]
    found += [" ".join(r) for r in shingles(text) & runs]
    return found


def test_the_leak_detector_finds_restricted_text(demo_copy: Path) -> None:
    marks = restricted_marks(demo_copy)
    assert len(marks[1]) > 1000
    with open_archive(demo_copy, read_only=True) as archive:
        record = next(archive.iter_records("oh1"))
        readable = json.dumps(record.values, ensure_ascii=False)
    assert leaks(readable, marks)
    assert not leaks("Sant Romà reservoir, the valley and its villages", marks)


async def test_without_content_only_the_structure_is_offered(
    demo_copy: Path, arxiu_home: Path
) -> None:
    async with mcp_client(demo_copy, arxiu_home) as client:
        listed = await client.list_tools()
        assert {t.name for t in listed.tools} == STRUCTURE_TOOLS
        assert all(t.annotations and t.annotations.read_only_hint for t in listed.tools)
        sections = await client.call_tool("dedalo_list_sections", {})
        assert not sections.is_error
        tipos = {s["tipo"] for s in json.loads(sections.content[0].text)["data"]["sections"]}
        assert {"oh1", "rsc197", "tp1"} <= tipos
        content = await client.call_tool(
            "dedalo_read_record", {"section_tipo": "tp1", "section_id": 1}
        )
        assert content.is_error
        assert content.structured_content["error"]["code"] == "mcp.egress_restricted"
        assert "--external-content" in content.structured_content["error"]["hint"]


async def test_write_tools_are_not_offered_and_cannot_be_called(
    demo_copy: Path, arxiu_home: Path
) -> None:
    with open_archive(demo_copy, read_only=True) as archive:
        people = archive.count_records("rsc197")
    async with mcp_client(demo_copy, arxiu_home, "--external-content") as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        assert not {n for n in listed if "create" in n or "set_field" in n or "link" in n}
        created = await client.call_tool(
            "dedalo_create_record", {"section_tipo": "rsc197", "values": {"rsc84": "Anna"}}
        )
        assert created.is_error
        assert json.loads(created.content[0].text)["error"]["code"] == "mcp.write_not_offered"
    with open_archive(demo_copy, read_only=True) as archive:
        assert archive.count_records("rsc197") == people


@pytest.fixture(params=["folder", "postgresql"])
def served(request: pytest.FixtureRequest, demo_copy: Path) -> Path | str:
    """The demo archive ``arxiu mcp`` serves: the folder, or its copy on the tests' PostgreSQL
    server (``--archive postgresql://…``)."""
    if request.param == "folder":
        return demo_copy
    from app.core.archive.postgres.transfer import copy_archive

    url = str(request.getfixturevalue("pg_database"))
    copy_archive(str(demo_copy), url)
    return url


async def test_no_restricted_text_reaches_the_client(
    demo_copy: Path, served: Path | str, arxiu_home: Path
) -> None:
    marks = restricted_marks(demo_copy)
    received: list[str] = []
    outcomes: dict[str, list[str]] = {}
    async with mcp_client(served, arxiu_home, "--external-content") as client:
        listed = await client.list_tools()
        received.append(json.dumps([t.model_dump() for t in listed.tools], ensure_ascii=False))
        for name, args in CALLS:
            result = await client.call_tool(name, args)
            text = result.content[0].text
            received.append(text)
            code = "ok" if not result.is_error else json.loads(text)["error"]["code"]
            outcomes.setdefault(name, []).append(code)
    assert [leak for text in received for leak in leaks(text, marks)] == []
    # the restricted section is refused by name, by label and by what a result refers to
    assert outcomes["dedalo_read_record"][:2] == ["mcp.egress_restricted"] * 2
    assert outcomes["dedalo_search_section"] == ["mcp.egress_restricted", "ok"]
    assert outcomes["dedalo_retrieve_passages"] == ["mcp.egress_restricted"]
    # and open content does come through
    joined = "\n".join(received)
    assert outcomes["dedalo_read_record"][2:] == ["mcp.not_available", "ok"]  # withheld
    assert "Pujol" in joined
    assert outcomes["dedalo_semantic_search"][0] == "ok"


async def test_a_withheld_record_reads_as_a_missing_one_and_huge_ids_are_coded(
    demo_copy: Path, arxiu_home: Path
) -> None:
    with open_archive(demo_copy, read_only=True) as archive:
        linked = [link.target for link in archive.links_from(next(archive.iter_records("oh1")).key)]
    withheld = next(key for key in linked if key.section_tipo == "rsc197")  # its informant
    async with mcp_client(demo_copy, arxiu_home, "--external-content") as client:
        answers = []
        for sid in (withheld.section_id, 999_999):
            args = {"section_tipo": "rsc197", "section_id": sid}
            result = await client.call_tool("dedalo_read_record", args)
            assert result.is_error
            answers.append(json.loads(result.content[0].text)["error"])
        huge = await client.call_tool(
            "dedalo_read_record", {"section_tipo": "rsc197", "section_id": 10**30}
        )
    assert answers[0] == answers[1]  # same code, same words, same hint
    assert answers[0]["code"] == "mcp.not_available" and "oh1" not in json.dumps(answers[0])
    assert huge.is_error and "SQLite" not in huge.content[0].text
    assert json.loads(huge.content[0].text)["error"]["code"] == "archive.id_out_of_range"
