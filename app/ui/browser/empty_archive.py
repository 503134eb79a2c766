"""What the records pane shows over an archive with nothing in it: a sentence and Import.

A new archive has no sections, so the sections list and the records table were two blank
panes with no hint of what to do; this page says the archive is empty and offers
File → Import… as a button.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget


class EmptyArchiveHint(QWidget):
    """A sentence saying the archive is empty, and an Import… button.

    Signals:
        import_requested: the Import… button was clicked.
    """

    import_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("emptyArchive")
        self.text = QLabel(
            self.tr(
                "This archive is empty. Import records to begin: EAD, EAC-CPF, Dublin Core, "
                "CSV or Excel tables, a folder of files, OHMS, or an OAI-PMH harvest."
            ),
            self,
        )
        self.text.setObjectName("placeholder")
        self.text.setWordWrap(True)
        self.text.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.button = QPushButton(self.tr("Import…"), self)
        self.button.setObjectName("primary")
        self.button.clicked.connect(self.import_requested)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(24, 24, 24, 24)
        layout.addStretch(1)
        layout.addWidget(self.text)
        layout.addSpacing(12)
        layout.addWidget(self.button, 0, Qt.AlignmentFlag.AlignHCenter)
        layout.addStretch(2)
