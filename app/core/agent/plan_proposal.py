"""The ``propose_change_plan`` call of a run: checked into a :class:`ChangePlan`, or refused.

The run's tool caller hands the call here. A run with an external model first has the
plan's arguments checked by the egress gate (:func:`~app.core.agent.egress_errors.plan_refusal`:
no plan may carry restricted text to a provider); then :func:`~app.core.agent.plans.validate_plan`
resolves it against the archive, with the question's language as the language of a value whose
text shows none. The model is told only that the plan awaits confirmation; the person decides.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.core.agent.egress_errors import error_for_model, plan_refusal
from app.core.agent.plans import validate_plan
from app.core.agent.tool_calls import failed
from app.core.errors import ArxiuError
from app.core.models.base import ToolCall
from app.core.tools.base import ToolResult

if TYPE_CHECKING:
    from app.core.agent.plan_types import ChangePlan
    from app.core.archive.store import Archive
    from app.core.tools.registry import ToolRegistry


def propose(
    call: ToolCall,
    archive: Archive,
    registry: ToolRegistry,
    lang: str,
    question: str,
    *,
    external: bool,
) -> tuple[ToolResult, ChangePlan | None]:
    """The tool result the model sees for ``call``, and the plan when it is a valid one.

    A refusal (``external``: the gate's; otherwise the validation's coded error, reworded
    for an external model) is a failed result and no plan."""

    def validate(raw: object) -> ChangePlan:
        return validate_plan(raw, archive, registry, lang, question=question)

    refusal = plan_refusal(call.arguments, archive, validate) if external else None
    if refusal is not None:
        return failed(refusal), None
    try:
        plan = validate(call.arguments)
    except ArxiuError as error:
        return failed(error_for_model(error) if external else error), None
    data = {"plan_hash": plan.plan_hash, "status": "awaiting confirmation"}
    return ToolResult(ok=True, data=data), plan
