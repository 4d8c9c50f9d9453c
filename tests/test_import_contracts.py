"""The walls between the rooms as import contracts (issue 32 item 1, docs/ARCHITECTURE.md),
kept by import-linter (`lint-imports`, configured in pyproject.toml's `[tool.importlinter]`),
which reads the imports Python resolves: relative ones, those inside functions, every
subpackage, and chains through other modules.

- `core`: the core imports none of timerd's other rooms and none of its dependencies;
- `adapters-independent`: no adapter imports another (the serial display beside its
  documented wire format, `serial_protocol`, is the one exception);
- `adapters-see-ports`: adapters never import the service, the app, the command line or a tool;
- `tools-read-formats`: the tools (`cli.py`, `tools/`) import of the adapters only their
  documented format modules (`serial_protocol`, `hall.protocol`, `results.format`,
  `journal.format`).

tests/test_walls_bite.py plants breaches of each in a copy of the package.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.test_walls import PROTOCOLS

PROJECT = Path(__file__).resolve().parents[1]
CONTRACTS = {"core", "adapters-independent", "adapters-see-ports", "tools-read-formats"}


def lint_imports() -> str:
    """The `lint-imports` beside this interpreter (the test extra installs it)."""
    found = Path(sys.executable).with_name("lint-imports")
    return str(found) if found.exists() else shutil.which("lint-imports") or "lint-imports"


def broken_contracts(project: Path) -> tuple[set[str], str]:
    """The ids of the contracts `lint-imports` finds broken in `project` (a directory with
    the `timerd` package and pyproject.toml), and its report."""
    config = tomllib.loads((project / "pyproject.toml").read_text())["tool"]["importlinter"]
    ids = {c["name"]: c["id"] for c in config["contracts"]}
    run = subprocess.run([lint_imports(), "--no-cache"], cwd=project, capture_output=True,
                         text=True, check=False)
    report = run.stdout + run.stderr
    broken = {ids[found[1]] for line in report.splitlines()
              if (found := re.fullmatch(r"(.+) BROKEN( \(.*\))?", line))}
    assert (run.returncode != 0) == bool(broken), report
    return broken, report


def test_every_import_contract_is_kept() -> None:
    config = tomllib.loads((PROJECT / "pyproject.toml").read_text())["tool"]["importlinter"]
    assert {c["id"] for c in config["contracts"]} == CONTRACTS
    broken, report = broken_contracts(PROJECT)
    assert broken == set(), report
    assert "Contracts: 4 kept, 0 broken." in report


def test_the_tools_contract_lets_through_the_documented_format_modules_only() -> None:
    config = tomllib.loads((PROJECT / "pyproject.toml").read_text())["tool"]["importlinter"]
    tools = next(c for c in config["contracts"] if c["id"] == "tools-read-formats")
    assert {line.split(" -> ")[1] for line in tools["ignore_imports"]} == PROTOCOLS
