"""A count picks the form that agrees with it: the one for 1, the other for 0, 2 and more."""

from __future__ import annotations

import pytest

from app.core.counted import Counted

RECORDS = Counted("1 record written to {path}.", "{n} records written to {path}.")


@pytest.mark.parametrize(
    ("count", "said"),
    [
        (0, "0 records written to a.csv."),
        (1, "1 record written to a.csv."),
        (2, "2 records written to a.csv."),
        (21, "21 records written to a.csv."),
    ],
)
def test_one_is_the_only_count_said_with_the_one_form(count: int, said: str) -> None:
    assert RECORDS.template(count).format(n=count, path="a.csv") == said


def test_the_number_may_be_shown_as_the_caller_writes_it() -> None:
    lines = Counted("d'1 línia", "de {n} línies")
    assert lines.said(1) == "d'1 línia"
    assert lines.said(72_736, "72.736") == "de 72.736 línies"
    assert lines.said(0) == "de 0 línies"
