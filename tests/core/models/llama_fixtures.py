"""Session fixtures around the bundled GGUF: one loaded local model, real llama.cpp servers."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from app.core.models.catalog import builtin_local
from app.core.models.gguf import bundled_gguf
from app.core.models.local_llama import LocalLlamaModel

PROBE = (
    "import sys\nfrom llama_cpp import Llama\n"
    "llm = Llama(sys.argv[1], n_ctx=256, verbose=False)\n"
    "llm.eval(llm.tokenize(b'one two three four five six'))\n"
)
SAFE_LAUNCH = (
    "import runpy, sys\n"
    "from app.core.models.local_worker import disable_extra_buffers\n"
    "disable_extra_buffers()\n"
    "sys.argv = ['llama_cpp.server', *sys.argv[1:]]\n"
    "runpy.run_module('llama_cpp.server', run_name='__main__', alter_sys=True)\n"
)
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def local_model() -> Iterator[LocalLlamaModel]:
    """The bundled SmolLM2 model, loaded once for the whole session."""
    model = LocalLlamaModel(builtin_local())
    yield model
    asyncio.run(model.aclose())


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


_PROBED: list[bool] = []


def default_kernels_work() -> bool:
    """Whether llama.cpp's default CPU kernels run here (some VMs trap on AMX: SIGILL)."""
    if not _PROBED:
        probe = [sys.executable, "-c", PROBE, str(bundled_gguf())]
        _PROBED.append(subprocess.run(probe, capture_output=True, timeout=120).returncode == 0)
    return _PROBED[0]


@dataclass
class LlamaServer:
    """A running ``python -m llama_cpp.server`` on 127.0.0.1."""

    process: subprocess.Popen[bytes]
    base_url: str
    log: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)


def start_server(log: Path) -> LlamaServer:
    """Start the server with the bundled GGUF and wait until it answers."""
    port = _free_port()
    args = ["--model", str(bundled_gguf()), "--host", "127.0.0.1", "--port", str(port)]
    args += ["--n_ctx", "2048"]
    if default_kernels_work():
        command = [sys.executable, "-m", "llama_cpp.server", *args]
    else:  # same module, started with llama.cpp's extra weight buffers off
        command = [sys.executable, "-c", SAFE_LAUNCH, *args]
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=REPO)
    server = LlamaServer(process, f"http://127.0.0.1:{port}/v1", log)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"llama_cpp.server exited: {log.read_text(errors='replace')[-2000:]}")
        try:
            if httpx.get(server.base_url + "/models", timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            time.sleep(0.2)
    server.stop()
    pytest.fail("llama_cpp.server did not become ready")


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """One real llama.cpp server for the session."""
    server = start_server(tmp_path_factory.mktemp("llama-server") / "server.log")
    yield server
    server.stop()
