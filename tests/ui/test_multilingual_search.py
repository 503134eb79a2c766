"""A Catalan question in the assistant panel finds the Catalan displacement interviews (slow:
the real MiniLM and USE models index the archive; the chat model is scripted, and cites what
the semantic search tool returned)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.archive import Archive, Field, Section, open_archive
from app.core.index import Index
from app.core.index.embedders import default_embedders
from app.core.models.catalog import catalog_from_data
from app.core.models.scripted import ScriptedModel, Turn, call
from app.core.session import AssistantSession, AssistantSettings
from app.ui.app_settings import AppSettings
from app.ui.assistant.answer_widget import AnswerWidget
from app.ui.main_window import MainWindow
from app.ui.services import Services
from tests.ui.conftest import LOCAL, emitted, run

QUESTION = "Quines entrevistes parlen de les famílies que van haver de marxar pel pantà?"
INTERVIEWS = [
    (
        "La casa sota l'aigua",
        "lg-cat",
        "Quan van omplir el pantà ens van fer marxar de casa. "
        "Tota la família va haver de deixar el poble i anar a viure a Manlleu.",
    ),
    (
        "El darrer estiu a la vall",
        "lg-cat",
        "L'estiu abans de la inundació vam recollir les "
        "coses. Els veïns marxaven un a un; la presa va negar les cases i els horts.",
    ),
    (
        "Desallotjats",
        "lg-cat",
        "Ens van expropiar la masia per fer l'embassament. El meu pare "
        "no ho va acceptar mai; vam haver de començar de nou lluny de la vall.",
    ),
    (
        "La festa major",
        "lg-cat",
        "A la festa major ballàvem sardanes a la plaça i els castellers "
        "feien pilars. Era el dia més alegre de l'any.",
    ),
    (
        "El mercat del dissabte",
        "lg-cat",
        "Cada dissabte anàvem al mercat a vendre ous i formatges. La meva àvia coneixia tothom.",
    ),
    (
        "La escuela del pueblo",
        "lg-spa",
        "La maestra nos enseñaba a leer con un libro viejo. "
        "En invierno la estufa apenas calentaba el aula.",
    ),
]


def build(folder: Path) -> Archive:
    archive = open_archive(folder, create=True)
    archive.put_section(Section("oh1", {"lg-cat": "Entrevistes"}, label_field="oh2"))
    archive.put_field(Field("oh2", "oh1", {"lg-cat": "Títol"}, "text", True, position=1))
    archive.put_field(
        Field("oh3", "oh1", {"lg-cat": "Transcripció"}, "transcription", True, position=2)
    )
    for title, lang, text in INTERVIEWS:
        archive.create_record(
            "oh1",
            {
                "oh2": [{"lang": lang, "value": title}],
                "oh3": [{"lang": lang, "value": f"[TC_00:00:05.000_TC] {text}"}],
            },
        )
    return archive


@pytest.fixture
def indexed(tmp_path: Path) -> Iterator[tuple[Archive, Index]]:
    archive = build(tmp_path / "archive")
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
def test_a_catalan_question_cites_the_catalan_displacement_interviews(
    qtbot: Any, qloop: Any, indexed: tuple[Archive, Index]
) -> None:
    archive, index = indexed
    search = call("dedalo_semantic_search", {"query": QUESTION, "k": 3}, "s1")
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
        with emitted(qloop, window.assistant.turn_finished, timeout=150.0):
            window.assistant.send(QUESTION)
        answers = [w for w in window.assistant.view.widgets() if isinstance(w, AnswerWidget)]
        cited = set(re.findall(r"record:oh1/(\d+)", answers[-1].toHtml()))
        assert cited == {"1", "2", "3"}, answers[-1].toPlainText()
    finally:
        window.close()
        run(qloop, window.aclose())
        run(qloop, window.services.aclose())
        window.deleteLater()
