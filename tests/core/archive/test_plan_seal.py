"""The bound plan hash: a per-archive key made by a migration, an HMAC only the archive can make."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from app.core.archive import open_archive
from app.core.archive.plan_seal import PLAN_SECRET, matches, plan_key, seal
from app.core.errors import ArchiveError


def key_of(folder: Path) -> bytes:
    with open_archive(folder, create=True) as archive, archive.db.reading() as conn:
        return plan_key(conn)


def test_each_archive_gets_its_own_key_and_keeps_it(tmp_path: Path) -> None:
    first, second = key_of(tmp_path / "a"), key_of(tmp_path / "b")
    assert len(first) == 32 and first != second
    assert key_of(tmp_path / "a") == first  # reopened: the same key


def test_the_bound_hash_depends_on_key_entry_and_content() -> None:
    content = hashlib.sha256(b"plan").hexdigest()
    key = b"k" * 32
    bound = seal(key, "p1", content)
    assert len(bound) == 64 and bound != content
    others = {seal(b"x" * 32, "p1", content), seal(key, "p2", content), seal(key, "p1", "0" * 64)}
    assert bound not in others and len(others) == 3
    assert matches(bound, bound) and not matches(bound, content) and not matches(bound, None)


def test_an_archive_without_its_key_is_refused_with_a_code(tmp_path: Path) -> None:
    key_of(tmp_path / "a")
    conn = sqlite3.connect(tmp_path / "a" / "archive.db")
    conn.execute("DELETE FROM archive_secrets WHERE name = ?", (PLAN_SECRET,))
    conn.commit()
    conn.close()
    with pytest.raises(ArchiveError) as missing:
        key_of(tmp_path / "a")
    assert missing.value.code == "archive.plan_key_missing" and missing.value.hint
