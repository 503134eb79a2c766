"""Follow-ups use the conversation: "I quina d'aquestes entrevistes és la més antiga?" after a
list of interviews is answered over that list's records, the oldest by its interview date
(oh1/1, 1987-05-14 on the demo archive), in Catalan, Spanish and English; a question that
does not refer back still searches the archive.

The first turn is a scripted tool model reading the nine displacement interviews and citing
them (its prose is not the point); the follow-up's selection is the core's, whatever model
answers. The real run — the bundled model, the real index — is the slow test at the end."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.agent.back_references import BackReference, back_reference
from app.core.agent.events import Event, FinalEvent, ToolResultEvent, ToolUseEvent
from app.core.agent.history_entry import history_entry
from app.core.agent.request import ChatRequest
from app.core.archive import Archive, RecordKey, open_archive
from app.core.index.embedders import HashingEmbedder
from app.core.index.service import Index
from app.core.models.catalog import Catalog, builtin_local
from app.core.models.scripted import ScriptedModel, Turn, call
from app.core.paths import resources_dir
from app.core.session import AssistantSession, AssistantSettings
from app.core.tools.registry import build_registry
from tests.core.agent.conftest import (
    SECRET,
    SessionFactory,
    collect,
    scripted_catalog,
    scripted_models,
    sent_text,
)

CATALAN = "Quines entrevistes parlen de les famílies que van haver de marxar pel pantà?"
FOLLOW_UPS = {
    "lg-cat": "I quina d'aquestes entrevistes és la més antiga?",
    "lg-spa": "¿Y cuál de estas entrevistas es la más antigua?",
    "lg-eng": "And which of these interviews is the oldest?",
}
OLDEST = {
    "lg-cat": "La més antiga és «Quan ens van fer marxar de Sant Romà» (oh1/1)"
    " — Data de l'entrevista: 1987-05-14.",
    "lg-spa": "La más antigua es «Cuando nos hicieron marchar de Sant Romà» (oh1/1)"
    " — Fecha de la entrevista: 1987-05-14.",
    "lg-eng": "The oldest is “When they made us leave Sant Romà” (oh1/1)"
    " — Interview date: 1987-05-14.",
}


def displacement() -> list[RecordKey]:
    """The nine displacement interviews of the demo (queries.json), newest-first order mixed."""
    spec = json.loads((resources_dir() / "demo" / "queries.json").read_text(encoding="utf-8"))
    keys = [
        RecordKey.parse(k)
        for lang in ("lg-cat", "lg-spa", "lg-eng")
        for k in spec["displacement"][lang]
    ]
    return sorted(keys, key=lambda k: (k.section_id * 5) % 9)  # oh1/1 neither first nor last


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        (FOLLOW_UPS["lg-cat"], BackReference("lg-cat", "oldest")),
        (FOLLOW_UPS["lg-spa"], BackReference("lg-spa", "oldest")),
        (FOLLOW_UPS["lg-eng"], BackReference("lg-eng", "oldest")),
        ("I la més recent?", BackReference("lg-cat", "newest")),
        ("¿Y la más reciente?", BackReference("lg-spa", "newest")),
        ("And the most recent one?", BackReference("lg-eng", "newest")),
        ("And the earliest interview?", BackReference("lg-eng", "oldest")),
        ("Which of these mention the school?", BackReference("lg-eng")),
        ("Quines d'elles parlen de l'escola?", BackReference("lg-cat")),
        ("¿Cuáles de estas hablan de la escuela?", BackReference("lg-spa")),
        ("the last one?", BackReference("lg-eng", "ordinal", -1)),
        ("I la primera d'aquestes?", BackReference("lg-cat", "ordinal", 1)),
        (CATALAN, None),
        ("Which is the oldest interview in the archive?", None),  # a question of its own
        ("Quina és la primera fàbrica de la colònia?", None),
        ("Tell me about those who left the valley", None),  # a relative clause, not "these"
        ("¿Qué recuerdan aquellos que se fueron?", None),
    ],
)
def test_what_refers_back_and_what_does_not(question: str, expected: BackReference) -> None:
    assert back_reference(question) == expected


@pytest.fixture(scope="module")
def demo(
    tmp_path_factory: pytest.TempPathFactory, demo_archive_dir: Path
) -> Iterator[tuple[Archive, Index]]:
    """A copy of the demo archive, indexed (hashing embedder: the follow-up needs no ranking)."""
    folder = tmp_path_factory.mktemp("follow-ups") / "archive"
    shutil.copytree(demo_archive_dir, folder)
    archive = open_archive(folder)
    index = Index(archive, HashingEmbedder())
    index.index_now()
    yield archive, index
    index.close()
    archive.close()


def _session(demo: tuple[Archive, Index], models: dict[str, ScriptedModel]) -> AssistantSession:
    archive, index = demo
    return AssistantSession(
        archive,
        scripted_catalog(),
        index,
        AssistantSettings(lang="lg-eng"),
        registry=build_registry(),
        model_factory=lambda e: models[e.id],
    )


def _interviews_listed(model: ScriptedModel) -> None:
    """The first turn: read the nine displacement interviews, cite each."""
    keys = displacement()
    reads = tuple(
        call("dedalo_read_record", {"section_tipo": k.section_tipo, "section_id": k.section_id})
        for k in keys
    )
    model.extend(
        Turn(tool_calls=reads),
        Turn(text="N'hi parlen: " + ", ".join(f"l'entrevista ({k})" for k in keys) + "."),
    )


async def _ask(
    session: AssistantSession, question: str, model: str, conversation: str | None
) -> tuple[list[Event], FinalEvent, str | None]:
    request = ChatRequest(question=question, model=model)
    events = await collect(await session.chat(request, conversation_id=conversation, stored=True))
    final = events[-1]
    assert isinstance(final, FinalEvent), final
    return events, final, getattr(events[0], "conversation_id", None)


def _tools(events: list[Event]) -> list[str]:
    return [e.name for e in events if isinstance(e, ToolUseEvent)]


@pytest.mark.parametrize("lang", ["lg-cat", "lg-spa", "lg-eng"])
async def test_the_follow_up_answers_the_oldest_of_the_previous_interviews(
    demo: tuple[Archive, Index], lang: str
) -> None:
    models = scripted_models()
    session = _session(demo, models)
    _interviews_listed(models["local"])
    _, first, conversation = await _ask(session, CATALAN, "local", None)
    assert {c.key for c in first.citations if c.verified} == set(displacement())

    events, final, _ = await _ask(session, FOLLOW_UPS[lang], "small", conversation)
    await session.aclose()
    assert final.answer == OLDEST[lang]
    assert [(str(c.key), c.verified) for c in final.citations] == [("oh1/1", True)]
    assert _tools(events) == ["dedalo_read_record"] * 9  # the nine read again, no search
    assert models["small"].calls == []  # the core picked and answered: no model prose


async def test_a_model_that_calls_tools_sees_the_previous_records_and_the_pick(
    demo: tuple[Archive, Index],
) -> None:
    models = scripted_models()
    session = _session(demo, models)
    _interviews_listed(models["local"])
    _, _, conversation = await _ask(session, CATALAN, "local", None)
    models["local"].calls.clear()
    models["local"].extend(Turn(text="La més antiga és oh1/1 (oh1/1)."))
    _, final, _ = await _ask(session, FOLLOW_UPS["lg-cat"], "local", conversation)
    await session.aclose()
    turn = models["local"].calls[0].messages[-1].content
    assert "[The previous answer's records" in turn
    assert (
        "- Quan ens van fer marxar de Sant Romà (oh1/1), Data de l'entrevista: 1987-05-14" in turn
    )
    assert sum(f"({k})" in turn for k in displacement()) == 9
    assert "The record the question picks: Quan ens van fer marxar de Sant Romà (oh1/1)." in turn
    assert [(str(c.key), c.verified) for c in final.citations] == [("oh1/1", True)]


async def test_a_question_that_does_not_refer_back_searches_the_archive(
    demo: tuple[Archive, Index],
) -> None:
    models = scripted_models()
    session = _session(demo, models)
    _interviews_listed(models["local"])
    _, _, conversation = await _ask(session, CATALAN, "local", None)
    models["small"].extend(Turn(text="En parlen."))
    events, final, _ = await _ask(
        session, "Quines entrevistes parlen de la verema al Priorat?", "small", conversation
    )
    await session.aclose()
    assert _tools(events) == ["dedalo_semantic_search"]
    assert "oh1/1" not in {str(c.key) for c in final.citations}


async def test_a_scoped_follow_up_cites_only_the_previous_records(
    demo: tuple[Archive, Index],
) -> None:
    models = scripted_models()
    session = _session(demo, models)
    _interviews_listed(models["local"])
    _, _, conversation = await _ask(session, CATALAN, "local", None)
    models["small"].extend(Turn(text="These do."))
    events, final, _ = await _ask(session, "Which of these mention London?", "small", conversation)
    await session.aclose()
    assert _tools(events) == ["dedalo_read_record"] * 9 + ["dedalo_semantic_search"]
    cited = {c.key for c in final.citations}
    assert cited and cited <= set(displacement())


async def test_a_stateless_follow_up_reads_the_records_of_the_history_it_sent(
    demo: tuple[Archive, Index],
) -> None:
    models = scripted_models()
    session = _session(demo, models)
    answer = "Sources:\n- A (oh1/9)\n- B (oh1/1)\n- C (oh1/5)"
    history = (history_entry("user", CATALAN), history_entry("assistant", answer))
    request = ChatRequest(question="I la més recent?", model="small", history=history)
    events = await collect(await session.chat(request))
    await session.aclose()
    final = events[-1]
    assert isinstance(final, FinalEvent)
    assert "(oh1/9)" in final.answer and "2016-07-14" in final.answer
    assert _tools(events) == ["dedalo_read_record"] * 3


async def test_the_oldest_compares_one_date_field_the_interviews_not_their_people(
    demo: tuple[Archive, Index],
) -> None:
    session = _session(demo, scripted_models())
    answer = "- Rosa (rsc197/6)\n- B (oh1/2)\n- C (oh1/9)\n- D (oh1/1)\n- Pere (rsc197/7)"
    history = (history_entry("user", CATALAN), history_entry("assistant", answer))
    request = ChatRequest(question=FOLLOW_UPS["lg-cat"], model="small", history=history)
    final = (await collect(await session.chat(request)))[-1]
    await session.aclose()
    assert isinstance(final, FinalEvent)
    assert final.answer == OLDEST["lg-cat"]  # not Rosa, born in 1928: no interview date


@pytest.mark.slow
@pytest.mark.timeout(900)  # the demo indexed with the real MiniLM and USE models
async def test_the_catalan_follow_up_with_the_bundled_model_answers_oh1_1(
    demo_archive_dir: Path, tmp_path: Path
) -> None:
    pytest.importorskip("llama_cpp")
    pytest.importorskip("sentence_transformers")
    from app.core.index.embedders import default_embedders

    folder = Path(shutil.copytree(demo_archive_dir, tmp_path / "demo"))
    archive = open_archive(folder)
    index = Index(archive, default_embedders())
    index.index_now()
    catalog = Catalog((builtin_local(),))
    session = AssistantSession(
        archive, catalog, index, AssistantSettings(lang="lg-cat"), registry=build_registry()
    )
    try:
        _, first, conversation = await _ask(session, CATALAN, "local", None)
        assert RecordKey("oh1", 1) in {c.key for c in first.citations if c.verified}
        _, final, _ = await _ask(session, FOLLOW_UPS["lg-cat"], "local", conversation)
    finally:
        await session.aclose()
        index.close()
        archive.close()
    assert final.answer == OLDEST["lg-cat"]
    assert [(str(c.key), c.verified) for c in final.citations] == [("oh1/1", True)]


async def test_an_external_model_is_never_shown_a_restricted_previous_record(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    session = make_session(external_content=True)  # record content may go out, restricted never
    answer = "Sources:\n- (ohr/1)\n- Interview with Joan Vila (oh1/1)"
    history = (history_entry("user", "Who left?"), history_entry("assistant", answer))
    models["cloud"].extend(Turn(text="Joan Vila (oh1/1)."))
    request = ChatRequest(
        question="Which of these mention the mill?", model="cloud", history=history
    )
    events = await collect(await session.chat(request))
    await session.aclose()
    final = events[-1]
    assert isinstance(final, FinalEvent)
    results = [(e.ok, e.code) for e in events if isinstance(e, ToolResultEvent)]
    assert results == [(False, "mcp.egress_restricted"), (True, None)]  # ohr/1 refused at the gate
    shown = sent_text(models["cloud"])
    note = shown.split("[The previous answer's records", 1)[1].split("[Question]", 1)[0]
    assert SECRET not in shown and "ohr/1" not in note  # the history it sent is its own
    assert "- Interview with Joan Vila (oh1/1)" in note
    assert [(str(c.key), c.verified) for c in final.citations] == [("oh1/1", True)]
