"""The core is pure (DESIGN.md: "the core is a pure function of events and time"), so that it
runs and is tested without any adapter, and `now` is always passed in. Read from every file
under `timerd/core/`, `core/rules/` included, on the syntax tree (issue 32 item 1, issue 44
item 1):

- it imports only itself and the standard library modules of `ALLOWED`, an allowlist: a
  module the core has not used before (`datetime`, `uuid`, `random`, `subprocess`, `sys`,
  `pathlib`, `builtins`, ...) is refused until a reviewed one-line change adds it there. Its
  relative imports (`from ..disk import x`) and its imports inside functions are resolved as
  Python resolves them (the import-linter contract `core` in pyproject.toml keeps timerd's
  other rooms and its dependencies out as well);
- it makes no call that does I/O, reads a clock or runs code past these checks, whatever
  object it is made on: the built-ins `open(`, `print(`, `input(`, `__import__(`, `exec(`,
  `eval(`, `compile(`, `breakpoint(` and `__builtins__`; the methods of `DENIED_METHODS`
  (`datetime.now()`, `Path.write_text`, `path.open()`, `time.sleep`: a `Path` or a clock
  handed in from outside is still refused), also when fetched by `getattr(x, "now")`.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from tests.syntax import parse_file

ROOT = Path(__file__).resolve().parents[2] / "timerd"

#: The standard library modules the core may import, one a line: a new one is a reviewed
#: change. None of them does I/O, keeps time or runs code; time, I/O and concurrency are the
#: service's and the adapters' (`now` is passed in; a write goes through the disk writer).
ALLOWED = frozenset({
    "__future__",
    "collections",
    "copy",
    "dataclasses",
    "enum",
    "functools",
    "math",
    "re",
    "types",
    "typing",
})
#: Built-in calls that do I/O, or import or run code past these checks.
DENIED_CALLS = frozenset({"open", "print", "input", "__import__", "exec", "eval", "compile",
                          "breakpoint"})
#: Methods that do I/O or read a clock, on whatever object they are called (the core's own
#: `spec.read(word)` is a word read, so `read` and `write` are not here).
DENIED_METHODS = frozenset({
    "open", "write_text", "write_bytes", "read_text", "read_bytes", "unlink", "mkdir",
    "touch", "rename", "now", "utcnow", "today", "fromtimestamp", "sleep",
    "monotonic", "perf_counter", "time_ns", "system", "popen",
})


def module_name(root: Path, path: Path) -> str:
    """`timerd/core/rules/passive.py` under `root` (the `timerd` directory) as
    `timerd.core.rules.passive` (a package's `__init__.py` as the package)."""
    parts = [root.name, *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(root: Path, path: Path) -> set[str]:
    """Every module `path` imports, anywhere in it (inside functions too), relative imports
    resolved against its package; `from package import name` counts as `package.name` (a
    submodule, or a name of `package`: either way `package` is reached)."""
    name = module_name(root, path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(parse_file(path)):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            out |= {f"{base}.{a.name}" if a.name != "*" else base for a in node.names}
    return out


def core_files(root: Path) -> list[Path]:
    return sorted((root / "core").rglob("*.py"))


def outside_the_allowlist(root: Path) -> set[str]:
    """Imports of the core that are neither a module of `ALLOWED` nor `timerd.core`."""
    return {f"{path.relative_to(root)}: {name}" for path in core_files(root)
            for name in imports(root, path)
            if name.split(".")[0] not in ALLOWED
            and name != "timerd.core" and not name.startswith("timerd.core.")}


def _denied(node: ast.AST) -> str | None:
    """What `node` does that the core may not: a denied built-in called or `__builtins__`
    reached, a denied method called (`x.now()`) or fetched by name (`getattr(x, "now")`)."""
    if isinstance(node, ast.Name) and node.id == "__builtins__":
        return "__builtins__"
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Name) and func.id in DENIED_CALLS:
        return f"{func.id}("
    if isinstance(func, ast.Attribute) and func.attr in DENIED_METHODS:
        return f".{func.attr}("
    if (isinstance(func, ast.Name) and func.id == "getattr" and len(node.args) > 1
            and isinstance(node.args[1], ast.Constant) and node.args[1].value in DENIED_METHODS):
        return f'getattr(..., "{node.args[1].value}")'
    return None


def impurities(root: Path) -> set[str]:
    """The calls `_denied` finds anywhere under `core/`, each with its file and line."""
    out = set()
    for path in core_files(root):
        where = path.relative_to(root)
        for node in ast.walk(parse_file(path)):
            what = _denied(node)
            if what is not None:
                out.add(f"{where}:{getattr(node, 'lineno', 0)}: {what}")
    return out


def test_the_core_imports_only_the_allowed_stdlib_modules_and_itself() -> None:
    assert len(core_files(ROOT)) > 25
    assert any("rules" in p.parts for p in core_files(ROOT))
    assert outside_the_allowlist(ROOT) == set()


def test_every_allowed_module_is_of_the_stdlib_and_used() -> None:
    """The allowlist names nothing outside the standard library, and nothing the core no longer
    imports (so it cannot grow a module by a name kept 'just in case')."""
    used = {name.split(".")[0] for path in core_files(ROOT) for name in imports(ROOT, path)}
    assert set(sys.stdlib_module_names) >= ALLOWED
    assert used >= ALLOWED


def test_the_core_does_no_io_and_keeps_no_time_of_its_own() -> None:
    assert impurities(ROOT) == set()


def test_the_checks_resolve_what_python_resolves(tmp_path: Path) -> None:
    """Relative imports, imports inside functions, subpackages and `from x import y`; a denied
    call on any object."""
    rules = tmp_path / "timerd" / "core" / "rules"
    rules.mkdir(parents=True)
    (rules / "x.py").write_text(
        "from ..clock import MatchClock\nfrom ... import disk\nfrom ...wire import a\n"
        "def f(path, clock):\n    import os.path\n    from datetime import datetime\n"
        "    open('f')\n    path.write_text('x')\n    getattr(clock, 'now')()\n"
        "    return __builtins__\n")
    root = tmp_path / "timerd"
    assert outside_the_allowlist(root) == {
        "core/rules/x.py: timerd.disk", "core/rules/x.py: timerd.wire.a",
        "core/rules/x.py: os.path", "core/rules/x.py: datetime.datetime"}
    assert impurities(root) == {"core/rules/x.py:7: open(", "core/rules/x.py:8: .write_text(",
                                'core/rules/x.py:9: getattr(..., "now")',
                                "core/rules/x.py:10: __builtins__"}
