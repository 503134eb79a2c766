"""A value the assistant writes in Catalan is stored as Catalan, not in the UI's language: the
run's plan names the language (guessed from the text, else from the question), the confirm
card shows it, and Apply replaces only that language's value (on the demo archive)."""

from __future__ import annotations

import shutil
from pathlib import Path

from app.core.agent.events import FinalEvent
from app.core.agent.plan_preview import plan_previews
from app.core.agent.request import ChatRequest
from app.core.archive import RecordKey, open_archive
from app.core.archive.write_switch import set_writes_allowed
from app.core.json_types import JsonValue
from app.core.models.scripted import ScriptedModel, Turn, call
from app.core.session import AssistantSession, AssistantSettings
from app.core.tools.registry import build_registry
from tests.core.agent.conftest import collect, scripted_catalog

PERSON = RecordKey("rsc197", 1)
QUESTION = "Quin ofici tenia la informant? Posa-hi mestra"
OPS: list[JsonValue] = [
    {
        "op_id": "o1",
        "tool": "dedalo_set_field",
        "args": {"section_tipo": "rsc197", "section_id": 1, "field": "rsc93", "value": "Mestra"},
        "summary": "Mestra",
    }
]


async def test_mestra_asked_in_catalan_is_stored_as_catalan_only(
    demo_archive_dir: Path, tmp_path: Path
) -> None:
    folder = Path(shutil.copytree(demo_archive_dir, tmp_path / "demo"))
    model = ScriptedModel(id="local")
    model.extend(Turn(tool_calls=(call("propose_change_plan", {"summary": "Mestra", "ops": OPS}),)))
    with open_archive(folder) as archive:
        set_writes_allowed(archive, True)
        before = {i["lang"]: i["value"] for i in archive.get_record(PERSON).items("rsc93")}
        session = AssistantSession(
            archive,
            scripted_catalog(),
            settings=AssistantSettings(lang="lg-eng"),  # the UI in English
            registry=build_registry(),
            model_factory=lambda e: model,
        )
        request = ChatRequest(question=QUESTION, mode="write")
        final = (await collect(await session.chat(request)))[-1]
        assert isinstance(final, FinalEvent) and final.change_plan is not None
        plan = final.change_plan.plan
        assert plan.ops[0].args["lang"] == "lg-cat"

        (card,) = plan_previews(archive, plan, "lg-eng").values()
        assert card.change is not None
        assert (card.change.before, card.change.after) == (before["lg-cat"], "ca: Mestra")
        assert card.change.langs == ("lg-cat",)

        wire = final.change_plan.to_dict()
        report = await session.plans.apply_posted(
            {k: v for k, v in wire.items() if k != "pending_id"},
            wire["plan_hash"],
            confirm_restricted=True,
        )
        await session.aclose()
        assert report.ok
        after = {i["lang"]: i["value"] for i in archive.get_record(PERSON).items("rsc93")}
    assert before["lg-cat"] != "Mestra" and len(before) == 3
    assert after == {**before, "lg-cat": "Mestra"}  # es and en kept
