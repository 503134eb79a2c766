"""The shape the code keeps: no import cycle in ``app/``, no function over 60 lines, and few
``dict[str, Any]`` in the core's signatures.

All are measured on the source itself (grimp for the import graph, with ``TYPE_CHECKING`` and
function-level imports counted; :mod:`ast` for function lengths and annotations), so a
regression names its offenders.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import Counter
from pathlib import Path

import grimp

REPO = Path(__file__).resolve().parents[1]
APP = REPO / "app"
MAX_FUNCTION_LINES = 60
MAX_DICT_ANY_SIGNATURES = 57
"""The most ``dict[str, Any]`` the signatures under ``app/core`` may hold, names that stand for
one included (see :func:`dict_any_in_signatures`; 295 when first counted without them, 264
in the review that asked for at most 60); lowered as typed objects replace them, never
raised."""
DICT_ANY = "dict[str, Any]"


def import_cycles(graph: grimp.ImportGraph, package: str) -> list[list[str]]:
    """The strongly connected groups of more than one module among ``package``'s modules
    (Tarjan's algorithm on the direct imports), each sorted, in module order."""
    modules = sorted(m for m in graph.modules if m == package or m.startswith(package + "."))
    inside = set(modules)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module) & inside):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for module in modules:
        if module not in index:
            visit(module)
    return sorted(groups)


def long_functions(root: Path, limit: int) -> list[str]:
    """``path:line name (N lines)`` for every function or method under ``root`` longer than
    ``limit`` lines (decorators excluded, docstring included)."""
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > limit:
                    where = path.relative_to(root.parent)
                    found.append(f"{where}:{node.lineno} {node.name} ({length} lines)")
    return found


def dict_any_aliases(root: Path) -> dict[str, int]:
    """Every module-level name under ``root`` that stands for ``dict[str, Any]`` (``Values =
    dict[str, list[dict[str, Any]]]``, ``Args: TypeAlias = "dict[str, Any]"``, or a name made
    of such names), with how many ``dict[str, Any]`` it stands for."""
    assigned: dict[str, str] = {}
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                target, value = node.target, node.value
            else:
                continue
            quoted = isinstance(node, ast.AnnAssign) and ast.unparse(node.annotation).endswith(
                "TypeAlias"
            )
            if isinstance(target, ast.Name) and isinstance(value, ast.Constant):
                if quoted and isinstance(value.value, str):  # a string is an alias only if said
                    assigned[target.id] = value.value
            elif isinstance(target, ast.Name):
                assigned[target.id] = ast.unparse(value)
    aliases: dict[str, int] = {}
    changed = True
    while changed:  # a name made of names: resolve until nothing new is found
        changed = False
        for name, text in assigned.items():
            count = _dict_any_count(text, aliases)
            if count and aliases.get(name) != count:
                aliases[name] = count
                changed = True
    return aliases


def _dict_any_count(text: str, aliases: dict[str, int]) -> int:
    """``dict[str, Any]`` occurrences in ``text``, a name in ``aliases`` counting as many as
    it stands for."""
    named = sum(
        count * len(re.findall(rf"\b{re.escape(name)}\b", text)) for name, count in aliases.items()
    )
    return text.count(DICT_ANY) + named


def dict_any_in_signatures(root: Path) -> Counter[str]:
    """Per file under ``root`` (path relative to ``root``'s parent), how many times
    ``dict[str, Any]`` occurs in its functions' annotations: every parameter's (positional-only,
    ordinary, keyword-only, ``*args``, ``**kwargs``) and the return's, of every function and
    method at any depth (nested ones too), each annotation rendered with :func:`ast.unparse`
    and its substring occurrences counted (``list[dict[str, Any]] | None`` counts 1,
    ``tuple[dict[str, Any], dict[str, Any]]`` counts 2). A module-level name that stands for
    ``dict[str, Any]`` (:func:`dict_any_aliases`) counts as what it stands for wherever it is
    used in an annotation, so an alias cannot hide one. Annotations of variables and class
    fields are not counted. Files with none are left out."""
    aliases = dict_any_aliases(root)
    found: Counter[str] = Counter()
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        where = str(path.relative_to(root.parent))
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            args = node.args
            params = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
            annotations = [p.annotation for p in params if p is not None] + [node.returns]
            for annotation in annotations:
                if annotation is not None:
                    found[where] += _dict_any_count(ast.unparse(annotation), aliases)
    return +found


