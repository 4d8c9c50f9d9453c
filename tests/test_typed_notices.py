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
- Events are typed (issue 32 item 3): every notice the core makes is a frozen dataclass
  declared by the module that emits it (`PenaltyStarted(number, side, player, kind, time)`), its
  `code` a class attribute; the core never makes one from a code and a dict (`Notice(...)`,
  `Told(...)`). Each field is declared with its type, and every notice a match makes holds
  values of those types (a time a float, a number an int). A field the catalogue shows as
  seconds (`i18n.WORDS`: `clock`, `tenths`) is declared a float (issue 44 item 7): a string
  there ("2:00") would be text the core made, shown as it is.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import string
import types
import typing
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GOLDEN, play
from tests.syntax import parse, parse_file
from timerd.config.profiles import load
from timerd.core.effects import Notice, Phase
from timerd.core.match import Match
from timerd.core.refused import CommandRefused
from timerd.core.rules import MODULES
from timerd.core.rules.penalties import PenaltyRunning, PenaltyStarted
from timerd.core.score import Side
from timerd.i18n import LANGUAGES, WORDS, Messages, catalogue
from timerd.ports import button_bindings

ROOT = Path(__file__).resolve().parents[1] / "timerd"
CODE = re.compile(r"[a-z][a-z0-9_]*")

#: What the f-string codes expand to: the phase machine's refusal per phase, a profile that
#: lacks a rule module, a recovery's outcome.
EXPANSIONS = {
    "refused.in_": [p.value for p in Phase],
    "refused.lacks_": list(MODULES),
    "notice.recovery_": ["unreadable", "finished", "not_started", "abandoned", "restored",
                         "restored_paused"],
}


def _calls(root: Path, name: str) -> Iterator[tuple[str, ast.Call, dict[str, list[ast.expr]]]]:
    """Each call of `name` under `root`, where it is, and what its module assigns to each
    plain name (the values a variable passed to it can hold)."""
    for path in sorted(root.rglob("*.py")):
        tree = parse_file(path)
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


def declared_codes(root: Path) -> Iterator[tuple[str, ast.expr]]:
    """Each typed notice's `code = ...` (a class attribute), and where."""
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(parse_file(path)):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.Assign) and [
                            getattr(t, "id", None) for t in item.targets] == ["code"]:
                        yield f"{path.name}:{item.lineno}", item.value


def coded_calls(root: Path) -> tuple[dict[str, list[str]], list[str]]:
    """Every key the code can name (a call's or a typed notice's), with where; and the calls
    and notices that carry no code."""
    named: dict[str, list[str]] = {}
    prose: list[str] = []
    for where, value in declared_codes(root):
        keys = _keys("", value)
        if not keys:
            prose.append(f"{where}: code = {ast.unparse(value)[:60]}")
        for key in keys or ():
            named.setdefault(key, []).append(where)
    for name, prefix in (("Notice", ""), ("Told", ""), ("CommandRefused", "refused.")):
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
        'Notice("notice.faceoff")\nTold("the desk is gone", {})\n'
        'def f(code):\n    why = "too late"\n    raise CommandRefused(why)\n'
        'def g(code):\n    raise CommandRefused(code)\n')
    (tmp_path / "kinds.py").write_text(
        'class Over(Notice):\n    code = "penalty over"\n'
        'class Fine(Notice):\n    code = "notice.penalty_over"\n')
    _, prose = coded_calls(tmp_path)
    assert len(prose) == 5


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_code_renders_with_the_values_its_callers_give(language: str) -> None:
    """Each call's keyword values fill its text: no placeholder is left unfilled."""
    msg = Messages(language)
    for kind in typed_notices():
        fields = {f for _, f, _, _ in string.Formatter().parse(msg.texts[kind.code]) if f}
        assert fields <= {f.name for f in dataclasses.fields(kind)}, (kind, fields)
    for name, prefix in (("Notice", ""), ("Told", ""), ("CommandRefused", "refused.")):
        for where, call, _ in _calls(ROOT, name):
            keys = _keys(prefix, call.args[0]) if call.args else None
            if not keys:
                continue
            if name != "CommandRefused":
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
        for node in ast.walk(parse_file(path)):
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
    tree = parse(source)
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


def typed_notices() -> list[type[Notice]]:
    """Every typed notice kind: a subclass of `Notice` with a `code` of its own (the rule
    modules are imported with the match)."""
    found: list[type[Notice]] = []
    todo = [Notice]
    while todo:
        kind = todo.pop()
        todo.extend(kind.__subclasses__())
        if isinstance(vars(kind).get("code"), str):
            found.append(kind)
    return found


