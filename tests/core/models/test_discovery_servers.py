"""Local servers on loopback: Ollama and LM Studio answer with their model lists."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from app.core.models.catalog import catalog_from_data
from app.core.models.discovery import catalog_entry, discover
from app.core.models.discovery_servers import ServerSpec, probe, probe_servers
from tests.core.models.fake_model_servers import fake_server


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_ollama_models_come_with_their_native_facts() -> None:
    with fake_server("ollama") as port:
        models = probe(ServerSpec("ollama", port))
    assert [m.model for m in models] == ["qwen2.5:7b", "gemma:2b"]
    qwen, gemma = models
    assert qwen.endpoint == f"http://127.0.0.1:{port}/v1"
    assert (qwen.architecture, qwen.context_length, qwen.quantisation) == ("qwen2", 32768, "Q4_K_M")
    assert qwen.supports_tools is True and gemma.supports_tools is False
    assert qwen.parameters_label == "7.6B"


def test_lm_studio_lists_chat_models_but_not_embedders() -> None:
    with fake_server("lmstudio") as port:
        models = probe(ServerSpec("lmstudio", port))
    assert [m.model for m in models] == ["meta-llama-3.1-8b-instruct"]
    assert models[0].context_length == 131072 and models[0].supports_tools is True


def test_an_openai_compatible_server_is_read_from_v1_models() -> None:
    with fake_server("openai") as port:
        models = probe(ServerSpec("llamacpp", port))
    assert [(m.model, m.supports_tools) for m in models] == [("smollm2-135m", None)]


def test_nothing_listening_or_another_host_gives_nothing() -> None:
    assert probe_servers((ServerSpec("ollama", _closed_port()),), timeout_s=0.2) == []
    with pytest.raises(ValueError):
        probe(ServerSpec("ollama", 11434, host="192.168.1.10"))
    with pytest.raises(ValueError):
        probe(ServerSpec("ollama", 11434, host="example.org"))


def test_a_server_model_is_added_as_openai_compatible_and_local(tmp_path: Path) -> None:
    with fake_server("ollama") as ollama, fake_server("lmstudio") as lmstudio:
        specs = (ServerSpec("ollama", ollama), ServerSpec("lmstudio", lmstudio))
        result = discover(home=tmp_path, env={}, folders=[], servers=specs)
    assert [(m.kind, m.source) for m in result.models] == [
        ("server", "ollama"),
        ("server", "ollama"),
        ("server", "lmstudio"),
    ]
    entries = [catalog_entry(m, f"s{n}") for n, m in enumerate(result.models)]
    catalog = catalog_from_data(entries)
    first = catalog.get("s0")
    assert first.provider == "openai_compatible" and first.egress == "local"
    assert first.endpoint == f"http://127.0.0.1:{ollama}/v1" and first.model == "qwen2.5:7b"
    assert first.supports_tools and not catalog.get("s1").supports_tools
    assert result.models[result.recommendation() or 0].supports_tools
