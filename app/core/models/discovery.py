"""Models already on this computer: GGUF files of the desktop apps, and local servers.

:func:`discover` scans the folders of :mod:`~app.core.models.discovery_roots` (plus folders
added in Settings) without following links into other folders or entering system folders,
within a depth, an entry count and a time budget shared by all folders; reads each GGUF's
header (:mod:`~app.core.models.gguf_facts`) and compares its memory estimate with the memory
available now; then asks the local servers (:mod:`~app.core.models.discovery_servers`).
Files that are not usable GGUF models are listed as refused with their error code.

:func:`catalog_entry` turns one result into a catalog entry, always ``egress: local``.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from app.core.errors import ArxiuError, ModelError, said_in
from app.core.json_types import JsonObject
from app.core.models.catalog_rules import EntryFields
from app.core.models.discovery_roots import (
    SOURCE_LABELS,
    Root,
    app_roots,
    is_system_folder,
    saved_folders,
)
from app.core.models.discovery_servers import (
    KNOWN_SERVERS,
    SERVER_LABELS,
    ServerModel,
    ServerSpec,
    probe_servers,
)
from app.core.models.gguf import MIB, available_memory_bytes
from app.core.models.gguf_facts import GGUFFacts, read_facts
from app.core.models.model_languages import family_languages
from app.core.phrases import Phrase, Translations

Fit = Literal["fits", "tight", "over", "refused", "server", "unknown"]
SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "site-packages", "blobs"})
PART_RE = re.compile(r"-(\d{5})-of-(\d{5})\.gguf$", re.IGNORECASE)
GENERIC_STEMS = frozenset({"model", "ggml-model", "weights", "gguf"})
"""File names that say nothing (Jan keeps ``<model id>/model.gguf``)."""
OLLAMA_MODEL_LAYER = "application/vnd.ollama.image.model"
OLLAMA_REGISTRY = "registry.ollama.ai"
REFUSE_FACTOR = 2
"""A model needing more than this many times the available memory is refused."""
TIGHT_SHARE = 0.8
"""A model needing more than this share of the available memory is a tight fit."""
FILE_GRACE_S = 0.5
"""Each file's header may be read this long even when the scan's budget is nearly spent (up
to the reader's own bound, ``gguf_facts.FILE_TIME_BOUND_S``), so a real model late in a scan
is not refused as slow."""


@dataclass(frozen=True)
class ScanLimits:
    """Bounds shared by every folder of one discovery."""

    max_depth: int = 8
    max_entries: int = 200_000
    time_budget_s: float = 1.5


@dataclass(frozen=True)
class Found:
    """One model found: a GGUF file or a model of a local server."""

    kind: Literal["file", "server"]
    source: str
    name: str
    fit: Fit
    path: Path | None = None
    facts: GGUFFacts | None = None
    server: ServerModel | None = None
    memory_needed: int | None = None
    memory_available: int | None = None

    @property
    def source_label(self) -> str:
        """``LM Studio``, ``Ollama server``…"""
        labels = SERVER_LABELS if self.kind == "server" else SOURCE_LABELS
        return labels.get(self.source, self.source)

    @property
    def supports_tools(self) -> bool | None:
        """Whether it can call tools (``None``: unknown)."""
        if self.facts is not None:
            return self.facts.supports_tools
        return self.server.supports_tools if self.server else None

    @property
    def quantisation(self) -> str | None:
        """The quantisation, where known."""
        if self.facts is not None:
            return self.facts.quantisation
        return self.server.quantisation if self.server else None

    @property
    def context_length(self) -> int | None:
        """The model's trained context length, where known."""
        if self.facts is not None:
            return self.facts.context_length
        return self.server.context_length if self.server else None

    @property
    def architecture(self) -> str | None:
        """The architecture, where known."""
        if self.facts is not None:
            return self.facts.architecture
        return self.server.architecture if self.server else None

    @property
    def size(self) -> int | None:
        """Bytes on disk (files only)."""
        return self.facts.size if self.facts else None

    def to_json(self) -> JsonObject:
        """Plain JSON values for ``arxiu models discover --json``."""
        return {
            "kind": self.kind,
            "source": self.source,
            "source_label": self.source_label,
            "name": self.name,
            "path": str(self.path) if self.path else None,
            "endpoint": self.server.endpoint if self.server else None,
            "model": self.server.model if self.server else None,
            "architecture": self.architecture,
            "quantisation": self.quantisation,
            "context_length": self.context_length,
            "parameters": self.facts.parameter_count if self.facts else None,
            "parameters_label": self.facts.parameters_label()
            if self.facts
            else (self.server.parameters_label if self.server else None),
            "size_bytes": self.size,
            "supports_tools": self.supports_tools,
            "memory_needed_mb": self.memory_needed // MIB if self.memory_needed else None,
            "memory_available_mb": self.memory_available // MIB if self.memory_available else None,
            "fit": self.fit,
        }


@dataclass(frozen=True)
class Refused:
    """A file that looked like a model but cannot be used, with the coded reason."""

    source: str
    path: Path
    code: str
    message: str
    words: str | Phrase | None = field(default=None, compare=False, repr=False)
    """The message as the error raised it (a phrase said in a person's language)."""

    def message_in(self, table: Translations) -> str:
        """The reason in the language of ``table`` (English where it has no translation)."""
        return said_in(self.words, table) if self.words is not None else self.message

    def to_json(self) -> JsonObject:
        """Plain JSON values."""
        return {
            "source": self.source,
            "path": str(self.path),
            "code": self.code,
            "message": self.message,
        }


@dataclass
class Discovery:
    """Everything one discovery found, and how far it looked."""

    models: list[Found] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """``(folder, reason)`` for folders that could not or may not be entered."""
    entries_seen: int = 0
    complete: bool = True
    """``False`` when a limit (time, entries) stopped the scan early."""
    elapsed_s: float = 0.0

    def recommendation(self) -> int | None:
        """The index in :attr:`models` of the best usable model (``None`` if none is)."""
        usable = [(n, m) for n, m in enumerate(self.models) if m.fit in ("fits", "tight", "server")]
        if not usable:
            return None

        def score(item: tuple[int, Found]) -> tuple[bool, bool, int]:
            model = item[1]
            params = model.facts.parameter_count if model.facts else 0
            return (bool(model.supports_tools), model.fit in ("fits", "server"), params)

        return max(usable, key=score)[0]

    def to_json(self) -> JsonObject:
        """Plain JSON values (models numbered from 1, as ``--from-discovered`` takes them)."""
        best = self.recommendation()
        return {
            "models": [{"number": n + 1, **m.to_json()} for n, m in enumerate(self.models)],
            "recommended": best + 1 if best is not None else None,
            "refused": [r.to_json() for r in self.refused],
            "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
            "entries_seen": self.entries_seen,
            "complete": self.complete,
            "elapsed_s": round(self.elapsed_s, 3),
        }


class _Budget:
    def __init__(self, limits: ScanLimits, result: Discovery) -> None:
        self.limits = limits
        self.result = result
        self.deadline = time.monotonic() + limits.time_budget_s

    def spent(self) -> bool:
        if self.result.entries_seen >= self.limits.max_entries or time.monotonic() > self.deadline:
            self.result.complete = False
            return True
        return False


def _walk(root: Path, budget: _Budget) -> Iterator[Path]:
    """The ``.gguf`` files under ``root`` (no links to folders followed, bounded)."""
    stack = [(str(root), 0)]
    while stack and not budget.spent():
        folder, depth = stack.pop()
        try:
            with os.scandir(folder) as scan:
                entries = list(scan)
        except OSError as error:
            budget.result.skipped.append((folder, error.strerror or "unreadable"))
            continue
        budget.result.entries_seen += len(entries)
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if depth < budget.limits.max_depth and entry.name not in SKIP_DIRS:
                        stack.append((entry.path, depth + 1))
                elif entry.name.lower().endswith(".gguf") and entry.is_file():
                    yield Path(entry.path)
            except OSError:
                continue


def _first_part(path: Path) -> bool:
    """Whether ``path`` is a single-file model or the first part of a split one."""
    match = PART_RE.search(path.name)
    return match is None or int(match.group(1)) == 1


def _ollama_blobs(root: Path, budget: _Budget) -> Iterator[tuple[str, Path]]:
    """``(name:tag, blob path)`` for each model manifest of an Ollama models folder."""
    manifests = root / "manifests"
    for manifest in _walk_files(manifests, budget, depth=5):
        parts = manifest.relative_to(manifests).parts
        try:
            data = json.loads(manifest.read_bytes()[: 1 << 20])
        except (OSError, ValueError):
            continue
        layers = data.get("layers") if isinstance(data, dict) else None
        for layer in layers if isinstance(layers, list) else []:
            if isinstance(layer, dict) and layer.get("mediaType") == OLLAMA_MODEL_LAYER:
                digest = str(layer.get("digest") or "").replace(":", "-")
                yield _ollama_name(parts), root / "blobs" / digest


def _ollama_name(parts: tuple[str, ...]) -> str:
    *place, model, tag = parts if len(parts) >= 2 else ("model", *parts)
    prefix = [p for p in place if p not in (OLLAMA_REGISTRY, "library")]
    return "/".join([*prefix, model]) + f":{tag}"


def _walk_files(root: Path, budget: _Budget, depth: int) -> Iterator[Path]:
    stack = [(root, 0)]
    while stack and not budget.spent():
        folder, level = stack.pop()
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            continue
        budget.result.entries_seen += len(entries)
        for entry in entries:
            if entry.is_symlink():
                continue
            if entry.is_dir() and level < depth:
                stack.append((entry, level + 1))
            elif entry.is_file():
                yield entry


def file_model_name(path: Path) -> str:
    """The name a GGUF file is shown by: its stem, or its folder's name for ``model.gguf``."""
    return path.parent.name if path.stem.lower() in GENERIC_STEMS else path.stem


def _fit(needed: int, available: int | None) -> Fit:
    if available is None:
        return "unknown"
    if needed > REFUSE_FACTOR * available:
        return "refused"
    if needed > available:
        return "over"
    return "tight" if needed > TIGHT_SHARE * available else "fits"


class _Scan:
    def __init__(self, limits: ScanLimits, available: int | None) -> None:
        self.result = Discovery()
        self.budget = _Budget(limits, self.result)
        self.available = available
        self.seen: set[tuple[str, str]] = set()

    def add_file(self, source: str, path: Path, name: str) -> None:
        key = (source, os.path.realpath(path))
        if key in self.seen or self.budget.spent():
            return
        self.seen.add(key)
        deadline = max(self.budget.deadline, time.monotonic() + FILE_GRACE_S)
        try:
            facts = read_facts(path, deadline)
        except ArxiuError as error:
            refused = Refused(source, path, error.code, error.message, error.message_words)
            self.result.refused.append(refused)
            return
        if not facts.is_chat_model:
            self.result.skipped.append((str(path), f"not a chat model ({facts.architecture})"))
            return
        needed = facts.memory_needed()
        fit = _fit(needed, self.available)
        model = Found("file", source, name, fit, path, facts, None, needed, self.available)
        self.result.models.append(model)

    def scan(self, root: Root) -> None:
        if not root.path.is_dir():
            return
        if is_system_folder(root.path):
            self.result.skipped.append((str(root.path), "a system folder"))
            return
        if root.layout == "ollama":
            for name, blob in _ollama_blobs(root.path, self.budget):
                self.add_file(root.source, blob, name)
            return
        for path in _walk(root.path, self.budget):
            if _first_part(path) and not path.name.lower().startswith("mmproj"):
                self.add_file(root.source, path, file_model_name(path))


def discover(
    *,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
    folders: list[Path] | None = None,
    servers: tuple[ServerSpec, ...] | None = KNOWN_SERVERS,
    limits: ScanLimits | None = None,
    available_memory: Callable[[], int | None] = available_memory_bytes,
) -> Discovery:
    """Find the models on this computer.

    Args:
        home: the home folder to look in (default: the person's).
        env: environment variables that move the apps' folders (default: ``os.environ``).
        folders: extra folders (default: those added in Settings).
        servers: loopback servers to ask (``None`` or ``()``: none).
        limits: scan bounds.
        available_memory: bytes available now (tests inject a figure).
    """
    started = time.monotonic()
    scan = _Scan(limits or ScanLimits(), available_memory())
    extra = saved_folders() if folders is None else folders
    roots = [*app_roots(home, env), *(Root("folder", Path(f)) for f in extra)]
    for root in roots:
        scan.scan(root)
    ordered = sorted(
        scan.result.models,
        key=lambda m: (list(SOURCE_LABELS).index(m.source), m.name.lower(), str(m.path)),
    )
    scan.result.models = ordered
    for model in probe_servers(servers) if servers else []:
        scan.result.models.append(Found("server", model.app, model.model, "server", server=model))
    scan.result.elapsed_s = time.monotonic() - started
    return scan.result


def model_id_for(found: Found, taken: set[str] | None = None) -> str:
    """A catalog id for ``found`` (``^[a-z0-9_-]{1,64}$``), distinct from ``taken``."""
    base = re.sub(r"[^a-z0-9_-]+", "-", found.name.lower()).strip("-")[:56] or "model"
    candidate, number = base, 2
    while taken and candidate in taken:
        candidate, number = f"{base}-{number}", number + 1
    return candidate


def catalog_entry(found: Found, model_id: str | None = None) -> EntryFields:
    """The catalog entry (``egress: local``) that adds ``found``.

    Raises:
        ModelError: ``ai.model_insufficient_memory`` for a file needing more than twice the
            memory available now.
    """
    if found.fit == "refused":
        needed = (found.memory_needed or 0) // MIB
        free = (found.memory_available or 0) // MIB
        raise ModelError(
            "ai.model_insufficient_memory",
            Phrase.of(
                "{name} needs about {needed} MiB, more than twice the {free} MiB of memory "
                "available now.",
                name=found.name,
                needed=needed,
                free=free,
            ),
            hint="Choose a smaller model or a stronger quantisation (Q4_K_M) of it.",
            category="environment",
            details={"required_mb": needed, "available_mb": free, "path": str(found.path)},
        )
    label = f"{found.name} ({found.source_label})"[:120]
    ident = model_id or model_id_for(found)
    if found.kind == "server" and found.server is not None:
        server = found.server
        entry: EntryFields = {"id": ident, "label": label, "provider": "openai_compatible"}
        entry.update({"model": server.model, "endpoint": server.endpoint, "egress": "local"})
        if server.supports_tools is False:
            entry["supports_tools"] = False
    else:
        entry = {
            "id": ident,
            "label": label,
            "provider": "local",
            "gguf": str(found.path),
            "egress": "local",
            "supports_tools": bool(found.supports_tools),
        }
    languages = found_languages(found)
    if languages:
        entry["languages"] = languages
    return entry


def found_languages(found: Found) -> list[str]:
    """The languages ``found`` writes: its GGUF's ``general.languages``, else its family's
    (:mod:`app.core.models.model_languages`); ``[]``: not known."""
    if found.facts is not None and found.facts.languages:
        return list(found.facts.languages)
    names = [found.name, found.server.model if found.server else "", str(found.path or "")]
    known = family_languages(name for name in names if name)
    return sorted(known) if known is not None else []


def found_from_path(
    path: Path, available_memory: Callable[[], int | None] = available_memory_bytes
) -> Found:
    """A GGUF file named by its path, described like a discovered one.

    Raises:
        ModelError: ``ai.model_file_missing`` or ``ai.model_file_invalid``.
    """
    facts = read_facts(path)
    available = available_memory()
    needed = facts.memory_needed()
    name = file_model_name(path) if path.suffix.lower() == ".gguf" else facts.name
    return Found(
        "file", "folder", name, _fit(needed, available), path, facts, None, needed, available
    )
