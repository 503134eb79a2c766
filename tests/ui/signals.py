"""Checking that a signal does not fire: :func:`not_emitted`, the counterpart of
:func:`tests.ui.conftest.emitted`."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

import qasync

from tests.ui.conftest import run

SETTLE_S = 0.2
"""How long the loop runs after the ``with`` body, for what the body set in motion."""


@contextlib.contextmanager
def not_emitted(
    qtbot: Any, loop: qasync.QEventLoop, signal: Any, *, settle: float = SETTLE_S
) -> Iterator[None]:
    """Fail the test if ``signal`` is emitted by what the ``with`` body does, or while the
    qasync loop runs ``settle`` seconds after it (queued connections, tasks the body started).

    Built on ``qtbot.assertNotEmitted`` (connected before the body runs; it raises
    ``SignalEmittedError`` naming the arguments), with its ``wait`` done on the asyncio loop:
    ``wait=`` spins a nested Qt event loop outside it, where a coroutine that calls
    ``asyncio.get_running_loop()`` raises (see :func:`~tests.ui.conftest.emitted`).
    """
    with qtbot.assertNotEmitted(signal):
        yield
        run(loop, asyncio.sleep(settle))
