"""What the OAI-PMH harvester and its readers share: where a harvest writes, what a reader
does with a page, and what a withdrawn record stands for.

A :class:`Reader` is one harvest's reader of one metadata format (see
:mod:`.oai_crosswalks`): it queues what a page's records become in the harvest's
:class:`~.base.ImportRun` and says which records a withdrawn OAI record stands for
(:meth:`Reader.withdrawn`), so that the harvester can delete them (:mod:`.oai_pmh`, "Deleted
records"). :class:`RecordReader` is the reader of a format whose every OAI record is one record
(``oai_dc``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from app.core.archive.importers.base import Built, ImportRun, ImportSummary, Skip
from app.core.archive.importers.safe_xml import Element
from app.core.archive.model import RecordKey

if TYPE_CHECKING:
    from app.core.archive.store import Archive


PageFn = Callable[["Archive", list[Element], ImportSummary], list[Built | Skip]]
"""``page(archive, records, summary)``: each ``<record>`` element of one response as a record,
or as a :class:`~.base.Skip` (line and file filled in by the harvester); it may create the
authority records the page mentions first (counted in ``summary``)."""

DELETED_UPSTREAM = "deleted upstream"
"""Why a :class:`Withdrawal` of a deleted OAI record is one."""


@dataclass(frozen=True)
class Target:
    """Where one harvest writes: the archive, the run (source = the base URL) and that source."""

    archive: Archive
    run: ImportRun
    source: str


@dataclass(frozen=True)
class Withdrawal:
    """Records the repository no longer holds, to delete unless a person's work keeps them."""

    identifier: str
    """The OAI identifier they came with."""
    keys: tuple[RecordKey, ...]
    """The records, each before the records it is part of (deepest first)."""
    line: int
    where: str
    why: str = DELETED_UPSTREAM
    """What happened upstream (``deleted upstream``, or a component left out of its finding
    aid), for the skip of a record that is kept."""


class Reader(Protocol):
    """One harvest's reader of one metadata format."""

    def read(self, records: list[Element], where: str) -> list[Withdrawal]:
        """Queue in the run what the usable ``<record>`` elements of page ``where`` become
        (counting ``summary.read``); the records their new versions no longer hold."""

    def withdrawn(self, identifier: str, line: int, where: str) -> Withdrawal | None:
        """The records the deleted OAI record ``identifier`` stands for, if any are here."""

    def forget(self, withdrawal: Withdrawal, deleted: list[RecordKey]) -> None:
        """``deleted`` (of ``withdrawal``'s keys) are gone: drop what the reader held of them."""


def line_of(node: Element) -> int:
    """The element's line in its response (0 when lxml does not know)."""
    line = node.sourceline
    return line if isinstance(line, int) else 0


@dataclass
class RecordReader:
    """A one-record-per-OAI-record format, read a page at a time by its ``page`` function."""

    target: Target
    page: PageFn

    def read(self, records: list[Element], where: str) -> list[Withdrawal]:
        """Each record of the page built by ``page``, queued or reported as a skip."""
        summary = self.target.run.summary
        built = self.page(self.target.archive, records, summary) if records else []
        for record, made in zip(records, built, strict=True):
            summary.read += 1
            if isinstance(made, Skip):
                summary.skipped.append(replace(made, line=line_of(record), file=where))
            else:
                self.target.run.add(made, line_of(record), where)
        return []

    def withdrawn(self, identifier: str, line: int, where: str) -> Withdrawal | None:
        """The one record harvested under ``identifier``."""
        key = self.target.archive.external_key(self.target.source, identifier)
        return Withdrawal(identifier, (key,), line, where) if key is not None else None

    def forget(self, withdrawal: Withdrawal, deleted: list[RecordKey]) -> None:
        """Nothing is held beyond the id mapping (which the harvester drops)."""
