"""hw/README.md's wiring table is the truth the diagram, the header and the config agree with."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from timerd.config import GpioConfig

HW = Path(__file__).resolve().parent.parent / "hw"


def make_diagram() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_diagram", HW / "make_diagram.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


DIAGRAM = make_diagram()
ROWS = DIAGRAM.read_table((HW / "README.md").read_text())


def test_the_svg_is_drawn_from_the_table() -> None:
    assert (HW / "wiring.svg").read_text() == DIAGRAM.render(ROWS)
    result = subprocess.run([sys.executable, str(HW / "make_diagram.py"), "--check"],
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr


def test_each_physical_pin_carries_the_gpio_the_table_says() -> None:
    assert len(ROWS) >= 14
    for row in ROWS:
        assert DIAGRAM.HEADER[row.physical] == f"GPIO{row.bcm}", row.part
    assert len({r.bcm for r in ROWS}) == len(ROWS)
    assert len({r.physical for r in ROWS}) == len(ROWS)


def test_buttons_are_active_low_and_outputs_active_high() -> None:
    for row in ROWS:
        assert row.active == ("low" if row.kind == "button" else "high"), row.part


def test_every_configured_pin_is_in_the_table_at_its_default() -> None:
    documented = {r.key: r.bcm for r in ROWS}
    for key, pin in GpioConfig().pins().items():
        assert documented.get(key) == pin, f"{key} = {pin} is not in hw/README.md as such"


def test_a_table_line_that_does_not_parse_is_named() -> None:
    text = ("<!-- wiring:begin -->\n| a | b | c | d | e |\n|---|\n"
            "| Buzzer | `x` | GPIOtwo | 15 | high |\n<!-- wiring:end -->")
    with pytest.raises(ValueError, match="GPIOtwo"):
        DIAGRAM.read_table(text)
