"""A grounded answer over an imported finding aid cites the unit as archivists do: its
reference code, then its title (the label the archive and the index give a hierarchy's units)."""

from __future__ import annotations

from lxml import etree

from app.core.agent.events import FinalEvent
from app.core.agent.request import ChatRequest
from app.core.archive import Archive, RecordKey
from app.core.archive.hierarchy import subtree
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


async def test_asked_about_a_fonds_the_search_is_kept_to_it(
    archive: Archive, catalog: Catalog, models: dict[str, ScriptedModel], registry: ToolRegistry
) -> None:
    """ "Ask about this record" on a fonds: the grounded search is kept to the fonds and
    everything under it, so every source is one of its units though another finding aid
    matches the question too; asked about a unit without contents, the whole archive is
    searched as before."""
    for name in ("FRAN_IR_003500.xml", "FRAN_IR_007375.xml", "FRAN_IR_009555.xml"):
        run_import(archive, "ead", shared_data("ead", "anf", name))
    keys = external_keys(archive, "ead")
    fonds, leaf = keys["FRAN_IR_003500"], keys["FRAN_IR_003500#d_1_2_1"]
    inside = set(subtree(archive, fonds))
    searcher = RecordingSearcher(archive)
    everywhere = {h.key for h in searcher.search("correspondance", k=50, mode="lexical")}
    assert everywhere - inside  # other fonds hold correspondence too
    session = AssistantSession(
        archive, catalog, searcher, registry=registry, model_factory=lambda e: models[e.id]
    )
    answers = []
    for context in (fonds, leaf):
        models["small"].extend(Turn(text="Voici."))
        answers.append(await _ask_about(session, context, "correspondance", "small"))
    searcher.index.close()

    (_, kept), (_, whole) = [q for q in searcher.queries if q[0] == "correspondance"][1:3]
    assert kept is not None and set(kept.records) == inside
    assert whole is not None and whole.records == ()
    cited = {RecordKey(c.section_tipo, c.section_id) for c in answers[0].citations}
    assert cited and cited <= inside


async def test_a_model_that_plans_is_told_how_to_search_within_the_fonds(
    archive: Archive, catalog: Catalog, models: dict[str, ScriptedModel], registry: ToolRegistry
) -> None:
    """The current-record note of a fonds tells a tool-planning model the ``within`` that
    searches it; a unit without contents gets no such line."""
    run_import(archive, "ead", shared_data(*VITET))
    keys = external_keys(archive, "ead")
    fonds, leaf = keys["FRAN_IR_003500"], keys["FRAN_IR_003500#d_1_2_1"]
    session = AssistantSession(
        archive, catalog, registry=registry, model_factory=lambda e: models[e.id]
    )
    for context in (fonds, leaf):
        models["local"].extend(Turn(text="D'accord."))
        await _ask_about(session, context, "Quines cartes hi ha?", "local")
    first, second = (c.messages[-1].content for c in models["local"].calls)

    assert f'dedalo_semantic_search with within "{fonds}"' in first
    assert "within" not in second


async def _ask_about(
    session: AssistantSession, key: RecordKey, question: str, model: str
) -> FinalEvent:
    """The final frame of ``question`` asked with ``key`` as the current record."""
    context = {"section_tipo": key.section_tipo, "section_id": key.section_id}
    request = {"question": question, "model": model, "context": context}
    events = await collect(await session.chat(ChatRequest.from_dict(request)))
    final = events[-1]
    assert isinstance(final, FinalEvent)
    return final