def bare_notices(root: Path) -> list[str]:
    """Notices the core makes from a code and a dict (`Notice(...)`, `Told(...)`), not as a
    typed event."""
    found = []
    for path in sorted((root / "core").rglob("*.py")):
        for node in ast.walk(parse_file(path)):
            if isinstance(node, ast.Call) and (getattr(node.func, "id", None) or getattr(
                    node.func, "attr", None)) in ("Notice", "Told"):
                found.append(f"{path.relative_to(root)}:{node.lineno}: "
                             f"{ast.unparse(node)[:60]}")
    return found


def test_the_core_makes_no_notice_from_a_code_and_a_dict() -> None:
    """Fails on the old code: 30 calls such as `Notice("notice.penalty_over", {...})`."""
    assert bare_notices(ROOT) == []


def test_every_notice_of_the_core_is_a_typed_kind_of_the_catalogue() -> None:
    kinds = typed_notices()
    assert len(kinds) >= 30  # the check reads the kinds (it found them)
    english = catalogue("en")
    assert [k.__name__ for k in kinds if not k.code.startswith("notice.")
            or k.code not in english] == []
    assert len({k.code for k in kinds}) == len(kinds)  # one kind per code
    assert all(k.__dataclass_params__.frozen for k in kinds)  # type: ignore[attr-defined]


def _hints(kind: type[Notice]) -> dict[str, Any]:
    hints = typing.get_type_hints(kind)
    return {f.name: hints[f.name] for f in dataclasses.fields(kind)}


def _mentions_any(hint: Any) -> bool:
    return hint is Any or any(_mentions_any(a) for a in typing.get_args(hint))


def test_every_field_of_a_typed_notice_has_a_type() -> None:
    """No `Any` (a dict of values, text standing for a number): a side is a `Side`, a time a
    float, a score a mapping of sides to ints."""
    untyped = {f"{k.__name__}.{name}": hint for k in typed_notices()
               for name, hint in _hints(k).items() if _mentions_any(hint)}
    assert untyped == {}


def fits(value: Any, hint: Any) -> bool:
    """`value` is of the declared type `hint`, strictly: an int is not a float, a bool not an
    int, a string not a `Side`."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return any(fits(value, a) for a in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if typing.get_origin(hint) is tuple:  # tuple[X, ...]
        item = typing.get_args(hint)[0]
        return type(value) is tuple and all(fits(v, item) for v in value)
    if typing.get_origin(hint) is not None:  # Mapping[K, V]
        key, item = typing.get_args(hint)
        return isinstance(value, Mapping) and all(
            fits(k, key) and fits(v, item) for k, v in value.items())
    return type(value) is hint or (isinstance(value, hint) and hint not in (int, float, str))


def test_the_fit_check_can_fail() -> None:
    good = [(120.0, float), ({Side.HOME: 1}, Mapping[Side, int]), (None, str | None),
            ("17", str | None), (Side.AWAY, Side), (("4", "5"), tuple[str, ...])]
    bad = [(120, float), (True, int), ("home", Side), ({"home": 1}, Mapping[Side, int]),
           ("2:00", float), (None, float), ("4, 5", tuple[str, ...]), ((4,), tuple[str, ...])]
    assert [fits(value, hint) for value, hint in good + bad] == [True] * 6 + [False] * 8


#: Matches that make the notices the golden traces do not: a penalty given, waiting,
#: cancelled and started; timeouts, a goalie change, a line change, faceoffs, undos, a late
#: goal, a correction, names; a late scheduled start; a reopened match, one abandoned; a
#: reset when idle.
SCRIPTS: list[tuple[str, list[tuple[float, str]], float]] = [
    ("isbhf", [(0, "teams A B"), (1, "teams A B Final"), (2, "start"),
               (10, "penalty home minor 17"), (11, "penalty home minor 4"),
               (12, "penalty home minor 5"), (13, "penalty-cancel home"),
               (14, "penalty home minor 5"), (20, "faceoff"), (21, "goal away"),
               (22, "undo"), (150, "stop"), (151, "faceoff"), (152, "timeout home"),
               (160, "start"), (170, "stop"), (171, "goalie-change away"), (180, "start"),
               (190, "stop"), (191, "linechange"), (192, "start"), (200, "stop"),
               (201, "goalie-change home"), (810, "start")], 820),
    ("isbhf", [(0, "start"), (910, "late-goal home"), (911, "goal away"), (912, "undo"),
               (913, "correct 1 9")], 920),
    ("isbhf", [(0, "start_in 60")], 70),
    ("ithf", [(0, "reset"), (0, "start_in 16")], 20),
    ("ithf", [(0, "start"), (100, "goal home"), (310, "goal home"), (330, "undo")], 340),
    # A golden goal taken back, and the reopened match abandoned by RESET (issue 42).
    ("ithf-playoff", [(0, "start"), (360, "goal home"), (370, "undo"), (380, "reset")], 390),
]


def golden_scripts() -> list[tuple[str, list[tuple[float, str]], float]]:
    """Each golden trace's match, from its header (those made by the script alone)."""
    found = []
    for path in sorted(GOLDEN.glob("*.txt")):
        header = [line[1:].strip() for line in path.read_text().splitlines()
                  if line.startswith("#")]
        head = re.fullmatch(r"profile (\S+), until (\S+) s; commands at their times:",
                            header[1])
        if head is None or any("own setup" in line for line in header):
            continue
        script = [(float(line.split(" ", 1)[0]), line.split(" ", 1)[1]) for line in header[2:]]
        found.append((head[1], script, float(head[2])))
    return found


