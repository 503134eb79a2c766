"""Helpers shared by the CLI commands: opening the archive, printing JSON and progress."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from app.core import paths
from app.core.archive import Archive, open_archive


def add_archive_argument(
    parser: argparse.ArgumentParser, help_text: str = "archive folder (default: the demo archive)"
) -> None:
    """Add ``--archive DIR`` to ``parser``; left out, :func:`open_current` opens the default."""
    parser.add_argument(
        "--archive", dest="archive", metavar="DIR", default=argparse.SUPPRESS, help=help_text
    )


def archive_dir(args: argparse.Namespace) -> Path:
    """The archive folder named by ``--archive`` or the default (demo) archive."""
    named = getattr(args, "archive", None)
    return Path(named).expanduser() if named else paths.default_archive_dir()


def open_current(args: argparse.Namespace, *, create: bool = False) -> Archive:
    """Open the archive the command works on; the default one is created as the demo."""
    folder = archive_dir(args)
    if getattr(args, "archive", None) is None:
        from app.core.archive.demo import ensure_demo_archive

        return ensure_demo_archive(folder)
    return open_archive(folder, create=create)


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
