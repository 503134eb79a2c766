"""A written value's language: the text's, else the question's, else the UI's; a set_field in
one language replaces only that language's value."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.archive import Archive, RecordKey
from app.core.json_types import JsonObject
from app.core.tools.base import ToolContext
from app.core.tools.registry import ToolRegistry
from app.core.tools.value_langs import ValueLangs, value_lang, with_value_langs
from app.core.tools.write import validate_write_args

CATALAN_QUESTION = "Afegeix que la Maria Vila va ser mestra de l'escola"
TITLE = RecordKey("oh1", 1)


@pytest.mark.parametrize(
    ("text", "question", "ui", "stored"),
    [
        ("Mestra", CATALAN_QUESTION, "lg-eng", "lg-cat"),  # one word: the question decides
        ("Maestra", "¿Puedes poner que la informante fue maestra de escuela?", "lg-cat", "lg-spa"),
        ("Mestra", "", "lg-spa", "lg-spa"),  # no question: the UI's, the last resort
        ("Mestra", "Mestra", "lg-eng", "lg-eng"),  # a question without evidence: the UI's
        (
            "va ser mestra a l'escola del poble",
            "Set her occupation",
            "lg-eng",
            "lg-cat",
        ),  # the text
        ("the village school's teacher", CATALAN_QUESTION, "lg-spa", "lg-eng"),
    ],
)
def test_the_text_then_the_question_then_the_ui_decide(
    text: str, question: str, ui: str, stored: str
) -> None:
    assert value_lang(text, ValueLangs.of(question, ui)) == stored


def test_only_multilingual_text_without_a_language_gets_one(
    registry: ToolRegistry, oral: Archive
) -> None:
    langs = ValueLangs.of(CATALAN_QUESTION, "lg-eng")
    plain: JsonObject = {"section_tipo": "oh1", "section_id": 1, "field": "oh16", "value": "Marxar"}
    assert with_value_langs("dedalo_set_field", plain, oral, langs)["lang"] == "lg-cat"
    given: JsonObject = {**plain, "lang": "lg-spa"}
    assert with_value_langs("dedalo_set_field", given, oral, langs) == given
    neutral: JsonObject = {
        "section_tipo": "rsc197",
        "section_id": 1,
        "field": "rsc85",
        "value": "Anna",
    }
    assert with_value_langs("dedalo_set_field", neutral, oral, langs) == neutral
    create: JsonObject = {"section_tipo": "oh1", "values": {"oh16": "La presa", "oh24": 1}}
    assert with_value_langs("dedalo_create_record", create, oral, langs)["values"] == {
        "oh16": {"lang": "lg-cat", "value": "La presa"},
        "oh24": 1,
    }
    find: JsonObject = {
        "section_tipo": "oh1",
        "match": {"oh16": "La presa"},
        "set": {"oh16": "La presa"},
    }
    tagged = with_value_langs("dedalo_find_or_create", find, oral, langs)
    assert tagged["match"] == {"oh16": "La presa"}  # compared with every language's values
    assert tagged["set"] == {"oh16": {"lang": "lg-cat", "value": "La presa"}}
    tagged = with_value_langs("dedalo_create_record", create, oral, langs)
    again = validate_write_args(registry, "dedalo_create_record", tagged, oral)
    assert isinstance(again, dict) and isinstance(again["values"], dict)
    assert again["values"]["oh16"] == {"lang": "lg-cat", "value": "La presa"}  # still valid


async def _set(registry: ToolRegistry, ctx: ToolContext, **args: Any) -> None:
    base = {"section_tipo": "oh1", "section_id": 1, "field": "oh16"}
    result = await registry.call("dedalo_set_field", {**base, **args}, ctx)
    assert result.ok, f"{result.code}: {result.message}"


def _title(oral: Archive) -> dict[str, str]:
    return {i["lang"]: i["value"] for i in oral.get_record(TITLE).items("oh16")}


async def test_a_set_field_in_one_language_keeps_the_others(
    registry: ToolRegistry, ctx: ToolContext, oral: Archive
) -> None:
    before = _title(oral)
    assert before == {"lg-cat": "Quan ens van fer marxar", "lg-eng": "When they made us leave"}
    await _set(registry, ctx, value="Marxar", lang="lg-cat")
    assert _title(oral) == {**before, "lg-cat": "Marxar"}
    await _set(registry, ctx, value={"lg-spa": "Marcharse", "lg-eng": "Leaving"})
    assert _title(oral) == {"lg-cat": "Marxar", "lg-spa": "Marcharse", "lg-eng": "Leaving"}
    await _set(registry, ctx, value="Going away")  # no language: the context's, English here
    assert _title(oral) == {"lg-cat": "Marxar", "lg-spa": "Marcharse", "lg-eng": "Going away"}
    await _set(registry, ctx, value=None, lang="lg-spa")
    assert _title(oral) == {"lg-cat": "Marxar", "lg-eng": "Going away"}
    await _set(registry, ctx, value=None)  # null without a language clears the field
    assert _title(oral) == {}
