"""The egress gate: no restricted record ever reaches an external model.

For a run on an ``external`` model:

* ``structure`` tools pass;
* ``content`` tools are refused with ``mcp.egress_restricted`` unless external content is
  allowed by setting — and even then never when the call names a restricted (or unknown)
  section or record anywhere in its arguments (filter paths included), nor when the result
  refers to one (hits, portal targets, contributors, any locator in the data);
* ``write`` tools never run in the loop (only a confirmed plan's apply runs them);
* a tool without a known class is refused: unknown means refused.

For a run on a ``local`` model everything passes, and the gate notes whether the run touched
restricted content, so the answer can be marked *tainted*.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.core.archive.ids import check_ids, lone_surrogate_at
from app.core.archive.model import RecordKey
from app.core.errors import ArxiuError, ToolError
from app.core.json_types import JsonObject
from app.core.phrases import Phrase
from app.core.tools.base import EGRESS_CLASSES, Tool, ToolResult
from app.core.tools.sections import sections_named

if TYPE_CHECKING:
    from app.core.archive.store import Archive

FREE_TEXT_KEYS = frozenset({"query", "text", "q", "question", "value", "values", "summary"})
PATH_SEPARATORS = (">", "→", ".")
LOCAL_HINT = "Switch to a model badged local / private and ask again."
STRUCTURE_SCOPE = "structure"
"""``details.scope`` of a refusal that depends only on the call and the archive's structure
(sections, fields, the content setting) — never on whether a record exists or what it holds —
so an external model may read it as it is (see :mod:`app.core.agent.egress_errors`)."""


def refused(message: str | Phrase, *, details: JsonObject | None = None) -> ToolError:
    """The ``mcp.egress_restricted`` error."""
    return ToolError(
        "mcp.egress_restricted",
        message,
        hint=LOCAL_HINT,
        category="permission",
        details=details,
    )


@dataclass
class EgressGate:
    """The gate for one run.

    Args:
        archive: the open archive (section and record flags).
        egress: the run's model class, ``local`` or ``external``.
        external_content: whether the setting allows record content to reach external models.
    """

    archive: Archive
    egress: str
    external_content: bool = False
    touched_restricted: bool = field(default=False, init=False)
    _sections: dict[str, bool] | None = field(default=None, init=False, repr=False)
    _fields: dict[str, tuple[str, str | None]] | None = field(default=None, init=False, repr=False)

    @property
    def external(self) -> bool:
        """Whether the gate guards an external run (anything but ``local`` is external)."""
        return self.egress != "local"

    def check_call(self, tool: Tool | None, args: JsonObject) -> ToolError | None:
        """The refusal for calling ``tool`` with ``args`` (the model's JSON) on this run, or
        ``None``."""
        if tool is None or tool.egress not in EGRESS_CLASSES:
            return refused("This tool has no egress class, so it is refused.")
        try:  # before any look-up: SQLite cannot hold such an id, nor encode such text
            check_ids(args)
        except ArxiuError as error:
            return ToolError(
                error.code, error.message_words, hint=error.hint_words, details=error.details
            )
        where = lone_surrogate_at(args)
        if where is not None:
            return ToolError(
                "mcp.invalid_args",
                Phrase.of("{where} holds a lone surrogate, which is not text.", where=where),
                hint="Send the text as valid Unicode.",
            )
        if tool.egress == "write":
            return ToolError(
                "mcp.write_requires_plan",
                Phrase.of(
                    "{tool} changes the archive and only runs from a confirmed change plan.",
                    tool=tool.name,
                ),
                hint="Propose a change plan instead.",
                category="permission",
            )
        if not self.external or tool.egress == "structure":
            return None
        if not self.external_content:
            return refused(
                "Record content is not sent to external models.",
                details={"tool": tool.name, "scope": STRUCTURE_SCOPE},
            )
        try:
            named = sections_named(args, self.archive)
        except ArxiuError as error:
            return refused(
                Phrase.of("The call cannot be classified: {reason}", reason=error.message_words)
            )
        named |= self._sections_in(args)
        return self._check_keys(named, set(record_locators(args)), where="call")

    def check_result(self, tool: Tool, result: ToolResult) -> ToolError | None:
        """The refusal for sending ``result`` to this run's model, or ``None``."""
        if not result.ok:
            return None
        keys = set(result.records) | set(record_locators(result.data))
        sections = set(result.sections) | {k.section_tipo for k in keys}
        if not self.external:
            if (
                tool.egress != "structure" and any(self._restricted_section(s) for s in sections)
            ) or any(self._restricted_record(k) for k in keys):
                self.touched_restricted = True
            return None
        if tool.egress == "structure":
            return None
        return self._check_keys(sections, keys, where="result")

    def note_context(self, key: RecordKey) -> bool:
        """Whether the context record is restricted (marks a local run as touching it)."""
        restricted = self._restricted_record(key)
        if restricted and not self.external:
            self.touched_restricted = True
        return restricted

    # -- internals --------------------------------------------------------------------------
    def _check_keys(self, sections: set[str], keys: set[RecordKey], where: str) -> ToolError | None:
        for tipo in sorted(sections):
            if self._restricted_section(tipo):
                details: JsonObject = {"section_tipo": tipo}
                if where == "call":  # the call and the archive's structure alone decide it
                    details["scope"] = STRUCTURE_SCOPE
                message = (
                    Phrase.of("The call refers to the restricted section {tipo}.", tipo=tipo)
                    if where == "call"
                    else Phrase.of("The result refers to the restricted section {tipo}.", tipo=tipo)
                )
                return refused(message, details=details)
        for key in sorted(keys):
            if self._restricted_record(key):
                return refused(
                    "The call refers to a restricted record."
                    if where == "call"
                    else "The result refers to a restricted record.",
                    details={"section_tipo": key.section_tipo},
                )
        return None

    def _restricted_section(self, tipo: str) -> bool:
        """Restricted, or unknown (unknown means refused)."""
        return self._section_flags().get(tipo, True)

    def _restricted_record(self, key: RecordKey) -> bool:
        return self._restricted_section(key.section_tipo) or self.archive.is_restricted(key)

    def _section_flags(self) -> dict[str, bool]:
        if self._sections is None:
            self._sections = {s.tipo: s.restricted for s in self.archive.sections()}
        return self._sections

    def _field_map(self) -> dict[str, tuple[str, str | None]]:
        if self._fields is None:
            self._fields = {
                f.tipo: (f.section_tipo, f.target_section) for f in self.archive.fields()
            }
        return self._fields

    def _sections_in(self, args: Any) -> set[str]:
        """Sections a tipo anywhere in ``args`` points at (fields count for their section
        and their portal's target), free-text values excepted."""
        found: set[str] = set()
        sections, fields = self._section_flags(), self._field_map()
        for text in _strings(args):
            for piece in _split_path(text):
                if piece in sections:
                    found.add(piece)
                if piece in fields:
                    owner, target = fields[piece]
                    found.add(owner)
                    if target:
                        found.add(target)
        return found


def _strings(value: Any, key: str = "") -> Iterator[str]:
    if key in FREE_TEXT_KEYS:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, str(k))
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item, key)


def _split_path(text: str) -> list[str]:
    pieces = [text.strip()]
    for sep in PATH_SEPARATORS:
        pieces = [p.strip() for piece in pieces for p in piece.split(sep)]
    return [p for p in pieces if p] + ([text.strip()] if len(pieces) > 1 else [])


def record_locators(value: Any) -> Iterator[RecordKey]:
    """Every ``{section_tipo, section_id}`` pair anywhere in ``value``."""
    if isinstance(value, dict):
        tipo, sid = value.get("section_tipo"), value.get("section_id")
        if isinstance(tipo, str) and isinstance(sid, int) and not isinstance(sid, bool):
            yield RecordKey(tipo, sid)
        for item in value.values():
            yield from record_locators(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from record_locators(item)
