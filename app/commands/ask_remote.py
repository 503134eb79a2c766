"""``arxiu ask --server URL``: the same question, answered by an Arxiu server.

The run streams over the Dédalo dialect (:class:`~app.api.client.DedaloClient`) and is printed
exactly as a local ``arxiu ask`` prints it (``--json-events`` included); a proposed plan gets
the same confirm card and is applied on the server only after the person types ``yes``.
The user comes from ``--user`` (or ``ARXIU_USER``), the password from ``ARXIU_PASSWORD`` or a
prompt. The server's Dédalo dialect sends ``thinking`` as an indicator only, so
``--json-events`` shows ``{state}`` frames without reasoning text.
"""

from __future__ import annotations

import getpass
import json
import os
import sys

from app.api.client import DedaloClient
from app.commands.ask_events import print_events
from app.commands.ask_plans import apply_summary, confirm_card, confirmed
from app.commands.cli_words import words
from app.commands.exits import EXIT_OK, exit_code
from app.core.agent.plan_types import ApplyReport, PendingPlan
from app.core.agent.request import ChatRequest
from app.core.errors import ArxiuError


def credentials(user: str | None) -> tuple[str, str]:
    """The user name and password to log in with."""
    name = user or os.environ.get("ARXIU_USER")
    if not name:
        raise ArxiuError(
            "request.invalid",
            "Name the server's user with --user (or ARXIU_USER).",
            hint="Ask the server's owner for an account (`arxiu users add`).",
            category="input",
        )
    password = os.environ.get("ARXIU_PASSWORD")
    if password is None:
        if not sys.stdin.isatty():
            raise ArxiuError(
                "request.invalid",
                "No password: set ARXIU_PASSWORD or run in a terminal.",
                hint="export ARXIU_PASSWORD=… before the command.",
                category="input",
            )
        password = getpass.getpass(words().password_for.format(name=name))
    return name, password


async def ask_remote(
    server: str, user: str | None, request: ChatRequest, *, json_events: bool
) -> int:
    """Stream one run from ``server``; confirm and apply a change plan if one is proposed."""
    name, password = credentials(user)
    async with DedaloClient(server) as client:
        await client.login(name, password)
        final, code = await print_events(client.stream(request.to_dict()), json_events=json_events)
        if final is not None and final.change_plan is not None:
            code = await confirm_remote(client, final.change_plan, json_events=json_events)
        return code


async def confirm_remote(client: DedaloClient, plan: PendingPlan, *, json_events: bool) -> int:
    """The confirm card; apply on the server only after ``yes`` (as local ``ask`` does)."""
    print(confirm_card(plan), file=sys.stderr, flush=True)
    approved, second = confirmed(plan)
    if not approved:
        print(words().cancelled, file=sys.stderr, flush=True)
        return EXIT_OK
    try:
        report = await client.apply(plan.to_dict(), plan.plan.plan_hash, confirm_restricted=second)
    except ArxiuError as error:
        if not json_events:
            raise
        envelope = {"ok": False, "error": error.to_dict()}
        print(json.dumps(envelope, ensure_ascii=False, default=str), file=sys.stderr, flush=True)
        return exit_code(error.category)
    if json_events:
        envelope = {"ok": True, "data": report}
        print(json.dumps(envelope, ensure_ascii=False, default=str), file=sys.stderr, flush=True)
    else:
        print(apply_summary(ApplyReport.from_dict(report)), flush=True)
    return EXIT_OK
