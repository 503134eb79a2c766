"""The Vadalog dialect's answer after a change plan is resolved: English, as the dialect's
every message is (it carries no language), each count in the form that agrees with it."""

from __future__ import annotations

from typing import Any

import pytest

from app.api.vadalog_stream import report_text


def _report(operations: int, records: int, failed: str | None = None) -> dict[str, Any]:
    """An apply report of ``operations`` applied that created or found ``records``."""
    report: dict[str, Any] = {
        "applied": [{"op_id": f"op{n}", "result": {}} for n in range(operations)],
        "created": {f"op{n}": {"section_tipo": "oh1", "section_id": n} for n in range(records)},
    }
    if failed is not None:
        report["failed"] = {"op_id": failed, "code": "archive.write_refused", "message": "no"}
    return report


@pytest.mark.parametrize(
    ("count", "said"),
    [
        (0, "Applied 0 operations; 0 records created or found."),
        (1, "Applied 1 operation; 1 record created or found."),
        (2, "Applied 2 operations; 2 records created or found."),
    ],
)
def test_the_applied_plan_is_said_with_counts_that_agree(count: int, said: str) -> None:
    assert report_text(_report(count, count), approved=True) == said


def test_the_two_counts_agree_each_with_its_own_number() -> None:
    assert report_text(_report(2, 1), True) == "Applied 2 operations; 1 record created or found."
    assert report_text(_report(1, 0), True) == "Applied 1 operation; 0 records created or found."
    failed = report_text(_report(1, 1, failed="op1"), True)
    assert failed == (
        "Applied 1 operation; 1 record created or found. Operation op1 failed, so the ones "
        "after it were skipped."
    )


def test_a_refused_plan_says_nothing_was_written() -> None:
    said = "Not every operation was authorized, so nothing was written."
    assert report_text(None, True) == report_text(_report(1, 1), False) == said
