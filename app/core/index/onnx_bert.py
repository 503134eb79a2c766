"""An ONNX graph of a BERT sentence encoder, written straight from its ``model.safetensors``.

The graph is the forward pass of ``transformers``' ``BertModel`` (embeddings, post-norm encoder
layers with erf GELU) followed by sentence-transformers' mean pooling over the attention mask and
L2 normalisation, so ONNX Runtime computes the vectors torch computes for the same token ids
(cosine 1.000000 on the demo and Tate texts; ``benchmarks/bench_embedders.py`` checks it). No
torch, transformers or optimum is involved: the weights are read from the safetensors file with
numpy and the graph is assembled with the ``onnx`` package, so the bundled all-MiniLM-L6-v2 runs
without torch installed.

:func:`cached_model_file` builds the file once per weights file (keyed by its path, size and
modification time and :data:`GRAPH_VERSION`) under the app's cache folder and reuses it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from app.core.errors import IndexError_
from app.core.phrases import Phrase

log = logging.getLogger(__name__)

GRAPH_VERSION = 1
"""Bumped whenever the graph written here changes (a new cache file is built)."""
OPSET = 17
"""LayerNormalization is an ONNX operator from opset 17."""
WEIGHTS = "model.safetensors"
DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
"""safetensors dtype names this reader understands."""
NEG = float(np.finfo(np.float32).min)
"""The additive attention bias of a padding position (as ``transformers`` uses)."""


@dataclass(frozen=True)
class BertShape:
    """What the graph needs from ``config.json``."""

    layers: int
    hidden: int
    heads: int
    eps: float

    @classmethod
    def read(cls, folder: Path) -> BertShape:
        """The shape of the BERT model in ``folder`` (coded error when it is not one)."""
        try:
            config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise unsupported(
                folder, Phrase.of("config.json unreadable: {why}", why=str(exc))
            ) from exc
        if config.get("model_type") != "bert" or config.get("hidden_act", "gelu") != "gelu":
            raise unsupported(folder, Phrase.of("not a BERT model with GELU activations"))
        if config.get("position_embedding_type", "absolute") != "absolute":
            raise unsupported(folder, Phrase.of("position embeddings are not absolute"))
        return cls(
            int(config["num_hidden_layers"]),
            int(config["hidden_size"]),
            int(config["num_attention_heads"]),
            float(config.get("layer_norm_eps", 1e-12)),
        )


def unsupported(folder: Path, why: Phrase) -> IndexError_:
    """``index.onnx_unsupported``: the model in ``folder`` runs through torch instead."""
    return IndexError_(
        "index.onnx_unsupported",
        Phrase.of(
            "The model in {folder} cannot run on ONNX Runtime here: {why}.",
            folder=str(folder),
            why=why,
        ),
        hint="It runs through sentence-transformers and torch instead.",
    )


def read_safetensors(path: Path) -> dict[str, npt.NDArray[Any]]:
    """Every tensor of a ``.safetensors`` file as a numpy array (its documented layout: an
    8-byte little-endian header length, a JSON header, then the raw little-endian data)."""
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    (length,) = struct.unpack("<Q", raw[:8].tobytes())
    header = json.loads(raw[8 : 8 + length].tobytes())
    base = 8 + length
    tensors: dict[str, npt.NDArray[Any]] = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        start, stop = spec["data_offsets"]
        dtype = DTYPES[spec["dtype"]]
        data = raw[base + start : base + stop].view(dtype).reshape(spec["shape"])
        floats = np.asarray(data, dtype=np.float32) if dtype == np.float16 else data
        tensors[name.removeprefix("bert.")] = floats
    return tensors


class _Graph:
    """A small builder of ONNX nodes and initialisers with generated names."""

    def __init__(self) -> None:
        from onnx import helper, numpy_helper

        self.helper, self.numpy_helper = helper, numpy_helper
        self.nodes: list[Any] = []
        self.inits: list[Any] = []
        self._count = 0

    def const(self, name: str, value: npt.NDArray[Any]) -> str:
        """An initialiser holding ``value``."""
        self.inits.append(self.numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def op(self, op_type: str, *inputs: str, **attrs: Any) -> str:
        """One node; returns the name of its (single) output."""
        self._count += 1
        out = f"{op_type.lower()}_{self._count}"
        self.nodes.append(self.helper.make_node(op_type, list(inputs), [out], **attrs))
        return out

    def linear(self, x: str, weights: dict[str, npt.NDArray[Any]], prefix: str) -> str:
        """``x @ W.T + b`` of the torch ``Linear`` named ``prefix``."""
        w = self.const(f"{prefix}.weight_t", weights[f"{prefix}.weight"].T)
        return self.op(
            "Add", self.op("MatMul", x, w), self.const(f"{prefix}.bias", weights[f"{prefix}.bias"])
        )

    def norm(self, x: str, weights: dict[str, npt.NDArray[Any]], prefix: str, eps: float) -> str:
        """The LayerNorm named ``prefix`` over the last axis."""
        gamma = self.const(f"{prefix}.weight", weights[f"{prefix}.weight"])
        beta = self.const(f"{prefix}.bias", weights[f"{prefix}.bias"])
        return self.op("LayerNormalization", x, gamma, beta, axis=-1, epsilon=eps)


def _embeddings(g: _Graph, w: dict[str, npt.NDArray[Any]], shape: BertShape) -> str:
    """Word + token type 0 + absolute position embeddings, layer-normalised."""
    seq = g.op("Shape", "input_ids", start=1, end=2)
    zero = g.const("zero_1d", np.array([0], np.int64))
    axis0 = g.const("axis0", np.array([0], np.int64))
    table = g.const("position_table", w["embeddings.position_embeddings.weight"])
    positions = g.op("Slice", table, zero, seq, axis0)
    words = g.op(
        "Gather", g.const("word_table", w["embeddings.word_embeddings.weight"]), "input_ids"
    )
    typed = g.op(
        "Add", words, g.const("token_type_0", w["embeddings.token_type_embeddings.weight"][0])
    )
    return g.norm(g.op("Add", typed, positions), w, "embeddings.LayerNorm", shape.eps)


def _attention(
    g: _Graph, x: str, bias: str, w: dict[str, npt.NDArray[Any]], i: int, shape: BertShape
) -> str:
    """One layer's multi-head self-attention with its output projection, residual and norm."""
    prefix = f"encoder.layer.{i}.attention"
    split = g.const(
        f"heads_{i}", np.array([0, 0, shape.heads, shape.hidden // shape.heads], np.int64)
    )
    merged = g.const(f"merged_{i}", np.array([0, 0, shape.hidden], np.int64))

    def heads(name: str, perm: list[int]) -> str:
        projected = g.linear(x, w, f"{prefix}.self.{name}")
        return g.op("Transpose", g.op("Reshape", projected, split), perm=perm)

    query, key = heads("query", [0, 2, 1, 3]), heads("key", [0, 2, 3, 1])
    value = heads("value", [0, 2, 1, 3])
    scale = g.const(f"scale_{i}", np.array(1.0 / np.sqrt(shape.hidden // shape.heads), np.float32))
    scores = g.op("Add", g.op("Mul", g.op("MatMul", query, key), scale), bias)
    context = g.op("MatMul", g.op("Softmax", scores, axis=-1), value)
    context = g.op("Reshape", g.op("Transpose", context, perm=[0, 2, 1, 3]), merged)
    out = g.linear(context, w, f"{prefix}.output.dense")
    return g.norm(g.op("Add", out, x), w, f"{prefix}.output.LayerNorm", shape.eps)


def _feed_forward(
    g: _Graph, x: str, w: dict[str, npt.NDArray[Any]], i: int, shape: BertShape
) -> str:
    """One layer's intermediate dense + erf GELU + output dense, residual and norm."""
    prefix = f"encoder.layer.{i}"
    h = g.linear(x, w, f"{prefix}.intermediate.dense")
    half = g.const(f"half_{i}", np.array(0.5, np.float32))
    one = g.const(f"one_{i}", np.array(1.0, np.float32))
    root2 = g.const(f"sqrt2_{i}", np.array(np.sqrt(2.0), np.float32))
    erf = g.op("Erf", g.op("Div", h, root2))
    gelu = g.op("Mul", g.op("Mul", h, half), g.op("Add", erf, one))
    out = g.linear(gelu, w, f"{prefix}.output.dense")
    return g.norm(g.op("Add", out, x), w, f"{prefix}.output.LayerNorm", shape.eps)


def _pool(g: _Graph, hidden: str, mask: str) -> str:
    """Mean over the unmasked tokens, then L2 normalisation (sentence-transformers' modules)."""
    axis1 = g.const("axis1", np.array([1], np.int64))
    weights = g.op("Unsqueeze", mask, g.const("axis2", np.array([2], np.int64)))
    total = g.op("ReduceSum", g.op("Mul", hidden, weights), axis1, keepdims=0)
    count = g.op("ReduceSum", weights, axis1, keepdims=0)
    count = g.op("Max", count, g.const("min_count", np.array(1e-9, np.float32)))
    mean = g.op("Div", total, count)
    norm = g.op("Sqrt", g.op("ReduceSum", g.op("Mul", mean, mean), axis1, keepdims=1))
    norm = g.op("Max", norm, g.const("min_norm", np.array(1e-12, np.float32)))
    return g.op("Div", mean, norm)


def build_model(folder: Path) -> bytes:
    """The serialised ONNX model of the BERT sentence encoder in ``folder``: inputs
    ``input_ids`` and ``attention_mask`` (int64, batch × tokens), output ``embedding``
    (float32, batch × hidden, unit length)."""
    shape = BertShape.read(folder)
    try:
        from onnx import TensorProto, helper
    except ImportError as exc:
        raise unsupported(folder, Phrase.of("the onnx package is not installed")) from exc
    weights = read_safetensors(folder / WEIGHTS)
    g = _Graph()
    mask = g.op("Cast", "attention_mask", to=TensorProto.FLOAT)
    inverted = g.op("Sub", g.const("one", np.array(1.0, np.float32)), mask)
    bias = g.op("Mul", inverted, g.const("neg", np.array(NEG, np.float32)))
    bias = g.op("Unsqueeze", bias, g.const("axes12", np.array([1, 2], np.int64)))
    x = _embeddings(g, weights, shape)
    for i in range(shape.layers):
        x = _feed_forward(g, _attention(g, x, bias, weights, i, shape), weights, i, shape)
    g.nodes.append(helper.make_node("Identity", [_pool(g, x, mask)], ["embedding"]))
    ints = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "tokens"])
        for name in ("input_ids", "attention_mask")
    ]
    out = helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", shape.hidden])
    graph = helper.make_graph(g.nodes, "sentence_encoder", ints, [out], g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    return bytes(model.SerializeToString())


def cache_key(folder: Path) -> str:
    """A short key of the weights file (path, size, modification time) and the graph version."""
    weights = (folder / WEIGHTS).resolve()
    try:
        stat = weights.stat()
    except OSError as exc:
        raise unsupported(folder, Phrase.of("{file} is missing", file=WEIGHTS)) from exc
    seed = f"{weights}|{stat.st_size}|{stat.st_mtime_ns}|{GRAPH_VERSION}"
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()[:16]


def cached_model_file(folder: Path, cache: Path) -> Path:
    """The ONNX file of ``folder``'s model under ``cache`` (built and written the first time,
    atomically, so two processes never read a half-written file).

    Raises:
        IndexError_: ``index.onnx_unsupported`` (not a BERT model, no weights, no ``onnx``
            package) or ``index.onnx_build_failed`` (the file could not be written).
    """
    target = cache / f"{folder.name}-{cache_key(folder)}.onnx"
    if target.exists():
        return target
    data = build_model(folder)
    partial = target.with_suffix(f".{os.getpid()}.partial")
    try:
        cache.mkdir(parents=True, exist_ok=True)
        partial.write_bytes(data)
        os.replace(partial, target)
    except OSError as exc:
        with contextlib.suppress(OSError):  # absent, or its folder could not be made
            partial.unlink()
        raise IndexError_(
            "index.onnx_build_failed",
            Phrase.of(
                "The ONNX file of {name} could not be written to {cache}: {why}",
                name=folder.name,
                cache=str(cache),
                why=str(exc),
            ),
            hint="Check that Arxiu's data folder is writable and has space.",
        ) from exc
    log.info("built %s (%d MB)", target, len(data) // 2**20)
    return target
