"""The walls between the rooms (issues 14 and 32, docs/ARCHITECTURE.md), read from the code
itself: each test fails when a change breaks its wall, naming the file and the import or call.
tests/test_walls_bite.py plants a breach of each in a copy of the package.

- Adapters see ports, never the service, the app or each other (invariant 3): of timerd an
  adapter imports the core, `ports`, `wire`, the config, the shared input limits (`limits`),
  the disk writer (`disk`), the message catalogue, and its own protocol module (relative
  imports resolved); the import contracts (tests/test_import_contracts.py) forbid the rest.
- `app.py` alone wires (invariant 4): only it constructs the service and the adapters and
  registers outputs, commands, buttons and status keys with the service, under whatever name
  a module gives the service.
- One wire format (invariant 6): a reply to a request (a dict with `ok` and `error`, as a
  literal, `dict(ok=..., error=...)` or JSON text), a status document (`status.to_dict()`,
  or a dict of the document's clock keys) and an event record (the shape of one of
  `wire.event_record`'s types) are built in `wire.py` or a documented format module, never
  where they are sent.
- One clock face: no view (adapters, tools, the command line, the service) makes its own
  M:SS of a time (`// 60`, `% 60`, `divmod(..., 60)`); it takes the core's clock face
  (`Status.clock_face`) or `core.display`'s `shown_clock`/`elapsed_clock`.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
from collections.abc import Collection
from pathlib import Path

from tests.core.test_core_imports import imports
from tests.syntax import parse_file
from timerd.core import rules
from timerd.core.buttons import PHASE_BUTTONS
from timerd.dispatch import Dispatcher
from timerd.service import Service

ROOT = Path(__file__).resolve().parents[1] / "timerd"

#: What any adapter may import of timerd.
SHARED = ("timerd.core", "timerd.ports", "timerd.wire", "timerd.config", "timerd.limits",
          "timerd.disk", "timerd.i18n", "timerd.__version__")
#: An adapter's own documented format module (each says so in its docstring): the adapter
#: imports it, and so may the tools; no other adapter does.
OWN_PROTOCOL = {"serial_display": "timerd.adapters.serial_protocol",
                "hall": "timerd.adapters.hall.protocol",
                "results": "timerd.adapters.results.format",
                "journal": "timerd.adapters.journal.format"}
#: What a tool may import of the adapters: their documented protocol and format modules.
PROTOCOLS = frozenset(OWN_PROTOCOL.values())
#: The service's registers that only the composition root fills (through `app.Registrar`),
#: read from the service and its dispatcher: every field that holds a list, a dict or the
#: dispatcher itself (the old list by hand missed `sound_outputs` and `dispatcher`).
REGISTERS = frozenset(f.name for cls in (Service, Dispatcher) for f in dataclasses.fields(cls)
                      if f.default_factory in (list, dict, Dispatcher))
#: The status document's keys about the clock at one instant (not those a result shares):
#: a dict with three of them, built outside the wire, is a status document of its own.
CLOCK_KEYS = frozenset({"phase", "remaining_s", "clock_face", "period", "clock_running",
                        "elapsed_s", "start_in_s", "interruption_s", "count_up",
                        "last_signal", "break_kind"})


def _tree(path: Path) -> ast.AST:
    return parse_file(path)


def adapter_wall_breaches(root: Path) -> set[str]:
    """What an adapter imports of timerd beyond what adapters share and its own part."""
    adapters = root / "adapters"
    out = set()
    for path in sorted(adapters.rglob("*.py")):
        # A part is a module, or a package whose modules may import each other.
        part = path.stem if path.parent == adapters else path.parent.name
        allowed = (*SHARED, OWN_PROTOCOL.get(part, "-"), f"timerd.adapters.{part}.")
        for name in imports(root, path):
            if name.startswith("timerd.") and not name.startswith(allowed):
                out.add(f"{path.relative_to(root)}: {name}")
    return out


def wiring_outside_the_app(root: Path) -> set[str]:
    """Adapters or the service constructed (the composition), or the service's registers
    filled, anywhere but app.py (an adapter may make itself, as in `Speaker.for_service`, and
    fill its own attributes). The service is read through any alias a module gives it
    (`control = self.service; control.outputs.append(self)`)."""
    out = set()
    composed = adapter_classes(root) | {"Service"}
    for path in sorted(root.rglob("*.py")):
        if path.name == "app.py" and path.parent == root:
            continue
        tree = _tree(path)
        aliases = _service_aliases(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else \
                    func.value.id if isinstance(func, ast.Attribute) and \
                    isinstance(func.value, ast.Name) else None
                if name in composed and not _defines(path, name):
                    out.add(f"{path.relative_to(root)}:{node.lineno}: constructs {name}")
            if isinstance(node, ast.Attribute) and node.attr in REGISTERS and \
                    _is_service(node.value, aliases) and path.name != "service.py":
                out.add(f"{path.relative_to(root)}:{node.lineno}: service.{node.attr}")
    return out


def adapter_classes(root: Path) -> set[str]:
    """The adapters' classes that stand for a part of the outside world: an output (it has
    `notify`) or a part with a lifetime (`async with`), wherever under `adapters/`."""
    return {node.name for path in (root / "adapters").rglob("*.py")
            for node in ast.walk(_tree(path)) if isinstance(node, ast.ClassDef)
            and {"notify", "__aenter__"} & {m.name for m in node.body if isinstance(
                m, ast.FunctionDef | ast.AsyncFunctionDef)}}


def _service_aliases(tree: ast.AST) -> set[str]:
    """The names a module binds to the service (`control = self.service`, `s = service`),
    followed through chains of such assignments."""
    aliases: set[str] = set()
    while True:
        found = {target.id for node in ast.walk(tree)
                 if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None
                 and _is_service(node.value, aliases)
                 for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
                 if isinstance(target, ast.Name)}
        if found <= aliases:
            return aliases
        aliases |= found


def _is_service(node: ast.expr, aliases: Collection[str] = ()) -> bool:
    """`service`, `anything.service`, or a name bound to one of them."""
    return (isinstance(node, ast.Name) and (node.id == "service" or node.id in aliases)) or \
        (isinstance(node, ast.Attribute) and node.attr == "service")


def _defines(path: Path, class_name: str) -> bool:
    return any(isinstance(n, ast.ClassDef) and n.name == class_name
               for n in ast.walk(_tree(path)))


def replies_outside_the_wire(root: Path) -> set[str]:
    """A reply (a dict with "ok" and "error": a literal, `dict(ok=..., error=...)`, or such
    JSON as text) made anywhere in the daemon but wire.py (the tools are the replies'
    readers)."""
    out = set()
    for path in sorted(root.rglob("*.py")):
        if path == root / "wire.py" or (root / "tools") in path.parents:
            continue
        tree = _tree(path)
        docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
        for node in ast.walk(tree):
            text = "" if id(node) in docstrings else _text(node)
            if {"ok", "error"} <= _keys(node) or ('"ok":' in text and '"error":' in text):
                out.add(f"{path.relative_to(root)}:{node.lineno}")
    return out


def _keys(node: ast.AST) -> set[str]:
    """The constant keys of a dict display or of a `dict(...)` call."""
    if isinstance(node, ast.Dict):
        return {k.value for k in node.keys if isinstance(k, ast.Constant)
                and isinstance(k.value, str)}
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        return {kw.arg for kw in node.keywords if kw.arg}
    return set()


def _text(node: ast.AST) -> str:
    """A string or bytes constant as text; anything else as ""."""
    value = node.value if isinstance(node, ast.Constant) else ""
    return value.decode(errors="replace") if isinstance(value, bytes) else \
        value if isinstance(value, str) else ""


def event_shapes(root: Path) -> dict[str, set[str]]:
    """The event records `wire.event_record` builds: each `type` with its other keys."""
    shapes: dict[str, set[str]] = {}
    for node in ast.walk(_tree(root / "wire.py")):
        if isinstance(node, ast.Dict):
            kind = _constant(node, "type")
            if kind is not None:
                shapes.setdefault(kind, set()).update(_keys(node) - {"type"})
    return shapes


def _constant(node: ast.Dict, key: str) -> str | None:
    for k, v in zip(node.keys, node.values, strict=True):
        if isinstance(k, ast.Constant) and k.value == key and isinstance(v, ast.Constant) \
                and isinstance(v.value, str):
            return v.value
    return None


def shapes_outside_the_wire(root: Path) -> set[str]:
    """A status document or an event record built outside `wire.py` and the documented
    format modules (nor in the core, which makes the values they are built from, nor in the
    tools, their readers): a `status.to_dict()`, an adapter's own `wire.status_document`
    (the service builds the one document of a dispatch), a dict with three of the
    document's clock keys, or a dict with the
    `type` of one of the wire's event records and two of that record's keys."""
    allowed = {root / "wire.py", *(root.parent / (m.replace(".", "/") + ".py") for m in PROTOCOLS)}
    shapes = event_shapes(root)
    out = set()
    for path in sorted(root.rglob("*.py")):
        if path in allowed or {root / "core", root / "tools"} & set(path.parents):
            continue
        for node in ast.walk(_tree(path)):
            where = f"{path.relative_to(root)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr == "to_dict" and "status" in ast.unparse(node.func.value):
                out.add(f"{where}: a status document")
            if isinstance(node, ast.Call) and (root / "adapters") in path.parents and \
                    ast.unparse(node.func).endswith("status_document"):
                out.add(f"{where}: a status document of its own")
            keys = _keys(node)
            if len(keys & CLOCK_KEYS) >= 3:
                out.add(f"{where}: a status document")
            kind = _constant(node, "type") if isinstance(node, ast.Dict) else None
            if kind in shapes and len(keys & shapes[kind]) >= 2:
                out.add(f"{where}: a {kind} event")
    return out


def own_clock_text(root: Path) -> set[str]:
    """M:SS made by a view itself (minutes and seconds taken apart: `// 60`, `% 60`,
    `divmod(x, 60)`) anywhere but the core, whose `display.py` makes the one clock face."""
    out = set()
    for path in sorted(root.rglob("*.py")):
        if (root / "core") in path.parents:
            continue
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv | ast.Mod) \
                    and _is_60(node.right):
                out.add(f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id == "divmod" and len(node.args) == 2 and _is_60(node.args[1]):
                out.add(f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)}")
    return out


def _is_60(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value in (60, 60.0)


def test_replies_are_built_in_the_wire_module() -> None:
    assert replies_outside_the_wire(ROOT) == set()


def test_status_documents_and_event_records_are_built_in_the_wire_or_a_format_module() -> None:
    assert {"signal", "goal", "state", "notice"} <= set(event_shapes(ROOT))
    assert shapes_outside_the_wire(ROOT) == set()


def test_every_view_takes_the_one_clock_face() -> None:
    assert own_clock_text(ROOT) == set()


def test_adapters_import_ports_not_the_service_the_app_or_each_other() -> None:
    assert adapter_wall_breaches(ROOT) == set()


def test_each_module_tools_may_import_says_it_is_a_documented_format() -> None:
    for module in PROTOCOLS:
        path = ROOT.parent / (module.replace(".", "/") + ".py")
        docstring = ast.get_docstring(_tree(path)) or ""
        assert "A documented format: tools may import this module" in " ".join(
            docstring.split()), path


def test_only_the_app_constructs_adapters_and_fills_the_services_registers() -> None:
    assert {"Speaker", "HallLink", "WebServer", "Journal", "ResultsFile"} <= adapter_classes(ROOT)
    assert wiring_outside_the_app(ROOT) == set()


def test_the_walls_table_names_tests_that_exist() -> None:
    """docs/ARCHITECTURE.md's walls name their tests: each file and test it names exists."""
    doc = (ROOT.parent / "docs" / "ARCHITECTURE.md").read_text()
    walls = doc[doc.index("## The walls"):doc.index("## Where a change goes")]
    named = re.findall(r"`(tests/[\w/]+\.py)(?:::(\w+))?`", walls)
    assert len(named) > 15
    for file, test in named:
        path = ROOT.parent / file
        assert path.exists(), file
        assert not test or re.search(rf"^def {test}\(", path.read_text(), re.M), (file, test)


