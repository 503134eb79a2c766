"""What a GGUF file is, read from its header only (the weights are never loaded).

:func:`read_facts` walks the header (metadata, then the tensor table) with plain reads and
skips the large arrays (the vocabulary), so a 5 GB model is described in milliseconds:
architecture, parameter count, quantisation, context length, chat template and whether that
template can call tools. Names of quantisation types come from the ``gguf`` package that
llama.cpp publishes. A file whose tensors end past its size is a truncated download.

Errors: ``ai.model_file_missing`` (cannot be read) and ``ai.model_file_invalid`` (not a GGUF
file, a corrupt header, a truncated file).
"""

from __future__ import annotations

import mmap
import struct
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType, LlamaFileType

from app.core.models.chat_template import template_supports_tools
from app.core.models.gguf import MAGIC, GGUFInfo
from app.core.models.gguf import invalid_file_error as _invalid
from app.core.models.gguf import missing_file_error as _missing

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?"}
_SCALARS.update({10: "<Q", 11: "<q", 12: "<d"})
_STRING, _ARRAY = 8, 9
MAX_ITEMS = 1 << 22
"""More metadata entries, tensors or array items than this: not a real header."""
KEPT_GENERAL: tuple[str, ...] = (
    "general.architecture",
    "general.name",
    "general.basename",
    "general.size_label",
)
KEPT_GENERAL += ("general.file_type", "general.alignment", "tokenizer.chat_template")
KEPT_SUFFIXES: tuple[str, ...] = (".context_length", ".block_count", ".embedding_length")
KEPT_SUFFIXES += (".attention.head_count", ".attention.head_count_kv")
NOT_CHAT = frozenset({"clip", "bert", "nomic-bert", "t5encoder", "jina-bert-v2"})
"""Architectures that are projectors or embedders, not chat models."""


@dataclass(frozen=True)
class GGUFFacts:
    """What the header says, plus what follows from it."""

    path: Path
    size: int
    architecture: str
    name: str
    parameter_count: int
    quantisation: str
    context_length: int
    chat_template: str | None
    supports_tools: bool
    info: GGUFInfo

    @property
    def is_chat_model(self) -> bool:
        """Whether the architecture generates text (not a vision projector or an embedder)."""
        return self.architecture not in NOT_CHAT

    def memory_needed(self) -> int:
        """Estimated bytes once loaded with its default context (weights, KV cache, buffers)."""
        return self.info.memory_needed(self.info.default_context())

    def parameters_label(self) -> str:
        """``135M``, ``7.6B``…"""
        count = self.parameter_count
        if count >= 1_000_000_000:
            return f"{count / 1e9:.1f}B"
        if count >= 1_000_000:
            return f"{count / 1e6:.0f}M"
        return f"{count / 1e3:.0f}K"

    def to_json(self) -> dict[str, Any]:
        """The facts as plain JSON values (the template itself is left out: it is long)."""
        return {
            "architecture": self.architecture,
            "name": self.name,
            "parameters": self.parameter_count,
            "parameters_label": self.parameters_label(),
            "quantisation": self.quantisation,
            "context_length": self.context_length,
            "has_chat_template": self.chat_template is not None,
            "supports_tools": self.supports_tools,
            "size_bytes": self.size,
            "memory_needed_bytes": self.memory_needed(),
        }


class _Reader:
    """Reads the header from a memory map: only the header's pages are ever touched."""

    def __init__(self, buffer: Any) -> None:
        self.buffer = buffer
        self.size = len(buffer)
        self.pos = 0

    def get(self, fmt: str) -> Any:
        end = self.pos + struct.calcsize(fmt)
        if end > self.size:
            raise EOFError("the header ends early")
        value = struct.unpack_from(fmt, self.buffer, self.pos)[0]
        self.pos = end
        return value

    def count(self) -> int:
        value = int(self.get("<Q"))
        if value > MAX_ITEMS:
            raise ValueError(f"implausible count {value}")
        return value

    def skip(self, length: int) -> None:
        self.pos += length
        if self.pos > self.size:
            raise EOFError("the header ends early")

    def string(self) -> str:
        length = self.get("<Q")
        if length > 1 << 24:
            raise ValueError("a string is too long")
        start = self.pos
        self.skip(length)
        return bytes(self.buffer[start : self.pos]).decode("utf-8", "replace")

    def skip_strings(self, count: int) -> None:
        buffer, pos, size = self.buffer, self.pos, self.size
        unpack = struct.Struct("<Q").unpack_from
        for _ in range(count):
            if pos + 8 > size:
                raise EOFError("the header ends early")
            pos += 8 + unpack(buffer, pos)[0]
        self.pos = pos
        if pos > size:
            raise EOFError("the header ends early")

    def value(self, kind: int, keep: bool) -> Any:
        if kind in _SCALARS:
            return self.get(_SCALARS[kind])
        if kind == _STRING:
            if keep:
                return self.string()
            self.skip(self.get("<Q"))
            return None
        if kind == _ARRAY:
            item_kind, count = self.get("<I"), self.count()
            if item_kind in _SCALARS:
                self.skip(struct.calcsize(_SCALARS[item_kind]) * count)
            elif item_kind == _STRING:
                self.skip_strings(count)
            else:
                for _ in range(count):
                    self.value(item_kind, False)
            return None
        raise ValueError(f"unknown value type {kind}")


