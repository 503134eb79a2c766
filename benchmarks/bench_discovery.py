"""Discovery speed: a fake home with 10,000 unrelated files and a few models in the apps' folders.

Prints the time :func:`app.core.models.discovery.discover` takes (no servers asked) in a fresh
process (imports included) and warm, against a raw ``os.walk`` of the same folders (the floor
for merely listing them), and the time to read the facts of the bundled SmolLM2 GGUF against
``gguf.GGUFReader`` (the ``gguf`` package's own reader) on the same file. Goal: < 2 s.

Run: ``python benchmarks/bench_discovery.py [--files 10000]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.models.discovery import discover
from app.core.models.gguf import bundled_gguf
from app.core.models.gguf_facts import read_facts
from tests.core.models.gguf_files import ollama_model, place, write_gguf

COLD = (
    "import sys, time; sys.path.insert(0, sys.argv[2]); t = time.perf_counter()\n"
    "from pathlib import Path\nfrom app.core.models.discovery import discover\n"
    "i = time.perf_counter()\n"
    "r = discover(home=Path(sys.argv[1]), env={}, folders=[], servers=())\n"
    "print(time.perf_counter() - t, i - t, len(r.models))\n"
)


def build_home(home: Path, files: int) -> None:
    """Models in LM Studio, Ollama and the HF cache, and ``files`` unrelated files among them."""
    smol = bundled_gguf()
    place(smol, home / ".lmstudio/models/HuggingFaceTB/SmolLM2/SmolLM2-135M-Instruct.Q4_1.gguf")
    ollama_model(home / ".ollama/models", "smollm2", "135m", smol)
    write_gguf(home / ".cache/huggingface/hub/models--Qwen--Qwen2.5-GGUF/snapshots/a/q.gguf")
    roots = [home / ".lmstudio/models", home / ".cache/huggingface/hub", home / "jan/models"]
    for number in range(files):
        folder = roots[number % 3] / f"pack{number // 300}" / f"sub{number % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"notes-{number}.txt").write_bytes(b"x")


def raw_walk(home: Path) -> int:
    count = 0
    for top in (".lmstudio/models", ".cache/huggingface/hub", "jan/models", ".ollama/models"):
        for _folder, dirs, names in os.walk(home / top):
            count += len(dirs) + len(names)
    return count


def timed(fn: object, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="arxiu-bench-home-"))
    try:
        build_home(home, args.files)
        repo = str(Path(__file__).resolve().parents[1])
        cold = subprocess.run(
            [sys.executable, "-c", COLD, str(home), repo],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        result = discover(home=home, env={}, folders=[], servers=())
        warm = timed(lambda: discover(home=home, env={}, folders=[], servers=()))
        walk = timed(lambda: raw_walk(home))
        print(
            f"home with {args.files} unrelated files: {len(result.models)} models found, "
            f"{result.entries_seen} entries looked at, complete={result.complete}"
        )
        total, imports = float(cold[0]), float(cold[1])
        print(
            f"discover, fresh process: {total:.3f} s (goal < 2 s), of which imports "
            f"{imports:.3f} s and the scan {total - imports:.3f} s"
        )
        print(
            f"discover, warm: {warm:.3f} s; raw os.walk of the same folders: {walk:.3f} s "
            f"({warm / walk:.1f}x, discover also reads each model's header)"
        )
        import gguf

        smol = bundled_gguf()
        ours = timed(lambda: read_facts(smol))
        theirs = timed(lambda: gguf.GGUFReader(smol), runs=1)
        print(
            f"facts of SmolLM2-135M: {ours * 1000:.1f} ms; gguf.GGUFReader: "
            f"{theirs * 1000:.0f} ms ({theirs / ours:.0f}x slower)"
        )
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
