"""The translation tables read without Qt, for the CLI and for texts the core writes.

The tables are ``resources/i18n/<lang>.json``: English source text (or a key such as
``error.archive.corrupt``) to its Catalan or Spanish translation. The desktop app installs the
same tables as a ``QTranslator`` (:mod:`app.ui.i18n`); the CLI, which has no Qt, reads them here
to say an import's skip reasons (:class:`~app.core.phrases.Phrase`) and the labels of error
codes (:mod:`app.core.error_labels`) in ``ARXIU_LANG``'s language.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from app.core import paths

TABLE_LANGS = ("ca", "es")
"""The languages with a table (English is the source text and needs none)."""


def i18n_dir() -> Path:
    """The folder with the translation tables."""
    return paths.resources_dir() / "i18n"


def load_table(lang: str) -> dict[str, str]:
    """The translation table for ``lang`` (empty for English or a missing table): a copy the
    caller may keep or change."""
    return dict(_read_table(lang))


@cache
def _read_table(lang: str) -> dict[str, str]:
    path = i18n_dir() / f"{lang}.json"
    if lang == "en" or not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {str(k): str(v) for k, v in data.items() if v}
