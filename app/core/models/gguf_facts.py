"""What a GGUF file is, read from its header only (the weights are never loaded).

:func:`read_facts` walks the header (metadata, then the tensor table) with plain reads and
skips the large arrays (the vocabulary), so a 5 GB model is described in milliseconds:
architecture, parameter count, quantisation, context length, chat template and whether that
template can call tools. Names of quantisation types come from the ``gguf`` package that
llama.cpp publishes. A file whose tensors end past its size is a truncated download.

The header is read by :func:`~app.core.models.gguf_header.read_header`, bounded in depth,
counts, bytes and time. Errors: ``ai.model_file_missing`` (cannot be read),
``ai.model_file_invalid`` (not a GGUF file, a corrupt header, a truncated file) and the
bounded reader's refusals (``ai.model_file_sparse``, ``ai.model_header_too_deep``,
``ai.model_header_slow``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType, LlamaFileType

from app.core.json_types import JsonObject
from app.core.models.chat_template import template_supports_tools
from app.core.models.gguf import GGUFInfo
from app.core.models.gguf_header import (
    MAGIC,
    Metadata,
    Tensor,
    read_header,
)
from app.core.models.gguf_header import invalid_file_error as _invalid
from app.core.models.model_languages import gguf_languages
from app.core.phrases import Phrase

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
    languages: tuple[str, ...] = ()
    """The ISO codes of ``general.languages``, when the file names them."""

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

    def to_json(self) -> JsonObject:
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


def quantisation_name(meta: Metadata, tensors: list[Tensor]) -> str:
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


def read_facts(path: Path, deadline: float | None = None) -> GGUFFacts:
    """The facts of the GGUF file ``path`` (any name: Ollama blobs have no extension).

    Read by :func:`read_header` (bounded); a file whose tensors end past its size is refused
    as truncated, so the memory estimate is made from bytes the file really holds.

    Raises:
        ModelError: the codes of :func:`read_header`.
    """
    header = read_header(path, deadline)
    tensors, size = header.tensors, header.size
    end = max(
        (header.data_start + offset + _tensor_bytes(n, kind) for n, kind, offset in tensors),
        default=0,
    )
    if end > size:
        raise _invalid(
            path,
            Phrase.of("the file is truncated ({size} of {end} bytes)", size=size, end=end),
        )
    return _facts(path, size, header.meta, tensors)


def _facts(path: Path, size: int, meta: Metadata, tensors: list[Tensor]) -> GGUFFacts:
    arch = str(meta.get("general.architecture") or "")

    def number(name: str, default: int = 0) -> int:
        value = meta.get(f"{arch}.{name}", default)
        return (
            int(value)
            if isinstance(value, int | float) and not isinstance(value, bool)
            else default
        )

    if not arch:
        raise _invalid(path, Phrase.of("the header lacks the model architecture"))
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
        languages=tuple(gguf_languages(meta.get("general.languages"))),
    )


def is_gguf(path: Path) -> bool:
    """Whether ``path`` starts with the GGUF magic bytes (false when it cannot be read)."""
    try:
        with path.open("rb") as handle:
            return handle.read(4) == MAGIC
    except OSError:
        return False
