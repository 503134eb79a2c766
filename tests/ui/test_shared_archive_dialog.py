"""File → Open shared archive…'s dialog: the URL it composes (what every command takes as
``--archive``), never with the password; Open only when the server, database and user are
given."""

from __future__ import annotations

from typing import Any

import psycopg
from PySide6.QtWidgets import QDialogButtonBox

from app.ui.shared_archive_dialog import SharedArchiveDialog, shared_url


def test_the_url_is_what_libpq_reads_back() -> None:
    url = shared_url("db.example.org", 6543, "fons arxiu", "ana maria", "verify-full")
    assert url == "postgresql://ana%20maria@db.example.org:6543/fons%20arxiu?sslmode=verify-full"
    info = psycopg.conninfo.conninfo_to_dict(url)
    assert (info["host"], info["port"], info["dbname"], info["user"]) == (
        "db.example.org",
        "6543",
        "fons arxiu",
        "ana maria",
    )
    assert info["sslmode"] == "verify-full"
    assert "sslmode" not in shared_url("db", 5432, "arxiu", "ana", "prefer")  # libpq's default
    v6 = psycopg.conninfo.conninfo_to_dict(shared_url("::1", 5432, "arxiu", "ana", "disable"))
    assert v6["host"] == "::1"


def test_open_waits_for_the_fields_and_the_password_stays_out_of_the_url(qtbot: Any) -> None:
    dialog = SharedArchiveDialog(user="ana")
    qtbot.addWidget(dialog)
    open_button = dialog.buttons.button(QDialogButtonBox.StandardButton.Open)
    assert not open_button.isEnabled()  # no server yet
    dialog.host.setText("db.example.org")
    dialog.password.setText("pw-typed-7")
    dialog.sslmode.setCurrentIndex(dialog.sslmode.findData("require"))
    assert open_button.isEnabled()
    choice = dialog.choice()
    assert choice.url == "postgresql://ana@db.example.org:5432/arxiu?sslmode=require"
    assert dialog.url_line.text() == choice.url
    assert choice.password == "pw-typed-7" and "pw-typed-7" not in choice.url
    assert choice.remember
    dialog.user.setText("")
    assert not open_button.isEnabled() and dialog.url_line.text() == ""
