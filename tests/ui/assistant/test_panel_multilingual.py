"""The Catalan question of issue 9, asked in the assistant panel over the demo archive (slow: the
real MiniLM and USE models index the whole demo archive; the chat model is scripted: it calls
the semantic search tool with the question and cites every hit the tool returned, so what the
panel shows as sources is what the index ranked)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.archive import Archive, RecordKey, open_archive
from app.core.index import Index
from app.core.index.embedders import default_embedders
from app.core.paths import resources_dir
from tests.ui.panel_questions import ask_in_panel

QUESTION = "Quines entrevistes parlen de les famílies que van haver de marxar pel pantà?"


def displacement(lang: str) -> set[str]:
    """The displacement interviews written in ``lang``, as ``section/id`` citations."""
    spec = json.loads((resources_dir() / "demo" / "queries.json").read_text(encoding="utf-8"))
    return {str(RecordKey.parse(k)) for k in spec["displacement"][lang]}


@pytest.fixture
def demo(demo_archive_dir: Path, tmp_path: Path) -> Iterator[tuple[Archive, Index]]:
    """A copy of the demo archive, indexed with the default models."""
    folder = tmp_path / "archive"
    shutil.copytree(demo_archive_dir, folder)
    archive = open_archive(folder)
    index = Index(archive, default_embedders())
    index.index_now()
    yield archive, index
    index.close()
    archive.close()


@pytest.mark.slow
@pytest.mark.timeout(1500)  # indexing the whole demo archive with both models
def test_the_catalan_question_cites_catalan_displacement_interviews(
    qtbot: Any, qloop: Any, demo: tuple[Archive, Index]
) -> None:
    archive, index = demo
    cited, text = ask_in_panel(qloop, archive, index, QUESTION, k=8, timeout=300.0)
    catalan = displacement("lg-cat")
    assert len(catalan & set(cited)) >= 2, text
    every = catalan | displacement("lg-spa") | displacement("lg-eng")
    assert cited and cited[0] in every, text
