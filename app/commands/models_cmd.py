"""``arxiu models list|add|remove|test|discover``: the model catalog from the terminal."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

from app.commands.cli_words import counted, said, words
from app.commands.common import print_json
from app.core.errors import ModelError
from app.core.models.base import Message, StreamOptions
from app.core.models.catalog import (
    add_entry,
    catalog_from_data,
    load_catalog,
    read_raw_entries,
    remove_entry,
)
from app.core.models.catalog_rules import PROVIDERS

TEST_PROMPT = "Say hello to an archivist in one short sentence."


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``models`` commands."""
    parser = sub.add_parser("models", help="list, add, remove and test chat models")
    commands = parser.add_subparsers(dest="models_command", metavar="ACTION", required=True)
    listing = commands.add_parser("list", help="the models the assistant can use")
    listing.add_argument("--json", action="store_true", help="print the secret-free JSON list")
    listing.set_defaults(func=run_list)
    _add_parser(commands)
    remove = commands.add_parser("remove", help="remove a model (and its stored key)")
    remove.add_argument("id", help="the model id")
    remove.set_defaults(func=run_remove)
    test = commands.add_parser("test", help="stream a short reply and print the speed")
    test.add_argument("id", nargs="?", help="the model id (default: the default model)")
    test.add_argument("--prompt", default=TEST_PROMPT, help="what to ask")
    test.add_argument("--max-tokens", type=int, default=64, help="reply length limit")
    test.set_defaults(func=run_test)
    discover = commands.add_parser("discover", help="find models already on this computer")
    discover.add_argument("--json", action="store_true", help="print the findings as JSON")
    discover.add_argument(
        "--folder", action="append", type=Path, help="also search this folder (repeatable)"
    )
    discover.add_argument("--no-servers", action="store_true", help="do not ask local servers")
    discover.add_argument(
        "--server",
        action="append",
        metavar="APP:PORT",
        help="ask this loopback server instead of the usual ports (e.g. ollama:11500)",
    )
    discover.set_defaults(func=run_discover)


def _add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    add = commands.add_parser("add", help="add (or replace) a model in the catalog")
    add.add_argument("--id", help="identifier: lowercase letters, digits, _ and -")
    add.add_argument("--provider", choices=[p for p in PROVIDERS if p != "scripted"])
    add.add_argument(
        "--from-discovered",
        metavar="N|PATH",
        help="add model N of `arxiu models discover` (or the GGUF file PATH), egress local",
    )
    add.add_argument("--folder", action="append", type=Path, help="with --from-discovered N")
    add.add_argument(
        "--server", action="append", metavar="APP:PORT", help="with N, as for discover"
    )
    add.add_argument("--no-servers", action="store_true", help="with N, as for discover")
    add.add_argument("--model", help="the provider's model name (local: optional)")
    add.add_argument("--label", help="what the pickers show (default: the model name)")
    add.add_argument("--endpoint", help="server base URL, e.g. http://localhost:11434/v1")
    add.add_argument("--egress", choices=["local", "external"], help="privacy class")
    add.add_argument("--api-key-env", help="environment variable holding the key (*_API_KEY)")
    add.add_argument(
        "--api-key-stdin", action="store_true", help="read the key from stdin into the OS keyring"
    )
    add.add_argument("--vision", action="store_true", help="the model accepts images")
    add.add_argument("--gguf", help="GGUF model file (local provider)")
    add.add_argument("--max-tokens", type=int, help="reply length limit")
    add.add_argument("--timeout", type=float, dest="timeout_s", help="idle timeout in seconds")
    add.add_argument(
        "--effort", action="append", dest="efforts", help="a reasoning effort level (repeatable)"
    )
    add.add_argument("--no-tools", action="store_true", help="the model cannot plan tool calls")
    add.add_argument("--default", action="store_true", help="make it the default model")
    add.set_defaults(func=run_add)


def run_list(args: argparse.Namespace) -> int:
    """Print the catalog's public projection."""
    models = load_catalog().public()
    if args.json:
        print_json(models)
        return 0
    w = words().models
    for model in models:
        mark = "*" if model["default"] else " "
        flags = [model["egress"]] + ([w.vision] if model["vision"] else [])
        if model["efforts"]:
            flags.append(w.efforts.format(levels="/".join(model["efforts"])))
        print(f"{mark} {model['id']:<20} {model['label']}  [{', '.join(flags)}]")
    return 0


