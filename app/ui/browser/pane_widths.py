"""The record view keeps a readable width when the window is small.

The main window's splitter holds sections · records (or search results) · record view. Left to
itself, a splitter that shrinks takes the width from whichever pane its stretch factors say,
and in an 800-pixel window beside the assistant the record view was left about a hundred
pixels: one word per line. :class:`RecordWidthKeeper` watches the splitter's size and, when
the record view is narrower than :data:`RECORD_WIDTH`, gives it width from the records pane
(down to its minimum), then from the sections pane (down to its minimum), and, when even that
leaves the record view under :data:`RECORD_FLOOR`, folds the sections pane away (its handle
stays at the left edge; dragging it brings the sections back). When the window grows again,
the sections pane gets back the width taken from it (:func:`give_back`); widths the person
set by dragging a handle stay theirs.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QSplitter

RECORD_WIDTH = 360
"""The width the record view is given back when it has less (pixels)."""
RECORD_FLOOR = 200
"""Below this, the sections pane is folded away to make room for the record view."""


def balance(sizes: Sequence[int], minimums: Sequence[int]) -> list[int]:
    """New ``[sections, middle, record]`` widths: the record view's made up to
    :data:`RECORD_WIDTH` from the middle pane, then the sections pane (each down to its
    minimum), the sections folded to 0 when the record view would stay under
    :data:`RECORD_FLOOR`; the total is unchanged."""
    sections, middle, record = sizes
    total = sections + middle + record
    if record >= RECORD_WIDTH:
        return [sections, middle, record]
    take_middle = max(middle - minimums[1], 0)
    take_sections = max(sections - minimums[0], 0)
    want = min(RECORD_WIDTH, record + take_middle + take_sections)
    if want < RECORD_FLOOR:  # fold the sections away
        kept = max(minimums[1], min(middle, total - RECORD_WIDTH))
        return [0, kept, total - kept]
    need = want - record
    from_middle = min(need, take_middle)
    from_sections = need - from_middle
    return [sections - from_sections, middle - from_middle, want]


def give_back(sizes: Sequence[int], minimums: Sequence[int], target: int) -> list[int] | None:
    """``[sections, middle, record]`` with the sections pane given back width towards
    ``target`` (what it had before :func:`balance` took from it), from the middle pane (down
    to its minimum), then from the record view (down to :data:`RECORD_WIDTH`); ``None`` while
    they cannot spare any (or, for a folded pane, less than its minimum)."""
    sections, middle, record = sizes
    spare_middle = max(middle - minimums[1], 0)
    give = min(target - sections, spare_middle + max(record - RECORD_WIDTH, 0))
    if give <= 0 or (sections == 0 and give < minimums[0]):
        return None
    from_middle = min(give, spare_middle)
    return [sections + give, middle - from_middle, record - (give - from_middle)]


class RecordWidthKeeper(QObject):
    """Rebalances a three-pane splitter (see :func:`balance`) whenever it is resized, and
    gives the sections pane back what it took once the splitter grows (:func:`give_back`)."""

    def __init__(self, splitter: QSplitter, sections: int | None = None) -> None:
        super().__init__(splitter)
        self._splitter = splitter
        self._natural = sections
        """The sections pane's own width: as laid out (``None``: as first seen), or as the
        person last dragged it."""
        splitter.installEventFilter(self)
        splitter.splitterMoved.connect(self._moved_by_hand)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """After the splitter's own resize, move width to the record view if it needs it."""
        if watched is self._splitter and event.type() == QEvent.Type.Resize:
            QTimer.singleShot(0, self.apply)  # once the splitter has laid its panes out
        return super().eventFilter(watched, event)

    def _moved_by_hand(self, _position: int, _index: int) -> None:
        """The person dragged a handle: the sections pane's width is theirs from now on."""
        self._natural = self._splitter.sizes()[0]

    def apply(self) -> None:
        """Rebalance now."""
        splitter = self._splitter
        if splitter.count() != 3:
            return
        panes = [splitter.widget(i) for i in range(3)]
        minimums = [pane.minimumSizeHint().width() for pane in panes if pane is not None]
        if len(minimums) != 3:
            return
        sizes = splitter.sizes()
        if self._natural is None:
            self._natural = sizes[0]
        wanted = balance(sizes, minimums)
        if wanted[0] < self._natural:  # squeezed or folded for a smaller window
            wanted = give_back(wanted, minimums, self._natural) or wanted
        if wanted != sizes:
            splitter.setSizes(wanted)


def keep_record_width(splitter: QSplitter, sections: int | None = None) -> RecordWidthKeeper:
    """Keep the last pane of ``splitter`` (the record view) readable in a small window, and
    the first (the sections, ``sections`` pixels wide as laid out) as wide as it was when
    the window grows again."""
    return RecordWidthKeeper(splitter, sections)
