"""The words of the commands that set Arxiu up, in Catalan, Spanish and English: ``arxiu models``
(and ``models discover``), ``arxiu users`` and ``arxiu serve``.

They are part of the CLI's words (:class:`app.commands.cli_words.CliWords`: ``models``,
``users``, ``serve``), chosen by the same language. Only what a person reads is here: ``--json``
output, catalog values (``local``, ``external``), codes, tokens and the URL line ``arxiu
serve`` prints first on stdout (read by the tests and benchmarks) stay as they are. Numbers
in a template (``{seconds:.2f}``, ``{needed:,}``) are filled in with the language's
separators (:func:`app.commands.cli_words.said`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from app.core.counted import Counted


@dataclass(frozen=True)
class ModelWords:
    """What ``arxiu models`` and ``arxiu models discover`` print for a person."""

    fit: Mapping[str, str]
    """How a found model fits in memory, by its ``fit`` code (``fits``, ``tight``, …)."""
    free: str
    """After the fit: ``{needed}`` of ``{available}`` MiB free."""
    found: Counted
    """The discovery's first line: the models, ``{seconds}``, ``{entries}`` and ``{where}``."""
    entries: Counted
    """The folder entries the scan looked at."""
    stopped: str
    """``{where}`` when the scan stopped at its limit."""
    tools: Mapping[bool | None, str]
    """Whether a model can plan tool calls: yes, no, unknown."""
    context: str
    """A model's context length (``{tokens}``)."""
    context_unknown: str
    recommended: str
    """``{number}`` ``{name}``: ``{why}``, one of the two below."""
    why_tools: str
    why_fit: str
    add_it: str
    """How to add the recommended model (``{number}``)."""
    refused: str
    """A file the scan refused: ``{path}``, ``{code}`` and the core's ``{message}``."""
    added_discovered: str
    added: str
    removed: str
    tested: str
    """``arxiu models test``: ``{id}``, ``{first}`` and ``{seconds}``, ``{tokens}`` said by the
    count below, and the ``{rate}``."""
    tokens: Counted
    vision: str
    """The listing's flag of a model that accepts images."""
    efforts: str
    """The listing's flag of a model's reasoning efforts (``{levels}``)."""


@dataclass(frozen=True)
class UserWords:
    """What ``arxiu users`` prints for a person (the token it issues is printed alone)."""

    password: str
    """The prompt for a password."""
    again: str
    """The prompt for the same password again."""
    added: str
    """``{name}`` and its ``{permissions}``, the words below joined."""
    read: str
    write: str
    restricted: str
    none_yet: str
    removed: str
    password_changed: str


@dataclass(frozen=True)
class ServeWords:
    """What ``arxiu serve`` says on stderr for a person, after the URL line on stdout (which
    stays ``Arxiu API at http://…`` in every language: tests and benchmarks read it)."""

    oai: str
    """Where the OAI-PMH provider answers (``{url}``)."""
    running: str
    """``{writes}`` (one of the two below) and ``{users}`` (the count below)."""
    writes_allowed: str
    writes_off: str
    users: Counted
    indexing: str
    """The index is brought up to date in the background (``{where}``, the archive)."""
    index_unavailable: str
    stopped: str
    remote_warning: str
    """Listening on ``{host}``, which other machines can reach (framed by a bar)."""


