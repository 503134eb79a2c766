"""Coded errors shared by every layer of the core.

The tree::

    ArxiuError                  a known error: carries a stable code and text for a person
    ├── ArchiveError            archive.* — opening, migrating, reading or writing an archive
    ├── ImportFailed            import.* — a dataset that cannot be imported at all
    ├── IndexError_             index.* — the semantic index
    ├── ModelError              ai.* — catalog, providers, model files
    └── ToolError               mcp.* — a tool call the registry refuses or that fails

Anything that is not an ``ArxiuError`` is a bug: it is logged once with its traceback
(:func:`log_bug`) and goes on up, to the crash dialog (the app), a non-zero exit (the CLI) or a
500-class ``api.internal`` answer (the server). Only known errors become banners.

Bad input has its codes too: a model stream past its bounds is ``ai.stream_timeout`` (the
turn's wall-clock limit), ``ai.stream_idle`` (nothing but keep-alives) or ``ai.stream_too_large``
(a line, an event or the reply past its cap); a damaged or empty ``archive.db`` is
``archive.corrupt``; an import line that cannot be used is reported, not raised, as
``import.bad_line``, ``import.bad_row``, ``import.duplicate_id`` or ``import.row_failed``.
"""

from __future__ import annotations

import contextlib
import logging
import re
import string
from collections.abc import Mapping

from app.core.json_types import JsonObject, JsonValue
from app.core.phrases import Phrase, PhraseParam, Translations

_LOGGED = "_arxiu_bug_logged"


ErrorWords = tuple[str | Phrase, str | Phrase | None]
"""An error's message and hint as raised: each a fixed sentence or a phrase."""


class ArxiuError(Exception):
    """A known, coded error with text for the person at the keyboard.

    Args:
        code: stable dotted code (``archive.corrupt``, ``ai.model_unknown``...).
        message: one sentence saying what went wrong, in plain words: a fixed English sentence,
            or a :class:`~app.core.phrases.Phrase` (an English template and its values) where it
            names something (a section, a file, a number). Either is said in a person's
            language by :meth:`message_in` (the translation tables hold the sentence or the
            template); :attr:`message` is the English, for logs and the wire.
        hint: what to do next, if anything (a sentence or a phrase, as ``message``).
        category: who is to blame: ``input``, ``environment``, ``provider``, ``permission``,
            ``conflict`` or ``internal``.
        retryable: whether the same request may succeed later.
        details: machine-readable extras (never secrets). They are part of the error's wire
            form (:meth:`to_dict`), so they are kept as JSON (:func:`json_form`): a copy, tuples
            as lists, anything that is not JSON as its text.
    """

    default_category = "environment"

    def __init__(
        self,
        code: str,
        message: str | Phrase,
        *,
        hint: str | Phrase | None = None,
        category: str | None = None,
        retryable: bool = False,
        details: Mapping[str, object] | None = None,
    ) -> None:
        english = english_of(message)
        super().__init__(english)
        self.code = code
        self.message = english
        self.hint = english_of(hint) if hint is not None else None
        self.message_words: str | Phrase = message
        self.hint_words: str | Phrase | None = hint
        self.category = category or self.default_category
        self.retryable = retryable
        self.details: JsonObject = json_object(details) if details else {}

    @property
    def label_key(self) -> str:
        """Key of the translatable label for this error (``error.<code>``)."""
        return "error." + self.code

    @property
    def words(self) -> ErrorWords:
        """The message and the hint as raised (what a failure made of this error keeps, to say
        them in a person's language)."""
        return (self.message_words, self.hint_words)

    def message_in(self, table: Translations) -> str:
        """The message in the language of ``table`` (English where it has no translation)."""
        return said_in(self.message_words, table)

    def hint_in(self, table: Translations) -> str | None:
        """The hint in the language of ``table`` (English where it has no translation)."""
        return said_in(self.hint_words, table) if self.hint_words is not None else None

    def to_dict(self) -> JsonObject:
        """The error as the seed protocol's error payload."""
        out: JsonObject = {
            "code": self.code,
            "category": self.category,
            "message": self.message,
            "label_key": self.label_key,
            "retryable": self.retryable,
        }
        if self.details:
            out["details"] = self.details
        if self.hint:
            out["hint"] = self.hint
        out.update(words_json(self.words))
        return out

    def __str__(self) -> str:
        text = f"[{self.code}] {self.message}"
        return f"{text} ({self.hint})" if self.hint else text


def english_of(words: str | Phrase) -> str:
    """A message or hint in English: the sentence, or the phrase's template filled in."""
    return words.english() if isinstance(words, Phrase) else words


def said_in(words: str | Phrase, table: Translations) -> str:
    """A message or hint in the language of ``table``: a phrase said in it, a sentence looked up
    in it (as it is where the table has no translation)."""
    if isinstance(words, Phrase):
        return words.said_in(table)
    return table.get(words) or words


