"""The panel's turn, its plan's apply and the window's refresh reach SQLite only off the GUI
thread.

Every statement any connection of the archive runs is traced with the thread that runs it
(:meth:`Database.trace <app.core.archive.database.Database.trace>`): a turn that calls a tool
and proposes a plan, the card, and the apply of that plan, run by a real panel over the real
session, must run none on the GUI thread (the run streams from its own loop thread, the plan
desk and the conversations are awaited on the archive's read and writer threads); nor must the
main window, reading again what it shows once the plan is applied, nor "Ask about this record".
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import qasync

from app.core.archive import Archive
from app.core.archive.write_switch import set_writes_allowed
from app.core.models.catalog import catalog_from_data
from app.core.models.scripted import ScriptedModel, Step, Turn, call
from app.core.session import AssistantSession, AssistantSettings
from app.ui.app_settings import AppSettings
from app.ui.assistant.confirm_card import ConfirmCardWidget
from app.ui.assistant.panel import AssistantPanel
from app.ui.browser.sections_view import COUNT_ROLE, TIPO_ROLE
from app.ui.services import Services
from tests.ui.conftest import LOCAL, emitted, key, run
from tests.ui.test_assistant_panel import PLAN, TURN_S


@pytest.fixture
def panel(qtbot: Any, qloop: qasync.QEventLoop, ui_archive: Archive) -> Iterator[AssistantPanel]:
    """A panel on its own (no main window) over the real session with a scripted model."""
    script: list[Step] = [
        Turn(tool_calls=(call("dedalo_count_records", {"section_tipo": "rsc197"}, "c1"),)),
        Turn(text="There are three people.", tool_calls=(call("propose_change_plan", PLAN),)),
    ]
    model = ScriptedModel(script, id="scripted")
    set_writes_allowed(ui_archive, True)
    session = AssistantSession(
        ui_archive,
        catalog_from_data([dict(LOCAL)]),
        settings=AssistantSettings(write_allowed=True),
        model_factory=lambda entry: model,
    )
    services = Services(ui_archive, AppSettings())
    services.set_session(session)
    widget = AssistantPanel(services)
    qtbot.addWidget(widget)
    widget.show()
    run(qloop, widget.load_models())
    yield widget
    widget.shutdown()
    run(qloop, widget.aclose())
    run(qloop, services.aclose())


def gui_thread_statements(archive: Archive) -> tuple[list[str], list[str]]:
    """Trace ``archive``: ``(statements on the GUI thread, all statements)``, filled as they
    run."""
    gui, every = [], []
    main = threading.main_thread()

    def traced(statement: str) -> None:
        every.append(statement)
        if threading.current_thread() is main:
            gui.append(statement)

    archive.db.trace(traced)
    return gui, every


def test_a_turn_and_its_plans_apply_never_reach_sqlite_on_the_gui_thread(
    panel: AssistantPanel, qloop: qasync.QEventLoop, ui_archive: Archive
) -> None:
    panel.mode.setCurrentIndex(panel.mode.findData("write"))
    gui, every = gui_thread_statements(ui_archive)
    try:
        with emitted(qloop, panel.turn_finished, timeout=TURN_S):
            panel.send("How many people are there? Then add Anna Pujol as informant of oh1/3")
        (card,) = [w for w in panel.view.widgets() if isinstance(w, ConfirmCardWidget)]
        turn = len(every)
        with emitted(qloop, card.resolved, timeout=TURN_S):
            card.apply_button.click()
    finally:
        ui_archive.db.trace(None)
    assert card.state == "applied", card.status.text()
    assert key("rsc197", 4) in [link.target for link in ui_archive.links_from(key("oh1", 3))]
    assert turn > 10 and len(every) > turn  # the turn and the apply did reach SQLite...
    assert gui == []  # ...never from the GUI thread


def test_the_window_shows_an_applied_plan_and_asks_about_a_record_off_the_gui_thread(
    make_window: Any,
) -> None:
    """After the apply the window reads again what it shows (the sections' counts, the rows
    listed with their relation cells, the record open) and "Ask about this record" reads the
    record's label: all on a read thread, shown in place (the row stays selected, the columns
    keep their widths)."""
    window = make_window([Turn(tool_calls=(call("propose_change_plan", PLAN),))])
    window.assistant.mode.setCurrentIndex(window.assistant.mode.findData("write"))
    loop, archive, oh3 = make_window.loop, make_window.archive, key("oh1", 3)
    window.open_record(oh3)  # the person's own navigation (read at once), before the trace
    run(loop, asyncio.sleep(0.05))  # painted: the cells' labels read as they were drawn
    columns = range(window.records_model.columnCount())  # ID, Title, Informant
    widths = [window.table.columnWidth(column) for column in columns]
    gui, every = gui_thread_statements(archive)
    try:
        with emitted(loop, window.assistant.turn_finished, timeout=TURN_S):
            window.assistant.send("Add Anna Pujol as informant of oh1/3")
        (card,) = [w for w in window.assistant.view.widgets() if isinstance(w, ConfirmCardWidget)]
        proposed = len(every)
        with emitted(loop, window.refreshed, timeout=TURN_S):
            card.apply_button.click()
        refreshed = len(every)
        row = window.records_model.row_of(oh3)
        assert row is not None
        informants = window.records_model.index(row, 2).data()  # as the table draws it
        run(loop, asyncio.sleep(0.05))  # painted again
        window.record_view.ask_button.click()
        run(loop, window.assistant.tasks.wait())
    finally:
        archive.db.trace(None)
    assert card.state == "applied", card.status.text()
    assert informants == "Rosa Puig, Anna Pujol"  # the relation cell's labels read afresh
    assert "Anna Pujol" in window.record_view.browser.toPlainText()  # the record open, afresh
    people = window.sections.item(1)
    assert people.data(TIPO_ROLE) == "rsc197" and people.data(COUNT_ROLE) == 4
    assert window.table.currentIndex().row() == row  # shown in place
    assert [window.table.columnWidth(column) for column in columns] == widths
    composer = window.assistant.composer
    assert composer.context_key == oh3 and "El mercat (oh1/3)" in composer.context_chip.text()
    assert refreshed > proposed and len(every) > refreshed  # the refresh and the label read...
    assert gui == []  # ...never on the GUI thread
