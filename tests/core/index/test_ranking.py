"""Ranking on the demo archive with the default model (slow: real MiniLM embeddings).

The expectations come from ``resources/demo/queries.json``: for each query, the displacement
interviews written in the query's language are all in the top 5 interviews, and no interview
that merely mentions the reservoir ranks above any of them.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.archive import RecordKey, open_archive
from app.core.index import Index, SearchFilter, SentenceTransformerEmbedder
from app.core.paths import resources_dir

QUERIES = resources_dir() / "demo" / "queries.json"


def _spec() -> dict[str, Any]:
    if not QUERIES.exists():
        pytest.skip(f"demo queries not available: {QUERIES}")
    spec: dict[str, Any] = json.loads(QUERIES.read_text(encoding="utf-8"))
    return spec


@pytest.fixture(scope="module")
def demo_index(
    demo_archive_dir: Path,
    tmp_path_factory: pytest.TempPathFactory,
    minilm: SentenceTransformerEmbedder,
) -> Iterator[Index]:
    """The demo archive (a copy) indexed with the bundled MiniLM."""
    folder = tmp_path_factory.mktemp("demo-index") / "archive"
    shutil.copytree(demo_archive_dir, folder)
    archive = open_archive(folder)
    index = Index(archive, minilm)
    index.index_now()
    yield index
    index.close()
    archive.close()


def _cases() -> list[Any]:
    """One case per query; a query with a ``known_miss`` is expected to fail, strictly, so
    that a ranking change which fixes it is noticed (and the mark removed)."""
    if not QUERIES.exists():
        return []
    cases = []
    for q in _spec()["queries"]:
        marks = (
            [pytest.mark.xfail(strict=True, reason=q["known_miss"])] if "known_miss" in q else []
        )
        cases.append(pytest.param(q["lang"], q["text"], q["relevant"], marks=marks))
    return cases


def test_every_language_has_a_query_that_must_pass() -> None:
    must_pass = {q["lang"] for q in _spec()["queries"] if "known_miss" not in q}
    assert must_pass >= {"lg-cat", "lg-spa", "lg-eng"}


@pytest.mark.slow
@pytest.mark.parametrize(("lang", "text", "relevant"), _cases())
def test_displacement_queries_rank_their_interviews_first(
    demo_index: Index, lang: str, text: str, relevant: str
) -> None:
    spec = _spec()
    wanted = {RecordKey.parse(k) for k in spec[relevant][lang]}
    mentions = {
        RecordKey.parse(k) for keys in spec["reservoir_mention_only"].values() for k in keys
    }
    hits = demo_index.search(
        text, k=20, filter=SearchFilter(sections=(spec["section"],)), group_by_record=True
    )
    ranked = [h.key for h in hits]
    assert wanted <= set(ranked[:5]), ranked[:5]
    last_wanted = max(ranked.index(k) for k in wanted)
    assert not mentions & set(ranked[:last_wanted]), ranked[: last_wanted + 1]


@pytest.mark.slow
def test_displacement_interviews_outrank_mere_mentions(demo_index: Index) -> None:
    """Across languages, every query's best interview is a displacement one.

    Known exception: "records dels veïns…" puts oh1/26 first — "records" (memories) shares its
    stem with "recorda" (remembers) in oh1/26's summary, and the English-only model cannot
    outweigh that in Catalan; the displacement interviews follow at ranks 2, 4 and 5.
    """
    spec = _spec()
    displacement = {RecordKey.parse(k) for keys in spec["displacement"].values() for k in keys}
    for query in spec["queries"]:
        if "known_miss" in query or query["text"].startswith("records dels veïns"):
            continue
        hits = demo_index.search(
            query["text"],
            k=5,
            filter=SearchFilter(sections=(spec["section"],)),
            group_by_record=True,
        )
        assert hits[0].key in displacement, (query["text"], [h.key for h in hits])
