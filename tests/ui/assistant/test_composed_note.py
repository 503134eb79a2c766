"""A composed answer in the panel: its records are links, and a note says the core wrote it
(a scripted model that writes English only and must not be asked; the hashing index)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.archive import Archive
from app.core.index.embedders import HashingEmbedder
from app.core.index.service import Index
from app.core.models.catalog import catalog_from_data
from app.core.models.scripted import ScriptedModel
from app.core.session import AssistantSession, AssistantSettings
from app.ui import i18n
from app.ui.app_settings import AppSettings
from app.ui.assistant.answer_widget import AnswerWidget
from app.ui.assistant.turn_widgets import NoticeLabel
from app.ui.main_window import MainWindow
from app.ui.services import Services
from tests.core.agent.conftest import build_archive
from tests.ui.conftest import LOCAL, emitted, run

QUESTION = "Qui va haver de marxar de Sant Romà quan el pantà va negar la vall?"
NOTE = "Composed from the records: no model prose."


@pytest.fixture
def archive(tmp_path: Path) -> Iterator[Archive]:
    arch = build_archive(tmp_path / "oh")
    yield arch
    arch.close()


@pytest.mark.parametrize("lang", ["en", "ca", "es"])
def test_a_composed_answer_links_its_records_under_a_translated_note(
    qapp: Any, qloop: Any, archive: Archive, lang: str
) -> None:
    index = Index(archive, HashingEmbedder())
    index.index_now()
    model = ScriptedModel(id="local-test")
    session = AssistantSession(
        archive,
        catalog_from_data([{**LOCAL, "languages": ["en"]}]),
        searcher=index,
        settings=AssistantSettings(),
        model_factory=lambda entry: model,
    )
    services = Services(archive, AppSettings())
    services.set_session(session)
    translator = i18n.install_translator(qapp, lang)
    window = MainWindow(services)
    window.show()
    try:
        run(qloop, window.assistant.load_models())
        with emitted(qloop, window.assistant.turn_finished, timeout=60.0):
            window.assistant.send(QUESTION)
        widgets = window.assistant.view.widgets()
        answer = [w for w in widgets if isinstance(w, AnswerWidget)][-1]
        assert answer.toPlainText().startswith("He trobat ")
        assert "record:oh1/1" in answer.toHtml()
        assert re.findall(r"record:(\w+/\d+)", answer.toHtml())
        notes = [w.text() for w in widgets if isinstance(w, NoticeLabel)]
        expected = i18n.load_table(lang).get(NOTE, NOTE)
        assert expected in notes and model.calls == []
        if lang != "en":
            assert expected != NOTE  # translated
    finally:
        if translator is not None:
            qapp.removeTranslator(translator)
        window.close()
        run(qloop, window.aclose())
        run(qloop, window.services.aclose())
        window.deleteLater()
        index.close()
