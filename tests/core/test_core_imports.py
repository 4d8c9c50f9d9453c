"""The core is pure (DESIGN.md: "the core is a pure function of events and time"), so that it
runs and is tested without any adapter, and `now` is always passed in. Read from every file
under `timerd/core/`, `core/rules/` included (issue 32 item 1):

- it imports only the standard library and itself, its relative imports (`from ..disk
  import x`) and its imports inside functions resolved as Python resolves them (the
  import-linter contract `core` in pyproject.toml says the same of timerd's other rooms and
  its dependencies; this reads the standard library's own list, which a contract cannot);
- and, by a denylist, it touches no clock, loop, thread, socket, file or log: no `asyncio`,
  `time`, `os`, `socket`, `threading`, `logging` (nor a submodule of one), no `open(` or
  `print(` call (nor `input(`, and nothing that imports past the check: `importlib`,
  `__import__(`, `exec(`, `eval(`).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "timerd"

#: The standard library's modules the core may not use: time, I/O and concurrency are the
#: service's and the adapters' (`now` is passed in; a write goes through the disk writer);
#: `importlib` would import any of them past these checks.
DENIED = frozenset({"asyncio", "time", "os", "socket", "threading", "logging", "importlib"})
#: Built-in calls that do I/O, or import or run code past these checks.
DENIED_CALLS = frozenset({"open", "print", "input", "__import__", "exec", "eval"})


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
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
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


def outside_the_stdlib(root: Path) -> set[str]:
    """Imports of the core that are neither the standard library nor `timerd.core`."""
    return {f"{path.relative_to(root)}: {name}" for path in core_files(root)
            for name in imports(root, path)
            if name.split(".")[0] not in sys.stdlib_module_names
            and name != "timerd.core" and not name.startswith("timerd.core.")}


def impurities(root: Path) -> set[str]:
    """What the denylist finds under `core/`: a denied module imported (anywhere in a file,
    as `x`, `x.y` or `from x import y`), or `open(`/`print(` called."""
    out = set()
    for path in core_files(root):
        where = path.relative_to(root)
        out |= {f"{where}: import {name}" for name in imports(root, path)
                if name.split(".")[0] in DENIED}
        out |= {f"{where}:{node.lineno}: {node.func.id}("
                for node in ast.walk(ast.parse(path.read_text(), str(path)))
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in DENIED_CALLS}
    return out


def test_the_core_imports_only_the_stdlib_and_itself() -> None:
    assert len(core_files(ROOT)) > 25
    assert any("rules" in p.parts for p in core_files(ROOT))
    assert outside_the_stdlib(ROOT) == set()


def test_the_core_does_no_io_and_keeps_no_time_of_its_own() -> None:
    assert impurities(ROOT) == set()


def test_the_checks_resolve_what_python_resolves(tmp_path: Path) -> None:
    """Relative imports, imports inside functions, subpackages and `from x import y`."""
    rules = tmp_path / "timerd" / "core" / "rules"
    rules.mkdir(parents=True)
    (rules / "x.py").write_text(
        "from ..clock import MatchClock\nfrom ... import disk\nfrom ...wire import a\n"
        "def f():\n    import os.path\n    from time import monotonic\n    open('f')\n")
    root = tmp_path / "timerd"
    assert outside_the_stdlib(root) == {"core/rules/x.py: timerd.disk",
                                        "core/rules/x.py: timerd.wire.a"}
    assert impurities(root) == {"core/rules/x.py: import os.path",
                                "core/rules/x.py: import time.monotonic",
                                "core/rules/x.py:7: open("}
