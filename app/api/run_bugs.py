"""A bug in a served run: logged with its traceback, answered as a coded ``api.internal``.

The core raises a bug on, to the app's crash dialog or the CLI's exit code, after keeping the
partial answer; a server must answer and go on serving. So each dialect streams a run through
:func:`coded_bugs`: a bug ends the stream with one ``error`` frame, ``api.internal`` of category
``internal`` (a 500 where the dialect answers with a status, as :mod:`app.api.server` answers a
bug outside a run).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from app.core.agent.events import ErrorEvent, Event
from app.core.errors import ArxiuError, log_bug

log = logging.getLogger(__name__)


def internal_error() -> ArxiuError:
    """The coded error a client gets for a bug."""
    return ArxiuError(
        "api.internal", "The server failed unexpectedly.", hint="Try again.", category="internal"
    )


async def coded_bugs(events: AsyncIterator[Event]) -> AsyncIterator[Event]:
    """``events``, ended by one ``error`` frame where they raise (closed when this stream is)."""
    try:
        async for event in events:
            yield event
    except ArxiuError as error:
        yield ErrorEvent.from_error(error)
    except Exception as error:  # a bug: logged once, the client answered, the server goes on
        log_bug(log, error, "a served run")
        yield ErrorEvent.from_error(internal_error())
    finally:
        closer = getattr(events, "aclose", None)
        if closer is not None:
            await closer()
