"""What the chunker needs of a section, read once per batch or pass: its text fields, its label
field and its reference-code field, its hierarchy and whether it is restricted (shared by a
folder's import chunking, its chunking afterwards and a shared archive's server-side
chunker)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from app.core.archive.hierarchy import hierarchy_of
from app.core.archive.hierarchy_shape import Hierarchy
from app.core.archive.model import Field
from app.core.archive.store import Archive
from app.core.index.chunking import TEXT_KINDS

SectionShape = tuple[list[Field], str | None, str | None]
"""A section's fields, label field and reference-code field: what :func:`chunk_record` needs."""


def section_shape(archive: Archive, tipo: str) -> SectionShape:
    """What :func:`chunk_record` needs of section ``tipo``; of its fields only those it reads
    (text kinds, not the label): the same chunks for less work per record. Read once per batch
    or pass (an import may add fields as it goes), on either engine."""
    label_field = archive.section(tipo).label_field
    texts = [f for f in archive.fields(tipo) if f.kind in TEXT_KINDS and f.tipo != label_field]
    return texts, label_field, archive.code_field(tipo)


@dataclass
class SectionShapes:
    """The sections' shapes for :func:`chunk_record` (calling it: :func:`section_shape`),
    their hierarchies (:meth:`hierarchy`) and restrictions (:meth:`closed`) for the trails
    (:mod:`app.core.index.chunk_context`), each read once: a source for one batch or pass (make
    a new one per pass, an import may add fields meanwhile). ``archive`` may be a function that
    opens it, called only when a record is to be cut (a worker opens the archive only when
    something changed)."""

    archive: Archive | Callable[[], Archive]
    _shapes: dict[str, SectionShape] = field(default_factory=dict)
    _hierarchies: dict[str, Hierarchy | None] = field(default_factory=dict)
    _closed: dict[str, bool] = field(default_factory=dict)

    def opened(self) -> Archive:
        """The archive (opened on first use)."""
        return self.archive if isinstance(self.archive, Archive) else self.archive()

    def __call__(self, tipo: str) -> SectionShape:
        found = self._shapes.get(tipo)
        if found is None:
            found = self._shapes[tipo] = section_shape(self.opened(), tipo)
        return found

    def hierarchy(self, tipo: str) -> Hierarchy | None:
        """Section ``tipo``'s hierarchy (``None``: not one)."""
        if tipo not in self._hierarchies:
            self._hierarchies[tipo] = hierarchy_of(self.opened(), tipo)
        return self._hierarchies[tipo]

    def closed(self, tipo: str) -> bool:
        """Whether section ``tipo`` is restricted (its records without a flag of their own
        are)."""
        if tipo not in self._closed:
            self._closed[tipo] = self.opened().section(tipo).restricted
        return self._closed[tipo]
