"""Exporters: a section or a subtree of records out as an archival standard.

``run_export(archive, FORMAT, ExportRequest(...))`` for every FORMAT in :data:`FORMATS`:

=========  ==================================================================================
FORMAT     what is written
=========  ==================================================================================
ead3       EAD3 (a fonds with its hierarchy): :mod:`.ead3`
eac-cpf    EAC-CPF authority records, one ``<eac-cpf>`` per agent: :mod:`.eac_cpf`
dc         Dublin Core ``oai_dc`` records: :mod:`.dublin_core`
csv        one row per record, one column per field: :mod:`.csv_export`
json       the records with their values, links and media: :mod:`.json_export`
=========  ==================================================================================

Restricted records are left out unless :attr:`ExportRequest.include_restricted`; then the
export says so on its first line or element (:data:`RESTRICTED_NOTICE`). Each exporter's output
imports back into the same records, fields and links (the round-trip tests).
"""

from __future__ import annotations

import importlib
import time
from typing import TYPE_CHECKING

from app.core.archive.exporters.base import (
    RESTRICTED_NOTICE,
    Exporter,
    ExportRequest,
    ExportSummary,
)
from app.core.errors import ArxiuError
from app.core.phrases import Phrase

if TYPE_CHECKING:
    from app.core.archive.store import Archive

MODULES: dict[str, str] = {
    "ead3": "ead3",
    "eac-cpf": "eac_cpf",
    "dc": "dublin_core",
    "csv": "csv_export",
    "json": "json_export",
}
"""FORMAT → the module of this package that writes it (imported when first used, so that an
importer may share constants with its exporter without an import cycle)."""

FORMATS = tuple(MODULES)


def exporter(fmt: str) -> Exporter:
    """The ``export`` function of ``fmt``'s module.

    Raises:
        ArxiuError: ``export.format_unknown``.
    """
    module = MODULES.get(fmt)
    if module is None:
        raise ArxiuError(
            "export.format_unknown",
            Phrase.of("There is no exporter for {fmt!r}.", fmt=fmt),
            hint=Phrase.of("Use one of: {formats}.", formats=", ".join(FORMATS)),
            category="input",
        )
    loaded = importlib.import_module(f"{__name__}.{module}")
    function: Exporter = loaded.export
    return function


def run_export(archive: Archive, fmt: str, request: ExportRequest) -> ExportSummary:
    """Export what ``request`` selects from ``archive`` as ``fmt``.

    Raises:
        ArxiuError: ``export.format_unknown``, ``export.section_unknown``,
            ``export.record_unknown``, ``export.unwritable``.
    """
    write = exporter(fmt)
    start = time.perf_counter()
    summary = write(archive, request)
    summary.seconds = time.perf_counter() - start
    return summary


__all__ = [
    "FORMATS",
    "MODULES",
    "RESTRICTED_NOTICE",
    "ExportRequest",
    "ExportSummary",
    "run_export",
]
