"""“Found on this computer”: a discovered model is added from Settings and offered in the picker."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QPushButton

from app.core import paths
from app.ui import discovered_models
from app.ui.settings_dialog import SettingsDialog
from tests.core.models.gguf_files import write_gguf
from tests.ui.conftest import emitted, run

MOVERS = ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "HF_HOME", "HF_HUB_CACHE")
MOVERS += ("LLAMA_CACHE", "OLLAMA_MODELS")


@pytest.fixture
def fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home holding a tool-capable GGUF in LM Studio's folder; no servers are asked."""
    for name in MOVERS:
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    write_gguf(home / ".lmstudio/models/Qwen/Qwen2.5-GGUF/qwen2.5-7b-instruct-q4_k_m.gguf")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setattr(discovered_models, "SERVERS", ())
    return home


def _settings(window: Any, loop: Any) -> SettingsDialog:
    """Open Settings and wait for its first search of this computer to be listed."""
    window.open_settings()
    dialog = window.settings_dialog
    assert isinstance(dialog, SettingsDialog)
    with emitted(loop, dialog.discovered.search_finished):
        pass  # the search started with the dialog; it runs once the loop does
    return dialog


def _cells(box: discovered_models.DiscoveredModelsBox, row: int) -> list[str]:
    return [box.table.item(row, column).text() for column in range(7)]


def test_a_model_found_in_settings_is_added_and_offered_with_the_local_badge(
    make_window: Any, fake_home: Path
) -> None:
    window = make_window()
    dialog = _settings(window, make_window.loop)
    box = dialog.discovered
    assert box.result is not None and box.search_button.isEnabled()
    assert box.table.rowCount() == 1
    name, source, size, quantisation, context, tools, memory = _cells(box, 0)
    assert (name, source, quantisation, context, tools) == (
        "qwen2.5-7b-instruct-q4_k_m",
        "LM Studio",
        "Q4_K_M",
        "32768",
        "yes",
    )
    assert size.endswith("MB") and memory.split(" ")[0] in ("fits", "tight")
    button = box.table.cellWidget(0, discovered_models.ADD_COLUMN)
    assert isinstance(button, QPushButton)
    button.click()
    assert button.text() == "Added" and not button.isEnabled()
    stored = json.loads(paths.catalog_file().read_text())["models"]
    assert [(m["provider"], m["egress"], m["supports_tools"]) for m in stored] == [
        ("local", "local", True)
    ]
    listed = [dialog.models_list.item(n).text() for n in range(dialog.models_list.count())]
    assert any("qwen2.5-7b-instruct-q4_k_m (LM Studio)" in text for text in listed)
    with emitted(make_window.loop, window.assistant.models_loaded):
        dialog.save()
    picker = window.assistant.picker
    model_id = stored[0]["id"]
    assert picker.combo.findData(model_id) >= 0
    picker.select(model_id)
    assert picker.current_id() == model_id
    assert picker.badge.text() == "local / private" and picker.badge.property("badge") == "local"


def test_the_first_start_offer_lists_what_was_found(make_window: Any, fake_home: Path) -> None:
    window = make_window()
    dialog = run(make_window.loop, window.offer_discovered_models())
    assert dialog is not None and dialog.box.table.rowCount() == 1
    assert dialog.box.add(0) == "qwen2-5-7b-instruct-q4_k_m"
    dialog.reject()


