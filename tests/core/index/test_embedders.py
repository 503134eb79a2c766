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
    use = UseEmbedder(batch_size=16, threads=2)
    again, use_again = pickle.loads(pickle.dumps((minilm, use)))
    assert (again.model_id, again.path, again.batch_size) == (minilm.model_id, tmp_path, 8)
    assert again.languages == minilm.languages and not again.loaded
    assert (use_again.batch_size, use_again.threads) == (16, 2) and not use_again.loaded
    with pytest.raises(IndexError_) as caught:  # the copy loads (and fails) on its own
        again.embed(["x"])
    assert caught.value.code == "index.model_missing"


# -- the ONNX Runtime path ----------------------------------------------------------------------
MEANING = ["They forced us to leave our homes", "We were evicted from our houses", "Coin prices"]


def test_safetensors_reader_matches_the_safetensors_library() -> None:
    from safetensors.numpy import load_file

    from app.core.index.onnx_bert import read_safetensors

    path = bundled_model_path() / "model.safetensors"
    ours, theirs = read_safetensors(path), load_file(str(path))
    assert set(ours) == set(theirs)
    for name in ("embeddings.word_embeddings.weight", "encoder.layer.5.output.dense.bias"):
        assert np.array_equal(ours[name], theirs[name])


def test_a_model_that_is_not_bert_is_refused_with_a_code(tmp_path: Path) -> None:
    from app.core.index.onnx_bert import BertShape

    (tmp_path / "config.json").write_text('{"model_type": "t5"}', encoding="utf-8")
    with pytest.raises(IndexError_) as caught:
        BertShape.read(tmp_path)
    assert caught.value.code == "index.onnx_unsupported"


@pytest.mark.slow
def test_onnx_runtime_gives_torchs_vectors_under_the_same_model_id() -> None:
    ort = SentenceTransformerEmbedder()
    torch = SentenceTransformerEmbedder(backend="torch")
    texts = [*MEANING, "", "Els van fer fora de casa quan l'embassament va negar el poble"]
    texts.append(" ".join(["reservoir"] * 400))  # past max_seq_length: truncated alike
    ours, theirs = ort.embed(texts), torch.embed(texts)
    assert ort.runtime == "ort" and torch.runtime == "torch"
    assert ort.model_id == torch.model_id == "all-MiniLM-L6-v2"
    assert ours.shape == theirs.shape == (len(texts), 384) and ours.dtype == np.float32
    assert np.sum(ours * theirs, axis=1).min() > 0.99999
    assert ours[0] @ ours[1] > ours[0] @ ours[2] + 0.2


@pytest.mark.slow
def test_sorting_by_length_does_not_change_a_vector() -> None:
    minilm = SentenceTransformerEmbedder(batch_size=2)
    texts = ["short", "a much longer text about the flooded valley and its people", "mid size"]
    together = minilm.embed(texts)
    alone = np.concatenate([minilm.embed([t]) for t in texts])
    assert np.abs(together - alone).max() < 1e-5


@pytest.mark.slow
def test_the_onnx_file_is_made_once_in_the_cache(tmp_path: Path) -> None:
    from app.core.index.embedders import onnx_cache_dir
    from app.core.index.onnx_bert import cached_model_file

    SentenceTransformerEmbedder().load()
    made = list(onnx_cache_dir().glob("*.onnx"))
    assert len(made) == 1 and made[0].stat().st_size > 80 * 2**20
    stamp = made[0].stat().st_mtime_ns
    assert cached_model_file(bundled_model_path(), onnx_cache_dir()) == made[0]
    assert made[0].stat().st_mtime_ns == stamp  # reused, not rebuilt


@pytest.mark.slow
@pytest.mark.allow_log("app.core.index.embedders", "runs on torch")
def test_an_unwritable_cache_falls_back_to_torch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.core.index.onnx_bert import cached_model_file

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("", encoding="utf-8")
    with pytest.raises(IndexError_) as caught:
        cached_model_file(bundled_model_path(), blocker / "onnx")
    assert caught.value.code == "index.onnx_build_failed"
    monkeypatch.setenv("ARXIU_HOME", str(blocker))
    minilm = SentenceTransformerEmbedder()
    vectors = minilm.embed(MEANING)
    assert minilm.runtime == "torch" and minilm.model_id == "all-MiniLM-L6-v2"
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2


@pytest.mark.slow
def test_a_pooling_the_graph_lacks_runs_on_torch(tmp_path: Path) -> None:
    import json
    import shutil

    folder = tmp_path / "cls-minilm"
    shutil.copytree(bundled_model_path(), folder)
    pooling = folder / "1_Pooling" / "config.json"
    config = json.loads(pooling.read_text(encoding="utf-8"))
    config.update(pooling_mode_mean_tokens=False, pooling_mode_cls_token=True)
    pooling.write_text(json.dumps(config), encoding="utf-8")
    custom = SentenceTransformerEmbedder(folder)
    vectors = custom.embed(MEANING)
    assert custom.runtime == "torch" and custom.model_id == "cls-minilm"
    assert vectors.shape == (3, 384)
