"""Asyncio tasks started by widgets: referenced, named, cancellable, their bugs reported.

Known errors must be handled inside the coroutine (they become banners or notices); anything
that escapes is a bug and goes to :func:`sys.excepthook`, i.e. the crash dialog.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from typing import Any

from PySide6.QtCore import QObject


class TaskGroup(QObject):
    """The tasks one widget started."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tasks: dict[str, asyncio.Task[Any]] = {}

    def start(self, coro: Coroutine[Any, Any, Any], *, name: str) -> asyncio.Task[Any]:
        """Start ``coro`` as task ``name``; a running task of the same name is cancelled."""
        old = self._tasks.get(name)
        if old is not None and not old.done():
            old.cancel()
        task = asyncio.get_event_loop().create_task(coro, name=f"arxiu-ui-{name}")
        self._tasks[name] = task
        task.add_done_callback(self._finished)
        return task

    def busy(self) -> bool:
        """Whether any task is still running."""
        return any(not task.done() for task in self._tasks.values())

    def cancel_all(self) -> None:
        """Cancel every running task."""
        for task in self._tasks.values():
            if not task.done():
                task.cancel()

    async def wait(self) -> None:
        """Wait until every task has finished (after :meth:`cancel_all`); a task's bug is not
        raised here, it goes to :func:`sys.excepthook` as it finishes."""
        pending = [task for task in self._tasks.values() if not task.done()]
        if pending:
            await asyncio.wait(pending)

    def _finished(self, task: asyncio.Task[Any]) -> None:
        for name, known in list(self._tasks.items()):
            if known is task:
                del self._tasks[name]
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            sys.excepthook(type(error), error, error.__traceback__)
