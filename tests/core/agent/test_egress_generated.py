"""Generated egress suite: random archives, random tool traffic, 0 restricted strings sent out.

Each example builds a random archive (see :mod:`tests.core.agent.egress_world`) and plays a
random conversation on it: runs on a local scripted model that reads restricted records and
repeats what it saw (so its answers carry restricted text), and runs on an external model — the
real OpenAI-compatible provider talking to a probe server that records every request body —
whose scripted turns call every read, search and discovery tool (and write tools, and change
plans in write mode) with random arguments: real and missing records, restricted and open
sections, labels, filter paths across relations, media. Runs may carry the current record as
context (with its text as summary). The external model finally writes citations of random
records, restricted ones included.

Checked on every example: no request body holds a restricted string (record values, labels
derived from them, media hashes, error messages, context summaries, earlier tainted answers);
no citation of a restricted record is verified on an external run; every answer that a local
run built on restricted text — or on a history that held it — is stored tainted.

The short variant runs in the normal suite; the long one (``-m slow``) generates ≥ 10,000
external tool calls. Both print their counts.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.agent.conversation_types import Conversation as StoredConversation
from app.core.agent.events import Event, FinalEvent, ToolUseEvent
from app.core.agent.request import ChatRequest
from app.core.archive.model import RecordKey
from app.core.errors import ArxiuError
from app.core.index.embedders import HashingEmbedder
from app.core.index.service import Index
from app.core.models.base import Message
from app.core.models.catalog import Catalog, ModelEntry
from app.core.models.scripted import ScriptedModel, Turn, call
from app.core.session import AssistantSession, AssistantSettings
from app.core.tools.registry import build_registry
from tests.core.agent.egress_world import (
    LABELS,
    RESTRICTED_MARK,
    WORDS,
    ArchivePlan,
    ProbeServer,
    World,
    archives,
    build,
    external_entry,
)

READ_TOOLS = (
    "dedalo_read_record",
    "dedalo_search_records",
    "dedalo_count_records",
    "dedalo_search_section",
    "dedalo_get_media_info",
    "dedalo_semantic_search",
    "dedalo_retrieve_passages",
)
STRUCTURE_TOOLS = (
    "dedalo_list_sections",
    "dedalo_describe_section",
    "dedalo_resolve",
    "dedalo_resolve_path",
    "dedalo_describe_node",
)
WRITE_TOOLS = ("dedalo_set_field", "dedalo_delete_record", "dedalo_create_record")
SHORT_EXAMPLES = 20
LONG_EXAMPLES = 100
"""Examples per round of the long variant; rounds repeat until it reaches ``LONG_MIN_CALLS``."""
LONG_MIN_CALLS = 10_000
REGISTRY = build_registry()


@dataclass
class Counts:
    """Figures of one suite run."""

    examples: int = 0
    runs: int = 0
    external_calls: int = 0
    local_calls: int = 0
    bodies: int = 0
    leaks: list[str] = field(default_factory=list)

    def line(self, name: str) -> str:
        """The printed summary."""
        return (
            f"{name}: {self.examples} archives, {self.runs} runs, {self.external_calls} external "
            f"tool calls ({self.local_calls} local), {self.bodies} request bodies, "
            f"{len(self.leaks)} leaks"
        )


# -- drawing calls ---------------------------------------------------------------------------
def _tipo(data: st.DataObject, plan: ArchivePlan) -> str:
    sections = [f"s{n}" for n in range(len(plan.sections))]
    labels = [label for _, _, labels in plan.sections for label in labels.values()]
    return data.draw(st.sampled_from([*sections, *sections, *labels, "zz9"]))


def _field(data: st.DataObject, plan: ArchivePlan) -> str:
    tipos = [f.tipo for fields in plan.fields for f in fields]
    return data.draw(st.sampled_from([*tipos, *LABELS]))


def _sid(data: st.DataObject) -> int:
    return data.draw(st.sampled_from([1, 1, 2, 2, 3, 4, 5, 999]))


def _path(data: st.DataObject, plan: ArchivePlan) -> list[str]:
    start = data.draw(st.integers(0, len(plan.sections) - 1))
    path = [f"s{start}"]
    fields = plan.fields[start]
    fld = data.draw(st.sampled_from(fields))
    path.append(fld.tipo)
    if fld.target and data.draw(st.booleans()):
        target = int(fld.target[1:])
        path += [fld.target, data.draw(st.sampled_from(plan.fields[target])).tipo]
    return path


def _filter(data: st.DataObject, plan: ArchivePlan) -> dict[str, Any]:
    word = data.draw(st.sampled_from(WORDS))
    if data.draw(st.booleans()):
        return {"path": _path(data, plan), "op": "contains", "value": word}
    op = data.draw(st.sampled_from(["exists", "contains", "missing"]))
    out: dict[str, Any] = {"field": _field(data, plan), "op": op}
    if op == "contains":
        out["value"] = word
    return out


def draw_call(data: st.DataObject, plan: ArchivePlan) -> tuple[str, dict[str, Any]]:
    """One random tool call against the planned archive."""
    name = data.draw(st.sampled_from([*READ_TOOLS, *READ_TOOLS, *STRUCTURE_TOOLS, *WRITE_TOOLS]))
    record = {"section_tipo": _tipo(data, plan), "section_id": _sid(data)}
    query = " ".join(data.draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)))
    args: dict[str, Any]
    match name:
        case "dedalo_read_record":
            args = {**record}
            if data.draw(st.booleans()):
                args["fields"] = [_field(data, plan)]
        case "dedalo_search_records" | "dedalo_count_records":
            filters = data.draw(st.lists(st.just(None), max_size=2))
            args = {
                "section_tipo": _tipo(data, plan),
                "filters": [_filter(data, plan) for _ in filters],
            }
        case "dedalo_search_section":
            args = {"section_tipo": _tipo(data, plan), "query": query}
        case "dedalo_semantic_search":
            args = {"query": query}
            if data.draw(st.booleans()):
                args["sections"] = [_tipo(data, plan)]
        case "dedalo_retrieve_passages":
            args = {**record, "query": query} if data.draw(st.booleans()) else record
        case "dedalo_describe_section":
            args = {"section_tipo": _tipo(data, plan)}
        case "dedalo_resolve":
            args = {"name": data.draw(st.sampled_from([*LABELS, "s0", "Section 1"]))}
        case "dedalo_resolve_path":
            args = {"path": " > ".join(_path(data, plan))}
        case "dedalo_describe_node":
            args = {"tipo": data.draw(st.sampled_from([_tipo(data, plan), _field(data, plan)]))}
        case "dedalo_set_field":
            args = {**record, "field": _field(data, plan), "value": query}
        case "dedalo_create_record":
            args = {"section_tipo": _tipo(data, plan), "values": {_field(data, plan): query}}
        case _:
            args = record if name != "dedalo_list_sections" else {}
    return name, args


def draw_plan(data: st.DataObject, plan: ArchivePlan) -> dict[str, Any]:
    """A random change plan naming random records (restricted, open and missing)."""
    ops = []
    for number in range(data.draw(st.integers(1, 3))):
        record = {"section_tipo": _tipo(data, plan), "section_id": _sid(data)}
        tool = data.draw(st.sampled_from(["dedalo_set_field", "dedalo_portal_link"]))
        args: dict[str, Any] = {**record, "field": _field(data, plan)}
        if tool == "dedalo_set_field":
            args["value"] = data.draw(st.sampled_from(WORDS))
        else:
            args["target"] = {"section_tipo": _tipo(data, plan), "section_id": _sid(data)}
        ops.append({"op_id": f"o{number}", "tool": tool, "args": args, "summary": "change"})
    return {"summary": "A random change", "ops": ops}


# -- the conversation ------------------------------------------------------------------------
@dataclass
class RunPlan:
    """One run of the conversation."""

    model: str
    mode: str
    turns: list[list[tuple[str, dict[str, Any]]]]
    context: tuple[str, int] | None
    repeat: bool
    """For a local run: answer by repeating the last answer (no tool call)."""
    citations: list[tuple[str, int]]


@dataclass(frozen=True)
class Size:
    """How big a generated conversation may be."""

    runs: int
    turns: int
    calls: int


SHORT = Size(runs=4, turns=3, calls=4)
LONG = Size(runs=8, turns=10, calls=6)


def draw_runs(data: st.DataObject, plan: ArchivePlan, size: Size) -> list[RunPlan]:
    """A random conversation mixing local and external runs."""
    runs = []
    for _ in range(data.draw(st.integers(2, size.runs))):
        model = data.draw(st.sampled_from(["local", "probe", "probe", "probe", "probe-small"]))
        mode = "write" if model == "probe" and data.draw(st.booleans()) else "read"
        count = data.draw(st.integers(1, size.turns))
        calls = [
            [draw_call(data, plan) for _ in range(data.draw(st.integers(1, size.calls)))]
            for _ in range(count)
        ]
        if mode == "write":
            calls.append([("propose_change_plan", draw_plan(data, plan))])
        context = (_tipo(data, plan), _sid(data)) if data.draw(st.booleans()) else None
        cites = [(f"s{data.draw(st.integers(0, 3))}", _sid(data)) for _ in range(3)]
        repeat = model == "local" and data.draw(st.booleans())
        runs.append(RunPlan(model, mode, calls, context, repeat, cites))
    return runs


class Conversation:
    """Plays one conversation's runs on a world and checks every invariant."""

    def __init__(self, world: World, counts: Counts) -> None:
        self.world = world
        self.counts = counts
        self.server = ProbeServer(self._reply)
        self.local = ScriptedModel(id="local")
        self.queue: list[dict[str, Any]] = []
        entries = (
            ModelEntry(id="local", label="local", provider="scripted", model="local", default=True),
            external_entry("probe"),
            external_entry("probe-small", tools=False),
        )
        self.catalog = Catalog(entries)

    def _reply(self, body: dict[str, Any]) -> dict[str, Any]:
        return self.queue.pop(0) if self.queue else {"text": "done"}

    def model_for(self, entry: ModelEntry) -> Any:
        """The scripted local model, or the real provider on the probe server."""
        return self.local if entry.id == "local" else self.server.model(entry)

    async def play(self, runs: list[RunPlan], external_content: bool) -> None:
        """Run every planned run in one stored conversation."""
        index = Index(self.world.archive, HashingEmbedder())
        index.index_now()
        session = AssistantSession(
            self.world.archive,
            self.catalog,
            index,
            AssistantSettings(external_content=external_content, write_allowed=True),
            registry=REGISTRY,
            model_factory=self.model_for,
        )
        try:
            cid = (await session.conversations.new()).id
            for run in runs:
                await self._run(session, cid, run)
            self._check_taint(await session.conversations.get(cid))
        finally:
            await session.aclose()
            index.close()
        self.counts.bodies += len(self.server.bodies)
        self.counts.leaks += self.world.leaks(self.server.sent())

    async def _run(self, session: AssistantSession, cid: str, run: RunPlan) -> None:
        cites = " ".join(f"Record ({tipo}/{sid})" for tipo, sid in run.citations)
        if run.model == "local":
            steps: list[Any] = [Turn(tool_calls=tuple(_calls(t))) for t in run.turns]
            self.local.script = [_repeat] if run.repeat else [*steps, _echo]
        else:
            self.queue = [{"calls": t} for t in run.turns] + [{"text": f"Answer. {cites}"}]
        request: dict[str, Any] = {"question": "tell me", "model": run.model, "mode": run.mode}
        if run.context is not None and run.context[0].startswith("s"):
            request["context"] = self._context(*run.context)
        events = [
            e async for e in await session.chat(ChatRequest.from_dict(request), conversation_id=cid)
        ]
        self.counts.runs += 1
        calls = sum(isinstance(e, ToolUseEvent) for e in events)
        calls += sum(name == "propose_change_plan" for t in run.turns for name, _ in t)
        if run.model == "local":
            self.counts.local_calls += calls
        else:
            self.counts.external_calls += calls
            self._check_citations(events)

    def _context(self, tipo: str, sid: int) -> dict[str, Any]:
        from app.core.archive.model import RecordKey

        found = self.world.archive.find_record(RecordKey(tipo, sid))
        summary = "" if found is None else " ".join(str(v) for v in found.values.values())
        return {"section_tipo": tipo, "section_id": sid, "summary": summary[:1500]}

    def _check_citations(self, events: list[Event]) -> None:
        final = events[-1]
        if not isinstance(final, FinalEvent):
            return
        for cited in final.citations:
            key = cited.key
            if cited.verified and key in self.world.restricted:
                self.counts.leaks.append(f"verified restricted citation {key}")

    def _check_taint(self, conversation: StoredConversation) -> None:
        seen_taint = False
        for entry in conversation.history:
            if entry["role"] != "assistant":
                continue
            seen_taint = seen_taint or bool(entry.get("tainted"))
            if self.world.leaks(entry["text"]) and not entry.get("tainted"):
                self.counts.leaks.append("untainted answer holds restricted text")


