"""Embedders for the embedding-worker tests, importable by the worker's child process.

Their behaviour is steered by files in a folder, so a test can change it while the child runs.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from app.core.index import HashingEmbedder
from app.core.index.embedders import Vectors

QUICK = "quick"
"""A text that never waits at the gate (a search's query while a batch is held)."""


class SteeredEmbedder(HashingEmbedder):
    """The hashing embedder (same ``model_id`` and vectors), steered by files in ``folder``.

    ``die``: the process exits at once on every embed; ``die-once``: it exits once (the file is
    removed first); ``hold``: a batch writes ``started`` and waits until ``gate`` exists.
    """

    def __init__(self, folder: Path, dim: int = 64) -> None:
        super().__init__(dim)
        self.folder = str(folder)

    def embed(self, texts: list[str]) -> Vectors:
        folder = Path(self.folder)
        if (folder / "die").exists():
            os._exit(3)
        if (folder / "die-once").exists():
            (folder / "die-once").unlink()
            os._exit(3)
        if (folder / "hold").exists() and texts != [QUICK]:
            (folder / "started").touch()
            while not (folder / "gate").exists():
                time.sleep(0.01)
        return super().embed(texts)
