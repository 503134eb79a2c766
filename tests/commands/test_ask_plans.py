"""``arxiu ask --write``'s confirm card, its prompts and the apply report, in the CLI's language
(:mod:`app.commands.ask_plans`); a plan is applied only after an explicit yes: the language's
(``sí``, with or without the accent, any case) or ``yes``, never anything else.

The flows run the real ``arxiu ask`` on a real archive with a scripted model, as
``tests/commands/test_ask_cmd.py`` does; English stays as it was, byte for byte."""

from __future__ import annotations

import asyncio
import io
import json
import shutil
from pathlib import Path

import pytest

from app.cli import main
from app.commands.ask_plans import apply_summary, failure_lines, is_yes
from app.core.agent.apply import ApplyContext, apply_plan
from app.core.agent.plan_types import ApplyReport
from app.core.agent.plans import validate_plan
from app.core.archive import open_archive
from app.core.archive.write_switch import set_writes_allowed
from app.core.json_types import JsonObject
from app.core.models.scripted import ScriptedModel, Turn, call
from app.core.tools.matching import find_matches
from app.core.tools.registry import build_registry
from tests.commands.test_ask_cmd import folder, scripted
from tests.core.agent.plan_samples import FAILING_AT_STEP_3, NOT_FOUND
from tests.core.agent.test_plans import ANNA_OPS, ANNA_QUESTION

__all__ = ["folder", "scripted"]  # the fixtures of tests/commands/test_ask_cmd.py

LANGS = ["ca", "es", "en"]
ASK = ["ask", ANNA_QUESTION, "--write", "--context", "oh1/1", "--archive"]
OPS = [
    "  1. [p1] dedalo_find_or_create — Find or create person Anna Pujol",
    '       {"match": {"rsc85": "Anna Pujol"}, "section_tipo": "rsc197", "set": {"rsc89": 1931, '
    '"rsc90": "Súria"}}',
    "  2. [l1] dedalo_portal_link — Link the person as informant of this interview",
    '       {"field": "oh24", "section_id": 1, "section_tipo": "oh1", "target": {"ref": "p1"}}',
]
"""The card's rows: op ids, tools, the model's summaries and the arguments, in every language."""
CARD = {
    "ca": ("Pla de canvis: Anna", "Encara no s'ha escrit res.", "Escriviu sí per aplicar-lo: "),
    "es": (
        "Plan de cambios: Anna",
        "Todavía no se ha escrito nada.",
        "Escriba sí para aplicarlo: ",
    ),
    "en": ("Change plan: Anna", "Nothing has been written yet.", "Type yes to apply it: "),
}
REPORT = {
    "ca": ["aplicat p1", "aplicat l1", "creat p1: section_id 2"],
    "es": ["aplicado p1", "aplicado l1", "creado p1: section_id 2"],
    "en": ["applied p1", "applied l1", "created p1: section_id 2"],
}
YES = {"ca": "sí", "es": "sí", "en": "yes"}
CANCELLED = {
    "ca": "Cancel·lat: no s'ha escrit res.",
    "es": "Cancelado: no se ha escrito nada.",
    "en": "Cancelled: nothing was written.",
}
RESTRICTED = {
    "ca": "AVÍS: aquest pla conté text de registres restringits i l'escriu en una secció oberta.",
    "es": "AVISO: este plan contiene texto de registros restringidos y lo escribe en una sección "
    "abierta.",
    "en": "WARNING: this plan contains text from restricted records and writes it into an open "
    "section.",
}
AGAIN = {
    "ca": "Torneu a escriure sí per copiar-lo a la secció oberta: ",
    "es": "Vuelva a escribir sí para copiarlo en la sección abierta: ",
    "en": "Type yes again to copy it into the open section: ",
}


def propose(model: ScriptedModel, *, restricted: bool = False) -> None:
    """The model's plan for Anna Pujol (after reading a restricted testimony: flagged)."""
    if restricted:
        read = call("dedalo_read_record", {"section_tipo": "ohr", "section_id": 1})
        model.extend(Turn(tool_calls=(read,)))
    plan = call("propose_change_plan", {"summary": "Anna", "ops": ANNA_OPS})
    model.extend(Turn(tool_calls=(plan,)))


def written(where: Path) -> tuple[int, int]:
    """How many Anna Pujols the archive holds, and its audit rows (both 0: nothing written)."""
    with open_archive(where) as archive:
        annas = find_matches(archive, "rsc197", {"rsc85": "Anna Pujol"})
        return len(annas), len(archive.audit_rows())


