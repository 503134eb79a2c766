"""File → New archive… and File → Open archive…: pick a folder, open its archive, swap windows.

The window only asks for the folder and opens the archive (:func:`open_chosen`); the
:class:`WindowHost` of the composition root then builds the new window, shows it, and only then
closes the old window, its services and its archive (so the app never has zero windows and does
not quit). The chosen folder is remembered in the settings (``archive``) and opened on the next
start (:func:`remembered_archive`); a fresh account has none and gets the demo archive.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QFileDialog, QWidget

from app.core.archive import Archive, open_archive
from app.core.archive.store import DB_NAME
from app.core.errors import ArchiveError

log = logging.getLogger(__name__)

ARCHIVE_SETTING = "archive"
"""The settings key holding the folder of the archive opened last (unset: the demo archive)."""


def ask_folder(parent: QWidget, *, new: bool, start: Path | None = None) -> Path | None:
    """Ask for a folder: a name for a new archive's folder (made when the archive is created,
    :func:`open_chosen`), or an archive's folder to open one."""
    if new:
        return ask_new_folder(parent, start)
    title = parent.tr("Open archive: choose the archive's folder")
    chosen = QFileDialog.getExistingDirectory(parent, title, str(start or Path.home()))
    return Path(chosen) if chosen else None


def ask_new_folder(parent: QWidget, start: Path | None = None) -> Path | None:
    """Ask for the new archive's folder by name: a folder that does not exist yet is made (a
    folder picker offers only folders that already exist)."""
    title = parent.tr("New archive: name its folder (it is created)")
    suggested = (start or Path.home()) / parent.tr("New archive")
    chosen, _ = QFileDialog.getSaveFileName(
        parent,
        title,
        str(suggested),
        "",
        "",
        QFileDialog.Option.ShowDirsOnly | QFileDialog.Option.DontConfirmOverwrite,
    )
    return Path(chosen) if chosen else None


def open_chosen(folder: Path, *, create: bool) -> Archive:
    """Open the archive in ``folder``; with ``create``, make a new empty archive there first.

    Raises:
        ArchiveError: ``archive.exists`` (create, but the folder holds an archive),
            ``archive.folder_not_empty`` (create, but the folder holds other files), and what
            :func:`~app.core.archive.open_archive` raises (``archive.not_found``, …).
    """
    folder = Path(folder).expanduser()
    if not create:
        return open_archive(folder)
    if (folder / DB_NAME).exists():
        raise ArchiveError(
            "archive.exists",
            f"There is already an archive in {folder}.",
            hint="Use File → Open archive… to open it, or choose an empty folder.",
            category="conflict",
        )
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise ArchiveError(
            "archive.folder_not_empty",
            f"{folder} is not empty and holds no archive.",
            hint="Choose an empty folder, or create a new one in the dialog.",
            category="input",
        )
    archive = open_archive(folder, create=True)
    archive.set_meta("name", folder.name)
    return archive


def remembered_archive(settings: Any) -> Path | None:
    """The archive folder opened last, if it still holds an archive."""
    value = settings.get(ARCHIVE_SETTING)
    if not value:
        return None
    folder = Path(str(value)).expanduser()
    return folder if (folder / DB_NAME).is_file() else None


WindowFactory = Callable[[Archive], tuple[Any, Any]]
"""``archive -> (window, services)``: builds (does not show) a main window over ``archive``."""


class WindowHost:
    """The open archive, its services and its window; swaps all three on request."""

    def __init__(self, archive: Archive, settings: Any, make_window: WindowFactory) -> None:
        self.archive = archive
        self.settings = settings
        self._make_window = make_window
        self.window, self.services = self._build(archive)
        self._switching: set[asyncio.Task[None]] = set()

    def _build(self, archive: Archive) -> tuple[Any, Any]:
        window, services = self._make_window(archive)
        window.archive_chosen.connect(self.request_switch)
        return window, services

    def request_switch(self, archive: Archive) -> None:
        """Start :meth:`switch` to ``archive`` (connected to the window's ``archive_chosen``)."""
        task = asyncio.ensure_future(self.switch(archive))
        self._switching.add(task)
        task.add_done_callback(self._switching.discard)

    async def switch(self, archive: Archive) -> None:
        """Show a window over ``archive``, then close the old window, services and archive."""
        old = (self.window, self.services, self.archive)
        self.window, self.services = self._build(archive)
        self.archive = archive
        self.window.show()
        self.window.start_background()
        self.settings.set(ARCHIVE_SETTING, str(archive.folder))
        log.info("switched to the archive in %s", archive.folder)
        await self._close(*old)

    async def _close(self, window: Any, services: Any, archive: Archive) -> None:
        window.close()
        await window.aclose()
        await services.aclose()
        archive.close()

    async def settled(self) -> None:
        """Wait until the switches in flight have ended (the old windows are closed)."""
        if self._switching:
            await asyncio.gather(*self._switching, return_exceptions=True)

    async def aclose(self) -> None:
        """Close the current window, its services and archive (after any switch in flight)."""
        await self.settled()
        await self._close(self.window, self.services, self.archive)


def open_startup_archive(args: Any, settings: Any) -> Archive:
    """The archive the app opens: ``--archive``, else the one opened last, else the demo."""
    from app.commands.common import open_current

    remembered = remembered_archive(settings)
    if getattr(args, "archive", None) is None and remembered is not None:
        return open_archive(remembered)
    return open_current(args)
