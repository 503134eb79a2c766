"""``arxiu mcp``'s start line on stderr is in the CLI's language (stdout carries the protocol
only, and stays as it is)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.api.mcp_tools import ExternalToolbox
from app.cli import main
from app.commands.mcp_cmd import started_line

STARTED = {
    "ca": (
        "arxiu mcp: {n} eines de només lectura sobre {where} (només en surt l'estructura) per "
        "stdio",
        "arxiu mcp: 12 eines de només lectura sobre /a (només en surt el contingut dels "
        "registres (mai els restringits)) per stdio",
    ),
    "es": (
        "arxiu mcp: {n} herramientas de solo lectura sobre {where} (solo sale la estructura) por "
        "stdio",
        "arxiu mcp: 12 herramientas de solo lectura sobre /a (solo sale el contenido de los "
        "registros (nunca los restringidos)) por stdio",
    ),
    "en": (
        "arxiu mcp: {n} read-only tools over {where} (structure only leaves) on stdio",
        "arxiu mcp: 12 read-only tools over /a (record content (never restricted) only leaves) "
        "on stdio",
    ),
}


@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_the_start_line_is_in_the_language(
    demo_archive_dir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    lang: str,
) -> None:
    """The real command over the demo archive, its stdio server replaced by one that returns
    at once: the line names the tools offered and the archive as the other commands show it."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    served: list[ExternalToolbox] = []

    async def serve(toolbox: ExternalToolbox) -> None:
        served.append(toolbox)

    monkeypatch.setattr("app.api.mcp_server.serve_stdio", serve)
    assert main(["mcp", "--archive", str(demo_archive_dir)]) == 0
    captured = capsys.readouterr()
    (toolbox,) = served
    structure, content = STARTED[lang]
    tools = len(toolbox.offered())
    assert captured.out == ""
    assert captured.err.splitlines() == [structure.format(n=tools, where=demo_archive_dir)]
    assert started_line(12, "/a", True) == content
