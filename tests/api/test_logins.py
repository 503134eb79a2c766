"""Login sessions: expiry, logout, CSRF comparison."""

from __future__ import annotations

from app.api.logins import LoginTable, csrf_matches


def test_a_login_expires_after_its_lifetime() -> None:
    now = [0.0]
    table = LoginTable(ttl_s=60, clock=lambda: now[0])
    session_id, login = table.create("anna")
    assert table.get(session_id) == login
    now[0] = 61
    assert table.get(session_id) is None


def test_logouts_drop_one_session_or_every_session_of_a_user() -> None:
    table = LoginTable(ttl_s=60)
    first, _ = table.create("anna")
    second, _ = table.create("anna")
    other, _ = table.create("joan")
    table.drop(first)
    assert table.get(first) is None and table.get(second) is not None
    table.drop_user("anna")
    assert table.get(second) is None and table.get(other) is not None
    assert table.get(None) is None and table.get("x" * 500) is None


def test_csrf_tokens_must_match_exactly() -> None:
    _, login = LoginTable(ttl_s=60).create("anna")
    assert csrf_matches(login, login.csrf_token)
    assert not csrf_matches(login, None)
    assert not csrf_matches(login, login.csrf_token[:-1])
    assert not csrf_matches(login, "é" + login.csrf_token)
