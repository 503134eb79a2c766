"""Importing a dataset as the front ends do it: the records, then the lexical index at once.

:func:`~app.core.archive.importers.run_import` writes records only (the archive layer knows
nothing of the index); :func:`import_dataset` chunks every record a batch writes in the batch's
own transaction (:mod:`app.core.index.import_chunks`, from the values in memory), then any record
still to chunk, so the lexical search (FTS5) finds the imported records as soon as the import
returns. Vectors follow in the background indexer. ``summary.seconds`` counts both steps.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.archive.importers import ImportSummary, run_import
from app.core.archive.importers.base import ImportOptions, ProgressFn
from app.core.archive.importers.collector import collector_paused
from app.core.index.import_chunks import chunking_imports
from app.core.index.indexer import sync_chunks

if TYPE_CHECKING:
    from app.core.archive.store import Archive


def import_dataset(
    archive: Archive,
    kind: str,
    path: Path | str,
    progress: ProgressFn | None = None,
    options: ImportOptions | None = None,
) -> ImportSummary:
    """Import the dataset at ``path`` as ``kind`` (see ``run_import``), then chunk it.

    ``options`` carry what a service import asks for (``oai``: set, from date, format).

    Raises:
        ImportFailed: unknown kind, missing or unreadable file.
    """
    start = time.perf_counter()
    with collector_paused():  # see the collector module: a fifth of an import's CPU
        with chunking_imports(archive):  # chunks in each batch's transaction
            summary = run_import(archive, kind, path, progress, options)
        sync_chunks(archive)  # whatever the batches did not chunk (records written one by one)
    summary.seconds = time.perf_counter() - start
    return summary
