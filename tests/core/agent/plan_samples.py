"""Change-plan ops on the demo archive that more than one test applies: a person created, a
field of it set through the plan's reference, and the same person deleted again (so a later op
on it fails: ``archive.record_not_found``)."""

from __future__ import annotations

from app.core.json_types import JsonObject

CREATE_ANNA: JsonObject = {
    "op_id": "c1",
    "tool": "dedalo_create_record",
    "args": {"section_tipo": "rsc197", "values": {"rsc84": "Anna Pujol"}},
    "summary": "create Anna Pujol",
}
SET_HER_BIRTH_DATE: JsonObject = {
    "op_id": "s1",
    "tool": "dedalo_set_field",
    "args": {
        "section_tipo": "rsc197",
        "section_id": {"ref": "c1"},
        "field": "rsc89",
        "value": "1931",
    },
    "summary": "her birth date",
}
DELETE_HER: JsonObject = {
    "op_id": "d1",
    "tool": "dedalo_delete_record",
    "args": {"section_tipo": "rsc197", "section_id": {"ref": "c1"}},
    "summary": "delete it again",
}
FAILING_AT_STEP_3 = [CREATE_ANNA, DELETE_HER, SET_HER_BIRTH_DATE]
"""Step 3 sets a field of the record step 2 deleted: the apply stops there."""
NOT_FOUND = {
    "en": "Record rsc197/64 does not exist.",
    "ca": "El registre rsc197/64 no existeix.",
    "es": "El registro rsc197/64 no existe.",
}
"""Why step 3 fails, in each UI language (the demo archive holds 63 people: the new one is 64)."""
