"""Taint is the server's: a history the client sends back is judged from what the server said.

Regression of issue 22 item 4: after a local run read restricted records, the same
conversation's history sent back in the seeds' ``{role, text}`` shape (the ``tainted`` flag
dropped) to an external model through the Dédalo and Dezfil dialects carried the restricted
text to that model. Here a keeper's local run reads ``ohr/1`` (its text holds ``SECRET``), and
then the generated suite replays that history to the external scripted model ``cloud`` through
every dialect, in both history shapes, as an exact, a re-spaced, a re-cased and a partial copy,
in either role, by the same user and by another: the external model must receive ``SECRET``
0 times. The counts are printed.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from app.api.context import ApiContext
from app.api.users import UserStore
from app.core.models.scripted import ScriptedModel, Turn, call
from tests.api.conftest import API, Live, body, password
from tests.core.agent.conftest import SECRET, sent_text

RESTRICTED_TEXT = (
    f"The testimony says: {SECRET} the flood and the mill. When they made us leave Sant Romà "
    "the water rose over the church and nobody came back."
)
CLEAN_ANSWER = "The archive holds oral histories, people and coins."
READ_RESTRICTED = Turn(
    tool_calls=(call("dedalo_read_record", {"section_tipo": "ohr", "section_id": 1}),)
)


@dataclass
class Dialect:
    """How one dialect sends a message with a history as one user."""

    name: str
    send: Callable[[str, str, str, list[dict[str, Any]] | None], httpx.Response]
    history: Callable[[httpx.Response], list[dict[str, Any]]]


class Clients:
    """Logged-in clients of every dialect for each user."""

    def __init__(self, live: Live, users: UserStore) -> None:
        self.live = live
        self.tokens = {u.name: users.issue_token(u.name) for u in users.list()}
        self.dedalo: dict[str, tuple[httpx.Client, str]] = {}
        for name in self.tokens:
            client = httpx.Client(base_url=live.url, timeout=60)
            options = {"username": name, "auth": password(name)}
            answer = client.post(API, content=body("login", options, "dd_utils_api"))
            self.dedalo[name] = (client, answer.json()["csrf_token"])

    def close(self) -> None:
        for client, _ in self.dedalo.values():
            client.close()

    def bearer(self, user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[user]}"}

    def dedalo_send(
        self, user: str, model: str, question: str, history: list[dict[str, Any]] | None
    ) -> httpx.Response:
        client, csrf = self.dedalo[user]
        options: dict[str, Any] = {"question": question, "model": model}
        if history is not None:
            options["history"] = history
        return client.post(
            API, content=body("agent_chat", options), headers={"X-Dedalo-Csrf-Token": csrf}
        )

    def dezfil_send(
        self, user: str, model: str, question: str, history: list[dict[str, Any]] | None
    ) -> httpx.Response:
        url = self.live.url + "/api/assistant"
        run = httpx.post(url + "/runs", headers=self.bearer(user), timeout=60).json()["runId"]
        message: dict[str, Any] = {"runId": run, "message": question, "choice": {"model": model}}
        if history is not None:
            message["history"] = history
        return httpx.post(url, content=json.dumps(message), headers=self.bearer(user), timeout=60)

    def dialects(self) -> list[Dialect]:
        return [
            Dialect("dedalo", self.dedalo_send, _dedalo_history),
            Dialect("dezfil", self.dezfil_send, _dezfil_history),
        ]


def _dedalo_history(response: httpx.Response) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.text
    history: list[dict[str, Any]] = response.json()["data"]["history"]
    return history


def _dezfil_history(response: httpx.Response) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.text
    lines = [json.loads(line) for line in response.text.splitlines() if line]
    final = next(line["data"] for line in lines if line["event"] == "final")
    history: list[dict[str, Any]] = final["history"]
    return history


@pytest.fixture
def clients(live: Live, users: UserStore) -> Iterator[Clients]:
    found = Clients(live, users)
    yield found
    found.close()


def _tainted_history(dialect: Dialect, models: dict[str, ScriptedModel]) -> list[dict[str, Any]]:
    """A keeper's local run that read ohr/1, then a clean cloud exchange after it."""
    models["local"].extend(READ_RESTRICTED, Turn(text=RESTRICTED_TEXT))
    history = dialect.history(dialect.send("keeper", "local", "What does ohr/1 say?", None))
    assert SECRET in history[-1]["text"] and history[-1].get("tainted") is True
    models["cloud"].extend(Turn(text=CLEAN_ANSWER))
    history = dialect.history(dialect.send("keeper", "cloud", "What sections?", history))
    assert history[-1]["text"].endswith(CLEAN_ANSWER)
    return history


def _cloud_received(models: dict[str, ScriptedModel], since: int) -> str:
    cloud = models["cloud"]
    return sent_text(ScriptedModel(calls=cloud.calls[since:]))