#: The declared types of a field the catalogue shows as seconds.
SECONDS = frozenset({"float", "float | None"})


def seconds_as_text(root: Path) -> list[str]:
    """The fields of the core's notices (a `Notice` subclass, also through another) that
    `i18n.WORDS` shows as seconds (`clock`, `tenths`) and that are not declared a float."""
    bases: dict[str, list[str]] = {}
    fields: dict[str, list[tuple[str, str, str]]] = {}
    for path in sorted((root / "core").rglob("*.py")):
        for node in ast.walk(parse_file(path)):
            if isinstance(node, ast.ClassDef):
                bases[node.name] = [ast.unparse(b) for b in node.bases]
                fields[node.name] = [
                    (f"{path.relative_to(root)}:{item.lineno}", item.target.id,
                     ast.unparse(item.annotation)) for item in node.body
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)]

    def notice(name: str) -> bool:
        return name == "Notice" or any(notice(b) for b in bases.get(name, ()))

    return [f"{where}: {kind}.{name}: {annotation}" for kind in bases if notice(kind)
            for where, name, annotation in fields[kind]
            if WORDS.get(name) in ("clock", "tenths") and annotation not in SECONDS]


def test_a_field_shown_as_seconds_is_declared_a_float(tmp_path: Path) -> None:
    """Fails on a notice that declares `time: str` (it held its declared type, a string, and
    passed every check of the old code)."""
    assert seconds_as_text(ROOT) == []
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "x.py").write_text(
        "class Late(Notice):\n    time: str\n    left_s: float | None\n"
        "class Later(Late):\n    within: int\n    side: str\n")
    assert seconds_as_text(tmp_path) == ["core/x.py:2: Late.time: str",
                                         "core/x.py:5: Later.within: int"]


def test_every_notice_a_match_makes_holds_its_declared_types() -> None:
    """The golden traces' matches and `SCRIPTS` played on virtual time: each typed notice's
    values are of its fields' types, and every kind is made at least once."""
    kinds = set(typed_notices())
    seen: dict[type[Notice], int] = {}
    wrong = []
    for profile, script, until in golden_scripts() + SCRIPTS:
        for _, effect, _ in play(profile, script, until).seen:
            if type(effect) in kinds:
                seen[type(effect)] = seen.get(type(effect), 0) + 1
                wrong += [(type(effect).__name__, name, getattr(effect, name))
                          for name, hint in _hints(type(effect)).items()
                          if not fits(getattr(effect, name), hint)]
    assert wrong == []
    assert sorted(k.__name__ for k in kinds if k not in seen) == []


def test_a_penalty_notice_holds_numbers_and_the_side() -> None:
    """A penalty given: number an int, the side a `Side`, the player's shirt number, the
    duration a float of seconds; the wire's params as before (issue 32 item 3)."""
    match = Match(load("isbhf"))
    match.handle(match.parse("start"), 0.0)
    for t, player in ((10.0, "17"), (11.0, "4"), (12.0, "5")):
        match.handle(match.parse("penalty", "home", "minor", player), t)
    running = [e for e in match.poll(130.0) if isinstance(e, PenaltyStarted)]
    assert running == [PenaltyStarted(3, Side.HOME, "5", "minor", 120.0)]
    given = match.handle(match.parse("penalty", "away", "minor", "9"), 130.5)
    assert given == [PenaltyRunning(4, Side.AWAY, "9", "minor", 120.0)]
    told = given[0]
    assert isinstance(told, PenaltyRunning)
    assert (type(told.time), type(told.number)) == (float, int)
    assert (told.code, told.params) == ("notice.penalty_running", {
        "number": 4, "side": "away", "player": "9", "kind": "minor", "time": 120.0})


def test_a_buttons_hold_hint_carries_its_seconds_as_a_number() -> None:
    """A short press of RESET or UNDO hints at the hold it takes: the seconds as a number,
    shown by the catalogue ("1.5", "2"), not text made where the buttons are bound."""
    bindings, _ = button_bindings(["reset", "undo"], debounce_s=0.05, long_press_s=1.5)
    hints = {name: binding.hint for name, binding in bindings.items()}
    assert {name: (h.code, h.params) for name, h in hints.items() if h} == {
        "reset": ("notice.hold_reset", {"s": 1.5}), "undo": ("notice.hold_undo", {"s": 1.5})}
    assert Messages("en").notice("notice.hold_reset", {"s": 2.0}) == \
        "hold RESET for 2 s to reset"