def _wanted(key: str) -> bool:
    return key in KEPT_GENERAL or key.endswith(KEPT_SUFFIXES)


def _read_header(buffer: Any) -> tuple[dict[str, Any], list[tuple[int, int, int]], int]:
    """Metadata, ``(elements, type, offset)`` per tensor, and where the tensor data starts."""
    reader = _Reader(buffer)
    if bytes(buffer[:4]) != MAGIC:
        raise ValueError("the file does not start with the GGUF magic bytes")
    reader.pos = 4
    version = reader.get("<I")
    if version not in (2, 3):
        raise ValueError(f"unsupported GGUF version {version}")
    tensor_count, kv_count = reader.count(), reader.count()
    meta: dict[str, Any] = {}
    for _ in range(kv_count):
        key = reader.string()
        keep = _wanted(key)
        value = reader.value(reader.get("<I"), keep)
        if keep:
            meta[key] = value
    tensors = []
    for _ in range(tensor_count):
        reader.value(_STRING, False)
        dims = reader.get("<I")
        if dims > 8:
            raise ValueError(f"a tensor with {dims} dimensions")
        elements = 1
        for _ in range(dims):
            elements *= reader.get("<Q")
        tensors.append((elements, int(reader.get("<I")), int(reader.get("<Q"))))
    alignment = int(meta.get("general.alignment") or 32)
    start = reader.pos
    return meta, tensors, start + (-start % alignment)


def _type_name(kind: int) -> str:
    try:
        return str(GGMLQuantizationType(kind).name)
    except ValueError:
        return f"type{kind}"


def _tensor_bytes(elements: int, kind: int) -> int:
    try:
        block, size = GGML_QUANT_SIZES[GGMLQuantizationType(kind)]
    except (ValueError, KeyError):
        return 0
    return int(elements // block * size)


def quantisation_name(meta: dict[str, Any], tensors: list[tuple[int, int, int]]) -> str:
    """``Q4_K_M``, ``Q8_0``, ``F16``…: the file type the header names, else the commonest type."""
    file_type = meta.get("general.file_type")
    if isinstance(file_type, int):
        try:
            name = str(LlamaFileType(file_type).name)
        except ValueError:
            name = ""
        if name and name != "GUESSED":
            return name.removeprefix("MOSTLY_").removeprefix("ALL_")
    weights: Counter[int] = Counter()
    for elements, kind, _offset in tensors:
        weights[kind] += elements
    return _type_name(weights.most_common(1)[0][0]) if weights else "unknown"


def read_facts(path: Path) -> GGUFFacts:
    """The facts of the GGUF file ``path`` (any name: Ollama blobs have no extension).

    Raises:
        ModelError: ``ai.model_file_missing`` or ``ai.model_file_invalid``.
    """
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            if size < 24:
                raise EOFError("the file is too short")
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as buffer:
                meta, tensors, data_start = _read_header(buffer)
    except FileNotFoundError:
        raise _missing(path, f"{path} does not exist") from None
    except (EOFError, ValueError, UnicodeDecodeError, struct.error) as error:
        raise _invalid(path, f"the header is truncated or corrupt ({error})") from None
    except OSError as error:
        raise _missing(path, f"{path} cannot be read ({error.strerror})") from None
    end = max(
        (data_start + offset + _tensor_bytes(n, kind) for n, kind, offset in tensors), default=0
    )
    if end > size:
        raise _invalid(path, f"the file is truncated ({size} of {end} bytes)")
    return _facts(path, size, meta, tensors)


def _facts(
    path: Path, size: int, meta: dict[str, Any], tensors: list[tuple[int, int, int]]
) -> GGUFFacts:
    arch = str(meta.get("general.architecture") or "")

    def number(name: str, default: int = 0) -> int:
        value = meta.get(f"{arch}.{name}", default)
        return (
            int(value)
            if isinstance(value, int | float) and not isinstance(value, bool)
            else default
        )

    if not arch:
        raise _invalid(path, "the header lacks the model architecture")
    heads = number("attention.head_count", 1)
    info = GGUFInfo(
        path=path,
        size=size,
        version=3,
        architecture=arch,
        block_count=number("block_count"),
        context_length=number("context_length"),
        embedding_length=number("embedding_length"),
        head_count=heads,
        head_count_kv=number("attention.head_count_kv", heads),
    )
    template = meta.get("tokenizer.chat_template")
    template = template if isinstance(template, str) and template.strip() else None
    name = meta.get("general.name") or meta.get("general.basename") or path.stem
    return GGUFFacts(
        path=path,
        size=size,
        architecture=arch,
        name=str(name),
        parameter_count=sum(elements for elements, _kind, _offset in tensors),
        quantisation=quantisation_name(meta, tensors),
        context_length=info.context_length,
        chat_template=template,
        supports_tools=template_supports_tools(template),
        info=info,
    )


def is_gguf(path: Path) -> bool:
    """Whether ``path`` starts with the GGUF magic bytes (false when it cannot be read)."""
    try:
        with path.open("rb") as handle:
            return handle.read(4) == MAGIC
    except OSError:
        return False
