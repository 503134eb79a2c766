"""The checks every test gets: an undeclared WARNING log record fails the test, and a
connection off this machine is refused."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import NetworkBlocked, is_loopback

OFF_MACHINE = ("10.255.255.1", 80)
"""A private address nothing answers on: unguarded, a connect would hang until its timeout."""

CASES = """
import logging

import pytest

log = logging.getLogger("app.example")


def test_warns_undeclared():
    log.warning("something is off")


@pytest.mark.allow_log("app.example", message="expected")
def test_warns_as_declared():
    log.warning("an expected warning")


@pytest.mark.allow_log("app.example", message="expected")
def test_errors_beyond_what_was_declared():
    log.error("a different problem")


def test_logs_info_only():
    log.info("fine")
"""


def test_an_undeclared_warning_fails_the_test_and_a_declared_one_does_not(tmp_path: Path) -> None:
    here = Path(__file__).parent
    (tmp_path / "conftest.py").write_text((here / "conftest.py").read_text())
    (tmp_path / "test_cases.py").write_text(CASES)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(here.parent)},  # the conftest imports tests.*
    )
    out = done.stdout
    assert "ERROR test_cases.py::test_warns_undeclared" in out, out
    assert "something is off" in out
    assert "ERROR test_cases.py::test_errors_beyond_what_was_declared" in out, out
    assert "PASSED test_cases.py::test_warns_as_declared" in out, out
    assert "PASSED test_cases.py::test_logs_info_only" in out, out


def test_the_guard_refuses_every_way_of_connecting_off_this_machine() -> None:
    with socket.socket() as sock:
        sock.settimeout(2)
        with pytest.raises(NetworkBlocked, match=r"10\.255\.255\.1.*loopback"):
            sock.connect(OFF_MACHINE)
        with pytest.raises(NetworkBlocked):
            sock.connect_ex(OFF_MACHINE)
    with pytest.raises(NetworkBlocked):
        socket.create_connection(OFF_MACHINE, timeout=2)
    with pytest.raises(NetworkBlocked, match=r"example\.org"):
        socket.create_connection(("example.org", 80), timeout=2)  # refused before any DNS
    with pytest.raises(NetworkBlocked):
        urllib.request.urlopen("http://10.255.255.1/", timeout=2)
    with pytest.raises(NetworkBlocked):
        asyncio.run(asyncio.wait_for(asyncio.open_connection(*OFF_MACHINE), 2))


def test_the_guard_lets_loopback_and_unix_sockets_through(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        with socket.socket() as sock:
            sock.connect(("127.0.0.1", port))
            server.accept()[0].close()
        with socket.socket() as sock:
            assert sock.connect_ex(("127.0.0.1", port)) == 0
            server.accept()[0].close()
        with socket.create_connection(("localhost", port), timeout=5):
            server.accept()[0].close()
    if socket.has_ipv6:
        try:
            six = socket.create_server(("::1", 0), family=socket.AF_INET6)
        except OSError:
            six = None  # no IPv6 loopback on this machine
        if six is not None:
            with six, socket.create_connection(("::1", six.getsockname()[1]), timeout=5):
                six.accept()[0].close()
    path = str(tmp_path / "s")
    with socket.socket(socket.AF_UNIX) as server, socket.socket(socket.AF_UNIX) as sock:
        server.bind(path)
        server.listen()
        sock.connect(path)


@pytest.mark.parametrize(
    ("address", "allowed"),
    [
        (("127.0.0.1", 80), True),
        (("127.0.1.1", 80), True),
        (("localhost", 80), True),
        (("::1", 80, 0, 0), True),
        (("[::1]", 80), True),
        (("::ffff:127.0.0.1", 80, 0, 0), True),
        (("10.255.255.1", 80), False),
        (("0.0.0.0", 80), False),
        (("example.org", 443), False),
        (("2001:db8::1", 80, 0, 0), False),
    ],
)
def test_only_loopback_addresses_count_as_this_machine(
    address: tuple[object, ...], allowed: bool
) -> None:
    family = socket.AF_INET6 if ":" in str(address[0]) else socket.AF_INET
    assert is_loopback(family, address) is allowed
