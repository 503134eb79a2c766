"""Discovery of GGUF files in fake homes laid out like LM Studio, GPT4All, Jan, Ollama, HF…"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.errors import ModelError
from app.core.i18n_tables import load_table
from app.core.models.catalog import catalog_from_data
from app.core.models.discovery import ScanLimits, catalog_entry, discover, found_from_path
from app.core.models.discovery_roots import app_roots, check_folder, is_system_folder
from tests.core.models.gguf_files import CHATML_TEMPLATE, ollama_model, place, write_gguf

GIB = 1 << 30
ROOMY = ScanLimits(time_budget_s=120)
"""No time limit in practice: the tests must not depend on the machine's speed."""


def plenty() -> int:
    return 16 * GIB


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake home with one model in each app's folder (Linux layout)."""
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "HF_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name in ("HF_HUB_CACHE", "LLAMA_CACHE", "OLLAMA_MODELS"):
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    write_gguf(home / ".lmstudio/models/Qwen/Qwen2.5-7B-GGUF/qwen2.5-7b-instruct-q4_k_m.gguf")
    write_gguf(home / ".local/share/nomic.ai/GPT4All/Llama-3.2-3B.Q4_0.gguf", arch="llama")
    write_gguf(home / "jan/models/mistral/mistral-7b.gguf", arch="llama", template=CHATML_TEMPLATE)
    write_gguf(home / ".config/Jan/data/llamacpp/models/gemma-3-1b-it/model.gguf", arch="gemma3")
    blob_source = write_gguf(tmp_path / "store" / "gemma.gguf", arch="gemma2", context=8192)
    ollama_model(home / ".ollama/models", "gemma2", "2b", blob_source)
    hub = home / ".cache/huggingface/hub/models--bartowski--Phi-3.5-GGUF"
    blob = write_gguf(hub / "blobs" / "0a1b2c", arch="phi3")
    place(blob, hub / "snapshots" / "abc123" / "Phi-3.5-mini-Q8_0.gguf")
    write_gguf(home / ".cache/llama.cpp/smol.gguf", arch="llama", template=None)
    return home


def test_each_apps_folder_is_found_with_its_facts(home: Path) -> None:
    result = discover(
        home=home, env={}, folders=[], servers=(), available_memory=plenty, limits=ROOMY
    )
    found = {(m.source, m.name) for m in result.models}
    assert found == {
        ("lmstudio", "qwen2.5-7b-instruct-q4_k_m"),
        ("gpt4all", "Llama-3.2-3B.Q4_0"),
        ("jan", "mistral-7b"),
        ("jan", "gemma-3-1b-it"),
        ("ollama", "gemma2:2b"),
        ("huggingface", "Phi-3.5-mini-Q8_0"),
        ("llamacpp", "smol"),
    }
    by_name = {m.name: m for m in result.models}
    qwen = by_name["qwen2.5-7b-instruct-q4_k_m"]
    assert (qwen.architecture, qwen.context_length, qwen.quantisation) == ("qwen2", 32768, "Q4_K_M")
    assert qwen.supports_tools is True and qwen.fit == "fits"
    assert by_name["mistral-7b"].supports_tools is False
    assert by_name["smol"].supports_tools is False
    gemma = by_name["gemma2:2b"]
    assert gemma.path is not None and gemma.path.name.startswith("sha256-")
    assert (gemma.architecture, gemma.context_length) == ("gemma2", 8192)
    assert result.complete and not result.refused


def test_the_recommendation_is_a_tool_capable_model_that_fits(home: Path) -> None:
    result = discover(
        home=home, env={}, folders=[], servers=(), available_memory=plenty, limits=ROOMY
    )
    best = result.recommendation()
    assert best is not None and result.models[best].supports_tools
    listing = result.to_json()
    assert listing["recommended"] == best + 1
    assert [m["number"] for m in listing["models"]] == list(range(1, len(result.models) + 1))


def test_a_corrupt_or_foreign_file_is_refused_with_its_code(tmp_path: Path) -> None:
    folder = tmp_path / "models"
    good = write_gguf(folder / "good.gguf")
    (folder / "truncated.gguf").write_bytes(good.read_bytes()[:200])
    (folder / "weights-cut.gguf").write_bytes(good.read_bytes()[:-500])
    (folder / "notes.gguf").write_text("not a model at all, just text " * 10)
    result = discover(
        home=tmp_path / "empty",
        env={},
        folders=[folder],
        servers=(),
        available_memory=plenty,
        limits=ROOMY,
    )
    assert [m.name for m in result.models] == ["good"]
    refused = {r.path.name: r for r in result.refused}
    assert set(refused) == {"truncated.gguf", "weights-cut.gguf", "notes.gguf"}
    assert {r.code for r in refused.values()} == {"ai.model_file_invalid"}
    assert "truncated" in refused["weights-cut.gguf"].message
    catalan = refused["weights-cut.gguf"].message_in(load_table("ca"))  # as the window lists it
    assert "incomplet" in catalan and "truncated" not in catalan
    with pytest.raises(ModelError) as error:
        found_from_path(folder / "notes.gguf")
    assert error.value.code == "ai.model_file_invalid"


