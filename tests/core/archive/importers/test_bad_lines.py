"""Bad lines lose nothing: each is reported with its code and line, every valid row is imported;
its reason is said in the app's and the CLI's language."""

from __future__ import annotations

import ast
import json
import string
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.archive import Archive, Field, Section
from app.core.archive.bulk import NewRecord
from app.core.archive.importers import run_import
from app.core.archive.importers.base import (
    BAD_LINE,
    BAD_ROW,
    ROW_FAILED,
    Built,
    ImportSummary,
    import_file,
)
from app.core.archive.importers.reading import MAX_LINE_BYTES
from app.core.i18n_tables import TABLE_LANGS, load_table
from app.core.import_report import skip_reason
from tests.conftest import shared_data
from tests.core.archive.importers.conftest import first_lines, write_gz

DEEP = b'{"_id": "deep", "title": "t", "text": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
SURROGATE = b'{"_id": "sur", "title": "bad \\ud800 title", "text": "x"}\n'
PAIR = b'{"_id": "pair", "title": "an emoji \\ud83d\\ude00", "text": "fine"}\n'
IMPORTERS = Path(__file__).resolve().parents[4] / "app" / "core" / "archive" / "importers"
JSON_LINES_MODULES = ("reading", "base", "nomisma", "igch", "tate", "poilus", "beir")
"""The modules whose rows :func:`~app.core.archive.importers.base.import_rows` reads."""


def fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def corpus(tmp_path: Path, bad: dict[int, bytes], count: int = 40) -> tuple[Path, list[bytes]]:
    """A BEIR corpus of real lines with ``bad`` lines spliced in at their (1-based) numbers."""
    good = first_lines(shared_data("beir-dbpedia-5k", "corpus.jsonl.gz"), count)
    lines = list(good)
    for number in sorted(bad):
        lines.insert(number - 1, bad[number])
    return write_gz(tmp_path / "bad" / "corpus.jsonl.gz", lines), good


def stored_titles(archive: Archive) -> set[str]:
    return {r.text("beir2", "lg-eng") or "" for r in archive.iter_records("beir1")}


@pytest.mark.parametrize(
    ("line", "reason"),
    [(DEEP, "nested too deeply"), (SURROGATE, "lone surrogate")],
    ids=["100k-nested-brackets", "lone-surrogate"],
)
def test_a_bad_line_is_reported_and_every_valid_row_is_kept(
    archive: Archive, tmp_path: Path, line: bytes, reason: str
) -> None:
    path, good = corpus(tmp_path, {3: line})

    summary = run_import(archive, "beir", path)

    assert [(s.line, s.code) for s in summary.skipped] == [(3, BAD_LINE)]
    assert reason in summary.skipped[0].reason
    assert summary.error is None
    assert summary.created == len(good) == archive.count_records("beir1")
    assert stored_titles(archive) == {json.loads(g)["title"] for g in good}


def test_a_surrogate_pair_is_text_and_is_imported(archive: Archive, tmp_path: Path) -> None:
    path, good = corpus(tmp_path, {2: PAIR}, count=5)

    summary = run_import(archive, "beir", path)

    assert summary.skipped == []
    assert "an emoji \U0001f600" in stored_titles(archive)
    assert summary.created == len(good) + 1


def test_a_line_over_the_cap_is_skipped_and_the_rest_imported(
    archive: Archive, tmp_path: Path
) -> None:
    huge = b'{"_id": "huge", "title": "' + b"h" * (MAX_LINE_BYTES + 10) + b'"}\n'
    path, good = corpus(tmp_path, {2: huge, 5: DEEP, 9: SURROGATE})

    summary = run_import(archive, "beir", path)

    assert [s.line for s in summary.skipped] == [2, 5, 9]
    assert (
        summary.skipped[0].reason
        == "longer than 8,388,608 bytes"
        == f"longer than {MAX_LINE_BYTES:,} bytes"
    )
    said = [skip_reason(summary.skipped[0], load_table(lang)) for lang in ("ca", "es")]
    assert said == ["té més de 8.388.608 bytes", "tiene más de 8.388.608 bytes"]
    assert summary.created == len(good) == archive.count_records("beir1")


def test_a_row_the_archive_cannot_store_is_left_out_of_its_batch_alone(
    archive: Archive, tmp_path: Path
) -> None:
    """A value that reaches the database unencodable fails that row only, not its batch."""
    archive.put_section(Section("s1", {"lg-eng": "S"}))
    archive.put_field(Field("f1", "s1", {"lg-eng": "F"}))
    rows = [{"id": str(n), "v": f"row {n}"} for n in range(1, 13)]
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")

    def build(row: dict[str, Any]) -> Built:
        value = row["v"] + ("\ud800" if row["id"] in ("4", "9") else "")  # injected past reading
        return Built(NewRecord("s1", {"f1": [{"value": value}]}, external_id=row["id"]))

    summary = ImportSummary(kind="test", path=str(path))
    import_file(archive, summary, path, "test", build)

    assert [(s.line, s.code) for s in summary.skipped] == [(4, ROW_FAILED), (9, ROW_FAILED)]
    assert "UnicodeEncodeError" in summary.skipped[0].reason
    assert summary.created == 10 == archive.count_records("s1")
    json.dumps(summary.to_dict(), ensure_ascii=False).encode("utf-8")  # printable as is


def test_per_row_upsert_reports_positions_and_keeps_the_rest(archive: Archive) -> None:
    archive.put_section(Section("s1", {"lg-eng": "S"}))
    records = [NewRecord("s1", {"f1": [{"value": v}]}) for v in ("a", "b\udfff", "c")]

    result = archive.submit_upsert(records, per_row=True).result()

    assert [position for position, _ in result.failed] == [1]
    assert result.created == 2 and len(result.keys) == 2
    assert archive.count_records("s1") == 2


