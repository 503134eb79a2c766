"""File → New archive… and File → Open archive…: pick a folder, open its archive, swap windows.

The window only asks for the folder and opens the archive (:func:`open_chosen`); the
:class:`WindowHost` of the composition root then builds the new window, shows it, and only then
closes the old window, its services and its archive (so the app never has zero windows and does
not quit). The chosen folder is remembered in the settings (``archive``) and opened on the next
start (:func:`remembered_archive`); a fresh account has none and gets the demo archive.

File → Open shared archive… does the same for an archive on PostgreSQL
(:func:`open_shared`): the settings keep its ``postgresql://`` URL *without* a password
(:func:`remembered_location`); the password lives in the OS keyring when the person asked to
remember it, else only in this process. A shared archive that cannot be opened at the next
start (the server is down, the password was not remembered) does not stop the app: it opens
the demo archive and says why (:class:`StartupArchive`), offering the dialog again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from PySide6.QtWidgets import QFileDialog, QWidget

from app.core.archive import Archive, open_archive
from app.core.archive.store import DB_NAME, is_shared
from app.core.errors import ArchiveError, ArxiuError
from app.core.phrases import Phrase

if TYPE_CHECKING:
    from app.ui.shared_archive_dialog import SharedArchiveChoice

log = logging.getLogger(__name__)

ARCHIVE_SETTING = "archive"
"""The settings key holding where the archive opened last is: its folder, or a shared
archive's ``postgresql://`` URL without a password (unset: the demo archive)."""


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
            Phrase.of("There is already an archive in {folder}.", folder=str(folder)),
            hint="Use File → Open archive… to open it, or choose an empty folder.",
            category="conflict",
        )
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise ArchiveError(
            "archive.folder_not_empty",
            Phrase.of("{folder} is not empty and holds no archive.", folder=str(folder)),
            hint="Choose an empty folder, or create a new one in the dialog.",
            category="input",
        )
    archive = open_archive(folder, create=True)
    archive.set_meta("name", folder.name)
    return archive


def remembered_archive(settings: Any) -> Path | str | None:
    """Where the archive opened last is: its folder, if it still holds an archive, or a
    shared archive's URL (whether it still opens is known only by opening it)."""
    value = settings.get(ARCHIVE_SETTING)
    if not value:
        return None
    if is_shared(str(value)):
        return without_password(str(value))
    folder = Path(str(value)).expanduser()
    return folder if (folder / DB_NAME).is_file() else None


def without_password(url: str) -> str:
    """``url`` with no password in it: none after the user name, no ``password=`` option (the
    only form of a shared archive's URL that is written to the settings or shown)."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        login, host = netloc.rsplit("@", 1)
        netloc = f"{login.split(':', 1)[0]}@{host}"
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "password"]
    return urlunsplit(parts._replace(netloc=netloc, query=urlencode(query)))


def remembered_location(archive: Archive) -> str:
    """What the settings keep to open ``archive`` again: its folder, or its URL without a
    password."""
    return without_password(archive.location) if archive.shared else str(archive.folder)


def open_shared(choice: SharedArchiveChoice) -> tuple[Archive, ArxiuError | None]:
    """Open the shared archive the dialog chose (blocking: it connects to the server).

    A password typed is used for this process first; once the archive has opened with it, it
    is remembered in the OS keyring when the person asked (a wrong password is never stored).
    A keyring that cannot store it is not a failure: the archive is open, the password kept
    for this session only, and the error is returned for the window to say so.

    Raises:
        ArxiuError: what :func:`~app.core.archive.open_archive` raises for a shared archive
            (``archive.pg_unreachable``, ``archive.pg_auth_failed``, ``archive.pg_ssl``,
            ``archive.not_found``, ``archive.pg_driver_missing``…).
    """
    from app.core.archive.postgres import credentials

    url = without_password(choice.url)
    if choice.password:
        credentials.use_for_session(url, choice.password)
    archive = open_archive(url)
    if not (choice.password and choice.remember):
        return archive, None
    try:
        credentials.store_password(url, choice.password)
    except ArxiuError as error:
        return archive, error
    return archive, None


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

    def request_switch(self, archive: Archive, notice: str = "") -> None:
        """Start :meth:`switch` to ``archive`` (connected to the window's ``archive_chosen``)."""
        task = asyncio.ensure_future(self.switch(archive, notice))
        self._switching.add(task)
        task.add_done_callback(self._switching.discard)

    async def switch(self, archive: Archive, notice: str = "") -> None:
        """Show a window over ``archive`` (and ``notice`` in a message box over it, if any),
        then close the old window, services and archive."""
        old = (self.window, self.services, self.archive)
        self.window, self.services = self._build(archive)
        self.archive = archive
        self.window.show()
        self.window.start_background()
        if notice:
            self.window.show_warning(notice)
        self.settings.set(ARCHIVE_SETTING, remembered_location(archive))
        log.info("switched to the archive at %s", remembered_location(archive))
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


@dataclass(frozen=True)
class StartupArchive:
    """The archive the app starts with, and why it is not the one opened last (``problem``:
    the shared archive at ``wanted`` could not be opened; the demo archive is open instead)."""

    archive: Archive
    wanted: str = ""
    problem: ArxiuError | None = None


def open_startup_archive(args: Any, settings: Any) -> Archive:
    """The archive the app opens: ``--archive``, else the one opened last, else the demo."""
    return start_archive(args, settings).archive


def start_archive(args: Any, settings: Any) -> StartupArchive:
    """The archive the app opens: ``--archive`` (a folder or a URL; an error is raised), else
    the one opened last, else the demo. A shared archive opened last that does not open now
    gives the demo archive and the reason (:class:`StartupArchive`).

    Raises:
        ArxiuError: what opening ``--archive`` raises.
    """
    from app.commands.common import open_current

    remembered = remembered_archive(settings)
    if getattr(args, "archive", None) is not None or remembered is None:
        return StartupArchive(open_current(args))
    if not isinstance(remembered, str):
        return StartupArchive(open_archive(remembered))
    try:
        return StartupArchive(open_archive(remembered))
    except ArxiuError as error:
        log.info("the shared archive at %s did not open: %s", remembered, error.code)
        return StartupArchive(open_current(args), remembered, error)