def _calls(turn: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    return [call(name, args, f"l{n}") for n, (name, args) in enumerate(turn) if name in REGISTRY]


def _echo(messages: list[Message]) -> Turn:
    """A local model repeating every tool result it saw (restricted text included)."""
    seen = [m.content for m in messages if m.role == "tool"]
    return Turn(text=("I read: " + " | ".join(seen))[:4000], chunk_size=400)


def _repeat(messages: list[Message]) -> Turn:
    """A local model answering "say that again" from history, with no tool call."""
    earlier = [m.content for m in messages if m.role == "assistant" and m.content]
    return Turn(text=earlier[-1] if earlier else "nothing yet", chunk_size=400)


def _scenario(data: st.DataObject, counts: Counts, size: Size) -> None:
    plan = data.draw(archives())
    world = build(plan)
    try:
        runs = draw_runs(data, plan, size)
        external_content = data.draw(st.booleans())
        asyncio.run(Conversation(world, counts).play(runs, external_content))
    finally:
        world.close()
    counts.examples += 1
    assert counts.leaks == [], counts.leaks


SETTINGS = {
    "deadline": None,
    "database": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}


def test_no_restricted_string_reaches_an_external_model_short(
    capsys: pytest.CaptureFixture[str],
) -> None:
    counts = Counts()

    @settings(max_examples=SHORT_EXAMPLES, derandomize=True, **SETTINGS)  # type: ignore[arg-type]
    @given(st.data())
    def check(data: st.DataObject) -> None:
        _scenario(data, counts, SHORT)

    check()
    with capsys.disabled():
        print("\n" + counts.line("egress (short)"))
    assert counts.external_calls > 0 and counts.leaks == []


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_no_restricted_string_reaches_an_external_model_long(
    capsys: pytest.CaptureFixture[str],
) -> None:
    counts = Counts()

    @settings(max_examples=LONG_EXAMPLES, **SETTINGS)  # type: ignore[arg-type]
    @given(st.data())
    def check(data: st.DataObject) -> None:
        _scenario(data, counts, LONG)

    while counts.external_calls < LONG_MIN_CALLS:
        check()
    with capsys.disabled():
        print("\n" + counts.line("egress (long)"))
    assert counts.leaks == []
    assert counts.external_calls >= LONG_MIN_CALLS


# -- rights on what a plan changes (issue 22, item 3) ---------------------------------------
# Every op shape that changes, unlinks, links, deletes or finds a record, on every record of a
# random archive (open and restricted, linked from both), by a writer without the restricted
# right: proposed by a run of that writer (a local model, guarded as external for the reader)
# and applied if proposed, and also run directly as an apply's op runs (``exclude_restricted``,
# the apply-time wall). No restricted record may change, and no response (events, what the
# model was sent, reports, errors) may name a restricted record the op did not name itself.
RIGHTS_EXAMPLES = 8


@dataclass
class RightsCounts:
    """Figures of the rights suite."""

    archives: int = 0
    plans: int = 0
    proposed: int = 0
    applied_ops: int = 0
    refused_ops: int = 0
    restricted_writes: list[str] = field(default_factory=list)
    restricted_ids: list[str] = field(default_factory=list)

    def line(self) -> str:
        """The printed summary."""
        return (
            f"rights: {self.archives} archives, {self.plans} plans by a writer without the "
            f"restricted right ({self.proposed} proposed), {self.applied_ops} ops applied, "
            f"{self.refused_ops} refused, {len(self.restricted_writes)} restricted writes, "
            f"{len(self.restricted_ids)} restricted ids in responses"
        )


def _relation_ops(world: World, key: RecordKey, base: dict[str, Any]) -> list[Any]:
    archive = world.archive
    ops: list[Any] = []
    for fld in archive.fields(key.section_tipo):
        if fld.kind != "relation" or not fld.target_section:
            continue
        ops.append(("dedalo_set_field", {**base, "field": fld.tipo, "value": None}))
        ops.append(("dedalo_save_component", {**base, "field": fld.tipo, "items": []}))
        for link in archive.links_from(key):
            if link.field_tipo == fld.tipo:
                target = {"target": link.target.to_locator(), "field": fld.tipo}
                ops.append(("dedalo_portal_unlink", {**base, **target}))
        others = sorted(
            k for k in world.open | world.restricted if k.section_tipo == fld.target_section
        )
        for other in others[:2]:
            target = {"target": other.to_locator(), "field": fld.tipo}
            ops.append(("dedalo_portal_link", {**base, **target}))
    return ops


def rights_ops(world: World) -> list[tuple[str, dict[str, Any]]]:
    """Every op shape on every record of ``world`` that still exists."""
    ops: list[Any] = []
    for key in sorted(world.open | world.restricted):
        record = world.archive.find_record(key)
        if record is None:
            continue
        base = key.to_locator()
        ops += [
            ("dedalo_delete_record", {**base, "unlink": False}),
            ("dedalo_delete_record", {**base, "unlink": True}),
            ("dedalo_duplicate_record", base),
            ("dedalo_set_field", {**base, "field": f"{key.section_tipo}f0", "value": "changed"}),
            *_relation_ops(world, key, base),
        ]
        title = record.text(f"{key.section_tipo}f0", "lg-eng")
        if title:
            match = {"match": {f"{key.section_tipo}f0": title}}
            ops.append(("dedalo_find_or_create", {"section_tipo": key.section_tipo, **match}))
    return ops


def _named(args: dict[str, Any]) -> set[RecordKey]:
    from app.core.agent.egress import record_locators

    return set(record_locators(args))


class RightsPlay:
    """Plays :func:`rights_ops` on one world as a writer without the restricted right."""

    def __init__(self, world: World, counts: RightsCounts) -> None:
        self.world = world
        self.counts = counts
        for section in world.archive.sections():  # every section open to writes: only the
            world.archive.put_section(dataclasses.replace(section, writable=True))  # right holds
        self.local = ScriptedModel(id="local")
        entry = ModelEntry(id="local", label="local", provider="scripted", model="local")
        self.session = AssistantSession(
            world.archive,
            Catalog((entry,)),
            None,
            AssistantSettings(write_allowed=True, can_read_restricted=False),
            registry=REGISTRY,
            model_factory=lambda _: self.local,
        )

    def _snapshot(self) -> dict[RecordKey, Any]:
        found = {}
        for key in self.world.restricted:
            record = self.world.archive.find_record(key)
            found[key] = None if record is None else (record.version, record.values)
        return found

    def _check(self, before: dict[RecordKey, Any], text: str, args: dict[str, Any]) -> None:
        after = self._snapshot()
        self.counts.restricted_writes += [
            f"{k} changed by {args}" for k in before if before[k] != after[k]
        ]
        named = _named(args)
        for key in self.world.restricted - named:
            tipo, sid = key.section_tipo, key.section_id
            pattern = rf'\b{tipo}/{sid}\b|"section_tipo": "{tipo}", "section_id": {sid}\b'
            if re.search(pattern, text):
                self.counts.restricted_ids.append(f"{key} in the answer to {args}")
        op_text = json.dumps(args, ensure_ascii=False).lower()
        leaks = [s for s in self.world.leaks(text) if s.lower() not in op_text]
        self.counts.restricted_ids += [
            f"{s} in the answer to {args}" for s in leaks if s != RESTRICTED_MARK
        ]

    async def propose(self, tool: str, args: dict[str, Any]) -> None:
        """The writer's run proposes the op; applied by its pending id if proposed."""
        plan = {
            "summary": "Change",
            "ops": [{"op_id": "o1", "tool": tool, "args": args, "summary": "x"}],
        }
        self.local.script = [
            Turn(tool_calls=(call("propose_change_plan", plan, "p"),)),
            Turn(text="ok"),
        ]
        self.local.calls.clear()
        before = self._snapshot()
        events = [
            e
            async for e in await self.session.chat(
                ChatRequest.from_dict({"question": "change", "mode": "write"})
            )
        ]
        shown = [json.dumps(e.to_dict(), ensure_ascii=False, default=str) for e in events]
        shown += [m.content for c in self.local.calls for m in c.messages if m.role == "tool"]
        final = events[-1]
        if isinstance(final, FinalEvent) and final.change_plan is not None:
            self.counts.proposed += 1
            try:
                report = await self.session.plans.resolve(str(final.change_plan.pending_id), True)
                done = None if report is None else report.to_dict()
                shown.append(json.dumps(done, ensure_ascii=False, default=str))
            except ArxiuError as error:
                shown.append(json.dumps(error.to_dict(), ensure_ascii=False, default=str))
        self.counts.plans += 1
        self._check(before, "\n".join(shown), args)

    async def apply_op(self, tool: str, args: dict[str, Any]) -> None:
        """The op run as an apply of this writer runs it (the tools' own wall)."""
        from app.core.tools.base import ToolContext

        context = ToolContext(
            archive=self.world.archive, exclude_restricted=True, audit={"actor": "t"}
        )
        before = self._snapshot()
        result = await REGISTRY.call(tool, args, context)
        self.counts.applied_ops += result.ok
        self.counts.refused_ops += not result.ok
        payload = {**result.to_model_payload(), "details": result.details}
        self._check(before, json.dumps(payload, ensure_ascii=False, default=str), args)

    async def play(self) -> None:
        """Every op, proposed then (on what is left) applied directly."""
        try:
            for tool, args in rights_ops(self.world):
                await self.propose(tool, args)
            for tool, args in rights_ops(self.world):
                await self.apply_op(tool, args)
        finally:
            await self.session.aclose()


def test_a_writer_without_the_restricted_right_never_touches_or_learns_a_restricted_record(
    capsys: pytest.CaptureFixture[str],
) -> None:
    counts = RightsCounts()

    @settings(max_examples=RIGHTS_EXAMPLES, derandomize=True, **SETTINGS)  # type: ignore[arg-type]
    @given(archives())
    def check(plan: ArchivePlan) -> None:
        world = build(plan)
        try:
            asyncio.run(RightsPlay(world, counts).play())
        finally:
            world.close()
        counts.archives += 1

    check()
    with capsys.disabled():
        print("\n" + counts.line())
    assert counts.plans > 0 and counts.applied_ops > 0
    assert counts.restricted_writes == [] and counts.restricted_ids == []
