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

Any question that asks for records, generic noun included, asks for what describes its topic,
not for the topic's heading: :func:`described` leaves out the access points an import made
(names, places, subjects) before the lead sections are chosen, unless the first search found
nothing else ("Quins documents hi ha sobre dones sindicalistes?" over the UW finding aids had
led with the subjects and listed fourteen headings as "14 documents").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from app.core.agent.sources import Source
from app.core.archive.access_points import AUTHORITY_SECTIONS
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


def described(records: Sequence[Source]) -> list[Source]:
    """``records`` without the access points an import made (the names, places and subjects
    of :data:`~app.core.archive.access_points.AUTHORITY_SECTIONS`): a question that
    asks for records asks for what describes the topic, not for its heading."""
    return [record for record in records if record.section_tipo not in AUTHORITY_SECTIONS]


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
