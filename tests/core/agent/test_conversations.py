"""A stored conversation sends the model only the exchanges that fit its window, keeps the whole
history stored, and stays tainted by an exchange trimmed out of the window."""

from __future__ import annotations

import dataclasses
import json

from app.core.agent.conversations import history_bytes, history_window
from app.core.agent.events import FinalEvent
from app.core.agent.request import MAX_HISTORY_BYTES, MAX_HISTORY_ENTRIES, ChatRequest
from app.core.archive import Archive
from app.core.models.catalog import Catalog
from app.core.models.scripted import ScriptedModel, Turn, call
from app.core.tools.registry import ToolRegistry
from tests.core.agent.conftest import (
    SECRET,
    RecordingSearcher,
    SessionFactory,
    collect,
    entry,
    session_factory,
)


def _exchange(number: int, size: int = 10) -> list[dict[str, str]]:
    return [
        {"role": "user", "text": f"question {number}"},
        {"role": "assistant", "text": f"answer {number} " + "x" * size},
    ]


def _sent_history(model: ScriptedModel) -> list[tuple[str, str]]:
    """(role, text) of the history the model got on its last call (no system, no question)."""
    messages = model.calls[-1].messages
    return [(m.role, m.content) for m in messages[1:-1]]


async def test_a_long_conversation_keeps_answering_and_keeps_its_whole_history(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    """Regression: the 34th question was refused (history has more than 64 entries)."""
    session = make_session()
    cid = (await session.conversations.new()).id
    for number in range(1, 36):
        models["local"].extend(Turn(text=f"answer {number}"))
        events = await collect(
            await session.chat(
                ChatRequest.from_dict({"question": f"question {number}"}), conversation_id=cid
            )
        )
        assert isinstance(events[-1], FinalEvent), (number, events[-1])
    sent = _sent_history(models["local"])
    assert len(sent) == MAX_HISTORY_ENTRIES
    assert sent[0] == ("user", "question 3")  # the oldest exchanges are not sent
    assert sent[-1] == ("assistant", "answer 34")
    stored = await session.conversations.get(cid)
    assert len(stored.history) == 70  # nothing is lost from the stored conversation
    assert stored.history[0] == {"role": "user", "text": "question 1"}
    assert len(stored.transcript) == 35


async def test_the_history_sent_fits_the_models_context_window(
    oh_archive: Archive, registry: ToolRegistry, searcher: RecordingSearcher
) -> None:
    model = ScriptedModel(id="tiny")
    tiny = entry("tiny", default=True, context_size=1024, max_tokens=256)
    make = session_factory(oh_archive, Catalog((tiny,)), {"tiny": model}, registry, searcher)
    session = make()
    cid = (await session.conversations.new()).id
    for number in range(1, 8):
        model.extend(Turn(text=f"answer {number} " + "y" * 300))
        await collect(
            await session.chat(
                ChatRequest.from_dict({"question": f"question {number}"}), conversation_id=cid
            )
        )
    sent = _sent_history(model)
    budget = history_bytes(tiny)
    assert budget < MAX_HISTORY_BYTES
    entries = [{"role": role, "text": text} for role, text in sent]
    assert 0 < len(json.dumps(entries, ensure_ascii=False).encode()) <= budget
    assert sent[0][0] == "user" and sent[-1][1].startswith("answer 6")
    assert len(sent) < 12  # trimmed: six exchanges do not fit
    assert len((await session.conversations.get(cid)).history) == 14


async def test_a_tainted_exchange_trimmed_out_of_the_window_still_taints_the_run(
    oh_archive: Archive, registry: ToolRegistry, searcher: RecordingSearcher
) -> None:
    model = ScriptedModel(id="tiny")
    tiny = entry("tiny", default=True, context_size=1024, max_tokens=256)
    make = session_factory(oh_archive, Catalog((tiny,)), {"tiny": model}, registry, searcher)
    session = make()
    cid = (await session.conversations.new()).id
    model.extend(
        Turn(tool_calls=(call("dedalo_read_record", {"section_tipo": "ohr", "section_id": 1}),)),
        Turn(text=f"It says {SECRET}."),
    )
    await collect(
        await session.chat(
            ChatRequest.from_dict({"question": "What does ohr/1 say?"}), conversation_id=cid
        )
    )
    for number in range(1, 6):
        model.extend(Turn(text=f"answer {number} " + "z" * 300))
        events = await collect(
            await session.chat(
                ChatRequest.from_dict({"question": f"question {number}"}), conversation_id=cid
            )
        )
    assert all(SECRET not in text for _, text in _sent_history(model))  # trimmed away
    final = events[-1]
    assert isinstance(final, FinalEvent) and final.tainted is True
    assert final.history[-1].get("tainted") is True


async def test_a_stored_tainted_answer_outside_the_window_taints_the_run(
    make_session: SessionFactory, models: dict[str, ScriptedModel], oh_archive: Archive
) -> None:
    """Only the oldest answer is tainted and it is not sent: the run is tainted all the same."""
    session = make_session()
    conversation = await session.conversations.new()
    tainted = {"role": "assistant", "text": f"It says {SECRET}.", "tainted": True}
    later = [entry for number in range(40) for entry in _exchange(number)]
    history = ({"role": "user", "text": "ohr/1?"}, tainted, *later)
    (await session.conversations.save(dataclasses.replace(conversation, history=history)))
    models["local"].extend(Turn(text="Anything else?"))
    events = await collect(
        await session.chat(
            ChatRequest.from_dict({"question": "Go on"}), conversation_id=conversation.id
        )
    )
    assert all(SECRET not in text for _, text in _sent_history(models["local"]))
    final = events[-1]
    assert isinstance(final, FinalEvent) and final.tainted is True
    assert (await session.conversations.get(conversation.id)).history[1] == tainted


def test_the_window_starts_at_a_question_and_never_splits_an_exchange() -> None:
    history = [entry for number in range(40) for entry in _exchange(number)]
    window = history_window(history)
    assert len(window) == MAX_HISTORY_ENTRIES and window[0]["role"] == "user"
    assert window == history[-MAX_HISTORY_ENTRIES:]
    odd = history[1:]  # a stored history that starts with an answer
    assert history_window(odd[:5]) == odd[1:5]
    huge = [*_exchange(1, MAX_HISTORY_BYTES), *_exchange(2)]
    assert history_window(huge) == _exchange(2)
    assert history_window([]) == []
    assert history_window(history) is not history and history == [
        entry for number in range(40) for entry in _exchange(number)
    ]  # the stored history itself is not changed
