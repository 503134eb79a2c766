"""The API in front of a real OpenAI-compatible server (``python -m llama_cpp.server`` with the
bundled GGUF, on loopback), every request body it receives recorded by a loopback proxy.

The model is behind the API twice: declared ``external`` (record content allowed by setting,
restricted content never) and declared ``local``. A test reads every body the model server got.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from app.api.client import DedaloClient
from app.api.context import ApiContext
from app.core.agent.events import FinalEvent, ToolResultEvent
from app.core.models.catalog import Catalog, ModelEntry
from app.core.session import AssistantSettings
from tests.api.conftest import Live, password, start_server, stop_server
from tests.core.agent.conftest import SECRET
from tests.core.models.llama_fixtures import LlamaServer
from tests.core.models.llama_fixtures import start_server as start_llama

pytestmark = pytest.mark.slow

QUESTION = "the flood and the mill"


@dataclass
class Recorder:
    """A loopback proxy to the model server that keeps every request body."""

    upstream: str
    bodies: list[bytes] = field(default_factory=list)

    def app(self) -> Starlette:
        async def forward(request: Request) -> Response:
            content = await request.body()
            self.bodies.append(content)
            client = httpx.AsyncClient(timeout=120)
            upstream = client.build_request(
                request.method,
                self.upstream + "/" + request.path_params["path"],
                content=content,
                headers={"Content-Type": request.headers.get("content-type", "application/json")},
            )
            reply = await client.send(upstream, stream=True)

            async def relay() -> AsyncIterator[bytes]:
                try:
                    async for chunk in reply.aiter_raw():
                        yield chunk
                finally:
                    await reply.aclose()
                    await client.aclose()

            media = reply.headers.get("content-type", "application/json")
            return StreamingResponse(relay(), status_code=reply.status_code, media_type=media)

        return Starlette(routes=[Route("/{path:path}", forward, methods=["GET", "POST"])])


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """A real llama.cpp server for this module."""
    server = start_llama(tmp_path_factory.mktemp("api-llama") / "server.log")
    yield server
    server.stop()


@pytest.fixture
def recorder(llama: LlamaServer) -> Iterator[tuple[Recorder, str]]:
    """The recording proxy, served on loopback; yields it and its ``/v1`` URL."""
    found = Recorder(llama.base_url.removesuffix("/v1") + "")
    running = start_server(found.app())
    yield found, running.url
    stop_server(running)


def _entry(model_id: str, egress: str, endpoint: str) -> ModelEntry:
    return ModelEntry(
        id=model_id,
        label=model_id,
        provider="openai_compatible",
        model="smollm2",
        endpoint=endpoint + "/v1",
        egress=egress,  # type: ignore[arg-type]
        max_tokens=24,
        timeout_s=120,
        supports_tools=False,
        default=egress == "external",
    )


@pytest.fixture
def real_ctx(ctx: ApiContext, recorder: tuple[Recorder, str]) -> ApiContext:
    """The API context with the real server behind two catalog entries."""
    from app.core.models.factory import create_model

    endpoint = recorder[1]
    ctx.catalog = Catalog(
        (_entry("cloud", "external", endpoint), _entry("near", "local", endpoint))
    )
    ctx.model_factory = create_model
    ctx.settings = AssistantSettings(external_content=True)
    return ctx


async def _ask(live: Live, user: str, model: str) -> list[Any]:
    async with DedaloClient(live.url) as client:
        await client.login(user, password(user))
        return [e async for e in client.stream({"question": QUESTION, "model": model})]


@pytest.fixture
def real_live(real_ctx: ApiContext) -> Iterator[Live]:
    """The API over the real model, on loopback."""
    from app.api.server import create_app

    running = start_server(create_app(real_ctx))
    yield running
    stop_server(running)


async def test_an_external_model_behind_the_api_never_receives_a_restricted_record(
    real_live: Live, recorder: tuple[Recorder, str]
) -> None:
    events = await _ask(real_live, "keeper", "cloud")
    assert isinstance(events[-1], FinalEvent), events[-1]
    assert any(isinstance(e, ToolResultEvent) and e.ok for e in events)
    bodies = [b.decode("utf-8") for b in recorder[0].bodies if b]
    assert bodies, "the model server received nothing"
    assert all(SECRET not in text for text in bodies)
    assert any("mill" in text for text in bodies)  # public content did go


async def test_a_reader_without_restricted_permission_gets_none_even_on_a_local_model(
    real_live: Live, recorder: tuple[Recorder, str]
) -> None:
    events = await _ask(real_live, "writer", "near")
    assert isinstance(events[-1], FinalEvent)
    bodies = [b.decode("utf-8") for b in recorder[0].bodies if b]
    assert bodies and all(SECRET not in text for text in bodies)
    assert SECRET not in events[-1].answer


async def test_a_keeper_on_the_local_entry_does_reach_restricted_records(
    real_live: Live, recorder: tuple[Recorder, str]
) -> None:
    events = await _ask(real_live, "keeper", "near")
    assert isinstance(events[-1], FinalEvent)
    assert any(SECRET in b.decode("utf-8") for b in recorder[0].bodies)  # the check can fail


def _bodies(recorder: tuple[Recorder, str]) -> list[str]:
    return [b.decode("utf-8") for b in recorder[0].bodies if b]


async def test_the_vadalog_dialect_streams_from_the_real_model_and_keeps_restricted_text_home(
    real_live: Live, real_ctx: ApiContext, recorder: tuple[Recorder, str]
) -> None:
    import json

    token = real_ctx.users.issue_token("keeper")
    archive = real_ctx.open_archive().folder.name
    async with httpx.AsyncClient(timeout=300) as client:
        reply = await client.post(
            f"{real_live.url}/api/v1/agent/{archive}/chat",
            json={"message": QUESTION, "model": "cloud"},
            headers={"Authorization": f"Bearer {token}"},
        )
    assert reply.status_code == 200, reply.text
    lines = [json.loads(line) for line in reply.text.splitlines() if line]
    kinds = [line["type"] for line in lines]
    assert kinds[0] == "metadata" and "done" in kinds and "error" not in kinds, kinds
    assert "tool_start" in kinds and "content" in kinds
    assert kinds[-1] == "session_meta"
    bodies = _bodies(recorder)
    assert bodies and all(SECRET not in text for text in bodies)
    assert SECRET not in reply.text


async def test_the_dezfil_dialect_binds_a_run_to_the_real_model(
    real_live: Live, real_ctx: ApiContext, recorder: tuple[Recorder, str]
) -> None:
    import json

    headers = {"Authorization": f"Bearer {real_ctx.users.issue_token('writer')}"}
    async with httpx.AsyncClient(timeout=300, headers=headers) as client:
        run = (await client.post(f"{real_live.url}/api/assistant/runs")).json()["runId"]
        body = {"runId": run, "message": QUESTION, "choice": {"model": "near"}}
        reply = await client.post(f"{real_live.url}/api/assistant", content=json.dumps(body))
    assert reply.status_code == 200, reply.text
    lines = [json.loads(line) for line in reply.text.splitlines() if line]
    names = [line["event"] for line in lines]
    assert names[0] == "start" and names[-1] == "final", names
    final = lines[-1]["data"]
    assert final["runId"] == run and final["answer"]
    bodies = _bodies(recorder)
    assert bodies and all(SECRET not in text for text in bodies)  # writer: no restricted access
