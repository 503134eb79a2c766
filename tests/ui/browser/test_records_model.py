"""A hierarchy is listed by its top-level records (each fonds), as AtoM browses archival
descriptions; "Top-level descriptions only" unticked lists every record (real ANF finding aids;
the box, the rows and the status bar's count in ca/es/en)."""

from __future__ import annotations

import pytest
from lxml import etree
from PySide6.QtWidgets import QApplication

from app.core.archive import RecordKey
from app.core.archive.hierarchy import subtree
from app.core.archive.importers.base import external_keys
from app.ui.main_window import MainWindow
from tests.conftest import shared_data
from tests.ui.browser.conftest import FINDING_AIDS
from tests.ui.conftest import WindowFactory

SAID = {
    "en": (
        "Top-level descriptions only",
        "3 top-level records ({total} in all)",
        "{total} records",
    ),
    "ca": (
        "Només les descripcions de nivell superior",
        "3 registres de nivell superior ({total} en total)",
        "{total} registres",
    ),
    "es": (
        "Solo las descripciones de nivel superior",
        "3 registros de nivel superior ({total} en total)",
        "{total} registros",
    ),
}


def _units() -> int:
    """The finding aids' components and ``archdesc``, counted with lxml."""
    parser = etree.XMLParser(load_dtd=False, no_network=True, resolve_entities=False)
    count = 0
    for name in FINDING_AIDS:
        tree = etree.parse(str(shared_data("ead", "anf", name)), parser)
        count += int(tree.xpath("count(//archdesc | //c)"))
    return count


def _keys(window: MainWindow) -> list[RecordKey]:
    model = window.records_model
    while model.canFetchMore():
        model.fetchMore()
    return [record.key for row in range(model.rowCount()) if (record := model.record_at(row))]


@pytest.mark.parametrize("ui_lang", ["en", "ca", "es"], indirect=True)
def test_a_hierarchy_lists_its_fonds_and_every_record_when_asked(
    ui_lang: str, fonds_window: tuple[WindowFactory, MainWindow, RecordKey]
) -> None:
    """(``ui_lang`` first: the window is built in the language.)"""
    _, window, vitet = fonds_window
    box, tops, every = SAID[ui_lang]
    archive = window.services.archive
    total = archive.count_records("ead1")
    assert total == _units()
    shown_total = window.statusBar().locale().toString(total)

    window.show_section("ead1")
    fonds = _keys(window)
    status = window.statusBar().currentMessage()
    window.tops_box.setChecked(False)
    everything = _keys(window)
    status_all = window.statusBar().currentMessage()

    assert window.tops_box.text() == box and window.tops_box.isVisible()
    ids = external_keys(archive, "ead")
    assert fonds == sorted(ids[name.removesuffix(".xml")] for name in FINDING_AIDS)
    assert vitet in fonds
    assert status == tops.format(total=shown_total)
    assert len(everything) == total and status_all == every.format(total=shown_total)
    window.show_section("agent1")  # not a hierarchy: every record, no box
    assert not window.tops_box.isVisible() and window.records_model.total() == (
        archive.count_records("agent1")
    )


def test_a_unit_opened_while_the_fonds_are_listed_leaves_no_other_row_selected(
    fonds_window: tuple[WindowFactory, MainWindow, RecordKey],
) -> None:
    _, window, vitet = fonds_window
    window.open_record(vitet)
    assert window.table.selectionModel().selectedRows()  # the fonds is listed: selected
    unit = max(subtree(window.services.archive, vitet), key=lambda k: k.section_id)

    window.open_record(unit)
    QApplication.processEvents()

    assert window.record_view.key == unit and window.tops_box.isChecked()
    assert not window.table.selectionModel().selectedRows()
    window.tops_box.setChecked(False)  # every record listed: the unit's row is selected
    [row] = window.table.selectionModel().selectedRows()
    assert window.records_model.record_at(row.row()) is not None
    assert window.records_model.record_at(row.row()).key == unit  # type: ignore[union-attr]
