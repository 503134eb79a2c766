"""``arxiu ask`` with the real bundled model (SmolLM2 via llama.cpp) and the real MiniLM index."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app.cli import main
from app.core.archive import RecordKey, open_archive
from tests.core.agent.conftest import build_archive

pytestmark = pytest.mark.slow

QUESTION = "find interviews about people who had to leave their homes when the reservoir was built"


def archive_folder(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A copy of the demo archive (when its fixture exists), else the agent tests' archive."""
    try:
        demo = Path(request.getfixturevalue("demo_archive_dir"))
        return Path(shutil.copytree(demo, tmp_path / "demo"))
    except pytest.FixtureLookupError:
        build_archive(tmp_path / "oh").close()
        return tmp_path / "oh"


def test_ask_streams_an_answer_citing_records_the_search_returned(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("llama_cpp")
    pytest.importorskip("sentence_transformers")
    monkeypatch.delenv("ARXIU_EMBEDDING_MODEL", raising=False)
    folder = archive_folder(request, tmp_path)
    code = main(["ask", QUESTION, "--json-events", "--archive", str(folder)])
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    names = [e["event"] for e in events]
    assert code == 0, events[-1]
    assert names[:3] == ["start", "tool_use", "tool_result"] and names[-1] == "final"
    assert events[0]["data"] == {"model": "local", "mode": "read", "egress": "local"}
    assert "text" in names
    final = events[-1]["data"]
    assert final["answer"] == "".join(e["data"]["delta"] for e in events if e["event"] == "text")
    cited = [line[2:] for line in final["answer"].split("\n\nSources:\n")[1].splitlines()]
    verified = {c["key"]: c for c in final["citations"] if c["verified"]}
    assert cited
    with open_archive(folder) as archive:
        for line in cited:
            label, key = line[:-1].rsplit(" (", 1)
            assert key in verified, f"{line} is listed as a source but is not verified"
            tipo, sid = key.split("/")
            assert label == archive.record_label(RecordKey(tipo, int(sid)))
