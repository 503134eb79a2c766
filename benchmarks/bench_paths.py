"""The paths a person waits on, whole, each as a fresh process: where the seconds go.

* cold ``arxiu ask`` on the demo with the bundled model (``--json-events``, each event line
  timestamped as it arrives): process start → first event (imports, archive, index open,
  request checked), → search result, → first token, → end; and the model load alone
  (``LocalLlamaModel.load()`` in a fresh process) to show how much of it the search hides;
* ``arxiu serve`` on a fresh home: start → first accepted TCP connection.

``--tree PATH`` runs the same paths from another source tree (``git archive HEAD | tar -x -C
PATH`` for the code before a change), so a before/after is one run on the same machine; the
runs of the trees are interleaved and medians printed. ``ARXIU_HOME`` must hold a demo archive
whose index is complete (``arxiu index`` once), or the ask path includes indexing.

Run: ``ARXIU_HOME=... python benchmarks/bench_paths.py [--tree PATH] [--repeats N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
QUESTION = "What do the interviews say about the reservoir?"
LOAD = (
    "import asyncio, time\n"
    "from app.core.models.catalog import builtin_local\n"
    "from app.core.models.local_llama import LocalLlamaModel\n"
    "t = time.perf_counter()\n"
    "model = LocalLlamaModel(builtin_local())\n"
    "asyncio.run(model.load())\n"
    "print(time.perf_counter() - t)\n"
    "asyncio.run(model.aclose())\n"
)


def env_for(tree: Path, home: str | None = None) -> dict[str, str]:
    """The environment of a run from ``tree`` (and ``home`` as ARXIU_HOME, if given)."""
    env = {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1"}
    if home is not None:
        env["ARXIU_HOME"] = home
    return env


def ask_split(tree: Path) -> dict[str, float]:
    """Seconds from process start to each milestone of one cold ``arxiu ask``."""
    command = [sys.executable, "-m", "app", "ask", QUESTION, "--json-events"]
    started = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env=env_for(tree), cwd=tree,
    )  # fmt: skip
    marks: dict[str, float] = {}
    assert process.stdout is not None
    for line in process.stdout:
        kind = json.loads(line)["event"]
        now = time.perf_counter() - started
        marks.setdefault("first_event", now)
        if kind == "tool_result":
            marks.setdefault("search", now)
        if kind == "text" and "search" in marks:
            marks.setdefault("first_token", now)
    process.wait()
    marks["end"] = time.perf_counter() - started
    return marks


def model_load(tree: Path) -> float:
    """Seconds ``LocalLlamaModel.load()`` takes in a fresh process (imports excluded)."""
    out = subprocess.run(
        [sys.executable, "-c", LOAD], capture_output=True, text=True, env=env_for(tree),
        cwd=tree, check=True,
    )  # fmt: skip
    return float(out.stdout.strip().splitlines()[-1])


def serve_listening(tree: Path) -> float:
    """Seconds from starting ``arxiu serve`` on a fresh home to its first accepted connection."""
    with tempfile.TemporaryDirectory(prefix="arxiu-home-") as home:
        env = env_for(tree, home) | {"ARXIU_EMBEDDING_MODEL": "use"}
        started = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-m", "app", "serve", "--port", "0"], stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, env=env, cwd=tree,
        )  # fmt: skip
        try:
            assert process.stdout is not None
            url = process.stdout.readline().split(" at ", 1)[1]
            port = int(url.split(":")[2].split("/")[0])
            with socket.create_connection(("127.0.0.1", port), timeout=600):
                return time.perf_counter() - started
        finally:
            process.kill()
            process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, action="append", default=[], help="another tree")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-serve", action="store_true", help="skip arxiu serve")
    parser.add_argument("--no-ask", action="store_true", help="skip arxiu ask")
    args = parser.parse_args()
    trees = [REPO, *args.tree]
    runs: dict[Path, list[dict[str, float]]] = {tree: [] for tree in trees}
    for _ in range(args.repeats):
        for tree in trees:
            marks: dict[str, float] = {} if args.no_ask else ask_split(tree)
            if not args.no_ask:
                marks["model_load"] = model_load(tree)
            if not args.no_serve:
                marks["serve_listening"] = serve_listening(tree)
            runs[tree].append(marks)
            print(tree, {k: round(v, 2) for k, v in marks.items()}, flush=True)
    for tree, tree_runs in runs.items():
        print(f"{tree} (medians of {len(tree_runs)}, seconds from process start):")
        for key in tree_runs[0]:
            values = [m[key] for m in tree_runs if key in m]
            print(f"  {key:16} {statistics.median(values):7.2f}")


if __name__ == "__main__":
    main()
