"""The search results pane on the demo archive: each record once, grouped by section, sorted
and filtered; the heading elides; the record view keeps its width at 1600×940 and 800×600."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from app.core.archive import Archive, open_archive
from app.core.index.embedders import HashingEmbedder
from app.core.index.service import Index
from app.ui import i18n
from app.ui.browser.result_rows import HTML_ROLE, RichRowDelegate
from app.ui.browser.search_results import SearchResultsView
from app.ui.main_window import MainWindow
from tests.ui.conftest import WindowFactory, run

LONG_QUERY = (
    "Quines entrevistes parlen de les famílies que van haver de marxar de la vall quan el pantà "
    "va negar Sant Romà del Riu i les Feixes?"
)
QUERIES = (
    LONG_QUERY,
    "familias que tuvieron que irse por el embalse",
    "families who left when the valley flooded",
)


@pytest.fixture
def demo_window(
    qtbot: Any, qloop: Any, demo_archive_dir: Path, tmp_path: Path
) -> Iterator[tuple[WindowFactory, MainWindow]]:
    """A window over a copy of the demo archive, its (hashing) index built."""
    shutil.copytree(demo_archive_dir, tmp_path / "demo")
    archive: Archive = open_archive(tmp_path / "demo")
    factory = WindowFactory(qtbot, qloop, archive)
    window = factory()
    index = Index(archive, HashingEmbedder())
    index.index_now()
    window.services._index = index
    yield factory, window
    factory.close_all()
    archive.close()


def _settle(window: MainWindow) -> None:
    for _ in range(5):
        QApplication.processEvents()
    window.results.list.doItemsLayout()
    QApplication.processEvents()


def _search(factory: WindowFactory, window: MainWindow, query: str) -> None:
    window.search_box.setText(query)
    run(factory.loop, window.search(query))
    _settle(window)


@pytest.mark.parametrize("query", QUERIES)
def test_each_record_is_listed_once_under_its_section(
    demo_window: tuple[WindowFactory, MainWindow], query: str
) -> None:
    factory, window = demo_window
    window.resize(1600, 940)
    _search(factory, window, query)
    shown = window.results.shown()
    keys = [h.key for h in shown]
    assert len(shown) >= 10 and len(keys) == len(set(keys))
    assert window.results.title.text() == f"{len(shown)} records for “{query}”"
    headers = [
        window.results.list.item(row)
        for row in range(window.results.list.count())
        if window.results.list.item(row).data(Qt.ItemDataRole.UserRole) is None
    ]
    labels = [str(h.data(HTML_ROLE)) for h in headers]
    assert len(labels) == len({h.key.section_tipo for h in shown})  # one heading a section
    sections = [h.key.section_tipo for h in shown]
    assert sections == sorted(sections, key=sections.index)  # a section's records together


def test_the_heading_elides_and_the_record_view_keeps_its_width(
    demo_window: tuple[WindowFactory, MainWindow],
) -> None:
    factory, window = demo_window
    window.resize(1600, 940)
    _settle(window)
    before = window.splitter.sizes()
    _search(factory, window, LONG_QUERY)
    window.open_record(window.results.shown()[0].key)  # a click on the first result
    _settle(window)
    assert window.stack.currentWidget() is window.results  # the results stay listed
    assert window.width() == 1600
    assert window.results.title.elided_text().endswith("…")
    assert window.results.title.minimumSizeHint().width() == 0
    assert window.record_view.width() >= 400 and window.splitter.sizes()[2] >= before[2] - 10
    window.resize(800, 600)
    _settle(window)
    assert window.width() == 800  # the panes' minimum widths fit the window
    assert window.record_view.width() >= 180
    assert window.results.width() >= 140
    _rows_are_not_clipped(window)


def _rows_are_not_clipped(window: MainWindow) -> None:
    """Every row is as tall as its text wrapped to the list's width."""
    view = window.results.list
    delegate = view.itemDelegate()
    assert isinstance(delegate, RichRowDelegate)
    for row in range(min(view.count(), 8)):
        item = view.item(row)
        rect = view.visualItemRect(item)
        document = delegate._document(view.indexFromItem(item), rect.width())
        assert rect.height() >= int(document.size().height()), row