MODEL_WORDS: dict[str, ModelWords] = {
    "en": ModelWords(
        fit={
            "fits": "fits in memory",
            "tight": "tight fit in memory",
            "over": "needs more memory than is free now",
            "refused": "too large for this computer",
            "server": "runs in its server",
            "unknown": "memory unknown",
        },
        free=" ({needed:,} of {available:,} MiB free)",
        found=Counted(
            "Found 1 model on this computer in {seconds:.2f} s, {entries}{where}.",
            "Found {n} models on this computer in {seconds:.2f} s, {entries}{where}.",
        ),
        entries=Counted("1 entry looked at", "{n} entries looked at"),
        stopped=" (stopped at the scan's limit)",
        tools={True: "tools: yes", False: "tools: no", None: "tools: ?"},
        context="ctx {tokens}",
        context_unknown="ctx ?",
        recommended="Recommended: {number} {name}: {why}.",
        why_tools="it can plan tool calls (write mode)",
        why_fit="the best fit here; it cannot plan tool calls, so write mode needs another model",
        add_it="Add it with: arxiu models add --from-discovered {number}",
        refused="Refused {path}: [{code}] {message}",
        added_discovered="Added model {id} (local / private) from {source}: {where}",
        added="Added model {id}.",
        removed="Removed model {id}.",
        tested=(
            "model {id}: first token after {first:.2f} s, {tokens} in {seconds:.2f} s "
            "({rate:.1f} tokens/s)"
        ),
        tokens=Counted("1 token", "{n} tokens"),
        vision="vision",
        efforts="efforts: {levels}",
    ),
    "ca": ModelWords(
        fit={
            "fits": "cap a la memòria",
            "tight": "cap just a la memòria",
            "over": "necessita més memòria de la que ara és lliure",
            "refused": "massa gran per a aquest ordinador",
            "server": "funciona al seu servidor",
            "unknown": "memòria desconeguda",
        },
        free=" ({needed:,} de {available:,} MiB lliures)",
        found=Counted(
            "S'ha trobat 1 model en aquest ordinador en {seconds:.2f} s; {entries}{where}.",
            "S'han trobat {n} models en aquest ordinador en {seconds:.2f} s; {entries}{where}.",
        ),
        entries=Counted("1 entrada examinada", "{n} entrades examinades"),
        stopped=" (aturat al límit de l'exploració)",
        tools={True: "eines: sí", False: "eines: no", None: "eines: ?"},
        context="context {tokens}",
        context_unknown="context ?",
        recommended="Recomanat: {number} {name}: {why}.",
        why_tools="pot planificar crides a eines (mode d'escriptura)",
        why_fit=(
            "el que millor hi cap; no pot planificar crides a eines, així que el mode "
            "d'escriptura en necessita un altre"
        ),
        add_it="Afegiu-lo amb: arxiu models add --from-discovered {number}",
        refused="S'ha refusat {path}: [{code}] {message}",
        added_discovered="S'ha afegit el model {id} (local / privat) des de {source}: {where}",
        added="S'ha afegit el model {id}.",
        removed="S'ha suprimit el model {id}.",
        tested=(
            "model {id}: primer token al cap de {first:.2f} s, {tokens} en {seconds:.2f} s "
            "({rate:.1f} tokens/s)"
        ),
        tokens=Counted("1 token", "{n} tokens"),
        vision="visió",
        efforts="esforços: {levels}",
    ),
    "es": ModelWords(
        fit={
            "fits": "cabe en la memoria",
            "tight": "cabe justo en la memoria",
            "over": "necesita más memoria de la que ahora está libre",
            "refused": "demasiado grande para este ordenador",
            "server": "funciona en su servidor",
            "unknown": "memoria desconocida",
        },
        free=" ({needed:,} de {available:,} MiB libres)",
        found=Counted(
            "Se ha encontrado 1 modelo en este ordenador en {seconds:.2f} s; {entries}{where}.",
            "Se han encontrado {n} modelos en este ordenador en {seconds:.2f} s; {entries}{where}.",
        ),
        entries=Counted("1 entrada examinada", "{n} entradas examinadas"),
        stopped=" (detenido en el límite de la exploración)",
        tools={True: "herramientas: sí", False: "herramientas: no", None: "herramientas: ?"},
        context="contexto {tokens}",
        context_unknown="contexto ?",
        recommended="Recomendado: {number} {name}: {why}.",
        why_tools="puede planificar llamadas a herramientas (modo de escritura)",
        why_fit=(
            "el que mejor cabe aquí; no puede planificar llamadas a herramientas, así que el "
            "modo de escritura necesita otro modelo"
        ),
        add_it="Añádalo con: arxiu models add --from-discovered {number}",
        refused="Se ha rechazado {path}: [{code}] {message}",
        added_discovered="Se ha añadido el modelo {id} (local / privado) desde {source}: {where}",
        added="Se ha añadido el modelo {id}.",
        removed="Se ha eliminado el modelo {id}.",
        tested=(
            "modelo {id}: primer token tras {first:.2f} s, {tokens} en {seconds:.2f} s "
            "({rate:.1f} tokens/s)"
        ),
        tokens=Counted("1 token", "{n} tokens"),
        vision="visión",
        efforts="esfuerzos: {levels}",
    ),
}
"""The words of ``arxiu models`` by language."""

