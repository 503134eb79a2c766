"""Login sessions: expiry, logout, CSRF comparison; the failed-login lockout policy."""

from __future__ import annotations

import httpx
import pytest

from app.api.hardening import LoginThrottle
from app.api.logins import LoginTable, csrf_matches
from tests.api.conftest import API, Live, body, password


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


# -- the lockout policy, black-box over loopback (127.0.0.x are distinct clients) ------------


JSON = {"Content-Type": "application/json"}


def _client(live: Live, address: str) -> httpx.Client:
    """A client whose connections come from ``address`` (any 127.0.0.x is loopback)."""
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=live.url, timeout=30, transport=transport)


def _login(client: httpx.Client, name: str, secret: str) -> int:
    options = {"username": name, "auth": secret}
    response = client.post(API, content=body("login", options, "dd_utils_api"), headers=JSON)
    return response.status_code


def test_five_wrong_passwords_lock_only_that_client_and_name(live: Live) -> None:
    """Regression: every loopback client shared one key, so five failures locked everyone."""
    with _client(live, "127.0.0.1") as attacker, _client(live, "127.0.0.2") as other:
        assert [_login(attacker, "writer", "wrong") for _ in range(5)] == [401] * 5
        assert _login(attacker, "writer", password("writer")) == 429  # this pair waits
        assert _login(attacker, "reader", password("reader")) == 200  # another user does not
        assert _login(other, "writer", password("writer")) == 200  # nor writer elsewhere


def test_a_name_attacked_from_many_clients_waits_except_where_it_logged_in_before(
    live: Live,
) -> None:
    with _client(live, "127.0.0.2") as known:
        assert _login(known, "writer", password("writer")) == 200
    for number in range(3, 7):  # 4 clients x 5 failures: the name's own limit
        with _client(live, f"127.0.0.{number}") as attacker:
            assert [_login(attacker, "writer", "wrong") for _ in range(5)] == [401] * 5
    with _client(live, "127.0.0.9") as fresh, _client(live, "127.0.0.2") as known:
        assert _login(fresh, "writer", password("writer")) == 429
        assert _login(known, "writer", password("writer")) == 200
        assert _login(fresh, "reader", password("reader")) == 200


def test_the_throttle_policy_in_figures() -> None:
    now = [0.0]
    throttle = LoginThrottle(5, 60.0, clock=lambda: now[0])
    for _ in range(5):
        throttle.failed("a", "anna")
    assert throttle.retry_after("a", "anna") > 0
    assert throttle.retry_after("a", "bob") == 0
    assert throttle.retry_after("b", "anna") == 0
    for address in "cde":
        for _ in range(5):
            throttle.failed(address, "anna")
    assert throttle.retry_after("f", "anna") > 0  # 20 failures of one name: new clients wait
    now[0] = 61.0
    assert throttle.retry_after("f", "anna") == 0 and throttle.retry_after("a", "anna") == 0


@pytest.mark.parametrize("flood", [20_000])
def test_the_throttle_stays_bounded_under_a_flood_of_keys(flood: int) -> None:
    throttle = LoginThrottle(5, 60.0)
    for number in range(flood):
        throttle.failed(f"10.0.{number // 256}.{number % 256}", f"user{number}")
    assert throttle.size() <= 3 * 10_000
