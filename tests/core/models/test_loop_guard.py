"""The local worker notices a small model stuck repeating a phrase."""

from __future__ import annotations

import pytest

from app.core.models.local_worker import is_looping


@pytest.mark.parametrize(
    "text",
    [
        "A drowned childhood: " + "memory, London, " * 4,
        "El documento " + "este tipo answer el que " * 5,
    ],
)
def test_a_repeated_phrase_is_a_loop(text: str) -> None:
    assert is_looping(text)


@pytest.mark.parametrize(
    "text",
    [
        "Three interviews describe families forced to leave when the reservoir was built.",
        "memory, London, memory, London, memory",  # repeated, but not four whole times
        "",
    ],
)
def test_ordinary_text_is_not(text: str) -> None:
    assert not is_looping(text)
