"""Showing a stored conversation again: its exchanges, and its plan if it still waits.

Each answer is shown with the citations its run checked
(:func:`~app.core.agent.answer_citations.answer_citations`) and claims, so a reopened answer
links and marks them as it did when it was given.

The waiting plan is the core's :class:`~app.core.agent.plan_types.PendingPlan`
(:attr:`Conversation.waiting_plan
<app.core.agent.conversation_types.Conversation.waiting_plan>`), shown through
:meth:`PlanCards.show <app.ui.assistant.plan_cards.PlanCards.show>`: the same path as a plan a
run just proposed, so the two cards are alike.
"""

from __future__ import annotations

from app.core.agent.answer_citations import answer_citations, answer_claims
from app.core.agent.conversation_types import Conversation
from app.ui.assistant.conversation_view import ConversationView
from app.ui.assistant.plan_cards import PlanCards


async def show_conversation(
    view: ConversationView, cards: PlanCards, conversation: Conversation
) -> None:
    """Show ``conversation``'s exchanges and, if its latest plan still waits (pending, or an
    apply that was interrupted and may be resumed), that plan's card."""
    checks = zip(answer_citations(conversation), answer_claims(conversation), strict=True)
    for entry, (citations, claims) in zip(conversation.history, checks, strict=True):
        text = str(entry.get("text", ""))
        if entry.get("role") == "user":
            view.add_user_turn(text)
        else:
            view.set_answer(text, citations, claims)
            view.end_turn()
    waiting = conversation.waiting_plan
    if waiting is not None:
        await cards.show(waiting)
