"""The Catalan question of issue 9, asked in the assistant panel over the demo archive (slow: the
real MiniLM and USE models index the whole demo archive; the chat model is scripted: it calls
the semantic search tool with the question and cites every hit the tool returned, so what the
panel shows as sources is what the index ranked)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.archive import Archive, RecordKey, open_archive
from app.core.index import Index
from app.core.index.embedders import default_embedders
from app.core.models.catalog import catalog_from_data
from app.core.models.scripted import ScriptedModel, Turn, call
from app.core.paths import resources_dir
from app.core.session import AssistantSession, AssistantSettings
from app.ui.app_settings import AppSettings
from app.ui.assistant.answer_widget import AnswerWidget
from app.ui.main_window import MainWindow
from app.ui.services import Services
from tests.ui.conftest import LOCAL, emitted, run

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


def cite_the_hits(messages: list[Any]) -> Turn:
    """What a model does with the tool's answer: cite every hit as Label (section/id)."""
    result = json.loads(messages[-1].content)
    hits = result.get("data", result).get("hits", [])
    lines = [f"- {h['label']} ({h['section_tipo']}/{h['section_id']})" for h in hits]
    return Turn(text="Entrevistes trobades:\n" + "\n".join(lines))


@pytest.mark.slow
@pytest.mark.timeout(1500)  # indexing the whole demo archive with both models
def test_the_catalan_question_cites_catalan_displacement_interviews(
    qtbot: Any, qloop: Any, demo: tuple[Archive, Index]
) -> None:
    archive, index = demo
    search = call("dedalo_semantic_search", {"query": QUESTION, "k": 8}, "s1")
    model = ScriptedModel([Turn(tool_calls=(search,)), cite_the_hits], id="scripted")
    session = AssistantSession(
        archive,
        catalog_from_data([dict(LOCAL)]),
        searcher=index,
        settings=AssistantSettings(),
        model_factory=lambda entry: model,
    )
    services = Services(archive, AppSettings())
    services.set_session(session)
    window = MainWindow(services)
    window.show()
    try:
        run(qloop, window.assistant.load_models())
        with emitted(qloop, window.assistant.turn_finished, timeout=300.0):
            window.assistant.send(QUESTION)
        answers = [w for w in window.assistant.view.widgets() if isinstance(w, AnswerWidget)]
        cited = re.findall(r"record:(oh1/\d+)", answers[-1].toHtml())
        catalan = displacement("lg-cat")
        assert len(catalan & set(cited)) >= 2, answers[-1].toPlainText()
        every = catalan | displacement("lg-spa") | displacement("lg-eng")
        assert cited and cited[0] in every, answers[-1].toPlainText()
    finally:
        window.close()
        run(qloop, window.aclose())
        run(qloop, window.services.aclose())
        window.deleteLater()
