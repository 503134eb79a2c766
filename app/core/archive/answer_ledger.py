"""The answer ledger: which texts the server itself answered or was asked, and which were tainted.

A stateless client (the Dédalo and Dezfil dialects) resends its conversation's history; the
server cannot trust what it says about it. So the archive keeps, per owner (an API user's
immutable id), the digest of every question it was asked and every answer it gave, with
whether that answer drew on restricted records; and, for every tainted answer, the digests of
its word shingles, so a partial copy is recognised for any owner. Only digests are stored,
never text. The agent layer (``app.core.agent.history_taint``) makes the digests and decides.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.core.archive.engine import Connection

from collections.abc import Iterable
from dataclasses import dataclass

LEDGER_SQL = """
CREATE TABLE answer_ledger (
    owner TEXT NOT NULL,
    digest TEXT NOT NULL,
    tainted INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (owner, digest)
) WITHOUT ROWID;
CREATE TABLE tainted_shingles (
    digest TEXT PRIMARY KEY
) WITHOUT ROWID
"""
"""The ledger's tables (made by the migration ``0005_answer_ledger``)."""
CHUNK = 500
"""Digests per ``IN (...)`` query."""


@dataclass(frozen=True)
class LedgerView:
    """What the ledger knows of some digests for one owner."""

    known: dict[str, bool]
    """Digest → tainted, for the digests this owner's ledger holds."""
    tainted_shingles: frozenset[str]
    """The shingle digests asked about that some tainted answer holds."""
    owner_tainted: bool
    """Whether any answer of this owner was tainted."""


def _chunks(values: list[str]) -> Iterable[list[str]]:
    for start in range(0, len(values), CHUNK):
        yield values[start : start + CHUNK]


def look_up(
    conn: Connection, owner: str, digests: Iterable[str], shingles: Iterable[str]
) -> LedgerView:
    """What the ledger says of ``digests`` (whole texts) and ``shingles`` for ``owner``."""
    known: dict[str, bool] = {}
    for chunk in _chunks(sorted(set(digests))):
        marks = ",".join("?" * len(chunk))
        rows = conn.execute(
            f"SELECT digest, tainted FROM answer_ledger WHERE owner = ? AND digest IN ({marks})",
            (owner, *chunk),
        )
        known.update((str(digest), bool(tainted)) for digest, tainted in rows)
    found: set[str] = set()
    for chunk in _chunks(sorted(set(shingles))):
        marks = ",".join("?" * len(chunk))
        rows = conn.execute(f"SELECT digest FROM tainted_shingles WHERE digest IN ({marks})", chunk)
        found.update(str(digest) for (digest,) in rows)
    tainted = conn.execute(
        "SELECT 1 FROM answer_ledger WHERE owner = ? AND tainted LIMIT 1", (owner,)
    ).fetchone()
    return LedgerView(known, frozenset(found), tainted is not None)


def record(
    conn: Connection,
    owner: str,
    entries: Iterable[tuple[str, bool]],
    shingles: Iterable[str],
) -> None:
    """Add ``(digest, tainted)`` entries for ``owner`` (a digest once tainted stays tainted)
    and the shingle digests of tainted answers."""
    conn.executemany(
        "INSERT INTO answer_ledger(owner, digest, tainted) VALUES (?, ?, ?) "
        "ON CONFLICT(owner, digest) DO UPDATE "
        "SET tainted = (answer_ledger.tainted OR excluded.tainted)",
        [(owner, digest, bool(tainted)) for digest, tainted in entries],
    )
    conn.executemany(
        "INSERT INTO tainted_shingles(digest) VALUES (?) ON CONFLICT DO NOTHING",
        [(digest,) for digest in sorted(set(shingles))],
    )
