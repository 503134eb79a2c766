"""Words the core writes for a person, kept so that a front end can say them in its language.

A :class:`Phrase` is an English template with named parameters (``duplicate id {id!r} (first
on line {first})`` with ``id`` and ``first``). The core keeps its English text for logs, JSON
and tests; the app and the CLI look the template up in a translation table
(:mod:`app.core.i18n_tables`) and fill the translation with the same parameters. A number
is written with the separators the table names under :data:`THOUSANDS` and :data:`DECIMAL`
(``8.388.608`` and ``0,5`` in Catalan and Spanish), however the translation formats it
(``{limit:,}``).
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Any, Protocol

from app.core.json_types import JsonObject

THOUSANDS = "number.thousands"
"""The key of a table's thousands separator (``.`` in Catalan and Spanish; ``,`` without one)."""
DECIMAL = "number.decimal"
"""The key of a table's decimal mark (``,`` in Catalan and Spanish; ``.`` without one)."""
MIN_GROUPING = "number.min_grouping"
"""The key of the fewest digits a table groups before the first separator: ``2`` in Spanish,
where a number under 10,000 takes none (``1234``, ``12.345``: the RAE's rule, CLDR's
``minimumGroupingDigits``, and what Qt's ``es_ES`` locale writes in the window); ``1`` (every
group) without one."""


class Translations(Protocol):
    """Where a phrase's translation is looked up: a table read from ``resources/i18n``
    (:func:`app.core.i18n_tables.load_table`, an empty one for English) or the app's installed
    translators."""

    def get(self, key: str, /) -> str | None:
        """The translation of ``key`` (an English template, or a label key), if there is one."""


@dataclass(frozen=True)
class Phrase:
    """An English template and the values of its ``{name}`` parameters."""

    template: str
    params: tuple[tuple[str, PhraseParam], ...] = ()

    @classmethod
    def of(cls, template: str, /, **params: PhraseParam) -> Phrase:
        """The phrase ``template`` with ``params``."""
        return cls(template, tuple(params.items()))

    def english(self) -> str:
        """The phrase in English: the template filled in."""
        return self.said_in({})

    def said_in(self, table: Translations) -> str:
        """The phrase in the language of ``table`` (English when the table has no translation
        of the template, or a translation that does not fit the parameters)."""
        values = {
            name: value.said_in(table) if isinstance(value, Phrase) else value
            for name, value in self.params
        }
        translated = table.get(self.template)
        if translated:
            try:
                return Numbers(table).format(translated, **values)
            except (KeyError, IndexError, ValueError):
                pass  # a translation that names another parameter: the English is still right
        return self.template.format(**values)

    def params_json(self) -> JsonObject:
        """The parameters by name, as JSON (a phrase among them as its English)."""
        return {
            name: value.english() if isinstance(value, Phrase) else value
            for name, value in self.params
        }


class Numbers(string.Formatter):
    """``str.format`` that writes a number with a table's separators (``{limit:,}``:
    ``8.388.608`` in Catalan), everything else as ``str.format`` does: how a phrase's
    translation is filled in, and how the CLI writes its own sentences' numbers
    (:mod:`app.commands.cli_words`), so the tables are the one place that names them."""

    def __init__(self, table: Translations) -> None:
        super().__init__()
        marks = {",": table.get(THOUSANDS) or ",", ".": table.get(DECIMAL) or "."}
        self._marks = str.maketrans(marks)
        self._ungrouped_below = 10 ** (2 + int(table.get(MIN_GROUPING) or 1))

    def format_field(self, value: Any, format_spec: str) -> str:
        """``value`` formatted by ``format_spec``; a number's separators the table's."""
        text: str = super().format_field(value, format_spec)
        if isinstance(value, int | float) and not isinstance(value, bool):
            if "," in format_spec and abs(value) < self._ungrouped_below:
                text = text.replace(",", "")  # 1234 in Spanish, not 1.234
            return text.translate(self._marks)
        return text


PhraseParam = str | int | float | Phrase
"""A parameter of a phrase: text, a number (formatted by the template, ``{n:,}``) or a phrase
of its own (said in the same language as the phrase that holds it)."""