def import_circles(root: Path) -> list[list[str]]:
    """The circles of imports between timerd's modules: every import of a file counts,
    inside a function or under `TYPE_CHECKING` too (a circle broken by an import inside a
    function is still one loop of dependencies). Each circle's modules, sorted."""
    modules = {".".join([root.name, *p.relative_to(root).with_suffix("").parts])
               .removesuffix(".__init__"): p for p in root.rglob("*.py")}

    def module_of(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph = {name: {m for i in imports(root, path) if (m := module_of(i)) and m != name}
             for name, path in modules.items()}
    # Tarjan's strongly connected components: each of more than one module is a circle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while (top := stack.pop()) != node:
                component.append(top)
            if component:
                circles.append(sorted([node, *component]))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(circles)


def test_no_import_circle() -> None:
    """Issue 44 item 6: `core/commands` -> `settings` -> `effects` (SignalKind now in
    `core/signals.py`), `core/record` <-> `rules/` (the periods' absent keys handed in) and
    `tools/doctor` <-> `doctor_service` (`Check` and its levels in `tools/checks.py`) were
    circles, two of them real loops broken by imports inside functions."""
    assert import_circles(ROOT) == []


def test_the_circle_check_can_fail(tmp_path: Path) -> None:
    (tmp_path / "timerd" / "tools").mkdir(parents=True)
    (tmp_path / "timerd" / "tools" / "a.py").write_text(
        "def f():\n    from timerd.tools import b\n")
    (tmp_path / "timerd" / "tools" / "b.py").write_text("from timerd.tools.a import f\n")
    (tmp_path / "timerd" / "tools" / "c.py").write_text("from timerd.tools.a import f\n")
    assert import_circles(tmp_path / "timerd") == [["timerd.tools.a", "timerd.tools.b"]]



#: The rooms that serve buttons (the config's keys, the bindings, the GPIO header, the keypad,
#: simulate mode's keyboard): each takes every button from the registry and names none.
BUTTON_ROOMS = ("ports.py", "core/buttons.py", "core/rules/__init__.py", "config", "adapters")


def buttons_named(root: Path) -> list[str]:
    """Where a room that serves buttons names a declared button (issue 44 item 5): a string
    `NAME` (unless it is also the name of the command the button makes: `reset`, `undo`) or
    `NAME_pin`, or an identifier `NAME_pin` (a config field), in a file but the one that
    declares the button (`Button`: the phase machine's in core/buttons.py, a rule module's in
    its module), "file:line name"."""
    homes = {b.name: "core/buttons.py" for b in PHASE_BUTTONS}
    for module in rules.REGISTERED:
        path = Path(inspect.getsourcefile(module) or "").resolve()
        homes.update({b.name: str(path.relative_to(ROOT)) for b in module.buttons})
    # A string that is also a command's name (`reset`, `undo`) is the command's.
    commands = {button.command.name for button in rules.buttons()}
    words = {**{name: home for name, home in homes.items() if name not in commands},
             **{f"{name}_pin": home for name, home in homes.items()}}
    found = []
    for room in BUTTON_ROOMS:
        for path in sorted((root / room).rglob("*.py")) if (root / room).is_dir() else [
                root / room]:
            where = str(path.relative_to(root))
            for node in ast.walk(parse_file(path)):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    word = node.value
                elif isinstance(node, ast.Name | ast.Attribute | ast.arg):
                    word = getattr(node, "id", None) or getattr(node, "attr", None) or getattr(
                        node, "arg", "")
                    if not word.endswith("_pin"):
                        continue
                else:
                    continue
                if word in words and words[word] != where:
                    found.append(f"{where}:{node.lineno} {word}")
    return found


def test_a_button_is_named_only_where_it_is_declared() -> None:
    """Fails on the old code: core/buttons.py listed every button (BUTTONS), ports.py bound
    each name to its command, config/sections.py had a field per button (`passive_home_pin`,
    `[keypad] passive_home`) and the terminal a key per button name."""
    assert buttons_named(ROOT) == []
