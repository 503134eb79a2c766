"""``docs/architecture.md`` stays true to the code.

Every ``app/...`` directory and every dotted ``app.x.y`` name it mentions is a package (or, for a
dotted name, a module) that exists; every package under ``app/`` is mentioned; every ``.py`` file
it names under ``app/`` or ``tests/`` exists; and every name in parentheses right after a file,
``app/core/agent/loop.py`` (``AgentRun``), is defined in that file. The checks are functions of
the text, so the last test shows each of them failing on a made-up page.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "architecture.md"

PATH_TOKEN = re.compile(r"(?<![\w/.-])app/(?:[A-Za-z_]\w*(?:/[A-Za-z_]\w*)*(?:\.py)?/?)?(?!\w)")
"""``app/``, ``app/core/agent/``, ``app/core/agent/loop.py``: a path inside the package (the
word "app" alone is not one)."""
DOTTED_TOKEN = re.compile(r"(?<![\w/.-])app(?:\.[A-Za-z_]\w*)+")
"""``app.core.agent``: a dotted module or package name."""
TEST_FILE = re.compile(r"(?<![\w/.-])tests(?:/[A-Za-z_]\w*)+\.py(?!\w)")
"""``tests/ui/test_crash.py``: a test file."""
FILE_WITH_NAMES = re.compile(r"`(app/[\w/]+\.py)`\s*\(([^)]*)\)")
"""A backquoted file followed by parentheses: ``app/x.py`` (``Name``, ``Other.method``)."""
NAME = re.compile(r"`([A-Za-z_][\w.]*)`")


def packages(root: Path = REPO) -> list[str]:
    """Every package under ``app/`` (a directory holding ``__init__.py``), as ``app/x/y``."""
    found = [path.parent for path in (root / "app").rglob("__init__.py")]
    return sorted(path.relative_to(root).as_posix() for path in found)


def path_tokens(text: str) -> set[str]:
    """The ``app/...`` paths ``text`` names (a trailing ``/`` dropped)."""
    return {token.rstrip("/") for token in PATH_TOKEN.findall(text)}


def dotted_tokens(text: str) -> set[str]:
    """The dotted ``app.x.y`` names ``text`` mentions."""
    return set(DOTTED_TOKEN.findall(text))


def missing_packages(text: str, root: Path = REPO) -> list[str]:
    """Paths without ``.py`` that are not packages, and dotted names that are neither a
    package nor a module."""
    bad = [
        token
        for token in path_tokens(text)
        if not token.endswith(".py") and not (root / token / "__init__.py").is_file()
    ]
    for name in dotted_tokens(text):
        path = root / name.replace(".", "/")
        if not ((path / "__init__.py").is_file() or path.with_suffix(".py").is_file()):
            bad.append(name)
    return sorted(bad)


def missing_files(text: str, root: Path = REPO) -> list[str]:
    """The ``.py`` files under ``app/`` or ``tests/`` that ``text`` names and that do not exist."""
    named = {t for t in path_tokens(text) if t.endswith(".py")} | set(TEST_FILE.findall(text))
    return sorted(name for name in named if not (root / name).is_file())


def unnamed_packages(text: str, root: Path = REPO) -> list[str]:
    """The packages under ``app/`` that ``text`` never names (by path or dotted name)."""
    named = path_tokens(text) | {name.replace(".", "/") for name in dotted_tokens(text)}
    return [package for package in packages(root) if package not in named]


def defines(source: str, name: str) -> bool:
    """Whether ``source`` defines ``name``: a function, a class, or an assignment (annotated
    or not, at any indentation)."""
    word = re.escape(name)
    definition = rf"^\s*(?:(?:async\s+)?def|class)\s+{word}\b|^\s*{word}\s*(?::|=(?!=))"
    return re.search(definition, source, re.MULTILINE) is not None


def undefined_names(text: str, root: Path = REPO) -> list[str]:
    """``file: Name`` for each name in parentheses after a file that the file does not define
    (each part of ``Class.method`` must be defined there)."""
    bad: list[str] = []
    for file, inside in FILE_WITH_NAMES.findall(text):
        path = root / file
        if not path.is_file():
            continue  # reported by missing_files
        source = path.read_text(encoding="utf-8")
        for name in NAME.findall(inside):
            if not all(defines(source, part) for part in name.split(".")):
                bad.append(f"{file}: {name}")
    return bad


def doc_text() -> str:
    """The architecture page."""
    return DOC.read_text(encoding="utf-8")


def test_every_package_the_doc_names_exists() -> None:
    assert missing_packages(doc_text()) == []


def test_every_package_under_app_is_named_in_the_doc() -> None:
    assert unnamed_packages(doc_text()) == []


def test_every_file_the_doc_names_exists() -> None:
    assert missing_files(doc_text()) == []


def test_every_name_after_a_file_is_defined_in_it() -> None:
    assert undefined_names(doc_text()) == []


def test_the_checks_find_what_is_wrong() -> None:
    page = (
        "The loop is `app/core/agent/` and `app.core.agent.loop`; a made-up "
        "`app/core/nowhere/` package, `app.core.agent.loop.AgentRun` (an attribute, not a "
        "module), `app/core/agent/gone.py`, `tests/core/test_gone.py`, and "
        "`app/core/agent/loop.py` (`AgentRun`, `AgentRun.events`, `NoSuchThing`, "
        "`AgentRun.no_such_method`)."
    )
    assert missing_packages(page) == ["app.core.agent.loop.AgentRun", "app/core/nowhere"]
    assert missing_files(page) == ["app/core/agent/gone.py", "tests/core/test_gone.py"]
    assert undefined_names(page) == [
        "app/core/agent/loop.py: NoSuchThing",
        "app/core/agent/loop.py: AgentRun.no_such_method",
    ]
    unnamed = unnamed_packages(page)
    assert "app/core/agent" not in unnamed
    assert {"app", "app/ui", "app/core/archive/importers"} <= set(unnamed)
    assert set(packages()) >= {"app", "app/core/agent", "app/ui/importing"}