def ask(
    folder: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    typed: str,
    *extra: str,
) -> tuple[int, str, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(typed))
    code = main([*ASK, str(folder), *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("lang", LANGS)
def test_the_card_the_prompt_and_the_report_are_in_the_language(
    folder: Path,
    scripted: dict[str, ScriptedModel],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    lang: str,
) -> None:
    """The person types the language's yes: the card, then the report on stdout; the op ids,
    tools, arguments, ``plan_hash`` and ``section_id`` stay as they are."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    propose(scripted["tools"])
    code, out, err = ask(folder, capsys, monkeypatch, YES[lang] + "\n")
    assert code == 0
    heading, nothing, prompt = CARD[lang]
    lines = err.splitlines()
    start = lines.index(heading)
    assert lines[start - 1] == "" and lines[start + 1].startswith("  plan_hash ")
    assert lines[start + 2 :] == [*OPS, nothing, prompt]
    assert out.splitlines()[-3:] == REPORT[lang]
    assert written(folder) == (1, 2)


@pytest.mark.parametrize(
    ("lang", "typed"),
    [(lang, typed) for lang in ("ca", "es") for typed in ("sí", "SI", " si ", "yes", "Sí", "SÍ")]
    + [("en", "yes"), ("en", " YES ")],
)
def test_the_language_s_yes_and_yes_itself_apply_the_plan(
    folder: Path,
    scripted: dict[str, ScriptedModel],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    lang: str,
    typed: str,
) -> None:
    monkeypatch.setenv("ARXIU_LANG", lang)
    propose(scripted["tools"])
    code, out, err = ask(folder, capsys, monkeypatch, typed + "\n")
    assert code == 0 and out.splitlines()[-3:] == REPORT[lang]
    assert CANCELLED[lang] not in err
    assert written(folder) == (1, 2)


@pytest.mark.parametrize(
    ("lang", "typed"),
    [
        (lang, typed)
        for lang in ("ca", "es")
        for typed in ("s\n", "no\n", "\n", "", "oui\n", "sí?\n", "si us plau\n", "yes sí\n")
    ]
    + [("en", typed) for typed in ("sí\n", "si\n", "SÍ\n", "y\n", "no\n", "\n", "")],
)
def test_anything_else_declines_and_writes_nothing(
    folder: Path,
    scripted: dict[str, ScriptedModel],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    lang: str,
    typed: str,
) -> None:
    """Not an explicit yes — a letter, no, an empty line, the end of input, another
    language's word, more than the word — is a decline; in English ``sí`` is not a yes."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    propose(scripted["tools"])
    code, out, err = ask(folder, capsys, monkeypatch, typed)
    assert code == 0
    assert err.splitlines()[-1] == CANCELLED[lang]
    assert not any(line in out.splitlines() for line in REPORT[lang])
    assert written(folder) == (0, 0)


@pytest.mark.parametrize("lang", LANGS)
def test_a_flagged_plan_warns_and_needs_a_second_yes_in_the_language(
    folder: Path,
    scripted: dict[str, ScriptedModel],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    lang: str,
) -> None:
    """A run that read a restricted testimony proposes writing into People (open): the warning
    on the card and again before the second prompt; a second ``no`` writes nothing, a second
    yes (``SI`` in Catalan and Spanish) applies it."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{YES[lang]}\nno\n"))
    propose(scripted["tools"], restricted=True)
    assert main(["ask", ANNA_QUESTION, "--write", "--archive", str(folder)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err.count(RESTRICTED[lang]) == 2
    assert err[-5:] == [
        CARD[lang][1],
        CARD[lang][2],
        RESTRICTED[lang],
        AGAIN[lang],
        CANCELLED[lang],
    ]
    assert written(folder) == (0, 0)

    second = "SI" if lang != "en" else "yes"
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{YES[lang]}\n{second}\n"))
    propose(scripted["tools"], restricted=True)
    assert main(["ask", ANNA_QUESTION, "--write", "--archive", str(folder)]) == 0
    assert capsys.readouterr().out.splitlines()[-3:] == REPORT[lang]
    assert written(folder) == (1, 2)


def test_in_english_si_is_no_second_yes(
    folder: Path,
    scripted: dict[str, ScriptedModel],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("yes\nsí\n"))
    propose(scripted["tools"], restricted=True)
    assert main(["ask", ANNA_QUESTION, "--write", "--archive", str(folder)]) == 0
    assert capsys.readouterr().err.splitlines()[-1] == CANCELLED["en"]
    assert written(folder) == (0, 0)


@pytest.mark.parametrize("lang", ["ca", "es"])
def test_json_events_take_the_language_s_yes_and_report_the_same_json(
    folder: Path,
    scripted: dict[str, ScriptedModel],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    lang: str,
) -> None:
    """With ``--json-events`` the card is in the language on stderr, and the report is the
    seed's JSON, the same in every language."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    propose(scripted["tools"])
    code, _, err = ask(folder, capsys, monkeypatch, "sí\n", "--json-events")
    assert code == 0 and CARD[lang][0] in err.splitlines()
    (report,) = [json.loads(line) for line in err.splitlines() if line.startswith('{"ok"')]
    assert report["ok"] is True
    assert [a["op_id"] for a in report["data"]["applied"]] == ["p1", "l1"]
    assert report["data"]["created"] == {"p1": 2} and report["data"]["skipped"] == []


def test_is_yes_takes_the_word_of_the_language_and_yes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The accent may be composed or not; the word must stand alone."""
    for lang in ("ca", "es"):
        monkeypatch.setenv("ARXIU_LANG", lang)
        assert all(is_yes(a) for a in ("sí", "si", "SÍ", "Si", " sí\t", "si\u0301", "yes", "Yes"))
        assert not any(is_yes(a) for a in ("", "s", "no", "oui", "sì", "sí sí", "y", "ja"))
    monkeypatch.setenv("ARXIU_LANG", "en")
    assert is_yes("yes") and is_yes(" YES ")
    assert not any(is_yes(a) for a in ("sí", "si", "y", "yeah", ""))


PARTIAL: JsonObject = {
    "applied": [
        {"op_id": "p1", "result": {"section_id": 4213}, "resumed": True},
        {"op_id": "d1", "result": {"unlinked": [{"section_tipo": "oh1", "section_id": 1,
                                                 "field": "oh24"}]}},
    ],
    "skipped": ["l2"],
    "failed": {
        "op_id": "l1",
        "error": {"ok": False, "error": {
            "code": "mcp.match_ambiguous",
            "message": "Op l1: 2 records of rsc197 match.",
            "hint": "Match on more fields, or name the record to use by its id.",
            "details": {"candidates": [
                {"label": "Anna Pujol", "section_tipo": "rsc197", "section_id": 2},
                {"label": "", "section_tipo": "rsc197", "section_id": 3},
            ]},
        }},
    },
    "created": {"p1": 4213},
}  # fmt: skip
"""The seed's apply response of a partial failure: an op applied in an earlier attempt, a
delete that removed a link first, the failed op (its code, message, hint and the candidates
of an ambiguous match) and the op skipped after it."""
PARTIAL_REPORT = {
    "ca": [
        "aplicat p1 (en un intent anterior)",
        "aplicat d1: unlinked from oh1/1 (oh24)",
        "HA FALLAT l1: [mcp.match_ambiguous] Hi coincideixen diversos registres: Op l1: 2 records "
        "of rsc197 match.",
        "  suggeriment: Fes coincidir més camps, o indica pel seu identificador el registre que "
        "cal fer servir.",
        "  candidat rsc197/2: Anna Pujol",
        "  candidat rsc197/3: …",
        "omès l2",
        "creat p1: section_id 4213",
    ],
    "es": [
        "aplicado p1 (en un intento anterior)",
        "aplicado d1: unlinked from oh1/1 (oh24)",
        "HA FALLADO l1: [mcp.match_ambiguous] Coinciden varios registros: Op l1: 2 records of "
        "rsc197 match.",
        "  sugerencia: Haz coincidir más campos, o indica por su identificador el registro que se "
        "debe usar.",
        "  candidato rsc197/2: Anna Pujol",
        "  candidato rsc197/3: …",
        "omitido l2",
        "creado p1: section_id 4213",
    ],
    "en": [
        "applied p1 (earlier)",
        "applied d1: unlinked from oh1/1 (oh24)",
        "FAILED l1: [mcp.match_ambiguous] Op l1: 2 records of rsc197 match.",
        "  hint: Match on more fields, or name the record to use by its id.",
        "  candidate rsc197/2: Anna Pujol",
        "  candidate rsc197/3: …",
        "skipped l2",
        "created p1: section_id 4213",
    ],
}
"""The report in each language, read back from its JSON: the failed op's code label before a
message the tables do not hold (as ``error [code]:`` lines say it), that message as the core
wrote it, and the hint, a sentence the tables hold, in the language."""


@pytest.mark.parametrize("lang", LANGS)
def test_a_partial_failure_is_reported_in_the_language(
    monkeypatch: pytest.MonkeyPatch, lang: str
) -> None:
    monkeypatch.setenv("ARXIU_LANG", lang)
    report = ApplyReport.from_dict(PARTIAL)
    assert apply_summary(report).splitlines() == PARTIAL_REPORT[lang]


FAILED = {"ca": "HA FALLAT", "es": "HA FALLADO", "en": "FAILED"}


@pytest.mark.parametrize("lang", LANGS)
def test_a_failed_op_is_said_in_the_language(
    lang: str, demo_archive_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real apply on a copy of the demo: create a person, delete it, set a field of it; the
    third op fails, and the report says why in the CLI's language (the core's own message)."""
    monkeypatch.setenv("ARXIU_LANG", lang)
    shutil.copytree(demo_archive_dir, tmp_path / "demo")
    with open_archive(tmp_path / "demo") as archive:
        set_writes_allowed(archive, True)
        registry = build_registry()
        plan = validate_plan({"summary": "x", "ops": FAILING_AT_STEP_3}, archive, registry)
        context = ApplyContext(archive, registry)
        report = asyncio.run(apply_plan(plan.to_dict(), plan.plan_hash, context))
    assert report.failed is not None
    reason = NOT_FOUND[lang]
    assert failure_lines(report.failed) == [
        f"{FAILED[lang]} s1: [archive.record_not_found] {reason}"
    ]
    assert report.failed.message == "Record rsc197/64 does not exist."  # the model's English
    saved = ApplyReport.from_dict(json.loads(json.dumps(report.to_dict())))  # the plan's history
    assert saved.failed is not None and saved.failed.message == report.failed.message
    assert failure_lines(saved.failed) == failure_lines(report.failed)
