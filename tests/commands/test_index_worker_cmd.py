"""``arxiu index --worker --archive postgresql://…`` on the real test server: what it prints in
Catalan, Spanish and English, the archive's own model setting, and a folder refused."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.cli import main
from app.commands.cli_words import CLI_WORDS, counted, number
from app.commands.index_cmd import WORKER_BATCH
from app.core.archive.postgres.connect import connect
from app.core.archive.postgres.transfer import copy_archive
from app.core.index.postgres.worker import BATCH
from tests.core.archive.postgres.conftest import indexed_demo_dir

demo_index_dir = indexed_demo_dir

HASHING = "hashing-256"
"""``--model hashing``'s id: the copied demo has only ``hashing-64`` vectors, so every text
waits for this model."""
SENTENCE = {
    "en": r"^([\d,]+) texts? embedded in [\d,]+\.\d s \([\d,]+\.\d a second\), ([\d,]+) "
    r"batch(?:es)?; per model:$",
    "ca": r"^([\d.]+) text(?:os)? incrustats? en [\d.]+,\d s \([\d.]+,\d per segon\), "
    r"([\d.]+) lots?; per model:$",
    "es": r"^([\d.]+) textos? incrustados? en [\d.]+,\d s \([\d.]+,\d por segundo\), "
    r"([\d.]+) lotes?; por modelo:$",
}
"""The worker's sentence, each count in either form (:func:`_run` checks the one that agrees),
numbers with the language's separators (``1.128`` in Catalan, ``1128`` in Spanish, ``0,3`` in
both)."""


def _texts(url: str, model: str) -> tuple[int, int]:
    """The archive's distinct chunk texts, and the vectors ``model`` has."""
    with connect(url) as conn:
        texts = conn.execute("SELECT count(DISTINCT content_hash) FROM index_chunks").fetchone()
        vectors = conn.execute(
            "SELECT count(*) FROM index_vectors WHERE model = %s", (model,)
        ).fetchone()
    assert texts is not None and vectors is not None
    return int(str(texts[0])), int(str(vectors[0]))


def _run(capsys: pytest.CaptureFixture[str], lang: str, args: list[str]) -> tuple[int, int, str]:
    """Run the worker command; the texts and batches its sentence gives, and its model line."""
    assert main(["index", "--worker", *args]) == 0
    lines = capsys.readouterr().out.splitlines()
    found = re.match(SENTENCE[lang], lines[0])
    assert found, lines
    assert len(lines) == 2, lines
    texts, batches = (int(found[n].replace(",", "").replace(".", "")) for n in (1, 2))
    words = CLI_WORDS[lang]
    assert lines[0].startswith(counted(words.worker_texts, texts) + " ")
    assert f", {counted(words.worker_batches, batches)};" in lines[0]
    return texts, batches, lines[1]


def test_the_worker_command_embeds_what_waits_and_says_so(
    demo_index_dir: Path,
    pg_database: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    copy_archive(str(demo_index_dir), pg_database)
    texts, before = _texts(pg_database, HASHING)
    assert before == 0 and texts > 0

    monkeypatch.setenv("ARXIU_LANG", "en")
    args = ["--archive", pg_database, "--model", "hashing", "--batch", "100"]
    done, batches, line = _run(capsys, "en", args)
    assert (done, line) == (texts, f"  {HASHING}: {number(texts)}")
    assert batches == -(-texts // 100)  # each text claimed through one chunk, 100 a batch
    assert _texts(pg_database, HASHING) == (texts, texts)

    monkeypatch.setenv("ARXIU_LANG", "ca")
    assert _run(capsys, "ca", args) == (0, 0, f"  {HASHING}: 0")

    with connect(pg_database) as conn:  # the archive's own setting names the model
        conn.execute("DELETE FROM index_vectors WHERE model = %s", (HASHING,))
        conn.execute(
            "INSERT INTO meta(key, value) VALUES ('index.model', 'hashing') "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value"
        )
        conn.commit()
    monkeypatch.setenv("ARXIU_LANG", "es")
    done, _, line = _run(capsys, "es", ["--archive", pg_database])
    assert (done, line) == (texts, f"  {HASHING}: {number(texts)}")
    assert WORKER_BATCH == BATCH


def test_the_worker_needs_a_postgresql_url(
    demo_index_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["index", "--worker", "--archive", str(demo_index_dir), "--model", "hashing"])
    assert code == 2 and "archive.pg_url_invalid" in capsys.readouterr().err
