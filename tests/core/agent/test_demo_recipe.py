"""The seed's write recipe on a demo interview, through the session, applied twice."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from app.core.agent.events import FinalEvent
from app.core.agent.request import ChatRequest
from app.core.archive import open_archive
from app.core.archive.model import RecordKey
from app.core.archive.write_switch import set_writes_allowed, writes_allowed
from app.core.errors import ArxiuError
from app.core.models.scripted import ScriptedModel, Turn, call
from app.core.session import AssistantSession
from app.core.tools.matching import find_matches
from app.core.tools.registry import build_registry
from tests.core.agent.conftest import collect, scripted_catalog
from tests.core.agent.test_plans import ANNA_QUESTION

INTERVIEW = RecordKey("oh1", 1)
DEMO_OPS: list[dict[str, Any]] = [
    {
        "op_id": "s1",
        "tool": "dedalo_find_or_create",
        "args": {"section_tipo": "tp1", "match": {"Name": "Súria"}},
        "summary": "Find or create the place Súria",
    },
    {
        "op_id": "p1",
        "tool": "dedalo_find_or_create",
        "args": {
            "section_tipo": "rsc197",
            "match": {"Full name": "Anna Pujol"},
            "set": {"Birth date": "1931"},
        },
        "summary": "Find or create person Anna Pujol",
    },
    {
        "op_id": "b1",
        "tool": "dedalo_portal_link",
        "args": {
            "section_tipo": "rsc197",
            "section_id": {"ref": "p1"},
            "field": "Birth place",
            "target": {"ref": "s1"},
        },
        "summary": "Born in Súria",
    },
    {
        "op_id": "l1",
        "tool": "dedalo_portal_link",
        "args": {
            "section_tipo": "oh1",
            "section_id": 1,
            "field": "Informant",
            "target": {"ref": "p1"},
        },
        "summary": "Link Anna Pujol as informant of this interview",
    },
]


async def test_the_recipe_on_a_demo_interview_creates_one_anna_pujol(
    demo_archive_dir: Path, tmp_path: Path
) -> None:
    folder = Path(shutil.copytree(demo_archive_dir, tmp_path / "demo"))
    model = ScriptedModel(id="local")
    model.extend(
        Turn(
            text="I'll find or create Anna Pujol and link her.",
            tool_calls=(call("propose_change_plan", {"summary": "Anna Pujol", "ops": DEMO_OPS}),),
        )
    )
    with open_archive(folder) as archive:
        assert not writes_allowed(archive)  # the demo's writes are off until turned on
        set_writes_allowed(archive, True)
        session = AssistantSession(
            archive, scripted_catalog(), registry=build_registry(), model_factory=lambda e: model
        )
        context = INTERVIEW.to_locator()
        events = await collect(
            await session.chat(
                ChatRequest.from_dict(
                    {"question": ANNA_QUESTION, "mode": "write", "context": context}
                )
            )
        )
        final = events[-1]
        assert isinstance(final, FinalEvent) and final.stop == "change_plan"
        pending = final.change_plan
        assert pending is not None
        plan = pending.to_dict()  # the wire form a client sends back
        tools = [op["tool"] for op in plan["ops"]]
        assert "dedalo_find_or_create" in tools and "dedalo_portal_link" in tools
        assert find_matches(archive, "rsc197", {"rsc84": "Anna Pujol"}) == []

        # oh1 is restricted in the demo: the run read it, and the plan writes into rsc197
        assert plan.get("restricted_text") is True
        with pytest.raises(ArxiuError) as unconfirmed:
            await session.plans.resolve(plan["pending_id"], True)
        assert unconfirmed.value.code == "mcp.plan_needs_confirmation"
        bare = {k: v for k, v in plan.items() if k != "pending_id"}
        with pytest.raises(ArxiuError) as by_hash:  # the other route needs it as well
            await session.plans.apply_posted(bare, plan["plan_hash"])
        assert by_hash.value.code == "mcp.plan_needs_confirmation"
        first = await session.plans.apply_posted(bare, plan["plan_hash"], confirm_restricted=True)
        with pytest.raises(ArxiuError) as again:  # and a plan applies once
            await session.plans.resolve(plan["pending_id"], True, confirm_restricted=True)
        assert again.value.code == "mcp.plan_resolved"
        assert first.ok
        (anna,) = find_matches(archive, "rsc197", {"rsc84": "Anna Pujol"})
        assert len(find_matches(archive, "tp1", {"tp2": "Súria"})) == 1
        informants = [i["value"] for i in archive.get_record(INTERVIEW).items("oh24")]
        assert informants.count(anna.to_locator()) == 1
        birthplace = archive.links_from(anna)
        assert [link.target.section_tipo for link in birthplace] == ["tp1"]
