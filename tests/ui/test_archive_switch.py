"""File → New archive… / Open archive…: folder rules, the window swap, the remembered archive."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest
import qasync

from app.core.archive import Archive, open_archive
from app.core.errors import ArchiveError
from app.core.models.catalog import catalog_from_data
from app.core.models.scripted import ScriptedModel
from app.core.session import AssistantSession
from app.ui.app_settings import AppSettings
from app.ui.archive_switch import (
    ARCHIVE_SETTING,
    WindowHost,
    open_chosen,
    open_startup_archive,
    remembered_archive,
)
from app.ui.main_window import MainWindow
from app.ui.services import Services
from tests.ui.conftest import LOCAL, build_archive, run


def test_new_archive_in_an_empty_folder_is_named_after_it(tmp_path: Path) -> None:
    archive = open_chosen(tmp_path / "Fons Pujol", create=True)
    try:
        assert (tmp_path / "Fons Pujol" / "archive.db").is_file()
        assert archive.meta("name") == "Fons Pujol"
        assert archive.sections() == []
    finally:
        archive.close()


def test_new_archive_refuses_a_folder_with_files(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("keep me")
    with pytest.raises(ArchiveError) as raised:
        open_chosen(tmp_path, create=True)
    assert raised.value.code == "archive.folder_not_empty"
    assert raised.value.hint
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_new_archive_refuses_an_existing_archive(tmp_path: Path) -> None:
    open_archive(tmp_path, create=True).close()
    with pytest.raises(ArchiveError) as raised:
        open_chosen(tmp_path, create=True)
    assert raised.value.code == "archive.exists"


def test_open_archive_needs_an_archive_there(tmp_path: Path) -> None:
    with pytest.raises(ArchiveError) as raised:
        open_chosen(tmp_path, create=False)
    assert raised.value.code == "archive.not_found"
    assert not (tmp_path / "archive.db").exists()


def test_the_archive_opened_last_is_opened_at_start(tmp_path: Path) -> None:
    settings = AppSettings(tmp_path / "settings.json")
    assert remembered_archive(settings) is None
    settings.set(ARCHIVE_SETTING, str(tmp_path / "gone"))
    assert remembered_archive(settings) is None
    build_archive(tmp_path / "mine").close()
    settings.set(ARCHIVE_SETTING, str(tmp_path / "mine"))
    archive = open_startup_archive(argparse.Namespace(archive=None), settings)
    try:
        assert archive.folder == tmp_path / "mine"
    finally:
        archive.close()


def test_switching_shows_the_new_archive_then_closes_the_old(
    tmp_path: Path, qtbot: Any, qloop: qasync.QEventLoop, ui_archive: Archive
) -> None:
    settings = AppSettings(tmp_path / "settings.json")
    built: list[MainWindow] = []

    def make_window(archive: Archive) -> tuple[MainWindow, Services]:
        services = Services(archive, settings)
        model = ScriptedModel([], id="scripted")
        catalog = catalog_from_data([dict(LOCAL)])
        services.set_session(AssistantSession(archive, catalog, model_factory=lambda _: model))
        window = MainWindow(services)
        built.append(window)
        return window, services

    host = WindowHost(ui_archive, settings, make_window)
    first = host.window
    first.show()
    try:
        file_menu = first.menuBar().actions()[0].menu()
        texts = [action.text() for action in file_menu.actions()]
        assert texts[:2] == ["&New archive…", "&Open archive…"]
        assert first.switch_archive(tmp_path / "new one", create=True)
        run(qloop, host.settled())
        assert host.archive.folder == tmp_path / "new one"
        assert not first.isVisible()
        assert host.window is built[1] and host.window.isVisible()
        assert host.window.windowTitle().endswith("new one")
        assert settings.get(ARCHIVE_SETTING) == str(tmp_path / "new one")
        assert first.switch_archive(tmp_path / "missing", create=False) is False
        assert first.archive_error is not None
        assert "archive.db" in first.archive_error.text()
        first.archive_error.close()
    finally:
        host.window.close()  # as the person does; closing it inside the loop would quit Qt
        run(qloop, host.aclose())
    for window in built:
        window.deleteLater()


DAMAGED = {
    "ca": (
        "Arxiu malmès",
        "La base de dades de l'arxiu {db} és buida (0 bytes): no conté cap arxiu.",
        "Restaura la carpeta de l'arxiu a partir d'una còpia de seguretat; el fitxer s'ha deixat "
        "tal com era.",
    ),
    "es": (
        "Archivo dañado",
        "La base de datos del archivo {db} está vacía (0 bytes): no contiene ningún archivo.",
        "Restaura la carpeta del archivo a partir de una copia de seguridad; el fichero se ha "
        "dejado tal como estaba.",
    ),
}


@pytest.mark.parametrize("ui_lang", ["ca", "es"], indirect=True)
def test_a_damaged_archive_is_refused_in_the_ui_language(
    make_window: Any, ui_lang: str, tmp_path: Path
) -> None:
    """File → Open archive… on a folder whose archive.db is empty: the warning says the code's
    label, the core's message and its hint, all in the UI's language; the file is untouched."""
    folder = tmp_path / "fons"
    folder.mkdir()
    (folder / "archive.db").write_bytes(b"")
    window = make_window([])
    assert window.switch_archive(folder, create=False) is False
    box = window.archive_error
    assert box is not None
    label, message, hint = DAMAGED[ui_lang]
    assert box.text() == f"{label}\n\n{message.format(db=folder / 'archive.db')}\n\n{hint}"
    box.close()
    assert (folder / "archive.db").read_bytes() == b""
