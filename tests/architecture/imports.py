"""The import graph of walkback's own modules, read from the source with ast (no imports run)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PARTS = ("journal", "agent", "timeline", "importers", "exporters", "viewer", "walkback")


def module_name(path: Path) -> str:
    """The installed name of a source file (``journal/reader.py`` -> ``walkback.journal.reader``)."""
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    if parts[0] != "walkback":
        parts.insert(0, "walkback")
    return ".".join(parts)


def part_of(module: str) -> str:
    """``walkback.journal.reader`` -> ``journal``; the CLI's own modules -> ``walkback``."""
    bits = module.split(".")
    return bits[1] if len(bits) > 1 and bits[1] in PARTS else "walkback"


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int
    lazy: bool
    """Inside a function body (imported when called, not when the module loads)."""


def _type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
    )


def imports_of(path: Path) -> list[Import]:
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(), str(path))
    out: list[Import] = []

    def visit(node: ast.AST, lazy: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                continue
            inner = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for a in child.names:
                    out.append(Import(name, a.name, child.lineno, lazy))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - (child.level - 1)]
                    mod = ".".join(base + ([child.module] if child.module else []))
                else:
                    mod = child.module or ""
                for a in child.names:
                    full = f"{mod}.{a.name}"
                    out.append(Import(name, full if _is_module(full) else mod, child.lineno, lazy))
            visit(child, inner)

    visit(tree, False)
    return out


def _is_module(name: str) -> bool:
    return name in MODULES


def sources() -> list[Path]:
    files: list[Path] = []
    for part in PARTS:
        files.extend(sorted((ROOT / part).rglob("*.py")))
    return files


MODULES = {module_name(p) for p in sources()}


def graph() -> dict[str, list[Import]]:
    """Every walkback module with its imports of other walkback modules."""
    out: dict[str, list[Import]] = {}
    for p in sources():
        out[module_name(p)] = [i for i in imports_of(p) if i.target.startswith("walkback")]
    return out
