"""The CLI's own words for a person, in Catalan, Spanish or English: headings, counts, notes.

The language is the one the desktop app chooses (:func:`cli_language`): ``ARXIU_LANG``, else
the ``language`` of the settings file, else the system's (``LC_ALL``, ``LC_MESSAGES``,
``LANG``), else English. Only what a person reads changes: ``--json`` output, record labels
from the archive, commands and codes stay as they are.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from app.core import paths
from app.core.i18n_tables import load_table

UI_LANGS = {"ca": "lg-cat", "es": "lg-spa", "en": "lg-eng"}
"""The languages the CLI speaks, and the archive language of each (labels, titles)."""


@dataclass(frozen=True)
class CliWords:
    """Every sentence and heading the CLI prints for a person, in one language."""

    records_for: str
    """``{count}`` records for ``{query}`` (more than one)."""
    record_for: str
    no_records_for: str
    shown_of: str
    """``{shown}`` of ``{found}``: the records listed of those found, when filtered."""
    no_hits: str
    citations: str
    unverified_citation: str
    unverified_count: str
    vouches: str
    claims: str
    """``{checked}`` claims checked, ``{bad}`` not in the cited records (``{mark}``)."""
    composed: str
    archive: str
    schema: str
    schema_known: str
    schema_shared: str
    records: str
    links_media: str
    writes: str
    on: str
    off: str
    restricted: str
    writable: str
    section_records: str
    more: str
    linked_from: str
    via: str
    indexed: str
    worker_bar: str
    """The progress label of ``arxiu index --worker``."""
    worker_embedded: str
    """``{vectors}`` texts embedded in ``{seconds}`` s (``{rate}`` a second), ``{batches}``."""
    thousands: str
    """The thousands separator of the numbers in the import summary."""
    decimal: str
    """The decimal mark of the seconds in the import summary."""
    imported: str
    """The import summary's first line: ``{kind}`` from ``{path}``."""
    import_into: str
    import_records: str
    import_deleted: str
    import_sections: str
    import_links: str
    import_unresolved: str
    import_media: str
    import_skipped: str
    import_line: str
    """Where a skip is when it names no file: ``line {line}``."""
    import_more: str


ENGLISH = CliWords(
    records_for='{count} records for "{query}"',
    record_for='{count} record for "{query}"',
    no_records_for='no records for "{query}"',
    shown_of="{shown} of {found}",
    no_hits="no hits",
    citations="Citations:",
    unverified_citation="unverified: no tool in this run returned it",
    unverified_count="{bad} of {total} citations are unverified.",
    vouches="(✓ vouches for the record, not for the sentence that cites it.)",
    claims="Claims: {checked} checked, {bad} not in the cited records ({mark}):",
    composed="(composed from the records: the answer holds no model prose)",
    archive="Archive",
    schema="Schema",
    schema_known="{version} (this Arxiu knows {known})",
    schema_shared="shared, on PostgreSQL (database {database})",
    records="Records",
    links_media="links {links:,}   media {media:,}",
    writes="Writes",
    on="on",
    off="off",
    restricted="restricted",
    writable="writable",
    section_records="{label} ({tipo}): {total} records",
    more="… {count} more (use --offset)",
    linked_from="Linked from",
    via="via",
    indexed="{chunks} chunks (embedded: {figures}); {done} items indexed now.",
    worker_bar="embedding",
    worker_embedded=(
        "{vectors} texts embedded in {seconds:.1f} s ({rate:.1f} a second), {batches} batches; "
        "per model:"
    ),
    thousands=",",
    decimal=".",
    imported="Imported {kind} from {path}",
    import_into="  into      {archive} in {seconds} s",
    import_records=(
        "  records   {records} ({created} created, {updated} updated, {unchanged} unchanged) "
        "from {read} lines"
    ),
    import_deleted="  deleted   {deleted} (withdrawn at the source)",
    import_sections="  sections  {sections}",
    import_links="  links     {links}{unresolved}",
    import_unresolved=" ({count} unresolved: {top}{more})",
    import_media="  media     {media} attached, {missing} not found",
    import_skipped="  skipped   {count}",
    import_line="line {line}",
    import_more="    ... and {count} more (see --json)",
)

