"""PySide6 must not leak references to None/True (6.12.0 did on Python 3.11; it is excluded)."""

from __future__ import annotations

import sys

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QObject, QTimer, Signal


class _Emitter(QObject):
    flag = Signal(bool)


def test_emits_and_void_calls_keep_reference_counts(qapp: object) -> None:
    emitter, timer = _Emitter(), QTimer()
    received: list[bool] = []
    emitter.flag.connect(received.append)
    none_before, true_before = sys.getrefcount(None), sys.getrefcount(True)
    for _ in range(500):
        emitter.flag.emit(True)
        timer.setInterval(5)
    received.clear()
    assert sys.getrefcount(None) - none_before > -50
    assert sys.getrefcount(True) - true_before > -50
