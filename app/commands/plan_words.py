"""The words of ``arxiu ask --write``'s confirm card and apply report, in Catalan, Spanish and
English (:mod:`app.commands.ask_plans`).

They are part of the CLI's words (:class:`app.commands.cli_words.CliWords`: ``plans``), chosen
by the same language, and follow the desktop app's confirm card (its translation tables: "pla de
canvis", "plan de cambios", "aplicat", "omès", …). Only what a person reads is here: op ids,
tools, their arguments, ``plan_hash``, ``section_id``, error codes and the JSON reports stay as
they are. The word a person types to apply a plan is the language's ``yes`` (:attr:`yes`);
``yes`` itself is always accepted too (:func:`app.commands.ask_plans.is_yes`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PlanWords:
    """What the confirm card, its prompts and the apply report say for a person."""

    heading: str
    """The card's first line: ``{summary}``, the plan's summary as the model wrote it."""
    nothing_written: str
    """The card's last line: the plan is shown, not applied."""
    restricted: str
    """A plan of a tainted run that writes into an open section (before the second prompt)."""
    yes: str
    """The word the prompts ask for (``{yes}`` in them)."""
    yes_answers: tuple[str, ...]
    """The answers that mean :attr:`yes` (lower case; ``yes`` is accepted in every language)."""
    apply_prompt: str
    """The first prompt (``{yes}``)."""
    again_prompt: str
    """The second prompt of a flagged plan (``{yes}``)."""
    applied: str
    """An op that took effect: ``{op_id}``."""
    earlier: str
    """After :attr:`applied`, of an op applied in an earlier, interrupted attempt."""
    failed: str
    """The op that failed: ``{op_id}``, ``[{code}]`` and ``{reason}`` (the message)."""
    candidate: str
    """A record an ambiguous match could mean: ``{key}`` and ``{label}``."""
    skipped: str
    """An op not run after the failure: ``{op_id}``."""
    created: str
    """A record an op created: ``{op_id}`` and its ``{section_id}``."""


PLAN_WORDS: dict[str, PlanWords] = {
    "en": PlanWords(
        heading="Change plan: {summary}",
        nothing_written="Nothing has been written yet.",
        restricted=(
            "WARNING: this plan contains text from restricted records and writes it into an "
            "open section."
        ),
        yes="yes",
        yes_answers=("yes",),
        apply_prompt="Type {yes} to apply it: ",
        again_prompt="Type {yes} again to copy it into the open section: ",
        applied="applied {op_id}",
        earlier=" (earlier)",
        failed="FAILED {op_id}: [{code}] {reason}",
        candidate="  candidate {key}: {label}",
        skipped="skipped {op_id}",
        created="created {op_id}: section_id {section_id}",
    ),
    "ca": PlanWords(
        heading="Pla de canvis: {summary}",
        nothing_written="Encara no s'ha escrit res.",
        restricted=(
            "AVÍS: aquest pla conté text de registres restringits i l'escriu en una secció oberta."
        ),
        yes="sí",
        yes_answers=("sí", "si"),
        apply_prompt="Escriviu {yes} per aplicar-lo: ",
        again_prompt="Torneu a escriure {yes} per copiar-lo a la secció oberta: ",
        applied="aplicat {op_id}",
        earlier=" (en un intent anterior)",
        failed="HA FALLAT {op_id}: [{code}] {reason}",
        candidate="  candidat {key}: {label}",
        skipped="omès {op_id}",
        created="creat {op_id}: section_id {section_id}",
    ),
    "es": PlanWords(
        heading="Plan de cambios: {summary}",
        nothing_written="Todavía no se ha escrito nada.",
        restricted=(
            "AVISO: este plan contiene texto de registros restringidos y lo escribe en una "
            "sección abierta."
        ),
        yes="sí",
        yes_answers=("sí", "si"),
        apply_prompt="Escriba {yes} para aplicarlo: ",
        again_prompt="Vuelva a escribir {yes} para copiarlo en la sección abierta: ",
        applied="aplicado {op_id}",
        earlier=" (en un intento anterior)",
        failed="HA FALLADO {op_id}: [{code}] {reason}",
        candidate="  candidato {key}: {label}",
        skipped="omitido {op_id}",
        created="creado {op_id}: section_id {section_id}",
    ),
}
"""The words of the confirm card and the apply report by language."""
