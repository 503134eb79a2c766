"""Importers of the public datasets: ``run_import(archive, KIND, PATH)`` for every KIND.

======== =========================================== ==============================================
KIND     PATH                                        sections
======== =========================================== ==============================================
nomisma  ``nomisma/`` or ``concepts.jsonl.gz``        ``nomisma1`` concepts
igch     ``igch/`` or ``hoards.jsonl.gz``             ``igch1`` hoards → ``nomisma1`` mints
tate     ``tate/`` (both files) or one of them        ``tate1`` artists, ``tate20`` artworks
poilus   ``poilus/`` or ``wills.jsonl.gz``            ``poilus1`` wills (+ page images)
beir     a BEIR folder or ``corpus.jsonl[.gz]``       ``beir1`` documents
======== =========================================== ==============================================

Every import is idempotent (records are matched by source and external id), skips and reports
malformed lines with their line numbers, writes in batches, and returns an
:class:`ImportSummary`. A file that cannot be imported at all raises
:class:`~app.core.errors.ImportFailed` (``import.file_missing``, ``import.unreadable``,
``import.kind_unknown``); a truncated gzip imports what it could read and reports
``import.truncated`` in ``summary.error``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.archive.importers.base import ImportSummary, ProgressFn, Skip
from app.core.archive.importers.beir import beir_ids, beir_key, corpus_name, import_beir
from app.core.archive.importers.igch import import_igch
from app.core.archive.importers.nomisma import concept_key, import_nomisma
from app.core.archive.importers.poilus import import_poilus
from app.core.archive.importers.tate import import_tate
from app.core.errors import ImportFailed

if TYPE_CHECKING:
    from app.core.archive.store import Archive

Importer = Callable[["Archive", Path, ProgressFn | None], ImportSummary]

IMPORTERS: dict[str, Importer] = {
    "nomisma": import_nomisma,
    "igch": import_igch,
    "tate": import_tate,
    "poilus": import_poilus,
    "beir": import_beir,
}
"""KIND → importer."""

KINDS = tuple(IMPORTERS)


def run_import(
    archive: Archive, kind: str, path: Path | str, progress: ProgressFn | None = None
) -> ImportSummary:
    """Import the dataset at ``path`` as ``kind`` into ``archive``.

    Args:
        archive: the open archive to write into.
        kind: one of :data:`KINDS`.
        path: the dataset's folder or file.
        progress: called as ``progress(done, total)`` with lines handled and lines in all.

    Raises:
        ImportFailed: unknown kind, missing or unreadable file.
    """
    importer = IMPORTERS.get(kind)
    if importer is None:
        raise ImportFailed(
            "import.kind_unknown",
            f"There is no importer for {kind!r}.",
            hint="Use one of: " + ", ".join(KINDS) + ".",
        )
    start = time.perf_counter()
    summary = importer(archive, Path(path).expanduser(), progress)
    summary.seconds = time.perf_counter() - start
    return summary


__all__ = [
    "IMPORTERS",
    "KINDS",
    "ImportSummary",
    "Skip",
    "beir_ids",
    "beir_key",
    "concept_key",
    "corpus_name",
    "run_import",
]
