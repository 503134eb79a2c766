"""What the PyInstaller spec leaves out of the bundle, and the app version it stamps.

Kept apart from ``arxiu.spec`` so the rules can be read, tested and shared by the three systems.
Everything listed here is something Arxiu never loads: removing it changes no behaviour.
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
    "torch.utils.tensorboard",
    "tensorboard",
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
    # Headers, build files and type stubs: only needed to compile against torch.
    "torch/include/*",
    "torch/share/*",
    "torch/_inductor/codegen/*.h",
    "*.pyi",
    # Qt's own translations (Arxiu ships its own tables) and QML, which Arxiu never loads.
    "PySide6/Qt/translations/*",
    "PySide6/Qt/qml/*",
    # Test folders of third-party packages, and torch's C++ test programs and test libraries.
    "*/tests/*",
    "*/test/*",
    "torch/bin/*",
    "torch/lib/*_test.so",
    "torch/lib/libaoti_custom_ops.so",
    "torch/lib/libbackend_with_compiler.so",
]
"""Bundle-relative destination paths (``fnmatch`` patterns) left out of the bundle."""

KEPT_DESPITE_PATTERNS = ["torch/testing/*", "torch/bin/torch_shm_manager"]
"""Used by ``torch`` itself (imported at start-up; shared-memory tensors): never dropped."""

TRANSFORMERS_MODELS_KEPT = frozenset(
    {
        "auto",
        "bert",
        "encoder_decoder",
        # Imported when sentence-transformers loads (its model classes name them), measured by
        # importing the embedders and embedding once: the rest of transformers.models never is.
        "align",
        "blenderbot",
        "blenderbot_small",
        "longt5",
        "m2m_100",
        "marian",
        "moonshine",
        "mt5",
        "paligemma",
        "pegasus",
        "pegasus_x",
        "prophetnet",
        "switch_transformers",
        "t5",
        "t5gemma",
        "t5gemma2",
        "timm_wrapper",
        "udop",
        "umt5",
        "whisper",
    }
)
"""The ``transformers.models`` subpackages the bundle keeps (of several hundred)."""


def transformers_model_excludes(models_dir: Path | None) -> list[str]:
    """``transformers.models.X`` for every model folder in ``models_dir`` not kept."""
    if models_dir is None or not models_dir.is_dir():
        return []
    return sorted(
        f"transformers.models.{folder.name}"
        for folder in models_dir.iterdir()
        if folder.is_dir()
        and folder.name not in TRANSFORMERS_MODELS_KEPT
        and not folder.name.startswith("__")
    )


def keep_entry(destination: str) -> bool:
    """Whether a bundle file at ``destination`` (relative, either slash) stays in the bundle."""
    path = destination.replace("\\", "/")
    if any(fnmatch.fnmatch(path, pattern) for pattern in KEPT_DESPITE_PATTERNS):
        return True
    return not any(fnmatch.fnmatch(path, pattern) for pattern in DROPPED_FILES)


def app_version(root: Path) -> str:
    """``app.__version__`` read from the source (the spec must not import the app)."""
    text = (root / "app" / "__init__.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__ = "([^"]+)"', text, re.MULTILINE)
    if not match:
        raise ValueError("app/__init__.py has no __version__")
    return match.group(1)
