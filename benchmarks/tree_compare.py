"""The local model before and after a change, side by side: ``bench_models.py --compare-tree``.

Each run starts one fresh Python process per tree (:mod:`model_side`, with ``PYTHONPATH`` set to
that tree's root, so its ``app`` and the worker it spawns come from there) on the same grounded
prompt (:mod:`grounded_prompt`, built once here), alternating which tree goes first, so load from
elsewhere on the machine falls on both alike. Printed per figure: each tree's median with its
spread (lowest–highest), and after/before — of the medians, and the median of the per-run
ratios (each run's two processes ran back to back).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SIDE = Path(__file__).resolve().with_name("model_side.py")
HERE = Path(__file__).resolve().parents[1]
EVICT = [
    ("system", "You are a helpful assistant."),
    ("user", "List three colours of autumn leaves, then name a bird that migrates."),
]
LONG = " ".join(f"Record {i} describes a letter from the mayor." for i in range(200))
STORY = [("user", "Write a long story about a village archive and its flood.")]
ORDERS = (("before", "after"), ("after", "before"))
"""Who goes first in even and odd runs."""
FIGURES = {
    "fresh_ttft": ("fresh TTFT (spawn+load+prompt)", "s", 1.0),
    "cold_ttft": ("cold TTFT (loaded, uncached)", "ms", 1000.0),
    "warm_ttft": ("warm TTFT (prefix cached)", "ms", 1000.0),
    "ms_per_piece": ("per-token time", "ms", 1.0),
    "tokens_per_s": ("tokens/s", "", 1.0),
    "stop_prompt": ("Stop → end, reading prompt", "ms", 1000.0),
    "stop_reply": ("Stop → end, sampling", "ms", 1000.0),
}


def side(tree: Path, request: dict[str, Any]) -> dict[str, Any]:
    """Run :mod:`model_side` with ``tree`` first on ``PYTHONPATH``; its parsed result."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, str(SIDE)],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        env=env,
        cwd=tree,
        check=True,
        timeout=600,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if not Path(result["app"]).resolve().is_relative_to(tree.resolve()):
        raise SystemExit(f"{tree}: app was imported from {result['app']}")
    return result


def per_run(result: dict[str, Any]) -> dict[str, float]:
    """One process's figures: the medians of its replies."""
    ms = statistics.median(result["ms_per_piece"])
    return {
        "fresh_ttft": result["fresh_ttft"],
        "cold_ttft": statistics.median(result["cold_ttft"]),
        "warm_ttft": statistics.median(result["warm_ttft"]),
        "ms_per_piece": ms,
        "tokens_per_s": 1000 / ms if ms else 0.0,
        "stop_prompt": statistics.median(result["stop_prompt"]),
        "stop_reply": statistics.median(result["stop_reply"]),
    }


def compare(
    before: Path, runs: int, warm: int, max_tokens: int, minutes: float | None = None
) -> None:
    """Alternate the two trees up to ``runs`` times and print the table.

    No run starts once ``minutes`` have passed, and Ctrl-C ends the runs early: the table then
    holds the runs finished.
    """
    from benchmarks.grounded_prompt import grounded_prompt

    messages = [(m.role, m.content) for m in grounded_prompt()]
    request = {"messages": messages, "evict": EVICT, "max_tokens": max_tokens, "warm": warm}
    request |= {"long": LONG, "story": STORY}
    trees = {"before": before, "after": HERE}
    figures: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    texts: dict[str, set[str]] = {"before": set(), "after": set()}
    ends = None if minutes is None else time.monotonic() + 60 * minutes
    done = 0
    try:
        while done < runs and (ends is None or time.monotonic() < ends):
            pair = {name: side(trees[name], request) for name in ORDERS[done % 2]}
            for name, result in pair.items():
                figures[name].append(per_run(result))
                texts[name].update(result["texts"])
            done += 1
            print(f"  run {done}/{runs} done", file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        print(f"  interrupted: {done} runs finished", file=sys.stderr)
    if not done:
        return
    print(f"local model side by side: before = {before}, after = {HERE}")
    print(f"  {done} runs, alternating; each run one fresh process per tree: 1 fresh reply,")
    print(f"  then {warm} × (warm reply, evicting prompt, cold reply); grounded prompt, greedy,")
    same = texts["before"] == texts["after"]
    print(f"  up to {max_tokens} tokens; the same reply text on both: {same}")
    report(figures)


def _spread(values: list[float], scale: float) -> str:
    med = statistics.median(values) * scale
    return f"{med:8.2f} [{min(values) * scale:7.2f}–{max(values) * scale:7.2f}]"


def report(figures: dict[str, list[dict[str, float]]]) -> None:
    """Print each figure: before and after (median [lowest–highest]) and after/before."""
    head = "median [lowest–highest]"
    print(f"  {'':32} {'before: ' + head:>33} {'after: ' + head:>33}  after/before")
    print(f"  {'':32} {'':>33} {'':>33}  medians  per-run")
    for key, (label, unit, scale) in FIGURES.items():
        before = [run[key] for run in figures["before"]]
        after = [run[key] for run in figures["after"]]
        ratio = statistics.median(after) / statistics.median(before)
        paired = statistics.median(a / b for a, b in zip(after, before, strict=True))
        name = f"{label} ({unit})" if unit else label
        print(
            f"  {name:32} {_spread(before, scale):>33} {_spread(after, scale):>33}"
            f"  {ratio:7.3f}  {paired:7.3f}"
        )
