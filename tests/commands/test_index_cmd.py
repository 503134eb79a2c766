"""``arxiu index``, ``arxiu search`` and ``arxiu eval retrieval`` run in-process."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app.cli import main
from app.core.archive import Field, Section, open_archive
from tests.commands.test_index_progress import BAR


def _archive(folder: Path) -> Path:
    with open_archive(folder, create=True) as archive:
        archive.put_section(Section("oh1", {"lg-eng": "Interviews"}, label_field="oh2"))
        archive.put_section(
            Section("rs1", {"lg-eng": "Closed"}, restricted=True, label_field="oh5")
        )
        for tipo, section, kind in [
            ("oh2", "oh1", "text"),
            ("oh3", "oh1", "transcription"),
            ("oh5", "rs1", "text"),
            ("oh6", "rs1", "rich_text"),
        ]:
            archive.put_field(Field(tipo, section, {"lg-eng": tipo}, kind))
        archive.create_record(
            "oh1",
            {
                "oh2": [{"lang": "lg-cat", "value": "La presa"}],
                "oh3": [
                    {
                        "lang": "lg-cat",
                        "value": "[TC_00:00:09.000_TC] Quan ens van fer marxar "
                        "de casa per l'embassament, vam anar a Lleida.",
                    }
                ],
            },
        )
        archive.create_record(
            "rs1",
            {
                "oh5": [{"lang": "lg-cat", "value": "Expedient"}],
                "oh6": [{"lang": "lg-cat", "value": "Embassament i malaltia, informe reservat."}],
            },
        )
    return folder


def test_index_then_search_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _archive(tmp_path / "archive")
    assert main(["index", "--archive", str(folder), "--model", "hashing"]) == 0
    assert "chunks" in capsys.readouterr().out
    code = main(
        [
            "search",
            "embassament",
            "--archive",
            str(folder),
            "--model",
            "hashing",
            "--mode",
            "lexical",
            "--json",
        ]
    )
    hits = json.loads(capsys.readouterr().out)
    assert code == 0 and {h["section_tipo"] for h in hits} == {"oh1", "rs1"}
    assert hits[0]["timecode"] == "00:00:09.000" or hits[1]["timecode"] == "00:00:09.000"
    main(
        [
            "search",
            "embassament",
            "--archive",
            str(folder),
            "--model",
            "hashing",
            "--egress",
            "--json",
        ]
    )
    assert {h["section_tipo"] for h in json.loads(capsys.readouterr().out)} == {"oh1"}
    main(
        [
            "search",
            "embassament",
            "--archive",
            str(folder),
            "--model",
            "hashing",
            "--section",
            "rs1",
        ]
    )
    assert "Expedient" in capsys.readouterr().out


def test_index_rebuild_reports_progress(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _archive(tmp_path / "archive")
    main(["index", "--archive", str(folder), "--model", "hashing"])
    capsys.readouterr()
    assert main(["index", "--rebuild", "--archive", str(folder), "--model", "hashing"]) == 0
    captured = capsys.readouterr()
    assert "2 items indexed now" in captured.out
    assert "indexing" in captured.err


def _beir(folder: Path) -> tuple[Path, Path, Path]:
    folder.mkdir()
    docs = [
        {"_id": "d1", "title": "Mequinensa", "text": "A town flooded by a reservoir in 1971."},
        {"_id": "d2", "title": "Sardana", "text": "A Catalan circle dance."},
        {"_id": "d3", "title": "Castells", "text": "Human towers built at festivals."},
    ]
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in docs))
    (folder / "queries.jsonl").write_text(
        '{"_id": "q1", "text": "flooded town reservoir"}\n{"_id": "q2", "text": "circle dance"}\n'
        '{"_id": "q3", "text": "unjudged"}\n'
    )
    (folder / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t2\nq2\td2\t1\n")
    return folder / "corpus.jsonl", folder / "queries.jsonl", folder / "qrels.tsv"


def test_eval_retrieval_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus, queries, qrels = _beir(tmp_path / "beir")
    code = main(
        ["eval", "retrieval", str(corpus), str(queries), str(qrels), "--model", "hashing", "--json"]
    )
    results = json.loads(capsys.readouterr().out)
    assert code == 0 and set(results) == {"dense", "lexical", "hybrid"}
    assert results["lexical"] == {"ndcg@10": 1.0, "recall@100": 1.0, "mrr@10": 1.0}
    code = main(
        [
            "eval",
            "retrieval",
            str(corpus),
            str(queries),
            str(qrels),
            "--model",
            "hashing",
            "--mode",
            "hybrid",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0 and "hybrid" in out and "lexical" not in out


def test_eval_retrieval_with_a_missing_file_is_a_coded_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus, queries, _ = _beir(tmp_path / "beir")
    code = main(
        [
            "eval",
            "retrieval",
            str(corpus),
            str(queries),
            str(tmp_path / "none.tsv"),
            "--model",
            "hashing",
        ]
    )
    assert code == 2 and "index.eval_input" in capsys.readouterr().err


def test_search_without_archive_uses_the_demo_archive(
    arxiu_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No ``--archive``: the default archive under ARXIU_HOME is created as the demo, indexed."""
    code = main(
        ["search", "pantà", "--model", "hashing", "--mode", "lexical", "--records", "--json"]
    )
    hits = json.loads(capsys.readouterr().out)
    assert code == 0 and hits
    assert any(h["section_tipo"] == "oh1" for h in hits)
    assert any(arxiu_home.rglob("archive.db"))


