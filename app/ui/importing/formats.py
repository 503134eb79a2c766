"""The import formats File → Import… offers, in the order an archivist looks for them.

The archival standards come first (EAD, EAC-CPF, Dublin Core, OAI-PMH, spreadsheets, a folder
of files, OHMS, Arxiu's own JSON); the public test datasets last, in a "Developer datasets"
group. Only kinds registered in :data:`~app.core.archive.importers.KINDS` are offered; a kind
registered later that this table does not know yet is offered under "Other formats" with its
KIND as its name, so a new importer shows up without a change here.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication

from app.core.archive.importers import KINDS

CONTEXT = "ImportFormats"
STANDARD, OTHER, DEVELOPER = "standard", "other", "developer"
FILE, FOLDER, FILE_OR_FOLDER, URL, TABLE = "file", "folder", "file-or-folder", "url", "table"


@dataclass(frozen=True)
class ImportFormat:
    """One entry of the format list: the KIND it imports, its words, and what it reads."""

    kind: str
    name: str
    description: str
    source: str
    """What to ask for: ``file``, ``folder``, ``file-or-folder``, ``url`` or ``table``."""
    group: str = STANDARD


def _t(text: str) -> str:
    return QCoreApplication.translate(CONTEXT, text)


def _standards() -> list[ImportFormat]:
    return [
        ImportFormat(
            "ead",
            _t("EAD finding aids (EAD 2002 / EAD3)"),
            _t("Fonds, series, files and items with their hierarchy, names, places and subjects."),
            FILE_OR_FOLDER,
        ),
        ImportFormat(
            "eac-cpf",
            _t("Authority records (EAC-CPF)"),
            _t("Persons, families and corporate bodies with their names, dates and relations."),
            FILE_OR_FOLDER,
        ),
        ImportFormat(
            "dc",
            _t("Dublin Core (oai_dc files)"),
            _t("Simple descriptive records, as repositories and Omeka export them."),
            FILE_OR_FOLDER,
        ),
        ImportFormat(
            "oai",
            _t("OAI-PMH repository (harvest a URL)"),
            _t("Harvest a repository's records over the web; a second harvest fetches changes."),
            URL,
        ),
        ImportFormat(
            "csv",
            _t("Spreadsheet (CSV / XLSX)"),
            _t("One record per row; check and change the column mapping before importing."),
            TABLE,
        ),
        ImportFormat(
            "folder",
            _t("A folder of files (PDF, images, sound and video with transcripts, text)"),
            _t("Each file becomes a record; PDF text by page, transcripts with timecodes."),
            FOLDER,
        ),
        ImportFormat(
            "ohms",
            _t("Oral histories (OHMS)"),
            _t("Interviews indexed with OHMS, with their segments and transcripts."),
            FILE_OR_FOLDER,
        ),
        ImportFormat(
            "json",
            _t("Arxiu JSON export"),
            _t("Records exported from another Arxiu archive, with their links."),
            FILE_OR_FOLDER,
        ),
    ]


def _developer() -> list[ImportFormat]:
    word = _t("Public test dataset")
    names = {
        "nomisma": "Nomisma (numismatic concepts)",
        "igch": "IGCH (Greek coin hoards)",
        "tate": "Tate collection (artists and artworks)",
        "poilus": "Testaments de Poilus (wills)",
        "beir": "BEIR corpus (retrieval benchmark)",
    }
    return [
        ImportFormat(kind, _t(name), word, FILE_OR_FOLDER, DEVELOPER)
        for kind, name in names.items()
    ]


def import_formats() -> list[ImportFormat]:
    """The registered formats: standards, then any others, then the developer datasets."""
    known = [f for f in _standards() if f.kind in KINDS]
    developer = [f for f in _developer() if f.kind in KINDS]
    named = {f.kind for f in known + developer}
    other = [
        ImportFormat(kind, kind, _t("Another registered format"), FILE_OR_FOLDER, OTHER)
        for kind in KINDS
        if kind not in named
    ]
    return known + other + developer


def format_name(kind: str) -> str:
    """The name File → Import… gives the format ``kind`` (the KIND itself for one it does not
    offer)."""
    return next((f.name for f in import_formats() if f.kind == kind), kind)


def group_title(group: str) -> str:
    """The heading of a group of formats."""
    titles = {
        STANDARD: _t("Archival standards"),
        OTHER: _t("Other formats"),
        DEVELOPER: _t("Developer datasets"),
    }
    return titles.get(group, group)