def test_sorting_and_filtering_reorder_the_records_found(
    demo_window: tuple[WindowFactory, MainWindow],
) -> None:
    factory, window = demo_window
    _search(factory, window, "pantà expropiació famílies")
    results, filters = window.results, window.results.filters
    found = results.shown()
    filters.section.setCurrentIndex(filters.section.findData("oh1"))
    interviews = results.shown()
    assert interviews and all(h.key.section_tipo == "oh1" for h in interviews)
    assert results.title.text().startswith(f"{len(interviews)} of {len(found)} records")
    filters.sort.setCurrentIndex(filters.sort.findData("oldest"))
    dates = [h.date for h in results.shown()]
    assert dates == sorted(d for d in dates if d)
    filters.year_from.setText("1990")
    filters.year_to.setText("1999")
    filters.year_to.editingFinished.emit()
    assert results.shown() and all(1990 <= (h.year or 0) <= 1999 for h in results.shown())
    filters.section.setCurrentIndex(0)
    filters.year_from.clear()
    filters.year_to.clear()
    filters.language.setCurrentIndex(filters.language.findData("lg-spa"))
    assert results.shown() and all("lg-spa" in h.langs for h in results.shown())


def test_ctrl_f_and_ctrl_l_reach_the_search_box(
    qtbot: Any, demo_window: tuple[WindowFactory, MainWindow]
) -> None:
    _, window = demo_window
    window.activateWindow()
    for key in (Qt.Key.Key_F, Qt.Key.Key_L):
        window.record_view.browser.setFocus()
        qtbot.keyClick(window.record_view.browser, key, Qt.KeyboardModifier.ControlModifier)
        assert window.search_box.hasFocus(), key


@pytest.mark.parametrize(
    ("lang", "heading"),
    [("ca", "1 registre per a «Barcino»"), ("es", "1 registro para «Barcino»")],
)
def test_the_pane_speaks_the_ui_language(qapp: Any, lang: str, heading: str) -> None:
    translator = i18n.install_translator(qapp, lang)
    assert translator is not None
    try:
        from app.core.archive import RecordKey
        from app.core.index.record_hits import RecordHit

        view = SearchResultsView()
        hit = RecordHit(RecordKey("nomisma1", 1737), "Barcelona", "Seques", 1.0, 1)
        view.show_hits("Barcino", [hit])
        assert view.title.text() == heading
        assert view.filters.section.itemText(0) != "All sections"
        assert view.back.text() != "Back to records"
        view.close()
    finally:
        qapp.removeTranslator(translator)


def test_the_record_view_is_given_width_from_the_other_panes() -> None:
    from app.ui.browser.pane_widths import RECORD_WIDTH, balance

    assert balance([220, 511, 420], [92, 160, 96]) == [220, 511, 420]  # wide enough already
    assert balance([220, 400, 200], [92, 160, 96]) == [220, 240, RECORD_WIDTH]  # from the middle
    assert balance([220, 200, 200], [92, 160, 96]) == [100, 160, RECORD_WIDTH]  # then sections
    assert balance([92, 160, 104], [92, 160, 96]) == [0, 160, 196]  # sections folded away
    assert sum(balance([150, 300, 100], [92, 160, 96])) == 550


HEADINGS = {
    "en": ("1 record for “carta”", "0 of 1 record for “carta”", "2 records for “carta”",
           "1 of 2 records for “carta”", "0 of 2 records for “carta”"),
    "ca": ("1 registre per a «carta»", "0 d'1 registre per a «carta»", "2 registres per a «carta»",
           "1 de 2 registres per a «carta»", "0 de 2 registres per a «carta»"),
    "es": ("1 registro para «carta»", "0 de 1 registro para «carta»", "2 registros para «carta»",
           "1 de 2 registros para «carta»", "0 de 2 registros para «carta»"),
}  # fmt: skip


