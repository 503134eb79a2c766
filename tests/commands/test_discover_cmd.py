"""``arxiu models discover`` and ``arxiu models add --from-discovered N|PATH``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app import cli
from app.core import paths
from app.core.models.catalog import load_catalog
from app.core.models.gguf import bundled_gguf
from tests.core.models.fake_model_servers import fake_server
from tests.core.models.gguf_files import ollama_model, place, write_gguf

MOVERS = ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "HF_HOME", "HF_HUB_CACHE")
MOVERS += ("LLAMA_CACHE", "OLLAMA_MODELS")


def arxiu(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty home of a person (``HOME`` and the apps' variables point into tmp_path)."""
    for name in MOVERS:
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    return home


@pytest.fixture
def smol_home(fake_home: Path) -> Path:
    """The bundled SmolLM2 GGUF in an LM Studio folder and as an Ollama blob."""
    lmstudio = fake_home / ".lmstudio/models/HuggingFaceTB/SmolLM2-135M-Instruct-GGUF"
    place(bundled_gguf(), lmstudio / "SmolLM2-135M-Instruct.Q4_1.gguf")
    ollama_model(fake_home / ".ollama/models", "smollm2", "135m", bundled_gguf())
    return fake_home


def test_discover_json_lists_the_lm_studio_file_and_the_ollama_blob(
    smol_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = arxiu(capsys, "models", "discover", "--json", "--no-servers")
    assert code == 0
    listing = json.loads(out)
    models = {m["source"]: m for m in listing["models"]}
    assert set(models) == {"lmstudio", "ollama"}
    for model in models.values():
        assert model["architecture"] == "llama"
        assert model["context_length"] == 8192
        assert model["quantisation"] == "Q4_1"
        assert model["supports_tools"] is False
    assert models["ollama"]["name"] == "smollm2:135m"
    assert Path(models["ollama"]["path"]).name.startswith("sha256-")
    assert listing["recommended"] in (1, 2) and listing["complete"]


@pytest.mark.slow
def test_a_discovered_model_is_added_and_streams(
    smol_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = arxiu(capsys, "models", "discover", "--json", "--no-servers")
    number = next(m["number"] for m in json.loads(out)["models"] if m["source"] == "ollama")
    code, out, _ = arxiu(capsys, "models", "add", "--from-discovered", str(number), "--no-servers")
    assert code == 0 and "local / private" in out
    entry = next(e for e in load_catalog() if e.id != "local")
    assert entry.provider == "local" and entry.egress == "local"
    assert entry.gguf and Path(entry.gguf).name.startswith("sha256-")
    code, out, _ = arxiu(capsys, "models", "test", entry.id, "--max-tokens", "8")
    assert code == 0
    reply, _, stats = out.strip().rpartition("\n")
    assert reply.strip() and f"model {entry.id}: first token after" in stats


def test_the_human_listing_recommends_the_tool_capable_model(
    fake_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_gguf(fake_home / "jan/models/qwen/qwen2.5-3b-instruct.gguf")
    write_gguf(fake_home / ".cache/llama.cpp/plain.gguf", template=None)
    code, out, _ = arxiu(capsys, "models", "discover", "--no-servers")
    assert code == 0
    assert "qwen2.5-3b-instruct  [Jan]  qwen2 · Q4_K_M · ctx 32768" in out
    assert "tools: yes" in out and "tools: no" in out
    assert "Recommended: 1 qwen2.5-3b-instruct: it can plan tool calls" in out


def test_add_by_path_keeps_tool_support_and_egress_local(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = write_gguf(tmp_path / "Qwen2.5-7B-Instruct-Q4_K_M.gguf")
    code, _, _ = arxiu(capsys, "models", "add", "--from-discovered", str(model), "--default")
    assert code == 0
    entry = load_catalog().get()
    assert entry.id == "qwen2-5-7b-instruct-q4_k_m" and entry.supports_tools
    assert (entry.provider, entry.egress, entry.gguf) == ("local", "local", str(model))


def test_refusals_are_coded_and_change_nothing(
    fake_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF\x03\x00\x00\x00")
    cases = [
        (("add", "--from-discovered", str(broken)), "ai.model_file_invalid"),
        (("add", "--from-discovered", "7", "--no-servers"), "ai.discovered_unknown"),
        (("discover", "--folder", str(tmp_path / "nowhere")), "ai.model_folder_unreadable"),
        (("discover", "--server", "ollama:http"), "ai.server_spec_invalid"),
        (("add", "--provider", "local"), "ai.model_entry_incomplete"),
    ]
    for argv, expected in cases:
        code, _, err = arxiu(capsys, "models", *argv)
        assert code != 0 and expected in err, (argv, err)
    assert not paths.catalog_file().exists()


def test_a_loopback_server_model_is_added_as_openai_compatible(
    fake_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with fake_server("ollama") as port:
        server = f"ollama:{port}"
        code, out, _ = arxiu(capsys, "models", "discover", "--json", "--server", server)
        listing = json.loads(out)
        assert [m["model"] for m in listing["models"]] == ["qwen2.5:7b", "gemma:2b"]
        code, _, _ = arxiu(capsys, "models", "add", "--from-discovered", "1", "--server", server)
    assert code == 0
    entry = next(e for e in load_catalog() if e.id != "local")
    assert (entry.provider, entry.egress, entry.model) == (
        "openai_compatible",
        "local",
        "qwen2.5:7b",
    )
    assert entry.endpoint == f"http://127.0.0.1:{port}/v1" and entry.supports_tools


FOUND = {
    "en": (r"Found 0 models on this computer in \d+\.\d\d s, \d+ entr(y|ies) looked at\.",
           r"Found 1 model on this computer in \d+\.\d\d s, \d+ entr(y|ies) looked at\.",
           r"Found 2 models on this computer in \d+\.\d\d s, \d+ entr(y|ies) looked at\."),
    "ca": (r"S'han trobat 0 models en aquest ordinador en \d+,\d\d s; \d+ entrad(a|es) "
           r"examinad(a|es)\.",
           r"S'ha trobat 1 model en aquest ordinador en \d+,\d\d s; \d+ entrad(a|es) "
           r"examinad(a|es)\.",
           r"S'han trobat 2 models en aquest ordinador en \d+,\d\d s; \d+ entrad(a|es) "
           r"examinad(a|es)\."),
    "es": (r"Se han encontrado 0 modelos en este ordenador en \d+,\d\d s; \d+ entradas? "
           r"examinadas?\.",
           r"Se ha encontrado 1 modelo en este ordenador en \d+,\d\d s; \d+ entradas? "
           r"examinadas?\.",
           r"Se han encontrado 2 modelos en este ordenador en \d+,\d\d s; \d+ entradas? "
           r"examinadas?\."),
}  # fmt: skip
"""The discovery's first line for 0, 1 and 2 models (its seconds and entries vary)."""
LISTED = {
    "en": ("ctx 32768", "tools: yes", "tools: no", "Recommended: 1 qwen2.5-3b-instruct: it can "
           "plan tool calls (write mode).", "Add it with: arxiu models add --from-discovered 1"),
    "ca": ("context 32768", "eines: sí", "eines: no", "Recomanat: 1 qwen2.5-3b-instruct: pot "
           "planificar crides a eines (mode d'escriptura).",
           "Afegiu-lo amb: arxiu models add --from-discovered 1"),
    "es": ("contexto 32768", "herramientas: sí", "herramientas: no", "Recomendado: 1 "
           "qwen2.5-3b-instruct: puede planificar llamadas a herramientas (modo de escritura).",
           "Añádalo con: arxiu models add --from-discovered 1"),
}  # fmt: skip
FITS = {
    "en": ("fits in memory", "tight fit in memory", "needs more memory than is free now",
           "too large for this computer", "memory unknown"),
    "ca": ("cap a la memòria", "cap just a la memòria",
           "necessita més memòria de la que ara és lliure", "massa gran per a aquest ordinador",
           "memòria desconeguda"),
    "es": ("cabe en la memoria", "cabe justo en la memoria",
           "necesita más memoria de la que ahora está libre",
           "demasiado grande para este ordenador", "memoria desconocida"),
}  # fmt: skip


@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_the_human_listing_speaks_the_cli_language_and_agrees_with_its_count(
    fake_home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, lang: str
) -> None:
    """0, 1 and 2 models found: the first line in the form that agrees, seconds with the
    language's decimal mark; each model's facts and the recommendation in the language."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    files = (
        fake_home / "jan/models/qwen/qwen2.5-3b-instruct.gguf",
        fake_home / ".cache/llama.cpp/plain.gguf",
    )
    for count, pattern in enumerate(FOUND[lang]):
        if count == 1:
            write_gguf(files[0])  # with a template that calls tools
        if count == 2:
            write_gguf(files[1], template=None)
        code, out, _ = arxiu(capsys, "models", "discover", "--no-servers")
        assert code == 0
        assert re.fullmatch(pattern, out.splitlines()[0]), out
    context, yes, no, recommended, add = LISTED[lang]
    listed = [line for line in out.splitlines() if "  [" in line]
    assert len(listed) == 2 and all(f" · {context} · " in line for line in listed), listed
    assert any(line.endswith(yes) or f"{yes}  — " in line for line in listed)
    assert any(f"{no}  — " in line for line in listed)
    assert all(any(f"  — {fit}" in line for fit in FITS[lang]) for line in listed), listed
    assert out.splitlines()[-2:] == [recommended, add]


UNKNOWN_NUMBER = {
    "ca": (
        "No hi ha cap model trobat amb el número 7; ",
        ("se n'han trobat 0.", "se n'ha trobat 1.", "se n'han trobat 2."),
    ),
    "es": (
        "No hay ningún modelo encontrado con el número 7; ",
        ("se han encontrado 0.", "se ha encontrado 1.", "se han encontrado 2."),
    ),
    "en": ("There is no discovered model 7; ", ("0 were found.", "1 was found.", "2 were found.")),
}


@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_an_unknown_number_says_how_many_were_found_in_agreeing_words(
    fake_home: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    lang: str,
) -> None:
    """The message in the CLI's language, with its count in the form that agrees: 0 were,
    1 was, 2 were found."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    lead, said = UNKNOWN_NUMBER[lang]
    for count, tail in enumerate(said):
        if count:
            write_gguf(fake_home / f".cache/llama.cpp/model-{count}.gguf")
        code, _, err = arxiu(capsys, "models", "add", "--from-discovered", "7", "--no-servers")
        assert code != 0
        first = err.splitlines()[0]
        assert first == f"error [ai.discovered_unknown]: {lead}{tail}", first
