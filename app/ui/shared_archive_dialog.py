"""File → Open shared archive…: the server, database and login of an archive on PostgreSQL.

The dialog composes the ``postgresql://`` URL that every command takes as ``--archive`` (shown
as it is typed, so IT can copy it), with the encryption the person chooses (libpq's
``sslmode``). The password never enters the URL or a settings file: with "Remember" ticked it
goes to the OS keyring (:mod:`app.core.archive.postgres.credentials`), where the commands find
it too; unticked, it is used for this connection only.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote, urlencode

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QWidget,
)

DEFAULT_PORT = 5432
SSL_MODES = ("prefer", "require", "verify-full", "verify-ca", "disable")
"""libpq's ``sslmode`` values offered, the default first (libpq's own default)."""


@dataclass(frozen=True)
class SharedArchiveChoice:
    """What the person chose: the URL (never with the password), the password typed (empty:
    none, libpq's ``PGPASSWORD``/``~/.pgpass`` or the keyring apply) and whether to remember
    it."""

    url: str
    password: str
    remember: bool


def shared_url(host: str, port: int, database: str, user: str, sslmode: str) -> str:
    """The ``postgresql://USER@HOST:PORT/DATABASE?sslmode=…`` URL (parts percent-encoded; an
    IPv6 host in brackets)."""
    where = f"[{host}]" if ":" in host and not host.startswith("[") else host
    login = f"{quote(user, safe='')}@" if user else ""
    query = urlencode({"sslmode": sslmode}) if sslmode and sslmode != "prefer" else ""
    tail = f"?{query}" if query else ""
    return f"postgresql://{login}{quote(where, safe='[]:')}:{port}/{quote(database, safe='')}{tail}"


class SharedArchiveDialog(QDialog):
    """Asks for a shared archive's server, database, login and encryption."""

    def __init__(self, parent: QWidget | None = None, user: str = "") -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Open shared archive"))
        self.host = QLineEdit(self)
        self.host.setPlaceholderText("db.example.org")
        self.port = QSpinBox(self)
        self.port.setRange(1, 65535)
        self.port.setValue(DEFAULT_PORT)
        self.database = QLineEdit("arxiu", self)
        self.user = QLineEdit(user, self)
        self.password = QLineEdit(self)
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        self.remember = QCheckBox(self.tr("Remember the password in the system keyring"), self)
        self.remember.setChecked(True)
        self.sslmode = QComboBox(self)
        for mode, words in zip(SSL_MODES, self._ssl_words(), strict=True):
            self.sslmode.addItem(words, mode)
        self.url_line = QLabel(self)
        self.url_line.setWordWrap(True)
        self.url_line.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.intro = QLabel(
            self.tr(
                "An archive kept on a PostgreSQL server, shared by a team. Whoever runs the "
                "server gives you these details."
            ),
            self,
        )
        self.intro.setWordWrap(True)
        self.problem = QLabel(self)
        self.problem.setObjectName("sharedArchiveProblem")
        self.problem.setWordWrap(True)
        self.problem.setVisible(False)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self._lay_out()
        for line in (self.host, self.database, self.user):
            line.textChanged.connect(self._update)
        self.port.valueChanged.connect(self._update)
        self.sslmode.currentIndexChanged.connect(self._update)
        self._update()

    def _ssl_words(self) -> list[str]:
        return [
            self.tr("Encrypted if the server offers it"),
            self.tr("Always encrypted"),
            self.tr("Encrypted, server certificate and name verified"),
            self.tr("Encrypted, server certificate verified"),
            self.tr("Never encrypted"),
        ]

    def _lay_out(self) -> None:
        form = QFormLayout(self)
        form.addRow(self.intro)
        form.addRow(self.problem)
        form.addRow(self.tr("Server:"), self.host)
        form.addRow(self.tr("Port:"), self.port)
        form.addRow(self.tr("Database:"), self.database)
        form.addRow(self.tr("User:"), self.user)
        form.addRow(self.tr("Password:"), self.password)
        form.addRow("", self.remember)
        form.addRow(self.tr("Encryption:"), self.sslmode)
        form.addRow(self.tr("URL:"), self.url_line)
        form.addRow(self.buttons)

    def url(self) -> str:
        """The URL of the fields as they are (no password)."""
        return shared_url(
            self.host.text().strip(),
            self.port.value(),
            self.database.text().strip(),
            self.user.text().strip(),
            str(self.sslmode.currentData()),
        )

    def _update(self) -> None:
        complete = all(line.text().strip() for line in (self.host, self.database, self.user))
        self.buttons.button(QDialogButtonBox.StandardButton.Open).setEnabled(complete)
        self.url_line.setText(self.url() if complete else "")

    def choice(self) -> SharedArchiveChoice:
        """What was chosen."""
        return SharedArchiveChoice(self.url(), self.password.text(), self.remember.isChecked())

    def prefill(self, url: str) -> None:
        """Fill the fields from ``url`` (the archive opened last, to try again); a URL libpq
        cannot read leaves them as they are. A password in it is not taken."""
        try:
            import psycopg
        except ImportError:  # no driver: the archive would not open anyway
            return
        try:
            info = psycopg.conninfo.conninfo_to_dict(url)
        except psycopg.ProgrammingError:
            return
        self.host.setText(str(info.get("host") or ""))
        port = str(info.get("port") or DEFAULT_PORT)
        self.port.setValue(int(port) if port.isdigit() else DEFAULT_PORT)
        self.database.setText(str(info.get("dbname") or ""))
        self.user.setText(str(info.get("user") or ""))
        found = self.sslmode.findData(str(info.get("sslmode") or SSL_MODES[0]))
        self.sslmode.setCurrentIndex(max(found, 0))
        self.password.setFocus()

    def show_problem(self, text: str) -> None:
        """Say above the fields why the archive did not open (empty: say nothing)."""
        self.problem.setText(text)
        self.problem.setVisible(bool(text))
