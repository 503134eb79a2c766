"""Choosing a grounded answer's sources: relative cut-off, lead sections, one entry per record."""

from __future__ import annotations

from typing import Any

from app.core.agent.events import FinalEvent, ToolResultEvent
from app.core.agent.request import ChatRequest
from app.core.agent.sources import (
    MAX_SOURCES,
    RELEVANT,
    STRONG,
    SourceHit,
    hits_of,
    select_sources,
)
from app.core.models.scripted import ScriptedModel, Turn
from tests.core.agent.conftest import SessionFactory, collect


def hit(key: str, score: float, label: str = "", field: str = "oh23") -> dict[str, Any]:
    tipo, sid = key.split("/")
    return {
        "section_tipo": tipo,
        "section_id": int(sid),
        "label": label or f"Label of {key}",
        "snippet": "…",
        "field": field,
        "score": score,
    }


def keys(hits: list[dict[str, Any]]) -> list[str]:
    return [source.key for source in select_sources(hits_of(hits))]


def test_weak_hits_of_other_sections_are_not_cited() -> None:
    """The displacement query: interviews lead; a place and the interviewer's record are weak."""
    hits = [
        hit("oh1/7", 0.90),
        hit("oh1/2", 0.79),
        hit("oh1/1", 0.78),
        hit("tp1/4", 0.77),  # a place: 0.86 of the best, below STRONG
        hit("oh1/7", 0.74, field="oh25"),
        hit("rsc197/3", 0.70),  # the interviewer's person record
        hit("oh1/3", 0.656),
        hit("oh1/4", 0.654),
    ]
    assert keys(hits) == ["oh1/7", "oh1/2", "oh1/1", "oh1/3", "oh1/4"]


def test_the_relative_cut_off_drops_records_far_below_the_best() -> None:
    best = 0.8
    hits = [
        hit("oh1/1", best),
        hit("oh1/2", best * RELEVANT),
        hit("oh1/3", best * (RELEVANT - 0.01)),
    ]
    assert keys(hits) == ["oh1/1", "oh1/2"]


def test_a_strong_hit_in_another_section_makes_it_a_lead_section() -> None:
    hits = [
        hit("numisdata6/4", 1.0),
        hit("oh1/22", STRONG),  # strong: its section leads too
        hit("oh1/40", 0.75),
        hit("tp1/11", 0.8),  # neither strong nor in a lead section
    ]
    assert keys(hits) == ["numisdata6/4", "oh1/22", "oh1/40"]


def test_the_section_holding_most_of_what_was_found_leads_too() -> None:
    """The UW labor archives, "Which records are about the Seattle City Light strike?": the
    company's authority record is the best hit, seven of the eight are the finding aid's."""
    hits = [
        hit("agent1/87", 0.938),
        hit("ead1/1934", 0.804),  # 0.86 of the best, below STRONG
        hit("ead1/5240", 0.780),
        hit("ead1/5247", 0.638),
        hit("ead1/5173", 0.563),  # RELEVANT × the best: 0.5628
        hit("subject1/63", 0.560),  # below RELEVANT: adds nothing to its section
        hit("ead1/4383", 0.519),
    ]
    assert keys(hits) == ["agent1/87", "ead1/1934", "ead1/5240", "ead1/5247", "ead1/5173"]
    # one record each: the best one's section leads (the first of equals)
    assert keys([hit("tp1/1", 0.9), hit("oh1/1", 0.7)]) == ["tp1/1"]


def test_one_entry_per_record_scored_by_its_best_hit_and_labelled_from_its_hits() -> None:
    hits = [
        hit("oh1/7", 0.9, label="oh1/7", field="oh32"),  # a chunk labelled only by its key
        hit("oh1/1", 0.85),
        hit("oh1/7", 0.95, label="When the water came", field="oh25"),
    ]
    sources = select_sources(hits_of(hits))
    assert [(s.key, s.score, s.label) for s in sources] == [
        ("oh1/7", 0.95, "When the water came"),
        ("oh1/1", 0.85, "Label of oh1/1"),
    ]
    assert len(sources[0].hits) == 2


def test_at_most_max_sources_and_ties_keep_the_search_order() -> None:
    hits = [hit(f"oh1/{n}", 0.5) for n in range(9, 0, -1)]
    assert keys(hits) == [f"oh1/{n}" for n in range(9, 9 - MAX_SOURCES, -1)]


def test_no_positive_score_keeps_only_the_first_record_and_nothing_gives_nothing() -> None:
    assert keys([hit("oh1/2", 0.0), hit("oh1/1", 0.0)]) == ["oh1/2"]
    assert keys([]) == []
    unnamed = [{"section_tipo": "oh1"}, {"section_tipo": "oh1", "section_id": None}, "x"]
    assert hits_of({"hits": [*unnamed, hit("oh1/1", 1.0)]}) == [
        SourceHit("oh1", 1, label="Label of oh1/1", snippet="…", score=1.0)
    ]
    assert hits_of({"results": [{"section_tipo": "oh1", "section_id": "7", "page": 3}]}) == [
        SourceHit("oh1", "7", page="3")
    ]


async def test_grounded_citations_are_relevant_records_the_search_returned(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    """With the hashing embedder, only the record that stands out is cited and shown."""
    models["small"].extend(Turn(text="Joan left."))
    question = "who had to leave when the reservoir flooded the valley?"
    session = make_session()
    events = await collect(
        await session.chat(ChatRequest.from_dict({"question": question, "model": "small"}))
    )
    final = events[-1]
    assert isinstance(final, FinalEvent)
    assert any(isinstance(e, ToolResultEvent) and e.ok for e in events)
    searcher = session.searcher
    assert searcher is not None
    returned = {str(h.key): h.score for h in searcher.search(question, k=8)}
    cited = final.answer.split("Sources:\n")[1].splitlines()
    assert cited == ["- Interview with Joan Vila (oh1/1)"]
    best = max(returned.values())
    weak = [key for key, score in returned.items() if score < RELEVANT * best]
    assert "oh1/3" in weak and "ohr/1" in weak
    prompt = models["small"].calls[0].messages[-1].content
    assert "(oh1/1)" in prompt and "(oh1/3)" not in prompt and "(ohr/1)" not in prompt
