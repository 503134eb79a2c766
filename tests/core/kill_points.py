"""Kill a CLI command with SIGKILL at a chosen SQL statement, in a child process.

The child runs ``arxiu ARGV`` with a trace callback on every archive connection that counts the
SQL statements executed (reads and writes, on any thread) and sends itself SIGKILL when the
count reaches ``kill_at``: a kill between any two statements, inside or between transactions.
With ``kill_at`` 0 it runs to the end and writes the number of statements it executed.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

CHILD = """
import os, signal, sys, json
from app.core.archive import database
from app.core.archive.importers import base

kill_at = int(os.environ["ARXIU_KILL_AT"])
count = [0]
base.ImportRun.__init__.__kwdefaults__["batch_size"] = int(os.environ["ARXIU_BATCH"])
original = database.Database._connect

def trace(sql):
    count[0] += 1
    if count[0] == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)

def connect(self):
    conn = original(self)
    conn.set_trace_callback(trace)
    return conn

database.Database._connect = connect
from app import cli
code = cli.main(json.loads(os.environ["ARXIU_ARGV"]))
with open(os.environ["ARXIU_COUNT_FILE"], "w") as handle:
    handle.write(str(count[0]))
sys.exit(code)
"""


def run_child(argv: list[str], kill_at: int, work: Path, *, batch: int = 40) -> tuple[int, int]:
    """Run ``arxiu argv`` in a child killed at statement ``kill_at``; ``(exit code, count)``.

    The count is the statements executed by a child that finished (-1 when it was killed).
    """
    count_file = work / "statements.txt"
    count_file.unlink(missing_ok=True)
    env = {
        **os.environ,
        "ARXIU_KILL_AT": str(kill_at),
        "ARXIU_BATCH": str(batch),
        "ARXIU_ARGV": json.dumps(argv),
        "ARXIU_COUNT_FILE": str(count_file),
        "ARXIU_EMBEDDING_MODEL": "hashing",
        "PYTHONPATH": str(REPO),
    }
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        env=env,
        cwd=work,
        capture_output=True,
        timeout=300,
        check=False,
    )
    if done.returncode not in (0, -signal.SIGKILL):
        raise AssertionError(f"child failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    count = int(count_file.read_text()) if count_file.exists() else -1
    return done.returncode, count


def spread(total: int, count: int) -> list[int]:
    """``count`` kill points spread over statements ``1..total`` (first and last included)."""
    if total <= count:
        return list(range(1, total + 1))
    return sorted({1 + round(i * (total - 1) / (count - 1)) for i in range(count)})


def integrity(db_file: Path) -> list[str]:
    """``PRAGMA integrity_check`` of a database file (``["ok"]`` when sound)."""
    conn = sqlite3.connect(db_file)
    try:
        return [str(row[0]) for row in conn.execute("PRAGMA integrity_check")]
    finally:
        conn.close()
