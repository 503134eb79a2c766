"""The CLI's own words for a person, in Catalan, Spanish or English: headings, counts, notes.

The language is the one the desktop app chooses (:func:`cli_language`): ``ARXIU_LANG``, else
the ``language`` of the settings file, else the system's (``LC_ALL``, ``LC_MESSAGES``,
``LANG``), else English. Only what a person reads changes: ``--json`` output, record labels
from the archive, commands and codes stay as they are. A number is written with the separators
of the language's translation table (``number.thousands`` and ``number.decimal``:
:class:`app.core.phrases.Numbers`), the same the core's phrases are said with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from app.commands.plan_words import PLAN_WORDS, PlanWords
from app.commands.setup_words import (
    MODEL_WORDS,
    SERVE_WORDS,
    USER_WORDS,
    ModelWords,
    ServeWords,
    UserWords,
)
from app.core.chosen_language import UI_LANGS, chosen_language
from app.core.counted import Counted
from app.core.error_labels import labelled
from app.core.i18n_tables import load_table
from app.core.phrases import Numbers, Translations


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
    unverified_count: Counted
    """``{n}`` of ``{total}`` citations unverified (more than one citation)."""
    unverified_only: str
    """The one citation of an answer is unverified."""
    vouches: str
    claims: str
    """The claims line: ``{checked}`` and ``{bad}`` said by the two counts below (``{mark}``)."""
    claims_checked: Counted
    claims_missing: Counted
    """The claims not in the cited records."""
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
    switched_on: str
    """What ``arxiu archive set write_allowed true`` says after ``write_allowed = true``, in
    parentheses (the key and its value stay as they are)."""
    switched_off: str
    """The same of ``write_allowed false``."""
    section_records: Counted
    """A section's heading in ``records list``: ``{label} ({tipo})`` and its records."""
    more: str
    linked_from: str
    via: str
    contents: str
    """``records show``'s heading over a unit's children, in order (the record view's)."""
    indexed: str
    """What ``arxiu index`` did: ``{chunks}`` and ``{done}`` said by the two counts below, and
    the ``{figures}`` embedded."""
    indexed_chunks: Counted
    indexed_items: Counted
    indexing_first: Counted
    """``arxiu ask`` first indexes what waits (records to chunk, texts to embed)."""
    worker_bar: str
    """The progress label of ``arxiu index --worker``."""
    indexing_bar: str
    """The progress label of ``arxiu search --wait`` and ``arxiu eval retrieval``."""
    import_bar: str
    """The progress label of ``arxiu import`` (``{kind}``, as typed)."""
    exact: str
    """After a record's title in ``arxiu search``: its name matched the query exactly."""
    within: str
    """Under a record's title in ``arxiu search``: the top of its hierarchy (``{top}``)."""
    worker_embedded: str
    """``{vectors}`` in ``{seconds}`` s (``{rate}`` a second), ``{batches}``: the counts below."""
    worker_texts: Counted
    worker_batches: Counted
    imported: str
    """The import summary's first line: ``{kind}`` from ``{path}``."""
    import_into: str
    import_records: str
    """The records line: ``{records}``, then ``{created}``, ``{updated}``, ``{unchanged}`` and
    ``{read}`` said by the counts below."""
    import_created: Counted
    import_updated: Counted
    import_unchanged: Counted
    import_read: Counted
    """The lines read, with the preposition that leads to them (``from 3 lines``)."""
    import_read_rows: Counted
    """The same of a table's rows (CSV, XLSX)."""
    import_read_records: Counted
    """The same of the records of an XML or JSON file or a harvest (EAD components, EAC-CPF
    and Dublin Core records, OHMS interviews)."""
    import_read_files: Counted
    """The same of a folder's files."""
    import_deleted: Counted
    import_named: Counted
    """Of the records, those for the persons, places and subjects the records name."""
    import_sections: str
    import_links: str
    import_unresolved: str
    import_media: str
    """The media line: ``{media}`` and ``{missing}`` said by the two counts below."""
    import_attached: Counted
    import_missing: Counted
    import_linked: Counted
    """Digital objects recorded by their address (EAD ``dao``), not copied."""
    import_skipped: str
    import_line: str
    """Where a skip is when it names no file: ``line {line}``."""
    import_more: str
    exported: Counted
    """``arxiu export``'s first line: the records, as ``{format}`` to ``{path}``."""
    export_left_out: Counted
    export_included: Counted
    interrupted: str
    """What the CLI says when Ctrl+C stops a command."""
    bug: str
    """A bug ended the command: ``{name}``, the exception's class."""
    hint: str
    """The hint line of a coded error (``{hint}``, as the core wrote it)."""
    cancelled: str
    """``arxiu ask --write`` when the person does not type ``yes``."""
    preview_tables_only: str
    """``arxiu import --preview`` of a kind that is not a table."""
    thinking: str
    """``arxiu ask`` while the model thinks."""
    egress_local: str
    egress_external: str
    """The model line's badge: where the question goes (the model's id stays as it is)."""
    mode_read: str
    mode_write: str
    """The model line's mode (the wire's ``read`` and ``write``)."""
    tool_refused: str
    """A tool call the run refused, with its ``{code}``."""
    password_for: str
    """``arxiu ask --server``'s prompt for the password of ``{name}``."""
    index_incomplete: str
    """``arxiu search`` before the index is complete: each model's ``{figures}``."""
    copied: str
    """``arxiu archive copy``'s first line: ``{source}`` and ``{destination}`` as shown."""
    copy_resumed: str
    """The same when the copy resumed one that was interrupted."""
    copy_row: str
    """A table of the copy: its ``{table}`` name, the rows in ``{total}`` and ``{copied}`` by
    this run (both written with the language's separators)."""
    checksum_all: str
    """``arxiu archive checksum``: the label of the last line, the digest of all the tables."""
    no_rights: str
    """``arxiu archive grant|revoke``: a role left with no right (the rights are said with
    :class:`~app.commands.setup_words.UserWords`' ``read``, ``restricted`` and ``write``)."""
    mcp_started: str
    """``arxiu mcp``'s start line on stderr: ``{count}`` tools, ``{archive}`` and what leaves,
    ``{shared}``: one of the two below."""
    mcp_content: str
    mcp_structure: str
    plans: PlanWords
    """``arxiu ask --write``'s confirm card and apply report (:mod:`app.commands.plan_words`)."""
    models: ModelWords
    """``arxiu models`` and ``models discover`` (:mod:`app.commands.setup_words`)."""
    users: UserWords
    serve: ServeWords


