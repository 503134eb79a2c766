"""An embedder for the embedding-lane tests, importable by the worker's child process.

Every call but a query's (:data:`~tests.core.index.worker_embedders.QUICK`) announces itself on
a process-shared semaphore and waits for a permit on another, so a test sees (without sleeping)
which slice of a batch the child is in and lets each one through.
"""

from __future__ import annotations

from typing import Any

from app.core.index import HashingEmbedder
from app.core.index.embedders import Vectors
from tests.core.index.worker_embedders import QUICK


class PermitEmbedder(HashingEmbedder):
    """The hashing embedder (same ``model_id`` and vectors); each non-query call releases
    ``entered`` and then takes one permit from ``gate`` (both ``multiprocessing`` semaphores
    of the spawn context, handed to the child when it starts)."""

    def __init__(self, entered: Any, gate: Any, dim: int = 64) -> None:
        super().__init__(dim)
        self.entered = entered
        self.gate = gate

    def embed(self, texts: list[str]) -> Vectors:
        if texts != [QUICK]:
            self.entered.release()
            if not self.gate.acquire(timeout=60):
                raise RuntimeError("the test never let this slice through")
        return super().embed(texts)
