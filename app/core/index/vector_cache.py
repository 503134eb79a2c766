"""A large folder archive's vectors of one model, kept in a file beside it for a cold start.

A fresh process (``arxiu search``, ``arxiu ask``) reads every chunk's vector of each model
before its first dense search: on the Tate import, 146,711 chunks, that read took 0.9-1.4 s a
model out of SQLite (the rows, their blobs, the join on the content hash), most of a cold CLI
search. The same arrays saved by :func:`save` load with :func:`load` in a fraction of that.

A saved file is only ever used for the exact state of the index it was made from. Its
:class:`Stamp` is the archive's ``index`` change generation (:mod:`.changes`: bumped by a
trigger on every chunk and vector written or removed) and a token made at random for this
model and written into the archive (``index_state``) in the same transaction that checked the
generation was still the one the rows were read at. A file from another archive, from a copy of
this one that has changed since, or from before a backup was restored does not carry the token
the archive holds with that generation, and is ignored (the vectors are read from SQLite as
before, and a new file is saved). Chunks are only inserted and deleted, never updated, so the
ids, sections and restricted flags in the file are those of the chunks at that generation.

Only archives with at least :data:`CACHE_ABOVE` chunks, opened writable, keep a file (a small
archive's vectors read from SQLite quickly; the file holds the vectors again, as float32: about
2 KB a chunk and model, 525 MB for the Tate import's two models).
"""

from __future__ import annotations

import os
import sqlite3
import uuid
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from app.core.index import changes, storage

CACHE_DIR = "index-cache"
"""The folder inside the archive folder that holds the files (safe to delete)."""
CACHE_ABOVE = 20_000
"""Chunks from which an archive keeps its vectors in a file."""
TOKEN_KEY = "vector_cache.token."
"""The ``index_state`` key of a model's token (followed by the model id)."""
NO_FLAG = -1
"""A chunk's restricted flag when its record did not say (``None``)."""


@dataclass(frozen=True)
class Stamp:
    """The state of the index a file was saved from."""

    token: str
    generation: int


@dataclass(frozen=True)
class CachedRows:
    """Every chunk's vector of one model, with the chunk's id, section and restricted flag."""

    ids: list[int]
    sections: list[str]
    flags: list[bool | None]
    vectors: npt.NDArray[np.float32]


def file_of(folder: Path, model: str) -> Path:
    """The file of ``model``'s vectors in the archive ``folder``."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in model)
    return folder / CACHE_DIR / f"{safe}.npz"


def current(conn: sqlite3.Connection, model: str) -> Stamp | None:
    """The stamp a file of ``model`` must carry to be used now (``None``: no file is valid,
    the archive never saved one or has no change counters)."""
    generation = changes.generation(conn, "index")
    token = storage.get_state(conn, TOKEN_KEY + model)
    return None if generation is None or token is None else Stamp(token, generation)


def load(folder: Path, model: str, dim: int, stamp: Stamp) -> CachedRows | None:
    """The rows saved for ``stamp`` (``None`` when the file is missing, damaged, of another
    state, model or width)."""
    try:
        with np.load(file_of(folder, model), allow_pickle=False) as saved:
            said = [str(v) for v in saved["stamp"]]
            if said != [stamp.token, str(stamp.generation), model, str(dim)]:
                return None
            vectors = np.asarray(saved["vectors"], np.float32)
            ids = saved["ids"].astype(np.int64).tolist()
            sections = [str(s) for s in saved["sections"]]
            flags = [None if f == NO_FLAG else bool(f) for f in saved["flags"].tolist()]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):  # missing, damaged
        return None
    if vectors.shape != (len(ids), dim) or not len(ids) == len(sections) == len(flags):
        return None
    return CachedRows(ids, sections, flags, vectors)


def claim(conn: sqlite3.Connection, model: str, generation: int) -> Stamp | None:
    """In a write transaction: a new token for ``model``'s file, stored in the archive, if the
    index is still at ``generation`` (the rows to save were read at it); else ``None``. Any
    file saved before no longer matches from the moment this commits."""
    if changes.generation(conn, "index") != generation:
        return None
    token = uuid.uuid4().hex
    storage.set_state(conn, TOKEN_KEY + model, token)
    return Stamp(token, generation)


def save(folder: Path, model: str, stamp: Stamp, rows: CachedRows) -> bool:
    """Save ``rows`` as ``model``'s file for ``stamp`` (from :func:`claim`); returns whether it
    saved. The file is written beside and renamed into place, so a reader sees the old file
    or the new one, whole."""
    target = file_of(folder, model)
    partial = target.with_name(f"{target.name}.{os.getpid()}.part")
    flags = np.array([NO_FLAG if f is None else int(f) for f in rows.flags], np.int8)
    said = [stamp.token, str(stamp.generation), model, str(rows.vectors.shape[1])]
    try:
        target.parent.mkdir(exist_ok=True)
        with partial.open("wb") as handle:
            np.savez(
                handle,
                stamp=np.array(said),
                ids=np.array(rows.ids, np.int64),
                sections=np.array(rows.sections, dtype=str),
                flags=flags,
                vectors=rows.vectors,
            )
        os.replace(partial, target)
    except OSError:  # a full disk or a read-only folder: the archive reads SQLite again
        partial.unlink(missing_ok=True)
        return False
    return True