ENGLISH = CliWords(
    records_for='{count} records for "{query}"',
    record_for='{count} record for "{query}"',
    no_records_for='no records for "{query}"',
    shown_of="{shown} of {found}",
    no_hits="no hits",
    citations="Citations:",
    unverified_citation="unverified: no tool in this run returned it",
    unverified_count=Counted(
        "1 of {total} citations is unverified.", "{n} of {total} citations are unverified."
    ),
    unverified_only="The citation is unverified.",
    vouches="(✓ vouches for the record, not for the sentence that cites it.)",
    claims="Claims: {checked}, {bad} ({mark}):",
    claims_checked=Counted("1 checked", "{n} checked"),
    claims_missing=Counted("1 not in the cited records", "{n} not in the cited records"),
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
    switched_on="on: the assistant may propose changes",
    switched_off="off: nothing can be written",
    section_records=Counted("{label} ({tipo}): 1 record", "{label} ({tipo}): {n} records"),
    more="… {count} more (use --offset)",
    linked_from="Linked from",
    via="via",
    contents="Contents",
    indexed="{chunks} (embedded: {figures}); {done}.",
    indexed_chunks=Counted("1 chunk", "{n} chunks"),
    indexed_items=Counted("1 item indexed now", "{n} items indexed now"),
    indexing_first=Counted("Indexing 1 item first…", "Indexing {n} items first…"),
    worker_bar="embedding",
    indexing_bar="indexing",
    import_bar="import {kind}",
    exact="(exact)",
    within="in {top}",
    worker_embedded="{vectors} in {seconds:,.1f} s ({rate:,.1f} a second), {batches}; per model:",
    worker_texts=Counted("1 text embedded", "{n} texts embedded"),
    worker_batches=Counted("1 batch", "{n} batches"),
    imported="Imported {kind} from {path}",
    import_into="  into      {archive} in {seconds} s",
    import_records="  records   {records} ({created}, {updated}, {unchanged}) {read}",
    import_created=Counted("1 created", "{n} created"),
    import_updated=Counted("1 updated", "{n} updated"),
    import_unchanged=Counted("1 unchanged", "{n} unchanged"),
    import_read=Counted("from 1 line", "from {n} lines"),
    import_read_rows=Counted("from 1 row", "from {n} rows"),
    import_read_records=Counted("from 1 record read", "from {n} records read"),
    import_read_files=Counted("from 1 file", "from {n} files"),
    import_deleted=Counted(
        "  deleted   1 (withdrawn at the source)", "  deleted   {n} (withdrawn at the source)"
    ),
    import_named=Counted(
        "  named     1 of them for a person, place or subject the records name",
        "  named     {n} of them for the persons, places and subjects the records name",
    ),
    import_sections="  sections  {sections}",
    import_links="  links     {links}{unresolved}",
    import_unresolved=" ({count} unresolved: {top}{more})",
    import_media="  media     {media}, {missing}",
    import_attached=Counted("1 attached", "{n} attached"),
    import_missing=Counted("1 not found", "{n} not found"),
    import_linked=Counted(
        "  media     1 digital object linked by its address (nothing downloaded)",
        "  media     {n} digital objects linked by their addresses (nothing downloaded)",
    ),
    import_skipped="  skipped   {count}",
    import_line="line {line}",
    import_more="    ... and {count} more (see --json)",
    exported=Counted(
        "Exported 1 record as {format} to {path}", "Exported {n} records as {format} to {path}"
    ),
    export_left_out=Counted("  1 restricted record left out", "  {n} restricted records left out"),
    export_included=Counted(
        "  1 restricted record included (said at the top)",
        "  {n} restricted records included (said at the top)",
    ),
    interrupted="interrupted",
    bug="arxiu hit a bug ({name}); please report it.",
    hint="hint: {hint}",
    cancelled="Cancelled: nothing was written.",
    preview_tables_only="error: --preview shows how a table (KIND csv) would import",
    thinking="(thinking…)",
    egress_local="local / private",
    egress_external="EXTERNAL",
    mode_read="read",
    mode_write="write",
    tool_refused="refused: {code}",
    password_for="Password for {name}: ",
    index_incomplete=(
        "note: the semantic index is incomplete (chunks embedded: {figures}); these hits come "
        "from what is indexed so far. Run `arxiu index` or search with --wait."
    ),
    copied="Copied {source} -> {destination}",
    copy_resumed="Resumed {source} -> {destination}",
    copy_row="  {table:<18} {total:>9}  ({copied} this run)",
    checksum_all="all",
    no_rights="no rights",
    mcp_started=(
        "arxiu mcp: {count} read-only tools over {archive} ({shared} only leaves) on stdio"
    ),
    mcp_content="record content (never restricted)",
    mcp_structure="structure",
    plans=PLAN_WORDS["en"],
    models=MODEL_WORDS["en"],
    users=USER_WORDS["en"],
    serve=SERVE_WORDS["en"],
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
        unverified_count=Counted(
            "1 de {total} cites no està verificada.", "{n} de {total} cites no estan verificades."
        ),
        unverified_only="La cita no està verificada.",
        vouches="(✓ respon del registre, no pas de la frase que el cita.)",
        claims="Afirmacions: {checked}, {bad} ({mark}):",
        claims_checked=Counted("1 comprovada", "{n} comprovades"),
        claims_missing=Counted("1 no és als registres citats", "{n} no són als registres citats"),
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
        switched_on="activada: l'assistent pot proposar canvis",
        switched_off="desactivada: no s'hi pot escriure res",
        section_records=Counted("{label} ({tipo}): 1 registre", "{label} ({tipo}): {n} registres"),
        more="… {count} més (useu --offset)",
        linked_from="Enllaçat des de",
        via="mitjançant",
        contents="Contingut",
        indexed="{chunks} (incrustats: {figures}); {done}.",
        indexed_chunks=Counted("1 fragment", "{n} fragments"),
        indexed_items=Counted("1 element indexat ara", "{n} elements indexats ara"),
        indexing_first=Counted("Primer s'indexa 1 element…", "Primer s'indexen {n} elements…"),
        worker_bar="incrustant",
        indexing_bar="indexant",
        import_bar="importació {kind}",
        exact="(coincidència exacta)",
        within="dins de {top}",
        worker_embedded=(
            "{vectors} en {seconds:,.1f} s ({rate:,.1f} per segon), {batches}; per model:"
        ),
        worker_texts=Counted("1 text incrustat", "{n} textos incrustats"),
        worker_batches=Counted("1 lot", "{n} lots"),
        imported="S'ha importat {kind} des de {path}",
        import_into="  arxiu       {archive} en {seconds} s",
        import_records="  registres   {records} ({created}, {updated}, {unchanged}) {read}",
        import_created=Counted("1 nou", "{n} nous"),
        import_updated=Counted("1 actualitzat", "{n} actualitzats"),
        import_unchanged=Counted("1 sense canvis", "{n} sense canvis"),
        import_read=Counted("d'1 línia", "de {n} línies"),
        import_read_rows=Counted("d'1 fila", "de {n} files"),
        import_read_records=Counted("d'1 registre llegit", "de {n} registres llegits"),
        import_read_files=Counted("d'1 fitxer", "de {n} fitxers"),
        import_deleted=Counted(
            "  suprimits   1 (retirat a l'origen)", "  suprimits   {n} (retirats a l'origen)"
        ),
        import_named=Counted(
            "  esmentats   1 d'ells, d'una persona, un lloc o una matèria que els registres "
            "esmenten",
            "  esmentats   {n} d'ells, de les persones, llocs i matèries que els registres "
            "esmenten",
        ),
        import_sections="  seccions    {sections}",
        import_links="  enllaços    {links}{unresolved}",
        import_unresolved=" ({count} sense resoldre: {top}{more})",
        import_media="  multimèdia  {media}, {missing}",
        import_attached=Counted("1 adjuntat", "{n} adjuntats"),
        import_missing=Counted("1 no trobat", "{n} no trobats"),
        import_linked=Counted(
            "  multimèdia  1 objecte digital enllaçat per la seva adreça (no se'n baixa res)",
            "  multimèdia  {n} objectes digitals enllaçats per la seva adreça (no se'n baixa res)",
        ),
        import_skipped="  omesos      {count}",
        import_line="línia {line}",
        import_more="    … i {count} més (vegeu --json)",
        exported=Counted(
            "S'ha exportat 1 registre com a {format} a {path}",
            "S'han exportat {n} registres com a {format} a {path}",
        ),
        export_left_out=Counted(
            "  1 registre restringit exclòs", "  {n} registres restringits exclosos"
        ),
        export_included=Counted(
            "  1 registre restringit inclòs (ho diu al començament)",
            "  {n} registres restringits inclosos (ho diu al començament)",
        ),
        interrupted="interromput",
        bug="l'Arxiu ha trobat un error de programació ({name}); si us plau, notifiqueu-lo.",
        hint="suggeriment: {hint}",
        cancelled="Cancel·lat: no s'ha escrit res.",
        preview_tables_only="error: --preview mostra com s'importaria una taula (KIND csv)",
        thinking="(pensant…)",
        egress_local="local / privat",
        egress_external="EXTERN",
        mode_read="lectura",
        mode_write="escriptura",
        tool_refused="refusat: {code}",
        password_for="Contrasenya de l'usuari {name}: ",
        index_incomplete=(
            "nota: l'índex semàntic és incomplet (fragments incrustats: {figures}); aquests "
            "resultats surten del que s'ha indexat fins ara. Executeu `arxiu index` o cerqueu "
            "amb --wait."
        ),
        copied="S'ha copiat {source} -> {destination}",
        copy_resumed="S'ha reprès la còpia {source} -> {destination}",
        copy_row="  {table:<18} {total:>9}  ({copied} en aquesta execució)",
        checksum_all="total",
        no_rights="cap dret",
        mcp_started=(
            "arxiu mcp: {count} eines de només lectura sobre {archive} (només en surt {shared}) "
            "per stdio"
        ),
        mcp_content="el contingut dels registres (mai els restringits)",
        mcp_structure="l'estructura",
        plans=PLAN_WORDS["ca"],
        models=MODEL_WORDS["ca"],
        users=USER_WORDS["ca"],
        serve=SERVE_WORDS["ca"],
    ),
    "es": CliWords(
        records_for="{count} registros para «{query}»",
        record_for="{count} registro para «{query}»",
        no_records_for="ningún registro para «{query}»",
        shown_of="{shown} de {found}",
        no_hits="ningún resultado",
        citations="Citas:",
        unverified_citation="sin verificar: ninguna herramienta de esta ejecución lo devolvió",
        unverified_count=Counted(
            "1 de {total} citas no está verificada.", "{n} de {total} citas no están verificadas."
        ),
        unverified_only="La cita no está verificada.",
        vouches="(✓ responde del registro, no de la frase que lo cita.)",
        claims="Afirmaciones: {checked}, {bad} ({mark}):",
        claims_checked=Counted("1 comprobada", "{n} comprobadas"),
        claims_missing=Counted(
            "1 no está en los registros citados", "{n} no están en los registros citados"
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
        switched_on="activada: el asistente puede proponer cambios",
        switched_off="desactivada: no se puede escribir nada",
        section_records=Counted("{label} ({tipo}): 1 registro", "{label} ({tipo}): {n} registros"),
        more="… {count} más (use --offset)",
        linked_from="Enlazado desde",
        via="mediante",
        contents="Contenido",
        indexed="{chunks} (incrustados: {figures}); {done}.",
        indexed_chunks=Counted("1 fragmento", "{n} fragmentos"),
        indexed_items=Counted("1 elemento indexado ahora", "{n} elementos indexados ahora"),
        indexing_first=Counted(
            "Primero se indexa 1 elemento…", "Primero se indexan {n} elementos…"
        ),
        worker_bar="incrustando",
        indexing_bar="indexando",
        import_bar="importación {kind}",
        exact="(coincidencia exacta)",
        within="dentro de {top}",
        worker_embedded=(
            "{vectors} en {seconds:,.1f} s ({rate:,.1f} por segundo), {batches}; por modelo:"
        ),
        worker_texts=Counted("1 texto incrustado", "{n} textos incrustados"),
        worker_batches=Counted("1 lote", "{n} lotes"),
        imported="Se ha importado {kind} desde {path}",
        import_into="  archivo     {archive} en {seconds} s",
        import_records="  registros   {records} ({created}, {updated}, {unchanged}) {read}",
        import_created=Counted("1 nuevo", "{n} nuevos"),
        import_updated=Counted("1 actualizado", "{n} actualizados"),
        import_unchanged=Counted("1 sin cambios", "{n} sin cambios"),
        import_read=Counted("de 1 línea", "de {n} líneas"),
        import_read_rows=Counted("de 1 fila", "de {n} filas"),
        import_read_records=Counted("de 1 registro leído", "de {n} registros leídos"),
        import_read_files=Counted("de 1 archivo", "de {n} archivos"),
        import_deleted=Counted(
            "  eliminados  1 (retirado en el origen)", "  eliminados  {n} (retirados en el origen)"
        ),
        import_named=Counted(
            "  mencionados 1 de ellos, de una persona, un lugar o una materia que los registros "
            "mencionan",
            "  mencionados {n} de ellos, de las personas, lugares y materias que los registros "
            "mencionan",
        ),
        import_sections="  secciones   {sections}",
        import_links="  enlaces     {links}{unresolved}",
        import_unresolved=" ({count} sin resolver: {top}{more})",
        import_media="  multimedia  {media}, {missing}",
        import_attached=Counted("1 adjunto", "{n} adjuntos"),
        import_missing=Counted("1 no encontrado", "{n} no encontrados"),
        import_linked=Counted(
            "  multimedia  1 objeto digital enlazado por su dirección (no se descarga nada)",
            "  multimedia  {n} objetos digitales enlazados por su dirección (no se descarga nada)",
        ),
        import_skipped="  omitidos    {count}",
        import_line="línea {line}",
        import_more="    … y {count} más (véase --json)",
        exported=Counted(
            "Se ha exportado 1 registro como {format} en {path}",
            "Se han exportado {n} registros como {format} en {path}",
        ),
        export_left_out=Counted(
            "  1 registro restringido excluido", "  {n} registros restringidos excluidos"
        ),
        export_included=Counted(
            "  1 registro restringido incluido (lo dice al principio)",
            "  {n} registros restringidos incluidos (lo dice al principio)",
        ),
        interrupted="interrumpido",
        bug="Arxiu ha encontrado un error de programación ({name}); por favor, notifíquelo.",
        hint="sugerencia: {hint}",
        cancelled="Cancelado: no se ha escrito nada.",
        preview_tables_only="error: --preview muestra cómo se importaría una tabla (KIND csv)",
        thinking="(pensando…)",
        egress_local="local / privado",
        egress_external="EXTERNO",
        mode_read="lectura",
        mode_write="escritura",
        tool_refused="rechazado: {code}",
        password_for="Contraseña de {name}: ",
        index_incomplete=(
            "nota: el índice semántico está incompleto (fragmentos incrustados: {figures}); "
            "estos resultados proceden de lo indexado hasta ahora. Ejecute `arxiu index` o "
            "busque con --wait."
        ),
        copied="Se ha copiado {source} -> {destination}",
        copy_resumed="Se ha reanudado la copia {source} -> {destination}",
        copy_row="  {table:<18} {total:>9}  ({copied} en esta ejecución)",
        checksum_all="total",
        no_rights="ningún derecho",
        mcp_started=(
            "arxiu mcp: {count} herramientas de solo lectura sobre {archive} (solo sale "
            "{shared}) por stdio"
        ),
        mcp_content="el contenido de los registros (nunca los restringidos)",
        mcp_structure="la estructura",
        plans=PLAN_WORDS["es"],
        models=MODEL_WORDS["es"],
        users=USER_WORDS["es"],
        serve=SERVE_WORDS["es"],
    ),
}
"""The CLI's words by language (``ca``, ``es``, ``en``)."""


