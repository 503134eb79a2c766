"""The sections a list question's noun names: "¿Qué entrevistas…?" asks for interviews.

A composed answer searches again within the lead sections of its first search
(:func:`app.core.agent.composed_answer.lead_sections`), then says "He encontrado N
entrevistas". Over an imported archive the lead sections can be the subjects the import made
beside the interviews: "¿Qué entrevistas hablan de la guerra química?" over the OHMS export
listed 13 subject headings ("Korean War", "Home chemistry lab") and 3 interviews, and said
"He encontrado 16 entrevistas": a count that was not true of what it counted.

When the question's noun names a kind of record (interviews, photographs, images, letters,
testimonies, in Catalan, Spanish or English) and some of the first search's sections are
labelled as that kind in any of their languages (an interview section: "Entrevistas de historia
oral", "Oral-history interviews", the demo's "Història oral"), :func:`list_sections` keeps those
sections only, so what is counted is what the noun says. A generic noun (records, documents,
files, items, registres, documentos…) names no kind and keeps the lead sections, as does a
noun no section of the first search is labelled as. Only sections the first search returned
are kept, so the list search asks for nothing the egress gate did not already let through.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from app.core.index.names import fold

_INTERVIEWS = ("interview", "entrevist", "oral histor", "historia oral", "testimon")
_IMAGES = ("image", "imatge", "imagen", "photo", "fotograf", "foto")
_LETTERS = ("letter", "carta", "carte", "correspond")
KINDS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("interviews", "entrevistes", "entrevistas"), _INTERVIEWS),
    **dict.fromkeys(("testimonies", "testimonis", "testimonios"), _INTERVIEWS),
    **dict.fromkeys(("photographs", "photos", "fotografies", "fotografías", "fotos"), _IMAGES),
    **dict.fromkeys(("images", "imatges", "imágenes"), _IMAGES),
    **dict.fromkeys(("letters", "cartes", "cartas"), _LETTERS),
}
"""Each noun of :data:`app.core.agent.list_questions.RECORD_NOUNS` that names a kind of record,
with the beginnings of the words (folded: no accents, lower case) a section of that kind is
labelled with; the generic nouns are not here."""


def names_kind(labels: Iterable[str], noun: str) -> bool:
    """Whether a section labelled ``labels`` (all its languages) is of the kind ``noun`` names."""
    stems = KINDS.get(noun.lower(), ())
    for label in labels:
        folded = fold(label)
        if any(re.search(rf"\b{re.escape(stem)}", folded) for stem in stems):
            return True
    return False


def list_sections(
    lead: Sequence[str],
    found: Sequence[str],
    labels: Mapping[str, Iterable[str]],
    noun: str | None,
) -> list[str]:
    """The sections a list search looks in: those of ``found`` (the first search's sections,
    best first) labelled (``labels``: each section's labels) as the kind ``noun`` names, else
    ``lead``."""
    if not noun or noun.lower() not in KINDS:
        return list(lead)
    named = [tipo for tipo in dict.fromkeys(found) if names_kind(labels.get(tipo, ()), noun)]
    return named or list(lead)
