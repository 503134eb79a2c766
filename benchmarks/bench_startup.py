"""Start-up to a shown window: the frozen bundle next to the source install, in one run.

Usage::

    python benchmarks/bench_startup.py [--bundle build/pyinstaller/dist/arxiu/arxiu] [--runs 5]

Both start ``arxiu`` (no command: the desktop app) on the same demo archive, offscreen, with the
same fresh ``ARXIU_HOME``; the clock runs from spawning the process to the line
``main window shown`` in ``arxiu.log`` (logged once the window is shown and the loop has turned
once), then the process is stopped. Runs alternate source and bundle so that machine load hits
both alike. The first run of each is reported apart: it is the coldest (nothing of it in the page
cache yet unless run before); the median and best are over all runs.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_BUNDLE = REPO / "build" / "pyinstaller" / "dist" / "arxiu" / "arxiu"
SHOWN = "main window shown"
TIMEOUT_S = 300.0


def environment(home: Path) -> dict[str, str]:
    """The environment both variants start in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARXIU_", "PYTHON"))}
    env.update(ARXIU_HOME=str(home), QT_QPA_PLATFORM="offscreen", HF_HUB_OFFLINE="1")
    return env


def time_to_window(command: list[str], home: Path) -> float:
    """Seconds from spawning ``command`` until it logs that its window is shown."""
    log = home / "arxiu.log"
    log.unlink(missing_ok=True)
    start = time.perf_counter()
    process = subprocess.Popen(
        command,
        env=environment(home),
        cwd=home,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        while time.perf_counter() - start < TIMEOUT_S:
            if log.exists() and SHOWN in log.read_text(encoding="utf-8", errors="replace"):
                return time.perf_counter() - start
            if process.poll() is not None:
                raise RuntimeError(f"{command[0]} exited with {process.returncode} before showing")
            time.sleep(0.02)
        raise RuntimeError(f"{command[0]}: no window after {TIMEOUT_S:.0f} s")
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def prepare_home(root: Path) -> Path:
    """A fresh ``ARXIU_HOME`` holding the demo archive (made once, outside the timings)."""
    home = root / "home"
    home.mkdir()
    subprocess.run(
        [sys.executable, "-m", "app", "archive", "info"],
        env=environment(home),
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return home


def report(name: str, times: list[float]) -> str:
    """One row: first run, median, best."""
    return (
        f"{name:<22} first {times[0]:6.2f} s   median {statistics.median(times):6.2f} s   "
        f"best {min(times):6.2f} s   ({len(times)} runs)"
    )


def main() -> int:
    """Time both variants alternately and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=Path, default=DEFAULT_BUNDLE)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if not args.bundle.is_file():
        print(f"no bundle at {args.bundle}: run packaging/build-linux.sh first", file=sys.stderr)
        return 2
    variants = {
        "source (python -m app)": [sys.executable, "-m", "app"],
        "bundle (arxiu/arxiu)": [str(args.bundle)],
    }
    load = os.getloadavg()[0]
    print(f"start-up to a shown window, offscreen; {os.cpu_count()} CPUs, load {load:.1f}")
    with tempfile.TemporaryDirectory(prefix="arxiu-bench-startup-") as tmp:
        home = prepare_home(Path(tmp))
        times: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(args.runs):
            for name, command in variants.items():
                times[name].append(time_to_window(command, home))
    for name, values in times.items():
        print(report(name, values))
    source, bundle = (statistics.median(v) for v in times.values())
    print(f"bundle / source (median): {bundle / source:.2f}x")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
