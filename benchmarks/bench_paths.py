"""The paths a person waits on, whole, each as a fresh process: where the seconds go.

* cold ``arxiu ask`` on the demo with the bundled model (``--json-events``, each event line
  timestamped as it arrives): process start → first event (imports, archive, index open,
  request checked), → search result, → first token, → end; and the model load alone
  (``LocalLlamaModel.load()`` in a fresh process) to show how much of it the search hides;
* ``arxiu serve`` on a fresh home: start → first accepted TCP connection;
* cold ``arxiu search`` on the demo (``SEARCH_QUERY``): the whole command's wall time, and in
  another fresh process the same steps timed one by one (:data:`SEARCH_SPLIT`): imports, archive
  and index opened with the lexical sync, each model's load and first query vector, each model's
  vectors read, then the search itself with all of that done (``--no-search`` skips it). Compare
  a model's load and query together: before ``app/core/index/use_cache.py``, USE's ``load()``
  only made the object and its first query loaded it.

``--tree PATH`` runs the same paths from another source tree (``git archive HEAD | tar -x -C
PATH`` for the code before a change), so a before/after is one run on the same machine; the
runs of the trees are interleaved and medians printed. ``ARXIU_HOME`` must hold a demo archive
whose index is complete (``arxiu index`` once), or the ask path includes indexing.

Run: ``ARXIU_HOME=... python benchmarks/bench_paths.py [--tree PATH] [--repeats N]``.
"""

from __future__ import annotations

import argparse
import ast
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
SEARCH_QUERY = "pantà"
SEARCH_SPLIT = (
    "import sys, time\n"
    "t0 = time.perf_counter()\n"
    "marks = {}\n"
    "def mark(name):\n"
    "    global t0\n"
    "    now = time.perf_counter(); marks[name] = now - t0; t0 = now\n"
    "import app.cli\n"
    "from app.commands.common import archive_dir\n"
    "from app.core.archive.demo import ensure_demo_archive\n"
    "from app.core.index import Index\n"
    "from app.core.index.embedders import default_embedders\n"
    "from app.core.index.record_hits import search_records\n"
    "from app.core.index.service import MODEL_SETTING\n"
    "mark('imports')\n"
    "import argparse\n"
    "archive = ensure_demo_archive(archive_dir(argparse.Namespace(archive=None)))\n"
    "index = Index(archive, default_embedders(archive.meta(MODEL_SETTING)))\n"
    "index.sync_lexical(); index.stats()\n"
    "mark('open+sync')\n"
    "for e in index.embedders:\n"
    "    getattr(e, 'load', lambda: None)(); mark(f'load {e.model_id}')\n"
    "    index.engine.query_vector(e, sys.argv[1]); mark(f'query {e.model_id}')\n"
    "for e in index.embedders:\n"
    "    index.matrix_of(e); mark(f'vectors {e.model_id}')\n"
    "search_records(index, archive, sys.argv[1], k=10, lang='lg-eng')\n"
    "mark('search')\n"
    "index.close(); archive.close()\n"
    "print(repr(marks))\n"
)
"""The steps of ``arxiu search`` (``app/commands/search_cmd.py``), each timed, in one process."""
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


def cli_search(tree: Path) -> dict[str, float]:
    """A cold ``arxiu search`` on the demo: its wall time, then its steps timed one by one."""
    command = [sys.executable, "-m", "app", "search", SEARCH_QUERY]
    started = time.perf_counter()
    subprocess.run(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env_for(tree),
        cwd=tree, check=True,
    )  # fmt: skip
    marks = {"search_wall": time.perf_counter() - started}
    out = subprocess.run(
        [sys.executable, "-c", SEARCH_SPLIT, SEARCH_QUERY], capture_output=True, text=True,
        env=env_for(tree), cwd=tree, check=True,
    )  # fmt: skip
    split: dict[str, float] = ast.literal_eval(out.stdout.strip().splitlines()[-1])
    return marks | {f"search.{name}": value for name, value in split.items()}


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
    parser.add_argument("--no-search", action="store_true", help="skip arxiu search")
    args = parser.parse_args()
    trees = [REPO, *args.tree]
    runs: dict[Path, list[dict[str, float]]] = {tree: [] for tree in trees}
    for _ in range(args.repeats):
        for tree in trees:
            marks: dict[str, float] = {} if args.no_ask else ask_split(tree)
            if not args.no_ask:
                marks["model_load"] = model_load(tree)
            if not args.no_search:
                marks |= cli_search(tree)
            if not args.no_serve:
                marks["serve_listening"] = serve_listening(tree)
            runs[tree].append(marks)
            print(tree, {k: round(v, 2) for k, v in marks.items()}, flush=True)
    for tree, tree_runs in runs.items():
        print(f"{tree} (medians of {len(tree_runs)}, seconds from process start):")
        for key in tree_runs[0]:
            values = [m[key] for m in tree_runs if key in m]
            print(f"  {key:36} {statistics.median(values):7.2f}")


if __name__ == "__main__":
    main()
