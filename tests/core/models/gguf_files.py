"""Tiny valid GGUF files written with the ``gguf`` package; fake homes laid out like the apps'."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
from gguf import GGUFWriter, LlamaFileType

QWEN_TOOLS_TEMPLATE = (
    "{%- if tools %}<|im_start|>system\n# Tools\n<tools>\n"
    "{%- for tool in tools %}{{ tool | tojson }}\n{%- endfor %}</tools>\n"
    'For each call return <tool_call>{"name": ..., "arguments": ...}</tool_call><|im_end|>\n'
    "{%- endif %}"
    "{%- for message in messages %}"
    "{%- if message.role == 'tool' %}<|im_start|>user\n<tool_response>{{ message.content }}"
    "</tool_response><|im_end|>\n"
    "{%- elif message.tool_calls %}<|im_start|>assistant\n"
    '{%- for call in message.tool_calls %}<tool_call>{"name": "{{ call.function.name }}", '
    '"arguments": {{ call.function.arguments | tojson }}}</tool_call>{%- endfor %}<|im_end|>\n'
    "{%- else %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n{%- endif %}"
    "{%- endfor %}{%- if add_generation_prompt %}<|im_start|>assistant\n{%- endif %}"
)
CHATML_TEMPLATE = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>\\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def write_gguf(
    path: Path,
    *,
    arch: str = "qwen2",
    name: str = "Tiny",
    context: int = 32768,
    template: str | None = QWEN_TOOLS_TEMPLATE,
    file_type: LlamaFileType | None = LlamaFileType.MOSTLY_Q4_K_M,
    layers: int = 2,
    width: int = 64,
    languages: list[str] | None = None,
) -> Path:
    """A small but valid GGUF file: a header like a real model's and two f32 tensors."""
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = GGUFWriter(str(path), arch)
    writer.add_name(name)
    writer.add_context_length(context)
    writer.add_block_count(layers)
    writer.add_embedding_length(width)
    writer.add_head_count(4)
    writer.add_head_count_kv(2)
    if file_type is not None:
        writer.add_file_type(file_type)
    if template is not None:
        writer.add_chat_template(template)
    if languages is not None:
        writer.add_languages(languages)
    writer.add_tensor("token_embd.weight", np.ones((32, width), dtype=np.float32))
    writer.add_tensor("output_norm.weight", np.ones((width,), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def place(source: Path, target: Path) -> Path:
    """``target`` as a symbolic link to ``source`` (a copy where links are not allowed)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.symlink(source, target)
    except OSError:
        target.write_bytes(source.read_bytes())
    return target


def ollama_model(models: Path, name: str, tag: str, gguf: Path) -> Path:
    """An Ollama models folder holding ``gguf`` as the blob of ``name:tag``; returns the blob."""
    digest = hashlib.sha256(str(gguf).encode()).hexdigest()
    blob = place(gguf, models / "blobs" / f"sha256-{digest}")
    manifest = models / "manifests" / "registry.ollama.ai" / "library" / name / tag
    manifest.parent.mkdir(parents=True, exist_ok=True)
    layers = [
        {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{digest}"},
        {"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:00"},
    ]
    manifest.write_text(json.dumps({"schemaVersion": 2, "layers": layers}))
    return blob


def with_template(source: Path, target: Path, template: str) -> Path:
    """A copy of the GGUF ``source`` whose chat template is ``template`` (weights unchanged)."""
    from gguf import GGUFReader, GGUFValueType

    reader = GGUFReader(source)
    arch = str(reader.fields["general.architecture"].contents())
    writer = GGUFWriter(str(target), arch)
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key in ("general.architecture", "tokenizer.chat_template"):
            continue
        kind = field.types[0]
        sub = field.types[-1] if kind == GGUFValueType.ARRAY else None
        writer.add_key_value(key, field.contents(), kind, sub_type=sub)
    writer.add_chat_template(template)
    for tensor in reader.tensors:
        writer.add_tensor(
            tensor.name, tensor.data, raw_shape=tensor.data.shape, raw_dtype=tensor.tensor_type
        )
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return target
