"""Services builds the real, typed session: its tools label in the UI's language, and a change
of the settings file reaches the live session through one place."""

from __future__ import annotations

import gc
import json
import typing
from collections.abc import Iterator
from typing import Any

import pytest

from app.core.agent.request import ChatRequest
from app.core.archive import Archive
from app.core.errors import ArxiuError
from app.core.models.catalog import catalog_from_data
from app.core.models.scripted import ScriptedModel, Turn, call
from app.core.session import AssistantSession
from app.main import build_session
from app.ui.app_settings import AppSettings
from app.ui.services import Services
from tests.ui.conftest import LOCAL, run


@pytest.fixture(autouse=True)
def collect_on_the_gui_thread() -> Iterator[None]:
    """Free this test's Qt wrapper cycles (the qasync loop's timers) here, on the GUI thread:
    left to a later collection they may be freed on a worker thread, which Qt refuses."""
    yield
    gc.collect()


@pytest.mark.parametrize(
    ("lang", "label"), [("lg-cat", "Història oral"), ("lg-eng", "Oral history")]
)
def test_the_session_built_for_the_window_labels_in_the_ui_language(
    qloop: Any, ui_archive: Archive, lang: str, label: str
) -> None:
    """Regression: build_session never passed the UI language, so tools labelled in English.

    The session is the one ``build_session`` makes for the window (its settings, its
    language), run with a scripted model: the labels checked are those the model got back
    from its tool call, not ones the test asked for itself."""
    model = ScriptedModel(
        [Turn(tool_calls=(call("dedalo_list_sections", {}, "s1"),)), Turn(text="Listed.")],
        id="scripted",
    )

    def factory(
        archive: Archive, searcher: Any, settings: AppSettings, ui_lang: str
    ) -> AssistantSession:
        built = build_session(archive, searcher, settings, ui_lang)
        return AssistantSession(
            archive,
            catalog_from_data([dict(LOCAL)]),
            settings=built.settings,
            model_factory=lambda _entry: model,
        )

    services = Services(ui_archive, AppSettings(), lang=lang, session_factory=factory)
    session = run(qloop, services.session())
    run(
        qloop,
        _drain(
            run(
                qloop,
                session.chat(ChatRequest.from_dict({"question": "Which sections are there?"})),
            )
        ),
    )
    results = [m.content for m in model.calls[-1].messages if m.role == "tool"]
    assert len(results) == 1
    labels = {s["tipo"]: s["label"] for s in json.loads(results[0])["data"]["sections"]}
    assert labels["oh1"] == label
    run(qloop, services.aclose())


async def _drain(stream: Any) -> None:
    async for _ in stream:
        pass


def test_a_settings_change_reaches_the_live_session(qloop: Any, ui_archive: Archive) -> None:
    settings = AppSettings()
    services = Services(ui_archive, settings, lang="lg-spa", session_factory=build_session)
    session = run(qloop, services.session())
    assert session.settings.write_allowed and not session.settings.external_content
    settings.set("write_mode", False)
    settings.set("external_content", True)
    services.apply_settings()
    assert not session.settings.write_allowed and session.settings.external_content
    assert session.settings.lang == "lg-spa"
    run(qloop, services.aclose())


def test_no_session_to_build_is_a_coded_error(qloop: Any, ui_archive: Archive) -> None:
    services = Services(ui_archive, AppSettings())
    with pytest.raises(ArxiuError) as caught:
        run(qloop, services.session())
    assert caught.value.code == "ai.session_unavailable" and caught.value.hint
    run(qloop, services.aclose())


def test_the_ui_gets_the_session_typed_from_services() -> None:
    """Regression: ``Services.session() -> Any`` switched off strict typing for every UI call
    into the core; mypy checks those calls only while Services hands out the real type."""
    from app.core.index.hits import Searcher
    from app.ui import services as module

    names = {**vars(module), "AssistantSession": AssistantSession, "Searcher": Searcher}
    session_now = Services.session_now.fget
    assert session_now is not None
    assert typing.get_type_hints(Services.session, names)["return"] is AssistantSession
    assert typing.get_type_hints(session_now, names)["return"] == AssistantSession | None
    assert typing.get_type_hints(Services.set_session, names)["session"] is AssistantSession


def test_the_index_service_is_the_sessions_searcher_and_closes_with_services(
    qloop: Any, ui_archive: Archive
) -> None:
    """Regression: Services typed the index service ``Any`` and handed the session
    ``getattr(index, "searcher", index)``. The index the factory builds is, itself, the
    session's searcher (one the search tool really searches), and ``aclose`` closes it."""
    from app.core.index import HashingEmbedder
    from app.core.index.opening import ArchiveIndex, open_index
    from app.ui.services import IndexService

    built: list[ArchiveIndex] = []
    given: list[object] = []

    def index_factory(archive: Archive, _settings: AppSettings) -> ArchiveIndex:
        built.append(open_index(archive, HashingEmbedder()))
        return built[-1]

    def session_factory(
        archive: Archive, searcher: Any, settings: AppSettings, lang: str
    ) -> AssistantSession:
        given.append(searcher)
        return build_session(archive, searcher, settings, lang)

    services = Services(
        ui_archive, AppSettings(), session_factory=session_factory, index_factory=index_factory
    )
    session = run(qloop, services.session())
    (index,) = built
    assert given == [index] and session.searcher is index and services.index_now is index
    index.sync_lexical()
    hits = session.searcher.search("pantà", k=3, mode="lexical")
    assert [str(hit.key) for hit in hits] == ["oh1/1"]
    assert index.indexer.notify in ui_archive._listeners
    run(qloop, services.aclose())
    assert services.index_now is None and services.session_now is None
    assert index.indexer.notify not in ui_archive._listeners  # detached: closed
    from app.ui import services as module

    hints = typing.get_type_hints(Services.index, vars(module))
    assert hints["return"] == IndexService | None  # mypy checks the UI's calls into the index
