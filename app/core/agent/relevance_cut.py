"""Which hits of a list search are relevant: a cut measured on the demo's reservoir questions.

A list question ("Which interviews talk about the families who had to leave…") is searched for
:data:`FLOOR_K` records of its lead sections. Fused scores have no fixed scale: an English query
that both retrievers match well leaves its unrelated records near 0.4, a Spanish one near
0.2, so neither an absolute cut nor a plain share of the best score fits every language. The
cut is measured from each search's own *floor*, the median score of the records it returned
(what an unrelated record scores for that query): a record is relevant when it rises at least
:data:`CUT` of the way from the floor to the best score; the first :data:`LIST_K` are listed.

How :data:`CUT` was chosen: on the demo archive with the default MiniLM + USE index, the 22
displacement queries of ``resources/demo/queries.json`` were run as a composed answer runs them
(lead sections, then :data:`FLOOR_K` records) and each record placed between floor (0) and best
(1). In the 21 queries whose lead sections include the interviews, the 7th best of the nine
displacement interviews sits at 0.139 or above ("familias que se fueron cuando construyeron el
pantano" the lowest); so a cut at or below 0.139 lists at least 7 of the 9 for every one of
them, and 0.12 leaves a margin under the weakest. Asked for 30 records, the median was the
floor, the lowest 7th best sat at 0.101 and the cut was 0.08: the same 22 queries listed 170
displacement interviews among 239 records, against 177 among 283 now; on the University of
Washington labor archives (18 list questions, six topics in Catalan, Spanish and English), a
record titled with the topic's word was listed 55 times among 176 records, against 80 among
257 now. ``python benchmarks/bench_lists.py --demo DIR`` prints both measures.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from app.core.agent.sources import SourceHit
from app.core.tools.search import MAX_K

LIST_K = 30
"""How many records a list answer lists at most."""
FLOOR_K = MAX_K
"""How many records a list search asks for (one hit per record; the most the search tool
gives, 50): the floor is their median. Asking for :data:`LIST_K` only, a topic with more than
about 15 records in the archive made its own median: on the University of Washington labor
archives, "Which records are about strikes?" listed 4 of the search's 30 records, all but a
few of the 30 about a strike."""
CUT = 0.12
"""The share of the way from the floor to the best score a relevant record rises."""
MIN_FLOOR_HITS = 10
"""With fewer records than this the search's floor is not known: it is taken as 0."""


def floor_score(scores: Sequence[float]) -> float:
    """What an unrelated record scores for this search: the median of ``scores`` (0 for too
    few)."""
    return statistics.median(scores) if len(scores) >= MIN_FLOOR_HITS else 0.0


def relevant_hits(hits: Sequence[SourceHit], cut: float = CUT) -> list[SourceHit]:
    """The hits above the cut (see the module docstring), in rank order (best score first,
    search order breaking ties); a list answer keeps the first :data:`LIST_K`."""
    if not hits:
        return []
    ranked = sorted(enumerate(hits), key=lambda item: (-item[1].score, item[0]))
    best = ranked[0][1].score
    floor = floor_score([hit.score for hit in hits])
    if best <= floor:
        return [hit for _, hit in ranked if hit.score >= best]
    threshold = floor + cut * (best - floor)
    return [hit for _, hit in ranked if hit.score >= threshold]
