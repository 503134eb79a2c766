"""Translations of the UI's strings: small JSON tables loaded at startup.

Every visible string goes through ``self.tr`` or ``QCoreApplication.translate`` with English as
the source text. The tables in ``resources/i18n/<lang>.json`` map that English text to Catalan
or Spanish; they are loaded into a :class:`TableTranslator` (a ``QTranslator`` that looks the
source text up, whatever its context). Compiling Qt Linguist ``.ts`` files to ``.qm`` needs
``lrelease``, which is not shipped everywhere; the JSON tables need nothing.

Qt's own strings (the file dialog's "Look in:" and "File name:", the standard buttons) come
from the ``qtbase_<lang>.qm`` files PySide6 ships: :func:`install_qt_translator` loads the one
for the chosen language from Qt's translations folder, or from ``resources/qt`` in a bundle
(whose file filter leaves Qt's translations folder out; ``packaging/arxiu.spec`` copies the two
files there).
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QTranslator

from app.core import i18n_tables, paths
from app.core.archive.shown_values import LANGUAGE_NAMES
from app.core.chosen_language import UI_LANGS
from app.core.error_labels import labelled
from app.core.errors import ArxiuError

LANGUAGES = {"en": "English", "ca": "Català", "es": "Español"}
ARCHIVE_LANGS = UI_LANGS
"""The archive language of each UI language (the CLI's and the server's too)."""
LOCALES = {"en": "en_US", "ca": "ca_ES", "es": "es_ES"}
"""The locale whose number formats each UI language uses."""


def i18n_dir() -> Path:
    """The folder with the translation tables."""
    return i18n_tables.i18n_dir()


def load_table(lang: str) -> dict[str, str]:
    """The translation table for ``lang`` (empty for English or a missing table)."""
    return i18n_tables.load_table(lang)


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
    """Install the table for ``lang`` on ``app`` and make ``lang``'s locale the default one
    (numbers written as ``0,5`` in Catalan and Spanish); returns it (``None`` for English)."""
    QLocale.setDefault(QLocale(LOCALES.get(lang, "en_US")))
    table = load_table(lang)
    if not table:
        return None
    translator = TableTranslator(table, app)
    app.installTranslator(translator)
    return translator


def qt_translation_dirs() -> list[Path]:
    """Where ``qtbase_<lang>.qm`` may be: Qt's translations folder, then the bundle's copy."""
    qt_dir = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
    return [Path(qt_dir), paths.resources_dir() / "qt"]


def install_qt_translator(app: QCoreApplication, lang: str) -> QTranslator | None:
    """Install Qt's own translation of its dialogs and buttons for ``lang`` on ``app``;
    returns it (``None`` for English, or when no ``qtbase_<lang>.qm`` is found)."""
    if lang == "en":
        return None
    for folder in qt_translation_dirs():
        translator = QTranslator(app)
        if translator.load(f"qtbase_{lang}", str(folder)):
            app.installTranslator(translator)
            return translator
        translator.deleteLater()
    return None


def language_name(code: str) -> str:
    """The name of the archive language ``code`` (``lg-cat``) in the UI's language: the
    table's (:data:`LANGUAGE_NAMES`), else Qt's English name of the ISO code, else the code."""
    english = LANGUAGE_NAMES.get(code)
    if english is not None:
        return tr(english)
    iso = code.removeprefix("lg-")
    language = QLocale.codeToLanguage(iso) if iso.isalpha() else QLocale.Language.AnyLanguage
    if language in (QLocale.Language.AnyLanguage, QLocale.Language.C):
        return code
    return QLocale.languageToString(language)


def tr(text: str, context: str = "Arxiu") -> str:
    """Translate ``text`` outside a QObject."""
    return QCoreApplication.translate(context, text)


class InstalledTranslations:
    """The translations installed on the application, as the core's phrases look them up
    (:class:`~app.core.phrases.Translations`): an import's skip reasons, error labels."""

    def get(self, key: str, /) -> str | None:
        """The translation of ``key`` in the UI's language, or ``None`` when there is none."""
        shown = tr(key)
        return shown if shown != key else None


def error_text(error: ArxiuError, *, paragraphs: bool = False) -> str:
    """What went wrong, for a banner or a message box: the message and the hint in the UI's
    language where the tables hold them (else as the core wrote them), on one line or
    (``paragraphs``) each in a paragraph of its own. The label of the error's code in the UI's
    language (Catalan and Spanish; :mod:`app.core.error_labels`) leads a message the tables do
    not hold, and heads a box's paragraphs as its title (unless it is the message itself). In
    English the message says it all and stands alone."""
    table = InstalledTranslations()
    message, hint = error.message_in(table), error.hint_in(table)
    if not paragraphs:
        lead = labelled(error.code, message, error.message, table)
        return " ".join(part for part in (lead, hint) if part)
    label = table.get(error.label_key)
    title = label if label != message else None
    return "\n\n".join(part for part in (title, message, hint) if part)
