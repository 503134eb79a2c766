"""The CLI's help in Catalan and Spanish: every ``help=``, ``description=`` and group title of
the ``arxiu`` parser, and argparse's own words (``usage:``, ``options``, its errors).

The parser is built in English (:func:`app.cli.build_parser`); :func:`localize` then replaces
each text of its tree with the chosen language's (:data:`HELP_WORDS`, keyed by the exact
English), and :func:`argparse_words` has argparse say its own words (:data:`ARGPARSE_WORDS`,
what it formats while it parses: ``usage:``, ``unrecognized arguments: %s``…) in that language
while the command line is parsed. English is the parser as it is. Commands, options, metavars
and choices are syntax and stay as they are; so do argparse's ``%(name)s`` placeholders. A text
with no translation is left in English (``tests/commands/test_help_words.py`` fails for any
help text of the tree that has none).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from app.commands.common import ARCHIVE_HELP
from app.commands.import_cmd import DATASETS_LISTED, IMPORT_HELP, STANDARDS_LISTED
from app.commands.index_cmd import MODEL_HELP
from app.commands.search_cmd import WITHIN_HELP
from app.commands.serve_cmd import DEFAULT_PORT
from app.core.archive.exporters import FORMATS
from app.core.archive.importers import KINDS

LANGS = ("ca", "es")
"""The languages the help is translated to (English is the parser's own)."""

_KINDS = ", ".join(KINDS)
_FORMATS = ", ".join(FORMATS)

HELP_WORDS: dict[str, tuple[str, str]] = {
    # argparse's texts in the tree: group titles and the help of -h and --version
    "positional arguments": ("arguments posicionals", "argumentos posicionales"),
    "options": ("opcions", "opciones"),
    "show this help message and exit": (
        "mostra aquest missatge d'ajuda i surt",
        "muestra este mensaje de ayuda y sale",
    ),
    "show program's version number and exit": (
        "mostra el número de versió del programa i surt",
        "muestra el número de versión del programa y sale",
    ),
    # arxiu
    "Arxiu: a local-first assistant for archivists. With no command it opens the desktop app.": (
        "Arxiu: un assistent per a arxivers que treballa en local. Sense cap ordre, obre "
        "l'aplicació d'escriptori.",
        "Arxiu: un asistente para archiveros que trabaja en local. Sin ninguna orden, abre la "
        "aplicación de escritorio.",
    ),
    ARCHIVE_HELP: (
        "carpeta de l'arxiu, o postgresql://USER@HOST:PORT/DATABASE per a un arxiu compartit "
        "(per defecte: l'arxiu de demostració)",
        "carpeta del archivo, o postgresql://USER@HOST:PORT/DATABASE para un archivo "
        "compartido (por defecto: el archivo de demostración)",
    ),
    "open the window, wait until idle, save a PNG, exit": (
        "obre la finestra, espera que estigui inactiva, en desa un PNG i surt",
        "abre la ventana, espera a que esté inactiva, guarda un PNG y sale",
    ),
    "with --screenshot: the state to render": (
        "amb --screenshot: l'estat que cal mostrar",
        "con --screenshot: el estado que hay que mostrar",
    ),
    "information about the archive": (
        "informació sobre l'arxiu",
        "información sobre el archivo",
    ),
    "list and show records": ("llista i mostra registres", "lista y muestra registros"),
    IMPORT_HELP: (
        f"importa registres ({STANDARDS_LISTED}; conjunts de dades de prova: {DATASETS_LISTED})",
        f"importa registros ({STANDARDS_LISTED}; conjuntos de datos de prueba: {DATASETS_LISTED})",
    ),
    f"export a section or a subtree ({_FORMATS})": (
        f"exporta una secció o una branca ({_FORMATS})",
        f"exporta una sección o una rama ({_FORMATS})",
    ),
    "bring the semantic index up to date": (
        "posa al dia l'índex semàntic",
        "pone al día el índice semántico",
    ),
    "evaluate Arxiu's components": (
        "avalua els components d'Arxiu",
        "evalúa los componentes de Arxiu",
    ),
    "search the archive by meaning and words": (
        "cerca a l'arxiu per significat i per paraules",
        "busca en el archivo por significado y por palabras",
    ),
    "list, add, remove and test chat models": (
        "llista, afegeix, suprimeix i prova models de xat",
        "lista, añade, elimina y prueba modelos de chat",
    ),
    "ask the assistant a question about the archive": (
        "pregunta a l'assistent sobre l'arxiu",
        "pregunta al asistente sobre el archivo",
    ),
    "serve the local API until stopped (Ctrl+C)": (
        "serveix l'API local fins que s'atura (Ctrl+C)",
        "sirve la API local hasta que se detiene (Ctrl+C)",
    ),
    "manage the users of the local API (arxiu serve)": (
        "gestiona els usuaris de l'API local (arxiu serve)",
        "gestiona los usuarios de la API local (arxiu serve)",
    ),
    "serve the archive's tools to an MCP client over stdio (read-only)": (
        "ofereix les eines de l'arxiu a un client MCP per stdio (només lectura)",
        "ofrece las herramientas del archivo a un cliente MCP por stdio (solo lectura)",
    ),
    # arxiu archive
    "sections, counts and schema of the archive": (
        "seccions, recomptes i esquema de l'arxiu",
        "secciones, recuentos y esquema del archivo",
    ),
    "turn an archive switch on or off": (
        "activa o desactiva una opció de l'arxiu",
        "activa o desactiva una opción del archivo",
    ),
    "print JSON": ("mostra el resultat en JSON", "muestra el resultado en JSON"),
    "write_allowed: the assistant may write": (
        "write_allowed: l'assistent pot escriure",
        "write_allowed: el asistente puede escribir",
    ),
    "true or false": ("true o false", "true o false"),
    "copy an archive between SQLite and PostgreSQL": (
        "copia un arxiu entre SQLite i PostgreSQL",
        "copia un archivo entre SQLite y PostgreSQL",
    ),
    "archive folder or postgresql:// URL": (
        "carpeta d'arxiu o URL postgresql://",
        "carpeta de archivo o URL postgresql://",
    ),
    "new archive folder or postgresql:// URL": (
        "carpeta d'arxiu nova o URL postgresql://",
        "carpeta de archivo nueva o URL postgresql://",
    ),
    "rows per batch (default 2000)": (
        "files per lot (per defecte 2000)",
        "filas por lote (por defecto 2000)",
    ),
    "digests of every table of an archive": (
        "resums criptogràfics de cada taula d'un arxiu",
        "resúmenes criptográficos de cada tabla de un archivo",
    ),
    "archive folder or URL": ("carpeta d'arxiu o URL", "carpeta de archivo o URL"),
    "make a database role an archivist of a PostgreSQL archive": (
        "converteix un rol de base de dades en arxiver d'un arxiu a PostgreSQL",
        "convierte un rol de base de datos en archivero de un archivo en PostgreSQL",
    ),
    "take an archivist's rights (all, or those named) on a PostgreSQL archive": (
        "retira els drets d'un arxiver (tots, o els que s'indiquin) sobre un arxiu a PostgreSQL",
        "retira los derechos de un archivero (todos, o los indicados) sobre un archivo en "
        "PostgreSQL",
    ),
    "an existing database role": (
        "un rol de base de dades existent",
        "un rol de base de datos existente",
    ),
    "the restricted right": (
        "el dret sobre els registres restringits",
        "el derecho sobre los registros restringidos",
    ),
    "the write right": ("el dret d'escriptura", "el derecho de escritura"),
    "postgresql:// URL": ("URL postgresql://", "URL postgresql://"),
    # arxiu records
    "list a section's records": (
        "llista els registres d'una secció",
        "lista los registros de una sección",
    ),
    "show one record with its links": (
        "mostra un registre amb els seus enllaços",
        "muestra un registro con sus enlaces",
    ),
    "preferred language (lg-cat, lg-spa...; default: the CLI's, from ARXIU_LANG)": (
        "llengua preferida (lg-cat, lg-spa...; per defecte: la de la línia d'ordres, d'ARXIU_LANG)",
        "lengua preferida (lg-cat, lg-spa...; por defecto: la de la línea de órdenes, "
        "de ARXIU_LANG)",
    ),
    # arxiu import
    "Import a dataset into the archive. Importing the same data again updates the records "
    "instead of creating them twice.": (
        "Importa un conjunt de dades a l'arxiu. Si s'importen de nou les mateixes dades, "
        "s'actualitzen els registres en lloc de crear-los dues vegades.",
        "Importa un conjunto de datos en el archivo. Si se vuelven a importar los mismos "
        "datos, se actualizan los registros en lugar de crearlos dos veces.",
    ),
    _KINDS: (_KINDS, _KINDS),
    "the dataset's folder or file (oai: the base URL)": (
        "la carpeta o el fitxer del conjunt de dades (oai: l'URL base)",
        "la carpeta o el archivo del conjunto de datos (oai: la URL base)",
    ),
    "oai: harvest only set S": (
        "oai: recull només el conjunt S",
        "oai: recolecta solo el conjunto S",
    ),
    "oai: records changed since DATE (YYYY-MM-DD; default: since the last harvest)": (
        "oai: registres canviats des de DATE (AAAA-MM-DD; per defecte: des de l'última "
        "recol·lecció)",
        "oai: registros cambiados desde DATE (AAAA-MM-DD; por defecto: desde la última "
        "recolección)",
    ),
    "oai: the metadata format: oai_dc (default), oai_ead or ead (finding aids)": (
        "oai: el format de metadades: oai_dc (per defecte), oai_ead o ead (instruments de "
        "descripció)",
        "oai: el formato de metadatos: oai_dc (por defecto), oai_ead o ead (instrumentos de "
        "descripción)",
    ),
    "csv: a JSON column mapping to apply": (
        "csv: una correspondència de columnes en JSON que s'aplica",
        "csv: una correspondencia de columnas en JSON que se aplica",
    ),
    "csv: the XLSX sheet (default: the first)": (
        "csv: el full de l'XLSX (per defecte: el primer)",
        "csv: la hoja del XLSX (por defecto: la primera)",
    ),
    "csv: match records under this source": (
        "csv: aparella els registres dins d'aquesta font",
        "csv: empareja los registros dentro de esta fuente",
    ),
    "csv: show the mapping and first rows, import nothing": (
        "csv: mostra la correspondència i les primeres files, sense importar res",
        "csv: muestra la correspondencia y las primeras filas, sin importar nada",
    ),
    "archive folder (created when missing), or postgresql://USER@HOST:PORT/DATABASE (an empty "
    "database is made an archive); default: the demo archive": (
        "carpeta de l'arxiu (es crea si no existeix), o postgresql://USER@HOST:PORT/DATABASE "
        "(una base de dades buida es converteix en arxiu); per defecte: l'arxiu de demostració",
        "carpeta del archivo (se crea si no existe), o postgresql://USER@HOST:PORT/DATABASE "
        "(una base de datos vacía se convierte en archivo); por defecto: el archivo de "
        "demostración",
    ),
    "print the summary as JSON": ("mostra el resum en JSON", "muestra el resumen en JSON"),
    # arxiu export
    "Export a section, or one record with everything under it, as an archival standard. "
    "Restricted records are left out unless --include-restricted is given.": (
        "Exporta una secció, o un registre amb tot el que en depèn, en un estàndard "
        "arxivístic. Els registres restringits queden fora tret que s'indiqui "
        "--include-restricted.",
        "Exporta una sección, o un registro con todo lo que depende de él, en un estándar "
        "archivístico. Los registros restringidos quedan fuera salvo que se indique "
        "--include-restricted.",
    ),
    _FORMATS: (_FORMATS, _FORMATS),
    "the file to write": ("el fitxer que s'escriu", "el archivo que se escribe"),
    "the section to export": ("la secció que s'exporta", "la sección que se exporta"),
    "one record (its id, or SECTION/ID) and what is under it": (
        "un registre (el seu identificador, o SECTION/ID) i el que en depèn",
        "un registro (su identificador, o SECTION/ID) y lo que depende de él",
    ),
    "include restricted records (the export then says so at its top)": (
        "inclou els registres restringits (l'exportació ho diu al començament)",
        "incluye los registros restringidos (la exportación lo dice al principio)",
    ),
    "language of headings (lg-cat, …; default: the UI's, from ARXIU_LANG)": (
        "llengua dels encapçalaments (lg-cat, …; per defecte: la de la interfície, d'ARXIU_LANG)",
        "lengua de los encabezados (lg-cat, …; por defecto: la de la interfaz, de ARXIU_LANG)",
    ),
    # arxiu index, arxiu eval
    "re-chunk every record": (
        "torna a fragmentar tots els registres",
        "vuelve a fragmentar todos los registros",
    ),
    MODEL_HELP: (
        "carpeta d'un model d'incrustacions, 'use', 'all-MiniLM-L6-v2', 'dual' o 'hashing' (per "
        "defecte: el de la configuració de l'arxiu; si no n'hi ha, MiniLM i USE multilingüe)",
        "carpeta de un modelo de incrustaciones, 'use', 'all-MiniLM-L6-v2', 'dual' o 'hashing' "
        "(por defecto: el de la configuración del archivo; si no hay ninguno, MiniLM y USE "
        "multilingüe)",
    ),
    "archive folder (with --worker: the shared archive's postgresql:// URL)": (
        "carpeta de l'arxiu (amb --worker: l'URL postgresql:// de l'arxiu compartit)",
        "carpeta del archivo (con --worker: la URL postgresql:// del archivo compartido)",
    ),
    "chunk the changed records and embed the waiting chunks of a postgresql:// archive, as "
    "one of any number of workers (resumable: a killed worker's batch is taken again)": (
        "fragmenta els registres canviats i incrusta els fragments pendents d'un arxiu "
        "postgresql://, com un qualsevol de diversos processos de treball (es pot reprendre: "
        "el lot d'un procés interromput es torna a processar)",
        "fragmenta los registros cambiados e incrusta los fragmentos pendientes de un archivo "
        "postgresql://, como uno cualquiera de varios procesos de trabajo (se puede reanudar: "
        "el lote de un proceso interrumpido se vuelve a procesar)",
    ),
    "with --worker, keep waiting for changed records and new chunks": (
        "amb --worker, continua esperant registres canviats i fragments nous",
        "con --worker, sigue esperando registros cambiados y fragmentos nuevos",
    ),
    "with --worker, chunks per transaction": (
        "amb --worker, fragments per transacció",
        "con --worker, fragmentos por transacción",
    ),
    "nDCG@10, Recall@100, MRR@10 on BEIR data": (
        "nDCG@10, Recall@100, MRR@10 amb dades BEIR",
        "nDCG@10, Recall@100, MRR@10 con datos BEIR",
    ),
    "corpus.jsonl[.gz] or its folder": (
        "corpus.jsonl[.gz] o la seva carpeta",
        "corpus.jsonl[.gz] o su carpeta",
    ),
    "queries.jsonl": ("queries.jsonl", "queries.jsonl"),
    "qrels.tsv": ("qrels.tsv", "qrels.tsv"),
    "keep (and reuse) the scratch archive": (
        "conserva (i reutilitza) l'arxiu de treball temporal",
        "conserva (y reutiliza) el archivo de trabajo temporal",
    ),
    "score a postgresql:// archive that holds the corpus imported and indexed (searched in "
    "the server) instead of a scratch archive": (
        "avalua un arxiu postgresql:// que ja conté el corpus importat i indexat (la cerca es "
        "fa al servidor) en lloc d'un arxiu temporal",
        "evalúa un archivo postgresql:// que ya contiene el corpus importado e indexado (la "
        "búsqueda se hace en el servidor) en lugar de un archivo temporal",
    ),
    # arxiu search
    "only this section": ("només aquesta secció", "solo esta sección"),
    "only SECTION/ID": ("només SECTION/ID", "solo SECTION/ID"),
    WITHIN_HELP: (
        "només SECTION/ID i tots els registres que conté (un fons i tot el que inclou)",
        "solo SECTION/ID y todos los registros que contiene (un fondo y todo lo que incluye)",
    ),
    "number of records (default 10)": (
        "nombre de registres (per defecte 10)",
        "número de registros (por defecto 10)",
    ),
    "list ranked passages, several per record": (
        "llista els fragments per ordre de rellevància, diversos per registre",
        "lista los fragmentos por orden de relevancia, varios por registro",
    ),
    "only records in LG": ("només registres en LG", "solo registros en LG"),
    "only records from this year": (
        "només registres a partir d'aquest any",
        "solo registros a partir de este año",
    ),
    "only records up to this year": (
        "només registres fins a aquest any",
        "solo registros hasta este año",
    ),
    "language of titles and sections (lg-cat...; default: the UI's, from ARXIU_LANG)": (
        "llengua dels títols i les seccions (lg-cat...; per defecte: la de la interfície, "
        "d'ARXIU_LANG)",
        "lengua de los títulos y las secciones (lg-cat...; por defecto: la de la interfaz, "
        "de ARXIU_LANG)",
    ),
    "exclude restricted material": (
        "exclou el material restringit",
        "excluye el material restringido",
    ),
    "embed what is pending first (default: search now)": (
        "primer incrusta el que està pendent (per defecte: cerca ara)",
        "primero incrusta lo pendiente (por defecto: busca ahora)",
    ),
    # arxiu models
    "the models the assistant can use": (
        "els models que pot fer servir l'assistent",
        "los modelos que puede usar el asistente",
    ),
    "print the secret-free JSON list": (
        "mostra la llista en JSON, sense secrets",
        "muestra la lista en JSON, sin secretos",
    ),
    "add (or replace) a model in the catalog": (
        "afegeix (o substitueix) un model al catàleg",
        "añade (o sustituye) un modelo en el catálogo",
    ),
    "identifier: lowercase letters, digits, _ and -": (
        "identificador: lletres minúscules, xifres, _ i -",
        "identificador: letras minúsculas, dígitos, _ y -",
    ),
    "add model N of `arxiu models discover` (or the GGUF file PATH), egress local": (
        "afegeix el model N d'`arxiu models discover` (o el fitxer GGUF PATH), com a local "
        "(privat)",
        "añade el modelo N de `arxiu models discover` (o el archivo GGUF PATH), como local "
        "(privado)",
    ),
    "with --from-discovered N": ("amb --from-discovered N", "con --from-discovered N"),
    "with N, as for discover": ("amb N, com a discover", "con N, como en discover"),
    "the provider's model name (local: optional)": (
        "el nom del model al proveïdor (local: opcional)",
        "el nombre del modelo en el proveedor (local: opcional)",
    ),
    "what the pickers show (default: the model name)": (
        "el que mostren els selectors (per defecte: el nom del model)",
        "lo que muestran los selectores (por defecto: el nombre del modelo)",
    ),
    "server base URL, e.g. http://localhost:11434/v1": (
        "URL base del servidor, p. ex. http://localhost:11434/v1",
        "URL base del servidor, p. ej. http://localhost:11434/v1",
    ),
    "privacy class": ("classe de privadesa", "clase de privacidad"),
    "environment variable holding the key (*_API_KEY)": (
        "variable d'entorn que conté la clau (*_API_KEY)",
        "variable de entorno que contiene la clave (*_API_KEY)",
    ),
    "read the key from stdin into the OS keyring": (
        "llegeix la clau de stdin i la desa al clauer del sistema",
        "lee la clave de stdin y la guarda en el llavero del sistema",
    ),
    "the model accepts images": ("el model accepta imatges", "el modelo acepta imágenes"),
    "GGUF model file (local provider)": (
        "fitxer de model GGUF (proveïdor local)",
        "archivo de modelo GGUF (proveedor local)",
    ),
    "reply length limit": (
        "límit de llargada de la resposta",
        "límite de longitud de la respuesta",
    ),
    "idle timeout in seconds": (
        "temps d'espera per inactivitat, en segons",
        "tiempo de espera por inactividad, en segundos",
    ),
    "a reasoning effort level (repeatable)": (
        "un nivell d'esforç de raonament (es pot repetir)",
        "un nivel de esfuerzo de razonamiento (se puede repetir)",
    ),
    "the model cannot plan tool calls": (
        "el model no pot planificar crides a eines",
        "el modelo no puede planificar llamadas a herramientas",
    ),
    "make it the default model": (
        "el converteix en el model per defecte",
        "lo convierte en el modelo por defecto",
    ),
    "remove a model (and its stored key)": (
        "suprimeix un model (i la seva clau desada)",
        "elimina un modelo (y su clave guardada)",
    ),
    "the model id": ("l'identificador del model", "el identificador del modelo"),
    "stream a short reply and print the speed": (
        "rep una resposta curta a mesura que s'escriu i en mostra la velocitat",
        "recibe una respuesta corta a medida que se escribe y muestra la velocidad",
    ),
    "the model id (default: the default model)": (
        "l'identificador del model (per defecte: el model per defecte)",
        "el identificador del modelo (por defecto: el modelo por defecto)",
    ),
    "what to ask": ("la pregunta que es fa", "la pregunta que se hace"),
    "find models already on this computer": (
        "troba els models que ja hi ha en aquest ordinador",
        "encuentra los modelos que ya hay en este ordenador",
    ),
    "print the findings as JSON": (
        "mostra el que s'ha trobat en JSON",
        "muestra lo encontrado en JSON",
    ),
    "also search this folder (repeatable)": (
        "cerca també en aquesta carpeta (es pot repetir)",
        "busca también en esta carpeta (se puede repetir)",
    ),
    "do not ask local servers": (
        "no consulta els servidors locals",
        "no consulta los servidores locales",
    ),
    "ask this loopback server instead of the usual ports (e.g. ollama:11500)": (
        "consulta aquest servidor local (loopback) en lloc dels ports habituals "
        "(p. ex. ollama:11500)",
        "consulta este servidor local (loopback) en lugar de los puertos habituales "
        "(p. ej. ollama:11500)",
    ),
    # arxiu ask
    "the question, in any language": (
        "la pregunta, en qualsevol llengua",
        "la pregunta, en cualquier lengua",
    ),
    "model id (see `arxiu models list`)": (
        "identificador del model (vegeu `arxiu models list`)",
        "identificador del modelo (véase `arxiu models list`)",
    ),
    "write mode: propose a change plan, shown as a confirm card on stderr, applied only after "
    "you type yes": (
        "mode d'escriptura: proposa un pla de canvis, que es mostra com a targeta de confirmació "
        "a stderr i només s'aplica després que escriviu sí (o yes)",
        "modo de escritura: propone un plan de cambios, que se muestra como tarjeta de "
        "confirmación en stderr y solo se aplica después de que escriba sí (o yes)",
    ),
    "the record the question is about ('this record')": (
        "el registre sobre el qual és la pregunta ('aquest registre')",
        "el registro sobre el que trata la pregunta ('este registro')",
    ),
    'print each event as one {"event", "data"} JSON line; stdout then holds only events (with '
    "--write, the confirm card goes to stderr, and so does the apply report, as one "
    '{"ok": true, "data": {...}} line)': (
        'escriu cada esdeveniment com una línia JSON {"event", "data"}; aleshores stdout només '
        "conté esdeveniments (amb --write, la targeta de confirmació va a stderr, i també "
        'l\'informe de l\'aplicació, com una línia {"ok": true, "data": {...}})',
        'escribe cada evento como una línea JSON {"event", "data"}; entonces stdout solo '
        "contiene eventos (con --write, la tarjeta de confirmación va a stderr, y también el "
        'informe de la aplicación, como una línea {"ok": true, "data": {...}})',
    ),
    "ask an Arxiu server (arxiu serve) instead of the local archive; same output": (
        "pregunta a un servidor d'Arxiu (arxiu serve) en lloc de l'arxiu local; la sortida és "
        "la mateixa",
        "pregunta a un servidor de Arxiu (arxiu serve) en lugar del archivo local; la salida "
        "es la misma",
    ),
    "with --server: the user (password: ARXIU_PASSWORD)": (
        "amb --server: l'usuari (contrasenya: ARXIU_PASSWORD)",
        "con --server: el usuario (contraseña: ARXIU_PASSWORD)",
    ),
    # arxiu serve
    "address to bind (default loopback)": (
        "adreça on escolta (per defecte: loopback)",
        "dirección en la que escucha (por defecto: loopback)",
    ),
    f"port (default {DEFAULT_PORT}; 0: any)": (
        f"port (per defecte {DEFAULT_PORT}; 0: qualsevol)",
        f"puerto (por defecto {DEFAULT_PORT}; 0: cualquiera)",
    ),
    "let users with --can-write apply plans": (
        "permet que els usuaris amb --can-write apliquin plans de canvis",
        "permite que los usuarios con --can-write apliquen planes de cambios",
    ),
    "allow a non-loopback --host (other machines can then reach the server)": (
        "permet un --host que no sigui loopback (aleshores altres màquines poden arribar al "
        "servidor)",
        "permite un --host que no sea loopback (entonces otras máquinas pueden llegar al servidor)",
    ),
    "another host name clients use to reach the server (repeatable)": (
        "un altre nom de màquina amb què els clients arriben al servidor (es pot repetir)",
        "otro nombre de máquina con el que los clientes llegan al servidor (se puede repetir)",
    ),
    "Vadalog dialect: each user's monthly message allowance (default: unlimited)": (
        "dialecte Vadalog: missatges mensuals permesos a cada usuari (per defecte: il·limitats)",
        "dialecto Vadalog: mensajes mensuales permitidos a cada usuario (por defecto: ilimitados)",
    ),
    "Vadalog dialect: server-side sessions kept before the least recently used goes": (
        "dialecte Vadalog: sessions que conserva el servidor abans de descartar la que fa més "
        "temps que no s'usa",
        "dialecto Vadalog: sesiones que conserva el servidor antes de descartar la que lleva "
        "más tiempo sin usarse",
    ),
    # arxiu users
    "add a user": ("afegeix un usuari", "añade un usuario"),
    "user name": ("nom d'usuari", "nombre de usuario"),
    "read the password from stdin": (
        "llegeix la contrasenya de stdin",
        "lee la contraseña de stdin",
    ),
    "may apply change plans": ("pot aplicar plans de canvis", "puede aplicar planes de cambios"),
    "may receive restricted records": (
        "pot rebre registres restringits",
        "puede recibir registros restringidos",
    ),
    "the users and their permissions": (
        "els usuaris i els seus permisos",
        "los usuarios y sus permisos",
    ),
    "remove a user and their tokens": (
        "suprimeix un usuari i els seus tokens",
        "elimina un usuario y sus tokens",
    ),
    "set a user's password": (
        "estableix la contrasenya d'un usuari",
        "establece la contraseña de un usuario",
    ),
    "issue a bearer token (printed once)": (
        "emet un token d'accés (es mostra una sola vegada)",
        "emite un token de acceso (se muestra una sola vez)",
    ),
    # arxiu mcp
    "let the client read record content (never restricted records); without it, only the "
    "archive's structure is offered unless the external_content setting is on": (
        "permet que el client llegeixi el contingut dels registres (mai els restringits); "
        "sense aquesta opció, només s'ofereix l'estructura de l'arxiu, tret que l'ajust "
        "external_content estigui activat",
        "permite que el cliente lea el contenido de los registros (nunca los restringidos); "
        "sin esta opción, solo se ofrece la estructura del archivo, salvo que el ajuste "
        "external_content esté activado",
    ),
}
"""The Catalan and Spanish of each English text of the parser tree (help, descriptions, group
titles), by the exact English."""

ARGPARSE_WORDS: dict[str, tuple[str, str]] = {
    "usage: ": ("ús: ", "uso: "),
    "argument %(argument_name)s: %(message)s": (
        "argument %(argument_name)s: %(message)s",
        "argumento %(argument_name)s: %(message)s",
    ),
    "unrecognized arguments: %s": ("arguments no reconeguts: %s", "argumentos no reconocidos: %s"),
    "the following arguments are required: %s": (
        "calen els arguments següents: %s",
        "se requieren los argumentos siguientes: %s",
    ),
    "one of the arguments %s is required": (
        "cal un dels arguments %s",
        "se requiere uno de los argumentos %s",
    ),
    "not allowed with argument %s": (
        "no es permet amb l'argument %s",
        "no se permite con el argumento %s",
    ),
    "ignored explicit argument %r": (
        "s'ha ignorat l'argument explícit %r",
        "se ha ignorado el argumento explícito %r",
    ),
    "expected one argument": ("s'esperava un argument", "se esperaba un argumento"),
    "expected at most one argument": (
        "s'esperava com a màxim un argument",
        "se esperaba como máximo un argumento",
    ),
    "expected at least one argument": (
        "s'esperava almenys un argument",
        "se esperaba al menos un argumento",
    ),
    "expected %s argument": ("s'esperava %s argument", "se esperaba %s argumento"),
    "expected %s arguments": ("s'esperaven %s arguments", "se esperaban %s argumentos"),
    "ambiguous option: %(option)s could match %(matches)s": (
        "opció ambigua: %(option)s pot correspondre a %(matches)s",
        "opción ambigua: %(option)s puede corresponder a %(matches)s",
    ),
    "unexpected option string: %s": ("opció inesperada: %s", "opción inesperada: %s"),
    "invalid %(type)s value: %(value)r": (
        "valor %(type)s no vàlid: %(value)r",
        "valor %(type)s no válido: %(value)r",
    ),
    "invalid choice: %(value)r (choose from %(choices)s)": (
        "valor no vàlid: %(value)r (trieu entre %(choices)s)",
        "valor no válido: %(value)r (elija entre %(choices)s)",
    ),
    "unknown parser %(parser_name)r (choices: %(choices)s)": (
        "ordre desconeguda %(parser_name)r (opcions: %(choices)s)",
        "orden desconocida %(parser_name)r (opciones: %(choices)s)",
    ),
    "can't open '%(filename)s': %(error)s": (
        "no es pot obrir '%(filename)s': %(error)s",
        "no se puede abrir '%(filename)s': %(error)s",
    ),
}
"""The Catalan and Spanish of what argparse itself says while it parses (through its module's
``_`` and ``ngettext``): the usage prefix and the errors a person can meet. Its own
``%(prog)s: error: %(message)s`` reads the same in the three languages."""


def translated(text: str, lang: str) -> str:
    """``text`` in ``lang`` (``ca`` or ``es``: :data:`HELP_WORDS`, else
    :data:`ARGPARSE_WORDS`), or as it is (English, or a text with no translation)."""
    if lang not in LANGS:
        return text
    both = HELP_WORDS.get(text) or ARGPARSE_WORDS.get(text)
    return both[LANGS.index(lang)] if both else text


def _places(parser: argparse.ArgumentParser) -> Iterator[tuple[object, str]]:
    """Each (object, attribute) of ``parser``'s tree that holds a text for a person: its
    description and epilog, its groups' titles and descriptions, its actions' help, the help
    of each subcommand in the list of commands and, the same way, every subcommand's parser."""
    yield parser, "description"
    yield parser, "epilog"
    for group in parser._action_groups:
        yield group, "title"
        yield group, "description"
    seen: set[int] = set()
    for action in parser._actions:
        yield action, "help"
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                yield choice, "help"
            for subparser in action.choices.values():
                if id(subparser) not in seen:  # an alias names the same parser again
                    seen.add(id(subparser))
                    yield from _places(subparser)


def _texts(parser: argparse.ArgumentParser) -> Iterator[tuple[object, str, str]]:
    for holder, attribute in _places(parser):
        text = getattr(holder, attribute)
        if isinstance(text, str) and text and text != argparse.SUPPRESS:
            yield holder, attribute, text


def help_texts(parser: argparse.ArgumentParser) -> list[str]:
    """Every text of ``parser``'s tree a person reads in ``--help``, once each, in order."""
    return list(dict.fromkeys(text for _holder, _attribute, text in _texts(parser)))


def localize(parser: argparse.ArgumentParser, lang: str) -> None:
    """Say ``parser``'s help in ``lang``: each text of its tree replaced by its translation
    (:func:`translated`; nothing changes in English)."""
    if lang not in LANGS:
        return
    for holder, attribute, text in list(_texts(parser)):
        setattr(holder, attribute, translated(text, lang))


@contextmanager
def argparse_words(lang: str) -> Iterator[None]:
    """Within it, argparse says its own words (``usage:``, its errors) in ``lang``: its
    module's ``_`` and ``ngettext``, which it calls as it formats, look them up in
    :data:`ARGPARSE_WORDS` first; they are put back on the way out (an ``exit`` of ``--help``
    or of an error included). Nothing changes in English."""
    if lang not in LANGS:
        yield
        return
    names = vars(argparse)
    gettext: Callable[[str], str] = names["_"]
    ngettext: Callable[[str, str, int], str] = names["ngettext"]

    def said(message: str) -> str:
        return translated(message, lang) if message in ARGPARSE_WORDS else gettext(message)

    def said_of(singular: str, plural: str, count: int) -> str:
        chosen = singular if count == 1 else plural
        if chosen in ARGPARSE_WORDS:
            return translated(chosen, lang)
        return ngettext(singular, plural, count)

    names["_"], names["ngettext"] = said, said_of
    try:
        yield
    finally:
        names["_"], names["ngettext"] = gettext, ngettext