def test_search_answers_at_once_from_the_lexical_index_and_says_dense_is_incomplete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nothing embedded yet: a lexical search chunks (no model), answers, and embeds nothing;
    a hybrid search says how complete the dense index is; ``--wait`` embeds first."""
    folder = _archive(tmp_path / "archive")
    base = ["search", "embassament", "--archive", str(folder), "--model", "hashing", "--json"]
    assert main([*base, "--mode", "lexical"]) == 0
    captured = capsys.readouterr()
    assert {h["section_tipo"] for h in json.loads(captured.out)} == {"oh1", "rs1"}
    with open_archive(folder) as archive, archive.db.reading() as conn:
        assert conn.execute("SELECT count(*) FROM index_vectors").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM index_chunks").fetchone()[0] > 0
    assert main(base) == 0
    captured = capsys.readouterr()
    assert "incomplete (chunks embedded: hashing-256 0/" in captured.err
    assert main([*base, "--wait"]) == 0
    captured = capsys.readouterr()
    assert "incomplete" not in captured.err and json.loads(captured.out)
    with open_archive(folder) as archive, archive.db.reading() as conn:
        assert conn.execute("SELECT count(*) FROM index_vectors").fetchone()[0] > 0


COUNTS = (0, 1, 2, 1852)
WORKER = {
    "en": ("{texts} in 1.5 s ({rate} a second), {batches}; per model:",
           ("0 texts embedded", "1 text embedded", "2 texts embedded", "1,852 texts embedded"),
           ("0.0", "0.7", "1.3", "1,234.7"), ("0 batches", "1 batch", "2 batches", "1,852 batches"),
           ("0", "1", "2", "1,852")),
    "ca": ("{texts} en 1,5 s ({rate} per segon), {batches}; per model:",
           ("0 textos incrustats", "1 text incrustat", "2 textos incrustats",
            "1.852 textos incrustats"), ("0,0", "0,7", "1,3", "1.234,7"),
           ("0 lots", "1 lot", "2 lots", "1.852 lots"), ("0", "1", "2", "1.852")),
    "es": ("{texts} en 1,5 s ({rate} por segundo), {batches}; por modelo:",
           ("0 textos incrustados", "1 texto incrustado", "2 textos incrustados",
            "1852 textos incrustados"), ("0,0", "0,7", "1,3", "1234,7"),
           ("0 lotes", "1 lote", "2 lotes", "1852 lotes"), ("0", "1", "2", "1852")),
}  # fmt: skip
"""What ``arxiu index --worker`` says of runs of 1.5 s that embedded 0, 1, 2 and 1,852 texts
in as many batches: the texts, the rate, the batches and the model's vectors."""


@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_the_worker_s_sentence_writes_seconds_and_rate_with_the_language_s_decimal_mark(
    monkeypatch: pytest.MonkeyPatch, lang: str
) -> None:
    from app.commands.index_cmd import worker_lines
    from app.core.index.postgres.worker import ModelCount, WorkerResult

    monkeypatch.setenv("ARXIU_LANG", lang)
    sentence, *said = WORKER[lang]
    for count, (texts, rate, batches, vectors) in zip(COUNTS, zip(*said, strict=True), strict=True):
        result = WorkerResult((ModelCount("hashing-256", count),), count, count, 1.5)
        lines = worker_lines(result)
        assert lines[0] == sentence.format(texts=texts, rate=rate, batches=batches), lines
        assert lines[1:] == [f"  hashing-256: {vectors}"]


INCOMPLETE = {
    "ca": (
        "nota: l'índex semàntic és incomplet (fragments incrustats: {figures}); aquests "
        "resultats surten del que s'ha indexat fins ara. Executeu `arxiu index` o cerqueu amb "
        "--wait."
    ),
    "es": (
        "nota: el índice semántico está incompleto (fragmentos incrustados: {figures}); estos "
        "resultados proceden de lo indexado hasta ahora. Ejecute `arxiu index` o busque con "
        "--wait."
    ),
    "en": (
        "note: the semantic index is incomplete (chunks embedded: {figures}); these hits come "
        "from what is indexed so far. Run `arxiu index` or search with --wait."
    ),
}


@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_an_incomplete_index_is_said_in_the_language(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, lang: str
) -> None:
    """The note before the hits of a search whose dense index is not complete yet; each
    model's figure (``hashing-256 0/2``) as the status bar writes it."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    folder = _archive(tmp_path / "archive")
    base = ["search", "embassament", "--archive", str(folder), "--model", "hashing", "--json"]
    assert main([*base, "--mode", "lexical"]) == 0  # chunks the records, embeds nothing
    capsys.readouterr()
    assert main(base) == 0
    (line,) = capsys.readouterr().err.splitlines()
    before, after = INCOMPLETE[lang].split("{figures}")
    assert re.fullmatch(re.escape(before) + r"hashing-256 0/\d+" + re.escape(after), line), line


INDEXING_BAR = {"ca": "indexant", "es": "indexando", "en": "indexing"}


@pytest.mark.parametrize("lang", ["ca", "es", "en"])
def test_eval_retrieval_s_progress_bar_is_in_the_language(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    lang: str,
) -> None:
    """Its lines on stderr (not a terminal: one every 10%) carry the language's label; the
    metrics on stdout stay as they are."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    corpus, queries, qrels = _beir(tmp_path / "beir")
    argv = ["eval", "retrieval", str(corpus), str(queries), str(qrels), "--model", "hashing"]
    assert main([*argv, "--mode", "lexical"]) == 0
    captured = capsys.readouterr()
    labels = {m["label"] for line in captured.err.splitlines() if (m := BAR.match(line))}
    assert labels == {INDEXING_BAR[lang]}
    assert captured.out.splitlines()[0].split() == ["mode", "nDCG@10", "R@100", "MRR@10"]
