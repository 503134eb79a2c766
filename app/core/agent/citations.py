"""Verified citations: every ``Label (section_tipo/section_id)`` in an answer, checked.

A citation is *verified* when a tool in this run returned that record to the model — after the
egress gate, so a refused result verifies nothing. Anything else the model writes in citation
form (a record it invented, a record from an earlier turn, a section that does not exist) is
*unverified*: front ends show it as plain text with a warning mark, never as a link, and the
run's transcript counts it.

Each citation of the ``final`` frame is a :class:`Citation` (on the wire ``{section_tipo,
section_id, key, label, verified, langs, timecode?}``): ``label`` is the archive's label for a
verified record (the words the model wrote before the parenthesis otherwise), ``langs`` the
languages of its text values.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.core.agent.wire_fields import req_int
from app.core.archive.model import NEUTRAL_LANG, RecordKey
from app.core.json_types import JsonObject, JsonValue, bool_or, opt_str, req_str, str_list, str_or

if TYPE_CHECKING:
    from app.core.archive.store import Archive
    from app.core.tools.base import ToolResult

CITATION = re.compile(
    r"\((?P<tipo>[a-z][a-z0-9_]*)/(?P<id>\d{1,12})"
    r"(?:\s*@\s*(?P<tc>\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?))?\)"
)
"""A citation's locator as written: ``(oh1/3)`` or ``(oh1/3 @00:01:10)``."""
LABEL_CHARS = 80
"""At most this much of the text before a citation is kept as its written label."""
_LABEL_CUT = re.compile(r"[\n:;,.!?()\[\]|]")
_MARKUP = re.compile(r"[*_`#>]")


@dataclass(frozen=True)
class Citation:
    """One citation of an answer, checked: a record a tool returned (``verified``) or not."""

    section_tipo: str
    section_id: int
    label: str
    verified: bool
    langs: tuple[str, ...] = ()
    """The languages of a verified record's text values (language-neutral ones left out)."""
    timecode: str | None = None
    """``HH:MM:SS`` of the cited passage, when the citation named one."""

    @property
    def key(self) -> RecordKey:
        """The cited record's key."""
        return RecordKey(self.section_tipo, self.section_id)

    def to_dict(self) -> JsonObject:
        """The wire form ``{section_tipo, section_id, key, label, verified, langs, timecode?}``."""
        out: JsonObject = {
            "section_tipo": self.section_tipo,
            "section_id": self.section_id,
            "key": str(self.key),
            "label": self.label,
            "verified": self.verified,
            "langs": list(self.langs),
        }
        if self.timecode:
            out["timecode"] = self.timecode
        return out

    @classmethod
    def from_dict(cls, data: JsonObject) -> Citation:
        """Read the wire form back (a client's).

        Raises:
            JsonShapeError: no ``section_tipo`` or integer ``section_id``, or a field of the
                wrong type.
        """
        return cls(
            section_tipo=req_str(data, "section_tipo"),
            section_id=req_int(data, "section_id"),
            label=str_or(data, "label"),
            verified=bool_or(data, "verified"),
            langs=tuple(str_list(data, "langs")),
            timecode=opt_str(data, "timecode") or None,
        )


@dataclass(frozen=True)
class Cited:
    """One citation found in a text."""

    key: RecordKey
    written: str
    """The words before the parenthesis (the label as the model wrote it)."""
    timecode: str | None = None


def find_citations(text: str) -> list[Cited]:
    """Every citation in ``text``, in order, one per record (its first occurrence)."""
    found: list[Cited] = []
    seen: set[RecordKey] = set()
    for match in CITATION.finditer(text):
        key = RecordKey(match["tipo"], int(match["id"]))
        if key in seen:
            continue
        seen.add(key)
        found.append(Cited(key, _written_label(text[: match.start()]), match["tc"]))
    return found


def _written_label(before: str) -> str:
    tail = _MARKUP.sub("", before[-LABEL_CHARS:]).rstrip()
    cut = max((m.end() for m in _LABEL_CUT.finditer(tail)), default=0)
    return tail[cut:].strip().strip("\"'“”«»- ")


@dataclass
class ReturnedRecords:
    """The records tools returned to the model in one run (after the egress gate)."""

    keys: set[RecordKey] = field(default_factory=set)
    texts: list[str] = field(default_factory=list)
    """Each successful result's data as text: what the answer's claims are checked against
    (:mod:`app.core.agent.claims`)."""

    def note(self, result: ToolResult) -> None:
        """Remember every record a successful result carried to the model, and its text."""
        if not result.ok:
            return
        self.keys.update(result.records)
        self.keys.update(locators_in(result.data))
        self.texts.append(json.dumps(result.data, ensure_ascii=False, default=str))

    def __contains__(self, key: object) -> bool:
        return key in self.keys


def locators_in(value: Any) -> Iterable[RecordKey]:
    """Every ``{section_tipo, section_id}`` pair anywhere in ``value``."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            tipo, sid = item.get("section_tipo"), item.get("section_id")
            if isinstance(tipo, str) and isinstance(sid, int) and not isinstance(sid, bool):
                yield RecordKey(tipo, sid)
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)


def verify(
    text: str, returned: ReturnedRecords, archive: Archive, lang: str = "lg-eng"
) -> tuple[Citation, ...]:
    """The citations of ``text``, each marked ``verified`` or not (see the module docstring)."""
    out = []
    for cited in find_citations(text):
        verified = cited.key in returned and archive.find_record(cited.key) is not None
        out.append(
            Citation(
                section_tipo=cited.key.section_tipo,
                section_id=cited.key.section_id,
                label=archive.record_label(cited.key, lang) if verified else cited.written,
                verified=verified,
                langs=tuple(record_langs(archive, cited.key)) if verified else (),
                timecode=cited.timecode,
            )
        )
    return tuple(out)


def record_langs(archive: Archive, key: RecordKey) -> list[str]:
    """The languages of a record's text values (language-neutral ones left out), sorted."""
    record = archive.find_record(key)
    if record is None:
        return []
    langs = {
        str(item.get("lang"))
        for items in record.values.values()
        for item in items
        if isinstance(item.get("value"), str) and item.get("lang") not in (None, NEUTRAL_LANG)
    }
    return sorted(langs)


SHORT_LANGS = {"lg-cat": "ca", "lg-spa": "es", "lg-eng": "en", "lg-fra": "fr", "lg-deu": "de"}


def langs_text(langs: Iterable[str]) -> str:
    """Record languages for a person: ``lg-cat`` → ``ca``, several joined by ``/``."""
    return "/".join(SHORT_LANGS.get(lang, lang.removeprefix("lg-")) for lang in langs)


def unverified_note(citations: Sequence[Citation]) -> JsonObject | None:
    """The transcript entry counting a run's unverified citations (``None`` when all hold)."""
    bad: list[JsonValue] = [str(c.key) for c in citations if not c.verified]
    if not bad:
        return None
    return {"citations": len(citations), "unverified": len(bad), "unverified_keys": bad[:20]}
