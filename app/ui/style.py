"""The app's look: Fusion, the system's light or dark palette, a few named styles.

Colours come from ``palette(...)`` roles so dark mode follows the system; the only fixed
colours are the privacy badges (green for local / private, amber for external) and the red of
restricted material and errors, which mean the same in both themes.
"""

from __future__ import annotations

from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication

LOCAL_COLOR = "#1a7f37"
EXTERNAL_COLOR = "#b35900"
DANGER_COLOR = "#b42318"

STYLESHEET = f"""
QMainWindow::separator {{ width: 1px; height: 1px; background: palette(mid); }}
QToolBar {{ spacing: 8px; padding: 6px 8px; border: none; }}
QLineEdit#searchBox {{ padding: 5px 10px; border: 1px solid palette(mid); border-radius: 6px;
    min-height: 20px; }}
QListWidget#sectionsView {{ border: none; background: palette(window); }}
QTableView {{ border: none; gridline-color: palette(midlight);
    selection-background-color: palette(highlight); }}
QHeaderView::section {{ padding: 5px 6px; border: none; border-bottom: 1px solid palette(mid);
    background: palette(window); font-weight: 600; }}
QTextBrowser#recordBrowser {{ border: none; padding: 8px 14px; background: palette(base); }}
QLabel#placeholder {{ color: palette(placeholder-text); font-size: 14px; }}
QLabel#paneTitle {{ font-weight: 600; padding: 8px 10px 4px 10px; color: palette(text); }}
QLabel#resultsTitle {{ font-weight: 600; padding: 6px 4px; }}
QLabel[badge="local"] {{ background: {LOCAL_COLOR}; color: white; border-radius: 8px;
    padding: 1px 8px; font-size: 11px; font-weight: 600; }}
QLabel[badge="external"] {{ background: {EXTERNAL_COLOR}; color: white; border-radius: 8px;
    padding: 1px 8px; font-size: 11px; font-weight: 600; }}
QScrollArea#conversation {{ border: none; background: palette(base); }}
QWidget#conversationBody {{ background: palette(base); }}
QFrame#userTurn {{ background: palette(alternate-base); border-radius: 10px; }}
QLabel#toolLine {{ color: palette(placeholder-text); font-size: 12px; }}
QLabel#toolLineFailed {{ color: {DANGER_COLOR}; font-size: 12px; }}
QLabel#sharedArchiveProblem {{ color: {DANGER_COLOR}; }}
QFrame#confirmCard {{ border: 1px solid palette(mid); border-radius: 10px;
    background: palette(window); }}
QFrame#confirmCard QLabel#cardTitle {{ font-weight: 700; font-size: 13px; }}
QFrame#opRow {{ border-top: 1px solid palette(midlight); }}
QLabel#opTool {{ font-family: monospace; font-weight: 600; }}
QLabel#opArgs {{ font-family: monospace; font-size: 11px; color: palette(placeholder-text); }}
QLabel#opOutcomeApplied {{ color: {LOCAL_COLOR}; font-weight: 600; }}
QLabel#opOutcomeFailed {{ color: {DANGER_COLOR}; font-weight: 600; }}
QLabel#opOutcomeSkipped {{ color: palette(placeholder-text); font-weight: 600; }}
QFrame#errorBanner {{ border: 1px solid {DANGER_COLOR}; border-radius: 8px; }}
QLabel#errorTitle {{ color: {DANGER_COLOR}; font-weight: 700; }}
QFrame#composer {{ border-top: 1px solid palette(mid); }}
QPlainTextEdit#composerEdit {{ border: 1px solid palette(mid); border-radius: 8px;
    padding: 4px; }}
QPushButton#primary {{ background: palette(highlight); color: palette(highlighted-text);
    border-radius: 6px; padding: 5px 14px; font-weight: 600; }}
QPushButton#primary:disabled {{ background: palette(mid); }}
QLabel#thinking {{ color: palette(placeholder-text); font-style: italic; }}
QLabel#contextChip {{ background: palette(alternate-base); border-radius: 8px;
    padding: 2px 8px; font-size: 11px; }}
"""


def apply_style(app: QApplication) -> None:
    """Fusion style, a readable base font, the named styles."""
    app.setStyle("Fusion")
    font = QFont(app.font())
    if font.pointSizeF() < 10:
        font.setPointSizeF(10)
    app.setFont(font)
    app.setStyleSheet(STYLESHEET)
