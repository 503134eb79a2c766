"""The sections list keeps every row inside its pane: a long section label (EAC-CPF's
"Persons, families and corporate bodies") is elided, and the counts stay in sight."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QApplication

from app.core.archive import Field, Section
from app.ui.browser.sections_view import COUNT_ROLE

LONG = "Persons, families and corporate bodies"


def test_a_long_label_leaves_the_counts_in_sight(make_window: Any) -> None:
    archive = make_window.archive
    archive.put_section(Section("agent1", {"lg-eng": LONG}, label_field="agent2"))
    archive.put_field(Field("agent2", "agent1", {"lg-eng": "Name"}))
    for name in ("Vitet, Ludovic", "Costa de Beauregard, Jeanne"):
        archive.create_record("agent1", {"agent2": [{"value": name}]})
    window = make_window()
    window.sections.reload()
    window.resize(800, 600)
    for _ in range(3):
        QApplication.processEvents()
    view = window.sections
    assert view.fontMetrics().horizontalAdvance(LONG) > view.viewport().width()  # too long

    width = view.viewport().width()
    rows = [view.item(row) for row in range(view.count())]
    assert [r.data(COUNT_ROLE) for r in rows if r.text() == LONG] == [2]
    assert all(view.visualItemRect(r).right() < width for r in rows)
    assert view.horizontalScrollBar().maximum() == 0
    long_row = next(r for r in rows if r.text() == LONG)
    assert long_row.toolTip().startswith(LONG)  # the whole label, where it is elided
