"""A new sport touches no view (issue 44 item 5), read from the code itself as
tests/test_walls.py reads its walls: `timerctl status` (cli.py) and the simulate-mode terminal
show every rule module's status from its declaration (`RuleModule.display`, made text by
`Messages.shown` and `Messages.brief`), never by reading one of its keys; the web pages
likewise (`timerd.shown`, `timerd.brief`), but for the keys a page says it draws in a place
of its own (its `DRAWN`), which it alone reads. tests/test_walls_bite.py plants a breach in
a copy of the package.
"""

from __future__ import annotations

import ast
import re
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


#: The web pages of a table (web/timerd.js: what they share) and where each says which rule
#: modules' keys it draws in a place of its own: `const DRAWN = ["penalties", ...];`.
PAGES = ("web/scoreboard.js", "web/control.js", "web/overlay.js")
SHARED = "web/timerd.js"
DRAWN = re.compile(r"^\s*const DRAWN = \[([^\]]*)\];", re.MULTILINE)
#: A key read in a page's code: an index by a string (`s["penalties"]`), or a property
#: (`s.timeouts`, `s?.timeouts`) outside a string (a catalogue key, "st.timeouts", is
#: none) and a comment (`// ...` after a blank or at a line's start).
INDEX = re.compile(r"""\[\s*["'](\w+)["']\s*\]""")
PROPERTY = re.compile(r"\??\.([a-z_]\w*)")
STRING = re.compile(r""""(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'""")
COMMENT = re.compile(r"(?:^|\s)//.*$", re.MULTILINE)


def drawn_by(text: str) -> set[str]:
    """The keys a page says it draws itself (its `DRAWN`; none without one)."""
    found = DRAWN.search(text)
    return set(re.findall(r"""["'](\w+)["']""", found.group(1))) if found else set()


def module_keys_in_pages(root: Path) -> set[str]:
    """A rule module's status key (its `shows`, from the registry) that a web page reads
    though it does not say it draws it in a place of its own (its `DRAWN`, which
    `timerd.showDisplay` and `timerd.brief` skip), or that the pages' shared code reads
    though no page draws it: every other module's slice is shown from its declaration
    alone, so a new sport touches no page."""
    keys = {key for module in rules.REGISTERED for key in module.shows}
    texts = {name: (root / name).read_text(encoding="utf-8") for name in (*PAGES, SHARED)}
    drawn = {name: drawn_by(texts[name]) for name in PAGES}
    allowed = {**drawn, SHARED: set().union(*drawn.values())}
    out: set[str] = set()
    for name, text in texts.items():
        for lineno, line in enumerate(COMMENT.sub("", text).splitlines(), 1):
            read = {*INDEX.findall(line), *PROPERTY.findall(STRING.sub('""', line))}
            out.update(f"{name}:{lineno}: {key}" for key in (read & keys) - allowed[name])
    return out


def test_the_pages_read_no_rule_modules_status_key_they_do_not_draw() -> None:
    """Every page reads only the keys it draws in a place of its own (a rink's board, the
    desk's penalty box with its cancel buttons), and says so in its `DRAWN`, which the
    generic rendering skips; each of those is a key of a registered module."""
    assert module_keys_in_pages(ROOT) == set()
    for name in PAGES:
        drawn = drawn_by((ROOT / name).read_text(encoding="utf-8"))
        assert drawn, name  # each page says it
        assert drawn <= {key for module in rules.REGISTERED for key in module.shows}, name
