"""A new sport touches no text view (issue 44 item 5), read from the code itself as
tests/test_walls.py reads its walls: `timerctl status` (cli.py) and the simulate-mode terminal
show every rule module's status from its declaration (`RuleModule.display`, made text by
`Messages.shown` and `Messages.brief`), never by reading one of its keys.
tests/test_walls_bite.py plants a breach in a copy of the package.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.syntax import parse_file
from timerd.core import rules

ROOT = Path(__file__).resolve().parents[1] / "timerd"
#: The text views, which show every rule module's status from its declaration alone.
TEXT_VIEWS = ("cli.py", "adapters/terminal.py")


def _text(node: ast.AST) -> str:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""


def module_keys_in_views(root: Path) -> set[str]:
    """A rule module's status key (its `shows`, read from the registry) that a text view
    reads itself: as an attribute (`status.timeouts`), an index (`status["penalties"]`), a
    call's argument (`status.get("passive")`, `getattr(status, "line_change")`) or in a
    comparison. A command's or a button's name that is a key's word too (`passive`), in a
    table of keys, reads no status."""
    keys = {key for module in rules.REGISTERED for key in module.shows}
    out = set()
    for name in TEXT_VIEWS:
        for node in ast.walk(parse_file(root / name)):
            named = set()
            if isinstance(node, ast.Attribute):
                named.add(node.attr)
            elif isinstance(node, ast.Subscript):
                named.add(_text(node.slice))
            elif isinstance(node, ast.Call):
                named.update(_text(arg) for arg in [*node.args,
                                                    *(kw.value for kw in node.keywords)])
            elif isinstance(node, ast.Compare):
                named.update(_text(side) for side in [node.left, *node.comparators])
            out.update(f"{name}:{node.lineno}: {key}" for key in named & keys)
    return out


def test_the_text_views_name_no_rule_modules_status_key() -> None:
    """Fails on the old code: `timerctl status` drew the timeouts, the penalties, passive
    play and the stoppage countdowns by their keys, the terminal the timeouts and the line
    change (`status.timeouts`): nine reads."""
    assert {"timeouts", "penalties", "passive", "line_change", "goalie_change"} <= {
        key for module in rules.REGISTERED for key in module.display}
    assert module_keys_in_views(ROOT) == set()
