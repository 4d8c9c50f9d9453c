"""The core imports only the standard library and itself (DESIGN.md: "the core is a pure
function of events and time"), so that it runs and is tested without any adapter."""

import ast
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "timerd" / "core"


def imported(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def test_the_core_imports_only_the_stdlib_and_itself() -> None:
    outside = {f"{path.name}: {name}" for path in CORE.glob("*.py") for name in imported(path)
               if name.split(".")[0] not in sys.stdlib_module_names
               and not name.startswith("timerd.core")}
    assert outside == set()
