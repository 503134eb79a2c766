"""Where Arxiu keeps settings, the model catalog and archives.

``ARXIU_HOME`` overrides everything (tests, portable installs): settings, the catalog and the
default archive then all live inside that one folder.
"""

from __future__ import annotations

import os
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
    """The project's ``resources/`` folder (demo archive sources, icons, translations)."""
    return Path(__file__).resolve().parents[2] / "resources"
