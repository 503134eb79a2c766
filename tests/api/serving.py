"""``arxiu serve`` as a child process: started the way a person starts it, its URL read from
the first line it prints, and the login request a person's client sends first."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

from tests.conftest import REPO

FIRST_LINE = "Arxiu API at http://127.0.0.1:"


def serve_env(home: Path, embedding: str = "hashing") -> dict[str, str]:
    """The environment of a child on the Arxiu home ``home`` with the ``embedding`` model."""
    return {**os.environ, "ARXIU_HOME": str(home), "ARXIU_EMBEDDING_MODEL": embedding}


def start_serve(
    args: list[str], env: dict[str, str], stderr: int | IO[str] = subprocess.PIPE
) -> subprocess.Popen[str]:
    """``python -m app serve ARGS`` from the repository, its output read as text."""
    return subprocess.Popen(
        [sys.executable, "-m", "app", "serve", *args],
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        env=env,
        cwd=REPO,
    )


def serve_url(process: subprocess.Popen[str], *context: object) -> str:
    """The URL in the first line the child prints (``context`` goes with a failed assert)."""
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith(FIRST_LINE), (line, *context)
    return line.split(" at ", 1)[1].strip()


def login_body(username: str, password: str) -> dict[str, Any]:
    """The Dédalo ``login`` request for ``username``."""
    return {
        "action": "login",
        "dd_api": "dd_utils_api",
        "options": {"username": username, "auth": password},
    }