def test_app_has_no_import_cycle() -> None:
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    graph = grimp.build_graph("app", include_external_packages=False)
    cycles = import_cycles(graph, "app")
    assert cycles == [], "import cycles in app/:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_no_function_in_app_is_over_60_lines() -> None:
    offenders = long_functions(APP, MAX_FUNCTION_LINES)
    assert offenders == [], f"functions over {MAX_FUNCTION_LINES} lines:\n" + "\n".join(offenders)


def test_the_core_signatures_hold_few_dict_str_any() -> None:
    found = dict_any_in_signatures(APP / "core")
    total = sum(found.values())
    top = "\n".join(f"{count:4} app/{path}" for path, count in found.most_common(10))
    assert total <= MAX_DICT_ANY_SIGNATURES, (
        f"{total} {DICT_ANY} in app/core signatures (at most {MAX_DICT_ANY_SIGNATURES}): type "
        f"what has a known shape (a dataclass, a TypedDict), Mapping[str, object] for open "
        f"JSON. The files holding most:\n{top}"
    )


def test_the_checks_find_a_cycle_and_a_long_function(tmp_path: Path) -> None:
    """The two checks above can fail: a made-up cycle and a made-up long function are found."""
    graph = grimp.ImportGraph()
    for name in ("pkg", "pkg.a", "pkg.b", "pkg.c"):
        graph.add_module(name)
    graph.add_import(importer="pkg.a", imported="pkg.b")
    graph.add_import(importer="pkg.b", imported="pkg.a")
    graph.add_import(importer="pkg.c", imported="pkg.a")
    assert import_cycles(graph, "pkg") == [["pkg.a", "pkg.b"]]

    package = tmp_path / "pkg"
    package.mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    (package / "long.py").write_text(f"def short():\n    pass\n\n\ndef too_long():\n{body}\n")
    assert long_functions(package, MAX_FUNCTION_LINES) == [
        f"pkg/long.py:5 too_long ({MAX_FUNCTION_LINES + 1} lines)"
    ]

    (package / "typed.py").write_text(
        "from typing import Any\n\n\n"
        "def f(a: dict[str, Any], *rest: dict[str, Any], **kw: dict[str, Any]) -> tuple[\n"
        "    dict[str, Any], dict[str, Any] | None]:\n"
        "    def inner(b: list[dict[str, Any]]) -> None:\n"
        "        x: dict[str, Any] = {}\n\n"
        "    return {}, None\n"
    )
    assert dict_any_in_signatures(package) == {"pkg/typed.py": 6}

    (package / "aliased.py").write_text(
        "from typing import Any, TypeAlias\n\n"
        "Row = dict[str, Any]\n"
        'Rows: TypeAlias = "list[Row]"\n'
        "Pair = tuple[Row, dict[str, Any]]\n\n\n"
        "def g(a: Row, b: Rows) -> Pair:\n"
        "    return {}, {}\n"
    )
    assert dict_any_aliases(package) == {"Row": 1, "Rows": 1, "Pair": 2}
    assert dict_any_in_signatures(package)["pkg/aliased.py"] == 4


def class_lines(path: Path, name: str) -> int:
    """The length in lines of class ``name`` in ``path`` (decorators excluded)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == name]
    assert len(found) == 1, f"{name} in {path}"
    return (found[0].end_lineno or found[0].lineno) - found[0].lineno + 1


def test_the_run_and_the_panel_stay_small() -> None:
    """The agent run is the loop and the panel only shows (issue 23): each at most 200 lines."""
    assert class_lines(APP / "core/agent/loop.py", "AgentRun") <= 200
    assert class_lines(APP / "ui/assistant/panel.py", "AssistantPanel") <= 200
