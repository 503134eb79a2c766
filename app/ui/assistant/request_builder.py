"""The panel's question as the core's typed :class:`~app.core.agent.request.ChatRequest`.

What the person chose (the model and its effort, read or write mode, the record in context,
the attached images) goes into the request as typed values; the core checks it
(:func:`~app.core.agent.request.check_request`) before anything streams.
"""

from __future__ import annotations

import dataclasses

from app.core.agent.request import ChatRequest, Image, Mode, RecordContext
from app.ui.assistant.composer import ComposerWidget
from app.ui.assistant.model_picker import ModelPicker


def build_request(
    question: str, picker: ModelPicker, mode: Mode, composer: ComposerWidget
) -> ChatRequest:
    """``question`` with the picker's model and effort, ``mode``, and the composer's record
    context and images."""
    key = composer.context_key
    return ChatRequest(
        question,
        model=picker.current_id() or None,
        context=RecordContext(key.section_tipo, key.section_id) if key is not None else None,
        images=tuple(Image(mime, data) for mime, data in composer.images),
        mode=mode,
        effort=picker.current_effort() or None,
    )


def on_model(request: ChatRequest, model_id: str) -> ChatRequest:
    """``request`` asked of the model ``model_id`` instead."""
    return dataclasses.replace(request, model=model_id)
