"""Scripted runs for screenshots and demos: the real session, a deterministic model.

The answers are written from the open archive's own records (their labels and ids), so every
citation in a screenshot opens a real record.
"""

from __future__ import annotations

import re
from typing import Any

from app.core.archive import Archive, Record, RecordKey
from app.core.json_types import JsonObject, JsonValue
from app.core.models.catalog import catalog_from_data
from app.core.models.scripted import ScriptedModel, Turn, call

SCRIPTED_ENTRY: dict[str, Any] = {
    "id": "local-demo",
    "label": "SmolLM2 135M (local)",
    "provider": "scripted",
    "model": "scripted",
    "egress": "local",
    "default": True,
}
FLOOD_WORDS = re.compile(r"pant[àa]|pantano|reservoir|embassament|water came|van fer marxar", re.I)


def flood_interviews(archive: Archive, limit: int = 3) -> list[Record]:
    """Interviews that talk about the flooded valley (else the first few of the section)."""
    if not archive.has_section("oh1"):
        return []
    found: list[Record] = []
    first: list[Record] = []
    for record in archive.iter_records("oh1"):
        if len(first) < limit:
            first.append(record)
        text = " ".join(str(i.get("value", "")) for items in record.values.values() for i in items)
        if FLOOD_WORDS.search(text):
            found.append(record)
            if len(found) >= limit:
                break
    return found or first


def conversation_script(archive: Archive, lang: str) -> list[Turn]:
    """Search, then a cited answer."""
    records = flood_interviews(archive)
    lines = [
        "Three interviews describe families forced to leave when the reservoir flooded the "
        "valley, each in their own words:",
        "",
    ]
    for record in records:
        label = archive.label_of(record, lang)
        lines.append(f"- **{label}** ({record.key}) — recalls the move and the lost village.")
    lines += [
        "",
        "They agree the houses were cleared before the water came; "
        "the informants were children or young adults at the time.",
    ]
    query = "families who had to leave when the reservoir flooded the valley"
    return (
        [
            Turn(
                thinking="The question is about a concept, so search interviews by meaning.",
                tool_calls=(call("dedalo_search_records", {"section_tipo": "oh1", "limit": 5}),),
            ),
            Turn(text="\n".join(lines), chunk_size=12),
        ]
        if records
        else [Turn(text=f"No interviews about {query} were found.")]
    )


def plan_script(archive: Archive, key: RecordKey | None) -> list[Turn]:
    """A proposed plan: find or create a person, link them as the interview's informant."""
    person_field = _relation_field(archive, key)
    ops: list[JsonValue] = [
        {
            "op_id": "p1",
            "tool": "dedalo_find_or_create",
            "args": {
                "section_tipo": "rsc197",
                "match": {"name": "Anna Pujol"},
                "set": {"birth date": "1931"},
            },
            "summary": "Find or create the person Anna Pujol (born 1931)",
        }
    ]
    if key is not None and person_field is not None:
        ops.append(
            {
                "op_id": "l1",
                "tool": "dedalo_portal_link",
                "args": {
                    "section_tipo": key.section_tipo,
                    "section_id": key.section_id,
                    "field": person_field,
                    "target": {"ref": "p1"},
                },
                "summary": f"Link Anna Pujol as informant of {key}",
            }
        )
    plan: JsonObject = {
        "summary": "Add Anna Pujol and link her as the informant of this interview.",
        "ops": ops,
    }
    return [
        Turn(
            text="I will look for Anna Pujol first, so she is not created twice.",
            tool_calls=(call("propose_change_plan", plan),),
        ),
        Turn(text="The plan is ready for your confirmation."),
    ]


def _relation_field(archive: Archive, key: RecordKey | None) -> str | None:
    if key is None:
        return None
    for field in archive.fields(key.section_tipo):
        if field.kind == "relation" and field.target_section == "rsc197":
            return field.tipo
    return None


def demo_session(archive: Archive, script: list[Turn], lang: str = "lg-eng") -> Any:
    """An ``AssistantSession`` whose only model plays ``script``."""
    from app.core.session import AssistantSession, AssistantSettings

    class DemoSession(AssistantSession):
        """Offers write mode whatever the archive's switch says, to show the confirm card;
        applying is still refused (``mcp.write_disabled``) while the archive's writes are off."""

        @property
        def write_allowed(self) -> bool:
            return True

    catalog = catalog_from_data([dict(SCRIPTED_ENTRY)])
    model = ScriptedModel(list(script), id=SCRIPTED_ENTRY["id"])
    return DemoSession(
        archive,
        catalog,
        settings=AssistantSettings(write_allowed=True, lang=lang),
        model_factory=lambda entry: model,
    )