def cli_language() -> str:
    """``ca``, ``es`` or ``en``: ``ARXIU_LANG``, else the settings' ``language``, else the
    system's, else English (the choice the desktop app makes; :mod:`app.core.chosen_language`)."""
    return chosen_language()


def words() -> CliWords:
    """The CLI's words in the chosen language (:func:`cli_language`)."""
    return CLI_WORDS[cli_language()]


def said(template: str, /, **values: object) -> str:
    """``template`` filled in with ``values``, each number written with the chosen language's
    separators (``{links:,}``: ``72,736`` or ``72.736``; ``{seconds:.1f}``: ``1.5`` or
    ``1,5``); text as it is."""
    return Numbers(table()).format(template, **values)


def number(value: int) -> str:
    """``value`` with the chosen language's thousands separator (``72,736``, ``72.736``)."""
    return said("{value:,}", value=value)


def seconds(value: float) -> str:
    """``value`` seconds to a tenth, with the chosen language's decimal mark (``1.5``, ``1,5``)."""
    return said("{value:.1f}", value=value)


def score(value: float) -> str:
    """A search score to three decimals, with the chosen language's decimal mark (``1.300``,
    ``1,300``: a Catalan reader takes ``1.300`` for a thousand three hundred)."""
    return said("{value:.3f}", value=value)


