"""``not_emitted`` fails on an emission inside its body or during its settle time, and passes
when the signal stays silent."""

from __future__ import annotations

from typing import Any

import pytest
import qasync
from PySide6.QtCore import QObject, Signal

from tests.ui.signals import not_emitted


class _Emitter(QObject):
    fired = Signal(str)


def test_an_emission_in_the_body_fails(qtbot: Any, qloop: qasync.QEventLoop) -> None:
    emitter = _Emitter()
    with (
        pytest.raises(qtbot.SignalEmittedError, match="now"),
        not_emitted(qtbot, qloop, emitter.fired),
    ):
        emitter.fired.emit("now")


def test_an_emission_the_body_schedules_on_the_loop_fails(
    qtbot: Any, qloop: qasync.QEventLoop
) -> None:
    emitter = _Emitter()
    watched = not_emitted(qtbot, qloop, emitter.fired, settle=0.5)
    with pytest.raises(qtbot.SignalEmittedError, match="later"), watched:
        qloop.call_later(0.05, emitter.fired.emit, "later")


def test_a_silent_signal_passes_and_is_disconnected_after(
    qtbot: Any, qloop: qasync.QEventLoop
) -> None:
    emitter = _Emitter()
    with not_emitted(qtbot, qloop, emitter.fired):
        pass
    emitter.fired.emit("after the block")  # no longer watched: nothing fails
