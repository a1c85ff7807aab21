"""The one-way flow of ARCHITECTURE.md, checked on the source: each part imports only the parts
to its left, nothing imports the viewer or the command line, and no part has import cycles."""

from __future__ import annotations

from imports import MODULES, PARTS, ROOT, graph, part_of, sources

ALLOWED = {
    "journal": {"journal"},
    "timeline": {"timeline", "journal"},
    "agent": {"agent", "journal"},
    "importers": {"importers", "journal", "timeline"},
    "exporters": {"exporters", "journal", "timeline", "importers"},
    "viewer": {"viewer", "journal", "timeline", "importers"},
    "walkback": set(PARTS),
}
"""Who may import whom. The command line (``walkback``) wires every part together."""
SPINE = {"walkback", "walkback.hookspecs", "walkback.plugins", "walkback.lazy"}
"""The spine every part may use: the plugin hooks to register itself, lazy names (none imports
a part at load time)."""


def _resolve(target: str) -> str:
    while target not in MODULES and "." in target:
        target = target.rpartition(".")[0]
    return target


def test_every_part_imports_only_the_parts_to_its_left() -> None:
    wrong = []
    for module, imps in graph().items():
        mine = part_of(module)
        for imp in imps:
            target = _resolve(imp.target)
            if target in SPINE or mine == "walkback":
                continue
            if part_of(target) not in ALLOWED[mine]:
                wrong.append(f"{module}:{imp.line} imports {target}")
    assert not wrong, "\n".join(wrong)


def test_no_part_is_imported_by_its_top_level_name() -> None:
    """Installed, the parts are walkback.<part>; a bare ``import journal`` works only in the repo."""
    import ast

    bare = []
    for path in sources():
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            bare += [
                f"{path.relative_to(ROOT)}:{node.lineno}: {n}"
                for n in names
                if n.split(".")[0] in PARTS and n.split(".")[0] != "walkback"
            ]
    assert not bare, "\n".join(bare)


def test_there_are_no_import_cycles() -> None:
    """Module-level and lazy imports both count (a lazy import that hides a cycle is still one);
    ``if TYPE_CHECKING:`` imports do not."""
    edges = {
        m: {t for i in imps if (t := _resolve(i.target)) != m and not t == m.rpartition(".")[0]}
        for m, imps in graph().items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    assert not cycles, "\n".join(" <-> ".join(c) for c in cycles)
