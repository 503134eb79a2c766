"""The GGUF header, read bounded: a hostile or broken file is a coded refusal, never a hang.

:func:`read_header` reads the metadata (and the tensor table) from a memory map with plain
reads, skipping the large arrays (the vocabulary), within bounds a real model never comes near:
no count over :data:`MAX_ITEMS`, no string over :data:`MAX_STRING_BYTES`, no header over
:data:`MAX_HEADER_BYTES`, arrays nested at most :data:`MAX_NESTING` deep (no recursion past
it), and no longer than :data:`FILE_TIME_BOUND_S`. A sparse file (most of its size not on
disk: made with ``truncate``) is refused before it is read.

Errors: ``ai.model_file_missing``, ``ai.model_file_invalid`` (not GGUF, corrupt, truncated,
implausible counts or lengths), ``ai.model_file_sparse``, ``ai.model_header_too_deep``,
``ai.model_header_slow``.
"""

from __future__ import annotations

import mmap
import struct
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.errors import ModelError, english_of
from app.core.phrases import Phrase

MAGIC = b"GGUF"
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?"}
_SCALARS.update({10: "<Q", 11: "<q", 12: "<d"})
_STRING, _ARRAY = 8, 9
MAX_ITEMS = 1 << 22
"""More metadata entries, tensors or array items than this: not a real header."""
MAX_STRING_BYTES = 1 << 24
"""A longer string (a key, a value, a vocabulary entry): not a real header."""
MAX_HEADER_BYTES = 64 << 20
"""A header (metadata and tensor table) past this many bytes: not a real one."""
MAX_NESTING = 2
"""Arrays of arrays deeper than this: not a real header (llama.cpp writes none)."""
FILE_TIME_BOUND_S = 1.0
"""The longest one file's header is read for."""
CHECK_EVERY = 4096
"""Items read between two looks at the clock."""
SPARSE_FLOOR = 1 << 20
"""Files smaller than this are never judged sparse (small files' block counts vary)."""
KEPT_GENERAL: tuple[str, ...] = (
    "general.architecture",
    "general.name",
    "general.basename",
    "general.size_label",
)
KEPT_GENERAL += ("general.file_type", "general.alignment", "tokenizer.chat_template")
KEPT_SUFFIXES: tuple[str, ...] = (".context_length", ".block_count", ".embedding_length")
KEPT_SUFFIXES += (".attention.head_count", ".attention.head_count_kv")
KEPT_ARRAYS: tuple[str, ...] = ("general.languages",)
"""Short string arrays kept (the languages a model card names); every other array is skipped."""
MAX_KEPT_ARRAY = 64


def _missing(path: Path | None, reason: str | Phrase) -> ModelError:
    return ModelError(
        "ai.model_file_missing",
        Phrase.of("The local model file is missing: {reason}.", reason=reason),
        hint="Reinstall Arxiu, or point the model's gguf entry at an existing file.",
        category="environment",
        details={"path": str(path) if path else None},
    )


def missing_file_error(path: Path | None, reason: str | Phrase) -> ModelError:
    """The ``ai.model_file_missing`` error for ``path``."""
    return _missing(path, reason)


def invalid_file_error(path: Path, reason: str | Phrase) -> ModelError:
    """The ``ai.model_file_invalid`` error for ``path``."""
    return _invalid(path, reason)


REFUSAL_HINTS = {
    "ai.model_file_sparse": "The file holds far less data than its size says (a placeholder, "
    "or a download that was never filled in); download the model again.",
    "ai.model_header_too_deep": "This is not a model llama.cpp writes; remove the file.",
    "ai.model_header_slow": "Its header is not a real model's; remove the file.",
}
"""The hint of each refusal of a hostile or broken header (see :func:`read_header`)."""


def refused_file_error(path: Path, code: str, reason: str | Phrase) -> ModelError:
    """A coded refusal of ``path``'s header (one of :data:`REFUSAL_HINTS`' codes)."""
    return ModelError(
        code,
        Phrase.of("{name} is not a usable GGUF model: {reason}.", name=path.name, reason=reason),
        hint=REFUSAL_HINTS.get(code, "Remove the file or download the model again."),
        category="environment",
        details={"path": str(path), "reason": english_of(reason)},
    )


def _invalid(path: Path, reason: str | Phrase) -> ModelError:
    return ModelError(
        "ai.model_file_invalid",
        Phrase.of("{name} is not a usable GGUF model: {reason}.", name=path.name, reason=reason),
        hint="Download the model again; the file may be truncated or not a GGUF file.",
        category="environment",
        details={"path": str(path), "reason": english_of(reason)},
    )


