"""The bar above the search results: sort by relevance or date; filter by section, language
and a range of years.

It offers only what the results hold (their sections and languages, with counts) and keeps a
choice across searches while the new results still have it. Every control asks for little
width (combo boxes sized to a few characters, years in short fields), so a narrow records pane
stays narrow and the record view beside it keeps its width.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from PySide6.QtCore import QSize, Signal
from PySide6.QtGui import QIntValidator, QResizeEvent
from PySide6.QtWidgets import QComboBox, QGridLayout, QLineEdit, QWidget

from app.core.index.hit_order import RecordFilter, SortOrder
from app.core.index.record_hits import RecordHit
from app.ui.i18n import language_name

COMBO_CHARS = 3
"""The width a combo box asks for, in characters (its popup shows whole labels)."""
YEAR_WIDTH = 44
SPACING = 6
WIDE_COLUMNS = 3
NARROW_COLUMNS = 2


def _combo(parent: QWidget, name: str) -> QComboBox:
    combo = QComboBox(parent)
    combo.setObjectName(name)
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(COMBO_CHARS)
    return combo


class ResultFilters(QWidget):
    """Sort and filter controls over a list of :class:`~app.core.index.record_hits.RecordHit`,
    beside the ``back`` button to the records table.

    Signals:
        changed: a control changed (read :meth:`record_filter` and :meth:`order`).
    """

    changed = Signal()

    def __init__(self, back: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.back = back
        self.sort = _combo(self, "resultsSort")
        for text, order in (
            (self.tr("Relevance"), "relevance"),
            (self.tr("Oldest first"), "oldest"),
            (self.tr("Newest first"), "newest"),
        ):
            self.sort.addItem(text, order)
        self.sort.setToolTip(self.tr("Sort the records"))
        self.section = _combo(self, "resultsSection")
        self.section.setToolTip(self.tr("Only the records of one section"))
        self.language = _combo(self, "resultsLanguage")
        self.language.setToolTip(self.tr("Only the records written in one language"))
        self.year_from = self._year(self.tr("From year"), "resultsFrom")
        self.year_to = self._year(self.tr("To year"), "resultsTo")
        for combo in (self.sort, self.section, self.language):
            combo.currentIndexChanged.connect(self.changed)
        self.grid = QGridLayout(self)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.grid.setHorizontalSpacing(SPACING)
        self.grid.setVerticalSpacing(4)
        self._columns = 0
        self._arrange(WIDE_COLUMNS)
        self.offer([])

    def _controls(self) -> list[QWidget]:
        """The controls in reading order (the back button first)."""
        return [self.back, self.sort, self.section, self.language, self.year_from, self.year_to]

    def _arrange(self, columns: int) -> None:
        """Lay the controls out in ``columns`` columns (3: two rows; 2: three rows)."""
        if columns == self._columns:
            return
        self._columns = columns
        for control in self._controls():
            self.grid.removeWidget(control)
        for n, control in enumerate(self._controls()):
            self.grid.addWidget(control, n // columns, n % columns)
        for column in range(WIDE_COLUMNS):
            self.grid.setColumnStretch(column, 1 if column < columns else 0)

    def _row_width(self, columns: int) -> int:
        """The least width the controls need in ``columns`` columns."""
        shown = [c for c in self._controls() if not c.isHidden()]
        widths = [max(c.minimumSizeHint().width(), c.minimumWidth()) for c in shown]
        rows = [widths[i : i + columns] for i in range(0, len(widths), columns)]
        return max((sum(r) + SPACING * (len(r) - 1) for r in rows), default=0)

    def minimumSizeHint(self) -> QSize:
        """As narrow as three rows of two controls allow."""
        return QSize(self._row_width(NARROW_COLUMNS), super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Two rows of three controls when they fit, else three rows of two."""
        super().resizeEvent(event)
        wide = self.width() >= self._row_width(WIDE_COLUMNS)
        self._arrange(WIDE_COLUMNS if wide else NARROW_COLUMNS)

    def _year(self, placeholder: str, name: str) -> QLineEdit:
        edit = QLineEdit(self)
        edit.setObjectName(name)
        edit.setPlaceholderText(placeholder)
        edit.setToolTip(self.tr("A year (negative: BC); records without a date are left out"))
        edit.setValidator(QIntValidator(-9999, 9999, edit))
        edit.setMinimumWidth(YEAR_WIDTH)
        edit.setMaxLength(5)
        edit.editingFinished.connect(self.changed)
        edit.textChanged.connect(lambda text: self.changed.emit() if not text else None)
        return edit

    def offer(self, hits: Sequence[RecordHit]) -> None:
        """List the sections and languages of ``hits``, keeping the current choices (no hits:
        only the button back to the records shows)."""
        for control in (self.sort, self.section, self.language, self.year_from, self.year_to):
            control.setVisible(bool(hits))
        sections = Counter(h.key.section_tipo for h in hits)
        labels = {h.key.section_tipo: h.section_label for h in hits}
        langs = Counter(code for h in hits for code in h.langs)
        self._fill(
            self.section,
            self.tr("All sections"),
            [(f"{labels[t]} ({n})", t) for t, n in sections.items()],
        )
        self._fill(
            self.language,
            self.tr("All languages"),
            [(f"{self._language_name(code)} ({n})", code) for code, n in langs.most_common()],
        )

    def _fill(self, combo: QComboBox, everything: str, choices: list[tuple[str, str]]) -> None:
        kept = combo.currentData()
        combo.blockSignals(True)
        combo.clear()
        combo.addItem(everything, "")
        for text, data in choices:
            combo.addItem(text, data)
        found = combo.findData(kept) if kept else 0
        combo.setCurrentIndex(max(found, 0))
        combo.blockSignals(False)

    def _language_name(self, code: str) -> str:
        return language_name(code)

    def order(self) -> SortOrder:
        """The chosen order."""
        chosen = str(self.sort.currentData() or "relevance")
        return "oldest" if chosen == "oldest" else "newest" if chosen == "newest" else "relevance"

    def record_filter(self) -> RecordFilter:
        """The chosen restrictions (a range given backwards is read the right way round)."""
        low, high = _year_of(self.year_from), _year_of(self.year_to)
        if low is not None and high is not None and low > high:
            low, high = high, low
        section, lang = self.section.currentData(), self.language.currentData()
        return RecordFilter(
            sections=(str(section),) if section else (),
            langs=(str(lang),) if lang else (),
            year_from=low,
            year_to=high,
        )


def _year_of(edit: QLineEdit) -> int | None:
    text = edit.text().strip()
    try:
        return int(text) if text and text != "-" else None
    except ValueError:
        return None
