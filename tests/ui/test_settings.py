"""Settings: a model test streams a reply; changes reach the live session and the index key."""

from __future__ import annotations

import threading
from typing import Any

from PySide6.QtCore import Qt

from app.core.agent.run_thread import THREAD_NAME
from app.core.models.base import Message
from app.core.models.scripted import Turn
from app.ui.model_check import check_model
from app.ui.settings_dialog import MODEL_ROLE, MODEL_SETTING, SettingsDialog
from tests.ui.conftest import emitted, run


def _open_settings(window: Any) -> SettingsDialog:
    window.open_settings()
    dialog = window.settings_dialog
    assert isinstance(dialog, SettingsDialog)
    return dialog


def test_testing_a_model_streams_a_reply_and_shows_tokens_per_second(make_window: Any) -> None:
    window = make_window([Turn(text="An archive keeps records.")])
    ok, text = run(make_window.loop, check_model(window.services, "local-test"))
    assert ok
    assert "tokens/s" in text and "An archive keeps records." in text


def test_a_model_test_streams_on_the_runs_loop_never_on_the_gui_thread(make_window: Any) -> None:
    window = make_window()
    streamed_on: list[str] = []

    def reply(_messages: list[Message]) -> Turn:
        streamed_on.append(threading.current_thread().name)
        return Turn(text="An archive keeps records.")

    make_window.models[-1].extend(reply)
    ok, text = run(make_window.loop, check_model(window.services, "local-test"))
    assert ok and "An archive keeps records." in text
    assert streamed_on == [THREAD_NAME]  # the thread a chat's run streams on


def test_testing_an_unknown_model_shows_its_error_code(make_window: Any) -> None:
    window = make_window()
    ok, text = run(make_window.loop, check_model(window.services, "no-such-model"))
    assert not ok and text.startswith("ai.model_unknown")


def test_the_test_button_streams_from_the_selected_model(make_window: Any) -> None:
    window = make_window()
    dialog = _open_settings(window)
    dialog.test_button.click()
    assert dialog.test_result.text() == "Choose a model in the list first."
    row = next(
        n for n in range(dialog.models_list.count()) if dialog.models_list.item(n).data(MODEL_ROLE)
    )
    dialog.models_list.setCurrentRow(row)
    with emitted(make_window.loop, dialog.model_tested):
        dialog.test_button.click()
        assert not dialog.test_button.isEnabled()
    assert dialog.test_button.isEnabled()
    assert "tokens/s" in dialog.test_result.text()
    dialog.reject()


def test_saved_settings_reach_the_live_session_and_the_index_key(make_window: Any) -> None:
    window = make_window()
    session = window.services.session_now
    assert session.settings.write_allowed and not session.settings.external_content
    dialog = _open_settings(window)
    dialog.write_mode.setChecked(False)
    dialog.external_content.setChecked(True)
    dialog.index_model.setText("hashing")
    people = next(
        n for n in range(dialog.writable.count()) if "rsc197" in dialog.writable.item(n).text()
    )
    dialog.writable.item(people).setCheckState(Qt.CheckState.Unchecked)
    with emitted(make_window.loop, window.assistant.models_loaded):
        dialog.save()
    assert not session.settings.write_allowed and session.settings.external_content
    assert window.services.archive.meta(MODEL_SETTING) == "hashing"
    assert not window.services.archive.section("rsc197").writable
    modes = [window.assistant.mode.itemData(n) for n in range(window.assistant.mode.count())]
    assert modes == ["read"]
