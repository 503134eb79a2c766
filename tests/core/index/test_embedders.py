"""Embedders: the hashing one for tests, the bundled MiniLM, model selection."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from app.core.errors import IndexError_
from app.core.index import HashingEmbedder, SentenceTransformerEmbedder
from app.core.index.embedders import bundled_model_path, default_embedder


def test_hashing_embedder_is_deterministic_and_normalised() -> None:
    a = HashingEmbedder(32).embed(["the reservoir", "the reservoir", ""])
    assert np.allclose(a[0], a[1]) and np.isclose(np.linalg.norm(a[0]), 1.0)
    assert not a[2].any()
    assert HashingEmbedder(32, salt="x").model_id != HashingEmbedder(32).model_id


def test_default_embedder_follows_the_setting(tmp_path: Path) -> None:
    assert isinstance(default_embedder("hashing"), HashingEmbedder)
    custom = default_embedder(str(tmp_path))
    assert isinstance(custom, SentenceTransformerEmbedder) and custom.model_id == tmp_path.name
    with pytest.raises(IndexError_) as caught:
        custom.embed(["x"])
    assert caught.value.code == "index.model_missing"


def test_the_bundled_model_is_found_in_site_packages() -> None:
    path = bundled_model_path()
    assert (path / "modules.json").exists() and "site-packages" in str(path)


@pytest.mark.slow
def test_bundled_minilm_embeds_by_meaning(minilm: SentenceTransformerEmbedder) -> None:
    vectors = minilm.embed(
        ["They forced us to leave our homes", "We were evicted from our houses", "Coin prices"]
    )
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2
    assert minilm.model_id == "all-MiniLM-L6-v2"


@pytest.mark.slow
def test_int8_backend_keeps_meaning_under_its_own_model_id() -> None:
    int8 = SentenceTransformerEmbedder(backend="torch-int8")
    vectors = int8.embed(["They forced us to leave our homes", "We were evicted", "Coin prices"])
    assert int8.model_id == "all-MiniLM-L6-v2+torch-int8"
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2


def test_embedders_pickle_unloaded_for_a_worker_process(tmp_path: Path) -> None:
    import pickle

    from app.core.index.embedders import UseEmbedder

    minilm = SentenceTransformerEmbedder(tmp_path, backend="torch-int8", batch_size=8)
    use = UseEmbedder(batch_size=16)
    again, use_again = pickle.loads(pickle.dumps((minilm, use)))
    assert (again.model_id, again.path, again.batch_size) == (minilm.model_id, tmp_path, 8)
    assert again.languages == minilm.languages and not again.loaded
    assert use_again.batch_size == 16 and not use_again.loaded
    with pytest.raises(IndexError_) as caught:  # the copy loads (and fails) on its own
        again.embed(["x"])
    assert caught.value.code == "index.model_missing"
