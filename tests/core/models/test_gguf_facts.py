"""Hostile GGUF headers: each one is a coded refusal within the time bound, never a traceback.

A generated suite of headers a red team (or a broken download) could leave in a models folder:
arrays nested 10,000 deep, counts of 2**40, strings claiming exabytes, a truncated header, a
480 MB sparse file (made with ``truncate``: a few KB on disk), a zero-size file, foreign magic
bytes. Each is read by :func:`read_facts` and by a whole :func:`discover` scan; the scan goes on
past every one of them and still lists the good model. The counts are printed.
"""

from __future__ import annotations

import os
import struct
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.errors import ArxiuError
from app.core.models.discovery import ScanLimits, discover
from app.core.models.gguf import read_gguf
from app.core.models.gguf_facts import read_facts
from app.core.models.gguf_header import FILE_TIME_BOUND_S
from tests.core.models.gguf_files import write_gguf

GIB = 1 << 30
SPARSE_SIZE = 480 * 1024 * 1024
REFUSAL_CODES = {
    "ai.model_file_invalid",
    "ai.model_file_sparse",
    "ai.model_header_too_deep",
    "ai.model_header_slow",
}


def _u32(value: int) -> bytes:
    return struct.pack("<I", value)


def _u64(value: int) -> bytes:
    return struct.pack("<Q", value)


def _string(text: str) -> bytes:
    data = text.encode()
    return _u64(len(data)) + data


def _head(tensors: int, kvs: int) -> bytes:
    return b"GGUF" + _u32(3) + _u64(tensors) + _u64(kvs)


def nested_arrays(path: Path, depth: int = 10_000) -> None:
    """One key whose value is an array of an array of … ``depth`` deep (about 1.2 MB)."""
    body = _string("general.architecture") + _u32(9)
    body += (_u32(9) + _u64(1)) * depth + _u32(0) + _u64(0)
    path.write_bytes(_head(0, 1) + body)


def huge_kv_count(path: Path) -> None:
    path.write_bytes(_head(0, 2**40) + _string("a") + _u32(4) + _u32(1))


def huge_tensor_count(path: Path) -> None:
    path.write_bytes(_head(2**40, 0) + b"\0" * 64)


def huge_array_count(path: Path) -> None:
    path.write_bytes(_head(0, 1) + _string("a") + _u32(9) + _u32(8) + _u64(2**40))


def huge_string(path: Path) -> None:
    path.write_bytes(_head(0, 1) + _u64(2**60) + b"abc")


def huge_value_string(path: Path) -> None:
    path.write_bytes(_head(0, 1) + _string("general.name") + _u32(8) + _u64(2**50) + b"x")


def arrays_of_empty_arrays(path: Path) -> None:
    """4M empty inner arrays (12 bytes each): a cheap file that is slow to walk in Python."""
    count = 1 << 22
    body = _string("tokenizer.x") + _u32(9) + _u32(9) + _u64(count)
    path.write_bytes(_head(0, 1) + body + (_u32(0) + _u64(0)) * count)


def sparse_arrays(path: Path) -> None:
    """The red team's 480 MB sparse file: array-of-arrays counts over a hole of zeros."""
    body = _string("tokenizer.x") + _u32(9) + _u32(9) + _u64(40_000_000)
    path.write_bytes(_head(0, 1) + body)
    os.truncate(path, SPARSE_SIZE)


def sparse_model(path: Path) -> None:
    """A real model's header, extended with ``truncate`` to 480 MB of nothing."""
    write_gguf(path)
    os.truncate(path, SPARSE_SIZE)


def truncated(path: Path) -> None:
    write_gguf(path)
    path.write_bytes(path.read_bytes()[:300])


def zero_size(path: Path) -> None:
    path.write_bytes(b"")


def foreign_magic(path: Path) -> None:
    path.write_bytes(b"PK\x03\x04" + b"\0" * 200)


def bad_value_type(path: Path) -> None:
    path.write_bytes(_head(0, 1) + _string("a") + _u32(77) + b"\0" * 16)


def many_dims(path: Path) -> None:
    path.write_bytes(_head(1, 0) + _string("t") + _u32(2**31) + b"\0" * 64)