def test_without_per_row_a_bad_record_rolls_the_batch_back(archive: Archive) -> None:
    archive.put_section(Section("s1", {"lg-eng": "S"}))
    records = [NewRecord("s1", {"f1": [{"value": v}]}) for v in ("a", "b\udfff", "c")]

    with pytest.raises(UnicodeEncodeError):
        archive.upsert_records(records)
    assert archive.count_records("s1") == 0


BAD_ROWS = {
    2: b"not json\n",
    4: b"[1, 2]\n",
    5: b'{"title": "no id"}\n',
    7: b'{"_id": "x", "title": 5}\n',
    8: b'{"_id": "y"}\n',
    10: b'\xff{"_id": "z"}\n',
    11: DEEP,
}
SAID = {
    "en": [
        "bad JSON: Expecting value (column 1)",
        "expected a JSON object, got list",
        "missing required key '_id'",
        "'title' must be a string, not int",
        "document has neither 'title' nor 'text'",
        "not UTF-8 text (invalid start byte at byte 0)",
        "bad JSON: nested too deeply",
    ],
    "ca": [
        "JSON no vàlid: Expecting value (columna 1)",
        "s'esperava un objecte JSON i s'ha trobat list",
        "falta la clau obligatòria «_id»",
        "«title» ha de ser una cadena, no pas int",
        "el document no té ni «title» ni «text»",
        "no és text UTF-8 (invalid start byte al byte 0)",
        "JSON no vàlid: massa nivells d'imbricació",
    ],
    "es": [
        "JSON no válido: Expecting value (columna 1)",
        "se esperaba un objeto JSON y se ha encontrado list",
        "falta la clave obligatoria «_id»",
        "«title» debe ser una cadena, no int",
        "el documento no tiene ni «title» ni «text»",
        "no es texto UTF-8 (invalid start byte en el byte 0)",
        "JSON no válido: demasiados niveles de anidamiento",
    ],
}


def test_the_skips_of_a_json_lines_import_are_said_in_catalan_and_spanish(
    archive: Archive, tmp_path: Path
) -> None:
    """A real BEIR import with bad lines and bad rows: each skip keeps its English reason (for
    JSON and logs) and carries a phrase said in the table's language."""
    path, good = corpus(tmp_path, BAD_ROWS)

    summary = run_import(archive, "beir", path)

    assert [(s.line, s.code) for s in summary.skipped] == [
        (2, BAD_LINE), (4, BAD_LINE), (5, BAD_ROW), (7, BAD_ROW), (8, BAD_ROW), (10, BAD_LINE),
        (11, BAD_LINE),
    ]  # fmt: skip
    assert summary.created == len(good)
    assert [s.reason for s in summary.skipped] == SAID["en"]
    assert all(s.phrase is not None for s in summary.skipped)
    for lang in TABLE_LANGS:
        assert [skip_reason(s, load_table(lang)) for s in summary.skipped] == SAID[lang]
    assert [skip_reason(s, {}) for s in summary.skipped] == SAID["en"]


SAYERS = {("BadRow", "said"): 0, ("Phrase", "of"): 0, ("", "_wrong"): 1}
"""The calls that take a reason's template, and the position of the template among their
arguments (``_wrong(key, expected, value)``: ``expected`` is a phrase of its own)."""


def calls(tree: ast.Module) -> Iterator[tuple[ast.Call, set[str]]]:
    """Each call in ``tree`` with the parameters of the function it is made in (none for a
    call at the module's level)."""
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            given = function.args
            params = {a.arg for a in given.posonlyargs + given.args + given.kwonlyargs}
            for node in ast.walk(function):
                if isinstance(node, ast.Call):
                    yield node, params
    for statement in tree.body:
        if not isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            for node in ast.walk(statement):
                if isinstance(node, ast.Call):
                    yield node, set()


def reason_templates() -> dict[str, str]:
    """The English of every reason the JSON Lines reader and the rows' builders say as a phrase
    (:data:`SAYERS`: a string, or a name the same file sets to strings; a parameter passed on is
    found where its caller gives it), with where it is."""
    found: dict[str, str] = {}
    for name in JSON_LINES_MODULES:
        path = IMPORTERS / f"{name}.py"
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names: dict[str, list[str]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                for target in node.targets:
                    if isinstance(target, ast.Name) and isinstance(node.value.value, str):
                        names.setdefault(target.id, []).append(node.value.value)
        for node, params in calls(tree):
            func = node.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                called = (func.value.id, func.attr)
            else:
                called = ("", func.id if isinstance(func, ast.Name) else "")
            position = SAYERS.get(called)
            if position is None:
                continue
            argument = node.args[position]
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                templates = [argument.value]
            elif isinstance(argument, ast.Name) and argument.id in names:
                templates = names[argument.id]
            elif isinstance(argument, ast.Name) and argument.id in params:
                continue  # passed on: BadRow.said's template, _wrong's expected
            else:
                raise AssertionError(f"{path.name}:{node.lineno}: a template the scan can't read")
            for template in templates:
                found.setdefault(template, f"{path.name}:{node.lineno}")
    return found


def test_every_json_lines_reason_is_translated_with_the_same_parameters() -> None:
    templates = reason_templates()
    assert "'{key}' must be {expected}, not {type}" in templates  # a name set before the call
    assert "an integer" in templates and "no 'page_texts' and no 'text'" in templates
    for lang in TABLE_LANGS:
        table = load_table(lang)
        missing = {t: where for t, where in templates.items() if not table.get(t)}
        assert not missing, f"add to resources/i18n/{lang}.json: {missing}"
        unlike = {t: table[t] for t in templates if fields(table[t]) != fields(t)}
        assert not unlike, unlike
