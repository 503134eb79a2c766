"""The language a person chose for Arxiu outside the window: the CLI's, the server's, MCP's.

``ARXIU_LANG``, else the settings' ``language`` (what the desktop app saves), else the
system's (``LC_ALL``, ``LC_MESSAGES``, ``LANG``), else English: the choice the desktop app
makes, without Qt.
"""

from __future__ import annotations

import json
import os

from app.core import paths

UI_LANGS = {"ca": "lg-cat", "es": "lg-spa", "en": "lg-eng"}
"""The languages Arxiu speaks, and the archive language of each (labels, titles, tools)."""


_UNREAD = object()


def chosen_language(setting: object = _UNREAD) -> str:
    """``ca``, ``es`` or ``en`` (see the module); ``setting``: the settings' ``language`` when
    the caller has read the file already (it is then not read again)."""
    chosen = os.environ.get("ARXIU_LANG")
    if chosen in UI_LANGS:
        return str(chosen)
    if setting is _UNREAD:
        setting = setting_language()
    if setting in UI_LANGS:
        return str(setting)
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(name)
        if value:
            system = value.split("_")[0].split(".")[0].lower()
            return system if system in UI_LANGS else "en"
    return "en"


def chosen_archive_language(setting: object = _UNREAD) -> str:
    """The archive language of :func:`chosen_language` (``lg-cat``, ``lg-spa``, ``lg-eng``)."""
    return UI_LANGS[chosen_language(setting)]


def setting_language() -> str | None:
    """The ``language`` the settings file holds, if any."""
    try:
        data = json.loads(paths.settings_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = data.get("language") if isinstance(data, dict) else None
    return value if isinstance(value, str) else None
