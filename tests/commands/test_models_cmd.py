"""``arxiu models list|add|remove|test``."""

from __future__ import annotations

import io
import json

import pytest

from app import cli
from app.commands.models_cmd import speed_line
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


SAID = {
    "en": ("Added model ollama.", "[local, vision, efforts: low/high]", "Removed model ollama."),
    "ca": ("S'ha afegit el model ollama.", "[local, visió, esforços: low/high]",
           "S'ha suprimit el model ollama."),
    "es": ("Se ha añadido el modelo ollama.", "[local, visión, esfuerzos: low/high]",
           "Se ha eliminado el modelo ollama."),
}  # fmt: skip
"""``models add``, the listing's flags and ``models remove`` (catalog values stay as they are:
``local``, the effort levels)."""


@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_add_list_remove_speak_the_cli_language(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, lang: str
) -> None:
    monkeypatch.setenv("ARXIU_LANG", lang)
    added, flags, removed = SAID[lang]
    code, out, _ = arxiu(
        capsys, "models", "add", "--id", "ollama", "--provider", "openai_compatible",
        "--model", "llama3.2-vision", "--endpoint", "http://localhost:11434/v1",
        "--egress", "local", "--vision", "--effort", "low", "--effort", "high",
    )  # fmt: skip
    assert (code, out) == (0, added + "\n")
    code, out, _ = arxiu(capsys, "models", "list")
    listed = next(line for line in out.splitlines() if "ollama" in line)
    assert listed.endswith(f"  {flags}"), listed
    code, out, _ = arxiu(capsys, "models", "remove", "ollama")
    assert (code, out) == (0, removed + "\n")


SPEED = {
    "en": ("model m: first token after 0.25 s, {tokens} in 1.50 s (3.5 tokens/s)",
           ("0 tokens", "1 token", "2 tokens", "1,234 tokens")),
    "ca": ("model m: primer token al cap de 0,25 s, {tokens} en 1,50 s (3,5 tokens/s)",
           ("0 tokens", "1 token", "2 tokens", "1.234 tokens")),
    "es": ("modelo m: primer token tras 0,25 s, {tokens} en 1,50 s (3,5 tokens/s)",
           ("0 tokens", "1 token", "2 tokens", "1234 tokens")),
}  # fmt: skip


@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_the_speed_line_agrees_with_its_tokens_and_writes_the_language_s_numbers(
    monkeypatch: pytest.MonkeyPatch, lang: str
) -> None:
    monkeypatch.setenv("ARXIU_LANG", lang)
    line, counts = SPEED[lang]
    for tokens, said in zip((0, 1, 2, 1234), counts, strict=True):
        stats = {"ttft_s": 0.25, "tokens": tokens, "generation_s": 1.5, "tokens_per_s": 3.5}
        assert speed_line("m", stats) == line.format(tokens=said)
