"""Users: salted scrypt hashes, permissions, tokens, immutable ids, and the ``arxiu users``
commands."""

from __future__ import annotations

import io
import json
import stat
from pathlib import Path

import httpx
import pytest

from app.api.context import ApiContext
from app.api.users import UserStore, hash_password, verify_password
from app.cli import main
from app.core.errors import ArxiuError
from tests.api.conftest import API, body, password, stop_server
from tests.api.test_vadalog import first, serve


@pytest.fixture
def store(tmp_path: Path) -> UserStore:
    """An empty users file."""
    return UserStore(tmp_path / "users.json")


def test_passwords_are_stored_only_as_salted_scrypt_hashes(store: UserStore) -> None:
    store.add("anna", "correct horse", can_write=True)
    store.add("joan", "correct horse")
    text = store.path.read_text(encoding="utf-8")
    assert "correct horse" not in text
    rows = json.loads(text)["users"]
    assert rows["anna"]["password"]["scheme"] == "scrypt"
    assert rows["anna"]["password"]["salt"] != rows["joan"]["password"]["salt"]
    assert rows["anna"]["password"]["hash"] != rows["joan"]["password"]["hash"]
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600


def test_authenticate_checks_the_password_and_returns_the_permissions(store: UserStore) -> None:
    store.add("anna", "s3cret", can_write=True, can_read_restricted=True)
    user = store.authenticate("anna", "s3cret")
    assert user is not None and user.can_write and user.can_read_restricted
    assert store.authenticate("anna", "S3cret") is None
    assert store.authenticate("nobody", "s3cret") is None


def test_passwd_replaces_the_password(store: UserStore) -> None:
    store.add("anna", "old")
    store.set_password("anna", "new")
    assert store.authenticate("anna", "old") is None
    assert store.authenticate("anna", "new") is not None


def test_names_and_duplicates_are_refused_with_codes(store: UserStore) -> None:
    store.add("anna", "pw")
    with pytest.raises(ArxiuError) as exists:
        store.add("anna", "pw")
    assert exists.value.code == "user.exists"
    for bad in ("", "a b", "../x", "x" * 65):
        with pytest.raises(ArxiuError) as invalid:
            store.add(bad, "pw")
        assert invalid.value.code == "user.invalid"
    with pytest.raises(ArxiuError) as empty:
        store.add("joan", "")
    assert empty.value.code == "user.password_invalid"
    with pytest.raises(ArxiuError) as unknown:
        store.remove("nobody")
    assert unknown.value.code == "user.unknown"


def test_tokens_are_shown_once_and_stored_hashed(store: UserStore) -> None:
    store.add("anna", "pw", can_write=True)
    token = store.issue_token("anna")
    assert token not in store.path.read_text(encoding="utf-8")
    user = store.user_for_token(token)
    assert user is not None and user.name == "anna" and user.can_write
    assert store.user_for_token(token + "x") is None
    assert store.user_for_token("") is None
    store.remove("anna")
    assert store.user_for_token(token) is None


def test_a_tampered_hash_never_authenticates() -> None:
    stored = hash_password("pw")
    assert verify_password("pw", stored)
    assert not verify_password("pw", {**stored, "hash": "00" * 32})
    assert not verify_password("pw", {**stored, "salt": "zz"})
    assert not verify_password("pw", {})


def test_the_users_commands_add_list_passwd_token_remove(
    arxiu_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("pw-anna\n"))
    assert main(["users", "add", "anna", "--password-stdin", "--can-write"]) == 0
    assert "added anna (read, write)" in capsys.readouterr().out
    assert (arxiu_home / "api_users.json").exists()
    assert main(["users", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed == [{"name": "anna", "can_write": True, "can_read_restricted": False}]
    monkeypatch.setattr("sys.stdin", io.StringIO("pw-new\n"))
    assert main(["users", "passwd", "anna", "--password-stdin"]) == 0
    assert UserStore().authenticate("anna", "pw-new") is not None
    assert main(["users", "token", "anna"]) == 0
    token = capsys.readouterr().out.strip().splitlines()[-1]
    assert UserStore().user_for_token(token) is not None
    assert main(["users", "remove", "anna"]) == 0
    assert main(["users", "remove", "anna"]) == 2
    assert "user.unknown" in capsys.readouterr().err


def test_each_user_gets_an_immutable_random_id(store: UserStore) -> None:
    first_id = store.add("anna", "pw-one").id
    assert len(first_id) >= 16 and store.get("anna").id == first_id  # type: ignore[union-attr]
    store.set_password("anna", "pw-two")
    store.issue_token("anna")
    assert store.get("anna").id == first_id  # type: ignore[union-attr]
    store.remove("anna")
    assert store.add("anna", "pw-one").id != first_id


def test_a_removed_and_re_added_name_starts_empty_in_every_dialect(
    ctx: ApiContext, users: UserStore
) -> None:
    """Regression: the Vadalog sessions (and Dezfil runs, and Dédalo logins) were keyed by the
    user name, so a new user of an old name inherited the old user's conversations."""
    served = serve(ctx, users)
    try:
        said = served.chat("keeper", {"message": "Remember the word heron.", "session_id": "s"})
        assert first(said, "context_loaded")["count"] == 0
        auth = {"Authorization": f"Bearer {served.tokens['keeper']}"}
        run = httpx.post(f"{served.live.url}/api/assistant/runs", headers=auth, timeout=30)
        assert run.status_code == 201
        dedalo = httpx.Client(base_url=served.live.url, timeout=30)
        options = {"username": "keeper", "auth": password("keeper")}
        logged = dedalo.post(API, content=body("login", options, "dd_utils_api"))
        csrf = logged.json()["csrf_token"]

        users.remove("keeper")
        users.add("keeper", password("keeper"), can_write=True, can_read_restricted=True)
        served.tokens["keeper"] = users.issue_token("keeper")

        again = served.chat("keeper", {"message": "Which word?", "session_id": "s"})
        assert first(again, "context_loaded") == {"count": 0, "notes": []}
        auth = {"Authorization": f"Bearer {served.tokens['keeper']}"}
        message = {"runId": run.json()["runId"], "message": "hello"}
        reused = httpx.post(
            f"{served.live.url}/api/assistant", json=message, headers=auth, timeout=30
        )
        assert reused.status_code == 404 and reused.json()["error"]["code"] == (
            "assistant_run_unknown"
        )
        stale = dedalo.post(
            API, content=body("agent_models"), headers={"X-Dedalo-Csrf-Token": csrf}
        )
        assert stale.status_code == 401
        dedalo.close()
    finally:
        stop_server(served.live)


def test_a_users_file_without_ids_gets_them_once(tmp_path: Path) -> None:
    """Files written before ids existed: each user gets one, kept from then on."""
    path = tmp_path / "users.json"
    UserStore(path).add("anna", "pw")
    data = json.loads(path.read_text())
    del data["users"]["anna"]["id"]
    path.write_text(json.dumps(data))
    store = UserStore(path)
    found = store.get("anna")
    assert found is not None and found.id
    assert store.get("anna").id == found.id  # type: ignore[union-attr]
    store.set_password("anna", "pw2")
    assert store.get("anna").id == found.id  # type: ignore[union-attr]
