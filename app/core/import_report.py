"""Why an import skipped a line, in the language of a translation table: for the app's import
summary and for ``arxiu import``.

A skip made with :meth:`~app.core.archive.importers.base.Skip.said` carries its reason as a
:class:`~app.core.phrases.Phrase`, said in the table's language. A skip whose reason is the
message of an error (an XML refusal, a damaged PDF) is said with its code's label in the
table's language, followed by the message as written (English).
"""

from __future__ import annotations

from app.core.archive.importers.base import Skip
from app.core.error_labels import label_key
from app.core.phrases import Translations


def skip_reason(skip: Skip, table: Translations) -> str:
    """Why ``skip`` was skipped, in the language of ``table`` (an empty table: English)."""
    if skip.phrase is not None and table.get(skip.phrase.template):
        return skip.phrase.said_in(table)
    translated = table.get(skip.reason)  # a fixed sentence, such as a PDF's note
    if translated:
        return translated
    label = table.get(label_key(skip.code))
    return f"{label}: {skip.reason}" if label else skip.reason
