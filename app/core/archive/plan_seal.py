"""The plan hash a client sees: an HMAC that binds a plan's content to its plan-book entry.

A plan's *content hash* is the sha256 of its canonical JSON (anyone can compute it). What a
front end is shown and sends back is the *bound hash*: HMAC-SHA256, keyed by a secret kept in
the archive (``archive_secrets``, made by a migration, never sent to a client), over the
plan-book id and the content hash. So only a plan the core proposed and recorded has a bound
hash that verifies, an edited plan cannot be given a matching one, and two proposals of the
same content have different bound hashes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.core.archive.engine import Connection

import hashlib
import hmac

from app.core.errors import ArchiveError

PLAN_SECRET = "plan_hmac"
"""The ``archive_secrets`` row of the plan key."""


def seal(key: bytes, plan_id: str, content_hash: str) -> str:
    """The bound hash (hex) of plan-book entry ``plan_id`` with content hash ``content_hash``."""
    message = f"arxiu-plan-v1\n{plan_id}\n{content_hash}".encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def plan_key(conn: Connection) -> bytes:
    """The archive's plan key.

    Raises:
        ArchiveError: ``archive.plan_key_missing`` when the archive has none (a damaged file).
    """
    row = conn.execute(
        "SELECT value FROM archive_secrets WHERE name = ?", (PLAN_SECRET,)
    ).fetchone()
    if row is None or not isinstance(row[0], bytes) or len(row[0]) < 16:
        raise ArchiveError(
            "archive.plan_key_missing",
            "The archive has no key for its change plans.",
            hint="Restore the archive from a backup, or run `arxiu archive info` to check it.",
        )
    return bytes(row[0])


def matches(expected: str, given: object) -> bool:
    """Whether ``given`` is the bound hash ``expected`` (compared in constant time)."""
    return isinstance(given, str) and hmac.compare_digest(expected.encode(), given.encode())
