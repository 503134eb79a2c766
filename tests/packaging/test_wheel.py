"""The wheel and sdist that ``python -m build`` makes carry ``resources/`` as ``app/resources``.

Built once per module into a temporary folder, the way a release is: sdist first, then the
wheel from the unpacked sdist, so a file missing from either shows up here.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from app import __version__

REPO = Path(__file__).resolve().parents[2]


def _resource_files() -> set[str]:
    root = REPO / "resources"
    return {
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("dist")
    result = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(REPO)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return next(out.glob("arxiu-*.tar.gz")), next(out.glob("arxiu-*.whl"))


def test_wheel_carries_every_resource_file(built: tuple[Path, Path]) -> None:
    names = set(zipfile.ZipFile(built[1]).namelist())
    packaged = {n.removeprefix("app/resources/") for n in names if n.startswith("app/resources/")}
    assert _resource_files() <= packaged
    assert "demo/schema.json" in packaged and "i18n/ca.json" in packaged
    assert "icons/arxiu.svg" in packaged and "icons/arxiu.png" in packaged


def test_wheel_holds_only_the_app_package(built: tuple[Path, Path]) -> None:
    names = zipfile.ZipFile(built[1]).namelist()
    tops = {n.split("/")[0] for n in names}
    assert tops == {"app", f"arxiu-{__version__}.dist-info"}
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_wheel_installs_the_arxiu_command(built: tuple[Path, Path]) -> None:
    wheel = zipfile.ZipFile(built[1])
    entry_points = wheel.read(f"arxiu-{__version__}.dist-info/entry_points.txt").decode()
    assert "arxiu = app.cli:main" in entry_points
    assert built[1].name == f"arxiu-{__version__}-py3-none-any.whl"


def test_sdist_carries_resources_and_the_package_list(built: tuple[Path, Path]) -> None:
    with tarfile.open(built[0]) as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    assert {"setup.py", "pyproject.toml", "resources/demo/schema.json"} <= names
    assert {f"resources/{f}" for f in _resource_files()} <= names
