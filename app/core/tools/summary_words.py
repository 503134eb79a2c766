"""The tools' human summaries (the ``tool_use`` lines a person reads) in Catalan and Spanish.

A tool's summary template is written in English on its ``@tool`` decorator; this table gives
the same template in the other languages of the product, keyed by the English text, with the
same ``{argument}`` slots. A template without an entry here is shown in English.
"""

from __future__ import annotations

SUMMARY_WORDS: dict[str, dict[str, str]] = {
    "lg-cat": {
        "List the archive's sections": "Llista les seccions de l'arxiu",
        "Describe section {section_tipo}": "Descriu la secció {section_tipo}",
        "Resolve “{name}”": "Identifica «{name}»",
        "Resolve the path “{path}”": "Identifica el camí «{path}»",
        "Describe {tipo}": "Descriu {tipo}",
        "Read record {section_tipo}/{section_id}": (
            "Llegeix el registre {section_tipo}/{section_id}"
        ),
        "Search {section_tipo} for “{query}”": "Cerca «{query}» a {section_tipo}",
        "Media of {section_tipo}/{section_id}": "Fitxers de {section_tipo}/{section_id}",
        "Search by meaning: “{query}”": "Cerca pel significat: «{query}»",
        "Search by meaning in 1 section: “{query}”": "Cerca pel significat en 1 secció: «{query}»",
        "Search by meaning in {count} sections: “{query}”": (
            "Cerca pel significat en {count} seccions: «{query}»"
        ),
        "Search by meaning within {within}: “{query}”": (
            "Cerca pel significat dins de {within}: «{query}»"
        ),
        "Passages of {section_tipo}/{section_id}": "Fragments de {section_tipo}/{section_id}",
        "Create a record in {section_tipo}": "Crea un registre a {section_tipo}",
        "Duplicate record {section_tipo}/{section_id}": (
            "Duplica el registre {section_tipo}/{section_id}"
        ),
        "Delete record {section_tipo}/{section_id}": (
            "Esborra el registre {section_tipo}/{section_id}"
        ),
        "Set {field} of {section_tipo}/{section_id}": (
            "Canvia {field} de {section_tipo}/{section_id}"
        ),
        "Save {field} of {section_tipo}/{section_id}": (
            "Desa {field} de {section_tipo}/{section_id}"
        ),
        "Link {target} as {field} of {section_tipo}/{section_id}": (
            "Enllaça {target} com a {field} de {section_tipo}/{section_id}"
        ),
        "Unlink {target} from {field} of {section_tipo}/{section_id}": (
            "Desenllaça {target} de {field} de {section_tipo}/{section_id}"
        ),
        "Find or create in {section_tipo}: {match}": "Troba o crea a {section_tipo}: {match}",
        "Attach {path} to {field} of {section_tipo}/{section_id}": (
            "Adjunta {path} a {field} de {section_tipo}/{section_id}"
        ),
        "Search records in {section_tipo}": "Cerca registres a {section_tipo}",
        "Search records in {section_tipo} with {count} filters": (
            "Cerca registres a {section_tipo} amb {count} filtres"
        ),
        "Search records in {section_tipo} with 1 filter": (
            "Cerca registres a {section_tipo} amb 1 filtre"
        ),
        "Count records in {section_tipo}": "Compta els registres de {section_tipo}",
        "Count records in {section_tipo} with {count} filters": (
            "Compta els registres de {section_tipo} amb {count} filtres"
        ),
        "Count records in {section_tipo} with 1 filter": (
            "Compta els registres de {section_tipo} amb 1 filtre"
        ),
    },
    "lg-spa": {
        "List the archive's sections": "Lista las secciones del archivo",
        "Describe section {section_tipo}": "Describe la sección {section_tipo}",
        "Resolve “{name}”": "Identifica «{name}»",
        "Resolve the path “{path}”": "Identifica la ruta «{path}»",
        "Describe {tipo}": "Describe {tipo}",
        "Read record {section_tipo}/{section_id}": "Lee el registro {section_tipo}/{section_id}",
        "Search {section_tipo} for “{query}”": "Busca «{query}» en {section_tipo}",
        "Media of {section_tipo}/{section_id}": "Archivos de {section_tipo}/{section_id}",
        "Search by meaning: “{query}”": "Búsqueda por significado: «{query}»",
        "Search by meaning in 1 section: “{query}”": (
            "Búsqueda por significado en 1 sección: «{query}»"
        ),
        "Search by meaning in {count} sections: “{query}”": (
            "Búsqueda por significado en {count} secciones: «{query}»"
        ),
        "Search by meaning within {within}: “{query}”": (
            "Búsqueda por significado dentro de {within}: «{query}»"
        ),
        "Passages of {section_tipo}/{section_id}": "Fragmentos de {section_tipo}/{section_id}",
        "Create a record in {section_tipo}": "Crea un registro en {section_tipo}",
        "Duplicate record {section_tipo}/{section_id}": (
            "Duplica el registro {section_tipo}/{section_id}"
        ),
        "Delete record {section_tipo}/{section_id}": (
            "Borra el registro {section_tipo}/{section_id}"
        ),
        "Set {field} of {section_tipo}/{section_id}": (
            "Cambia {field} de {section_tipo}/{section_id}"
        ),
        "Save {field} of {section_tipo}/{section_id}": (
            "Guarda {field} de {section_tipo}/{section_id}"
        ),
        "Link {target} as {field} of {section_tipo}/{section_id}": (
            "Enlaza {target} como {field} de {section_tipo}/{section_id}"
        ),
        "Unlink {target} from {field} of {section_tipo}/{section_id}": (
            "Desenlaza {target} de {field} de {section_tipo}/{section_id}"
        ),
        "Find or create in {section_tipo}: {match}": "Encuentra o crea en {section_tipo}: {match}",
        "Attach {path} to {field} of {section_tipo}/{section_id}": (
            "Adjunta {path} a {field} de {section_tipo}/{section_id}"
        ),
        "Search records in {section_tipo}": "Busca registros en {section_tipo}",
        "Search records in {section_tipo} with {count} filters": (
            "Busca registros en {section_tipo} con {count} filtros"
        ),
        "Search records in {section_tipo} with 1 filter": (
            "Busca registros en {section_tipo} con 1 filtro"
        ),
        "Count records in {section_tipo}": "Cuenta los registros de {section_tipo}",
        "Count records in {section_tipo} with {count} filters": (
            "Cuenta los registros de {section_tipo} con {count} filtros"
        ),
        "Count records in {section_tipo} with 1 filter": (
            "Cuenta los registros de {section_tipo} con 1 filtro"
        ),
    },
}


def summary_template(template: str, lang: str) -> str:
    """``template`` (English) in ``lang`` when the table has it, else as it is."""
    return SUMMARY_WORDS.get(lang, {}).get(template, template)
