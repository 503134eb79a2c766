"""What the chunker needs of a section, read once per batch or pass: its text fields, its label
field and its reference-code field (shared by a folder's import chunking and a shared
archive's server-side chunker)."""

from __future__ import annotations

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
