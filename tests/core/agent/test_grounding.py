"""The grounded run's helpers: which hits become sources, their labels, what the model sees."""

from __future__ import annotations

from typing import Any

from app.core.agent.citations import ReturnedRecords
from app.core.agent.grounding import (
    NOTHING_FOUND,
    SEARCH_K,
    SEARCH_TOOL,
    grounded_sources,
    no_sources_answer,
    search_call,
    shown_hits,
    sources_text,
)
from app.core.agent.prompts import grounded_turn
from app.core.agent.sources import SourceHit
from app.core.archive import Archive
from app.core.archive.model import RecordKey
from app.core.tools.base import ToolResult


def hit(sid: int, score: float, label: str = "", tipo: str = "oh1") -> dict[str, Any]:
    return {"section_tipo": tipo, "section_id": sid, "score": score, "label": label, "text": "…"}


def test_the_search_call_is_the_question() -> None:
    call = search_call("who left the valley?")
    assert (call.name, call.arguments) == (SEARCH_TOOL, {"query": "who left the valley?", "k": 8})


def test_only_records_the_gate_returned_are_cited_and_unlabelled_ones_get_the_archive_label(
    oh_archive: Archive,
) -> None:
    result = ToolResult(ok=True, data={"hits": [hit(1, 1.0), hit(2, 0.95, "Maria")]})
    returned = ReturnedRecords({RecordKey("oh1", 1)})

    sources = grounded_sources(result, returned, oh_archive, "lg-eng")

    assert [s.key for s in sources] == ["oh1/1"]
    assert sources[0].label == "Interview with Joan Vila"
    assert sources_text(sources).endswith("- Interview with Joan Vila (oh1/1)")


def test_a_failed_search_cites_nothing_and_says_why(oh_archive: Archive) -> None:
    failed = ToolResult(ok=False, code="mcp.egress_restricted", message="Refused here.")
    returned = ReturnedRecords({RecordKey("oh1", 1)})

    assert grounded_sources(failed, returned, oh_archive, "lg-eng") == []
    assert no_sources_answer(failed) == "I could not search the archive: Refused here."
    assert no_sources_answer(ToolResult(ok=True, data={"hits": []})) == NOTHING_FOUND


def test_the_model_sees_at_most_k_hits_each_with_its_record_label(oh_archive: Archive) -> None:
    hits = [hit(1, 1.0 - i / 100, "Joan" if i == 0 else "") for i in range(SEARCH_K + 3)]
    result = ToolResult(ok=True, data={"hits": hits})

    sources = grounded_sources(result, ReturnedRecords({RecordKey("oh1", 1)}), oh_archive, "")
    shown = shown_hits(sources)

    assert len(shown) == SEARCH_K
    assert {h.label for h in shown} == {"Joan"}


def test_the_grounded_turn_lists_each_hit_with_its_citation_place_and_snippet() -> None:
    hits = [
        SourceHit("oh1", 1, label="Joan", snippet="the  water\ncame", timecode="00:01:02"),
        SourceHit("oh1", 2, snippet="a page", page="4"),
    ]
    turn = grounded_turn("Who left?", hits, None)
    assert "- Joan (oh1/1) at 00:01:02: the water came\n- oh1/2 (oh1/2) page 4: a page" in turn
