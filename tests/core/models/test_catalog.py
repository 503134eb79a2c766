"""The model catalog: every validation rule, the built-in model, the public projection, edits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core import paths
from app.core.errors import ModelError
from app.core.models.catalog import (
    PUBLIC_KEYS,
    add_entry,
    catalog_from_data,
    load_catalog,
    remove_entry,
)

OPENAI = {
    "id": "ollama",
    "label": "Llama on the reading-room server",
    "provider": "openai_compatible",
    "model": "llama3.1:8b",
    "endpoint": "http://10.0.0.5:11434/v1",
    "egress": "local",
}
CLAUDE = {
    "id": "claude",
    "label": "Claude",
    "provider": "anthropic",
    "model": "claude-sonnet-4-5",
    "api_key_env": "ANTHROPIC_API_KEY",
    "vision": True,
    "efforts": ["low", "medium", "high"],
}
VALID_NEIGHBOUR = {
    "id": "reading-room",
    "label": "Reading room",
    "provider": "openai_compatible",
    "model": "qwen",
    "endpoint": "http://127.0.0.1:8080/v1",
    "egress": "local",
}


def write(path: Path, models: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(models), encoding="utf-8")
    return path


def with_(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = {**base, **changes}
    return {k: v for k, v in out.items() if v is not ...}


def test_missing_file_gives_only_the_builtin_local_model() -> None:
    catalog = load_catalog()
    assert catalog.ids() == ["local"]
    entry = catalog.get("local")
    assert (entry.provider, entry.egress, entry.default) == ("local", "local", True)
    assert entry.gguf is None and entry.supports_tools is False
    assert catalog.default_id == "local"


def test_file_entries_follow_the_builtin_and_anthropic_is_external() -> None:
    write(paths.catalog_file(), {"models": [OPENAI, CLAUDE]})
    catalog = load_catalog()
    assert catalog.ids() == ["local", "ollama", "claude"]
    claude = catalog.get("claude")
    assert claude.egress == "external"
    assert claude.endpoint == "https://api.anthropic.com"
    assert claude.efforts == ("low", "medium", "high")
    assert catalog.get("ollama").egress == "local"


def test_a_bare_list_is_accepted(tmp_path: Path) -> None:
    catalog = load_catalog(write(tmp_path / "m.json", [OPENAI]))
    assert catalog.ids() == ["local", "ollama"]


def test_default_flag_moves_the_default() -> None:
    catalog = catalog_from_data([with_(CLAUDE, default=True)])
    assert catalog.default_id == "claude"
    assert catalog.get().id == "claude"
    assert [e["default"] for e in catalog.public()] == [False, True]


def test_an_entry_named_local_replaces_the_builtin(tmp_path: Path) -> None:
    own = {"id": "local", "label": "My GGUF", "provider": "local", "gguf": str(tmp_path / "m.gguf")}
    catalog = catalog_from_data([own])
    assert catalog.ids() == ["local"]
    assert catalog.get("local").label == "My GGUF"
    assert catalog.get("local").model == "m"


def test_unknown_model_is_coded() -> None:
    with pytest.raises(ModelError) as caught:
        load_catalog().get("gpt-9")
    assert caught.value.code == "ai.model_unknown"
    assert caught.value.details["available"] == ["local"]


INVALID: list[tuple[str, list[dict[str, Any]], str | int, str]] = [
    ("id uppercase", [with_(OPENAI, id="Ollama")], "Ollama", "id"),
    ("id too long", [with_(OPENAI, id="a" * 65)], "a" * 65, "id"),
    ("id with space", [with_(OPENAI, id="my model")], "my model", "id"),
    ("id missing", [with_(OPENAI, id=...)], 0, "id"),
    ("id duplicated", [OPENAI, with_(CLAUDE, id="ollama")], "ollama", "id"),
    ("label empty", [with_(OPENAI, label="")], "ollama", "label"),
    ("label blank", [with_(OPENAI, label="   ")], "ollama", "label"),
    ("label too long", [with_(OPENAI, label="x" * 121)], "ollama", "label"),
    ("label missing", [with_(OPENAI, label=...)], "ollama", "label"),
    ("provider unknown", [with_(OPENAI, provider="openai")], "ollama", "provider"),
    ("provider missing", [with_(OPENAI, provider=...)], "ollama", "provider"),
    ("model missing", [with_(OPENAI, model=...)], "ollama", "model"),
    ("anthropic model missing", [with_(CLAUDE, model="")], "claude", "model"),
    ("endpoint missing", [with_(OPENAI, endpoint=...)], "ollama", "endpoint"),
    ("endpoint not a URL", [with_(OPENAI, endpoint="localhost:11434")], "ollama", "endpoint"),
    ("egress missing", [with_(OPENAI, egress=...)], "ollama", "egress"),
    ("egress unknown", [with_(OPENAI, egress="intranet")], "ollama", "egress"),
    ("anthropic local", [with_(CLAUDE, egress="local")], "claude", "egress"),
    ("key env suffix", [with_(CLAUDE, api_key_env="ANTHROPIC")], "claude", "api_key_env"),
    ("key env shape", [with_(CLAUDE, api_key_env="MY KEY_API_KEY")], "claude", "api_key_env"),
    ("vision not bool", [with_(CLAUDE, vision="yes")], "claude", "vision"),
    ("default not bool", [with_(CLAUDE, default=1)], "claude", "default"),
    ("max_tokens zero", [with_(OPENAI, max_tokens=0)], "ollama", "max_tokens"),
    ("max_tokens float", [with_(OPENAI, max_tokens=10.5)], "ollama", "max_tokens"),
    ("max_tokens bool", [with_(OPENAI, max_tokens=True)], "ollama", "max_tokens"),
    ("timeout over 3600", [with_(OPENAI, timeout_s=3601)], "ollama", "timeout_s"),
    ("timeout zero", [with_(OPENAI, timeout_s=0)], "ollama", "timeout_s"),
    ("timeout text", [with_(OPENAI, timeout_s="60")], "ollama", "timeout_s"),
    ("efforts not list", [with_(CLAUDE, efforts="high")], "claude", "efforts"),
    ("efforts repeated", [with_(CLAUDE, efforts=["low", "low"])], "claude", "efforts"),
    ("efforts bad name", [with_(CLAUDE, efforts=["Very High"])], "claude", "efforts"),
    ("gguf on remote", [with_(OPENAI, gguf="/m.gguf")], "ollama", "gguf"),
    (
        "two defaults",
        [with_(OPENAI, default=True), with_(CLAUDE, default=True)],
        "claude",
        "default",
    ),
    ("secret in file", [with_(CLAUDE, api_key="sk-ant-123")], "claude", "api_key"),
    ("unknown key", [with_(OPENAI, temprature=0.2)], "ollama", "temprature"),
    ("not an object", ["ollama"], 0, ""),  # type: ignore[list-item]
]


@pytest.mark.parametrize(
    ("raw", "entry", "field"), [case[1:] for case in INVALID], ids=[case[0] for case in INVALID]
)
def test_every_rule_rejects_the_whole_catalog(
    raw: list[dict[str, Any]], entry: str | int, field: str
) -> None:
    write(paths.catalog_file(), {"models": [VALID_NEIGHBOUR, *raw]})
    with pytest.raises(ModelError) as caught:
        load_catalog()
    error = caught.value
    assert error.code == "ai.model_catalog_invalid"
    position = entry + 1 if isinstance(entry, int) else None  # after the valid neighbour
    assert error.details["entry"] == (entry if position is None else position)
    assert error.details.get("field", "") == field
    assert (f'"{entry}"' if position is None else f"#{position + 1}") in error.message


VALID: list[tuple[str, dict[str, Any]]] = [
    ("key env _KEY", with_(CLAUDE, api_key_env="CLAUDE_KEY")),
    ("key env _TOKEN", with_(OPENAI, api_key_env="VLLM_TOKEN")),
    ("timeout 3600", with_(OPENAI, timeout_s=3600)),
    ("timeout fraction", with_(OPENAI, timeout_s=0.5)),
    ("egress external", with_(OPENAI, egress="external")),
    ("https endpoint", with_(OPENAI, endpoint="https://llm.example.org/v1")),
    ("label 120", with_(OPENAI, label="x" * 120)),
    ("id 64", with_(OPENAI, id="a-" * 32)),
    (
        "local with context",
        {"id": "big", "label": "Big", "provider": "local", "gguf": "/m.gguf", "context_size": 4096},
    ),
]


@pytest.mark.parametrize("raw", [case[1] for case in VALID], ids=[case[0] for case in VALID])
def test_boundary_values_are_accepted(raw: dict[str, Any]) -> None:
    catalog = catalog_from_data([raw])
    assert raw["id"] in catalog.ids()


def test_invalid_json_names_the_file() -> None:
    paths.catalog_file().parent.mkdir(parents=True, exist_ok=True)
    paths.catalog_file().write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelError) as caught:
        load_catalog()
    assert caught.value.code == "ai.model_catalog_invalid"
    assert "models.json" in caught.value.message


def test_public_projection_has_exactly_the_allowed_keys() -> None:
    write(paths.catalog_file(), {"models": [OPENAI, CLAUDE]})
    public = load_catalog().public()
    assert all(tuple(item) == PUBLIC_KEYS for item in public)
    text = json.dumps(public)
    for secretish in ("ANTHROPIC_API_KEY", "endpoint", "10.0.0.5", "provider", "gguf"):
        assert secretish not in text


def test_add_and_remove_entries_round_trip() -> None:
    add_entry(dict(OPENAI))
    add_entry(with_(CLAUDE, default=True))
    assert load_catalog().default_id == "claude"
    add_entry(with_(OPENAI, label="Renamed", default=True))
    catalog = load_catalog()
    assert catalog.get("ollama").label == "Renamed"
    assert catalog.default_id == "ollama"
    assert catalog.ids() == ["local", "claude", "ollama"]
    remove_entry("claude")
    assert load_catalog().ids() == ["local", "ollama"]


def test_an_invalid_addition_writes_nothing() -> None:
    add_entry(dict(OPENAI))
    before = paths.catalog_file().read_text(encoding="utf-8")
    with pytest.raises(ModelError):
        add_entry(with_(CLAUDE, egress="local"))
    assert paths.catalog_file().read_text(encoding="utf-8") == before


def test_the_builtin_model_cannot_be_removed() -> None:
    with pytest.raises(ModelError) as caught:
        remove_entry("local")
    assert caught.value.code == "ai.model_unknown"
    assert "built-in" in (caught.value.hint or "")