USER_WORDS: dict[str, UserWords] = {
    "en": UserWords(
        password="Password: ",
        again="Again: ",
        added="added {name} ({permissions})",
        read="read",
        write="write",
        restricted="restricted",
        none_yet="no users yet: add one with `arxiu users add NAME`",
        removed="removed {name}",
        password_changed="password changed for {name}",
    ),
    "ca": UserWords(
        password="Contrasenya: ",
        again="Repetiu-la: ",
        added="s'ha afegit {name} ({permissions})",
        read="lectura",
        write="escriptura",
        restricted="restringits",
        none_yet="encara no hi ha cap usuari: afegiu-ne un amb `arxiu users add NAME`",
        removed="s'ha suprimit {name}",
        password_changed="s'ha canviat la contrasenya de l'usuari {name}",
    ),
    "es": UserWords(
        password="Contraseña: ",
        again="Repítala: ",
        added="se ha añadido {name} ({permissions})",
        read="lectura",
        write="escritura",
        restricted="restringidos",
        none_yet="todavía no hay ningún usuario: añada uno con `arxiu users add NAME`",
        removed="se ha eliminado {name}",
        password_changed="se ha cambiado la contraseña de {name}",
    ),
}
"""The words of ``arxiu users`` by language."""

SERVE_WORDS: dict[str, ServeWords] = {
    "en": ServeWords(
        oai="OAI-PMH (open records) at {url}",
        running="{writes}; {users}; Ctrl+C stops",
        writes_allowed="writes allowed for users with --can-write",
        writes_off="writes off",
        users=Counted("1 user", "{n} users"),
        indexing="Indexing {where} in the background…",
        index_unavailable="the index is unavailable: {error}",
        stopped="stopped",
        remote_warning=(
            "WARNING: listening on {host}: other machines can reach this server.\n"
            "Traffic is plain HTTP; put it behind TLS. Only users you added can log in."
        ),
    ),
    "ca": ServeWords(
        oai="OAI-PMH (registres oberts) a {url}",
        running="{writes}; {users}; Ctrl+C l'atura",
        writes_allowed="escriptura permesa als usuaris amb --can-write",
        writes_off="escriptura desactivada",
        users=Counted("1 usuari", "{n} usuaris"),
        indexing="S'indexa {where} en segon pla…",
        index_unavailable="l'índex no està disponible: {error}",
        stopped="aturat",
        remote_warning=(
            "AVÍS: s'escolta a {host}: altres màquines poden arribar a aquest servidor.\n"
            "El trànsit és HTTP sense xifrar; poseu-lo darrere de TLS. Només hi poden entrar "
            "els usuaris que hàgiu afegit."
        ),
    ),
    "es": ServeWords(
        oai="OAI-PMH (registros abiertos) en {url}",
        running="{writes}; {users}; Ctrl+C lo detiene",
        writes_allowed="escritura permitida a los usuarios con --can-write",
        writes_off="escritura desactivada",
        users=Counted("1 usuario", "{n} usuarios"),
        indexing="Se indexa {where} en segundo plano…",
        index_unavailable="el índice no está disponible: {error}",
        stopped="detenido",
        remote_warning=(
            "AVISO: se escucha en {host}: otras máquinas pueden llegar a este servidor.\n"
            "El tráfico es HTTP sin cifrar; póngalo detrás de TLS. Solo pueden entrar los "
            "usuarios que haya añadido."
        ),
    ),
}
"""The words of ``arxiu serve`` by language."""
