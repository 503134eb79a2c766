"""A grounded answer over an imported finding aid cites the unit as archivists do: its
reference code, then its title (the label the archive and the index give a hierarchy's units)."""

from __future__ import annotations

from lxml import etree

from app.core.agent.events import FinalEvent
from app.core.agent.request import ChatRequest
from app.core.archive import Archive
from app.core.archive.importers import run_import
from app.core.archive.importers.base import external_keys
from app.core.models.catalog import Catalog
from app.core.models.scripted import ScriptedModel, Turn
from app.core.session import AssistantSession
from app.core.tools.registry import ToolRegistry
from tests.conftest import shared_data
from tests.core.agent.conftest import RecordingSearcher, collect

VITET = ("ead", "anf", "FRAN_IR_003500.xml")


def _unit(component_id: str) -> tuple[str, str]:
    """``(unitid, unittitle)`` of a component, read from the file with lxml."""
    parser = etree.XMLParser(load_dtd=False, no_network=True, resolve_entities=False)
    tree = etree.parse(str(shared_data(*VITET)), parser)
    component = tree.xpath(f"//c[@id='{component_id}']")[0]
    return component.xpath("string(did/unitid)"), component.xpath("string(did/unittitle)")


async def test_a_grounded_answer_cites_a_component_with_its_reference_code(
    archive: Archive, catalog: Catalog, models: dict[str, ScriptedModel], registry: ToolRegistry
) -> None:
    run_import(archive, "ead", shared_data(*VITET))
    key = external_keys(archive, "ead")["FRAN_IR_003500#d_1_2_1"]
    code, title = _unit("d_1_2_1")
    searcher = RecordingSearcher(archive)
    session = AssistantSession(
        archive, catalog, searcher, registry=registry, model_factory=lambda e: models[e.id]
    )
    models["small"].extend(Turn(text="They are in the Vitet family papers."))
    question = "Where are the copies of Ludovic Vitet's 157 letters?"
    events = await collect(
        await session.chat(ChatRequest.from_dict({"question": question, "model": "small"}))
    )
    searcher.index.close()
    final = events[-1]
    assert isinstance(final, FinalEvent)
    assert f"- {code} · {title} ({key})" in final.answer
    assert archive.record_label(key) == f"{code} · {title}"
    assert archive.title_of(archive.get_record(key)) == title  # the record view's heading
