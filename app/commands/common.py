"""Helpers shared by the CLI commands: opening the archive, printing JSON and progress."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from app.core import paths
from app.core.archive import Archive, open_archive
from app.core.archive.store import is_shared
from app.core.errors import ArchiveError
from app.core.phrases import Phrase

ARCHIVE_HELP = (
    "archive folder, or postgresql://USER@HOST:PORT/DATABASE for a shared archive "
    "(default: the demo archive)"
)
"""What ``--archive`` takes, said once for every command."""
ARCHIVE_METAVAR = "DIR|URL"


def add_archive_argument(parser: argparse.ArgumentParser, help_text: str = ARCHIVE_HELP) -> None:
    """Add ``--archive DIR|URL`` to ``parser``; left out, :func:`open_current` opens the
    default (a command given it before its name, ``arxiu --archive X search``, gets it from
    the top-level parser: the subcommand's default is suppressed)."""
    parser.add_argument(
        "--archive",
        dest="archive",
        metavar=ARCHIVE_METAVAR,
        default=argparse.SUPPRESS,
        help=help_text,
    )


def archive_location(args: argparse.Namespace) -> Path | str:
    """What ``--archive`` names: a ``postgresql://`` URL as given (a shared archive), else
    the folder (the default, demo, archive's when left out)."""
    named = getattr(args, "archive", None)
    if named and is_shared(str(named)):
        return str(named)
    return Path(named).expanduser() if named else paths.default_archive_dir()


def archive_dir(args: argparse.Namespace) -> Path:
    """The archive folder named by ``--archive`` or the default (demo) archive.

    Raises:
        ArchiveError: ``archive.shared_not_local`` when ``--archive`` is a shared archive's
            URL (a command that needs a folder).
    """
    where = archive_location(args)
    if isinstance(where, Path):
        return where
    raise ArchiveError(
        "archive.shared_not_local",
        Phrase.of(
            "This command needs an archive folder, not a shared archive ({where}).",
            where=shown(where),
        ),
        hint="Give --archive a folder.",
        category="input",
    )


def shown(location: Path | str) -> str:
    """An archive's location as printed: a folder as it is, a URL without its password."""
    text = str(location)
    if not is_shared(text):
        return text
    from app.core.archive.postgres.connect import redact

    return redact(text)


def shown_archive(archive: Archive) -> str:
    """Where ``archive`` is, as printed (:func:`shown`)."""
    return shown(archive.location if archive.shared else archive.folder)


def open_current(args: argparse.Namespace, *, create: bool = False) -> Archive:
    """Open the archive the command works on: a folder, a shared archive's ``postgresql://``
    URL (its password from the URL, ``PGPASSWORD``, the OS keyring or ``~/.pgpass``), or the
    default one, created as the demo.

    Raises:
        ArchiveError: what :func:`~app.core.archive.open_archive` raises (a shared archive:
            ``archive.pg_unreachable``, ``archive.pg_auth_failed``, ``archive.not_found``…).
    """
    where = archive_location(args)
    if getattr(args, "archive", None) is None:
        from app.core.archive.demo import ensure_demo_archive

        return ensure_demo_archive(Path(where))
    return open_archive(where, create=create)


def print_json(value: Any) -> None:
    """Print ``value`` as indented UTF-8 JSON."""
    json.dump(value, sys.stdout, ensure_ascii=False, indent=2, default=str)
    sys.stdout.write("\n")


class ProgressBar:
    """A one-line progress bar on stderr (silent when stderr is not a terminal and quiet)."""

    def __init__(self, label: str, total: int | None = None, *, width: int = 30) -> None:
        self.label = label
        self.total = total
        self.width = width
        self.done = 0
        self._tty = sys.stderr.isatty()
        self._last_shown = -1

    def update(self, done: int, total: int | None = None) -> None:
        """Show progress ``done`` of ``total``."""
        self.done = done
        if total is not None:
            self.total = total
        if self.total:
            percent = int(100 * done / max(self.total, 1))
            if percent == self._last_shown and done != self.total:
                return
            self._last_shown = percent
            filled = int(self.width * done / max(self.total, 1))
            bar = "#" * filled + "-" * (self.width - filled)
            text = f"{self.label} [{bar}] {done}/{self.total} {percent}%"
        else:
            text = f"{self.label} {done}"
        if self._tty:
            sys.stderr.write("\r" + text)
        elif self.total and (done == self.total or percent % 10 == 0):
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def finish(self) -> None:
        """End the bar's line."""
        if self._tty:
            sys.stderr.write("\n")
            sys.stderr.flush()
