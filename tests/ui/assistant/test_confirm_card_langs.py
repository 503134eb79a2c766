"""The confirm card names languages in the UI's language, never by their codes: a value's
language (``ca: Mestra`` → ``Catalan: Mestra``) and a field that holds one (the demo's
interview language, ``lg-cat`` → ``Catalan``), in ca, es and en, on a copy of the demo
archive."""

from __future__ import annotations

import re
from typing import Any

import pytest
from PySide6.QtGui import QTextDocument

from app.core.agent.plan_preview import plan_previews
from app.core.agent.plan_types import PendingPlan
from app.core.agent.plans import validate_plan
from app.core.archive import Archive, RecordKey
from app.core.tools.registry import build_registry
from app.ui import i18n
from app.ui.assistant.confirm_card import ConfirmCardWidget
from app.ui.assistant.plan_langs import named_langs

INTERVIEW = RecordKey("oh1", 1)
OPS = [
    {
        "op_id": "s1",
        "tool": "dedalo_set_field",
        "args": {"section_tipo": "oh1", "section_id": 1, "field": "oh31", "value": "lg-spa"},
        "summary": "the interview is in Spanish",
    },
    {
        "op_id": "s2",
        "tool": "dedalo_set_field",
        "args": {
            "section_tipo": "oh1",
            "section_id": 1,
            "field": "oh16",
            "value": "Ens van fer marxar",
            "lang": "lg-cat",
        },
        "summary": "a shorter Catalan title",
    },
    {
        "op_id": "c1",
        "tool": "dedalo_save_component",
        "args": {
            "section_tipo": "oh1",
            "section_id": 1,
            "field": "oh32",
            "items": [{"lang": "lg-cat", "value": "pantà"}, {"lang": "lg-fra", "value": "barrage"}],
        },
        "summary": "keywords",
    },
]
EXPECTED = {
    "en": ("Language: Catalan → Spanish", "Title:", "→ Catalan: Ens van fer marxar", "French"),
    "ca": ("Llengua: Català → Castellà", "Títol:", "→ Català: Ens van fer marxar", "Francès"),
    "es": ("Lengua: Catalán → Castellano", "Título:", "→ Catalán: Ens van fer marxar", "Francés"),
}
CODE = re.compile(r"\blg-[a-z]{3}\b|(?:^|[ >·] ?)(?:ca|es|en|fr): ")


def _plain(rich: str) -> list[str]:
    document = QTextDocument()
    document.setHtml(rich)
    return document.toPlainText().replace("\u2028", "\n").splitlines()


@pytest.mark.parametrize("translated", ["en", "ca", "es"], indirect=True)
def test_the_card_names_languages_in_the_ui_language(
    qtbot: Any, demo: Archive, translated: str
) -> None:
    lang = translated
    stored = demo.get_record(INTERVIEW).items("oh31")
    assert [item["value"] for item in stored] == ["lg-cat"]  # the demo holds the code
    plan = validate_plan({"summary": "Spanish", "ops": OPS}, demo, build_registry())
    previews = plan_previews(demo, plan, i18n.ARCHIVE_LANGS[lang])
    card = ConfirmCardWidget(PendingPlan(plan, "p"), previews)
    qtbot.addWidget(card)
    language, title_label, title_after, french = EXPECTED[lang]

    rows = [_plain(row.words.text()) for row in card.rows]

    assert rows[0][1] == language
    assert rows[1][1].startswith(title_label) and rows[1][1].endswith(title_after)
    assert french in rows[2][1]
    shown = [line for row in rows for line in row[1:]]
    assert not [line for line in shown if CODE.search(line)], shown


def test_text_that_only_looks_like_a_code_is_left_alone(qapp: Any) -> None:
    assert named_langs("see: the letters · lg-cat") == "see: the letters · Catalan"
    assert named_langs("Vic (tp1/8) · ca: Vic") == "Vic (tp1/8) · Catalan: Vic"
    assert named_langs("lg-zzz") == "lg-zzz"  # no language has this code
    assert named_langs("lg-grc: no") == "lg-grc: no"
