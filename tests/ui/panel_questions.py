"""Asking one question in the real assistant panel with a scripted model that calls the
semantic search tool and cites every hit it returned, so that the sources the panel shows are
what the index ranked (shared by the multilingual panel tests)."""

from __future__ import annotations

import json
import re
from typing import Any

from app.core.archive import Archive
from app.core.index import Index
from app.core.models.catalog import catalog_from_data
from app.core.models.scripted import ScriptedModel, Turn, call
from app.core.session import AssistantSession, AssistantSettings
from app.ui.app_settings import AppSettings
from app.ui.assistant.answer_widget import AnswerWidget
from app.ui.main_window import MainWindow
from app.ui.services import Services
from tests.ui.conftest import LOCAL, emitted, run


def cite_the_hits(messages: list[Any]) -> Turn:
    """What a model does with the tool's answer: cite every hit as Label (section/id)."""
    result = json.loads(messages[-1].content)
    hits = result.get("data", result).get("hits", [])
    lines = [f"- {h['label']} ({h['section_tipo']}/{h['section_id']})" for h in hits]
    return Turn(text="Entrevistes trobades:\n" + "\n".join(lines))


def ask_in_panel(
    qloop: Any, archive: Archive, index: Index, question: str, *, k: int, timeout: float
) -> tuple[list[str], str]:
    """The ``section/id`` citations of the panel's answer to ``question``, in order, and the
    answer's text (for assertion messages)."""
    search = call("dedalo_semantic_search", {"query": question, "k": k}, "s1")
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
        with emitted(qloop, window.assistant.turn_finished, timeout=timeout):
            window.assistant.send(question)
        answers = [w for w in window.assistant.view.widgets() if isinstance(w, AnswerWidget)]
        return re.findall(r"record:(\w+/\d+)", answers[-1].toHtml()), answers[-1].toPlainText()
    finally:
        window.close()
        run(qloop, window.aclose())
        run(qloop, window.services.aclose())
        window.deleteLater()
