"""The language a written text value is stored in, when the writer does not name one.

A value the assistant writes into a multilingual field ("Mestra" for a person's occupation)
used to be stored under the UI's language, whatever language it was written in. Now it is
stored under :func:`value_lang`'s choice:

1. the language the text itself shows (:func:`~app.core.archive.language.detect`: function
   words and spellings, given only on clear evidence — "mestra d'escola" is Catalan);
2. else the language of the person's question, which the run knows: a single word such as
   "Mestra" or "Maestra" carries no evidence of its own, and a person asking in Catalan is
   writing a Catalan archive value far more often than one in the UI's language (a display
   setting, often left at its default);
3. else the UI language.

:func:`with_value_langs` writes that choice into a write op's arguments (a ``set_field``'s
``lang``, a new record's ``{lang, value}`` items), so the plan a person confirms names the
language, Apply stores what the card showed, and the hash covers it. A language the op gives
is never changed. Language-neutral fields (dates, codes, relations) are left alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.core.archive.language import detect
from app.core.errors import ArxiuError

if TYPE_CHECKING:
    from app.core.archive.model import Field
    from app.core.archive.store import Archive
    from app.core.json_types import JsonObject, JsonValue

VALUE_MAPS = {"dedalo_create_record": ("values",), "dedalo_find_or_create": ("set",)}
"""The arguments of ``{field: value}`` maps whose text values get a language (a match is
compared with the stored values in any language, so it keeps none)."""


@dataclass(frozen=True)
class ValueLangs:
    """What a run knows to choose a value's language: its question's and its UI's."""

    ui_lang: str = "lg-eng"
    question_lang: str | None = None
    """The question's language when it is clear (``None``: not known)."""

    @classmethod
    def of(cls, question: str, ui_lang: str) -> ValueLangs:
        """The languages of a run asked ``question`` in a UI in ``ui_lang``."""
        return cls(ui_lang, detect(question) if question.strip() else None)


def value_lang(text: str, langs: ValueLangs) -> str:
    """The language ``text`` is stored in (see the module docstring)."""
    return detect(text) or langs.question_lang or langs.ui_lang


def with_value_langs(
    tool: str, args: JsonObject, archive: Archive, langs: ValueLangs
) -> JsonObject:
    """``args`` (checked: fields by tipo) with a language for each text value that has none."""
    out = dict(args)
    if tool == "dedalo_set_field":
        fld = _field(archive, args.get("field"))
        value = args.get("value")
        if fld is not None and not args.get("lang") and isinstance(value, str) and value:
            out["lang"] = value_lang(value, langs)
        return out
    for name in VALUE_MAPS.get(tool, ()):
        mapping = args.get(name)
        if isinstance(mapping, Mapping):
            out[name] = {k: _tagged(_field(archive, k), v, langs) for k, v in mapping.items()}
    return out


def _field(archive: Archive, tipo: object) -> Field | None:
    """The multilingual field ``tipo`` names (``None``: none, or not multilingual)."""
    if not isinstance(tipo, str):
        return None
    try:
        found = archive.field(tipo)
    except ArxiuError:
        return None
    return found if found.multilingual else None


def _tagged(fld: Field | None, value: JsonValue, langs: ValueLangs) -> JsonValue:
    """A plain text value of a multilingual field as the item ``{lang, value}``."""
    if fld is None or not isinstance(value, str) or not value:
        return value
    return {"lang": value_lang(value, langs), "value": value}
