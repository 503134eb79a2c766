"""Fixtures of the PostgreSQL archive tests: the demo archive indexed, and its copy on the
server."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.core.archive import open_archive
from app.core.archive.postgres.transfer import copy_archive
from app.core.index import HashingEmbedder, Index


@pytest.fixture(scope="session")
def indexed_demo_dir(demo_archive_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo archive with its index built (the real chunker, the hashing embedder: chunks,
    the full-text table, vectors, index state), once per session; copy it to change it."""
    folder = tmp_path_factory.mktemp("indexed-demo") / "archive"
    shutil.copytree(demo_archive_dir, folder)
    archive = open_archive(folder)
    index = Index(archive, HashingEmbedder(64))
    try:
        index.index_now()
    finally:
        index.close()
        archive.close()
    return folder


@pytest.fixture
def demo_on_postgres(indexed_demo_dir: Path, pg_database: str) -> str:
    """The indexed demo archive copied into a fresh database (its owner's URL)."""
    copy_archive(str(indexed_demo_dir), pg_database)
    return pg_database
