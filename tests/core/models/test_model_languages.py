"""Which languages a catalog entry's model writes: declared, from the GGUF, or by family."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.errors import ModelError
from app.core.models.catalog import (
    BUILTIN_ID,
    ModelEntry,
    builtin_local,
    catalog_from_data,
    load_catalog,
    save_catalog,
    set_languages,
)
from app.core.models.discovery import catalog_entry, found_from_path
from app.core.models.gguf_facts import read_facts
from app.core.models.model_languages import entry_languages, gguf_languages, writes
from tests.core.models.gguf_files import write_gguf


def local(**extra: object) -> ModelEntry:
    values: dict[str, object] = {"id": "m", "label": "m", "provider": "local", "model": "m"}
    values.update(extra)
    return ModelEntry(**values)  # type: ignore[arg-type]


def test_the_bundled_model_writes_english_only() -> None:
    bundled = builtin_local()
    assert bundled.bundled and bundled.languages == ("en",)
    assert writes(bundled, "lg-eng") and writes(bundled, "en")
    assert not writes(bundled, "lg-cat") and not writes(bundled, "lg-spa")


@pytest.mark.parametrize(
    ("names", "catalan", "spanish"),
    [
        ({"model": "SmolLM2-360M-Instruct"}, False, False),
        ({"gguf": "/m/qwen2.5-7b-instruct-q4_k_m.gguf"}, False, True),
        ({"gguf": "/m/Qwen3-8B-Q4_K_M.gguf"}, True, True),
        ({"model": "Meta-Llama-3.1-8B-Instruct"}, False, True),
        ({"label": "Mistral 7B (LM Studio)"}, False, True),
        ({"model": "salamandra-7b-instruct"}, True, True),
        ({"model": "some-unknown-model"}, False, False),  # a local model of no known family
    ],
)
def test_a_local_model_writes_its_familys_documented_languages(
    names: dict[str, str], catalan: bool, spanish: bool
) -> None:
    entry = local(**names)
    assert writes(entry, "lg-eng")
    assert writes(entry, "lg-cat") is catalan and writes(entry, "lg-spa") is spanish
    assert entry_languages(local(languages=("ca",), **names)) == {"ca"}  # declared wins


def test_a_hosted_model_of_no_known_family_writes_every_language() -> None:
    hosted = ModelEntry("c", "Claude", "anthropic", "claude-x", egress="external")
    assert entry_languages(hosted) is None and writes(hosted, "lg-cat")
    small = ModelEntry("s", "s", "openai_compatible", "smollm2:135m", endpoint="http://x/v1")
    assert not writes(small, "lg-cat")


def test_languages_in_models_json_are_checked() -> None:
    base = {"id": "m", "label": "M", "provider": "local", "gguf": "/m.gguf"}
    catalog = catalog_from_data([{**base, "languages": ["ca", "es"]}])
    assert catalog.get("m").languages == ("ca", "es") and not catalog.get("m").bundled
    for bad in ([], ["Catalan"], ["ca", "ca"], "ca", [1]):
        with pytest.raises(ModelError) as raised:
            catalog_from_data([{**base, "languages": bad}])
        assert raised.value.code == "ai.model_catalog_invalid"
        assert raised.value.details["field"] == "languages"


def test_a_gguf_naming_its_languages_gives_them_to_its_entry(tmp_path: Path) -> None:
    named = write_gguf(tmp_path / "tiny.gguf", name="Tiny", languages=["en", "CA", "Català"])
    assert read_facts(named).languages == ("en", "ca")
    entry = catalog_entry(found_from_path(named, lambda: 1 << 34), "tiny")
    assert entry["languages"] == ["en", "ca"]
    assert catalog_from_data([entry]).get("tiny").languages == ("en", "ca")
    plain = write_gguf(tmp_path / "qwen.gguf", name="Qwen2.5 7B Instruct")
    assert read_facts(plain).languages == ()
    guessed = catalog_entry(found_from_path(plain, lambda: 1 << 34), "qwen")
    assert guessed["languages"] == ["de", "en", "es", "fr", "it", "pt"]  # its family's
    unknown = write_gguf(tmp_path / "x.gguf", name="Mystery")
    assert "languages" not in catalog_entry(found_from_path(unknown, lambda: 1 << 34), "x")
    assert gguf_languages(None) == [] and gguf_languages(("es", "es", "")) == ["es"]


def test_set_languages_declares_them_in_place(tmp_path: Path) -> None:
    path = tmp_path / "models.json"
    other = {"id": "big", "label": "Big", "provider": "local", "gguf": "/big.gguf"}
    save_catalog([other], path)
    catalog = set_languages(BUILTIN_ID, ["en", "ca"], path)
    assert catalog.ids() == [BUILTIN_ID, "big"] and catalog.default_id == BUILTIN_ID
    assert catalog.get(BUILTIN_ID).languages == ("en", "ca") and catalog.get(BUILTIN_ID).bundled
    assert set_languages("big", ["es"], path).get("big").languages == ("es",)
    assert set_languages("big", [], path).get("big").languages == ()
    with pytest.raises(ModelError) as unknown:
        set_languages("nope", ["en"], path)
    assert unknown.value.code == "ai.model_unknown"
    with pytest.raises(ModelError) as bad:
        set_languages("big", ["Catalan"], path)
    assert bad.value.code == "ai.model_catalog_invalid"
    assert load_catalog(path).get("big").languages == ()  # nothing written
