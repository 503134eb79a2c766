"""Fixtures of the PostgreSQL search tests: the demo archive indexed with the hashing embedder
(SQLite), and one copy of it on the real server for a whole module."""

from __future__ import annotations

import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.archive import open_archive
from app.core.archive.postgres.transfer import copy_archive
from app.core.archive.store import Archive
from app.core.index import HashingEmbedder, Index
from tests.core.archive.postgres.conftest import indexed_demo_dir
from tests.postgres_server import PgServer

demo_index_dir = indexed_demo_dir
"""The demo archive indexed with ``HashingEmbedder(64)`` (session), and the server's fixtures."""

EMBEDDER = HashingEmbedder(64)


@pytest.fixture(scope="module")
def demo_url(pg_server: PgServer, demo_index_dir: Path) -> Iterator[str]:
    """The indexed demo copied into a database of its own for the module (its owner's URL);
    tests that change it make their own copy (``pg_database``)."""
    name = f"arxiu_m{secrets.token_hex(4)}"
    with pg_server.admin() as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        url = pg_server.url(name)
        copy_archive(str(demo_index_dir), url)
        yield url
    finally:
        with pg_server.admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            rows = conn.execute(
                "SELECT rolname FROM pg_roles WHERE starts_with(rolname, %s)", (name + "_",)
            ).fetchall()
            for (role,) in rows:
                conn.execute(f'DROP ROLE "{role}"')


@pytest.fixture(scope="module")
def sqlite_demo(
    demo_index_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Archive, Index]]:
    """The same indexed demo (a copy) searched on SQLite."""
    folder = tmp_path_factory.mktemp("sqlite-demo") / "archive"
    shutil.copytree(demo_index_dir, folder)
    archive = open_archive(folder)
    index = Index(archive, EMBEDDER)
    yield archive, index
    index.close()
    archive.close()
