"""The crosswalks the OAI-PMH harvester uses, by metadata prefix.

The harvester (:mod:`.oai_pmh`) reads a repository's pages; what one ``<metadata>`` element
becomes is the business of the format's own importer. :data:`CROSSWALKS` maps a metadata
prefix to a factory returning that format's :class:`Crosswalk`: its schema, and how to start
the :class:`~.oai_reader.Reader` of one harvest.

* ``oai_dc``: one record per OAI record, by the Dublin Core importer's
  :func:`~.dublin_core.dc_page` (creators and subjects linked to the authority sections),
  through :class:`~.oai_reader.RecordReader`.
* ``ead`` (Arxiu's provider, EAD3) and ``oai_ead`` (ArchivesSpace, EAD 2002): one OAI record is
  a whole finding aid and becomes its whole hierarchy of records, by the EAD importer's
  crosswalk (:class:`~.oai_ead.EadReader`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from app.core.archive.importers import dublin_core, oai_ead
from app.core.archive.importers.base import Schema
from app.core.archive.importers.oai_reader import Reader, RecordReader, Target


@dataclass(frozen=True)
class Crosswalk:
    """How the records of one metadata format become archive records."""

    schema: Schema
    start: Callable[[Target], Reader]
    """The reader of one harvest."""


def dublin_core_crosswalk() -> Crosswalk:
    """The ``oai_dc`` crosswalk: the Dublin Core importer's page of records."""
    return Crosswalk(dublin_core.SCHEMA, functools.partial(RecordReader, page=dublin_core.dc_page))


def ead_crosswalk() -> Crosswalk:
    """The ``ead``/``oai_ead`` crosswalk: each finding aid through the EAD importer's."""
    return Crosswalk(oai_ead.SCHEMA, oai_ead.EadReader)


CROSSWALKS: dict[str, Callable[[], Crosswalk | None]] = {
    "oai_dc": dublin_core_crosswalk,
    "oai_ead": ead_crosswalk,
    "ead": ead_crosswalk,
}
"""Metadata prefix → the factory of its crosswalk."""
