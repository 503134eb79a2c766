"""The paths a person waits on, whole, each as a fresh process: where the seconds go.

* cold ``arxiu ask`` on the demo with the bundled model (``--json-events``, each event line
  timestamped as it arrives): process start → first event (imports, archive, index open,
  request checked), → search result, → first token, → end; and the model load alone
  (``LocalLlamaModel.load()`` in a fresh process) to show how much of it the search hides;
* ``arxiu serve`` on a fresh home: start → first accepted TCP connection;
* the first question on first start while indexing runs (:func:`question_while_indexing`):
  ``arxiu serve`` on a fresh home (the demo archive created there, nothing indexed, the bundled
  embedding models and local model), the question asked over the API (``agent_chat_stream``,
  the path the app's own assistant takes: models in a child process, indexing in the
  background) once the indexer has committed its first vectors; seconds from the question to
  its search result and to its first token, with the yielding on and off
  (``ARXIU_INDEX_YIELD=0``) in the same run, and whether the index was still incomplete when
  the first token came (``--no-yield-ab`` skips it);
* cold ``arxiu search`` on the demo (``SEARCH_QUERY``), and with ``--search-archive DIR`` on
  another indexed archive (a Tate import, ``--search-query``): the whole command's wall time, and in
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
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

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
    "from pathlib import Path\n"
    "from app.core.archive import open_archive\n"
    "folder = sys.argv[2] if len(sys.argv) > 2 else None\n"
    "archive = open_archive(Path(folder)) if folder else "
    "ensure_demo_archive(archive_dir(argparse.Namespace(archive=None)))\n"
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


def cli_search(
    tree: Path, query: str = SEARCH_QUERY, archive: Path | None = None, name: str = "search"
) -> dict[str, float]:
    """A cold ``arxiu search`` (on the demo, or on ``archive``): its wall time, then its steps
    timed one by one in another fresh process."""
    where = [] if archive is None else ["--archive", str(archive)]
    command = [sys.executable, "-m", "app", "search", query, *where]
    started = time.perf_counter()
    subprocess.run(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env_for(tree),
        cwd=tree, check=True,
    )  # fmt: skip
    marks = {f"{name}_wall": time.perf_counter() - started}
    split_args = [query] if archive is None else [query, str(archive)]
    out = subprocess.run(
        [sys.executable, "-c", SEARCH_SPLIT, *split_args], capture_output=True, text=True,
        env=env_for(tree), cwd=tree, check=True,
    )  # fmt: skip
    split: dict[str, float] = ast.literal_eval(out.stdout.strip().splitlines()[-1])
    return marks | {f"{name}.{step}": value for step, value in split.items()}


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


ADD_USER = (
    "import sys\n"
    "from pathlib import Path\n"
    "from app.api.users import UserStore\n"
    "UserStore(Path(sys.argv[1])).add('bench', 'bench-pw')\n"
)
"""Adds the benchmark's API user to a fresh home (run with the tree's code)."""


def _dedalo(action: str, options: Mapping[str, object], dd_api: str = "dd_mcp_api") -> bytes:
    return json.dumps({"action": action, "dd_api": dd_api, "options": options}).encode()


def _vectors(home: Path) -> int:
    """Vectors committed so far in the fresh home's demo archive (0 before it exists)."""
    db = home / "archives" / "demo" / "archive.db"
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return int(conn.execute("SELECT count(*) FROM index_vectors").fetchone()[0])
    except sqlite3.Error:  # not created yet
        return 0


def child_cpu(pid: int) -> dict[int, tuple[str, float]]:
    """Each descendant of ``pid``: ``llm`` (it maps llama.cpp) or ``embed``, and its CPU
    seconds so far (user + system)."""
    import psutil  # type: ignore[import-untyped]

    found: dict[int, tuple[str, float]] = {}
    for child in psutil.Process(pid).children(recursive=True):
        try:
            maps = " ".join(m.path for m in child.memory_maps())
            times = child.cpu_times()
        except psutil.Error:
            continue
        found[child.pid] = ("llm" if "llama" in maps else "embed", times.user + times.system)
    return found


def cpu_between(
    before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]]
) -> dict[str, float]:
    """CPU seconds each kind of child used between two :func:`child_cpu` snapshots."""
    used = {"embed": 0.0, "llm": 0.0}
    for pid, (kind, seconds) in after.items():
        used[kind] += seconds - before.get(pid, (kind, 0.0))[1]
    return used


