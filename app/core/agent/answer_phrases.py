"""The core's own sentences for answers it composes itself, in Catalan, Spanish and English.

A composed answer (see :mod:`app.core.agent.composed_answer`) holds no model prose: its words
come from the records it lists, from the question, or from this table. The table is typed and
Qt-free; the UI's strings live in ``resources/i18n`` instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from app.core.archive.language import NEUTRAL


@dataclass(frozen=True)
class Phrases:
    """The sentences and words of composed answers in one language.

    ``found_many`` is formatted with ``count`` and ``noun`` (the records' noun, as the question
    says it, or :attr:`records`).
    """

    found_many: str
    found_one: str
    nothing: str
    records: str
    page: str
    languages: dict[str, str] = field(default_factory=dict)

    def found(self, count: int, noun: str | None) -> str:
        """The opening sentence for ``count`` records (``noun``: the question's word)."""
        if count == 0:
            return self.nothing
        if count == 1:
            return self.found_one
        return self.found_many.format(count=count, noun=noun or self.records)

    def language(self, code: str) -> str:
        """The name of the language ``code`` (a Dédalo code), or the code itself."""
        return self.languages.get(code, code.removeprefix("lg-"))


PHRASES: dict[str, Phrases] = {
    "lg-cat": Phrases(
        found_many="He trobat {count} {noun} que en parlen:",
        found_one="He trobat un registre que en parla:",
        nothing="No he trobat cap registre sobre això a l'arxiu.",
        records="registres",
        page="pàgina",
        languages={
            "lg-cat": "català",
            "lg-spa": "castellà",
            "lg-eng": "anglès",
            "lg-fra": "francès",
            NEUTRAL: "",
        },
    ),
    "lg-spa": Phrases(
        found_many="He encontrado {count} {noun} que hablan de ello:",
        found_one="He encontrado un registro que habla de ello:",
        nothing="No he encontrado ningún registro sobre esto en el archivo.",
        records="registros",
        page="página",
        languages={
            "lg-cat": "catalán",
            "lg-spa": "castellano",
            "lg-eng": "inglés",
            "lg-fra": "francés",
            NEUTRAL: "",
        },
    ),
    "lg-eng": Phrases(
        found_many="I found {count} {noun} about it:",
        found_one="I found one record about it:",
        nothing="I found no records about this in the archive.",
        records="records",
        page="page",
        languages={
            "lg-cat": "Catalan",
            "lg-spa": "Spanish",
            "lg-eng": "English",
            "lg-fra": "French",
            NEUTRAL: "",
        },
    ),
}
"""The composed answers' languages (Dédalo codes); any other language is answered in English."""


def phrases(lang: str) -> Phrases:
    """The table of ``lang`` (English for a language without one)."""
    return PHRASES.get(lang, PHRASES["lg-eng"])


def vocabulary() -> set[str]:
    """Every text in the tables (what a composed answer may say besides records and question)."""
    out: set[str] = set()
    for table in PHRASES.values():
        out.update((table.found_many, table.found_one, table.nothing, table.records, table.page))
        out.update(table.languages.values())
    return out
