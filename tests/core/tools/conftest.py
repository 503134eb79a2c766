"""A small oral-history archive for the tool tests, built through the store API."""

from __future__ import annotations

import pytest

from app.core.archive import Archive, Field, Section
from app.core.tools.base import ToolContext
from app.core.tools.registry import ToolRegistry, build_registry

TRANSCRIPT = (
    "[TC_00:00:01.000_TC] Vam haver de marxar de casa quan van fer el pantà. "
    "[TC_00:01:10.500_TC] L'església del poble va quedar sota l'aigua."
)


def _structure(archive: Archive) -> None:
    archive.put_section(
        Section(
            "oh1",
            {"lg-eng": "Oral history", "lg-cat": "Història oral"},
            writable=True,
            label_field="oh16",
        )
    )
    archive.put_section(
        Section(
            "rsc197", {"lg-eng": "People", "lg-cat": "Persones"}, writable=True, label_field="rsc85"
        )
    )
    archive.put_section(
        Section("oh99", {"lg-eng": "Closed interviews"}, restricted=True, label_field="oh99t")
    )
    archive.put_section(Section("numisdata4", {"lg-eng": "Coins"}, label_field="numisdata27"))
    fields = [
        Field("oh16", "oh1", {"lg-eng": "Title", "lg-cat": "Títol"}, "text", True, None, 1),
        Field(
            "oh24",
            "oh1",
            {"lg-eng": "Informant", "lg-cat": "Informant"},
            "relation",
            False,
            "rsc197",
            2,
        ),
        Field("oh25", "oh1", {"lg-eng": "Transcription"}, "transcription", True, None, 3),
        Field("oh17", "oh1", {"lg-eng": "Audio"}, "media", False, None, 4),
        Field("oh30", "oh1", {"lg-eng": "Closed part"}, "relation", False, "oh99", 5),
        Field("rsc85", "rsc197", {"lg-eng": "Name", "lg-cat": "Nom"}, "text", False, None, 1),
        Field("rsc89", "rsc197", {"lg-eng": "Birth date"}, "date", False, None, 2),
        Field("rsc90", "rsc197", {"lg-eng": "Birthplace"}, "text", False, None, 3),
        Field("rsc91", "rsc197", {"lg-eng": "Birth name"}, "text", False, None, 4),
        Field("oh99t", "oh99", {"lg-eng": "Title"}, "text", False, None, 1),
        Field("numisdata27", "numisdata4", {"lg-eng": "Mint"}, "text", False, None, 1),
        Field("numisdata30", "numisdata4", {"lg-eng": "Weight"}, "number", False, None, 2),
    ]
    for fld in fields:
        archive.put_field(fld)


def _records(archive: Archive) -> None:
    nolan = "lg-nolan"
    archive.create_record(
        "rsc197",
        {
            "rsc85": [{"lang": nolan, "value": "Josep Vila"}],
            "rsc89": [{"lang": nolan, "value": "1925-03-01"}],
            "rsc90": [{"lang": nolan, "value": "Súria"}],
        },
    )
    archive.create_record(
        "rsc197",
        {
            "rsc85": [{"lang": nolan, "value": "Maria Serra"}],
            "rsc89": [{"lang": nolan, "value": "1940-07-12"}],
        },
    )
    archive.create_record("oh99", {"oh99t": [{"lang": nolan, "value": "Secret testimony"}]})
    archive.create_record(
        "oh1",
        {
            "oh16": [
                {"lang": "lg-cat", "value": "Quan ens van fer marxar"},
                {"lang": "lg-eng", "value": "When they made us leave"},
            ],
            "oh24": [{"lang": nolan, "value": {"section_tipo": "rsc197", "section_id": 1}}],
            "oh25": [{"lang": "lg-cat", "value": TRANSCRIPT}],
        },
    )
    archive.create_record(
        "oh1",
        {
            "oh16": [{"lang": "lg-cat", "value": "La fàbrica"}],
            "oh24": [{"lang": nolan, "value": {"section_tipo": "rsc197", "section_id": 2}}],
            "oh30": [{"lang": nolan, "value": {"section_tipo": "oh99", "section_id": 1}}],
        },
    )
    archive.create_record(
        "oh1", {"oh16": [{"lang": "lg-cat", "value": "Sense informant"}]}, restricted=True
    )
    for mint, weight in (("Emporion", 3.2), ("Tarraco", 5.1), ("Ebusus", "4.0")):
        archive.create_record(
            "numisdata4",
            {
                "numisdata27": [{"lang": nolan, "value": mint}],
                "numisdata30": [{"lang": nolan, "value": weight}],
            },
        )


@pytest.fixture
def oral(archive: Archive) -> Archive:
    """The fresh archive with interviews (oh1), people (rsc197), a closed section, coins."""
    _structure(archive)
    _records(archive)
    return archive


@pytest.fixture
def ctx(oral: Archive) -> ToolContext:
    """A local run's context on the oral-history archive, with a plan's audit info."""
    return ToolContext(
        archive=oral,
        audit={"plan_hash": "h" * 64, "op_id": "op1", "model": "scripted", "egress": "local"},
    )


@pytest.fixture(scope="session")
def registry() -> ToolRegistry:
    """Every tool of the assistant."""
    return build_registry()
