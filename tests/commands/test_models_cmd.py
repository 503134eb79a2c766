"""``arxiu models list|add|remove|test``."""

from __future__ import annotations

import io
import json

import pytest

from app import cli
from app.core import paths
from app.core.models.catalog import PUBLIC_KEYS, load_catalog
from tests.core.models.keyring_fake import MemoryKeyring, memory_keyring, no_keyring

__all__ = ["memory_keyring", "no_keyring"]


def arxiu(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_json_is_the_secret_free_projection(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = arxiu(capsys, "models", "list", "--json")
    assert code == 0
    models = json.loads(out)
    assert [m["id"] for m in models] == ["local"]
    assert all(tuple(m) == PUBLIC_KEYS for m in models)


def test_add_list_remove(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = arxiu(
        capsys,
        "models",
        "add",
        "--id",
        "ollama",
        "--provider",
        "openai_compatible",
        "--model",
        "llama3.1:8b",
        "--endpoint",
        "http://localhost:11434/v1",
        "--egress",
        "local",
        "--label",
        "Ollama",
        "--default",
    )
    assert code == 0
    code, out, _ = arxiu(capsys, "models", "list")
    assert "* ollama" in out and "Ollama" in out and "[local]" in out
    assert load_catalog().default_id == "ollama"
    code, _, _ = arxiu(capsys, "models", "remove", "ollama")
    assert code == 0
    assert load_catalog().ids() == ["local"]


def test_an_invalid_entry_is_refused_and_nothing_is_written(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = arxiu(
        capsys,
        "models",
        "add",
        "--id",
        "remote",
        "--provider",
        "openai_compatible",
        "--model",
        "m",
        "--endpoint",
        "http://h/v1",
    )
    assert code != 0
    assert "ai.model_catalog_invalid" in err and "egress" in err
    assert not paths.catalog_file().exists()


def test_the_key_goes_to_the_keyring_never_the_file(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    memory_keyring: MemoryKeyring,
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("sk-ant-very-secret\n"))
    code, out, err = arxiu(
        capsys,
        "models",
        "add",
        "--id",
        "claude",
        "--provider",
        "anthropic",
        "--model",
        "claude-sonnet-4-5",
        "--vision",
        "--effort",
        "low",
        "--effort",
        "high",
        "--api-key-stdin",
    )
    assert code == 0, err
    assert memory_keyring.passwords[("arxiu", "claude")] == "sk-ant-very-secret"
    stored = paths.catalog_file().read_text(encoding="utf-8")
    assert "sk-ant-very-secret" not in stored
    entry = json.loads(stored)["models"][0]
    assert (entry["efforts"], entry["vision"]) == (["low", "high"], True)
    assert not {"api_key", "key", "token"} & set(entry)
    assert load_catalog().get("claude").egress == "external"
    assert "sk-ant-very-secret" not in out + err
    arxiu(capsys, "models", "remove", "claude")
    assert ("arxiu", "claude") not in memory_keyring.passwords


@pytest.mark.usefixtures("no_keyring")
def test_without_a_keyring_the_key_is_refused_and_nothing_is_written(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("sk-ant-very-secret\n"))
    code, _, err = arxiu(
        capsys,
        "models",
        "add",
        "--id",
        "claude",
        "--provider",
        "anthropic",
        "--model",
        "claude-sonnet-4-5",
        "--api-key-stdin",
    )
    assert code != 0
    assert "ai.keyring_unavailable" in err
    assert not paths.catalog_file().exists()


@pytest.mark.slow
def test_models_test_streams_from_the_bundled_model(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = arxiu(capsys, "models", "test", "--max-tokens", "16")
    assert code == 0
    answer, _, summary = out.rpartition("\nmodel local:")
    assert answer.strip()
    assert "first token after" in summary and "tokens/s" in summary