def test_nothing_found_means_no_offer_and_a_bad_folder_is_refused(
    make_window: Any, fake_home: Path, tmp_path: Path
) -> None:
    for model in fake_home.rglob("*.gguf"):
        model.unlink()
    window = make_window()
    assert run(make_window.loop, window.offer_discovered_models()) is None
    dialog = _settings(window, make_window.loop)
    box = dialog.discovered
    assert box.result is not None and box.search_button.isEnabled()
    assert box.table.rowCount() == 0 and "No models found" in box.status.text()
    assert not box.add_folder(tmp_path / "nowhere")
    assert box.status.text().startswith("ai.model_folder_unreadable")
    folder = tmp_path / "mine"
    write_gguf(folder / "llama-3.1-8b.gguf", arch="llama")
    with emitted(make_window.loop, box.search_finished):
        assert box.add_folder(folder)
    assert box.table.rowCount() == 1 and box.search_button.isEnabled()
    assert _cells(box, 0)[:2] == ["llama-3.1-8b", "Added folder"]
    assert window.services.settings.get("model_folders") == [str(folder)]
    dialog.reject()


@pytest.mark.parametrize(
    ("lang", "words"),
    [
        ("ca", ["Nom", "Origen", "Quantització", "sí", "Afegeix", "Trobats en aquest ordinador"]),
        (
            "es",
            ["Nombre", "Origen", "Cuantización", "sí", "Añadir", "Encontrados en este ordenador"],
        ),
    ],
)
def test_the_list_speaks_catalan_and_spanish(
    make_window: Any, fake_home: Path, qapp: Any, lang: str, words: list[str]
) -> None:
    from app.core.models.discovery import ScanLimits, discover
    from app.ui import i18n

    window = make_window()
    translator = i18n.install_translator(qapp, lang)
    try:
        box = discovered_models.DiscoveredModelsBox(window.services, parent=window)
        box.show_result(discover(servers=(), limits=ScanLimits(time_budget_s=120)))
        shown = [box.title(), *_cells(box, 0)]
        shown += [box.table.horizontalHeaderItem(n).text() for n in range(7)]
        button = box.table.cellWidget(0, discovered_models.ADD_COLUMN)
        assert isinstance(button, QPushButton)
        shown.append(button.text())
        assert all(word in shown for word in words), shown
    finally:
        if translator is not None:
            qapp.removeTranslator(translator)


FOUND_AND_REFUSED = {
    "ca": ("1 model trobat en ", "2 models trobats en ", "1 fitxer no es pot fer servir.",
           "2 fitxers no es poden fer servir."),
    "es": ("1 modelo encontrado en ", "2 modelos encontrados en ", "1 archivo no se puede usar.",
           "2 archivos no se pueden usar."),
    "en": ("1 model found in ", "2 models found in ", "1 file could not be used.",
           "2 files could not be used."),
}  # fmt: skip


@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_the_models_found_and_the_files_refused_agree_with_their_number(
    make_window: Any, fake_home: Path, qapp: Any, lang: str
) -> None:
    """One model found; then a second beside it and a file that is no GGUF; then another."""
    from app.core.models.discovery import ScanLimits, discover
    from app.ui import i18n

    window = make_window()
    folder = fake_home / ".lmstudio/models/Qwen/Qwen2.5-GGUF"
    translator = i18n.install_translator(qapp, lang)
    try:
        box = discovered_models.DiscoveredModelsBox(window.services, parent=window)
        said = []
        for step in range(3):
            if step == 1:
                write_gguf(folder / "qwen2.5-3b-instruct-q4_k_m.gguf")
            if step:
                (folder / f"broken-{step}.gguf").write_bytes(b"GGUF" + b"\xff" * 64)
            result = discover(servers=(), limits=ScanLimits(time_budget_s=120))
            box.show_result(result)
            said.append((len(result.models), len(result.refused), box.status.text()))
    finally:
        if translator is not None:
            qapp.removeTranslator(translator)
    one, two, refused_one, refused_two = FOUND_AND_REFUSED[lang]
    assert [(models, refused) for models, refused, _ in said] == [(1, 0), (2, 1), (2, 2)]
    assert said[0][2].startswith(one) and said[0][2].endswith(" s.")
    assert said[1][2].startswith(two) and said[1][2].endswith(" s. " + refused_one)
    assert said[2][2].startswith(two) and said[2][2].endswith(" s. " + refused_two)
