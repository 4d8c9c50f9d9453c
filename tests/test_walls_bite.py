"""Each wall bites (issue 32 item 1): for every kind of breach, a copy of the package with that
one breach planted, and the wall that must report it. Of 35 breaches tried one at a time, 16
once passed every test (relative imports, imports in `core/rules/`, a service alias, ...);
each is planted here, with more of its kind. `test_the_copy_is_clean` shows that a copy
without a breach passes every wall, so what a wall reports is the plant.

The breaches planted, by wall:

- the import contracts (`lint-imports`, pyproject.toml): an absolute import of another room
  in `core/rules/`; a relative import `from ..disk import x` in the core; `from ... import
  limits` in `core/rules/`; an adapter imported inside a function in the core; a third-party
  package in the core; `from .. import events` in an adapter (`adapters/web/`); an adapter
  importing another; one inside a function; a sibling package's module by a relative import
  (`results/` -> `journal/`); an adapter importing the service, the app (relatively, from
  `hall/`), the command line (inside a function) or a tool; a tool importing an adapter
  internal (absolute, relative, inside a function in `cli.py`, as `import x.y.z`);
- what adapters may import of timerd: a relative import of a room adapters do not share
  (`from ..priority import x`);
- the core's allowlist of standard library modules (issue 44 item 1): a package outside the
  standard library in `core/rules/`, `import time`, `import asyncio` inside a function in
  `core/rules/`, `from os import path`, `import logging`, `import socket`, `import threading`,
  and what a denylist let through: `datetime.now()`, `uuid`, `random`, `subprocess`,
  `sys.argv`, `pathlib`, `builtins`;
- the core's calls: `open(` in `core/rules/`, `__import__("time")`, `print(`, `write_text`
  on a path handed in, `now()` on a clock handed in, `__builtins__["open"]`,
  `getattr(clock, "monotonic")`;
- `app.py` alone wires: a sound output registered through an alias and the dispatcher
  reached through the service (issue 44 item 4: not in the old list of register names),
  registering through an alias (`control = self.service;
  control.outputs.append(self)`), an adapter constructing another adapter or the service
  (its own composition), a tool filling a register;
- replies in the wire: `dict(ok=..., error=...)` in an adapter, a reply literal in the service;
- one status document and one event shape: `status.to_dict()` in an adapter, an adapter
  calling `wire.status_document` itself, a dict of the document's clock keys, an adapter's
  own signal event;
- a new sport touches no text view (issue 44 item 5): `timerctl status` reading a module's
  key (`status.get("timeouts")`, `status["penalties"]`), the terminal a module's attribute
  (`status.line_change`); a web page reading a key it does not say it draws itself (its
  `DRAWN`: the overlay's `s.line_change`, the scoreboard's `s["passive"]`), the pages'
  shared code one no page draws;
- one clock face: an adapter's own M:SS (`// 60`, `% 60`), a tool's (`divmod(s, 60)`);
- codes, not prose: a refusal sentence passed through a variable, a notice's sentence;
  `partition(" ")` in the service, `split(" ", 1)` in a rule module;
- typed events: a notice a rule module makes from a code and a dict (`Told(...)`);
- the phase machine's size: `core/match.py` grown past its cap;
- supervision (issue 44 item 4): `asyncio.ensure_future` in the hall link, a keypad's
  `loop.create_task`, a supervised task wrapped in `contextlib.suppress(Exception)`;
- the phase machine guards no module (issue 44 item 7): `self.records().get("shootout") is
  None`, a registry's module tested through a name; a rule module's `getattr(self.match,
  ...)`; a notice's `time: str`;
- a button is named only where it is declared (issue 44 item 5): a button's name bound in
  `ports.py`, a `NAME_pin` field in the config, a key of simulate mode's keyboard for a
  button by name.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.core.test_core_imports import impurities, outside_the_allowlist
from tests.core.test_rule_modules import (
    MATCH_CAP,
    match_lines,
    match_reached_past_its_view,
    module_guards,
)
from tests.service.test_supervised_tasks import unsupervised
from tests.test_import_contracts import CONTRACTS, PROJECT, broken_contracts
from tests.test_typed_notices import bare_notices, coded_calls, parsing_inside, seconds_as_text
from tests.test_walls import (
    adapter_wall_breaches,
    buttons_named,
    own_clock_text,
    replies_outside_the_wire,
    shapes_outside_the_wire,
    wiring_outside_the_app,
)
from tests.test_walls_views import module_keys_in_pages, module_keys_in_views

Wall = Callable[[Path], Collection[str]]


def contracts(root: Path) -> set[str]:
    """The import contracts `lint-imports` finds broken in the copy."""
    return broken_contracts(root.parent)[0]


def prose(root: Path) -> list[str]:
    return coded_calls(root)[1]


def over_the_cap(root: Path) -> list[str]:
    lines = match_lines(root)
    return [f"core/match.py: {lines} lines"] if lines > MATCH_CAP else []


WALLS: dict[str, Wall] = {
    "module-keys": module_keys_in_views, "page-keys": module_keys_in_pages,
    "contracts": contracts, "adapter-imports": adapter_wall_breaches,
    "allowlist": outside_the_allowlist, "no-io": impurities,
    "wiring": wiring_outside_the_app, "replies": replies_outside_the_wire,
    "shapes": shapes_outside_the_wire, "clock": own_clock_text, "prose": prose,
    "parsing": parsing_inside, "bare-notices": bare_notices, "cap": over_the_cap,
    "module-guards": module_guards, "match-view": match_reached_past_its_view,
    "seconds": seconds_as_text, "tasks": unsupervised, "buttons": buttons_named,
}


@dataclass(frozen=True)
class Breach:
    """`code` appended to `file` (under `timerd/`); `wall` must report something containing
    `reported`."""

    name: str
    file: str
    code: str
    wall: str
    reported: str


BREACHES = [
    # The import contracts.
    Breach("rules-import-another-room", "core/rules/passive.py",
           "from timerd.wire import status_document\n", "contracts", "core"),
    Breach("core-relative-import", "core/clock.py",
           "from ..disk import DiskWriter\n", "contracts", "core"),
    Breach("rules-relative-import-of-the-package", "core/rules/timeouts.py",
           "from ... import limits\n", "contracts", "core"),
    Breach("core-import-in-a-function", "core/score.py",
           "def _planted():\n    from timerd.adapters import gpio\n", "contracts", "core"),
    Breach("core-third-party", "core/effects.py", "import h11\n", "contracts", "core"),
    Breach("adapter-relative-import-of-another", "adapters/web/adapter.py",
           "from .. import events\n", "contracts", "adapters-independent"),
    Breach("adapter-imports-another", "adapters/gpio.py",
           "from timerd.adapters.audio import Speaker\n", "contracts", "adapters-independent"),
    Breach("adapter-imports-another-in-a-function", "adapters/control.py",
           "def _planted():\n    from timerd.adapters.hall import link\n", "contracts",
           "adapters-independent"),
    Breach("adapter-relative-import-of-a-sibling-package", "adapters/results/file.py",
           "from ..journal.writer import Journal\n", "contracts", "adapters-independent"),
    Breach("adapter-imports-the-service", "adapters/terminal.py",
           "from timerd.service import Service\n", "contracts", "adapters-see-ports"),
    Breach("adapter-relative-import-of-the-app", "adapters/hall/link.py",
           "from ... import app\n", "contracts", "adapters-see-ports"),
    Breach("adapter-imports-the-cli-in-a-function", "adapters/systemd.py",
           "def _planted():\n    import timerd.cli\n", "contracts", "adapters-see-ports"),
    Breach("adapter-imports-a-tool", "adapters/events.py",
           "from timerd.tools import doctor\n", "contracts", "adapters-see-ports"),
    Breach("tool-imports-an-adapter-internal", "tools/hall_desk.py",
           "from timerd.adapters.hall import link\n", "contracts", "tools-read-formats"),
    Breach("tool-relative-import-of-an-adapter-internal", "tools/doctor.py",
           "from ..adapters.journal import writer\n", "contracts", "tools-read-formats"),
    Breach("cli-imports-an-adapter-in-a-function", "cli.py",
           "def _planted():\n    from timerd.adapters.gpio import GpioBoard\n", "contracts",
           "tools-read-formats"),
    Breach("tool-imports-a-dotted-adapter-module", "tools/install.py",
           "import timerd.adapters.web.server\n", "contracts", "tools-read-formats"),
    Breach("adapter-imports-beyond-what-adapters-share", "adapters/audio.py",
           "from ..priority import apply\n", "adapter-imports", "timerd.priority"),
    # The core: the standard library only, and no time, I/O or concurrency of its own.
    Breach("rules-import-outside-the-stdlib", "core/rules/penalties.py",
           "import numpy\n", "allowlist", "core/rules/penalties.py: numpy"),
    Breach("core-imports-time", "core/clock.py", "import time\n", "allowlist",
           "core/clock.py: time"),
    Breach("rules-import-asyncio-in-a-function", "core/rules/timeouts.py",
           "def _planted():\n    import asyncio\n", "allowlist", ": asyncio"),
    Breach("core-imports-from-os", "core/score.py", "from os import path\n", "allowlist",
           ": os.path"),
    Breach("rules-import-logging", "core/rules/intermission.py", "import logging\n",
           "allowlist", ": logging"),
    Breach("core-imports-socket", "core/status.py", "import socket\n", "allowlist",
           ": socket"),
    Breach("core-imports-threading", "core/plan.py", "import threading\n", "allowlist",
           ": threading"),
    # Issue 44 item 1: what a denylist let through, refused by the allowlist.
    Breach("core-reads-the-wall-clock", "core/rules/scheduled.py",
           "def _planted():\n    from datetime import datetime\n    return datetime.now()\n",
           "allowlist", ": datetime.datetime"),
    Breach("core-imports-uuid", "core/record.py", "import uuid\n", "allowlist", ": uuid"),
    Breach("core-imports-random", "core/faceoff.py", "import random\n", "allowlist",
           ": random"),
    Breach("core-imports-subprocess", "core/rules/rulings.py", "import subprocess\n",
           "allowlist", ": subprocess"),
    Breach("core-reads-argv", "core/profile.py",
           "def _planted():\n    import sys\n    return sys.argv\n", "allowlist", ": sys"),
    Breach("core-imports-pathlib", "core/effects.py", "from pathlib import Path\n",
           "allowlist", ": pathlib.Path"),
    Breach("core-imports-builtins", "core/refused.py", "import builtins\n", "allowlist",
           ": builtins"),
    # No call that does I/O, reads a clock or runs code, whatever it is called on.
    Breach("rules-open-a-file", "core/rules/stoppage.py",
           "def _planted(p):\n    return open(p).read()\n", "no-io", "open("),
    Breach("core-imports-past-the-check", "core/offered.py",
           'def _planted():\n    return __import__("time").monotonic()\n', "no-io",
           "__import__("),
    Breach("core-prints", "core/display.py", "def _planted(x):\n    print(x)\n", "no-io",
           "print("),
    Breach("core-writes-a-path-handed-in", "core/rules/shootout.py",
           "def _planted(path):\n    path.write_text('x')\n", "no-io", ".write_text("),
    Breach("core-asks-a-clock-handed-in", "core/clock.py",
           "def _planted(clock):\n    return clock.now()\n", "no-io", ".now("),
    Breach("core-opens-through-the-builtins", "core/checks.py",
           "def _planted(p):\n    return __builtins__['open'](p)\n", "no-io", "__builtins__"),
    Breach("core-fetches-a-method-by-name", "core/plan.py",
           "def _planted(clock):\n    return getattr(clock, 'monotonic')()\n", "no-io",
           'getattr(..., "monotonic")'),
    # app.py alone wires.
    Breach("registers-through-an-alias", "adapters/events.py",
           "def _planted(self):\n    control = self.service\n    control.outputs.append(self)\n",
           "wiring", "service.outputs"),
    Breach("registers-a-sound-output-through-an-alias", "adapters/audio.py",
           "def _planted(self):\n    control = self.service\n"
           "    control.sound_outputs.append(self)\n", "wiring", "service.sound_outputs"),
    Breach("reaches-the-dispatcher", "adapters/events.py",
           "def _planted(self):\n    self.service.dispatcher.outputs.append(self)\n", "wiring",
           "service.dispatcher"),
    Breach("adapter-constructs-another", "adapters/web/adapter.py",
           "def _planted(config, control):\n    return Speaker(config, control)\n", "wiring",
           "constructs Speaker"),
    Breach("adapter-builds-its-own-composition", "adapters/hall/link.py",
           "def _planted(match):\n    return Service(match)\n", "wiring", "constructs Service"),
    Breach("tool-fills-a-register", "tools/hall_desk.py",
           "def _planted(service, part):\n    service.extra_commands.update(part.commands)\n",
           "wiring", "service.extra_commands"),
    # Replies, status documents and events are built in the wire.
    Breach("dict-call-reply", "adapters/control.py",
           "def _planted(why):\n    return dict(ok=False, error=why)\n", "replies",
           "adapters/control.py"),
    Breach("reply-literal-in-the-service", "service.py",
           'def _planted(why):\n    return {"ok": False, "error": why}\n', "replies",
           "service.py"),
    Breach("adapter-status-to-dict", "adapters/serial_display.py",
           "def _planted(status):\n    return status.to_dict()\n", "shapes",
           "a status document"),
    Breach("adapter-builds-the-document-itself", "adapters/serial_display.py",
           "def _planted(status):\n    return wire.status_document(status, [])\n", "shapes",
           "a status document of its own"),
    Breach("adapter-own-status-document", "adapters/web/adapter.py",
           'def _planted(s):\n    return {"phase": s.phase.value, "remaining_s": s.remaining_s,'
           ' "clock_face": s.clock_face.text}\n', "shapes", "a status document"),
    Breach("adapter-own-event-shape", "adapters/events.py",
           'def _planted(e):\n    return {"type": "signal", "signal": e.kind.value,'
           ' "beeps": e.beeps}\n', "shapes", "a signal event"),
    # A new sport touches no text view: they show a module's status from its declaration.
    Breach("timerctl-reads-a-modules-key", "cli.py",
           'def _planted(status):\n    return status.get("timeouts")\n', "module-keys",
           "cli.py:"),
    Breach("timerctl-indexes-a-modules-key", "cli.py",
           'def _planted(status):\n    return [p["number"] for p in status["penalties"]]\n',
           "module-keys", ": penalties"),
    Breach("terminal-reads-a-modules-attribute", "adapters/terminal.py",
           'def _planted(status):\n    return status.line_change["remaining_s"]\n',
           "module-keys", "adapters/terminal.py:"),
    # ... and no page reads a module's key it does not say it draws in a place of its own.
    Breach("overlay-reads-a-key-it-does-not-draw", "web/overlay.js",
           "const planted = (s) => s.line_change?.remaining_s;\n", "page-keys",
           "web/overlay.js:"),
    Breach("scoreboard-indexes-a-key-it-does-not-draw", "web/scoreboard.js",
           'const planted = (s) => s["passive"];\n', "page-keys", "scoreboard.js:"),
    Breach("shared-code-reads-a-key-no-page-draws", "web/timerd.js",
           "const planted = (s) => s?.passive?.home;\n", "page-keys", "timerd.js:"),
    # One clock face.
    Breach("adapter-own-mss", "adapters/terminal.py",
           'def _planted(s):\n    return f"{int(s) // 60}:{int(s) % 60:02d}"\n', "clock",
           "adapters/terminal.py"),
    Breach("tool-own-mss-by-divmod", "tools/hall_board.py",
           'def _planted(s):\n    m, sec = divmod(int(s), 60)\n    return f"{m}:{sec:02d}"\n',
           "clock", "divmod"),
    # Codes, not prose; commands parsed at the edge.
    Breach("refusal-sentence-through-a-variable", "core/rules/timeouts.py",
           'def _planted():\n    why = "timeout refused: none left"\n'
           "    raise CommandRefused(why)\n", "prose", "CommandRefused(why)"),
    Breach("notice-sentence", "adapters/web/adapter.py",
           'def _planted():\n    return Notice("the desk is gone")\n', "prose", "Notice("),
    Breach("service-partitions-a-command", "service.py",
           'def _planted(line):\n    word, _, rest = line.partition(" ")\n    return word\n',
           "parsing", "line.partition("),
    Breach("rule-module-splits-words", "core/rules/penalties.py",
           'def _planted(text):\n    return text.split(" ", 1)\n', "parsing", "split("),
    # Typed events: the core makes no notice from a code and a dict (issue 32 item 3).
    Breach("rules-notice-from-a-dict", "core/rules/passive.py",
           'def _planted(side):\n    return Told("notice.passive_cleared", {"side": side})\n',
           "bare-notices", "core/rules/passive.py"),
    # Issue 44 item 7: the phase machine guards no module; a module reaches the match only
    # through its view; a notice's seconds are a float.
    Breach("match-guards-a-module-by-its-record", "core/match.py",
           'def _planted(self):\n    return self.records().get("shootout") is None\n',
           "module-guards", "is None"),
    Breach("match-guards-a-module-from-the-registry", "core/match.py",
           'def _planted(self):\n    box = MODULES.get("penalties")\n'
           "    return box is not None\n", "module-guards", "box is not None"),
    Breach("rules-getattr-on-the-match", "core/rules/passive.py",
           'def _planted(self):\n    return getattr(self.match, "penalties")\n',
           "match-view", "getattr(self.match"),
    Breach("notice-time-as-text", "core/rules/timeouts.py",
           'class _Planted(Notice):\n    code = "notice.planted"\n    time: str\n',
           "seconds", "_Planted.time: str"),
    # Issue 44 item 4: supervision by construction, read on the syntax tree.
    Breach("adapter-ensures-a-future", "adapters/hall/link.py",
           "def _planted(coroutine):\n    return asyncio.ensure_future(coroutine)\n", "tasks",
           "asyncio.ensure_future(coroutine)"),
    Breach("adapter-loop-creates-a-task", "adapters/keypad.py",
           "def _planted(loop, coroutine):\n    return loop.create_task(coroutine)\n", "tasks",
           "loop.create_task(coroutine)"),
    Breach("supervised-task-swallows-its-crash", "adapters/serial_display.py",
           "async def _planted(self):\n    with contextlib.suppress(Exception):\n"
           "        await self._keep_open(None)\n", "tasks", "contextlib.suppress(Exception)"),
    # A button is named only where it is declared.
    Breach("a-button-bound-by-name", "ports.py", 'PLANTED = {"passive_home": None}\n',
           "buttons", "ports.py"),
    Breach("a-button-pin-field-in-the-config", "config/sections.py",
           "class _Planted:\n    line_change_pin: int | None = 7\n", "buttons",
           "line_change_pin"),
    Breach("a-keyboard-key-for-a-button", "adapters/terminal.py",
           'PLANTED = {"h": "goal_home"}\n', "buttons", "goal_home"),
    # The phase machine's size.
    Breach("match-over-its-cap", "core/match.py", "# a feature's state\n" * max(
        1, MATCH_CAP + 1 - match_lines(PROJECT / "timerd")), "cap", "core/match.py"),
]


def copy_of_the_package(into: Path) -> Path:
    """The `timerd` package (its Python, catalogue and web pages, not its sounds) and
    pyproject.toml (the import contracts) copied into `into`; the copy's `timerd` directory."""
    root = PROJECT / "timerd"

    def ignore(directory: str, names: list[str]) -> set[str]:
        skipped = {"__pycache__"} | ({"sounds"} if Path(directory) == root else set())
        return skipped & set(names)

    shutil.copytree(root, into / "timerd", ignore=ignore)
    shutil.copy(PROJECT / "pyproject.toml", into / "pyproject.toml")
    return into / "timerd"


def test_the_copy_is_clean(tmp_path: Path) -> None:
    root = copy_of_the_package(tmp_path)
    reported = {name: list(wall(root)) for name, wall in WALLS.items()}
    assert reported == {name: [] for name in WALLS}


def test_every_wall_and_every_contract_has_a_breach() -> None:
    assert {b.wall for b in BREACHES} == set(WALLS)
    assert {b.reported for b in BREACHES if b.wall == "contracts"} == CONTRACTS
    assert len(BREACHES) >= 35
    assert len({b.name for b in BREACHES}) == len(BREACHES)


@pytest.mark.parametrize("breach", BREACHES, ids=[b.name for b in BREACHES])
def test_the_wall_reports_a_planted_breach(breach: Breach, tmp_path: Path) -> None:
    root = copy_of_the_package(tmp_path)
    path = root / breach.file
    path.write_text(path.read_text() + "\n\n" + breach.code)
    reported = WALLS[breach.wall](root)
    assert any(breach.reported in entry for entry in reported), (breach.wall, reported)
