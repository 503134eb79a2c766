"""A window's ear on a shared archive: the record changes that other people commit, heard
through PostgreSQL's ``LISTEN``/``NOTIFY`` (:mod:`app.core.archive.postgres.record_changes`),
as one Qt signal.

The listening connection is opened off the GUI thread (connecting may wait on the network); its
socket is then watched on the GUI thread by a :class:`~PySide6.QtCore.QSocketNotifier`, so a
notification is read as it arrives: no polling, no thread of its own. Changes that arrive
together (one import commits thousands) are gathered for :data:`GATHER_MS` and reported once.
A lost connection is opened again every :data:`RETRY_S` seconds; once it is back, ``changed``
reports an empty tuple: what changed meanwhile was not heard, so everything shown is read
again.

A notification is a reason to read again, never data (any role may ``NOTIFY`` on the channel;
restricted records' ids are withheld): the window re-reads what it shows through the archive,
where row-level security and the egress gate apply.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QSocketNotifier, QTimer, Signal

from app.core.errors import ArxiuError
from app.ui.tasks import TaskGroup

if TYPE_CHECKING:
    from app.core.archive.postgres.record_changes import RecordChange, RecordChangeListener
    from app.ui.services import Services

log = logging.getLogger(__name__)

GATHER_MS = 50
"""How long changes arriving together are gathered before ``changed`` reports them."""
RETRY_S = 3.0
"""Seconds between attempts to listen again after the connection was lost (or refused)."""


class SharedChanges(QObject):
    """Hears the record changes of a shared archive while a window is open.

    Signals:
        changed: (tuple of :class:`~app.core.archive.postgres.record_changes.RecordChange`)
            committed changes, gathered; an empty tuple after listening was lost and is back
            (read everything again).
        listening: the connection listens (first, and after each loss).
    """

    changed = Signal(object)
    listening = Signal()

    def __init__(self, services: Services, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.services = services
        self.url = services.archive.location
        self.tasks = TaskGroup(self)
        self.listener: RecordChangeListener | None = None
        self._notifier: QSocketNotifier | None = None
        self._heard: list[RecordChange] = []
        self._gather = QTimer(self)
        self._gather.setSingleShot(True)
        self._gather.setInterval(GATHER_MS)
        self._gather.timeout.connect(self._report)
        self._stopped = False
        self._stop = asyncio.Event()

    def start(self) -> None:
        """Start listening (in the background; ``listening`` says when it does)."""
        self._stopped = False
        self._stop.clear()
        self.tasks.start(self._listen(again=False), name="listen")

    async def _listen(self, *, again: bool) -> None:
        from app.core.archive.postgres.record_changes import RecordChangeListener

        url = self.url
        while not self._stopped:
            try:
                listener = await self.services.run_blocking(lambda: RecordChangeListener(url))
            except ArxiuError as error:
                log.info("not listening for changes yet (%s); again in %s s", error.code, RETRY_S)
                with contextlib.suppress(TimeoutError):  # woken at once by stop()
                    await asyncio.wait_for(self._stop.wait(), RETRY_S)
                continue
            if self._stopped:  # stopped while connecting
                listener.close()
                return
            self._attach(listener)
            self.listening.emit()
            if again:
                self.changed.emit(())
            return

    def _attach(self, listener: RecordChangeListener) -> None:
        self.listener = listener
        notifier = QSocketNotifier(listener.fileno(), QSocketNotifier.Type.Read, self)
        notifier.activated.connect(self._readable)
        self._notifier = notifier

    def _readable(self) -> None:
        """The socket has something: read what arrived, without waiting."""
        listener = self.listener
        if listener is None:
            return
        try:
            heard = listener.pending()
        except ArxiuError as error:
            log.info("listening for changes stopped (%s); listening again", error.code)
            self._detach()
            if not self._stopped:
                self.tasks.start(self._listen(again=True), name="listen")
            return
        if heard:
            self._heard.extend(heard)
            if not self._gather.isActive():
                self._gather.start()

    def _report(self) -> None:
        heard, self._heard = tuple(self._heard), []
        if heard:
            self.changed.emit(heard)

    def _detach(self) -> None:
        if self._notifier is not None:
            self._notifier.setEnabled(False)
            self._notifier.deleteLater()
            self._notifier = None
        listener, self.listener = self.listener, None
        if listener is not None:
            listener.close()

    def stop(self) -> None:
        """Stop listening and close the connection (the window closes). A connection being
        opened meanwhile is closed as it opens (its task is not cancelled: that would leave
        the connection made on the worker thread open); :meth:`wait` waits for it."""
        self._stopped = True
        self._stop.set()
        self._gather.stop()
        self._detach()

    async def wait(self) -> None:
        """Wait for a connection attempt in flight to end (after :meth:`stop`)."""
        await self.tasks.wait()
