"""Typed plan payloads: ``from_dict(to_dict(x)) == x``, and the older report shape is read."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.core.agent.plan_types import (
    AppliedOp,
    ApplyReport,
    Candidate,
    ChangePlan,
    OpFailure,
    PlanOp,
    PlanRecord,
)

ids = st.text("abcdefgh0123456789_-", min_size=1, max_size=8)
words = st.text(max_size=30)
json_scalars = st.none() | st.booleans() | st.integers(-10, 10**6) | words
args = st.dictionaries(
    ids, json_scalars | st.dictionaries(ids, json_scalars, max_size=3), max_size=4
)
candidates = st.builds(Candidate, words, ids, st.integers(1, 10**6))
failures = st.builds(
    OpFailure,
    ids,
    ids,
    words,
    st.none() | st.text(min_size=1, max_size=30),  # an empty hint is no hint
    st.tuples() | st.tuples(candidates, candidates),
)
plans = st.builds(
    ChangePlan,
    words,
    st.lists(st.builds(PlanOp, ids, ids, args, words), max_size=4).map(tuple),
    st.text("0123456789abcdef", min_size=64, max_size=64),
    st.just(1),
    st.none() | ids,
)
reports = st.builds(
    ApplyReport,
    st.lists(st.builds(AppliedOp, ids, args, st.booleans()), max_size=3).map(tuple),
    st.lists(ids, max_size=3).map(tuple),
    st.none() | failures,
    st.dictionaries(ids, st.integers(1, 10**6), max_size=3),
)


@given(plans, reports)
def test_every_payload_round_trips(plan: ChangePlan, report: ApplyReport) -> None:
    assert ChangePlan.from_dict(plan.to_dict()) == plan
    assert ApplyReport.from_dict(report.to_dict()) == report
    record = PlanRecord("id1", plan, None, "local", "local", "failed", True, True, report, False)
    assert PlanRecord.from_dict(record.to_dict()) == record


def test_the_older_nested_failure_shape_still_shows_its_reason() -> None:
    old = {
        "applied": [{"op_id": "d1", "result": {}}],
        "skipped": ["p1"],
        "failed": {
            "op_id": "s1",
            "error": {
                "ok": False,
                "error": {"code": "archive.record_not_found", "message": "Gone.", "hint": "Look."},
            },
        },
        "created": {},
    }
    report = ApplyReport.from_dict(old)
    assert report.failed == OpFailure("s1", "archive.record_not_found", "Gone.", "Look.")
    assert not report.ok and report.skipped == ("p1",)


def test_a_payload_of_another_shape_is_refused_with_a_value_error() -> None:
    import pytest

    from app.core.agent.plan_types import PendingPlan

    plan = ChangePlan("s", (PlanOp("p1", "dedalo_create_record", {}, "new"),), "h" * 64)
    bad = [
        lambda: ChangePlan.from_dict({"summary": "s", "ops": [{"op_id": 1, "tool": "t"}]}),
        lambda: ChangePlan.from_dict({"summary": "s", "ops": "p1"}),
        lambda: ApplyReport.from_dict({"created": {"p1": "3"}}),
        lambda: ApplyReport.from_dict({"applied": [{"result": {}}]}),
        lambda: Candidate.from_dict({"label": "x", "section_tipo": "rsc197"}),
        lambda: PlanRecord.from_dict({"id": "plan-1"}),
        lambda: PendingPlan.from_dict(plan.to_dict()),  # no pending_id
    ]
    for read in bad:
        with pytest.raises(ValueError):
            read()
    read = PendingPlan.from_dict(PendingPlan(plan, "plan-1", restricted_text=True).to_dict())
    assert (read.pending_id, read.restricted_text, read.plan.ops) == ("plan-1", True, plan.ops)
