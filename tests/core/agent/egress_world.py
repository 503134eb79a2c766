"""What the generated egress and injection suites share: random archives and a probing provider.

* :func:`archives` — a hypothesis strategy of archive *plans*: restricted and open sections,
  text, transcription, relation and media fields with random (often colliding) labels in three
  languages, records with per-record restricted flags that override their section's, links
  across sections, media files. Every value of an effectively restricted record carries a
  marker ``RESTRICTED_MARK + n`` (media too: the stored file's sha256 is recorded), so a leak is
  a plain substring test;
* :class:`ProbeServer` — a fake external OpenAI-compatible server behind ``httpx.MockTransport``:
  the real provider serialises every request, the server records each body's bytes and replies
  with the next scripted turn (tool calls or text) as a chat-completions SSE stream.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from hypothesis import strategies as st

from app.core.archive import Archive, open_archive
from app.core.archive.media import add_media
from app.core.archive.model import Field, RecordKey, Section
from app.core.models.catalog import ModelEntry
from app.core.models.openai_compatible import OpenAICompatibleModel

RESTRICTED_MARK = "QZRESTRICTEDQZ"
"""Starts every restricted string; no tool, prompt or scripted call ever writes it otherwise."""
WORDS = (
    "reservoir",
    "mill",
    "flood",
    "family",
    "pantà",
    "molí",
    "riada",
    "família",
    "embalse",
    "molino",
    "coin",
    "letter",
    "photo",
    "school",
)
LABELS = ("Title", "Name", "Informant", "Witness", "Nom", "Títol", "Testimoni", "Imatge", "Notes")
LANGS = ("lg-eng", "lg-cat", "lg-spa")
KINDS = ("text", "transcription", "relation", "media")


@dataclass
class FieldPlan:
    """One field of a planned section."""

    tipo: str
    kind: str
    labels: dict[str, str]
    target: str | None = None


@dataclass
class RecordPlan:
    """One planned record: its words, its restricted flag and where its relations point."""

    section: int
    restricted: bool | None
    words: list[str]
    links: list[tuple[int, int]] = field(default_factory=list)
    media: bool = False


@dataclass
class ArchivePlan:
    """A random archive, built by :func:`build`."""

    sections: list[tuple[bool, bool, dict[str, str]]]
    """(restricted, writable, labels) per section ``s0``, ``s1``, ..."""
    fields: list[list[FieldPlan]]
    records: list[RecordPlan]


@st.composite
def archives(draw: st.DrawFn, max_sections: int = 4, max_records: int = 10) -> ArchivePlan:
    """A random :class:`ArchivePlan` (at least one restricted and one open section)."""
    count = draw(st.integers(2, max_sections))
    flags = [True, False] + [draw(st.booleans()) for _ in range(count - 2)]
    sections = [
        (restricted, draw(st.booleans()), _labels(draw, f"Section {n}"))
        for n, restricted in enumerate(flags)
    ]
    fields: list[list[FieldPlan]] = []
    for n in range(count):
        own = [FieldPlan(f"s{n}f0", "text", _labels(draw, "Title"))]
        for m in range(1, draw(st.integers(1, 4))):
            kind = draw(st.sampled_from(KINDS))
            target = f"s{draw(st.integers(0, count - 1))}" if kind == "relation" else None
            own.append(FieldPlan(f"s{n}f{m}", kind, _labels(draw, None), target))
        fields.append(own)
    records = [
        RecordPlan(
            section=draw(st.integers(0, count - 1)),
            restricted=draw(st.sampled_from([None, None, True, False])),
            words=draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4)),
            media=draw(st.booleans()),
        )
        for _ in range(draw(st.integers(2, max_records)))
    ]
    for record in records:
        record.links = draw(
            st.lists(st.tuples(st.integers(0, count - 1), st.integers(1, 4)), max_size=2)
        )
    return ArchivePlan(sections, fields, records)


def _labels(draw: st.DrawFn, base: str | None) -> dict[str, str]:
    out = {}
    for lang in draw(st.lists(st.sampled_from(LANGS), min_size=1, max_size=3, unique=True)):
        out[lang] = base if base and lang == "lg-eng" else draw(st.sampled_from(LABELS))
    return out


@dataclass
class World:
    """A built archive and what a leak would look like."""

    archive: Archive
    folder: tempfile.TemporaryDirectory[str]
    restricted: set[RecordKey]
    open: set[RecordKey]
    secrets: set[str]
    """Every string only restricted records hold (markers, media hashes)."""

    def close(self) -> None:
        """Close the archive and remove its folder."""
        self.archive.close()
        self.folder.cleanup()

    def leaks(self, text: str) -> list[str]:
        """The restricted strings found in ``text`` (case-insensitive)."""
        low = text.lower()
        found = [s for s in self.secrets if s.lower() in low]
        if RESTRICTED_MARK.lower() in low and not found:
            found.append(RESTRICTED_MARK)
        return found


def build(plan: ArchivePlan) -> World:
    """Create the planned archive in a temporary folder (writes on)."""
    folder = tempfile.TemporaryDirectory(prefix="egress-world-")
    archive = open_archive(Path(folder.name) / "archive", create=True)
    for n, (restricted, writable, labels) in enumerate(plan.sections):
        section = Section(
            f"s{n}", labels, restricted=restricted, writable=writable, label_field=f"s{n}f0"
        )
        archive.put_section(section)
        for position, fld in enumerate(plan.fields[n]):
            archive.put_field(
                Field(
                    fld.tipo,
                    f"s{n}",
                    fld.labels,
                    fld.kind,
                    multilingual=fld.kind == "text",
                    target_section=fld.target,
                    position=position,
                )
            )
    world = World(archive, folder, set(), set(), set())
    for number, record in enumerate(plan.records):
        _create(world, plan, number, record)
    for number, record in enumerate(plan.records):
        _link(world, plan, number, record)
    archive.set_meta("write_allowed", "true")
    return world


def _create(world: World, plan: ArchivePlan, number: int, record: RecordPlan) -> None:
    section_restricted = plan.sections[record.section][0]
    hidden = record.restricted if record.restricted is not None else section_restricted
    mark = f"{RESTRICTED_MARK}{number}X" if hidden else f"open{number}"
    text = " ".join([mark, *record.words])
    values: dict[str, list[dict[str, Any]]] = {}
    for fld in plan.fields[record.section]:
        if fld.kind == "text":
            values[fld.tipo] = [{"lang": "lg-eng", "value": text}]
        elif fld.kind == "transcription":
            values[fld.tipo] = [
                {
                    "lang": "lg-cat",
                    "value": f"[TC_00:00:01.000_TC] {text} [TC_00:00:09.000_TC] {mark}",
                }
            ]
    key = world.archive.create_record(f"s{record.section}", values, restricted=record.restricted)
    (world.restricted if hidden else world.open).add(key)
    if hidden:
        world.secrets.add(mark)
    media = [f for f in plan.fields[record.section] if f.kind == "media"]
    if record.media and media:
        source = Path(world.folder.name) / f"{mark}.txt"
        source.write_text(f"{mark} media of record {number}", encoding="utf-8")
        stored = add_media(world.archive, key, media[0].tipo, source)
        if hidden:
            world.secrets.add(stored.sha256)


def _link(world: World, plan: ArchivePlan, number: int, record: RecordPlan) -> None:
    relations = [f for f in plan.fields[record.section] if f.kind == "relation" and f.target]
    if not relations:
        return
    source = sorted(
        k for k in world.restricted | world.open if k.section_tipo == f"s{record.section}"
    )
    if not source:
        return
    key = source[number % len(source)]
    items = []
    for section, sid in record.links:
        target = RecordKey(f"s{section}", sid)
        if world.archive.find_record(target) is not None:
            items.append({"lang": "lg-nolan", "value": target.to_locator()})
    if items:
        current = world.archive.get_record(key)
        world.archive.update_record(
            key, {relations[0].tipo: items}, expected_version=current.version
        )


ReplyFn = Callable[[dict[str, Any]], dict[str, Any]]
"""Given the parsed request body, the next turn: ``{"text": ...}`` or ``{"calls": [...]}``."""


class ProbeServer:
    """A fake external chat-completions server recording every request body it receives."""

    def __init__(self, reply: ReplyFn) -> None:
        self.reply = reply
        self.bodies: list[bytes] = []

    def handler(self, request: httpx.Request) -> httpx.Response:
        """Record the body, answer with the next turn as an SSE stream."""
        self.bodies.append(bytes(request.content))
        turn = self.reply(json.loads(request.content))
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=sse_reply(turn)
        )

    def model(self, entry: ModelEntry) -> OpenAICompatibleModel:
        """The real provider, talking to this server."""
        client = httpx.AsyncClient(transport=httpx.MockTransport(self.handler))
        return OpenAICompatibleModel(entry, client=client, retry_delays=())

    def sent(self) -> str:
        """Every body received, decoded (JSON escapes resolved), joined."""
        return "\n".join(json.dumps(json.loads(body), ensure_ascii=False) for body in self.bodies)


def sse_reply(turn: dict[str, Any]) -> bytes:
    """A chat-completions stream for ``turn`` (text, or tool calls), ending in ``[DONE]``."""
    chunks: list[dict[str, Any]] = []
    if turn.get("text"):
        chunks.append({"choices": [{"delta": {"content": turn["text"]}}]})
    calls = turn.get("calls") or []
    for index, (name, args) in enumerate(calls):
        function = {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}
        chunks.append(
            {
                "choices": [
                    {
                        "delta": {
                            "tool_calls": [
                                {"index": index, "id": f"call_{index}", "function": function}
                            ]
                        }
                    }
                ]
            }
        )
    reason = "tool_calls" if calls else "stop"
    chunks.append({"choices": [{"delta": {}, "finish_reason": reason}]})
    lines = [f"data: {json.dumps(c, ensure_ascii=False)}\n\n" for c in chunks]
    return ("".join(lines) + "data: [DONE]\n\n").encode("utf-8")


def external_entry(model_id: str, *, tools: bool = True) -> ModelEntry:
    """A catalog entry for an external OpenAI-compatible model served by a probe."""
    return ModelEntry(
        id=model_id,
        label=model_id,
        provider="openai_compatible",
        model=model_id,
        endpoint="http://probe.invalid/v1",
        egress="external",
        supports_tools=tools,
        max_tokens=512,
    )
