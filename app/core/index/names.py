"""Character-level matching of a query against record names (``La Corunya`` → ``A Coruña``).

Words alone miss a name translated or transliterated letter by letter (``Agrigent`` /
``Agrigentum``, ``Bàssora`` / ``Basra``) and the embedding models read such names as
rare word pieces. So, after fusion, a chunk whose *label* (the record's title) shares many
letter trigrams with the whole query moves up: ``score + NAME_WEIGHT · (sim − NAME_FLOOR) /
(1 − NAME_FLOOR)`` for a Dice similarity ``sim`` of accent-folded trigrams above
:data:`NAME_FLOOR`. Only a query that *is* (nearly) a record's name gets past the floor: a
question or a description shares few trigrams with any title. Measured in
``docs/search.md`` (nomisma labels, DBpedia-Entity, IGCH, Tate).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence

from app.core.index.storage import ChunkRow

NAME_WEIGHT = 0.3
NAME_FLOOR = 0.5
GRAM = 3

_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def fold(text: str) -> str:
    """Lower-cased, accents removed, every run of non-letters one space."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _NON_WORD.sub(" ", plain).strip()


def trigrams(text: str) -> frozenset[str]:
    """The letter trigrams of ``text`` folded, with a space at each end (word edges count)."""
    padded = f" {fold(text)} "
    return frozenset(padded[i : i + GRAM] for i in range(len(padded) - GRAM + 1))


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """Dice coefficient of two trigram sets, 0 (nothing shared) to 1 (the same)."""
    if not a or not b:
        return 0.0
    return 2 * len(a & b) / (len(a) + len(b))


def boost(
    ranked: Sequence[tuple[int, float]], rows: Mapping[int, ChunkRow], query: str
) -> list[tuple[int, float]]:
    """``ranked`` with chunks whose label resembles the whole query moved up, best first."""
    wanted = trigrams(query)
    if len(wanted) < 2:
        return list(ranked)
    cache: dict[str, float] = {}
    adjusted = []
    for cid, score in ranked:
        row = rows.get(cid)
        if row is not None and row.label:
            sim = cache.get(row.label)
            if sim is None:
                sim = cache[row.label] = similarity(wanted, trigrams(row.label))
            if sim > NAME_FLOOR:
                score += NAME_WEIGHT * (sim - NAME_FLOOR) / (1 - NAME_FLOOR)
        adjusted.append((cid, score))
    return sorted(adjusted, key=lambda item: (-item[1], item[0]))
