"""Verified citations: only records a tool in the run returned are verified; others are counted."""

from __future__ import annotations

from app.core.agent.citations import ReturnedRecords, find_citations, verify
from app.core.agent.events import FinalEvent
from app.core.agent.request import ChatRequest
from app.core.archive import Archive
from app.core.archive.model import RecordKey
from app.core.models.scripted import ScriptedModel, Turn, call
from app.core.tools.base import ToolResult
from tests.core.agent.conftest import SessionFactory, collect


def _final(events: list[object]) -> FinalEvent:
    final = events[-1]
    assert isinstance(final, FinalEvent)
    return final


def test_citations_are_found_once_each_with_the_words_before_them() -> None:
    text = "See **Joan Vila** (oh1/1), then Linares (tp2/39) and again (oh1/1 @00:01:10)."
    found = find_citations(text)
    assert [(str(c.key), c.written) for c in found] == [
        ("oh1/1", "See Joan Vila"),
        ("tp2/39", "then Linares"),
    ]


async def test_an_invented_citation_is_unverified_and_counted(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    """Regression: "Linares (tp2/39)" — no tool returned it, tp2 is no section — was a link."""
    models["local"].extend(
        Turn(tool_calls=(call("dedalo_read_record", {"section_tipo": "oh1", "section_id": 1}),)),
        Turn(text="Interview with Joan Vila (oh1/1) names Linares (tp2/39) and (oh1/2)."),
    )
    final = _final(
        await collect(await make_session().chat(ChatRequest.from_dict({"question": "Who left?"})))
    )
    by_key = {str(c.key): c.to_dict() for c in final.citations}
    assert list(by_key) == ["oh1/1", "tp2/39", "oh1/2"]
    assert by_key["oh1/1"]["verified"] is True
    assert by_key["oh1/1"]["label"] == "Interview with Joan Vila"
    assert by_key["oh1/1"]["langs"] == ["lg-eng"]
    assert by_key["tp2/39"]["verified"] is False and by_key["tp2/39"]["label"] == "names Linares"
    assert by_key["oh1/2"]["verified"] is False  # it exists, but no tool in this run returned it
    note = next(e for e in final.transcript_summary if "unverified" in e)
    assert note["unverified"] == 2 and note["citations"] == 3
    assert note["unverified_keys"] == ["tp2/39", "oh1/2"]
    assert final.to_dict()["citations"] == [c.to_dict() for c in final.citations]


async def test_a_record_refused_by_the_gate_does_not_verify_its_citation(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    models["cloud"].extend(
        Turn(tool_calls=(call("dedalo_read_record", {"section_tipo": "oh1", "section_id": 3}),)),
        Turn(text="It is Interview about the mill (oh1/3)."),
    )
    session = make_session(external_content=True)
    final = _final(
        await collect(
            await session.chat(ChatRequest.from_dict({"question": "mill?", "model": "cloud"}))
        )
    )
    assert [(str(c.key), c.verified) for c in final.citations] == [("oh1/3", False)]


async def test_a_grounded_answer_lists_as_sources_only_verified_records(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    """Regression (the bundled model): its invented citation stays unverified, never a source."""
    models["small"].extend(Turn(text="Linares (tp2/39) remembers the reservoir."))
    final = _final(
        await collect(
            await make_session().chat(
                ChatRequest.from_dict(
                    {"question": "leaving when the reservoir flooded", "model": "small"}
                )
            )
        )
    )
    sources = final.answer.split("Sources:")[1]
    cited = {str(c.key): c.verified for c in final.citations}
    assert cited.pop("tp2/39") is False
    assert cited and all(cited.values())  # every listed source is verified
    assert "tp2/39" not in sources
    assert all(key in sources for key in cited)


def test_a_deleted_or_missing_record_is_never_verified(oh_archive: Archive) -> None:
    returned = ReturnedRecords()
    returned.note(ToolResult(ok=True, data={"section_tipo": "oh1", "section_id": 77}))
    returned.note(ToolResult(ok=False, records=(RecordKey("oh1", 1),)))
    assert RecordKey("oh1", 77) in returned and RecordKey("oh1", 1) not in returned
    out = verify("A (oh1/77) and B (oh1/1)", returned, oh_archive)
    assert [(str(c.key), c.verified) for c in out] == [("oh1/77", False), ("oh1/1", False)]
