"""Finding aids over OAI-PMH (``ead``, ``oai_ead``): one OAI record, a whole hierarchy.

An OAI-PMH repository in an EAD format (ArchivesSpace's ``oai_ead``, EAD 2002; Arxiu's own
``ead``, EAD3) serves one finding aid per OAI record. :class:`EadReader` hands each
``record/metadata/ead`` to the EAD importer's crosswalk
(:func:`~.ead.import_element`: the archdesc and every component, "part of" and order, names,
places and subjects linked to the authority sections, restrictions), under the harvest's source
(the normalised base URL) with the importer's external ids (``EADID``, ``EADID#COMPONENT``), so
a second harvest updates the same records. ``ead28`` (source file) holds the OAI identifier.

Withdrawals (what :mod:`.oai_pmh` then deletes, unless a person edited a record or another
record links to it):

* A **deleted** OAI record (``header/@status="deleted"``) stands for its finding aid's whole
  hierarchy as harvested from this source: the archdesc it named last time (kept in the
  archive's meta under ``oai.ead:BASE|IDENTIFIER``) and every record that is "part of" it, to
  any depth, deepest first. A component a person has edited is kept, and so are the
  descendants above it (they are linked by its "part of"): each kept record is reported.
* A finding aid that comes back **without some of its components** (the repository removed or
  closed them) withdraws those components, by the same rules: the new version is the whole of
  what the repository holds.

The authority records the finding aid created (persons, places, subjects) stay: other records
may cite them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.core.archive.importers.base import Skip
from app.core.archive.importers.ead import NOT_EAD, Keys, import_element, read_header
from app.core.archive.importers.ead_fields import PART_OF
from app.core.archive.importers.ead_fields import SCHEMA as EAD_SCHEMA
from app.core.archive.importers.oai_reader import DELETED_UPSTREAM, Target, Withdrawal, line_of
from app.core.archive.importers.safe_xml import Element, child, text_of
from app.core.archive.model import RecordKey

SCHEMA = EAD_SCHEMA
"""The harvest's schema: the EAD importer's ``ead1``."""
MAP_PREFIX = "oai.ead:"
"""Archive meta key prefix: ``oai.ead:BASE|IDENTIFIER`` → the finding aid's EADID."""
LEFT_OUT = "left out of its finding aid upstream"
"""Why a component withdrawn with a new version of its finding aid is one."""
MAX_DEPTH = 64
"""How deep a withdrawn hierarchy is followed (EAD nests twelve levels)."""

_SUBTREE_SQL = """
WITH RECURSIVE tree(tipo, id, depth) AS (
    SELECT CAST(? AS TEXT), CAST(? AS BIGINT), 0
    UNION
    SELECT l.from_section, l.from_id, t.depth + 1 FROM links l
    JOIN tree t ON l.to_section = t.tipo AND l.to_id = t.id
    WHERE l.field_tipo = ? AND t.depth < ?
)
SELECT t.tipo, t.id, max(t.depth) AS depth FROM tree t
JOIN external_ids e ON e.section_tipo = t.tipo AND e.section_id = t.id AND e.source = ?
GROUP BY t.tipo, t.id ORDER BY depth DESC, t.id DESC
"""
"""``key`` and every record "part of" it to any depth, harvested from one source, deepest
first."""


def mapping_key(source: str, identifier: str) -> str:
    """The archive meta key naming the EADID harvested under ``identifier`` from ``source``."""
    return f"{MAP_PREFIX}{source}|{identifier}"


def finding_aid(record: Element) -> Element | None:
    """The ``<ead>`` of an OAI ``<record>`` (``metadata/ead``, any namespace)."""
    metadata = child(record, "metadata")
    return child(metadata, "ead") if metadata is not None else None


def identifier_of(record: Element) -> str:
    """The OAI identifier in a ``<record>``'s header."""
    header = child(record, "header")
    return text_of(child(header, "identifier")) if header is not None else ""


@dataclass
class EadReader:
    """One harvest's reader of finding aids: the EAD crosswalk, record by record."""

    target: Target
    keys: Keys = field(init=False)
    """The harvest source's keys, read once per harvest (as a file import reads them)."""
    seen: dict[str, str] = field(default_factory=dict)
    """EADID → the OAI identifier it came with in this harvest (a second is a duplicate)."""

    def __post_init__(self) -> None:
        self.keys = Keys.of(self.target.archive, self.target.source)

    def read(self, records: list[Element], where: str) -> list[Withdrawal]:
        """Each finding aid of the page through the EAD crosswalk; the components their new
        versions left out."""
        left_out = [self._finding_aid(record, where) for record in records]
        return [w for w in left_out if w is not None]

    def _finding_aid(self, record: Element, where: str) -> Withdrawal | None:
        archive, run = self.target.archive, self.target.run
        identifier = identifier_of(record)
        ead = finding_aid(record)
        if ead is None:
            run.summary.read += 1
            reason = "{identifier}: the record's metadata holds no <ead>"
            skip = Skip.said(line_of(record), where, NOT_EAD, reason, identifier=identifier)
            run.summary.skipped.append(skip)
            return None
        eadid = read_header(ead, identifier).eadid
        root = self.keys.known.get(eadid)
        whole = "#" not in eadid  # an exported subtree is not the whole of its finding aid
        before = self.subtree(root) if root is not None and whole else []
        ids = import_element(archive, run, ead, identifier, self.seen, self.keys)
        if not ids:
            return None  # skipped (and reported) by the crosswalk
        key = mapping_key(self.target.source, identifier)
        if archive.meta(key) != eadid:
            archive.set_meta(key, eadid)
        now = {self.keys.known[i] for i in ids}
        gone = tuple(k for k in before if k not in now)
        return Withdrawal(identifier, gone, line_of(record), where, LEFT_OUT) if gone else None

    def withdrawn(self, identifier: str, line: int, where: str) -> Withdrawal | None:
        """The hierarchy harvested under ``identifier``: its archdesc and all below it."""
        eadid = self.target.archive.meta(mapping_key(self.target.source, identifier))
        root = self.keys.known.get(eadid) if eadid else None
        keys = self.subtree(root) if root is not None else []
        return Withdrawal(identifier, tuple(keys), line, where) if keys else None

    def forget(self, withdrawal: Withdrawal, deleted: list[RecordKey]) -> None:
        """Drop the deleted records' ids, and the identifier's EADID once its archdesc went."""
        gone = set(deleted)
        for external_id in [e for e, k in self.keys.known.items() if k in gone]:
            del self.keys.known[external_id]
        root = withdrawal.keys[-1] if withdrawal.keys else None
        if withdrawal.why == DELETED_UPSTREAM and root in gone:
            key = mapping_key(self.target.source, withdrawal.identifier)
            self.target.archive.db.write(
                lambda c: c.execute("DELETE FROM meta WHERE key = ?", (key,))
            )

    def subtree(self, root: RecordKey) -> list[RecordKey]:
        """``root`` and every record "part of" it, harvested from this source, deepest first."""
        args = (root.section_tipo, root.section_id, PART_OF, MAX_DEPTH, self.target.source)
        with self.target.archive.db.reading() as conn:
            rows = conn.execute(_SUBTREE_SQL, args).fetchall()
        return [RecordKey(str(row[0]), int(row[1])) for row in rows]
