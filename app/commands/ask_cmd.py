"""``arxiu ask "question"``: ask the assistant from the terminal, streaming its answer.

The answer streams to stdout; tool activity, the model line and errors go to stderr. With
``--json-events`` every event is one line ``{"event": NAME, "data": {...}}`` on stdout, and
stdout holds nothing but the seed's events. With ``--write`` a proposed change plan is shown
as a confirm card (each op's tool and real arguments) on stderr and applied only after the
person types yes (``sí`` in Catalan and Spanish, ``yes`` in every language:
:func:`app.commands.ask_plans.is_yes`); the apply report goes to stdout as text, or — with
``--json-events`` — to
stderr as one line in the seed's apply response shape, ``{"ok": true, "data": {applied,
skipped, failed?, created}}`` (``{"ok": false, "error": {...}}`` when the plan is refused).
Writes need both the archive's switch (``arxiu archive set write_allowed true``) and the Settings
switch write mode (``write_mode`` in ``settings.json``); a plan that copies text from restricted
records into an open section needs a second ``yes``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from typing import TYPE_CHECKING, Any

from app.commands.ask_events import print_events
from app.commands.ask_plans import apply_summary, confirm_card, confirmed
from app.commands.cli_words import counted, labels_for, words
from app.commands.common import add_archive_argument, open_current
from app.commands.exits import EXIT_ENVIRONMENT, EXIT_OK, exit_code
from app.core import paths
from app.core.agent.plan_types import PendingPlan
from app.core.agent.request import ChatRequest, RecordContext, check_request
from app.core.archive.model import RecordKey
from app.core.errors import ArxiuError
from app.core.phrases import Phrase

if TYPE_CHECKING:
    from app.core.archive.store import Archive
    from app.core.index.opening import ArchiveIndex
    from app.core.session import AssistantSession


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``ask`` command."""
    parser = sub.add_parser("ask", help="ask the assistant a question about the archive")
    parser.add_argument("question", help="the question, in any language")
    parser.add_argument("--model", metavar="ID", help="model id (see `arxiu models list`)")
    parser.add_argument(
        "--write",
        action="store_true",
        help="write mode: propose a change plan, shown as a confirm card on stderr, applied "
        "only after you type yes",
    )
    parser.add_argument(
        "--context", metavar="SECTION/ID", help="the record the question is about ('this record')"
    )
    parser.add_argument(
        "--json-events",
        action="store_true",
        help='print each event as one {"event", "data"} JSON line; stdout then holds only '
        "events (with --write, the confirm card goes to stderr, and so does the apply report, "
        'as one {"ok": true, "data": {...}} line)',
    )
    add_archive_argument(parser)
    parser.add_argument(
        "--server",
        metavar="URL",
        help="ask an Arxiu server (arxiu serve) instead of the local archive; same output",
    )
    parser.add_argument(
        "--user", metavar="NAME", help="with --server: the user (password: ARXIU_PASSWORD)"
    )
    parser.set_defaults(func=run_ask)


def run_ask(args: argparse.Namespace) -> int:
    """Run one question; the exit code is 0 for an answer, 2/3 for a known error (see
    :mod:`app.commands.exits`); a bug in the run is raised on, after its partial answer is kept."""
    request = ChatRequest(
        args.question,
        model=args.model or None,
        context=parse_context(args.context) if args.context else None,
        mode="write" if args.write else "read",
    )
    surrogate_safe_output()
    if getattr(args, "server", None):
        from app.commands.ask_remote import ask_remote

        return asyncio.run(
            ask_remote(args.server, args.user, request, json_events=args.json_events)
        )
    with open_current(args) as archive:
        if request.context is not None:
            require_context(archive, request.context)
        return asyncio.run(ask_locally(archive, request, json_events=args.json_events))


def require_context(archive: Archive, context: RecordContext) -> None:
    """Refuse ``--context`` naming a record the archive does not hold (the question would be
    asked about a record that is not there).

    Raises:
        ArxiuError: ``request.invalid``.
    """
    key = RecordKey(context.section_tipo, context.section_id)
    if archive.find_record(key) is None:
        raise ArxiuError(
            "request.invalid",
            Phrase.of("The archive has no record {key}.", key=str(key)),
            hint="`arxiu records list SECTION` lists a section's records.",
            category="input",
        )


