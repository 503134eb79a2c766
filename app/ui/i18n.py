"""Translations of the UI's strings: small JSON tables loaded at startup.

Every visible string goes through ``self.tr`` or ``QCoreApplication.translate`` with English as
the source text. The tables in ``resources/i18n/<lang>.json`` map that English text to Catalan
or Spanish; they are loaded into a :class:`TableTranslator` (a ``QTranslator`` that looks the
source text up, whatever its context). Compiling Qt Linguist ``.ts`` files to ``.qm`` needs
``lrelease``, which is not shipped everywhere; the JSON tables need nothing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QLocale, QTranslator

from app.core import paths

LANGUAGES = {"en": "English", "ca": "Català", "es": "Español"}
ARCHIVE_LANGS = {"en": "lg-eng", "ca": "lg-cat", "es": "lg-spa"}


def i18n_dir() -> Path:
    """The folder with the translation tables."""
    return paths.resources_dir() / "i18n"


def load_table(lang: str) -> dict[str, str]:
    """The translation table for ``lang`` (empty for English or a missing table)."""
    path = i18n_dir() / f"{lang}.json"
    if lang == "en" or not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {str(k): str(v) for k, v in data.items() if v}


class TableTranslator(QTranslator):
    """A translator backed by a ``{english: translation}`` table."""

    def __init__(self, table: dict[str, str], parent: QCoreApplication | None = None) -> None:
        super().__init__(parent)
        self._table = table

    def translate(
        self,
        context: str,
        source_text: str,
        disambiguation: str | None = None,
        n: int = -1,
    ) -> str:
        """The translation of ``source_text``, or ``None`` when the table has none.

        ``None`` reaches Qt as a *null* string, which tells it to try the next translator and
        then keep the source text. An empty string would be taken as the translation: Qt's own
        strings (image reader errors, format strings with ``%1``) would become empty, and a
        thumbnail in the record view failed to decode in Catalan and Spanish.
        """
        return self._table.get(source_text)  # type: ignore[return-value]

    def isEmpty(self) -> bool:
        """Whether the table has no entries."""
        return not self._table


def choose_language(setting: str | None = None) -> str:
    """``ARXIU_LANG``, else the setting, else the system's language if provided, else English."""
    for candidate in (os.environ.get("ARXIU_LANG"), setting):
        if candidate in LANGUAGES:
            return str(candidate)
    system = QLocale.system().name().split("_")[0]
    return system if system in LANGUAGES else "en"


def install_translator(app: QCoreApplication, lang: str) -> TableTranslator | None:
    """Install the table for ``lang`` on ``app``; returns it (``None`` for English)."""
    table = load_table(lang)
    if not table:
        return None
    translator = TableTranslator(table, app)
    app.installTranslator(translator)
    return translator


def tr(text: str, context: str = "Arxiu") -> str:
    """Translate ``text`` outside a QObject."""
    return QCoreApplication.translate(context, text)