def entry_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The raw catalog entry described by ``arxiu models add`` arguments."""
    model = args.model or (Path(args.gguf).stem if args.gguf else None)
    entry: dict[str, Any] = {
        "id": args.id,
        "label": args.label or model or args.id,
        "provider": args.provider,
    }
    if model:
        entry["model"] = model
    if args.gguf:
        entry["gguf"] = str(Path(args.gguf).expanduser().resolve())
    optional = {
        "endpoint": args.endpoint,
        "egress": args.egress,
        "api_key_env": args.api_key_env,
        "max_tokens": args.max_tokens,
        "timeout_s": args.timeout_s,
        "efforts": args.efforts,
    }
    entry.update({key: value for key, value in optional.items() if value is not None})
    for flag, key, value in (
        (args.vision, "vision", True),
        (args.no_tools, "supports_tools", False),
    ):
        if flag:
            entry[key] = value
    if args.default:
        entry["default"] = True
    return entry


def run_add(args: argparse.Namespace) -> int:
    """Validate the new entry, store its key in the keyring if given, then save the catalog."""
    if args.from_discovered:
        from app.commands.discover_cmd import add_discovered

        return add_discovered(args)
    if not args.id or not args.provider:
        raise ModelError(
            "ai.model_entry_incomplete",
            "`arxiu models add` needs --id and --provider (or --from-discovered N).",
            hint="Run `arxiu models discover` to see the models already on this computer.",
            category="input",
        )
    entry = entry_from_args(args)
    others = [item for item in read_raw_entries_default() if item.get("id") != entry["id"]]
    catalog_from_data([*others, entry])  # validate before touching the keyring or the file
    if entry.get("gguf"):
        from app.core.models.gguf import read_gguf

        read_gguf(Path(entry["gguf"]))
    if args.api_key_stdin:
        from app.core.models.secrets import store_api_key

        key = sys.stdin.readline().strip()
        if not key:
            raise ModelError("ai.api_key_missing", "No key was given on stdin.", category="input")
        store_api_key(entry["id"], key)
    add_entry(entry)
    print(words().models.added.format(id=entry["id"]))
    return 0


def run_discover(args: argparse.Namespace) -> int:
    """List the models already on this computer with their facts and a recommendation."""
    from app.commands.discover_cmd import discover_and_print

    return discover_and_print(args)


def read_raw_entries_default() -> list[dict[str, Any]]:
    """The raw entries of the user's catalog file."""
    from app.core import paths

    return read_raw_entries(paths.catalog_file())


def run_remove(args: argparse.Namespace) -> int:
    """Remove a model from the catalog file and forget its stored key."""
    from app.core.models.secrets import delete_api_key

    remove_entry(args.id)
    delete_api_key(args.id)
    print(words().models.removed.format(id=args.id))
    return 0


def run_test(args: argparse.Namespace) -> int:
    """Stream a short reply from a model and print time to first token and tokens/s."""
    entry = load_catalog().get(args.id)
    stats = asyncio.run(_stream_test(entry, args.prompt, args.max_tokens))
    print()
    print(speed_line(entry.id, stats))
    return 0


def speed_line(model_id: str, stats: dict[str, Any]) -> str:
    """What ``arxiu models test`` says of a reply in the chosen language: seconds to the first
    token, the tokens (in the form that agrees with their number) in how many seconds, the
    rate; numbers with the language's separators."""
    w = words().models
    return said(
        w.tested,
        id=model_id,
        first=stats["ttft_s"],
        tokens=counted(w.tokens, int(stats["tokens"])),
        seconds=stats["generation_s"],
        rate=stats["tokens_per_s"],
    )


async def _stream_test(entry: Any, prompt: str, max_tokens: int) -> dict[str, Any]:
    from app.core.models.factory import create_model

    model = create_model(entry)
    started = time.perf_counter()
    first: float | None = None
    deltas = 0
    output_tokens = 0
    try:
        options = StreamOptions(max_tokens=max_tokens, temperature=0.2)
        async for event in model.stream([Message("user", prompt)], [], options):
            if event.kind == "text":
                first = first or time.perf_counter()
                deltas += 1
                print(event.text, end="", flush=True)
            elif event.kind == "usage":
                output_tokens = event.output_tokens
    finally:
        await model.aclose()
    ended = time.perf_counter()
    tokens = output_tokens or deltas
    generation = ended - (first or ended)
    return {
        "ttft_s": (first or ended) - started,
        "tokens": tokens,
        "generation_s": generation,
        "tokens_per_s": (tokens - 1) / generation if tokens > 1 and generation > 0 else 0.0,
    }
