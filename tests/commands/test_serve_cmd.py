"""``arxiu serve`` listens at once and indexes in the background; searches work meanwhile."""

from __future__ import annotations

import signal
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest

from app.api.context import ApiContext
from app.api.users import UserStore
from app.core.index.service import Index
from tests.api.serving import login_body, serve_env, serve_url, start_serve

READY = "index up to date"


def read_lines(stream: object, lines: list[tuple[float, str]]) -> threading.Thread:
    """Collect ``(time, line)`` from a text stream on a thread."""

    def run() -> None:
        for line in stream:  # type: ignore[attr-defined]
            lines.append((time.monotonic(), line))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_serve_accepts_and_answers_before_the_index_is_complete(arxiu_home: Path) -> None:
    UserStore(arxiu_home / "api_users.json").add("anna", "pw-anna")
    # USE alone (numpy): indexing the demo's 1,128 chunks takes minutes here, so the index is
    # certainly incomplete while the server already answers
    started = time.monotonic()
    process = start_serve(["--port", "0"], serve_env(arxiu_home, "use"))
    err: list[tuple[float, str]] = []
    try:
        assert process.stdout is not None and process.stderr is not None
        read_lines(process.stderr, err)
        url = serve_url(process, err)
        port = int(url.split(":")[2].split("/")[0])
        with socket.create_connection(("127.0.0.1", port), timeout=30):
            accepted = time.monotonic()
        with httpx.Client(timeout=60) as http:
            login = http.post(url, json=login_body("anna", "pw-anna"))
            answered = time.monotonic()
        assert login.status_code == 200, login.text
        assert not any(READY in text for _, text in err), err  # still indexing
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
    assert process.returncode == 0, err
    print(
        f"\narxiu serve on a fresh home: first connection accepted {accepted - started:.2f} s "
        f"after start, login answered at {answered - started:.2f} s (index incomplete)"
    )
    assert accepted - started < 60  # the goal is 2 s on a quiet machine; this one is shared
    assert any("in the background" in text for _, text in err)


def test_a_search_answers_while_the_server_indexes(
    demo_archive_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    folder = tmp_path / "demo"
    shutil.copytree(demo_archive_dir, folder)
    monkeypatch.setenv("ARXIU_EMBEDDING_MODEL", "use")
    ctx = ApiContext(archive_dir=folder, users=UserStore(tmp_path / "users.json"))
    try:
        index = ctx.open_searcher()
        assert isinstance(index, Index)
        hits = index.search("reservoir", k=5, mode="lexical")
        assert hits and index.indexer.pending() > 0  # lexical answers, vectors still to come
        assert index.stats().dense_complete < 1.0
    finally:
        import asyncio

        asyncio.run(ctx.aclose())
