"""What the PyInstaller spec leaves out of the bundle, and the app version it stamps.

Kept apart from ``arxiu.spec`` so the rules can be read, tested and shared by the three systems.
Everything listed here is something Arxiu never loads: removing it changes no behaviour.

torch, transformers and sentence-transformers are left out: the bundled all-MiniLM-L6-v2 runs on
ONNX Runtime from a graph written from its own weights with numpy and ``onnx``
(``app/core/index/onnx_bert.py``), USE is numpy and the chat model is llama.cpp, so no run-time
path of the bundle imports them (``tests/core/index/test_no_torch.py`` runs the CLI with them
blocked). A model folder ONNX Runtime cannot run (not a BERT mean-pooling encoder) needs them:
in the bundle it gives ``index.model_load_failed``; a source install with torch runs it.
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

EXCLUDED_MODULES = [
    # Development and test tools that optional imports would otherwise drag in.
    "tkinter",
    "matplotlib",
    "IPython",
    "pytest",
    "_pytest",
    "hypothesis",
    "mypy",
    "PyInstaller",
    # The torch stack: only a model folder ONNX Runtime cannot run would need it (see above).
    "torch",
    "torchvision",
    "torchaudio",
    "transformers",
    "sentence_transformers",
    "optimum",
    "tensorboard",
    # Reached only through pgvector's sparse-vector conversion (``SparseVector.to_coo``), which
    # Arxiu never calls (its PostgreSQL vectors are dense): 75 MB with its OpenBLAS.
    "scipy",
    # Cloud and hub-download clients: Arxiu never downloads (models are inside the bundle).
    "botocore",
    "boto3",
    "s3transfer",
    "hf_xet",
    # Qt modules Arxiu does not use (Widgets, Gui, Core, Svg and Multimedia are kept).
    "PySide6.QtQml",
    "PySide6.QtQuick",
    "PySide6.QtQuickWidgets",
    "PySide6.QtQuickControls2",
    "PySide6.QtWebEngineCore",
    "PySide6.QtWebEngineWidgets",
    "PySide6.QtDesigner",
    "PySide6.QtPdf",
    "PySide6.QtPdfWidgets",
    "PySide6.QtCharts",
    "PySide6.QtDataVisualization",
    "PySide6.Qt3DCore",
    "PySide6.QtSql",
    "PySide6.QtTest",
    "PySide6.QtHelp",
    "PySide6.QtUiTools",
    "PySide6.QtOpenGLWidgets",
]
"""Python modules the analysis must not follow."""

DROPPED_FILES = [
    "*.pyi",
    # Qt's own translations (Arxiu ships its own tables) and QML, which Arxiu never loads.
    "PySide6/Qt/translations/*",
    "PySide6/Qt/qml/*",
    # Test folders of third-party packages.
    "*/tests/*",
    "*/test/*",
]
"""Bundle-relative destination paths (``fnmatch`` patterns) left out of the bundle."""


def keep_entry(destination: str) -> bool:
    """Whether a bundle file at ``destination`` (relative, either slash) stays in the bundle."""
    path = destination.replace("\\", "/")
    return not any(fnmatch.fnmatch(path, pattern) for pattern in DROPPED_FILES)


def app_version(root: Path) -> str:
    """``app.__version__`` read from the source (the spec must not import the app)."""
    text = (root / "app" / "__init__.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__ = "([^"]+)"', text, re.MULTILINE)
    if not match:
        raise ValueError("app/__init__.py has no __version__")
    return match.group(1)
