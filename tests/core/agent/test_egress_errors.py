"""External runs get generic errors: a failure never says whether a restricted record or a
local file exists (tool errors and plan validation alike); local runs keep the precise ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.agent.egress_errors import GENERIC_CODE
from app.core.agent.request import ChatRequest
from app.core.archive import Archive
from app.core.archive.model import Field, RecordKey
from app.core.archive.write_switch import set_writes_allowed
from app.core.models.scripted import ScriptedModel, Turn, call
from tests.core.agent.conftest import SECRET, SessionFactory, collect, sent_text


@pytest.fixture(autouse=True)
def writes_on(oh_archive: Archive) -> None:
    """Plans are proposed in write mode, which needs the archive's writes turned on."""
    set_writes_allowed(oh_archive, True)


@pytest.fixture
def hidden(oh_archive: Archive) -> RecordKey:
    """A restricted record inside the open section oh1."""
    return oh_archive.create_record(
        "oh1", {"oh2": [{"lang": "lg-eng", "value": f"{SECRET} hidden"}]}, restricted=True
    )


def _tool_messages(model: ScriptedModel) -> list[dict[str, Any]]:
    last = model.calls[-1].messages
    return [json.loads(m.content) for m in last if m.role == "tool"]


async def _external(
    make_session: SessionFactory,
    model: ScriptedModel,
    calls: list[tuple[str, dict[str, Any]]],
    mode: str = "read",
) -> list[dict[str, Any]]:
    model.extend(*[Turn(tool_calls=(call(n, a, f"c{i}"),)) for i, (n, a) in enumerate(calls)])
    model.extend(Turn(text="done"))
    session = make_session(external_content=True, write_allowed=True)
    await collect(
        await session.chat(
            ChatRequest.from_dict({"question": "go", "model": model.id, "mode": mode})
        )
    )
    return _tool_messages(model)


@pytest.mark.parametrize(
    "tool", ["dedalo_read_record", "dedalo_get_media_info", "dedalo_retrieve_passages"]
)
async def test_a_restricted_record_and_a_missing_one_fail_alike_on_an_external_model(
    make_session: SessionFactory,
    models: dict[str, ScriptedModel],
    hidden: RecordKey,
    tool: str,
) -> None:
    """Regression: "Record oh1/999 does not exist" against a refusal told them apart."""
    sent = await _external(
        make_session,
        models["cloud"],
        [(tool, hidden.to_locator()), (tool, {"section_tipo": "oh1", "section_id": 999})],
    )
    assert sent[0] == sent[1]
    assert sent[0]["error"]["code"] == GENERIC_CODE
    assert "999" not in json.dumps(sent) and SECRET not in sent_text(models["cloud"])


def _set_title(key: dict[str, Any], op_id: str = "s1") -> dict[str, Any]:
    return {
        "op_id": op_id,
        "tool": "dedalo_set_field",
        "args": {**key, "field": "oh2", "value": "new title"},
        "summary": "retitle",
    }


async def test_plan_validation_does_not_reveal_which_restricted_records_exist(
    make_session: SessionFactory, models: dict[str, ScriptedModel], hidden: RecordKey
) -> None:
    """Regression: a plan on oh1/999 was refused, one on the restricted record accepted."""
    plans = [
        {"summary": "retitle", "ops": [_set_title(hidden.to_locator())]},
        {"summary": "retitle", "ops": [_set_title({"section_tipo": "oh1", "section_id": 999})]},
    ]
    sent = []
    for plan in plans:
        model = ScriptedModel(id="cloud")
        models["cloud"] = model
        sent.append(await _external(make_session, model, [("propose_change_plan", plan)], "write"))
    assert sent[0] == sent[1]
    assert sent[0][0]["ok"] is False and sent[0][0]["error"]["code"] == GENERIC_CODE
    assert "s1" in sent[0][0]["error"]["message"]  # the op is named, nothing else


async def test_plan_validation_does_not_reveal_which_local_files_exist(
    make_session: SessionFactory,
    models: dict[str, ScriptedModel],
    oh_archive: Archive,
    tmp_path: Path,
) -> None:
    """Regression: the media path check failed only for a missing file."""
    oh_archive.put_field(Field("oh30", "oh1", {"lg-eng": "Image"}, "media", position=9))
    present = tmp_path / "present.png"
    present.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    sent = []
    for path in (present, tmp_path / "absent.png"):
        op = {
            "op_id": "m1",
            "tool": "dedalo_upload_media",
            "args": {"section_tipo": "oh1", "section_id": 1, "field": "oh30", "path": str(path)},
            "summary": "attach",
        }
        model = ScriptedModel(id="cloud")
        models["cloud"] = model
        plan = {"summary": "attach", "ops": [op]}
        sent.append(await _external(make_session, model, [("propose_change_plan", plan)], "write"))
    assert sent[0] == sent[1] and sent[0][0]["error"]["code"] == GENERIC_CODE


async def test_an_earlier_shape_error_is_reported_alike_for_restricted_and_missing_records(
    make_session: SessionFactory, models: dict[str, ScriptedModel], hidden: RecordKey
) -> None:
    bad = {
        "op_id": "b1",
        "tool": "dedalo_set_field",
        "args": {"section_tipo": "oh1"},
        "summary": "x",
    }
    sent = []
    for key in (hidden.to_locator(), {"section_tipo": "oh1", "section_id": 999}):
        model = ScriptedModel(id="cloud")
        models["cloud"] = model
        plan = {"summary": "two", "ops": [bad, _set_title(key)]}
        sent.append(await _external(make_session, model, [("propose_change_plan", plan)], "write"))
    assert sent[0] == sent[1] and sent[0][0]["error"]["code"] != GENERIC_CODE


async def test_a_local_model_keeps_the_precise_error_and_events_keep_the_true_code(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    models["local"].extend(
        Turn(tool_calls=(call("dedalo_read_record", {"section_tipo": "oh1", "section_id": 999}),)),
        Turn(text="done"),
    )
    events = await collect(
        await make_session().chat(ChatRequest.from_dict({"question": "oh1/999?"}))
    )
    sent = _tool_messages(models["local"])
    assert sent[0]["error"]["code"] == "archive.record_not_found"
    assert "does not exist" in sent[0]["error"]["message"]
    codes = [getattr(e, "code", None) for e in events if e.kind == "tool_result"]
    assert codes == ["archive.record_not_found"]


async def test_shape_errors_still_reach_an_external_model(
    make_session: SessionFactory, models: dict[str, ScriptedModel]
) -> None:
    sent = await _external(
        make_session,
        models["cloud"],
        [("dedalo_read_record", {"section_tipo": "oh1"}), ("no_such_tool", {})],
    )
    assert [s["error"]["code"] for s in sent] == ["mcp.invalid_args", "mcp.tool_unknown"]


async def test_a_reader_without_restricted_access_gets_the_generic_errors_too(
    make_session: SessionFactory, models: dict[str, ScriptedModel], hidden: RecordKey
) -> None:
    """The API's restricted reader: the gate guards a local run as an external one."""
    read = "dedalo_read_record"
    models["local"].extend(
        Turn(tool_calls=(call(read, hidden.to_locator(), "a"),)),
        Turn(tool_calls=(call(read, {"section_tipo": "oh1", "section_id": 999}, "b"),)),
        Turn(text="done"),
    )
    session = make_session(can_read_restricted=False)
    await collect(await session.chat(ChatRequest.from_dict({"question": "go"})))
    sent = _tool_messages(models["local"])
    assert sent[0] == sent[1] and sent[0]["error"]["code"] == GENERIC_CODE
    assert SECRET not in sent_text(models["local"])
