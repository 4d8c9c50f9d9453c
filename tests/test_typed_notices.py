"""Issue 14, invariant 7, read from the code: what the daemon tells the operator is typed,
and its text is made in one place.

- Every `Notice` and every `CommandRefused` names a catalogue key (`notice.*`, `refused.*`)
  and its values; none carries a sentence. Every key a call can name is in the catalogue,
  and renders with the values the call gives, in every language.
  A sentence passed through a variable (`why = "goal refused: ..."; CommandRefused(why)`)
  is found by what the module assigns to that name.
- Commands are parsed at the edge: the service and the core never split a command's words
  or take apart their own messages (no `split`, `rsplit`, `partition` or `rpartition` call,
  whatever its separator).
- The core formats no text (issue 32): the phase machine and the rule modules hand numbers
  over (seconds, a score, a shirt number) and the catalogue shows them (`i18n.WORDS`); their
  only f-strings make catalogue keys, and they import no clock face.
"""

from __future__ import annotations

import ast
import re
import string
from collections.abc import Iterator
from pathlib import Path

import pytest

from timerd.config.profiles import load
from timerd.core.effects import Phase
from timerd.core.match import Match
from timerd.core.refused import CommandRefused
from timerd.core.rules import MODULES
from timerd.i18n import LANGUAGES, Messages, catalogue

ROOT = Path(__file__).resolve().parents[1] / "timerd"
CODE = re.compile(r"[a-z][a-z0-9_]*")

#: What the f-string codes expand to: the phase machine's refusal per phase, a profile that
#: lacks a rule module, a shootout attempt's outcome, a recovery's outcome.
EXPANSIONS = {
    "refused.in_": [p.value for p in Phase],
    "refused.lacks_": list(MODULES),
    "notice.shot_": ["scored", "missed"],
    "notice.recovery_": ["unreadable", "finished", "not_started", "abandoned", "restored",
                         "restored_paused"],
}


