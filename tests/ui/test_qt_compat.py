"""The guard against PySide6 6.12's lost references to None/True on Python 3.11."""

from __future__ import annotations

import sys

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QObject, QTimer, Signal

from app.ui.qt_compat import needs_protection, protect_singletons


class _Emitter(QObject):
    ping = Signal(str)


def test_only_python_3_11_with_shiboken_6_12_needs_the_guard() -> None:
    assert needs_protection((3, 11), "6.12.0")
    assert not needs_protection((3, 12), "6.12.0")
    assert not needs_protection((3, 11), "6.9.1")


def test_many_emits_and_void_calls_leave_the_singletons_alive(qapp: object) -> None:
    protect_singletons()
    emitter, timer = _Emitter(), QTimer()
    received: list[str] = []
    emitter.ping.connect(received.append)
    for _ in range(30_000):  # more than None's or True's natural count on 3.11
        emitter.ping.emit("x")
        timer.setInterval(5)
    assert len(received) == 30_000
    assert sys.getrefcount(None) > 0 and sys.getrefcount(True) > 0
