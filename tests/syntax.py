"""The syntax tree of timerd's own source for the tests that read it (the walls, the typed
notices, the coverage table), parsed with a fresh recursion budget (issue 46 item 4).

CPython 3.11's AST conversion counts its depth from the calling thread's recursion state, and
the suite once failed `ast.parse` of a core module with a RecursionError ("maximum recursion
depth exceeded during compilation") after a deep recursion elsewhere in the same process. A
thread of its own starts that count at zero, whatever ran before in the test's thread.
"""

from __future__ import annotations

import ast
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse(source, filename)`, in a thread of its own."""
    with ThreadPoolExecutor(1, thread_name_prefix="parse") as pool:
        return pool.submit(ast.parse, source, filename).result()


def parse_file(path: Path) -> ast.Module:
    """The syntax tree of the source file at `path`."""
    return parse(path.read_text(encoding="utf-8"), str(path))
