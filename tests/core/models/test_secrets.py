"""API keys: environment variable first, then the OS keyring; never a file; clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.errors import ModelError
from app.core.models.catalog import ModelEntry
from app.core.models.secrets import api_key_for, delete_api_key, store_api_key
from tests.core.models.keyring_fake import MemoryKeyring

ENTRY = ModelEntry(
    id="claude",
    label="Claude",
    provider="anthropic",
    model="claude-sonnet-4-5",
    egress="external",
    api_key_env="ARXIU_TEST_API_KEY",
)


def test_the_environment_variable_wins(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    store_api_key("claude", "from-keyring")
    monkeypatch.setenv("ARXIU_TEST_API_KEY", "from-env")
    assert api_key_for(ENTRY) == "from-env"
    monkeypatch.delenv("ARXIU_TEST_API_KEY")
    assert api_key_for(ENTRY) == "from-keyring"
    assert memory_keyring.passwords == {("arxiu", "claude"): "from-keyring"}


def test_delete_forgets_the_key(memory_keyring: MemoryKeyring) -> None:
    store_api_key("claude", "k")
    assert delete_api_key("claude") is True
    assert delete_api_key("claude") is False
    assert api_key_for(ENTRY, required=False) is None


def test_a_missing_key_is_coded_with_a_hint(memory_keyring: MemoryKeyring) -> None:
    with pytest.raises(ModelError) as caught:
        api_key_for(ENTRY)
    assert caught.value.code == "ai.api_key_missing"
    assert "ARXIU_TEST_API_KEY" in (caught.value.hint or "")


@pytest.mark.usefixtures("no_keyring")
def test_no_keyring_backend_is_a_clear_error_not_a_plaintext_fallback(arxiu_home: Path) -> None:
    with pytest.raises(ModelError) as caught:
        store_api_key("claude", "sk-secret")
    assert caught.value.code == "ai.keyring_unavailable"
    assert "never stored in a file" in caught.value.message
    written = [p.read_bytes() for p in arxiu_home.rglob("*") if p.is_file()]
    assert not any(b"sk-secret" in data for data in written)
    with pytest.raises(ModelError) as caught:
        api_key_for(ENTRY)
    assert caught.value.code == "ai.keyring_unavailable"


@pytest.mark.usefixtures("no_keyring")
def test_without_a_keyring_the_environment_still_works(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARXIU_TEST_API_KEY", "from-env")
    assert api_key_for(ENTRY) == "from-env"
    assert api_key_for(ModelEntry("x", "X", "openai_compatible", "m"), required=False) is None
