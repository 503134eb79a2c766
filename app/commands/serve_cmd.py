"""``arxiu serve``: the local API (the seeds' dialects) over the archive, until stopped.

Binds loopback by default. Any other ``--host`` needs ``--allow-remote`` and is announced
loudly; the ``Host`` header allow-list then holds the host given plus each ``--allow-host``.
Writes need ``--allow-writes`` *and* a user with ``--can-write``.

The server listens as soon as the archive is open (the demo is created first on a fresh home,
well under a second); the index is opened and brought up to date on a background thread
(:func:`index_in_background`): its lexical part first, then the vectors, while requests are
already answered (searches from what is indexed so far). Before, the demo was indexed in full
before listening: 5 min 35 s on two cores.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import threading
import time
from typing import TYPE_CHECKING

from app.api.hardening import LOOPBACK_NAMES, is_loopback, listening_socket
from app.commands.cli_words import counted, words
from app.commands.common import add_archive_argument, archive_location
from app.commands.common import shown as shown_location
from app.core.errors import ArxiuError
from app.core.phrases import Phrase

if TYPE_CHECKING:
    from app.api.context import ApiContext
    from app.core.index.indexer import Progress

DEFAULT_PORT = 8765
READY = "index up to date ({seconds:.1f} s after start)"
"""The line on stderr once the index is complete, the same in every language: the benchmarks
(``benchmarks/bench_paths.py``) and tests wait for ``index up to date`` in it."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``serve`` command."""
    parser = sub.add_parser("serve", help="serve the local API until stopped (Ctrl+C)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default loopback)")
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: any)"
    )
    parser.add_argument(
        "--allow-writes", action="store_true", help="let users with --can-write apply plans"
    )
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a non-loopback --host (other machines can then reach the server)",
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="another host name clients use to reach the server (repeatable)",
    )
    parser.add_argument(
        "--agent-messages-per-month",
        type=int,
        metavar="N",
        help="Vadalog dialect: each user's monthly message allowance (default: unlimited)",
    )
    parser.add_argument(
        "--agent-sessions",
        type=int,
        default=256,
        metavar="N",
        help="Vadalog dialect: server-side sessions kept before the least recently used goes",
    )
    add_archive_argument(parser)
    parser.set_defaults(func=run_serve)


def allowed_hosts(host: str, extra: list[str]) -> frozenset[str]:
    """The ``Host`` names the server answers to."""
    names = set(LOOPBACK_NAMES) | {h.lower() for h in extra}
    if host not in {"0.0.0.0", "::"}:
        names.add(host.strip("[]").lower())
    return frozenset(names)


def check_host(host: str, allow_remote: bool) -> None:
    """Refuse a non-loopback bind without ``--allow-remote``; warn loudly with it."""
    if is_loopback(host):
        return
    if not allow_remote:
        raise ArxiuError(
            "serve.remote_refused",
            Phrase.of(
                "Refusing to listen on {host}: other machines could reach the archive.", host=host
            ),
            hint="Add --allow-remote if that is what you want, or use --host 127.0.0.1.",
            category="input",
        )
    bar = "!" * 72
    warning = words().serve.remote_warning.format(host=host)
    print(f"{bar}\n{warning}\n{bar}", file=sys.stderr, flush=True)


def run_serve(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    import uvicorn

    from app.api.context import ApiContext, Limits
    from app.api.server import create_app
    from app.api.users import UserStore

    check_host(args.host, args.allow_remote)
    named = getattr(args, "archive", None)
    users = UserStore()
    ctx = ApiContext(
        archive_dir=archive_location(args) if named else None,
        users=users,
        allow_writes=args.allow_writes,
        allowed_hosts=allowed_hosts(args.host, args.allow_host),
        limits=Limits(
            agent_sessions=args.agent_sessions,
            agent_messages_per_month=args.agent_messages_per_month,
        ),
    )
    started = time.monotonic()
    ctx.open_archive()
    try:
        sock = listening_socket(args.host, args.port)
    except OSError as error:
        raise ArxiuError(
            "serve.bind_failed",
            Phrase.of(
                "Cannot listen on {host}:{port}: {why}.",
                host=args.host,
                port=args.port,
                why=str(error.strerror or error),
            ),
            hint="Pick another --port (0 picks a free one), or stop what is using it.",
        ) from error
    port = sock.getsockname()[1]
    shown = f"[{args.host}]" if ":" in args.host else args.host
    announce(
        f"http://{shown}:{port}",
        allow_writes=args.allow_writes,
        users=len(users.list()),
        where=shown_location(archive_location(args)),
    )
    index_in_background(ctx, started)
    config = uvicorn.Config(create_app(ctx), log_level="warning", lifespan="on")
    with contextlib.suppress(KeyboardInterrupt):  # re-raised by uvicorn after its shutdown
        uvicorn.Server(config).run(sockets=[sock])
    print(words().serve.stopped, file=sys.stderr, flush=True)
    return 0


def announce(base: str, *, allow_writes: bool, users: int, where: str) -> None:
    """Say where the server listens: the API's URL on stdout, ``Arxiu API at http://…`` in
    every language (clients, tests and benchmarks read the first line and split it at
    `` at ``); then on stderr, in the chosen language, the OAI-PMH provider's URL, whether
    writes are allowed, the ``users`` (in the form that agrees with their number) and the
    archive (``where``) being indexed."""
    print(f"Arxiu API at {base}/dedalo/core/api/v1/json/", flush=True)
    w = words().serve
    writes = w.writes_allowed if allow_writes else w.writes_off
    lines = [
        w.oai.format(url=f"{base}/oai"),
        w.running.format(writes=writes, users=counted(w.users, users)),
        w.indexing.format(where=where),
    ]
    print("\n".join(lines), file=sys.stderr, flush=True)


def index_in_background(ctx: ApiContext, started: float) -> threading.Thread:
    """Open the served archive's index and index it on a thread (the server listens
    meanwhile); says on stderr when the index is complete, with the seconds since ``started``.
    """
    said: list[bool] = []

    def progress(event: Progress) -> None:
        if event.state == "idle" and event.error is None and not said:
            said.append(True)
            seconds = time.monotonic() - started
            print(READY.format(seconds=seconds), file=sys.stderr, flush=True)

    def run() -> None:
        try:
            ctx.open_searcher()
        except ArxiuError as error:
            unavailable = words().serve.index_unavailable.format(error=error)
            print(unavailable, file=sys.stderr, flush=True)
            return
        index = ctx.index
        if index is not None:
            index.add_progress_listener(progress)
            if not index.pending():  # complete before the listener was added
                progress(index.progress())

    thread = threading.Thread(target=run, name="arxiu-serve-index", daemon=True)
    thread.start()
    return thread