def question_while_indexing(tree: Path, *, yielding: bool) -> dict[str, float]:
    """The first question on a fresh ``arxiu serve`` while it indexes the demo: seconds from
    server start to listening and to the first committed vectors, then from the question to
    its search result and first token; ``index_done_before_token`` is 1.0 when indexing had
    already finished by the first token (the figure then does not measure sharing);
    ``q.embed_cpu_to_token`` and ``q.llm_cpu_to_token`` are the CPU seconds the embedding
    child and the local model's child used from the question to its first token (on a
    machine loaded by other work, the CPU the embedding child took is the steadier sign of
    sharing than the wall time)."""
    import httpx

    with tempfile.TemporaryDirectory(prefix="arxiu-home-", dir="/tmp") as work:
        home = Path(work)
        env = env_for(tree, str(home)) | {"ARXIU_INDEX_YIELD": "1" if yielding else "0"}
        env.pop("ARXIU_EMBEDDING_MODEL", None)  # the bundled models, as on a first start
        subprocess.run(
            [sys.executable, "-c", ADD_USER, str(home / "api_users.json")], env=env, cwd=tree,
            check=True, capture_output=True,
        )  # fmt: skip
        log = home / "serve.log"
        started = time.perf_counter()
        with log.open("w") as errors:
            process = subprocess.Popen(
                [sys.executable, "-m", "app", "serve", "--port", "0"], stdout=subprocess.PIPE,
                stderr=errors, text=True, env=env, cwd=tree,
            )  # fmt: skip
        marks: dict[str, float] = {}
        try:
            assert process.stdout is not None
            api = process.stdout.readline().split(" at ", 1)[1].strip()
            marks["listening"] = time.perf_counter() - started
            while _vectors(home) == 0:  # the indexer has loaded a model and embeds
                if process.poll() is not None or time.perf_counter() - started > 900:
                    raise SystemExit(f"no vectors: {log.read_text()[-2000:]}")
                time.sleep(0.2)
            marks["first_vectors"] = time.perf_counter() - started
            with httpx.Client(timeout=900) as http:
                headers = _login(http, api)
                cpu = child_cpu(process.pid)
                asked = time.perf_counter()
                content = _dedalo("agent_chat_stream", {"question": QUESTION})
                with http.stream("POST", api, content=content, headers=headers) as stream:
                    for line in stream.iter_lines():
                        now = time.perf_counter() - asked
                        if line == "event: tool_result":
                            marks.setdefault("q.search", now)
                        first = "q.search" in marks and "q.first_token" not in marks
                        if line == "event: text" and first:
                            marks["q.first_token"] = now
                            used = cpu_between(cpu, child_cpu(process.pid))
                            marks["q.embed_cpu_to_token"] = used["embed"]
                            marks["q.llm_cpu_to_token"] = used["llm"]
                            done = "index up to date" in log.read_text()
                            marks["index_done_before_token"] = float(done)
                marks["q.end"] = time.perf_counter() - asked
        finally:
            process.kill()
            process.wait()
        return marks


