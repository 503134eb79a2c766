"""``arxiu serve`` as a person runs it: prints its URL, serves, refuses remote binds by default."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import httpx
import pytest

from app.api.users import UserStore
from app.cli import main
from app.commands.serve_cmd import allowed_hosts, check_host
from tests.api.serving import login_body, serve_env, serve_url, start_serve
from tests.commands.test_ask_cmd import CATALOG
from tests.core.agent.conftest import build_archive


def test_a_non_loopback_host_needs_allow_remote(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--host", "0.0.0.0", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "serve.remote_refused" in err and "--allow-remote" in err


def test_the_host_allow_list_holds_loopback_the_host_and_extra_names() -> None:
    names = allowed_hosts("192.168.1.5", ["arxiu.lan"])
    assert {"127.0.0.1", "localhost", "192.168.1.5", "arxiu.lan"} <= names
    assert "0.0.0.0" not in allowed_hosts("0.0.0.0", [])


def test_serve_prints_its_url_and_answers_until_interrupted(
    tmp_path: Path, arxiu_home: Path
) -> None:
    build_archive(tmp_path / "oh").close()
    (arxiu_home / "models.json").write_text(json.dumps(CATALOG), encoding="utf-8")
    UserStore(arxiu_home / "api_users.json").add("anna", "pw-anna")
    env = serve_env(arxiu_home) | {"ARXIU_LANG": "en"}
    process = start_serve(["--port", "0", "--archive", str(tmp_path / "oh")], env)
    try:
        url = serve_url(process)
        with httpx.Client(timeout=30) as http:
            login = http.post(url, json=login_body("anna", "pw-anna"))
            assert login.status_code == 200
            models = http.post(
                url,
                json={"action": "agent_models", "dd_api": "dd_mcp_api", "options": {}},
                headers={"X-Dedalo-Csrf-Token": login.json()["csrf_token"]},
            )
            assert models.status_code == 200
            assert models.json()["data"]["write_allowed"] is False  # no --allow-writes
            assert {"tools", "small"} <= {m["id"] for m in models.json()["data"]["models"]}
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert "writes off; 1 user; Ctrl+C stops" in err and err.endswith("stopped\n")


def test_allow_remote_says_so_loudly(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARXIU_LANG", "en")
    check_host("0.0.0.0", allow_remote=True)
    err = capsys.readouterr().err
    assert "WARNING" in err and "other machines can reach this server" in err
    check_host("127.0.0.1", allow_remote=False)
    check_host("::1", allow_remote=False)
    assert capsys.readouterr().err == ""