def _calls(root: Path, name: str) -> Iterator[tuple[str, ast.Call, dict[str, list[ast.expr]]]]:
    """Each call of `name` under `root`, where it is, and what its module assigns to each
    plain name (the values a variable passed to it can hold)."""
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        assigned: dict[str, list[ast.expr]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        assigned.setdefault(target.id, []).append(node.value)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == name:
                yield f"{path.name}:{node.lineno}", node, assigned


def _keys(prefix: str, first: ast.expr) -> list[str] | None:
    """The catalogue keys a call's first argument can be: [] when it passes on a code made
    elsewhere (a variable, `refused.{exc.code}`), None when it is a sentence."""
    if isinstance(first, ast.IfExp):
        body, orelse = _keys(prefix, first.body), _keys(prefix, first.orelse)
        return None if body is None or orelse is None else body + orelse
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        key = prefix + first.value
        return [key] if re.fullmatch(r"(notice|refused)\.[a-z][a-z0-9_]*", key) else None
    if isinstance(first, ast.JoinedStr):
        head = first.values[0]
        if not isinstance(head, ast.Constant):
            return None
        if head.value == "refused." and len(first.values) == 2:
            return []  # a refusal's code, passed on
        return [prefix + str(head.value) + tail
                for tail in EXPANSIONS.get(prefix + str(head.value), [])] or None
    return []


def coded_calls(root: Path) -> tuple[dict[str, list[str]], list[str]]:
    """Every key the code can name, with where; and the calls that carry no code."""
    named: dict[str, list[str]] = {}
    prose: list[str] = []
    for name, prefix in (("Notice", ""), ("CommandRefused", "refused.")):
        for where, call, assigned in _calls(root, name):
            if not call.args:
                continue  # a subclass or a signature, not a message
            first = call.args[0]
            keys = _keys(prefix, first)
            if isinstance(first, ast.Name) and any(
                    _keys(prefix, value) is None for value in assigned.get(first.id, [])):
                keys = None  # a sentence, through a variable
            if keys is None:
                prose.append(f"{where}: {ast.unparse(call)[:70]}")
            for key in keys or ():
                named.setdefault(key, []).append(where)
    return named, prose


def test_every_notice_and_refusal_is_a_code_of_the_catalogue() -> None:
    named, prose = coded_calls(ROOT)
    assert prose == [], "notices or refusals with prose instead of a code"
    english = catalogue("en")
    missing = {key: where for key, where in named.items() if key not in english}
    assert missing == {}
    assert len(named) > 90  # the check reads the calls (it found them)


def test_prose_in_a_notice_is_caught(tmp_path: Path) -> None:
    """The check above can fail: a sentence in a Notice or a CommandRefused is found."""
    (tmp_path / "bad.py").write_text(
        'Notice("penalty 1 over")\nCommandRefused(f"goal refused: {why}")\n'
        'Notice("notice.faceoff")\n'
        'def f(code):\n    why = "too late"\n    raise CommandRefused(why)\n'
        'def g(code):\n    raise CommandRefused(code)\n')
    _, prose = coded_calls(tmp_path)
    assert len(prose) == 3


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_code_renders_with_the_values_its_callers_give(language: str) -> None:
    """Each call's keyword values fill its text: no placeholder is left unfilled."""
    msg = Messages(language)
    for name, prefix in (("Notice", ""), ("CommandRefused", "refused.")):
        for where, call, _ in _calls(ROOT, name):
            keys = _keys(prefix, call.args[0]) if call.args else None
            if not keys:
                continue
            if name == "Notice":
                given = call.args[1] if len(call.args) > 1 else None
                values = set() if given is None else _dict_keys(given)
            else:
                values = {kw.arg for kw in call.keywords if kw.arg}
            if values is None:
                continue  # built elsewhere (a helper's dict): rendered by the goldens' tests
            for key in keys:
                fields = {f for _, f, _, _ in string.Formatter().parse(msg.texts[key]) if f}
                assert fields <= values | {"command"}, (where, key, fields - values)


def _dict_keys(node: ast.expr) -> set[str] | None:
    if isinstance(node, ast.Dict) and all(isinstance(k, ast.Constant) for k in node.keys):
        return {str(k.value) for k in node.keys if isinstance(k, ast.Constant)}
    return None


#: The str methods that take words apart.
SPLITTING = frozenset({"split", "rsplit", "partition", "rpartition"})


def parsing_inside(root: Path) -> list[str]:
    """Words taken apart inside the service or the core: a call of a `SPLITTING` method."""
    found = []
    for path in [root / "service.py", *sorted((root / "core").rglob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in SPLITTING:
                found.append(f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_commands_are_parsed_at_the_edge() -> None:
    """No string splitting of a command inside the service or the core, and no taking apart
    of the core's own messages."""
    assert parsing_inside(ROOT) == []


def test_a_refusal_reads_in_each_language() -> None:
    """The same refusal, told in English, Slovenian and Slovak (the web page and timerctl
    render the code a reply carries)."""
    with pytest.raises(CommandRefused) as info:
        (m := Match(load("ithf"))).handle(m.parse("goal", "home"), 0.0)
    told = {language: Messages(language).refusal(info.value) for language in LANGUAGES}
    assert told == {
        "en": "goal refused: no match is running; press START to begin",
        "sl": "goal zavrnjeno: nobena tekma ne teče; za začetek pritisni ZAČETEK",
        "sk": "goal odmietnuté: žiadny zápas neprebieha; stlač ZAČIATOK",
    }


#: What an f-string of the phase machine or a rule module may make: a catalogue key.
KEY_PREFIX = re.compile(r"(in_|lacks_|notice\.|refused\.)")
#: The files whose events and refusals carry values, not text.
DECIDERS = [ROOT / "core" / "match.py", *sorted((ROOT / "core" / "rules").glob("*.py"))]


def formatted_text(source: str) -> list[str]:
    """What in `source` makes text for an operator: an f-string that is not a catalogue key
    (a time as "2:00", a score as "1:0", a player as " #17", seconds as "30"), or the
    clock face imported to make one."""
    found = []
    tree = ast.parse(source)
    specs = {id(n.format_spec) for n in ast.walk(tree) if isinstance(n, ast.FormattedValue)}
    # A settings section's `problems()` says what is wrong in a profile file when it is
    # loaded (config text, `timerd.core.settings`), not what happens in a match.
    specs |= {id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)
              and f.name == "problems" for n in ast.walk(f)}
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr) and id(node) not in specs:
            head = node.values[0] if node.values else None
            if not (isinstance(head, ast.Constant) and KEY_PREFIX.match(str(head.value))):
                found.append(f"{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.ImportFrom) and node.module == "timerd.core.display":
            found.append(f"{node.lineno}: imports {', '.join(a.name for a in node.names)}")
    return found


def test_the_core_formats_no_text() -> None:
    """Fails on the old code: penalties.py, timeouts.py, intermission.py, rulings.py,
    corrections.py, stoppage.py, passive.py, scheduled.py, shootout.py and match.py made
    "2:00", "1:0", " #17" and "30" themselves."""
    found = {path.name: formatted_text(path.read_text()) for path in DECIDERS}
    assert {name: lines for name, lines in found.items() if lines} == {}


def test_the_formatting_check_can_fail() -> None:
    planted = ('from timerd.core.display import elapsed_clock as mmss\n'
               'Notice("notice.x", {"time": mmss(t), "s": f"{s:g}", "player": f" #{p}"})\n'
               'CommandRefused(f"in_{phase}")\n'
               'def problems(self):\n    return [f"x = {self.x:g}: must be positive"]\n')
    assert formatted_text(planted) == [
        "1: imports elapsed_clock", "2: f'{s:g}'", "2: f' #{p}'"]