CLI_WORDS: dict[str, CliWords] = {
    "en": ENGLISH,
    "ca": CliWords(
        records_for="{count} registres per a «{query}»",
        record_for="{count} registre per a «{query}»",
        no_records_for="cap registre per a «{query}»",
        shown_of="{shown} de {found}",
        no_hits="cap resultat",
        citations="Cites:",
        unverified_citation="sense verificar: cap eina d'aquesta execució no l'ha retornat",
        unverified_count="{bad} de {total} cites no estan verificades.",
        vouches="(✓ respon del registre, no pas de la frase que el cita.)",
        claims="Afirmacions: {checked} comprovades, {bad} no són als registres citats ({mark}):",
        composed="(compost a partir dels registres: la resposta no conté prosa del model)",
        archive="Arxiu",
        schema="Esquema",
        schema_known="{version} (aquest Arxiu en coneix {known})",
        schema_shared="compartit, a PostgreSQL (base de dades {database})",
        records="Registres",
        links_media="enllaços {links:,}   mitjans {media:,}",
        writes="Escriptura",
        on="activada",
        off="desactivada",
        restricted="restringida",
        writable="editable",
        section_records="{label} ({tipo}): {total} registres",
        more="… {count} més (useu --offset)",
        linked_from="Enllaçat des de",
        via="mitjançant",
        indexed="{chunks} fragments (incrustats: {figures}); {done} elements indexats ara.",
        worker_bar="incrustant",
        worker_embedded=(
            "{vectors} textos incrustats en {seconds:.1f} s ({rate:.1f} per segon), "
            "{batches} lots; per model:"
        ),
        thousands=".",
        decimal=",",
        imported="S'ha importat {kind} des de {path}",
        import_into="  arxiu       {archive} en {seconds} s",
        import_records=(
            "  registres   {records} ({created} nous, {updated} actualitzats, "
            "{unchanged} sense canvis) de {read} línies"
        ),
        import_deleted="  suprimits   {deleted} (retirats a l'origen)",
        import_sections="  seccions    {sections}",
        import_links="  enllaços    {links}{unresolved}",
        import_unresolved=" ({count} sense resoldre: {top}{more})",
        import_media="  multimèdia  {media} adjuntats, {missing} no trobats",
        import_skipped="  omesos      {count}",
        import_line="línia {line}",
        import_more="    … i {count} més (vegeu --json)",
    ),
    "es": CliWords(
        records_for="{count} registros para «{query}»",
        record_for="{count} registro para «{query}»",
        no_records_for="ningún registro para «{query}»",
        shown_of="{shown} de {found}",
        no_hits="ningún resultado",
        citations="Citas:",
        unverified_citation="sin verificar: ninguna herramienta de esta ejecución lo devolvió",
        unverified_count="{bad} de {total} citas no están verificadas.",
        vouches="(✓ responde del registro, no de la frase que lo cita.)",
        claims=(
            "Afirmaciones: {checked} comprobadas, {bad} no están en los registros citados ({mark}):"
        ),
        composed="(compuesto a partir de los registros: la respuesta no contiene prosa del modelo)",
        archive="Archivo",
        schema="Esquema",
        schema_known="{version} (este Arxiu conoce {known})",
        schema_shared="compartido, en PostgreSQL (base de datos {database})",
        records="Registros",
        links_media="enlaces {links:,}   medios {media:,}",
        writes="Escritura",
        on="activada",
        off="desactivada",
        restricted="restringida",
        writable="editable",
        section_records="{label} ({tipo}): {total} registros",
        more="… {count} más (use --offset)",
        linked_from="Enlazado desde",
        via="mediante",
        indexed="{chunks} fragmentos (incrustados: {figures}); {done} elementos indexados ahora.",
        worker_bar="incrustando",
        worker_embedded=(
            "{vectors} textos incrustados en {seconds:.1f} s ({rate:.1f} por segundo), "
            "{batches} lotes; por modelo:"
        ),
        thousands=".",
        decimal=",",
        imported="Se ha importado {kind} desde {path}",
        import_into="  archivo     {archive} en {seconds} s",
        import_records=(
            "  registros   {records} ({created} nuevos, {updated} actualizados, "
            "{unchanged} sin cambios) de {read} líneas"
        ),
        import_deleted="  eliminados  {deleted} (retirados en el origen)",
        import_sections="  secciones   {sections}",
        import_links="  enlaces     {links}{unresolved}",
        import_unresolved=" ({count} sin resolver: {top}{more})",
        import_media="  multimedia  {media} adjuntos, {missing} no encontrados",
        import_skipped="  omitidos    {count}",
        import_line="línea {line}",
        import_more="    … y {count} más (véase --json)",
    ),
}
"""The CLI's words by language (``ca``, ``es``, ``en``)."""


def cli_language() -> str:
    """``ca``, ``es`` or ``en``: ``ARXIU_LANG``, else the settings' ``language``, else the
    system's, else English (the choice the desktop app makes)."""
    chosen = os.environ.get("ARXIU_LANG")
    if chosen in CLI_WORDS:
        return str(chosen)
    setting = _setting_language()
    if setting in CLI_WORDS:
        return str(setting)
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(name)
        if value:
            system = value.split("_")[0].split(".")[0].lower()
            return system if system in CLI_WORDS else "en"
    return "en"


def _setting_language() -> str | None:
    try:
        data = json.loads(paths.settings_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = data.get("language") if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


def words() -> CliWords:
    """The CLI's words in the chosen language (:func:`cli_language`)."""
    return CLI_WORDS[cli_language()]


def number(value: int) -> str:
    """``value`` with the chosen language's thousands separator (``72,736``, ``72.736``)."""
    return f"{value:,}".replace(",", words().thousands)


def seconds(value: float) -> str:
    """``value`` seconds to a tenth, with the chosen language's decimal mark (``1.5``, ``1,5``)."""
    return f"{value:.1f}".replace(".", words().decimal)


def table() -> dict[str, str]:
    """The translation table of the chosen language (:mod:`app.core.i18n_tables`; empty for
    English): what the CLI says an import's skips and the labels of error codes with."""
    return load_table(cli_language())


def label_language() -> str:
    """The archive language of the chosen language (``lg-cat``, ``lg-spa``, ``lg-eng``)."""
    return UI_LANGS[cli_language()]


def count_heading(query: str, shown: int, found: int) -> str:
    """``3 records for "…"`` (``2 of 3`` when filtered; ``no records`` when none found)."""
    w = words()
    if not found:
        return w.no_records_for.format(query=query)
    count = w.shown_of.format(shown=shown, found=found) if shown != found else str(found)
    template = w.record_for if found == 1 else w.records_for
    return template.format(count=count, query=query)
