"""A sentence-transformers BERT model run by ONNX Runtime, without torch.

:class:`OrtEncoder` tokenises with the model folder's own ``tokenizer.json`` (the Rust
``tokenizers`` library sentence-transformers uses, truncated at the folder's
``max_seq_length``: the same token ids), sorts the texts by token count and runs batches of
similar lengths through the graph of :mod:`app.core.index.onnx_bert` (mean pooling and
normalisation inside it). Sorting matters more than the runtime: unsorted batches of 32 padded to
their longest text measured 4x slower on the demo and Tate texts.

Measured on two shared cores (``benchmarks/bench_embedders.py``): one intra-op thread beat two
(a second thread waits on a core another process holds), and batches of 16 were as fast as 32
(45-51 against 38-41 texts/s).
"""

from __future__ import annotations

import json
import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import numpy.typing as npt

from app.core.errors import IndexError_
from app.core.index import onnx_bert
from app.core.json_types import JsonObject
from app.core.phrases import Phrase

log = logging.getLogger(__name__)

ORT_BATCH = 16
"""Texts per ONNX Runtime call (sorted by length, so a batch pads little)."""
ORT_PARALLEL = 1
"""Batches run at once, each on one intra-op thread. One intra-op thread measured faster than
two on the two shared cores (a second thread spins waiting for a core another process holds);
two batches at once, one thread each, measured the same as one under load (61.9 against 61.1
texts/s) and 1.27x on a quiet machine (170 against 135), so one is the default and leaves the
other core to the person using the machine; ``threads=2`` on the embedder asks for two."""
SUPPORTED_MODULES = {
    "sentence_transformers.models.Transformer",
    "sentence_transformers.models.Pooling",
    "sentence_transformers.models.Normalize",
}


def _read_json(path: Path) -> JsonObject:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def check_pipeline(folder: Path) -> None:
    """Refuse (``index.onnx_unsupported``) a folder whose modules are not Transformer → mean
    Pooling (→ Normalize), the pipeline the graph reproduces."""
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise onnx_bert.unsupported(
            folder, Phrase.of("modules.json unreadable: {why}", why=str(exc))
        ) from exc
    kinds = {m.get("type") for m in modules}
    if not kinds <= SUPPORTED_MODULES:
        raise onnx_bert.unsupported(
            folder, Phrase.of("modules {modules}", modules=str(sorted(kinds - SUPPORTED_MODULES)))
        )
    pooling = next(m for m in modules if m.get("type", "").endswith(".Pooling"))
    config = _read_json(folder / pooling.get("path", "") / "config.json")
    modes = {k for k, v in config.items() if k.startswith("pooling_mode") and v}
    if modes != {"pooling_mode_mean_tokens"}:
        raise onnx_bert.unsupported(
            folder, Phrase.of("pooling {modes} is not a plain mean", modes=str(sorted(modes)))
        )


class OrtEncoder:
    """The model in ``folder`` as an ONNX Runtime session (built from its weights once, into
    ``cache``).

    Raises:
        IndexError_: ``index.onnx_unsupported`` (the folder's model or pipeline is not the BERT
            mean-pooling encoder the graph reproduces, or onnxruntime/tokenizers are missing),
            ``index.onnx_build_failed`` (the ONNX file could not be written).
    """

    def __init__(self, folder: Path, cache: Path, *, parallel: int = ORT_PARALLEL) -> None:
        check_pipeline(folder)
        self.parallel = parallel
        try:
            import onnxruntime as ort  # type: ignore[import-untyped]
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise onnx_bert.unsupported(
                folder, Phrase.of("{module} is not installed", module=str(exc.name))
            ) from exc
        self.model_file = onnx_bert.cached_model_file(folder, cache)
        settings = _read_json(folder / "sentence_bert_config.json")
        self.lower = bool(settings.get("do_lower_case", False))
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        length = settings.get("max_seq_length")
        self.tokenizer.enable_truncation(
            int(length) if isinstance(length, int | float) and length else 512
        )
        self.tokenizer.no_padding()
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        try:
            self.session = ort.InferenceSession(
                str(self.model_file), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own untyped exceptions
            raise IndexError_(
                "index.onnx_build_failed",
                Phrase.of(
                    "ONNX Runtime could not load {file}: {why}",
                    file=str(self.model_file),
                    why=str(exc),
                ),
                hint="Delete the file; it is rebuilt from the model's weights.",
            ) from exc
        self.dim = int(self.session.get_outputs()[0].shape[1])

    def get_embedding_dimension(self) -> int:
        """The vector length (as ``SentenceTransformer`` names it)."""
        return self.dim

    def encode(self, texts: list[str], batch_size: int = ORT_BATCH) -> npt.NDArray[np.float32]:
        """One unit-length float32 row per text, batches of similar token counts (up to
        :attr:`parallel` batches at once: ``session.run`` releases the GIL)."""
        if self.lower:
            texts = [t.lower() for t in texts]
        ids = [e.ids for e in self.tokenizer.encode_batch(texts)]
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        batches = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]

        def run(rows: list[int]) -> None:
            out[rows] = self.run([ids[i] for i in rows])

        if self.parallel > 1 and len(batches) > 1:
            with ThreadPoolExecutor(self.parallel) as pool:
                list(pool.map(run, batches))
        else:
            for rows in batches:
                run(rows)
        return out

    def run(self, ids: list[list[int]]) -> npt.NDArray[np.float32]:
        """The vectors of one batch of token ids (padded to its longest, the first)."""
        width = max(len(row) for row in ids)
        tokens = np.zeros((len(ids), width), dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for r, row in enumerate(ids):
            tokens[r, : len(row)] = row
            mask[r, : len(row)] = 1
        feed = {"input_ids": tokens, "attention_mask": mask}
        return np.asarray(self.session.run(["embedding"], feed)[0], dtype=np.float32)