@pytest.mark.parametrize("ui_lang", ["en", "ca", "es"], indirect=True)
def test_the_heading_agrees_with_the_records_found_when_filters_hide_some(ui_lang: str) -> None:
    """One letter found (of 1912) and two (1912, 1960), listed whole, then from 1950 and from
    2000 on: "0 of 1 record" where the filters hide the only one."""
    from app.core.archive import RecordKey
    from app.core.index.record_hits import RecordHit

    letters = [
        RecordHit(RecordKey("c1", n), f"Carta {n}", "Cartes", 1.0, n, date=year)
        for n, year in ((1, "1912"), (2, "1960"))
    ]
    said = []
    for hits, years in ((letters[:1], ("", "1950")), (letters, ("", "1950", "2000"))):
        for year in years:
            view = SearchResultsView()
            view.filters.year_from.setText(year)
            view.show_hits("carta", hits)
            said.append(view.title.text())
            view.close()
    assert said == list(HEADINGS[ui_lang])


WITHIN = {
    "en": "in 572AP/1-572AP/122 · Fonds Vitet",
    "ca": "dins de 572AP/1-572AP/122 · Fonds Vitet",
    "es": "dentro de 572AP/1-572AP/122 · Fonds Vitet",
}


@pytest.mark.parametrize("ui_lang", ["en", "ca", "es"], indirect=True)
def test_a_units_row_says_the_fonds_it_is_in(ui_lang: str) -> None:
    """A unit found among fifty reads "in 572AP/1-572AP/122 · Fonds Vitet" under its title, in
    the UI's language, then the series it is in where that is not the fonds; a fonds (in
    nothing) says nothing of the kind."""
    from PySide6.QtGui import QTextDocument

    from app.core.archive import RecordKey
    from app.core.index.record_hits import RecordHit

    fonds = "572AP/1-572AP/122 · Fonds Vitet"
    hits = [
        RecordHit(RecordKey("ead1", 7), "Dossier 1 · Copie de 157 lettres", "Descr.", 1.0, 1,
                  within=fonds),
        RecordHit(RecordKey("ead1", 1), fonds, "Descr.", 0.9, 2),
        RecordHit(RecordKey("ead1", 9), "Lettre à sa femme", "Descr.", 0.8, 3, within=fonds,
                  path="… › 572AP/2 · Correspondance active"),
    ]  # fmt: skip
    view = SearchResultsView()
    view.show_hits("lettres", hits)
    rows = []
    for row in range(view.list.count()):
        document = QTextDocument()
        document.setHtml(str(view.list.item(row).data(HTML_ROLE) or ""))
        rows.append(document.toPlainText())
    view.close()
    [unit] = [r for r in rows if r.startswith("Dossier 1")]
    [top] = [r for r in rows if r.startswith(fonds)]
    [letter] = [r for r in rows if r.startswith("Lettre")]
    assert WITHIN[ui_lang] in unit.splitlines()[1]
    assert WITHIN[ui_lang] not in top
    assert f"{WITHIN[ui_lang]} › … › 572AP/2 · Correspondance active" in letter.splitlines()[1]


def test_a_row_found_through_a_heading_names_it_before_the_passage() -> None:
    """An interview found through the subject it is indexed under (its own words never say
    it): the row's third line is the field and the subject, the query's words marked."""
    from PySide6.QtGui import QTextDocument

    from app.core.archive import RecordKey
    from app.core.index.record_hits import RecordHit, ViaHeading
    from app.ui.browser.record_html import Palette
    from app.ui.browser.result_rows import RowWords, record_row_html

    via = ViaHeading(RecordKey("subject1", 2), "Matèries", "Chemical warfare", ((0, 8), (9, 16)))
    hit = RecordHit(RecordKey("ohms1", 1), "Interview with Hubert N. Alyea", "Entrevistes", 0.7,
                    1, via=via)  # fmt: skip
    html = record_row_html(hit, Palette(), "#fff0a6", RowWords())
    document = QTextDocument()
    document.setHtml(html)
    lines = document.toPlainText().splitlines()
    assert lines == ["Interview with Hubert N. Alyea", "Entrevistes", "Matèries: Chemical warfare"]
    assert html.count("background-color:#fff0a6") == 2  # "Chemical", "warfare"
    document.setHtml(record_row_html(replace(hit, via=None), Palette(), "#fff0a6", RowWords()))
    assert document.toPlainText().splitlines() == lines[:2]  # found by its own words
