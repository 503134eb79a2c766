"""The crash handler: a bug in a turn (a real tool with a programming error, in the real
registry, run by the panel with the scripted model) reaches the app's crash dialog, never a
banner, and the answer streamed before it stays in the conversation; a known error stays a
banner and opens no dialog."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from app.core.errors import ModelError
from app.core.models.scripted import Turn
from app.ui.assistant.turn_widgets import ErrorBanner
from app.ui.crash import CrashDialog, CrashReporter, install_excepthook
from tests.core.agent.broken_tool import BROKEN_TOOL, STREAMED, broken_registry, broken_turn
from tests.ui.conftest import emitted, run
from tests.ui.test_assistant_panel import TURN_S, ask, of_type


@pytest.fixture
def reporter() -> Iterator[CrashReporter]:
    """The app's crash handler, installed as :func:`sys.excepthook` (as ``run_app`` does)."""
    previous = install_excepthook(show_dialog=True)
    installed = sys.excepthook
    assert isinstance(installed, CrashReporter)
    try:
        yield installed
    finally:
        for dialog in list(installed.dialogs):
            dialog.close()
        sys.excepthook = previous


@pytest.mark.allow_log("app.core.agent.loop", message="ZeroDivisionError")
def test_a_tool_bug_reaches_the_crash_dialog_ends_the_turn_and_keeps_the_partial_answer(
    make_window: Any, reporter: CrashReporter, caplog: pytest.LogCaptureFixture
) -> None:
    window = make_window([broken_turn()], registry=broken_registry())
    reports: list[str] = []
    reporter.reported.connect(reports.append)
    with (
        emitted(make_window.loop, reporter.reported, timeout=TURN_S) as reported,
        emitted(make_window.loop, window.assistant.turn_finished, timeout=TURN_S),
    ):
        window.assistant.send("how many sections are there?")
    make_window.loop.run_until_complete(asyncio.sleep(0.05))  # a second report would be here
    (text,) = reported
    assert reports == [text]  # reported once
    assert window.assistant.composer.send_button.isVisible()  # the next question can be sent
    assert "ZeroDivisionError" in text and f"in {BROKEN_TOOL}" in text  # the whole traceback
    (dialog,) = reporter.dialogs
    assert isinstance(dialog, CrashDialog) and dialog.isVisible()
    assert dialog.details.toPlainText() == text
    assert of_type(window, ErrorBanner) == []  # a bug is not a banner
    tracebacks = [r for r in caplog.records if r.exc_info is not None]
    assert [r.name for r in tracebacks] == ["app.core.agent.loop"]  # logged once, where it was
    session = window.services.session_now
    stored = run(make_window.loop, session.conversations.get(window.assistant.conversation_id))
    assert stored.history[-1] == {"role": "assistant", "text": STREAMED}
    assert stored.transcript[-1].stop == "stopped"
    dialog.close()
    assert reporter.dialogs == []


def test_a_known_error_is_a_banner_and_opens_no_crash_dialog(
    make_window: Any, reporter: CrashReporter, caplog: pytest.LogCaptureFixture
) -> None:
    failure = ModelError("ai.provider_failed", "The model server stopped answering.")
    window = make_window([Turn(text="Partial", error=failure)])
    reported: list[str] = []
    reporter.reported.connect(reported.append)
    ask(make_window, window, "Hello?")
    make_window.loop.run_until_complete(asyncio.sleep(0.05))  # the run task's callbacks ran
    assert [b.error.code for b in of_type(window, ErrorBanner)] == ["ai.provider_failed"]
    assert reported == [] and reporter.dialogs == []
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
