"""Semantic search and passages, with a fake index (the real one is tested in tests/core/index)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.archive import RecordKey
from app.core.archive.hierarchy import hierarchy_of
from app.core.archive.importers import run_import
from app.core.index.hits import SearchFilter, SearchHit, SearchMode
from app.core.tools.base import ToolContext
from app.core.tools.registry import ToolRegistry
from app.core.tools.search import split_passages


@dataclass
class FakeSearcher:
    """Returns canned hits and remembers how it was asked."""

    hits: list[SearchHit]
    calls: list[dict[str, Any]] = field(default_factory=list)

    def search(
        self,
        query: str,
        *,
        k: int = 10,
        mode: SearchMode = "hybrid",
        filter: SearchFilter | None = None,
        group_by_record: bool = False,
        lang: str | None = None,
    ) -> list[SearchHit]:
        self.calls.append(
            {"query": query, "k": k, "mode": mode, "filter": filter, "per_record": group_by_record}
        )
        return self.hits[:k]


HITS = [
    SearchHit(
        RecordKey("oh1", 1),
        "When they made us leave",
        "marxar de casa",
        "oh25",
        "lg-cat",
        0.91,
        timecode="00:00:01.000",
    ),
    SearchHit(
        RecordKey("oh1", 1),
        "When they made us leave",
        "sota l'aigua",
        "oh25",
        "lg-cat",
        0.80,
        timecode="00:01:10.500",
    ),
    SearchHit(RecordKey("rsc197", 1), "Josep Vila", "Súria", "rsc90", "lg-nolan", 0.5),
]


async def test_semantic_search_passes_the_filter_and_lists_every_hit_key(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    searcher = FakeSearcher(HITS)
    ctx.searcher = searcher
    ctx.exclude_restricted = True
    args = {"query": "people who had to leave", "k": 5, "sections": ["Oral history", "People"]}
    result = await registry.call("dedalo_semantic_search", args, ctx)
    assert result.ok
    (call,) = searcher.calls
    assert call["mode"] == "hybrid" and call["k"] == 5
    assert call["filter"] == SearchFilter(sections=("oh1", "rsc197"), exclude_restricted=True)
    assert result.records == (RecordKey("oh1", 1), RecordKey("rsc197", 1))
    assert set(result.sections) == {"oh1", "rsc197"}
    first = result.data["hits"][0]
    assert first["section_tipo"] == "oh1" and first["section_id"] == 1
    assert first["timecode"] == "00:00:01.000" and first["field"] == "oh25"
    assert {"label", "snippet", "page", "score"} <= set(first)


async def test_semantic_search_without_an_index(registry: ToolRegistry, ctx: ToolContext) -> None:
    result = await registry.call("dedalo_semantic_search", {"query": "x"}, ctx)
    assert (result.ok, result.code) == (False, "index.unavailable")
    assert result.hint


async def test_semantic_search_refuses_unknown_sections(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    ctx.searcher = FakeSearcher(HITS)
    result = await registry.call(
        "dedalo_semantic_search", {"query": "x", "sections": ["Mints"]}, ctx
    )
    assert result.code == "mcp.section_unknown"


def test_split_passages_at_timecodes_and_pages() -> None:
    passages = split_passages("oh25", "lg-cat", "Intro. [TC_00:00:05.250_TC] One. [page-n-3] Two.")
    assert [(p.text, p.timecode, p.page) for p in passages] == [
        ("Intro.", None, None),
        ("One.", "00:00:05.250", None),
        ("Two.", "00:00:05.250", "3"),
    ]


async def test_passages_in_order_with_timecodes(registry: ToolRegistry, ctx: ToolContext) -> None:
    args = {"section_tipo": "oh1", "section_id": 1, "k": 1, "offset": 1}
    result = await registry.call("dedalo_retrieve_passages", args, ctx)
    assert result.data["total"] == 2
    (passage,) = result.data["passages"]
    assert passage["timecode"] == "00:01:10.500"
    assert passage["text"].startswith("L'església")
    assert result.records == (RecordKey("oh1", 1),)


async def test_passages_by_query_without_an_index_rank_by_words(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    args = {"section_tipo": "oh1", "section_id": 1, "query": "esglesia"}
    result = await registry.call("dedalo_retrieve_passages", args, ctx)
    assert [p["timecode"] for p in result.data["passages"]] == ["00:01:10.500"]


async def test_passages_by_query_use_the_index_on_that_record(
    registry: ToolRegistry, ctx: ToolContext
) -> None:
    searcher = FakeSearcher(HITS)
    ctx.searcher = searcher
    args = {"section_tipo": "oh1", "section_id": 1, "query": "leaving home", "k": 3}
    result = await registry.call("dedalo_retrieve_passages", args, ctx)
    assert searcher.calls[0]["filter"].records == (RecordKey("oh1", 1),)
    assert [p["timecode"] for p in result.data["passages"]] == ["00:00:01.000", "00:01:10.500"]
    assert result.records == (RecordKey("oh1", 1),)


async def test_semantic_search_within_a_fonds_searches_it_and_all_under_it(
    registry: ToolRegistry, ctx: ToolContext, tmp_path: Path
) -> None:
    """``within`` keeps the search to a record and every record under it (read from the
    archive's own "part of" links); a key that is not one, or not there, is a coded error."""
    table = tmp_path / "fons.csv"
    table.write_text(
        "identifier,title,parentId\nF1,Fons Puig,\nS1,Cartes,F1\nD1,Carta,S1\nF2,Fons Mas,\n",
        encoding="utf-8",
    )
    run_import(ctx.archive, "csv", table)
    section = next(s.tipo for s in ctx.archive.sections() if s.tipo.startswith("csv"))
    shape = hierarchy_of(ctx.archive, section)
    assert shape is not None and shape.reference_field is not None
    by_code = {r.text(shape.reference_field): r.key for r in ctx.archive.iter_records(section)}
    searcher = FakeSearcher(HITS)
    ctx.searcher = searcher

    fonds = by_code["F1"]
    result = await registry.call(
        "dedalo_semantic_search", {"query": "cartes", "within": str(fonds)}, ctx
    )
    wrong = await registry.call("dedalo_semantic_search", {"query": "x", "within": "F1"}, ctx)
    gone = await registry.call(
        "dedalo_semantic_search", {"query": "x", "within": f"{section}/999"}, ctx
    )

    assert result.ok
    (call,) = searcher.calls
    assert set(call["filter"].records) == {by_code["F1"], by_code["S1"], by_code["D1"]}
    assert (wrong.ok, wrong.code) == (False, "mcp.invalid_value")
    assert (gone.ok, gone.code) == (False, "archive.record_not_found")
