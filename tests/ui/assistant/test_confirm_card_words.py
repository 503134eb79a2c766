"""The confirm card speaks in words (issue 21, item 6): each op row names sections, fields and
records by their labels in the UI language, a plan reference as the record an earlier step
creates, values as text — no tipo, no ``{"ref": ...}`` — and after Apply the card's title and
footer say what the apply wrote. A create and a set_field through a reference, in ca, es and
en, on a copy of the demo archive."""

from __future__ import annotations

import json
from typing import Any

import pytest
from PySide6.QtGui import QTextDocument

from app.core.agent.apply import ApplyContext, apply_plan
from app.core.agent.plan_preview import plan_previews
from app.core.agent.plan_types import ApplyReport, ChangePlan, PendingPlan
from app.core.agent.plans import validate_plan
from app.core.archive import Archive, RecordKey
from app.core.tools.registry import build_registry
from app.ui.assistant.confirm_card import ConfirmCardWidget
from tests.core.agent.plan_samples import (
    CREATE_ANNA,
    FAILING_AT_STEP_3,
    NOT_FOUND,
    SET_HER_BIRTH_DATE,
)
from tests.ui.conftest import run

OPS = [
    CREATE_ANNA,
    SET_HER_BIRTH_DATE,
    {
        "op_id": "l1",
        "tool": "dedalo_portal_link",
        "args": {"section_tipo": "oh1", "section_id": 1, "field": "oh28", "target": {"ref": "c1"}},
        "summary": "mention her in the interview",
    },
]
NEW = RecordKey("rsc197", 64)
"""The record the create makes (the demo archive holds 63 people)."""
PROPOSED = {
    "en": [
        "Step 1 · create Anna Pujol",
        "Create a record in People\nFull name: Anna Pujol",
        "Set Birth date of Anna Pujol (the new record created in step 1)\nBirth date: 1931",
        "Link Anna Pujol (the new record created in step 1) as People mentioned of "
        "When they made us leave Sant Romà (oh1/1)",
    ],
    "ca": [
        "Pas 1 · create Anna Pujol",
        "Crea un registre a Persones\nNom complet: Anna Pujol",
        "Canvia el camp Data de naixement del registre Anna Pujol (el registre nou creat al "
        "pas 1)\nData de naixement: 1931",
        "Enllaça Anna Pujol (el registre nou creat al pas 1) com a Persones esmentades del "
        "registre Quan ens van fer marxar de Sant Romà (oh1/1)",
    ],
    "es": [
        "Paso 1 · create Anna Pujol",
        "Crea un registro en Personas\nNombre completo: Anna Pujol",
        "Cambia el campo Fecha de nacimiento del registro Anna Pujol (el registro nuevo "
        "creado en el paso 1)\nFecha de nacimiento: 1931",
        "Enlaza Anna Pujol (el registro nuevo creado en el paso 1) como Personas mencionadas "
        "del registro Cuando nos hicieron marchar de Sant Romà (oh1/1)",
    ],
}
APPLIED = {
    "en": (
        "Set Birth date of Anna Pujol (rsc197/64)",
        "Changes applied",
        "Applied: 3 changes written.",
    ),
    "ca": (
        "Canvia el camp Data de naixement del registre Anna Pujol (rsc197/64)",
        "Canvis aplicats",
        "Aplicat: 3 canvis escrits.",
    ),
    "es": (
        "Cambia el campo Fecha de nacimiento del registro Anna Pujol (rsc197/64)",
        "Cambios aplicados",
        "Aplicado: 3 cambios escritos.",
    ),
}
ARCHIVE_LANGS = {"en": "lg-eng", "ca": "lg-cat", "es": "lg-spa"}
CODES = ('"rsc', '"oh', "ref", "{", "dedalo_", "rsc84", "rsc89", "oh28")


def plain(rich: str) -> str:
    document = QTextDocument()
    document.setHtml(rich)
    return document.toPlainText().replace("\u2028", "\n")