HOSTILE: dict[str, Callable[[Path], None]] = {
    "nested-10k.gguf": nested_arrays,
    "kv-count.gguf": huge_kv_count,
    "tensor-count.gguf": huge_tensor_count,
    "array-count.gguf": huge_array_count,
    "key-length.gguf": huge_string,
    "value-length.gguf": huge_value_string,
    "empty-arrays.gguf": arrays_of_empty_arrays,
    "sparse-arrays.gguf": sparse_arrays,
    "sparse-model.gguf": sparse_model,
    "truncated.gguf": truncated,
    "zero.gguf": zero_size,
    "magic.gguf": foreign_magic,
    "value-type.gguf": bad_value_type,
    "dims.gguf": many_dims,
}


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    folder = tmp_path / "models"
    folder.mkdir()
    for name, make in HOSTILE.items():
        make(folder / name)
    write_gguf(folder / "good.gguf")
    return folder


def test_each_hostile_header_is_a_coded_refusal_within_the_time_bound(hostile: Path) -> None:
    refused, slowest = 0, 0.0
    for name in HOSTILE:
        started = time.monotonic()
        with pytest.raises(ArxiuError) as error:
            read_facts(hostile / name)
        took = time.monotonic() - started
        slowest = max(slowest, took)
        assert error.value.code in REFUSAL_CODES, (name, error.value.code)
        assert took < FILE_TIME_BOUND_S + 0.5, (name, took)
        refused += 1
    print(
        f"hostile headers: {len(HOSTILE)} tried, {refused} coded refusals, 0 tracebacks, "
        f"slowest {slowest:.3f} s"
    )
    assert refused == len(HOSTILE)


def test_the_loader_check_refuses_them_too(hostile: Path) -> None:
    """``read_gguf`` (before llama.cpp loads a catalog model) is bounded the same way."""
    for name in HOSTILE:
        with pytest.raises(ArxiuError) as error:
            read_gguf(hostile / name)
        assert error.value.code in REFUSAL_CODES | {"ai.model_file_missing"}, name


def test_a_scan_goes_on_past_every_hostile_file(hostile: Path, tmp_path: Path) -> None:
    started = time.monotonic()
    result = discover(
        home=tmp_path / "empty",
        env={},
        folders=[hostile],
        servers=(),
        available_memory=lambda: 16 * GIB,
        limits=ScanLimits(time_budget_s=120),
    )
    took = time.monotonic() - started
    assert [m.name for m in result.models] == ["good"]
    codes = {r.path.name: r.code for r in result.refused}
    assert set(codes) == set(HOSTILE)
    assert set(codes.values()) <= REFUSAL_CODES
    assert codes["nested-10k.gguf"] == "ai.model_header_too_deep"
    assert codes["sparse-model.gguf"] == "ai.model_file_sparse"
    assert codes["sparse-arrays.gguf"] == "ai.model_file_sparse"
    assert codes["empty-arrays.gguf"] == "ai.model_header_slow"
    print(
        f"discovery past {len(HOSTILE)} hostile files: {len(result.refused)} refused "
        f"({sorted(set(codes.values()))}), 1 model listed, {took:.2f} s"
    )
    assert took < len(HOSTILE) * FILE_TIME_BOUND_S


def test_the_scan_budget_bounds_a_slow_file(tmp_path: Path) -> None:
    """A file slow to read stops at the scan's own budget when that is shorter."""
    folder = tmp_path / "m"
    folder.mkdir()
    arrays_of_empty_arrays(folder / "slow.gguf")
    started = time.monotonic()
    discover(
        home=tmp_path / "empty",
        env={},
        folders=[folder],
        servers=(),
        available_memory=lambda: 16 * GIB,
        limits=ScanLimits(time_budget_s=0.2),
    )
    assert time.monotonic() - started < 1.5


def test_a_real_model_is_still_described_from_its_real_size(tmp_path: Path) -> None:
    model = write_gguf(tmp_path / "m.gguf")
    facts = read_facts(model)
    assert facts.size == model.stat().st_size
    assert facts.architecture == "qwen2" and facts.memory_needed() > facts.size
