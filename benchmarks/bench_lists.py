"""List answers and topic searches on an imported finding aid, in Catalan, Spanish and English.

The University of Washington labor archives (``../shared/data/ead/uw-labor-archives``, 7,668
units) are imported into a fresh archive and indexed with the app's default models (MiniLM and
USE; about 3 minutes here), or ``--archive DIR`` reuses one already indexed. Six topics are
asked in each language: as a plain search (the ten best records, one hit per record), and as a
list question ("Quins documents hi ha sobre vagues?") the way a composed answer runs it: the
question searched for the sections to list from
(:func:`app.core.agent.composed_answer.list_sections_of`), then again within them, the
records above the cut (:mod:`app.core.agent.relevance_cut`) listed.

What counts as on the topic is derived, not judged by a person: a description (a unit of a
finding aid, not a subject heading or a name the import made for its access points) whose title
holds the topic's English word ("strike", "discrimination"...); each line also says how many of
the records are such headings (:mod:`app.core.index.headings`). It undercounts (a
"Correspondence" file of a strike series is about a strike too), so read the figures as a
floor on precision and as a comparison between two versions of the code, run one after the
other on the same archive.

``--demo DIR`` (an indexed copy of the demo archive) prints, for the 22 displacement queries of
``resources/demo/queries.json``, where the 7th best of the nine displacement interviews sits
between the list search's floor (0) and its best (1) — what the cut is measured from — and
how many displacement interviews the lists hold.

Run: ``python benchmarks/bench_lists.py [--archive DIR] [--demo DIR]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.core.agent.composed_answer import list_sections_of  # noqa: E402
from app.core.agent.grounding import SEARCH_TOOL, search_call  # noqa: E402
from app.core.agent.list_questions import list_noun  # noqa: E402
from app.core.agent.relevance_cut import FLOOR_K, LIST_K, floor_score, relevant_hits  # noqa: E402
from app.core.agent.sources import SourceHit, hits_of  # noqa: E402
from app.core.archive import Archive, open_archive  # noqa: E402
from app.core.archive.importers.authorities import AUTHORITY_SECTIONS  # noqa: E402
from app.core.importing import import_dataset  # noqa: E402
from app.core.index import open_index  # noqa: E402
from app.core.index.embedders import default_embedders  # noqa: E402
from app.core.paths import resources_dir  # noqa: E402
from app.core.tools.base import ToolContext  # noqa: E402
from app.core.tools.registry import build_registry  # noqa: E402

UW = REPO.parent / "shared" / "data" / "ead" / "uw-labor-archives"
DESCRIPTIONS = "ead1"
LANGS = ("ca", "es", "en")
TOPICS = {  # the English word a title holds → how the topic is said in ca, es, en
    "strike": ("vagues", "huelgas", "strikes"),
    "sexual harassment": ("assetjament sexual", "acoso sexual", "sexual harassment"),
    "discrimination": ("discriminació", "discriminación", "discrimination"),
    "women": ("dones sindicalistes", "mujeres sindicalistas", "union women"),
    "contract negotiation": (
        "negociacions de convenis",
        "negociaciones de convenios",
        "contract negotiations",
    ),
    "newsletter": ("butlletins sindicals", "boletines sindicales", "union newsletters"),
}
QUESTION = {
    "ca": "Quins documents hi ha sobre {}?",
    "es": "¿Qué documentos hay sobre {}?",
    "en": "Which records are about {}?",
}


class Lists:
    """The search tool as a composed answer calls it, over one indexed archive."""

    def __init__(self, archive: Archive) -> None:
        self.index = open_index(archive)
        self.registry = build_registry()
        self.context = ToolContext(archive=archive, searcher=self.index)

    async def hits(self, query: str, k: int, sections: list[str] | None = None) -> list[SourceHit]:
        """The search's hits, one per record."""
        args: dict[str, object] = {"query": query, "k": k}
        if sections is not None:
            args["sections"] = sections
        result = await self.registry.call(SEARCH_TOOL, args, self.context)
        return hits_of(result.data) if result.ok else []

    async def listed(self, question: str) -> tuple[list[SourceHit], list[SourceHit]]:
        """The list search's hits and the records a composed answer lists from them."""
        first = await self.registry.call(SEARCH_TOOL, search_call(question).arguments, self.context)
        sections = list_sections_of(first, self.context.archive, list_noun(question))
        hits = await self.hits(question, FLOOR_K, sections)
        return hits, relevant_hits(hits)[:LIST_K]


