"""The Python package is cut in layers and imports run one way: a module may import its own layer and the
layers below it, never one above. Lazy imports inside functions count too."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "brokerstream"

# lowest first; see python/README.md for what each holds
LAYERS = ["common", "clients", "launcher", "gen", "ops", "metrics", "loadtest", "lab", "cli"]
TOP_LEVEL_MODULES = {"__init__", "__main__"}  # the package root holds layers, not loose modules


def layer_of(module: str) -> str:
    """`brokerstream.loadtest.bench.drain` -> `loadtest`; the package itself -> ``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def imports_of(path: Path, module: str) -> list[tuple[int, str]]:
    """(line, imported module) for every import of ours in a file, relative ones resolved."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "brokerstream"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "brokerstream":
                continue
            if target == "brokerstream":  # `from brokerstream import gen`: each name is a module
                found += [(node.lineno, f"brokerstream.{a.name}") for a in node.names]
            else:
                # `from brokerstream.loadtest.bench import drain` imports the module drain
                found += [
                    (node.lineno, f"{target}.{a.name}" if _is_module(f"{target}.{a.name}") else target)
                    for a in node.names
                ]
    return found


def _is_module(name: str) -> bool:
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        name = ".".join(rel.parts)
        yield path, name[: -len(".__init__")] if name.endswith(".__init__") else name


def violations(rank: dict[str, int]) -> list[str]:
    out = []
    for path, module in modules():
        own = layer_of(module)
        if own not in rank:
            continue
        for line, target in imports_of(path, module):
            to = layer_of(target)
            if to and rank.get(to, len(rank)) > rank[own]:
                out.append(f"{path.relative_to(PACKAGE)}:{line}: {own} imports {target} ({to} is above it)")
    return out


def test_every_module_lives_in_a_layer():
    loose = [p.name for p in PACKAGE.iterdir() if p.suffix == ".py" and p.stem not in TOP_LEVEL_MODULES]
    folders = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert loose == []
    assert folders == sorted(LAYERS)


def test_imports_run_from_upper_layers_to_lower_ones_only():
    assert violations({name: i for i, name in enumerate(LAYERS)}) == []


def test_the_check_catches_an_import_against_the_direction():
    # the same code judged with the layers reversed must break: the check is not vacuous
    upside_down = {name: i for i, name in enumerate(reversed(LAYERS))}
    found = violations(upside_down)
    assert any(v.startswith("launcher/") and "imports brokerstream.common" in v for v in found)
    assert len(found) > 20


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_two_modules_import_each_other_even_lazily():
    graph = {m: {t for _, t in imports_of(p, m) if t != m} for p, m in modules()}
    assert cycles(graph) == []


def test_the_cycle_check_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_relative_imports_are_resolved_to_their_layer(tmp_path):
    f = tmp_path / "x.py"
    f.write_text("from ..common import config\nfrom . import usl\nfrom brokerstream import gen, ops\n")
    assert imports_of(f, "brokerstream.lab.x") == [
        (1, "brokerstream.common.config"),
        (2, "brokerstream.lab.usl"),
        (3, "brokerstream.gen"),
        (3, "brokerstream.ops"),
    ]