def warm_serve_question(
    tree: Path,
    questions: tuple[str, ...] = (QUESTION, QUESTION, "What do the interviews say about mills?"),
) -> list[dict[str, float]]:
    """First token on a warm ``arxiu serve`` (issue 25): the server on a copy of ``ARXIU_HOME``
    (its demo indexed: ``arxiu index`` once), asked ``questions`` in turn over the API
    (``agent_chat_stream``, a new conversation each) once its index is up to date; per ask,
    seconds from the question to its search result (``search``) and first token
    (``first_token``), their gap (``after_search``), the end, and the local model's prompt and
    cached tokens from the final frame. Every ask after the first is warm (models loaded); the
    second asks the first question again (its whole prompt in the local model's KV cache), the
    third another one (only the prompt's shared prefix cached)."""
    import shutil

    import httpx

    source = os.environ.get("ARXIU_HOME")
    if not source:
        raise SystemExit("warm serve: ARXIU_HOME must name a home with an indexed demo")
    found: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="arxiu-warm-", dir="/tmp") as work:
        home = Path(work) / "home"
        shutil.copytree(source, home)
        env = env_for(tree, str(home))
        subprocess.run(
            [sys.executable, "-c", ADD_USER, str(home / "api_users.json")], env=env, cwd=tree,
            check=True, capture_output=True,
        )  # fmt: skip
        log = home / "serve.log"
        with log.open("w") as errors:
            process = subprocess.Popen(
                [sys.executable, "-m", "app", "serve", "--port", "0"], stdout=subprocess.PIPE,
                stderr=errors, text=True, env=env, cwd=tree,
            )  # fmt: skip
        try:
            assert process.stdout is not None
            api = process.stdout.readline().split(" at ", 1)[1].strip()
            deadline = time.monotonic() + 900
            while "index up to date" not in log.read_text():
                if process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"warm serve: no index: {log.read_text()[-2000:]}")
                time.sleep(0.2)
            with httpx.Client(timeout=900) as http:
                headers = _login(http, api)
                for question in questions:
                    marks: dict[str, float] = {}
                    content = _dedalo("agent_chat_stream", {"question": question})
                    event = ""
                    asked = time.perf_counter()
                    with http.stream("POST", api, content=content, headers=headers) as stream:
                        for line in stream.iter_lines():
                            now = time.perf_counter() - asked
                            if line.startswith("event: "):
                                event = line[7:]
                                if event == "tool_result":
                                    marks.setdefault("search", now)
                                if event == "text" and "search" in marks:
                                    marks.setdefault("first_token", now)
                            elif line.startswith("data: ") and event == "final":
                                usage = json.loads(line[6:]).get("usage", {})
                                for key in ("input_tokens", "cached_tokens"):
                                    marks[key] = float(usage.get(key, -1))
                    marks["end"] = time.perf_counter() - asked
                    if "first_token" in marks:
                        marks["after_search"] = marks["first_token"] - marks["search"]
                    found.append(marks)
        finally:
            process.kill()
            process.wait()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, action="append", default=[], help="another tree")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-serve", action="store_true", help="skip arxiu serve")
    parser.add_argument("--no-ask", action="store_true", help="skip arxiu ask")
    parser.add_argument("--no-search", action="store_true", help="skip arxiu search")
    parser.add_argument(
        "--no-yield-ab",
        action="store_true",
        help="skip the first question while indexing (yielding on and off)",
    )
    parser.add_argument(
        "--only-yield-ab", action="store_true", help="run only the question while indexing"
    )
    parser.add_argument(
        "--search-archive",
        type=Path,
        help="also a cold arxiu search on this indexed archive folder (such as a Tate import)",
    )
    parser.add_argument(
        "--search-query", default="landscape with a river at sunset", help="its query"
    )
    args = parser.parse_args()
    if args.only_yield_ab:
        args.no_ask = args.no_search = args.no_serve = True
    print("load average:", " ".join(f"{v:.2f}" for v in os.getloadavg()), flush=True)
    trees = [REPO, *args.tree]
    runs: dict[Path, list[dict[str, float]]] = {tree: [] for tree in trees}
    for _ in range(args.repeats):
        for tree in trees:
            marks: dict[str, float] = {} if args.no_ask else ask_split(tree)
            if not args.no_ask:
                marks["model_load"] = model_load(tree)
            if not args.no_search:
                marks |= cli_search(tree)
            if args.search_archive is not None:
                marks |= cli_search(tree, args.search_query, args.search_archive, "archive")
            if not args.no_serve:
                marks["serve_listening"] = serve_listening(tree)
            if not args.no_yield_ab:
                for yielding in (True, False):
                    found = question_while_indexing(tree, yielding=yielding)
                    name = "yield_on" if yielding else "yield_off"
                    marks |= {f"{name}.{key}": value for key, value in found.items()}
                    print(f"  {name}: load average", *os.getloadavg(), flush=True)
            runs[tree].append(marks)
            print(tree, {k: round(v, 2) for k, v in marks.items()}, flush=True)
    for tree, tree_runs in runs.items():
        print(f"{tree} (medians of {len(tree_runs)}, seconds from process start):")
        for key in tree_runs[0]:
            values = [m[key] for m in tree_runs if key in m]
            print(f"  {key:36} {statistics.median(values):7.2f}")
    if not args.no_serve:
        print("warm arxiu serve: a question, it again, another; load average", *os.getloadavg())
        for n, marks in enumerate(warm_serve_question(REPO), 1):
            print(f"  ask {n}:", {key: round(value, 3) for key, value in marks.items()})


def _login(http: httpx.Client, api: str) -> dict[str, str]:
    """Log the benchmark's user in; the headers of its later requests."""
    login = {"username": "bench", "auth": "bench-pw"}
    response = http.post(api, content=_dedalo("login", login, "dd_utils_api"))
    response.raise_for_status()
    return {
        "Content-Type": "application/json",
        "X-Dedalo-Csrf-Token": str(response.json()["csrf_token"]),
    }


if __name__ == "__main__":
    main()
