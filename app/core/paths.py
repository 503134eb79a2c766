"""Where Arxiu keeps settings, the model catalog and archives.

``ARXIU_HOME`` overrides everything (tests, portable installs): settings, the catalog and the
default archive then all live inside that one folder.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import platformdirs

APP_NAME = "arxiu"


def home() -> Path:
    """The folder that holds Arxiu's data (``ARXIU_HOME`` or the platform's user data dir)."""
    override = os.environ.get("ARXIU_HOME")
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def config_dir() -> Path:
    """The folder with ``settings.json`` and ``models.json``."""
    if os.environ.get("ARXIU_HOME"):
        return home()
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def default_archive_dir() -> Path:
    """The archive opened when none is named: created as the demo archive on first run."""
    return home() / "archives" / "demo"


def settings_file() -> Path:
    """The JSON settings file (never holds secrets)."""
    return config_dir() / "settings.json"


def catalog_file() -> Path:
    """The user's model catalog (``models.json``); the built-in local model is always added."""
    return config_dir() / "models.json"


def resources_dir() -> Path:
    """The ``resources/`` folder (demo archive sources, icons, translations).

    Looked up where each kind of install puts it: a frozen bundle unpacks it beside the ``app``
    package in ``sys._MEIPASS``; a wheel carries it as ``app/resources`` (the build maps the
    top-level ``resources/`` onto that package); an editable install or a source checkout reads
    the top-level ``resources/`` of the tree.
    """
    return find_resources(Path(__file__).resolve(), getattr(sys, "_MEIPASS", None))


def find_resources(paths_module: Path, bundle_root: str | None = None) -> Path:
    """The first existing ``resources/`` for a ``paths.py`` at ``paths_module``.

    Candidates in order: ``<bundle_root>/app/resources`` (frozen), ``app/resources`` next to
    the package (wheel), ``<tree>/resources`` (source). When none exists the source-tree path
    is returned, so the error that follows names the folder a developer would expect.
    """
    package = paths_module.parents[1]
    candidates = [package / "resources", package.parent / "resources"]
    if bundle_root:
        candidates.insert(0, Path(bundle_root) / "app" / "resources")
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    return candidates[-1]
