"""The record view's "Linked from": a record linking through two fields is listed once, with
both fields; a record the page already shows in its own fields is not listed again."""

from __future__ import annotations

from typing import Any

from app.core.archive import Field
from app.ui.browser.record_html import record_link
from tests.ui.conftest import key, run


def _linked_from_lines(window: Any) -> list[str]:
    lines: list[str] = window.record_view.browser.toPlainText().splitlines()
    return lines[lines.index("Linked from") + 1 :] if "Linked from" in lines else []


def test_a_record_is_linked_from_once_with_all_its_fields(make_window: Any) -> None:
    archive = make_window.archive
    archive.put_field(
        Field(
            "oh1_interviewer",
            "oh1",
            {"lg-eng": "Interviewer"},
            "relation",
            target_section="rsc197",
            position=4,
        )
    )
    archive.put_field(
        Field(
            "rsc197_interviews",
            "rsc197",
            {"lg-eng": "Interviews"},
            "relation",
            target_section="oh1",
            position=3,
        )
    )
    maria = key("rsc197", 1)  # the informant of oh1/1
    pantà, riada, mercat = key("oh1", 1), key("oh1", 2), key("oh1", 3)
    for interview in (pantà, riada, mercat):
        archive.set_field(interview, "oh1_interviewer", [{"value": maria.to_locator()}])
    archive.set_field(maria, "rsc197_interviews", [{"value": mercat.to_locator()}])  # both sides
    window = make_window()
    run(make_window.loop, window.reload_shown())

    window.open_record(maria)

    assert _linked_from_lines(window) == [
        f"{archive.record_label(pantà, 'lg-eng')} Oral history · oh1/1 · Informant, Interviewer",
        f"{archive.record_label(riada, 'lg-eng')} Oral history · oh1/2 · Interviewer",
    ]
    html = window.record_view.browser.toHtml()
    assert html.count(record_link(pantà)) == 1
    assert html.count(record_link(mercat)) == 1  # in Interviews, not again below
