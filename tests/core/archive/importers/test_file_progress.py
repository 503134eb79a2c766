"""Importers of many files name each file as its reading starts (the app's progress dialog)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.core.archive import Archive
from app.core.archive.importers import run_import
from app.core.archive.importers.base import FileProgress, report_file
from tests.conftest import shared_data


class Recorder:
    """A :class:`FileProgress` that keeps what it was told."""

    def __init__(self) -> None:
        self.files: list[str] = []
        self.figures: list[tuple[int, int]] = []

    def __call__(self, done: int, total: int) -> None:
        self.figures.append((done, total))

    def reading(self, name: str) -> None:
        self.files.append(name)


def test_a_plain_callback_is_not_told_file_names() -> None:
    figures: list[tuple[int, int]] = []
    report_file(lambda done, total: figures.append((done, total)), "x.xml")
    report_file(None, "x.xml")
    assert figures == []
    assert isinstance(Recorder(), FileProgress)


@pytest.mark.parametrize(
    ("kind", "folder", "pattern"),
    [("ead", ("ead", "anf"), "FRAN_IR_00*.xml"), ("ohms", ("oral-history-ohms",), "*.xml")],
)
def test_each_file_is_named_once_in_reading_order(
    archive: Archive, tmp_path: Path, kind: str, folder: tuple[str, ...], pattern: str
) -> None:
    source = tmp_path / "in"
    source.mkdir()
    names = sorted(p.name for p in shared_data(*folder).glob(pattern))[:3]
    for name in names:
        shutil.copy(shared_data(*folder, name), source / name)
    recorder = Recorder()
    run_import(archive, kind, source, recorder)
    assert recorder.files == names
    assert recorder.figures[-1] == (len(names), len(names))
