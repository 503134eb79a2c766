"""A count said in words that agree with it: "1 record, 1 new" and "2 records, 2 new".

Catalan, Spanish and English say a count with one form for exactly one and another for every
other number, 0 included ("0 registres", "0 registros", "0 records"). A :class:`Counted` holds
both forms; :meth:`Counted.template` picks the one for a count. The front ends keep their
words in their own tables: the app writes the English forms and translates the one picked
(``resources/i18n/<lang>.json`` holds both forms under their English text, so the ``one``
form is written out, "1 new", where the English of the two would otherwise be the same key);
the CLI keeps a :class:`Counted` per language in :mod:`app.commands.cli_words`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Counted:
    """The words of a count: ``one`` for exactly one, ``other`` (a template with ``{n}``) for
    any other number."""

    one: str
    """The text for one, with the 1 written out (``1 record``); it may name other parameters
    (``1 record written to {path}.``), as ``other`` does."""
    other: str
    """The template for any other number (``{n} records``)."""

    def template(self, count: int) -> str:
        """The form for ``count``: ``one`` when it is 1, else ``other``."""
        return self.one if count == 1 else self.other

    def said(self, count: int, shown: str | None = None) -> str:
        """``count`` in these words (``shown`` is the number as the caller writes it, with its
        thousands separator; ``count`` itself when not given)."""
        return self.template(count).format(n=count if shown is None else shown)
