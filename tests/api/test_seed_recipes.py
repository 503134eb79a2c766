# ruff: noqa: E501  (the seed's recipes are quoted verbatim, long lines included)
"""Seed 000's integrator recipes, run as written: the curl steps 1-4 and ``askAssistant`` (node).

Only the seed's placeholders change: the API URL (``localhost`` on the test server's port),
USER and PASS; ``<the change_plan>`` is the plan the write turn returned.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from app.api.context import ApiContext
from app.core.models.scripted import ScriptedModel, Turn, call
from tests.api.conftest import Live, password, sse_events
from tests.core.agent.test_plans import ANNA_OPS

JS = Path(__file__).parent / "js" / "ask_assistant.mjs"

STEP_1 = r"""
API=http://localhost:PORT/dedalo/core/api/v1/json/     # dev TCP port; production goes through the proxy/socket
COOKIE=$(mktemp)

CSRF=$(curl -s -c "$COOKIE" -X POST "$API" \
  -H 'Content-Type: application/json' \
  -d '{"action":"login","dd_api":"dd_utils_api","options":{"username":"USER","auth":"PASS"}}' \
  | python3 -c 'import sys,json; print(json.load(sys.stdin)["csrf_token"])')
"""

STEP_2 = r"""
curl -s -b "$COOKIE" -X POST "$API" \
  -H 'Content-Type: application/json' -H "X-Dedalo-Csrf-Token: $CSRF" \
  -d '{"action":"agent_models","dd_api":"dd_mcp_api","options":{}}'
"""

STEP_3 = r"""
curl -s -N -b "$COOKIE" -X POST "$API" \
  -H 'Content-Type: application/json' -H 'Accept: text/event-stream' \
  -H "X-Dedalo-Csrf-Token: $CSRF" \
  -d '{
        "action": "agent_chat_stream",
        "dd_api": "dd_mcp_api",
        "options": {
          "question": "what sections can I search?",
          "model": "local",
          "context": { "section_tipo": "oh1", "section_id": 1, "mode": "edit" }
        }
      }'
"""

WRITE_TURN = r"""
curl -s -N -b "$COOKIE" -X POST "$API" \
  -H 'Content-Type: application/json' -H 'Accept: text/event-stream' \
  -H "X-Dedalo-Csrf-Token: $CSRF" \
  -d '{"action":"agent_chat_stream","dd_api":"dd_mcp_api","options":{"question":"Create a person record for Anna Pujol","mode":"write"}}'
"""

STEP_4 = r"""
curl -s -b "$COOKIE" -X POST "$API" \
  -H 'Content-Type: application/json' -H "X-Dedalo-Csrf-Token: $CSRF" \
  -d '{"action":"agent_apply","dd_api":"dd_mcp_api","options":{"plan": <the change_plan>, "plan_hash":"…sha256…"}}'
"""


def _run(live: Live, user: str, *steps: str) -> str:
    port = live.url.rsplit(":", 1)[1]
    script = "set -e\n" + STEP_1.replace("PORT", port).replace("USER", user)
    script = script.replace("PASS", password(user)) + "".join(steps)
    done = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


needs_curl = pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")


@needs_curl
def test_steps_1_to_3_as_written(live: Live, models: dict[str, ScriptedModel]) -> None:
    models["local"].extend(
        Turn(tool_calls=(call("dedalo_list_sections"),)),
        Turn(text="You can search these sections: Oral histories, People."),
    )
    out = _run(live, "reader", STEP_2, 'echo "<<END-OF-STEP-2>>"', STEP_3)
    listing, stream = out.split("<<END-OF-STEP-2>>\n")
    models_answer = json.loads(listing)
    assert models_answer["result"] is True and models_answer["data"]["write_allowed"] is False
    assert models_answer["data"]["models"][0]["id"] == "local"
    events = sse_events(stream)
    assert events[0] == ("start", {"model": "local", "mode": "read", "egress": "local"})
    assert events[-1][0] == "final"
    assert events[-1][1]["answer"] == "You can search these sections: Oral histories, People."


@needs_curl
def test_step_4_applies_the_plan_of_a_write_turn(
    live: Live, models: dict[str, ScriptedModel], ctx: ApiContext
) -> None:
    models["local"].extend(
        Turn(tool_calls=(call("propose_change_plan", {"summary": "Anna", "ops": ANNA_OPS}),))
    )
    stream = _run(live, "writer", WRITE_TURN)
    final = sse_events(stream)[-1]
    assert final[0] == "final" and final[1]["stop"] == "change_plan"
    plan: dict[str, Any] = final[1]["change_plan"]
    step_4 = STEP_4.replace("<the change_plan>", json.dumps(plan)).replace(
        "…sha256…", plan["plan_hash"]
    )
    report = json.loads(_run(live, "writer", step_4))
    assert report["ok"] is True and report["request_id"]
    assert [a["op_id"] for a in report["data"]["data"]["applied"]] == ["p1", "l1"]
    assert set(report["data"]["data"]["created"]) == {"p1"}
    assert report["data"]["data"]["skipped"] == []
    assert ctx.open_archive().count_records("rsc197") == 2


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_seeds_ask_assistant_runs_unchanged_under_node(
    live: Live, models: dict[str, ScriptedModel]
) -> None:
    models["local"].extend(
        Turn(tool_calls=(call("dedalo_list_sections"),)),
        Turn(text="Oral histories and people."),
        Turn(text="People: Pere Serra."),
    )
    env = {
        **os.environ,
        "ARXIU_URL": live.url,
        "ARXIU_USER": "reader",
        "ARXIU_PASS": password("reader"),
    }
    done = subprocess.run(
        ["node", str(JS)], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    first, second, refused = result["first"], result["second"], result["refused"]
    assert "".join(first["deltas"]) == "Oral histories and people." == first["final"]["answer"]
    assert [t["name"] for t in first["tools"]] == ["dedalo_list_sections"]
    assert first["errors"] == []
    assert [h["role"] for h in second["final"]["history"]] == ["user", "assistant"] * 2
    assert second["final"]["answer"] == "People: Pere Serra."
    assert refused["final"] is None
    assert len(refused["errors"]) == 1 and refused["errors"][0]["code"] == "denied"
    assert "no-such-model" in refused["errors"][0]["message"]  # env.msg of the envelope
