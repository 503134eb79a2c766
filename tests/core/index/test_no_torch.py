"""Indexing and searching need no torch, transformers nor sentence-transformers (the bundle ships
none of them): the CLI runs with the three made unimportable, as ``.ci/run`` blocks PySide6, and
finds what torch's own MiniLM finds. Slow: the real MiniLM (ONNX Runtime) and USE models."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.archive import Field, Section, open_archive
from app.core.index.embedders import bundled_model_path

REPO = Path(__file__).resolve().parents[3]
BLOCKED = ("torch", "sentence_transformers", "transformers")
QUERY = "families forced to leave when the dam flooded the valley"
TEXTS = [
    ("Leaving the valley", "They made us leave our houses when the reservoir flooded the village."),
    ("Festa major", "La festa major del poble tenia sardanes i castells a la plaça."),
    ("The new school", "The teacher taught us to read with an old book by the stove."),
    ("Market day", "Every Saturday we sold eggs and cheese at the market in town."),
    ("Expropriated", "They expropriated the farm to build the dam; we started again far away."),
]

pytestmark = pytest.mark.slow


def blocker(folder: Path) -> Path:
    """A folder of stand-ins for the torch stack whose import raises ``ImportError``."""
    for name in BLOCKED:
        (folder / name).mkdir(parents=True)
        (folder / name / "__init__.py").write_text(f"raise ImportError('{name} is blocked')\n")
    return folder


def arxiu(args: list[str], home: Path, blocked: Path | None, **env: str) -> str:
    """Run ``python -m app ARGS`` on ``home``; its stdout (the test fails on a non-zero exit)."""
    path = os.pathsep.join(str(p) for p in (blocked, REPO) if p is not None)
    environment = {**os.environ, "PYTHONPATH": path, "ARXIU_HOME": str(home), **env}
    done = subprocess.run(
        [sys.executable, "-m", "app", *args], capture_output=True, text=True, cwd=REPO,
        env=environment, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def make_archive(folder: Path) -> None:
    archive = open_archive(folder, create=True)
    archive.put_section(Section("oh1", {"lg-eng": "Interviews"}, label_field="oh2"))
    archive.put_field(Field("oh2", "oh1", {"lg-eng": "Title"}, "text", True, position=1))
    archive.put_field(Field("oh3", "oh1", {"lg-eng": "Text"}, "text", True, position=2))
    for title, body in TEXTS:
        archive.create_record(
            "oh1",
            {
                "oh2": [{"lang": "lg-eng", "value": title}],
                "oh3": [{"lang": "lg-eng", "value": body}],
            },
        )
    archive.close()


def key(hit: dict[str, object]) -> str:
    return f"{hit['section_tipo']}/{hit['section_id']}"


def ranked(output: str) -> list[tuple[str, float]]:
    """Each passage of ``--chunks --json`` as record/field, with its score."""
    return [(f"{key(hit)}/{hit['field']}", float(hit["score"])) for hit in json.loads(output)]


def test_index_and_search_run_without_torch_and_find_what_torch_finds(tmp_path: Path) -> None:
    folder, home = tmp_path / "archive", tmp_path / "home"
    make_archive(folder)
    blocked = blocker(tmp_path / "blocked")
    arxiu(["index", "--archive", str(folder)], home, blocked)
    assert list((home / "cache" / "onnx").glob("*.onnx")), "the graph was not built without torch"
    search = ["search", QUERY, "--archive", str(folder), "--json", "--mode", "dense", "--chunks"]
    without = ranked(arxiu(search, home, blocked))
    with_torch = ranked(arxiu(search, home, None, ARXIU_EMBEDDING_BACKEND="torch"))
    assert [key for key, _ in without] == [key for key, _ in with_torch]
    assert without[0][0].rsplit("/", 1)[0] in ("oh1/1", "oh1/5")
    for (_, ours), (_, theirs) in zip(without, with_torch, strict=True):
        assert ours == pytest.approx(theirs, abs=1e-4)
    hybrid = json.loads(arxiu(["search", QUERY, "--archive", str(folder), "--json"], home, blocked))
    assert {key(hit) for hit in hybrid[:2]} == {"oh1/1", "oh1/5"}


def test_a_folder_only_torch_can_run_gives_a_coded_error_without_it(tmp_path: Path) -> None:
    folder = tmp_path / "cls-minilm"
    shutil.copytree(bundled_model_path(), folder)
    pooling = folder / "1_Pooling" / "config.json"
    config = json.loads(pooling.read_text(encoding="utf-8"))
    config.update(pooling_mode_mean_tokens=False, pooling_mode_cls_token=True)
    pooling.write_text(json.dumps(config), encoding="utf-8")
    code = (
        "import sys\n"
        "from app.core.errors import IndexError_\n"
        "from app.core.index.embedders import SentenceTransformerEmbedder\n"
        "try:\n"
        "    SentenceTransformerEmbedder(sys.argv[1]).embed(['x'])\n"
        "except IndexError_ as error:\n"
        "    print(error.code)\n"
    )
    blocked = blocker(tmp_path / "blocked")
    environment = {**os.environ, "PYTHONPATH": f"{blocked}{os.pathsep}{REPO}"}
    environment["ARXIU_HOME"] = str(tmp_path / "home")
    done = subprocess.run(
        [sys.executable, "-c", code, str(folder)], capture_output=True, text=True, cwd=REPO,
        env=environment, timeout=300,
    )  # fmt: skip
    assert done.stdout.strip() == "index.model_load_failed", done.stderr[-2000:]