Tensor = tuple[int, int, int]
MetaValue = int | float | bool | str | tuple[str, ...] | None
"""A kept metadata value: a scalar, a string, a short string array of :data:`KEPT_ARRAYS`, or
``None`` for another array or a string not kept."""
Metadata = dict[str, MetaValue]
"""A tensor of the table: its element count, its type and its data offset."""


class _Refusal(Exception):
    """A header past one of the bounds: its error code and why."""

    def __init__(self, code: str, reason: str | Phrase) -> None:
        super().__init__(english_of(reason))
        self.code = code
        self.reason = reason


class _Reader:
    """Reads the header from a memory map: only the header's pages are ever touched.

    Bounded: no count over :data:`MAX_ITEMS`, no string over :data:`MAX_STRING_BYTES`, no
    header over :data:`MAX_HEADER_BYTES`, arrays nested at most :data:`MAX_NESTING` deep, and
    no longer than until ``deadline`` (checked every :data:`CHECK_EVERY` items).
    """

    def __init__(self, buffer: Any, deadline: float) -> None:
        self.buffer = buffer
        self.size = min(len(buffer), MAX_HEADER_BYTES)
        self.pos = 0
        self.deadline = deadline
        self.items = 0

    def tick(self, items: int = 1) -> None:
        """Count ``items`` read; refuse once the time bound has passed."""
        before = self.items
        self.items += items
        if self.items // CHECK_EVERY != before // CHECK_EVERY and time.monotonic() > self.deadline:
            raise _Refusal("ai.model_header_slow", Phrase.of("the header takes too long to read"))

    def _ends(self, end: int) -> None:
        if end > self.size:
            if end > MAX_HEADER_BYTES and len(self.buffer) > MAX_HEADER_BYTES:
                raise _Refusal(
                    "ai.model_file_invalid", Phrase.of("the header is implausibly large")
                )
            raise EOFError("the header ends early")

    def get(self, fmt: str) -> Any:
        end = self.pos + struct.calcsize(fmt)
        self._ends(end)
        value = struct.unpack_from(fmt, self.buffer, self.pos)[0]
        self.pos = end
        return value

    def count(self) -> int:
        value = int(self.get("<Q"))
        if value > MAX_ITEMS:
            raise _Refusal("ai.model_file_invalid", Phrase.of("implausible count {n}", n=value))
        return value

    def length(self) -> int:
        value = int(self.get("<Q"))
        if value > MAX_STRING_BYTES:
            raise _Refusal("ai.model_file_invalid", Phrase.of("a string of {n} bytes", n=value))
        return value

    def skip(self, length: int) -> None:
        self._ends(self.pos + length)
        self.pos += length

    def string(self) -> str:
        length = self.length()
        start = self.pos
        self.skip(length)
        return bytes(self.buffer[start : self.pos]).decode("utf-8", "replace")

    def skip_strings(self, count: int) -> None:
        buffer, pos, size = self.buffer, self.pos, self.size
        unpack = struct.Struct("<Q").unpack_from
        for number in range(count):
            if not number % CHECK_EVERY:
                self.tick(CHECK_EVERY)
            if pos + 8 > size:
                self._ends(pos + 8)
            length = unpack(buffer, pos)[0]
            if length > MAX_STRING_BYTES:
                raise _Refusal(
                    "ai.model_file_invalid", Phrase.of("a string of {n} bytes", n=length)
                )
            pos += 8 + length
        self._ends(pos)
        self.pos = pos

    def value(self, kind: int, keep: bool, depth: int = 0) -> Any:
        if kind in _SCALARS:
            return self.get(_SCALARS[kind])
        if kind == _STRING:
            if keep:
                return self.string()
            self.skip(self.length())
            return None
        if kind == _ARRAY:
            return self.array(depth, keep)
        raise ValueError(f"unknown value type {kind}")

    def array(self, depth: int, keep: bool = False) -> tuple[str, ...] | None:
        """Skip an array (``keep``: return a short array of strings instead)."""
        if depth >= MAX_NESTING:
            raise _Refusal("ai.model_header_too_deep", Phrase.of("arrays nested too deep"))
        item_kind, count = self.get("<I"), self.count()
        if keep and item_kind == _STRING and count <= MAX_KEPT_ARRAY:
            return tuple(self.string() for _ in range(count))
        if item_kind in _SCALARS:
            self.skip(struct.calcsize(_SCALARS[item_kind]) * count)
        elif item_kind == _STRING:
            self.skip_strings(count)
        else:
            for _ in range(count):
                self.tick()
                self.value(item_kind, False, depth + 1)
        return None


