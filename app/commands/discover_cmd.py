"""``arxiu models discover`` and ``arxiu models add --from-discovered N|PATH``."""

from __future__ import annotations

import argparse
from pathlib import Path

from app.commands.cli_words import counted, said, table, words
from app.commands.common import print_json
from app.core import paths
from app.core.counted import Counted
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
from app.core.phrases import Phrase

NOT_FOUND = Counted(
    "There is no discovered model {number}; 1 was found.",
    "There is no discovered model {number}; {n} were found.",
)
"""The message of ``ai.discovered_unknown``: the form for the count is the English template of
the error's phrase, said in the CLI's language (the tables hold both forms)."""


def server_spec(text: str) -> ServerSpec:
    """``APP:PORT`` (``ollama:11434``) as a loopback server to ask.

    Raises:
        ModelError: ``ai.server_spec_invalid`` for anything else.
    """
    app, _, port = text.partition(":")
    if app not in SERVER_LABELS or not port.isdigit() or not 0 < int(port) < 65536:
        raise ModelError(
            "ai.server_spec_invalid",
            Phrase.of(
                '"{text}" is not a local server: write APP:PORT, APP one of {apps}.',
                text=text,
                apps=", ".join(SERVER_LABELS),
            ),
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
    if found.size >= 1 << 30:
        return said("{size:.1f} GB", size=found.size / (1 << 30))
    return said("{size:,} MB", size=found.size // MIB)


def _line(number: int, found: Found) -> str:
    """One found model for a person: its number, name, source, facts and how it fits."""
    w = words().models
    if found.context_length:
        context = w.context.format(tokens=found.context_length)
    else:
        context = w.context_unknown
    fit = w.fit[found.fit]
    if found.memory_needed and found.memory_available:
        needed, available = found.memory_needed // MIB, found.memory_available // MIB
        fit += said(w.free, needed=needed, available=available)
    tools = w.tools[found.supports_tools]
    facts = [found.architecture or "?", found.quantisation or "?", context, _size(found), tools]
    return f"{number:>3}  {found.name}  [{found.source_label}]  {' · '.join(facts)}  — {fit}"


def _print(result: Discovery) -> None:
    w = words().models
    print(
        counted(
            w.found,
            len(result.models),
            seconds=result.elapsed_s,
            entries=counted(w.entries, result.entries_seen),
            where="" if result.complete else w.stopped,
        )
    )
    for number, found in enumerate(result.models, start=1):
        print(_line(number, found))
        print(f"     {found.path or (found.server.endpoint if found.server else '')}")
    best = result.recommendation()
    if best is not None:
        found = result.models[best]
        why = w.why_tools if found.supports_tools else w.why_fit
        print(w.recommended.format(number=best + 1, name=found.name, why=why))
        print(w.add_it.format(number=best + 1))
    for refused in result.refused:
        message = refused.message_in(table())
        print(w.refused.format(path=refused.path, code=refused.code, message=message))


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
            Phrase.of(NOT_FOUND.template(len(result.models)), number=number, n=len(result.models)),
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
    added = words().models.added_discovered
    print(added.format(id=entry["id"], source=found.source_label, where=where))
    return 0