def table() -> dict[str, str]:
    """The translation table of the chosen language (:mod:`app.core.i18n_tables`; empty for
    English): what the CLI says an import's skips and the labels of error codes with."""
    return load_table(cli_language())


class CodedError(Protocol):
    """What :func:`error_lines` says of an error: an :class:`~app.core.errors.ArxiuError`
    raised here, or the :class:`~app.core.agent.events.ErrorEvent` a run streamed."""

    @property
    def code(self) -> str: ...
    @property
    def message(self) -> str: ...
    def message_in(self, table: Translations, /) -> str: ...
    def hint_in(self, table: Translations, /) -> str | None: ...


def error_lines(error: CodedError) -> list[str]:
    """A coded error for a person, as the CLI prints it on stderr: ``error [code]:`` and the
    message, then the hint after ``hint:``, in the chosen language where the tables hold them
    (the code stays as it is). A message the tables do not hold (an OS's words, an older
    server's) is led by the code's label in the chosen language (Catalan and Spanish;
    :mod:`app.core.error_labels`), which a message in the language would only repeat; in
    English the message says it all and stands alone."""
    words_table = table()
    text = labelled(error.code, error.message_in(words_table), error.message, words_table)
    lines = [f"error [{error.code}]: {text}"]
    hint = error.hint_in(words_table)
    if hint:
        lines.append(words().hint.format(hint=hint))
    return lines


def counted(words: Counted, count: int, **params: object) -> str:
    """``count`` in ``words`` (the form that agrees with it), written with the chosen
    language's thousands separator (:func:`number`), and ``params`` filled in (their numbers
    with the language's separators too: :func:`said`)."""
    return said(words.template(count), n=number(count), **params)


def label_language() -> str:
    """The archive language of the chosen language (``lg-cat``, ``lg-spa``, ``lg-eng``)."""
    return UI_LANGS[cli_language()]


def labels_for(as_json: bool) -> str:
    """The language labels are given in: English for ``--json`` (the same output in every
    language), else the CLI's (:func:`label_language`)."""
    return "lg-eng" if as_json else label_language()


def count_heading(query: str, shown: int, found: int) -> str:
    """``3 records for "…"`` (``2 of 3`` when filtered; ``no records`` when none found)."""
    w = words()
    if not found:
        return w.no_records_for.format(query=query)
    count = w.shown_of.format(shown=shown, found=found) if shown != found else str(found)
    template = w.record_for if found == 1 else w.records_for
    return template.format(count=count, query=query)
