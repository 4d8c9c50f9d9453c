"""The rule coverage table (README.md here) is complete and true (issue 15).

Every clause of clauses.txt (the clauses of ../shared/RULES.md a timer can judge) has one row
with a decision and at least one test, and every test the table names exists. Where RULES.md
is present (beside the repository, as in CI), every clause of the list is in it, and every
clause it gives a timer action (its last column not in brackets) is in the list.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

from tests.syntax import parse_file

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
NODE = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")


def listed_clauses(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()
            if line.strip() and not line.startswith("#")]


def table_rows(text: str) -> dict[str, tuple[str, list[tuple[str, str]]]]:
    """The table's rows by clause: the decision text and the tests as (file, function)."""
    rows = {}
    for line in text.splitlines():
        if line.startswith(("| ITHF ", "| ISBHF ")):
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            clause, decision, tests = cells[0], cells[1], " ".join(cells[2:])
            rows[clause] = (decision, NODE.findall(tests))
    return rows


@cache
def functions_in(path: str) -> frozenset[str]:
    """The test functions defined in a test file (top level or in a class), by name."""
    file = ROOT / path
    if not file.is_file():
        return frozenset()
    tree = parse_file(file)
    return frozenset(node.name for node in ast.walk(tree)
                     if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                     and node.name.startswith("test_"))


def expand(rule: str) -> list[str]:
    """A RULES.md rule cell as clause numbers: `8.1` to `8.3` (an en dash, as RULES.md
    writes ranges), `411, 414b`, `415a,c`, `407 !2`."""
    rule = rule.strip().strip('"')
    if m := re.fullmatch(r"((?:\d+\.)?)(\d+)\u2013(?:\d+\.)?(\d+)", rule):
        return [f"{m.group(1)}{n}" for n in range(int(m.group(2)), int(m.group(3)) + 1)]
    out: list[str] = []
    for part in (p.strip() for p in rule.split(",")):
        out.append(re.sub(r"[a-z]$", "", out[-1]) + part if re.fullmatch(r"[a-z]", part)
                   else part)
    return out


def rules_rows(text: str) -> list[tuple[list[str], bool]]:
    """RULES.md's rows: their clauses ("ITHF 8.1", ...), and whether the timer has a part in
    them (the last column is not in brackets, as "(referee matter)" is)."""
    out = []
    book = ""
    for line in text.splitlines():
        if line.startswith("## "):
            book = line.split()[1]
        elif line.startswith("| ") and not line.startswith(("| rule", "|---")):
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            out.append(([f"{book} {n}" for n in expand(cells[0])], not cells[-1].startswith("(")))
    return out


def rules_md() -> Path | None:
    """../shared/RULES.md beside the repository (or beside a worktree's parent)."""
    for folder in ROOT.parents:
        if (folder / "shared" / "RULES.md").is_file():
            return folder / "shared" / "RULES.md"
    return None


def problems(table: str, clauses: list[str], rules: str | None,
             functions: Callable[[str], frozenset[str]] = functions_in) -> list[str]:
    rows = table_rows(table)
    out = [f"{c}: no row in tests/rules/README.md" for c in clauses if c not in rows]
    out += [f"{c}: in the table, not in clauses.txt" for c in rows if c not in clauses]
    for clause, (decision, tests) in rows.items():
        if not decision:
            out.append(f"{clause}: says nothing of what timerd does")
        if not tests:
            out.append(f"{clause}: no test")
        out += [f"{clause}: {path}::{name} does not exist" for path, name in tests
                if name not in functions(path)]
    if rules is not None:
        rows_of_rules = rules_rows(rules)
        known = {c for numbers, _ in rows_of_rules for c in numbers}
        out += [f"{c}: not a clause of RULES.md" for c in clauses if c not in known]
        out += [f"{' / '.join(numbers)}: RULES.md gives the timer a part, and clauses.txt "
                "does not list it" for numbers, timed in rows_of_rules
                if timed and not any(n in clauses for n in numbers)]
    return out


def test_every_clause_has_a_decision_and_tests_that_exist() -> None:
    path = rules_md()
    assert problems((HERE / "README.md").read_text(), listed_clauses(
        (HERE / "clauses.txt").read_text()), path.read_text() if path else None) == []


def test_the_check_finds_a_missing_clause_a_missing_test_and_an_unknown_clause() -> None:
    rules = ("## ITHF table hockey\n| rule | what | timer |\n|---|---|---|\n"
             "| 4.6 | forfeit | window |\n| 5.7 | centre | (referee matter) |\n"
             "| 8.1–8.3 | passive | count |\n")
    table = ("| ITHF 4.6 | forfeit from 30 s | `tests/core/test_ithf_4_6_forfeit.py::"
             "test_the_forfeit_score_comes_from_the_profile`, `tests/core/nothing.py::test_x` |\n"
             "| ITHF 9.9 | none |  |\n")
    assert problems(table, ["ITHF 4.6", "ITHF 4.4", "ITHF 9.9"], rules) == [
        "ITHF 4.4: no row in tests/rules/README.md",
        "ITHF 4.6: tests/core/nothing.py::test_x does not exist",
        "ITHF 9.9: no test",
        "ITHF 4.4: not a clause of RULES.md",
        "ITHF 9.9: not a clause of RULES.md",
        "ITHF 8.1 / ITHF 8.2 / ITHF 8.3: RULES.md gives the timer a part, and clauses.txt "
        "does not list it",
    ]


def test_rule_cells_expand_to_clause_numbers() -> None:
    assert expand("8.1–8.3") == ["8.1", "8.2", "8.3"]
    assert expand("420–422") == ["420", "421", "422"]
    assert expand("411, 414b") == ["411", "414b"]
    assert expand("415a,c") == ["415a", "415c"]
    assert expand("407 !2") == ["407 !2"]
    assert expand('"Menší trest"') == ["Menší trest"]