async def topics(lists: Lists) -> None:
    """Precision@10 of the plain search and the list answers' on-topic records, per language."""
    searched = {lang: 0 for lang in LANGS}
    listed = {lang: [0, 0] for lang in LANGS}
    headings = {lang: 0 for lang in LANGS}
    for word, said in TOPICS.items():
        for lang, topic in zip(LANGS, said, strict=True):
            question = QUESTION[lang].format(topic)
            top = (await lists.hits(question, 10))[:10]
            on_topic = _on_topic(word, top)
            searched[lang] += on_topic
            _, kept = await lists.listed(question)
            good = _on_topic(word, kept)
            listed[lang][0] += good
            listed[lang][1] += len(kept)
            headings[lang] += _headings(top)
            print(f"  {lang}  search {on_topic:2d}/10 ({_headings(top)} headings)   "
                  f"listed {good:2d} of {len(kept):2d} ({_headings(kept)} headings)   "
                  f"{question}")  # fmt: skip
    for lang in LANGS:
        precision = searched[lang] / (10 * len(TOPICS))
        good, total = listed[lang]
        print(f"{lang}: search P@10 {precision:.3f} ({headings[lang]} headings in the top tens); "
              f"list answers: {good} of {total} on the topic")  # fmt: skip


def _on_topic(word: str, hits: list[SourceHit]) -> int:
    """The descriptions among ``hits`` whose title holds ``word``."""
    return sum(h.section_tipo == DESCRIPTIONS and word in h.label.casefold() for h in hits)


def _headings(hits: list[SourceHit]) -> int:
    """The subject headings and names among ``hits`` (records an import made for access
    points)."""
    return sum(h.section_tipo in AUTHORITY_SECTIONS for h in hits)


async def demo(lists: Lists) -> None:
    """Where the 7th best displacement interview sits, and how many the lists hold."""
    spec = json.loads((resources_dir() / "demo" / "queries.json").read_text(encoding="utf-8"))
    wanted = {key for keys in spec["displacement"].values() for key in keys}
    positions: list[tuple[float, str]] = []
    found = total = 0
    for query in (q["text"] for q in spec["queries"] if q["relevant"] == "displacement"):
        hits, kept = await lists.listed(query)
        found += sum(f"{h.section_tipo}/{h.section_id}" in wanted for h in kept)
        total += len(kept)
        scores = [h.score for h in hits]
        floor, best = floor_score(scores), max(scores, default=0.0)
        placed = sorted(
            ((h.score - floor) / (best - floor) for h in hits if f"{h.section_tipo}/{h.section_id}"
             in wanted),
            reverse=True,
        )  # fmt: skip
        if len(placed) >= 7:
            positions.append((placed[6], query))
    positions.sort()
    print(f"demo: {found} displacement interviews among {total} records listed; the 7th best "
          f"sits at {positions[0][0]:.3f} or above in {len(positions)} queries "
          f"(lowest: {positions[0][1]!r})")  # fmt: skip


def indexed_uw(folder: Path) -> Archive:
    """The UW set imported into ``folder`` and indexed with the default models."""
    archive = open_archive(folder, create=True)
    import_dataset(archive, "ead", UW)
    start = time.perf_counter()
    index = open_index(archive, default_embedders())
    index.index_now()
    index.close()
    print(f"uw-labor-archives imported and indexed in {time.perf_counter() - start:.0f} s")
    return archive


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--archive", type=Path, help="an indexed import of the UW set")
    parser.add_argument("--demo", type=Path, help="an indexed copy of the demo archive")
    args = parser.parse_args()
    if args.demo:
        with open_archive(args.demo) as archive:
            lists = Lists(archive)
            asyncio.run(demo(lists))
            lists.index.close()
    if not UW.is_dir():
        print(f"skipped: the EAD set is not at {UW}")
        return
    with tempfile.TemporaryDirectory() as work:
        archive = open_archive(args.archive) if args.archive else indexed_uw(Path(work) / "uw")
        with archive:
            lists = Lists(archive)
            asyncio.run(topics(lists))
            lists.index.close()


if __name__ == "__main__":
    main()