def _wanted(key: str) -> bool:
    return key in KEPT_GENERAL or key.endswith(KEPT_SUFFIXES)


def _read_header(
    buffer: Any, deadline: float, with_tensors: bool
) -> tuple[int, Metadata, list[Tensor], int]:
    """The version, the metadata, ``(elements, type, offset)`` per tensor, and where the
    tensor data starts (no tensors and 0 without ``with_tensors``)."""
    reader = _Reader(buffer, deadline)
    if bytes(buffer[:4]) != MAGIC:
        raise ValueError("the file does not start with the GGUF magic bytes")
    reader.pos = 4
    version = reader.get("<I")
    if version not in (2, 3):
        raise ValueError(f"unsupported GGUF version {version}")
    tensor_count, kv_count = reader.count(), reader.count()
    meta: Metadata = {}
    for _ in range(kv_count):
        reader.tick()
        key = reader.string()
        keep, kind = _wanted(key), reader.get("<I")
        value = reader.value(kind, keep) if kind != _ARRAY else reader.array(0, key in KEPT_ARRAYS)
        keep = keep or key in KEPT_ARRAYS
        if keep:
            meta[key] = value
    if not with_tensors:
        return version, meta, [], 0
    tensors = []
    for _ in range(tensor_count):
        reader.tick()
        reader.value(_STRING, False)
        dims = reader.get("<I")
        if dims > 8:
            raise ValueError(f"a tensor with {dims} dimensions")
        elements = 1
        for _ in range(dims):
            elements *= reader.get("<Q")
        tensors.append((elements, int(reader.get("<I")), int(reader.get("<Q"))))
    alignment = meta.get("general.alignment")
    if type(alignment) is not int or not 0 < alignment <= 1 << 16:
        alignment = 32
    start = reader.pos
    return version, meta, tensors, start + (-start % alignment)


@dataclass(frozen=True)
class Header:
    """What :func:`read_header` read: the version, kept metadata, the tensor table."""

    size: int
    version: int
    meta: Metadata
    tensors: list[Tensor]
    data_start: int


def read_header(path: Path, deadline: float | None = None, *, with_tensors: bool = True) -> Header:
    """Read ``path``'s GGUF header, bounded.

    The header is read within :data:`FILE_TIME_BOUND_S` (or until ``deadline``, a
    :func:`time.monotonic` instant, when that comes first) and within the bounds of
    :class:`_Reader`: counts, string lengths, header bytes, nesting. A sparse file (far fewer
    bytes on disk than its size says: a file made with ``truncate``) is refused.

    Raises:
        ModelError: ``ai.model_file_missing``, ``ai.model_file_invalid`` (not GGUF, corrupt,
            truncated, implausible counts or lengths), ``ai.model_file_sparse``,
            ``ai.model_header_too_deep`` or ``ai.model_header_slow``.
    """
    bound = time.monotonic() + FILE_TIME_BOUND_S
    try:
        size = _checked_size(path)
        with path.open("rb") as handle:
            if size < 24:
                raise EOFError("the file is too short")
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as buffer:
                read = _read_header(buffer, min(bound, deadline or bound), with_tensors)
    except FileNotFoundError:
        raise _missing(path, Phrase.of("{path} does not exist", path=str(path))) from None
    except _Refusal as refusal:
        raise refused_file_error(path, refusal.code, refusal.reason) from None
    except (EOFError, ValueError, UnicodeDecodeError, struct.error, OverflowError) as error:
        reason = Phrase.of("the header is truncated or corrupt ({error})", error=str(error))
        raise _invalid(path, reason) from None
    except OSError as error:
        reason = Phrase.of("{path} cannot be read ({why})", path=str(path), why=str(error.strerror))
        raise _missing(path, reason) from None
    return Header(size, *read)


def _checked_size(path: Path) -> int:
    """The file's size, refusing a sparse file (most of its size not on disk)."""
    stat = path.stat()
    blocks = getattr(stat, "st_blocks", None)  # not on Windows
    if isinstance(blocks, int) and stat.st_size > SPARSE_FLOOR and blocks * 512 < stat.st_size // 2:
        raise _Refusal(
            "ai.model_file_sparse",
            Phrase.of(
                "only {n} of its {size} bytes are on disk", n=blocks * 512, size=stat.st_size
            ),
        )
    return stat.st_size
