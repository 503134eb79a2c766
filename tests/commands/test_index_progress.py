"""``arxiu index`` shows each phase's real count, in the interface language."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.cli import main
from app.core.archive import open_archive
from app.core.archive.demo import create_demo_archive

BAR = re.compile(r"^(?P<label>.+?) \[[#-]+\] (?P<done>\d+)/(?P<total>\d+) \d+%$")


def bars(err: str) -> dict[str, list[tuple[int, int]]]:
    """Each progress label's (done, total) lines as printed on stderr."""
    found: dict[str, list[tuple[int, int]]] = {}
    for line in err.splitlines():
        match = BAR.match(line.strip())
        if match:
            pair = (int(match["done"]), int(match["total"]))
            found.setdefault(match["label"], []).append(pair)
    return found


@pytest.mark.parametrize(
    ("lang", "chunking", "embedding"),
    [
        ("en", "indexing: chunking records", "indexing: embedding texts"),
        ("ca", "indexant: fragmentant registres", "indexant: incrustant textos"),
        ("es", "indexando: fragmentando registros", "indexando: incrustando textos"),
    ],
)
def test_the_demo_shows_its_records_then_its_texts_each_with_one_total(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    lang: str,
    chunking: str,
    embedding: str,
) -> None:
    monkeypatch.setenv("ARXIU_LANG", lang)
    folder = tmp_path / "demo"
    archive = create_demo_archive(folder)
    with archive.db.reading() as conn:
        records = int(conn.execute("SELECT count(*) FROM records").fetchone()[0])
    archive.close()
    assert main(["index", "--archive", str(folder), "--model", "hashing"]) == 0
    shown = bars(capsys.readouterr().err)
    assert list(shown) == [chunking, embedding]
    assert {total for _, total in shown[chunking]} == {records}
    with open_archive(folder) as reopened, reopened.db.reading() as conn:
        texts = int(
            conn.execute("SELECT count(DISTINCT content_hash) FROM index_chunks").fetchone()[0]
        )
    assert {total for _, total in shown[embedding]} == {texts}  # one model: one per text
    for pairs in shown.values():
        assert pairs[-1][0] == pairs[-1][1]
