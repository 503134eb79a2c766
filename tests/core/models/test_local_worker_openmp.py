"""The worker's OpenMP waiting: a short spin, set before llama.cpp loads, and what it saves.

llama.cpp's threads meet at an OpenMP barrier after every graph node. With libgomp's default
spin, a 2-thread prefill on a machine whose cores are also busy burns its partner's time
slices spinning; :func:`share_the_cores` makes the waiting thread sleep soon. The real test
runs the bundled model in fresh processes (libgomp reads the setting once, when it loads), with
a busy process holding a core, and compares the CPU time of a 2-thread prefill with that of a
1-thread one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.core.models.gguf import bundled_gguf
from app.core.models.local_worker import SPIN_COUNT, share_the_cores
from tests.core.models.llama_fixtures import default_kernels_work

REPO = Path(__file__).resolve().parents[3]
LINUX = sys.platform.startswith("linux")

PREFILL = (
    "import json, os, sys, time\n"
    "def gomp():\n"
    "    return 'libgomp' in open('/proc/self/maps').read()\n"
    "import app.cli\n"
    "from app.core.models import local_worker\n"
    "before = gomp()\n"
    "if sys.argv[2] == 'worker':\n"
    "    local_worker.share_the_cores()\n"
    "if sys.argv[3] == 'safe':\n"
    "    local_worker.disable_extra_buffers()\n"
    "import llama_cpp\n"
    "from llama_cpp import Llama\n"
    "llm = Llama(model_path=sys.argv[1], n_ctx=1024, verbose=False)\n"
    "text = ' '.join(f'Record {i} describes a letter from the mayor.' for i in range(28))\n"
    "tokens = llm.tokenize(text.encode())\n"
    "cpu = {1: [], 2: []}\n"
    "for _ in range(3):\n"
    "    for threads in (2, 1):\n"
    "        llama_cpp.llama_set_n_threads(llm._ctx.ctx, 1, threads)\n"
    "        llm.reset(); llm._ctx.kv_cache_seq_rm(-1, 0, -1)\n"
    "        started = time.process_time(); llm.eval(tokens)\n"
    "        cpu[threads].append(time.process_time() - started)\n"
    "print(json.dumps({'gomp_before': before, 'gomp_after': gomp(), 'tokens': len(tokens),\n"
    "    'spin': os.environ.get('GOMP_SPINCOUNT'), 'cpu1': min(cpu[1]), 'cpu2': min(cpu[2])}))\n"
)
"""A fresh process: the app's imports, the worker's setting (or not), then 2- and 1-thread
prefills of the same ~300 tokens, alternated; prints the least CPU time of each."""


def test_the_short_spin_is_set_unless_the_environment_chose_a_policy() -> None:
    environ: dict[str, str] = {"PATH": "/bin"}
    assert share_the_cores(environ) is True
    assert environ == {"PATH": "/bin", "GOMP_SPINCOUNT": SPIN_COUNT}
    for chosen in ({"OMP_WAIT_POLICY": "ACTIVE"}, {"GOMP_SPINCOUNT": "300000"}):
        kept = dict(chosen)
        assert share_the_cores(kept) is False
        assert kept == chosen  # a person's choice stays as it is


@pytest.fixture
def busy_core() -> Iterator[None]:
    """Another process holding a core for the length of the test."""
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        busy.kill()
        busy.wait()


@dataclass(frozen=True)
class Prefill:
    """What :data:`PREFILL` printed."""

    gomp_before: bool
    gomp_after: bool
    tokens: int
    spin: str | None
    cpu1: float
    cpu2: float

    @property
    def ratio(self) -> float:
        """CPU seconds of the 2-thread prefill over the 1-thread one."""
        return self.cpu2 / self.cpu1


def prefill_cpu(worker: bool) -> Prefill:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env["PYTHONPATH"] = str(REPO)
    kernels = "default" if default_kernels_work() else "safe"
    mode = "worker" if worker else "default"
    out = subprocess.run(
        [sys.executable, "-c", PREFILL, str(bundled_gguf()), mode, kernels],
        capture_output=True, text=True, env=env, cwd=REPO, check=True, timeout=600,
    )  # fmt: skip
    return Prefill(**json.loads(out.stdout.strip().splitlines()[-1]))


@pytest.mark.slow
@pytest.mark.skipif(not LINUX or (os.cpu_count() or 1) < 2, reason="Linux, 2 cores or more")
def test_a_busy_core_costs_the_worker_no_spinning(busy_core: None) -> None:
    """The setting lands before libgomp loads, and with a core taken a 2-thread prefill costs
    about the CPU of a 1-thread one, where libgomp's default spin costs far more."""
    ours = prefill_cpu(worker=True)
    if not ours.gomp_after:
        pytest.skip("this llama.cpp is built without OpenMP")
    assert not ours.gomp_before  # the app's imports load no libgomp before the setting
    assert ours.spin == SPIN_COUNT
    default = prefill_cpu(worker=False)
    assert default.spin is None
    print(
        f"\n{ours.tokens} tokens, 2-thread / 1-thread prefill CPU: worker {ours.ratio:.2f} "
        f"({ours.cpu2:.2f} / {ours.cpu1:.2f} s), libgomp default {default.ratio:.2f} "
        f"({default.cpu2:.2f} / {default.cpu1:.2f} s)"
    )
    assert ours.ratio < 1.5, (ours, default)
    assert ours.ratio < default.ratio, (ours, default)