async def ask_locally(archive: Archive, request: ChatRequest, *, json_events: bool) -> int:
    """Open the index on a thread while the request's model loads, then ask.

    A cold ``arxiu ask`` pays for the index (its embedding models load on the first search)
    and for the chat model (a llama.cpp child process); neither needs the other, so the
    model's load starts first (:func:`start_model_load`) and runs alongside the index opening
    and the search.
    """
    session = new_session(archive, json_events=json_events)
    loading = start_model_load(session, request)
    try:
        index = await asyncio.to_thread(open_index, archive, quiet=json_events)
        try:
            session.searcher = index
            return await ask_session(session, request, json_events=json_events)
        finally:
            await asyncio.to_thread(index.close)
    finally:
        if loading is not None:
            await loading  # a run that needed no model: let its load end before closing it
        await session.aclose()


def surrogate_safe_output() -> None:
    """Let stdout/stderr print any text: a lone surrogate (``\\ud800``, which UTF-8 cannot
    encode) is written as its escape instead of ending the run mid-answer with a traceback;
    in a ``--json-events`` line that escape is the same JSON string."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def parse_context(text: str) -> RecordContext:
    """``SECTION/ID`` as a request context."""
    try:
        key = RecordKey.parse(text)
    except ValueError as error:
        raise ArxiuError(
            "request.invalid", str(error), hint="Write it as oh1/3.", category="input"
        ) from error
    return RecordContext(key.section_tipo, key.section_id)


def open_index(archive: Archive, *, quiet: bool) -> ArchiveIndex:
    """The archive's index (a folder's, or a shared archive's in its server), brought up to
    date first (a fresh install indexes the demo)."""
    from app.core.index.opening import open_index as open_archive_index

    index = open_archive_index(archive)
    pending = index.pending()
    if pending:
        if not quiet:
            print(counted(words().indexing_first, pending), file=sys.stderr, flush=True)
        index.index_now()
    return index


def new_session(archive: Archive, *, json_events: bool = False) -> AssistantSession:
    """The CLI's assistant session over ``archive`` (its searcher set by the caller); its
    tools summarise their calls in the CLI's language (English in ``--json-events``, the same
    in every language, as ``--json`` is)."""
    from app.core.session import AssistantSession, AssistantSettings

    settings = AssistantSettings(write_allowed=app_write_mode(), lang=labels_for(json_events))
    return AssistantSession(archive, settings=settings)


def start_model_load(session: AssistantSession, request: ChatRequest) -> asyncio.Task[None] | None:
    """Start loading the model ``request`` will use, as a task (``None``: nothing to load,
    or the request is invalid: the run itself then reports why)."""
    try:
        entry = check_request(request, session.catalog, write_allowed=session.write_allowed).entry
    except ArxiuError:
        return None
    load = getattr(session.model(entry), "load", None)
    if load is None:
        return None
    return asyncio.create_task(_quiet_load(load))


async def _quiet_load(load: Any) -> None:
    """Await ``load()``; a failure is left for the run to meet (and report) again."""
    with contextlib.suppress(ArxiuError):
        await load()


async def ask_session(session: AssistantSession, request: ChatRequest, *, json_events: bool) -> int:
    """Stream one run of ``session``; confirm and apply a change plan if one is proposed
    (the caller closes the session)."""
    final, code = await print_events(await session.chat(request), json_events=json_events)
    if final is not None and final.change_plan is not None:
        code = await confirm_and_apply(session, final.change_plan, json_events=json_events)
    return code


def app_write_mode() -> bool:
    """The Settings switch "write mode" (``write_mode`` in ``settings.json``; on when unset).

    Writes also need the archive's own switch (``arxiu archive set write_allowed true``).
    """
    try:
        data = json.loads(paths.settings_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return True
    return not (isinstance(data, dict) and data.get("write_mode") is False)


async def confirm_and_apply(
    session: AssistantSession, plan: PendingPlan, *, json_events: bool
) -> int:
    """Show the confirm card; apply only when the person types ``yes``; the exit code.

    With ``json_events`` stdout stays events-only: the report (or the refusal) is one JSON line
    on stderr in the seed's apply response shape.

    Raises:
        ArxiuError: without ``json_events``, when the plan is refused as a whole.
    """
    print(confirm_card(plan), file=sys.stderr, flush=True)
    approved, second = confirmed(plan)
    try:
        report = await session.plans.resolve(plan.pending_id, approved, confirm_restricted=second)
    except ArxiuError as error:
        if not json_events:
            raise
        envelope = {"ok": False, "error": error.to_dict()}
        print(json.dumps(envelope, ensure_ascii=False, default=str), file=sys.stderr, flush=True)
        return exit_code(error.category)
    if report is None:
        print(words().cancelled, file=sys.stderr, flush=True)
    elif json_events:
        envelope = {"ok": True, "data": report.to_dict()}
        print(json.dumps(envelope, ensure_ascii=False, default=str), file=sys.stderr, flush=True)
    else:
        print(apply_summary(report), flush=True)
    return EXIT_OK if report is None or report.ok else EXIT_ENVIRONMENT
