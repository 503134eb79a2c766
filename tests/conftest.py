"""Shared fixtures: offline hubs, a private ARXIU_HOME, fresh and demo archives."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from app.core.archive import Archive, open_archive

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data, skipping the test when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared dataset not available: {path}")
    return path


@pytest.fixture(autouse=True)
def arxiu_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own empty ARXIU_HOME (settings, catalog, default archive)."""
    home = tmp_path_factory.mktemp("arxiu-home")
    monkeypatch.setenv("ARXIU_HOME", str(home))
    return home


@pytest.fixture
def archive(tmp_path: Path) -> Iterator[Archive]:
    """A fresh, empty archive."""
    arch = open_archive(tmp_path / "archive", create=True)
    yield arch
    arch.close()


@pytest.fixture(scope="session")
def demo_archive_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo archive built once per test session; copy it (or open it read-only) to use it."""
    from app.core.archive.demo import create_demo_archive

    folder = tmp_path_factory.mktemp("demo-archive") / "archive"
    create_demo_archive(folder).close()
    return folder
