"""The walls between the rooms (issue 14, docs/ARCHITECTURE.md), read from the code itself:
each test fails when a change breaks its wall, naming the file and the import or call.

- Adapters see ports, never the service, the app or each other (invariant 3): an adapter
  imports the core, `ports`, `wire`, the config, the shared input limits (`limits`), the disk
  writer (`disk`), the message catalogue, and its own protocol module.
- Tools import no adapter internals (invariant 3): of `timerd.adapters`, a tool imports only
  the documented protocol and format modules (`PROTOCOLS`); the daemon's own setup (pins,
  what stops a start) it reaches through `app.py`.
- `app.py` alone wires (invariant 4): only it constructs adapters and registers outputs,
  commands, buttons and status keys with the service.
- A reply to a request is built in `wire.py` (invariant 6), never written where it is sent.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "timerd"
ADAPTERS = ROOT / "adapters"

#: What any adapter may import of timerd.
SHARED = ("timerd.core", "timerd.ports", "timerd.wire", "timerd.config", "timerd.config.schema",
          "timerd.limits", "timerd.disk", "timerd.i18n")
#: An adapter's own documented format module (each says so in its docstring): the adapter
#: imports it, and so may the tools; no other adapter does.
OWN_PROTOCOL = {"serial_display": "timerd.adapters.serial_protocol",
                "hall": "timerd.adapters.hall.protocol",
                "results": "timerd.adapters.results.format",
                "journal": "timerd.adapters.journal.format"}
#: What a tool may import of the adapters: their documented protocol and format modules.
PROTOCOLS = frozenset(OWN_PROTOCOL.values())
#: The adapters' classes that stand for a part of the outside world.
ADAPTER_CLASSES = {"GpioBoard", "Speaker", "EventStream", "SerialDisplay", "ControlSocket",
                   "WebServer", "HallLink", "Journal", "ResultsFile", "SystemdNotifier",
                   "TerminalDisplay", "Keyboard", "Keypad"}
#: The service's registers that only the composition root fills.
REGISTERS = {"outputs", "status_extras", "extra_commands", "buttons", "chords"}


def _tree(path: Path) -> ast.AST:
    return ast.parse(path.read_text(), str(path))


def timerd_imports(path: Path) -> set[str]:
    """The timerd modules `path` imports (`from timerd import cli` counts as `timerd.cli`,
    `from timerd.adapters.hall import link` as `timerd.adapters.hall.link`)."""
    names = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names if a.name.startswith("timerd")}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.startswith("timerd"):
            names |= {_module(node.module, a.name) for a in node.names}
    return names


def _module(package: str, name: str) -> str:
    """What `from package import name` imports: the module `package.name` when there is
    one (`from timerd.adapters.hall import link`), else `package` itself."""
    path = ROOT.parent.joinpath(*package.split("."), name)
    is_module = path.with_suffix(".py").exists() or (path / "__init__.py").exists()
    return f"{package}.{name}" if is_module else package


def adapter_wall_breaches(adapters: Path) -> set[str]:
    out = set()
    for path in sorted(adapters.rglob("*.py")):
        # A part is a module, or a package whose modules may import each other.
        part = path.stem if path.parent == adapters else path.parent.name
        allowed = (*SHARED, OWN_PROTOCOL.get(part, "-"), f"timerd.adapters.{part}.")
        for name in timerd_imports(path):
            if name != "timerd" and not name.startswith(allowed) and name != "timerd.__version__":
                out.add(f"{path.name}: {name}")
    return out


def tools(root: Path) -> list[Path]:
    """The tools: what an operator or a tournament desk runs beside the daemon (the command
    line, and every module in `tools/`)."""
    return [root / "cli.py", *sorted((root / "tools").glob("*.py"))]


def tool_wall_breaches(root: Path) -> set[str]:
    """Adapter modules a tool imports that are not a documented protocol or format module
    (`from timerd.adapters import hall` counts as `timerd.adapters.hall.link`)."""
    out = set()
    for path in tools(root):
        for module in timerd_imports(path) | _adapter_modules(path):
            if module.startswith("timerd.adapters.") and module not in PROTOCOLS:
                out.add(f"{path.name}: {module}")
    return out


def _adapter_modules(path: Path) -> set[str]:
    """`from timerd.adapters import x` as `timerd.adapters.x`."""
    return {f"timerd.adapters.{a.name}" for node in ast.walk(_tree(path))
            if isinstance(node, ast.ImportFrom) and node.module == "timerd.adapters"
            for a in node.names}


def wiring_outside_the_app(root: Path) -> set[str]:
    """Adapters constructed, or the service's registers filled, anywhere but app.py (an
    adapter may make itself, as in `Speaker.for_service`, and fill its own attributes)."""
    out = set()
    for path in sorted(root.rglob("*.py")):
        if path.name == "app.py" and path.parent == root:
            continue
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else \
                    func.value.id if isinstance(func, ast.Attribute) and \
                    isinstance(func.value, ast.Name) else None
                if name in ADAPTER_CLASSES and not _defines(path, name):
                    out.add(f"{path.relative_to(root)}:{node.lineno}: constructs {name}")
            if isinstance(node, ast.Attribute) and node.attr in REGISTERS and \
                    _is_service(node.value) and path.name != "service.py":
                out.add(f"{path.relative_to(root)}:{node.lineno}: service.{node.attr}")
    return out


def _is_service(node: ast.expr) -> bool:
    """`service` or `anything.service`."""
    return (isinstance(node, ast.Name) and node.id == "service") or \
        (isinstance(node, ast.Attribute) and node.attr == "service")


def _defines(path: Path, class_name: str) -> bool:
    return any(isinstance(n, ast.ClassDef) and n.name == class_name
               for n in ast.walk(_tree(path)))


def replies_outside_the_wire(root: Path) -> set[str]:
    """A reply (a dict with "ok" and "error", or such JSON as text) made anywhere in the
    daemon but wire.py (the tools are the replies' readers)."""
    out = set()
    for path in sorted(root.rglob("*.py")):
        if path == root / "wire.py" or (root / "tools") in path.parents:
            continue
        tree = _tree(path)
        docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
        for node in ast.walk(tree):
            keys = {k.value for k in node.keys if isinstance(k, ast.Constant)} \
                if isinstance(node, ast.Dict) else set()
            text = "" if id(node) in docstrings else _text(node)
            if {"ok", "error"} <= keys or ('"ok":' in text and '"error":' in text):
                out.add(f"{path.relative_to(root)}:{node.lineno}")
    return out


def _text(node: ast.AST) -> str:
    """A string or bytes constant as text; anything else as ""."""
    value = node.value if isinstance(node, ast.Constant) else ""
    return value.decode(errors="replace") if isinstance(value, bytes) else \
        value if isinstance(value, str) else ""


def test_replies_are_built_in_the_wire_module() -> None:
    assert replies_outside_the_wire(ROOT) == set()


def test_adapters_import_ports_not_the_service_the_app_or_each_other() -> None:
    assert adapter_wall_breaches(ADAPTERS) == set()


def test_tools_import_only_the_adapters_documented_protocol_and_format_modules() -> None:
    assert ROOT / "tools" / "hall_desk.py" in tools(ROOT)
    assert tool_wall_breaches(ROOT) == set()


def test_each_module_tools_may_import_says_it_is_a_documented_format() -> None:
    for module in PROTOCOLS:
        path = ROOT.parent / (module.replace(".", "/") + ".py")
        docstring = ast.get_docstring(_tree(path)) or ""
        assert "A documented format: tools may import this module" in " ".join(
            docstring.split()), path


def test_only_the_app_constructs_adapters_and_fills_the_services_registers() -> None:
    assert wiring_outside_the_app(ROOT) == set()


def test_the_checks_see_a_breach(tmp_path: Path) -> None:
    """Each check fails on code that breaks its wall (the way a regression would)."""
    (tmp_path / "adapters").mkdir()
    (tmp_path / "adapters" / "web.py").write_text(
        "from timerd.service import Service\nfrom timerd.adapters.events import x\n"
        "from timerd.ports import Control\n")
    assert adapter_wall_breaches(tmp_path / "adapters") == {
        "web.py: timerd.service", "web.py: timerd.adapters.events"}
    (tmp_path / "tool.py").write_text(
        "def run(service):\n    service.outputs.append(HallLink(None, service))\n"
        "def enter(self):\n    self.service.status_extras.append(self.status_extra)\n")
    assert wiring_outside_the_app(tmp_path) == {"tool.py:2: constructs HallLink",
                                                "tool.py:2: service.outputs",
                                                "tool.py:4: service.status_extras"}
    (tmp_path / "cli.py").write_text(
        "from timerd.adapters.results.format import recent_results\n"
        "def run():\n    from timerd.adapters.gpio import pin_factory\n")
    (tmp_path / "service.py").write_text(
        'def f():\n    return {"ok": False, "error": "no"}\n'
        'REFUSED = b\'{"ok": false, "error": "busy"}\'\n')
    assert replies_outside_the_wire(tmp_path) == {"service.py:2", "service.py:3"}
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "desk.py").write_text("from timerd.adapters.hall import link\n")
    assert tool_wall_breaches(tmp_path) == {"cli.py: timerd.adapters.gpio",
                                            "desk.py: timerd.adapters.hall.link"}
