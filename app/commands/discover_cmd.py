"""``arxiu models discover`` and ``arxiu models add --from-discovered N|PATH``."""

from __future__ import annotations

import argparse
from pathlib import Path

from app.commands.common import print_json
from app.core import paths
from app.core.errors import ModelError
from app.core.models.catalog import add_entry, catalog_from_data, read_raw_entries
from app.core.models.discovery import (
    Discovery,
    Found,
    catalog_entry,
    discover,
    found_from_path,
    model_id_for,
)
from app.core.models.discovery_roots import check_folder, saved_folders
from app.core.models.discovery_servers import KNOWN_SERVERS, SERVER_LABELS, ServerSpec
from app.core.models.gguf import MIB

FIT_WORDS = {
    "fits": "fits in memory",
    "tight": "tight fit in memory",
    "over": "needs more memory than is free now",
    "refused": "too large for this computer",
    "server": "runs in its server",
    "unknown": "memory unknown",
}


def server_spec(text: str) -> ServerSpec:
    """``APP:PORT`` (``ollama:11434``) as a loopback server to ask.

    Raises:
        ModelError: ``ai.server_spec_invalid`` for anything else.
    """
    app, _, port = text.partition(":")
    if app not in SERVER_LABELS or not port.isdigit() or not 0 < int(port) < 65536:
        raise ModelError(
            "ai.server_spec_invalid",
            f'"{text}" is not a local server: write APP:PORT, APP one of '
            f"{', '.join(SERVER_LABELS)}.",
            hint="Only servers on this computer (loopback) are asked.",
            category="input",
        )
    return ServerSpec(app, int(port))


def _run_discovery(args: argparse.Namespace) -> Discovery:
    folders = [check_folder(Path(f).expanduser()) for f in getattr(args, "folder", None) or []]
    named = tuple(server_spec(text) for text in getattr(args, "server", None) or [])
    servers = () if getattr(args, "no_servers", False) else named or KNOWN_SERVERS
    return discover(folders=[*saved_folders(), *folders], servers=servers)


def _size(found: Found) -> str:
    if found.size is None:
        return "-"
    return (
        f"{found.size / (1 << 30):.1f} GB" if found.size >= 1 << 30 else f"{found.size // MIB} MB"
    )


def _line(number: int, found: Found) -> str:
    tools = {True: "tools: yes", False: "tools: no", None: "tools: ?"}[found.supports_tools]
    context = f"ctx {found.context_length}" if found.context_length else "ctx ?"
    fit = FIT_WORDS[found.fit]
    if found.memory_needed and found.memory_available:
        fit += f" ({found.memory_needed // MIB} of {found.memory_available // MIB} MiB free)"
    facts = [found.architecture or "?", found.quantisation or "?", context, _size(found), tools]
    return f"{number:>3}  {found.name}  [{found.source_label}]  {' · '.join(facts)}  — {fit}"


def _print(result: Discovery) -> None:
    where = "" if result.complete else " (stopped at the scan's limit)"
    print(
        f"Found {len(result.models)} model(s) on this computer in {result.elapsed_s:.2f} s, "
        f"{result.entries_seen} entries looked at{where}."
    )
    for number, found in enumerate(result.models, start=1):
        print(_line(number, found))
        print(f"     {found.path or (found.server.endpoint if found.server else '')}")
    best = result.recommendation()
    if best is not None:
        found = result.models[best]
        why = (
            "it can plan tool calls (write mode)"
            if found.supports_tools
            else ("the best fit here; it cannot plan tool calls, so write mode needs another model")
        )
        print(f"Recommended: {best + 1} {found.name}: {why}.")
        print(f"Add it with: arxiu models add --from-discovered {best + 1}")
    for refused in result.refused:
        print(f"Refused {refused.path}: [{refused.code}] {refused.message}")


def discover_and_print(args: argparse.Namespace) -> int:
    """``arxiu models discover [--json]``."""
    result = _run_discovery(args)
    if args.json:
        print_json(result.to_json())
    else:
        _print(result)
    return 0


def _chosen(args: argparse.Namespace) -> Found:
    wanted = str(args.from_discovered)
    if not wanted.isdigit():
        return found_from_path(Path(wanted).expanduser().resolve())
    result = _run_discovery(args)
    number = int(wanted)
    if not 1 <= number <= len(result.models):
        raise ModelError(
            "ai.discovered_unknown",
            f"There is no discovered model {number}; {len(result.models)} were found.",
            hint="Run `arxiu models discover` to see the numbers.",
            category="input",
            details={"number": number, "found": len(result.models)},
        )
    return result.models[number - 1]


def add_discovered(args: argparse.Namespace) -> int:
    """``arxiu models add --from-discovered N|PATH``: add it with ``egress: local``."""
    found = _chosen(args)
    raw = read_raw_entries(paths.catalog_file())
    taken = {str(item.get("id")) for item in raw if isinstance(item, dict)} | {"local"}
    entry = catalog_entry(found, args.id or model_id_for(found, taken))
    if args.label:
        entry["label"] = args.label
    if args.max_tokens:
        entry["max_tokens"] = args.max_tokens
    if args.no_tools:
        entry["supports_tools"] = False
    if args.default:
        entry["default"] = True
    others = [item for item in raw if item.get("id") != entry["id"]]
    catalog_from_data([*others, entry])  # validate before writing
    add_entry(entry)
    where = found.path or (found.server.endpoint if found.server else "")
    print(f"Added model {entry['id']} (local / private) from {found.source_label}: {where}")
    return 0
