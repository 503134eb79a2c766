"""Importers of the public datasets: ``run_import(archive, KIND, PATH)`` for every KIND.

======== =========================================== ==============================================
KIND     PATH                                        sections
======== =========================================== ==============================================
nomisma  ``nomisma/`` or ``concepts.jsonl.gz``        ``nomisma1`` concepts
igch     ``igch/`` or ``hoards.jsonl.gz``             ``igch1`` hoards → ``nomisma1`` mints
tate     ``tate/`` (both files) or one of them        ``tate1`` artists, ``tate20`` artworks
poilus   ``poilus/`` or ``wills.jsonl.gz``            ``poilus1`` wills (+ page images)
beir     a BEIR folder or ``corpus.jsonl[.gz]``       ``beir1`` documents
ead      an EAD 2002/EAD3 file or folder (``*.xml``)  ``ead1`` (+ ``agent1``…), see :mod:`.ead`
eac-cpf  an EAC-CPF file or folder (``*.xml``)       ``agent1`` authorities, see :mod:`.eac_cpf`
dc       an ``oai_dc`` file or folder (``*.xml``)    ``dc1`` records, see :mod:`.dublin_core`
oai      an OAI-PMH base URL (``--set``, ``--from``)  ``dc1`` records (oai_dc), see :mod:`.oai_pmh`
csv      a ``.csv``/``.tsv``/``.txt``/``.xlsx`` file  ``csvN`` per layout, see :mod:`.tabular`
json     an Arxiu JSON export, or a folder of them   the exported sections, see :mod:`.json_import`
folder   a folder of PDFs, images, sound, text       ``files1`` files (+ media), see :mod:`.folder`
ohms     an OHMS XML file or folder (``*.xml``)      ``ohms1`` interviews, see :mod:`.ohms`
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

from app.core.archive.importers.base import ImportOptions, ImportSummary, ProgressFn, Skip
from app.core.archive.importers.beir import beir_ids, beir_key, corpus_name, import_beir
from app.core.archive.importers.collector import collector_paused
from app.core.archive.importers.dublin_core import import_dublin_core
from app.core.archive.importers.eac_cpf import import_eac_cpf
from app.core.archive.importers.ead import import_ead
from app.core.archive.importers.folder import import_folder
from app.core.archive.importers.igch import import_igch
from app.core.archive.importers.json_import import import_json
from app.core.archive.importers.nomisma import concept_key, import_nomisma
from app.core.archive.importers.oai_pmh import import_oai
from app.core.archive.importers.ohms import import_ohms
from app.core.archive.importers.poilus import import_poilus
from app.core.archive.importers.tabular import import_csv, import_table
from app.core.archive.importers.tate import import_tate
from app.core.errors import ImportFailed
from app.core.phrases import Phrase

if TYPE_CHECKING:
    from app.core.archive.store import Archive

Importer = Callable[["Archive", Path, ProgressFn | None], ImportSummary]

IMPORTERS: dict[str, Importer] = {
    "ead": import_ead,
    "eac-cpf": import_eac_cpf,
    "dc": import_dublin_core,
    "csv": import_csv,
    "json": import_json,
    "folder": import_folder,
    "ohms": import_ohms,
    "nomisma": import_nomisma,
    "igch": import_igch,
    "tate": import_tate,
    "poilus": import_poilus,
    "beir": import_beir,
}
"""KIND → importer."""

ServiceImporter = Callable[["Archive", str, ImportOptions, ProgressFn | None], ImportSummary]

SERVICES: dict[str, ServiceImporter] = {
    "oai": import_oai,
}
"""KIND → importer of a service at a URL (the PATH is the URL; options in ImportOptions)."""

DATASET_KINDS = ("nomisma", "igch", "tate", "poilus", "beir")
"""The public datasets this project tests with (a developer's kinds, listed last)."""
STANDARD_KINDS = ("ead", "eac-cpf", "dc", "oai", "csv", "json", "folder", "ohms")
"""The formats an archivist's own records come in: EAD, EAC-CPF, Dublin Core, CSV/XLSX, JSON, a
folder of files, OHMS, an OAI-PMH repository."""
KINDS = (*STANDARD_KINDS, *DATASET_KINDS)
"""Every kind ``arxiu import`` takes, the archivist's formats first."""


def run_import(
    archive: Archive,
    kind: str,
    path: Path | str,
    progress: ProgressFn | None = None,
    options: ImportOptions | None = None,
) -> ImportSummary:
    """Import the dataset at ``path`` as ``kind`` into ``archive``.

    Args:
        archive: the open archive to write into.
        kind: one of :data:`KINDS`.
        path: the dataset's folder or file.
        progress: called as ``progress(done, total)`` with lines handled and lines in all.
        options: what a service import (``oai``) asks for (set, from date, format).

    Raises:
        ImportFailed: unknown kind, missing or unreadable file.
    """
    service = SERVICES.get(kind)
    if service is not None:
        start = time.perf_counter()
        summary = service(archive, str(path), options or ImportOptions(), progress)
        summary.seconds = time.perf_counter() - start
        return summary
    importer = IMPORTERS.get(kind)
    if importer is None:
        raise ImportFailed(
            "import.kind_unknown",
            Phrase.of("There is no importer for {kind!r}.", kind=kind),
            hint=Phrase.of("Use one of: {kinds}.", kinds=", ".join(KINDS)),
        )
    start = time.perf_counter()
    with collector_paused():  # see .collector: a fifth of the CPU of an import of EAD
        if kind == "csv" and options is not None:  # a mapping file, a sheet, a source name
            summary = import_table(archive, Path(path).expanduser(), progress, options)
        else:
            summary = importer(archive, Path(path).expanduser(), progress)
    summary.seconds = time.perf_counter() - start
    return summary


__all__ = [
    "DATASET_KINDS",
    "IMPORTERS",
    "KINDS",
    "SERVICES",
    "STANDARD_KINDS",
    "ImportOptions",
    "ImportSummary",
    "Skip",
    "beir_ids",
    "beir_key",
    "concept_key",
    "corpus_name",
    "run_import",
]