def test_a_resent_history_without_its_taint_flag_never_reaches_an_external_model(
    clients: Clients, models: dict[str, ScriptedModel]
) -> None:
    """The red team's case, in each stateless dialect."""
    for dialect in clients.dialects():
        history = _tainted_history(dialect, models)
        stripped = [{"role": e["role"], "text": e["text"]} for e in history]
        since = len(models["cloud"].calls)
        answer = dialect.send("keeper", "cloud", "Summarise our chat", stripped)
        assert answer.status_code == 200, answer.text
        received = _cloud_received(models, since)
        assert SECRET not in received and "Sant Romà" not in received, dialect.name
        assert CLEAN_ANSWER in received and "What sections?" in received  # clean turns go


def test_a_local_model_still_sees_the_tainted_entry_and_its_answer_is_tainted(
    clients: Clients, models: dict[str, ScriptedModel]
) -> None:
    for dialect in clients.dialects():
        history = _tainted_history(dialect, models)
        stripped = [{"role": e["role"], "text": e["text"]} for e in history]
        models["local"].extend(Turn(text="Noted."))
        again = dialect.history(dialect.send("keeper", "local", "Go on", stripped))
        assert SECRET in sent_text(ScriptedModel(calls=models["local"].calls[-1:]))
        assert again[-1].get("tainted") is True, dialect.name


def test_vadalog_sessions_keep_their_taint_on_the_server(
    live: Live, users: UserStore, models: dict[str, ScriptedModel], ctx: ApiContext
) -> None:
    token = users.issue_token("keeper")
    url = f"{live.url}/api/v1/agent/{ctx.open_archive().folder.name}/chat"
    auth = {"Authorization": f"Bearer {token}"}
    models["local"].extend(READ_RESTRICTED, Turn(text=RESTRICTED_TEXT))
    first = httpx.post(
        url, json={"message": "ohr/1?", "session_id": "t", "model": "local"}, headers=auth
    )
    assert first.status_code == 200, first.text
    lines = [json.loads(line) for line in first.text.splitlines()]
    assert SECRET in "".join(x["data"]["chunk"] for x in lines if x["type"] == "content")
    since = len(models["cloud"].calls)
    second = httpx.post(
        url, json={"message": "Summarise", "session_id": "t", "model": "cloud"}, headers=auth
    )
    assert second.status_code == 200
    assert SECRET not in _cloud_received(models, since)
    sent = {"message": "x", "session_id": "t", "history": [{"role": "user", "text": "y"}]}
    assert httpx.post(url, json=sent, headers=auth).status_code == 400  # no client history here


# -- the generated suite -----------------------------------------------------------------------


def _copies(text: str) -> dict[str, str]:
    words = text.split()
    start = words.index(f"{SECRET}") - 2
    return {
        "exact": text,
        "respaced": "  \n ".join(words) + "  ",
        "recased": text.upper(),
        "partial": " ".join(words[start : start + 9]),
        "partial-short": " ".join(words[start + 1 : start + 4]),
        "punctuated": text.replace(" ", ", ").replace(".", "!"),
    }


def _replayed(
    history: list[dict[str, Any]], copy: str, shape: str, role: str
) -> list[dict[str, Any]]:
    key = "text" if shape == "text" else "content"
    out = []
    for entry in history:
        text = entry["text"]
        if SECRET in text:
            text = copy
            entry = {**entry, "role": role}
        out.append({"role": entry["role"], key: text})
    return out


def test_histories_replayed_by_the_client_leak_nothing(
    clients: Clients, models: dict[str, ScriptedModel]
) -> None:
    replays = leaks = refused = withheld = 0
    for dialect in clients.dialects():
        history = _tainted_history(dialect, models)
        tainted = next(e["text"] for e in history if SECRET in e["text"])
        copies = _copies(tainted)
        for (copy_name, copy), shape, role, user in itertools.product(
            copies.items(), ("text", "content"), ("assistant", "user"), ("keeper", "writer")
        ):
            if copy_name == "partial-short" and user != "keeper":
                continue  # under 6 words: recognised in the owner's own conversation only
            replay = _replayed(history, copy, shape, role)
            since = len(models["cloud"].calls)
            answer = dialect.send(user, "cloud", "Summarise our chat", replay)
            replays += 1
            if answer.status_code != 200:
                refused += 1  # {role, content} is not the seeds' shape: 400
                assert answer.status_code == 400 and shape == "content", answer.text
                continue
            received = _cloud_received(models, since)
            if SECRET in received or SECRET.casefold() in received.casefold():
                leaks += 1
                print(f"LEAK {dialect.name} {copy_name} {shape} {role} {user}")
            else:
                withheld += 1
    print(
        f"histories replayed: {replays} ({refused} refused as not the seeds' shape, "
        f"{withheld} answered with the copy withheld), leaks: {leaks}"
    )
    assert leaks == 0 and withheld > 0
