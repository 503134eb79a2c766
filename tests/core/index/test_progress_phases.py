"""An indexing run's progress: each phase's total is the real count and never moves."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from app.core.archive.demo import create_demo_archive
from app.core.archive.store import Archive
from app.core.index import HashingEmbedder, Index, Progress
from app.core.index import indexer as indexer_module
from app.core.index.progress import phase_label


def segments(events: list[Progress]) -> list[tuple[str, list[Progress]]]:
    """The run's events cut where the phase changes (the idle event closes the last one)."""
    cut: list[tuple[str, list[Progress]]] = []
    for event in events:
        if event.phase is None:
            continue
        if not cut or cut[-1][0] != event.phase:
            cut.append((event.phase, []))
        cut[-1][1].append(event)
    return cut


def records_in(archive: Archive) -> int:
    with archive.db.reading() as conn:
        return int(conn.execute("SELECT count(*) FROM records").fetchone()[0])


def texts_in(archive: Archive) -> int:
    with archive.db.reading() as conn:
        return int(
            conn.execute("SELECT count(DISTINCT content_hash) FROM index_chunks").fetchone()[0]
        )


def assert_steady(events: list[Progress], *, finished: bool = True) -> None:
    """Within one phase: the total never falls, done never falls and (unless another phase
    interrupted it) ends at the total."""
    for before, after in itertools.pairwise(events):
        assert after.total >= before.total
        assert after.done >= before.done
    assert all(e.done <= e.total for e in events)
    if finished:
        assert events[-1].done == events[-1].total


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many batches per phase on the demo (so a moving total would show)."""
    monkeypatch.setattr(indexer_module, "RECORD_BATCH", 50)
    monkeypatch.setattr(indexer_module, "VECTOR_BATCH", 100)


def test_the_demo_run_counts_its_records_then_its_texts(
    tmp_path: Path, small_batches: None
) -> None:
    archive = create_demo_archive(tmp_path / "demo")
    index = Index(archive, [HashingEmbedder(64), HashingEmbedder(64, salt="second")])
    events: list[Progress] = []
    index.add_progress_listener(events.append)
    final = index.index_now()
    index.close()
    cut = segments(events)
    assert [phase for phase, _ in cut] == ["chunking", "embedding"]
    (_, chunking), (_, embedding) = cut
    records = records_in(archive)
    assert {e.total for e in chunking} == {records}  # one figure, the real one, from the start
    assert {e.total for e in embedding} == {2 * texts_in(archive)}  # every text, per model
    assert len(chunking) > 3 and len(embedding) > 3
    assert_steady(chunking)
    assert_steady(embedding)
    assert final.state == "idle" and final.items == records + 2 * texts_in(archive)
    archive.close()


def test_records_changed_mid_run_only_ever_add_to_a_total(
    tmp_path: Path, small_batches: None
) -> None:
    archive = create_demo_archive(tmp_path / "demo")
    index = Index(archive, HashingEmbedder(64))
    events: list[Progress] = []
    added: list[bool] = []

    def listen(progress: Progress) -> None:
        events.append(progress)
        if progress.phase == "embedding" and progress.done and not added:
            added.append(True)  # a person adds a record while the texts are embedded
            section = archive.sections()[0].tipo
            field = archive.fields(section)[0].tipo
            value = [{"lang": "lg-eng", "value": "A record added during the run"}]
            archive.create_record(section, {field: value})

    index.add_progress_listener(listen)
    index.index_now()
    assert index.stats().pending == 0
    index.close()
    cut = segments(events)
    assert [phase for phase, _ in cut] == ["chunking", "embedding", "chunking", "embedding"]
    (_, first), (_, interrupted), (_, again), (_, rest) = cut  # the new record, same run
    assert_steady(first)
    assert_steady(interrupted, finished=False)  # the new record's chunking came first
    assert_steady(again)
    assert_steady(rest)
    assert {e.total for e in again} == {1}
    left = interrupted[-1].total - interrupted[-1].done
    assert {e.total for e in rest} == {left + 1}  # the texts left, and the new record's
    archive.close()


@pytest.mark.parametrize(
    ("lang", "words"),
    [("en", "embedding texts"), ("ca", "incrustant textos"), ("es", "incrustando textos")],
)
def test_each_phase_is_named_in_the_interface_language(lang: str, words: str) -> None:
    assert words in phase_label("embedding", lang)
    assert phase_label("chunking", lang) != phase_label("embedding", lang)
