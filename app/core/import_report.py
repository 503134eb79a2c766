"""Why an import skipped a line, in the language of a translation table: for the app's import
summary and for ``arxiu import``.

A skip made with :meth:`~app.core.archive.importers.base.Skip.said` carries its reason as a
:class:`~app.core.phrases.Phrase`, said in the table's language. A skip whose reason is the
message of an error (an XML refusal, a damaged PDF) is said with its code's label in the
table's language, followed by the message as written (English).
"""

from __future__ import annotations

from app.core.archive.importers.base import Skip
from app.core.error_labels import labelled
from app.core.errors import said_in
from app.core.phrases import Translations


def skip_place(file: str, line: int) -> str:
    """Where a skip is, as a summary names it: ``file:line``; the file alone for a skip of a
    whole file (line 0: a folder import's file of a kind it does not read), the line alone for
    a skip with no file."""
    if not file:
        return str(line)
    return f"{file}:{line}" if line else file


def skip_reason(skip: Skip, table: Translations) -> str:
    """Why ``skip`` was skipped, in the language of ``table`` (an empty table: English)."""
    said = said_in(skip.phrase or skip.reason, table)
    return labelled(skip.code, said, skip.reason, table)
