"""Services builds the real, typed session: its tools label in the UI's language, and a change
of the settings file reaches the live session through one place."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest

from app.core.archive import Archive
from app.core.errors import ArxiuError
from app.core.session import AssistantSession
from app.core.tools.base import ToolContext
from app.main import build_session
from app.ui.app_settings import AppSettings
from app.ui.services import Services
from tests.ui.conftest import run


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
    """Regression: build_session never passed the UI language, so tools labelled in English."""
    services = Services(ui_archive, AppSettings(), lang=lang, session_factory=build_session)
    session = run(qloop, services.session())
    assert isinstance(session, AssistantSession)
    assert session.settings.lang == lang
    context = ToolContext(archive=ui_archive, lang=session.settings.lang)
    result = run(qloop, session.registry.call("dedalo_list_sections", {}, context))
    labels = {s["tipo"]: s["label"] for s in result.data["sections"]}
    assert labels["oh1"] == label
    run(qloop, services.aclose())


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
