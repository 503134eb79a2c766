"""Taint is sticky: an answer built on a tainted history is tainted, and a conversation's taint
never drops — so nothing restricted reaches an external model through a later turn."""

from __future__ import annotations

from app.core.agent.conversations import is_tainted
from app.core.agent.events import FinalEvent
from app.core.agent.request import ChatRequest
from app.core.models.base import Message
from app.core.models.scripted import ScriptedModel, Turn, call
from tests.core.agent.conftest import SECRET, SessionFactory, collect, sent_text

RESTRICTED_TEXT = f"The testimony says: {SECRET} the flood and the mill."


def _repeat_history(messages: list[Message]) -> Turn:
    """A local model answering "say that again" from history alone, without a tool call."""
    earlier = [m.content for m in messages if m.role == "assistant"]
    return Turn(text=earlier[-1] if earlier else "nothing to repeat")


async def test_an_answer_from_a_tainted_history_is_tainted_and_never_reaches_an_external_model(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    """Regression: the second local turn was stored untainted, then sent out."""
    models["local"].extend(
        Turn(tool_calls=(call("dedalo_read_record", {"section_tipo": "ohr", "section_id": 1}),)),
        Turn(text=RESTRICTED_TEXT),
        _repeat_history,
    )
    session = make_session(external_content=True)
    cid = (await session.conversations.new()).id
    await collect(
        await session.chat(
            ChatRequest.from_dict({"question": "What does ohr/1 say?"}), conversation_id=cid
        )
    )
    events = await collect(
        await session.chat(
            ChatRequest.from_dict({"question": "Say that again"}), conversation_id=cid
        )
    )
    again = events[-1]
    assert isinstance(again, FinalEvent)
    assert SECRET in again.answer  # it repeated the restricted text without a tool call
    assert again.history[-1].get("tainted") is True
    assert (await session.conversations.get(cid)).history[-1].get("tainted") is True
    models["cloud"].extend(Turn(text="Hello."))
    await collect(
        await session.chat(
            ChatRequest.from_dict({"question": "Summarise our chat", "model": "cloud"}),
            conversation_id=cid,
        )
    )
    assert SECRET not in sent_text(models["cloud"])
    assert again.tainted is True


async def test_a_conversations_taint_never_drops(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    models["local"].extend(
        Turn(tool_calls=(call("dedalo_read_record", {"section_tipo": "ohr", "section_id": 1}),)),
        Turn(text=RESTRICTED_TEXT),
    )
    session = make_session(external_content=True)
    cid = (await session.conversations.new()).id
    await collect(
        await session.chat(ChatRequest.from_dict({"question": "ohr/1?"}), conversation_id=cid)
    )
    models["cloud"].extend(Turn(text="I cannot see that."))
    await collect(
        await session.chat(
            ChatRequest.from_dict({"question": "And?", "model": "cloud"}), conversation_id=cid
        )
    )
    models["local"].extend(Turn(text="Anything else?"))
    events = await collect(
        await session.chat(ChatRequest.from_dict({"question": "Go on"}), conversation_id=cid)
    )
    final = events[-1]
    assert isinstance(final, FinalEvent) and final.tainted is True
    stored = await session.conversations.get(cid)
    assert is_tainted(stored)
    assert [t.tainted for t in stored.transcript] == [True, False, True]


async def test_a_stateless_request_with_a_tainted_history_entry_gives_a_tainted_answer(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    history = [
        {"role": "user", "text": "ohr/1?"},
        {"role": "assistant", "text": RESTRICTED_TEXT, "tainted": True},
    ]
    models["local"].extend(_repeat_history)
    events = await collect(
        await make_session().chat(ChatRequest.from_dict({"question": "again", "history": history}))
    )
    final = events[-1]
    assert isinstance(final, FinalEvent)
    assert final.tainted is True and final.history[-1]["tainted"] is True


async def test_an_untouched_conversation_stays_untainted(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    models["local"].extend(Turn(text="Hello."), Turn(text="Hello again."))
    session = make_session()
    cid = (await session.conversations.new()).id
    for question in ("hi", "again"):
        events = await collect(
            await session.chat(ChatRequest.from_dict({"question": question}), conversation_id=cid)
        )
        final = events[-1]
        assert isinstance(final, FinalEvent) and final.tainted is False
    assert not is_tainted(await session.conversations.get(cid))
