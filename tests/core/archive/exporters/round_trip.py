"""A real set imported, exported and the export imported into a new archive: the fixture the
standards exporters' round-trip tests share."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from app.core.archive import Archive, open_archive
from app.core.archive.exporters import ExportRequest, run_export
from app.core.archive.exporters.base import ExportSummary
from app.core.archive.importers import run_import


@dataclass
class Exported:
    """The archive the real set was imported into, its export, and that export imported."""

    archive: Archive
    out: Path
    summary: ExportSummary
    again: Archive


@contextmanager
def round_trip(
    work: Path,
    formats: tuple[str, str],
    sources: Iterable[Path],
    request: ExportRequest,
    prepare: Callable[[Archive], None] | None = None,
) -> Iterator[Exported]:
    """``sources`` imported with ``formats[0]`` into ``work/archive``, ``prepare``d, exported
    with ``formats[1]`` as ``request`` asks, and the export imported into ``work/again``."""
    importer, exporter = formats
    archive = open_archive(work / "archive", create=True)
    again = open_archive(work / "again", create=True)
    try:
        for source in sources:
            run_import(archive, importer, source)
        if prepare is not None:
            prepare(archive)
        summary = run_export(archive, exporter, request)
        run_import(again, importer, request.out)
        yield Exported(archive, request.out, summary, again)
    finally:
        archive.close()
        again.close()
