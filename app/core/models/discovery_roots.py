"""Where the desktop model apps keep their GGUF files, on each OS.

Only folders inside the person's home (or named by the apps' own environment variables) are
listed; :func:`is_system_folder` keeps a scan out of the operating system's folders even when
a model folder is a link into one.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from app.core import paths
from app.core.errors import ModelError
from app.core.phrases import Phrase

Layout = Literal["tree", "ollama"]
SOURCE_LABELS = {
    "lmstudio": "LM Studio",
    "gpt4all": "GPT4All",
    "jan": "Jan",
    "ollama": "Ollama",
    "huggingface": "Hugging Face cache",
    "llamacpp": "llama.cpp cache",
    "folder": "Added folder",
}
SETTINGS_KEY = "model_folders"
"""The ``settings.json`` key listing the folders added in Settings."""
_POSIX_SYSTEM: tuple[str, ...] = ("/proc", "/sys", "/dev", "/run", "/boot", "/etc", "/usr")
_POSIX_SYSTEM += ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/snap", "/System", "/Library")
_POSIX_SYSTEM += (
    "/var/lib",
    "/var/log",
    "/var/cache",
    "/var/run",
    "/private/etc",
    "/private/var/db",
)
_WINDOWS_SYSTEM = ("windows", "program files", "program files (x86)", "programdata")


@dataclass(frozen=True)
class Root:
    """A folder to scan and how it is laid out (``ollama``: manifests and blobs)."""

    source: str
    path: Path
    layout: Layout = "tree"


def is_system_folder(path: Path | str, platform: str = sys.platform) -> bool:
    """Whether ``path`` (resolved) is an operating-system folder no scan may enter."""
    real = os.path.realpath(path)
    if platform.startswith("win"):
        parts = Path(real).parts
        return len(parts) > 1 and parts[1].lower() in _WINDOWS_SYSTEM
    if real == "/":
        return True
    return any(real == top or real.startswith(top + "/") for top in _POSIX_SYSTEM)


def _data_dirs(home: Path, env: Mapping[str, str], platform: str) -> tuple[Path, Path, Path]:
    """The per-user (data, config, cache) folders of ``platform``."""
    if platform.startswith("win"):
        roaming = Path(env.get("APPDATA") or home / "AppData" / "Roaming")
        local = Path(env.get("LOCALAPPDATA") or home / "AppData" / "Local")
        return local, roaming, local
    if platform == "darwin":
        support = home / "Library" / "Application Support"
        return support, support, home / "Library" / "Caches"
    data = Path(env.get("XDG_DATA_HOME") or home / ".local" / "share")
    config = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    return data, config, Path(env.get("XDG_CACHE_HOME") or home / ".cache")


def _hf_hub(home: Path, env: Mapping[str, str]) -> Path:
    """The Hugging Face hub cache (``~/.cache/huggingface/hub`` on every OS by default)."""
    if env.get("HF_HUB_CACHE"):
        return Path(env["HF_HUB_CACHE"])
    if env.get("HF_HOME"):
        return Path(env["HF_HOME"]) / "hub"
    return Path(env.get("XDG_CACHE_HOME") or home / ".cache") / "huggingface" / "hub"


def app_roots(
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
    platform: str = sys.platform,
) -> list[Root]:
    """The usual model folders of LM Studio, GPT4All, Jan, Ollama, Hugging Face and llama.cpp."""
    home = home or Path.home()
    env = os.environ if env is None else env
    data, config, cache = _data_dirs(home, env, platform)
    jan_data = (config if platform.startswith("linux") else data) / "Jan" / "data"
    roots = [
        Root("lmstudio", home / ".lmstudio" / "models"),
        Root("lmstudio", home / ".cache" / "lm-studio" / "models"),
        Root("gpt4all", data / "nomic.ai" / "GPT4All"),
        Root("jan", home / "jan" / "models"),
        Root("jan", jan_data / "models"),
        Root("jan", jan_data / "llamacpp" / "models"),
        Root("ollama", Path(env.get("OLLAMA_MODELS") or home / ".ollama" / "models"), "ollama"),
        Root("huggingface", _hf_hub(home, env)),
        Root("llamacpp", Path(env.get("LLAMA_CACHE") or cache / "llama.cpp")),
    ]
    unique: dict[Path, Root] = {}
    for root in roots:
        unique.setdefault(root.path, root)
    return list(unique.values())


def saved_folders() -> list[Path]:
    """The folders added in Settings (``model_folders`` in ``settings.json``)."""
    try:
        data = json.loads(paths.settings_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    folders = data.get(SETTINGS_KEY) if isinstance(data, dict) else None
    if not isinstance(folders, list):
        return []
    return [Path(str(item)).expanduser() for item in folders if isinstance(item, str) and item]


def check_folder(path: Path) -> Path:
    """``path`` if it is a folder that can be listed and is not a system folder.

    Raises:
        ModelError: ``ai.model_folder_unreadable`` (nothing is changed).
    """
    reason: Phrase | None = None
    if is_system_folder(path):
        reason = Phrase.of("it is a system folder")
    elif not path.is_dir():
        reason = (
            Phrase.of("it is not a folder") if path.exists() else Phrase.of("it does not exist")
        )
    else:
        try:
            with os.scandir(path) as entries:
                next(entries, None)
        except OSError as error:
            reason = Phrase.of("it cannot be read ({why})", why=str(error.strerror))
    if reason:
        raise ModelError(
            "ai.model_folder_unreadable",
            Phrase.of(
                "The folder {path} cannot be searched for models: {reason}.",
                path=str(path),
                reason=reason,
            ),
            hint="Choose a folder of your own that holds .gguf files.",
            category="input",
            details={"path": str(path), "reason": reason.english()},
        )
    return path