def test_memory_fit_and_the_refusal_over_twice_the_memory(tmp_path: Path) -> None:
    model = write_gguf(tmp_path / "m.gguf")
    needed = found_from_path(model, available_memory=plenty).memory_needed
    assert needed is not None
    fits = {
        "fits": needed * 2,
        "tight": int(needed * 1.1),
        "over": int(needed / 1.5),
        "refused": needed // 3,
    }
    for expected, free in fits.items():
        found = found_from_path(model, available_memory=lambda free=free: free)
        assert found.fit == expected
    too_big = found_from_path(model, available_memory=lambda: needed // 3)
    with pytest.raises(ModelError) as error:
        catalog_entry(too_big)
    assert error.value.code == "ai.model_insufficient_memory"
    assert error.value.details["available_mb"] == (needed // 3) >> 20


def test_a_discovered_file_becomes_a_valid_local_entry(home: Path) -> None:
    result = discover(
        home=home, env={}, folders=[], servers=(), available_memory=plenty, limits=ROOMY
    )
    entries = [catalog_entry(m, f"m{n}") for n, m in enumerate(result.models)]
    catalog = catalog_from_data(entries)
    qwen = next(e for e in catalog if "qwen" in e.label.lower())
    assert qwen.provider == "local" and qwen.egress == "local" and qwen.supports_tools
    assert qwen.gguf and Path(qwen.gguf).is_file()
    assert all(entry.egress == "local" for entry in catalog)


def test_a_discovered_tool_model_may_plan_in_write_mode_and_a_plain_one_may_not(
    home: Path,
) -> None:
    from app.core.agent.request import validate_request

    result = discover(
        home=home, env={}, folders=[], servers=(), available_memory=plenty, limits=ROOMY
    )
    by_name = {m.name: m for m in result.models}
    tool = catalog_entry(by_name["qwen2.5-7b-instruct-q4_k_m"], "qwen")
    plain = catalog_entry(by_name["mistral-7b"], "mistral")
    catalog = catalog_from_data([tool, plain])
    write = {"question": "Create a person record for Anna Pujol", "mode": "write"}
    assert validate_request({**write, "model": "qwen"}, catalog, write_allowed=True).mode == "write"
    with pytest.raises(ModelError) as refused:
        validate_request({**write, "model": "mistral"}, catalog, write_allowed=True)
    assert refused.value.code == "ai.model_cannot_plan"


def test_ten_thousand_unrelated_files_stay_within_the_limits(tmp_path: Path) -> None:
    folder = tmp_path / "big"
    for number in range(10_000):
        sub = folder / f"d{number // 500}"
        if number % 500 == 0:
            sub.mkdir(parents=True)
        (sub / f"f{number}.txt").touch()
    write_gguf(folder / "d19" / "needle.gguf")
    full = discover(home=tmp_path / "none", env={}, folders=[folder], servers=(), limits=ROOMY)
    assert [m.name for m in full.models] == ["needle"] and full.complete
    assert full.entries_seen >= 10_000
    limited = discover(
        home=tmp_path / "none",
        env={},
        folders=[folder],
        servers=(),
        limits=ScanLimits(max_entries=2_000, time_budget_s=120),
    )
    assert not limited.complete and limited.entries_seen < 3_000


def test_depth_links_and_system_folders_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write_gguf(outside / "hidden.gguf")
    folder = tmp_path / "models"
    write_gguf(folder / "a/b/c/d/deep.gguf")
    folder.joinpath("link").symlink_to(outside, target_is_directory=True)
    result = discover(
        home=tmp_path / "none",
        env={},
        folders=[folder],
        servers=(),
        limits=ScanLimits(max_depth=2, time_budget_s=120),
    )
    assert result.models == []
    deeper = discover(home=tmp_path / "none", env={}, folders=[folder], servers=(), limits=ROOMY)
    assert [m.name for m in deeper.models] == ["deep"]
    system_link = tmp_path / "usr-link"
    system_link.symlink_to("/usr", target_is_directory=True)
    assert is_system_folder(system_link) and is_system_folder("/proc/self")
    assert not is_system_folder(tmp_path)
    skipped = discover(home=tmp_path / "none", env={}, folders=[system_link], servers=())
    assert skipped.models == [] and (str(system_link), "a system folder") in skipped.skipped


def test_an_unreadable_folder_is_refused_with_a_code(tmp_path: Path) -> None:
    for path in (tmp_path / "missing", write_gguf(tmp_path / "file.gguf"), Path("/usr")):
        with pytest.raises(ModelError) as error:
            check_folder(path)
        assert error.value.code == "ai.model_folder_unreadable"
    assert check_folder(tmp_path) == tmp_path


def test_the_apps_folders_follow_each_os(tmp_path: Path) -> None:
    mac = {str(r.path) for r in app_roots(tmp_path, {}, "darwin")}
    assert str(tmp_path / "Library/Application Support/nomic.ai/GPT4All") in mac
    windows = app_roots(tmp_path, {"LOCALAPPDATA": str(tmp_path / "L")}, "win32")
    assert tmp_path / "L" / "nomic.ai" / "GPT4All" in {r.path for r in windows}
    moved = app_roots(tmp_path, {"OLLAMA_MODELS": str(tmp_path / "o")}, "linux")
    assert any(r.path == tmp_path / "o" and r.layout == "ollama" for r in moved)
