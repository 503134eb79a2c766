"""The crosswalks the OAI-PMH harvester uses, by metadata prefix.

The harvester (:mod:`.oai_pmh`) reads a repository's pages; what one ``<metadata>`` element
becomes is the business of the format's own importer. :data:`CROSSWALKS` maps a metadata
prefix to a factory returning that importer's :class:`Crosswalk`, or ``None`` when the importer
offers none.

``oai_dc`` is the Dublin Core importer's :func:`~.dublin_core.dc_page` (creators and subjects
linked to the authority sections); ``oai_ead``/``ead`` the EAD importer's ``oai_page``, when it
offers one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.core.archive.importers import dublin_core, ead
from app.core.archive.importers.base import Built, Schema, Skip
from app.core.archive.importers.safe_xml import Element

if TYPE_CHECKING:
    from app.core.archive.store import Archive


PageFn = Callable[["Archive", list[Element]], list[Built | Skip]]
"""``page(archive, records)``: each ``<record>`` element of one response as a record, or as a
:class:`~.base.Skip` (line and file filled in by the harvester); it may create the authority
records the page mentions first."""


@dataclass(frozen=True)
class Crosswalk:
    """How the records of one metadata format become archive records."""

    schema: Schema
    page: PageFn


def dublin_core_crosswalk() -> Crosswalk:
    """The ``oai_dc`` crosswalk: the Dublin Core importer's page of records."""
    return Crosswalk(dublin_core.SCHEMA, dublin_core.dc_page)


def ead_crosswalk() -> Crosswalk | None:
    """The ``ead``/``oai_ead`` crosswalk, when the EAD importer offers one (``oai_page``)."""
    page = getattr(ead, "oai_page", None)
    schema = getattr(ead, "SCHEMA", None)
    if callable(page) and isinstance(schema, Schema):
        return Crosswalk(schema, page)
    return None


CROSSWALKS: dict[str, Callable[[], Crosswalk | None]] = {
    "oai_dc": dublin_core_crosswalk,
    "oai_ead": ead_crosswalk,
    "ead": ead_crosswalk,
}
"""Metadata prefix → the factory of its crosswalk."""