def words_of(payload: Mapping[str, object], english: str, prefix: str = "") -> str | Phrase:
    """A message (``prefix=""``) or hint (``"hint_"``) read back from an error payload: the
    phrase its ``template`` and ``params`` make (:func:`phrase_json`), where they make
    ``english`` again (so a client says a server's error in its own language), else
    ``english`` as it is. A template is taken only with plain fields (a name among the
    params, ``!r``/``!s``, a spec such as ``,`` or ``.1f``: no attribute, index or width)."""
    phrase = _phrase_from(payload.get(prefix + "template"), payload.get(prefix + "params"), 0)
    if phrase is None:
        return english
    try:
        made = phrase.english()
    except (KeyError, IndexError, ValueError, TypeError):  # a value that does not fit its spec
        return english
    return phrase if made == english else english


def words_json(words: ErrorWords) -> JsonObject:
    """The ``template``/``params`` (and ``hint_template``/``hint_params``) fields an error's
    payload carries beside its English ``message`` and ``hint``, for a message or hint that is
    a phrase with values (a fixed sentence is its own key): what :func:`words_of` reads back."""
    out: JsonObject = {}
    for prefix, said in (("", words[0]), ("hint_", words[1])):
        if isinstance(said, Phrase) and said.params:
            made = phrase_json(said)
            out[prefix + "template"] = made["template"]
            out[prefix + "params"] = made["params"]
    return out


def read_words(payload: Mapping[str, object], message: str, hint: str | None) -> ErrorWords:
    """An error's message and hint read back from its payload (:func:`words_of` each)."""
    return words_of(payload, message), None if hint is None else words_of(payload, hint, "hint_")


def phrase_json(phrase: Phrase) -> JsonObject:
    """A phrase as an error payload carries it: its template and its values, a phrase among
    them as such an object in turn (so a client says it in its language too)."""
    return {
        "template": phrase.template,
        "params": {
            name: phrase_json(value) if isinstance(value, Phrase) else value
            for name, value in phrase.params
        },
    }


_PLAIN_SPEC = re.compile(r",?(\.\d{1,2})?[a-z%]?")
"""The format specs a payload's template may use (``,``, ``.1f``, ``,.0f``, ``g``)."""
_NESTED = 4
"""How deep phrases may nest in a payload."""


def _phrase_from(template: object, params: object, depth: int) -> Phrase | None:
    if not isinstance(template, str) or not isinstance(params, Mapping) or depth > _NESTED:
        return None
    try:
        fields = [field for field in string.Formatter().parse(template) if field[1] is not None]
    except ValueError:
        return None
    for _, name, spec, conversion in fields:
        if name not in params or not str(name).isidentifier() or conversion not in (None, "r", "s"):
            return None
        if not _PLAIN_SPEC.fullmatch(spec or ""):
            return None
    values: list[tuple[str, PhraseParam]] = []
    for name, value in params.items():
        if isinstance(value, Mapping):
            nested = _phrase_from(value.get("template"), value.get("params"), depth + 1)
            if nested is None:
                return None
            values.append((str(name), nested))
        elif isinstance(value, str | int | float) and not isinstance(value, bool):
            values.append((str(name), value))
        else:
            return None
    return Phrase(template, tuple(values))


def json_form(value: object) -> JsonValue:
    """``value`` as JSON: mappings (keys as text) and sequences copied, tuples as lists,
    anything else that is not JSON as its ``str`` (as the JSON the CLI and the API print)."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return json_object(value)
    if isinstance(value, list | tuple):
        return [json_form(item) for item in value]
    return str(value)


def json_object(mapping: Mapping[str, object]) -> JsonObject:
    """``mapping`` as a JSON object (see :func:`json_form`)."""
    return {str(key): json_form(item) for key, item in mapping.items()}


class ArchiveError(ArxiuError):
    """An archive cannot be opened, migrated, read or written."""


class ImportFailed(ArxiuError):
    """A dataset cannot be imported at all (single bad lines are skipped, not raised)."""

    default_category = "input"

    @property
    def line(self) -> int:
        """The line of the input the failure names (its ``details["line"]``; 0 for none)."""
        line = self.details.get("line")
        return line if isinstance(line, int) and not isinstance(line, bool) else 0


class IndexError_(ArxiuError):
    """The semantic index cannot do what was asked."""


class ModelError(ArxiuError):
    """A model catalog entry, provider or model file problem."""

    default_category = "provider"


class ToolError(ArxiuError):
    """A tool call refused or failed; becomes a ``tool_result`` with ``ok: false``."""

    default_category = "input"


def log_bug(logger: logging.Logger, error: BaseException, where: str) -> None:
    """Log ``error`` (a bug) with its traceback, once: the first handler on its way up (the
    closest to the bug) logs it; the ones above it (crash dialog, CLI, server) do not again."""
    if getattr(error, _LOGGED, False):
        return
    logger.error("bug in %s: %s: %s", where, type(error).__name__, error, exc_info=error)
    with contextlib.suppress(AttributeError):  # an exception type without a __dict__
        setattr(error, _LOGGED, True)
