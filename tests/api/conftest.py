"""The API tests' world: the agent tests' archive, scripted models, three users, a live server.

Users (password ``pw-<name>``): ``reader`` (no permissions), ``writer`` (``can_write``),
``keeper`` (``can_write`` and ``can_read_restricted``). ``live`` runs the real app under uvicorn
on a loopback port in a thread, so tests speak real HTTP (curl, node, httpx) to it.
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from app.api.context import ApiContext, Limits
from app.api.hardening import listening_socket
from app.api.server import create_app
from app.api.users import UserStore
from app.core.archive import Archive
from app.core.archive.write_switch import set_writes_allowed
from app.core.models.scripted import ScriptedModel
from app.core.session import AssistantSettings
from app.core.tools.registry import build_registry
from tests.core.agent.conftest import (
    RecordingSearcher,
    build_archive,
    scripted_catalog,
    scripted_models,
)

API = "/dedalo/core/api/v1/json/"
USERS = {
    "reader": {},
    "writer": {"can_write": True},
    "keeper": {"can_write": True, "can_read_restricted": True},
}


def password(name: str) -> str:
    """The test password of a user."""
    return f"pw-{name}"


@pytest.fixture(scope="session")
def users_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The users file, hashed once per session (scrypt is slow on purpose)."""
    path = tmp_path_factory.mktemp("users") / "api_users.json"
    store = UserStore(path)
    for name, perms in USERS.items():
        store.add(name, password(name), **perms)
    return path


@pytest.fixture
def users(users_file: Path, tmp_path: Path) -> UserStore:
    """A private copy of the users file."""
    target = tmp_path / "api_users.json"
    shutil.copy(users_file, target)
    return UserStore(target)


@pytest.fixture
def oh_archive(
    tmp_path: Path, archive_engine: str, request: pytest.FixtureRequest
) -> Iterator[Archive]:
    """The agent tests' archive (restricted material marked SECRET), its writes turned on, on
    each engine (a folder, or a fresh database on the tests' PostgreSQL server)."""
    if archive_engine == "postgresql":
        arch = build_archive(str(request.getfixturevalue("pg_database")))
    else:
        arch = build_archive(tmp_path / "oh")
    set_writes_allowed(arch, True)
    yield arch
    arch.close()


@pytest.fixture
def models() -> dict[str, ScriptedModel]:
    """Scripted models by id (``local``, ``small``, ``cloud``, ``cloud-small``)."""
    return scripted_models()


@pytest.fixture
def ctx(
    oh_archive: Archive, users: UserStore, models: dict[str, ScriptedModel]
) -> Iterator[ApiContext]:
    """A write-enabled context over the archive with the scripted models."""
    searcher = RecordingSearcher(oh_archive)
    context = ApiContext(
        archive_dir=None,
        users=users,
        allow_writes=True,
        limits=Limits(max_body_bytes=64 * 1024, heartbeat_s=0.05),
        archive=oh_archive,
        searcher=searcher,
        catalog=scripted_catalog(),
        registry=build_registry(),
        model_factory=lambda entry: models[entry.id],
        settings=AssistantSettings(),
    )
    yield context
    searcher.index.close()


@dataclass
class Live:
    """A running server."""

    url: str
    server: uvicorn.Server
    thread: threading.Thread

    @property
    def api(self) -> str:
        """The Dédalo endpoint's URL."""
        return self.url + API


def start_server(app: Any) -> Live:
    """Serve ``app`` on a free loopback port in a thread."""
    sock = listening_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    return Live(f"http://127.0.0.1:{port}", server, thread)


def stop_server(live: Live) -> None:
    """Stop a server started by :func:`start_server`."""
    live.server.should_exit = True
    live.thread.join(timeout=20)


@pytest.fixture
def live(ctx: ApiContext) -> Iterator[Live]:
    """The app over ``ctx``, served on loopback."""
    running = start_server(create_app(ctx))
    yield running
    stop_server(running)


def body(action: str, options: dict[str, Any] | None = None, dd_api: str = "dd_mcp_api") -> str:
    """A Dédalo call's JSON body."""
    import json

    return json.dumps({"action": action, "dd_api": dd_api, "options": options or {}})


def login(http: httpx.Client, name: str) -> str:
    """Log ``name`` in on ``http`` (keeps the cookie); returns the CSRF token."""
    response = http.post(
        API,
        content=body("login", {"username": name, "auth": password(name)}, "dd_utils_api"),
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 200, response.text
    token: str = response.json()["csrf_token"]
    return token


def call(
    http: httpx.Client, csrf: str, action: str, options: dict[str, Any] | None = None
) -> httpx.Response:
    """One authenticated call."""
    return http.post(
        API,
        content=body(action, options),
        headers={"Content-Type": "application/json", "X-Dedalo-Csrf-Token": csrf},
    )


def sse_events(text: str) -> list[tuple[str, Any]]:
    """``(event, payload)`` of each record of an SSE body (comments skipped)."""
    import json

    found = []
    for record in text.split("\n\n"):
        event, data = "message", []
        for line in record.split("\n"):
            if line.startswith(":") or not line:
                continue
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
        if data:
            found.append((event, json.loads("\n".join(data))))
    return found
