"""Local model servers on this computer: Ollama, LM Studio, llama.cpp's server, Jan.

Only loopback addresses are ever asked (a spec naming another host is refused), each with a
short timeout and no proxy, all at once; a port where nothing listens costs a refused
connection. Models are read from the native lists where they say more (Ollama's ``/api/tags``
and ``/api/show``, LM Studio's ``/api/v0/models``), else from the OpenAI-compatible
``/v1/models``.
"""

from __future__ import annotations

import ipaddress
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported when a probe runs: a scan without servers does not pay for it
    import httpx

DEFAULT_TIMEOUT_S = 0.5
MAX_MODELS = 50
NOT_CHAT_TYPES = frozenset({"embeddings", "embedding"})


@dataclass(frozen=True)
class ServerSpec:
    """A server to look for: which app, on which loopback port."""

    app: str
    port: int
    host: str = "127.0.0.1"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://{self.host}:{self.port}"


KNOWN_SERVERS = (
    ServerSpec("ollama", 11434),
    ServerSpec("lmstudio", 1234),
    ServerSpec("llamacpp", 8080),
    ServerSpec("jan", 1337),
)
SERVER_LABELS = {
    "ollama": "Ollama server",
    "lmstudio": "LM Studio server",
    "llamacpp": "llama.cpp server",
    "jan": "Jan server",
}


@dataclass(frozen=True)
class ServerModel:
    """A model a local server offers."""

    app: str
    endpoint: str
    model: str
    architecture: str | None = None
    quantisation: str | None = None
    context_length: int | None = None
    parameters_label: str | None = None
    supports_tools: bool | None = None
    """``None``: the server does not say."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this computer (``localhost`` or a loopback address)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _get(client: httpx.Client, url: str) -> Any:
    response = client.get(url)
    response.raise_for_status()
    return response.json()


def _ollama(client: httpx.Client, spec: ServerSpec) -> list[ServerModel]:
    import httpx

    tags = _get(client, f"{spec.base_url}/api/tags")
    out = []
    for item in (tags.get("models") or [])[:MAX_MODELS]:
        name = str(item.get("name") or item.get("model") or "")
        if not name:
            continue
        details = item.get("details") or {}
        show: dict[str, Any] = {}
        try:
            reply = client.post(f"{spec.base_url}/api/show", json={"model": name})
            show = reply.json() if reply.status_code == 200 else {}
        except (httpx.HTTPError, ValueError):
            show = {}
        info = show.get("model_info") or {}
        arch = info.get("general.architecture") or details.get("family")
        context = info.get(f"{arch}.context_length") if arch else None
        capabilities = show.get("capabilities")
        out.append(
            ServerModel(
                app=spec.app,
                endpoint=f"{spec.base_url}/v1",
                model=name,
                architecture=str(arch) if arch else None,
                quantisation=details.get("quantization_level"),
                context_length=int(context) if isinstance(context, int) else None,
                parameters_label=details.get("parameter_size"),
                supports_tools=("tools" in capabilities)
                if isinstance(capabilities, list)
                else None,
            )
        )
    return out


def _lmstudio(client: httpx.Client, spec: ServerSpec) -> list[ServerModel] | None:
    import httpx

    try:
        data = _get(client, f"{spec.base_url}/api/v0/models")
    except (httpx.HTTPError, ValueError):
        return None
    out = []
    for item in (data.get("data") or [])[:MAX_MODELS]:
        if item.get("type") in NOT_CHAT_TYPES or not item.get("id"):
            continue
        capabilities = item.get("capabilities")
        context = item.get("max_context_length")
        out.append(
            ServerModel(
                app=spec.app,
                endpoint=f"{spec.base_url}/v1",
                model=str(item["id"]),
                architecture=item.get("arch"),
                quantisation=item.get("quantization"),
                context_length=int(context) if isinstance(context, int) else None,
                supports_tools=("tool_use" in capabilities)
                if isinstance(capabilities, list)
                else None,
            )
        )
    return out


def _openai(client: httpx.Client, spec: ServerSpec) -> list[ServerModel]:
    data = _get(client, f"{spec.base_url}/v1/models")
    items = data.get("data") or data.get("models") or []
    out = []
    for item in items[:MAX_MODELS]:
        model = item.get("id") or item.get("name") or item.get("model")
        if model and item.get("type") not in NOT_CHAT_TYPES:
            out.append(ServerModel(app=spec.app, endpoint=f"{spec.base_url}/v1", model=str(model)))
    return out


def probe(spec: ServerSpec, timeout_s: float = DEFAULT_TIMEOUT_S) -> list[ServerModel]:
    """The models the server ``spec`` offers (``[]`` when nothing answers like one there).

    Raises:
        ValueError: ``spec`` names a host that is not this computer.
    """
    if not is_loopback(spec.host):
        raise ValueError(f"{spec.host} is not a loopback address")
    import httpx

    timeout = httpx.Timeout(timeout_s, connect=min(timeout_s, 0.25))
    try:
        with httpx.Client(timeout=timeout, trust_env=False, follow_redirects=False) as client:
            if spec.app == "ollama":
                return _ollama(client, spec)
            native = _lmstudio(client, spec) if spec.app == "lmstudio" else None
            return native if native is not None else _openai(client, spec)
    except (httpx.HTTPError, ValueError, AttributeError, TypeError):
        return []


def probe_servers(
    specs: tuple[ServerSpec, ...] = KNOWN_SERVERS, timeout_s: float = DEFAULT_TIMEOUT_S
) -> list[ServerModel]:
    """Ask every server in ``specs`` at once; the models of those that answered, in order."""
    if not specs:
        return []
    with ThreadPoolExecutor(len(specs), thread_name_prefix="arxiu-probe") as pool:
        results = list(pool.map(lambda spec: probe(spec, timeout_s), specs))
    return [model for models in results for model in models]