def card_for(archive: Archive, plan: ChangePlan, lang: str) -> ConfirmCardWidget:
    previews = plan_previews(archive, plan, ARCHIVE_LANGS[lang])
    return ConfirmCardWidget(PendingPlan(plan, "p"), previews)


def rows_text(card: ConfirmCardWidget) -> list[str]:
    first = card.rows[0].findChildren(type(card.status))[0]
    return [plain(first.text()), *(plain(row.words.text()) for row in card.rows)]


@pytest.mark.parametrize("translated", ["en", "ca", "es"], indirect=True)
def test_the_rows_read_in_words_and_the_footer_says_what_was_written(
    qtbot: Any, qloop: Any, demo: Archive, translated: str
) -> None:
    lang = translated
    registry = build_registry()
    plan = validate_plan({"summary": "Anna Pujol", "ops": OPS}, demo, registry)
    card = card_for(demo, plan, lang)
    qtbot.addWidget(card)
    shown = rows_text(card)
    assert shown == PROPOSED[lang]
    assert not [code for code in CODES for text in shown[1:] if code in text]
    assert "s1 · dedalo_set_field" in card.rows[1].toolTip()  # the raw op, for the curious
    pending_title = card.title.text()
    report = run(qloop, apply_plan(plan.to_dict(), plan.plan_hash, ApplyContext(demo, registry)))
    assert report.ok and report.created == {"c1": NEW.section_id}
    card.show_report(report)
    words, title, footer = APPLIED[lang]
    assert plain(card.rows[1].words.text()).split("\n")[0] == words
    assert card.title.text() == title != pending_title
    assert card.status.text() == footer
    assert "Anna Pujol (rsc197/64)" in plain(card.rows[0].outcome.text())
    assert demo.record_label(NEW, "lg-cat") == "Anna Pujol"


FAILED = {
    "en": ("Changes stopped at a failure", "Failed at step 3: ", "Changes written before it: 2;"),
    "ca": ("Canvis aturats per un error", "Ha fallat al pas 3: ", "Canvis escrits abans: 2;"),
    "es": (
        "Cambios detenidos por un error",
        "Ha fallado en el paso 3: ",
        "Cambios escritos antes: 2;",
    ),
}


@pytest.mark.parametrize("translated", ["en", "ca", "es"], indirect=True)
def test_a_failed_apply_says_where_why_and_how_much_was_written(
    qtbot: Any, qloop: Any, demo: Archive, translated: str
) -> None:
    """Create, delete it again, then set a field of the deleted record: step 3 fails."""
    registry = build_registry()
    plan = validate_plan({"summary": "x", "ops": FAILING_AT_STEP_3}, demo, registry)
    card = card_for(demo, plan, translated)
    qtbot.addWidget(card)
    assert (
        rows_text(card)[2]
        == {
            "en": "Delete Anna Pujol (the new record created in step 1)",
            "ca": "Esborra el registre Anna Pujol (el registre nou creat al pas 1)",
            "es": "Borra el registro Anna Pujol (el registro nuevo creado en el paso 1)",
        }[translated]
    )
    report = run(qloop, apply_plan(plan.to_dict(), plan.plan_hash, ApplyContext(demo, registry)))
    assert report.failed is not None and report.failed.op_id == "s1"
    card.show_report(report)
    title, where, written = FAILED[translated]
    footer = card.status.text()
    assert card.title.text() == title
    assert footer.startswith(where) and written in footer
    assert f"[{report.failed.code}]" in footer and report.failed.code == "archive.record_not_found"
    reason = footer.removeprefix(where).split(f" [{report.failed.code}]")[0]
    assert reason == NOT_FOUND[translated]  # the core's reason, in the UI's language
    reopened = card_for(demo, plan, translated)  # the conversation opened again: saved report
    qtbot.addWidget(reopened)
    reopened.show_report(ApplyReport.from_dict(json.loads(json.dumps(report.to_dict()))))
    assert reopened.status.text() == footer
