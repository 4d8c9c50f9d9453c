"""The Pi's trap: apt's python3-lgpio is there, but a plain `python3 -m venv` cannot see it.
`timerd doctor` and the no-pin-factory error must name the command that fixes it (issue 17).

The virtual environment is real (made by `venv`, fixed by the very command the hint names);
the system's site directory is a temporary one holding a stand-in lgpio package, since this
machine is not a Pi."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from timerd import config as config_mod
from timerd.adapters import gpio
from timerd.tools import doctor


def make_venv(path: Path, *options: str) -> Path:
    subprocess.run([sys.base_prefix + "/bin/python3", "-m", "venv", "--without-pip", *options,
                    str(path)], check=True, timeout=120)
    return path


@pytest.fixture
def system_lgpio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A system site directory with lgpio in it, as python3-lgpio leaves on a Pi."""
    site = tmp_path / "dist-packages"
    (site / "lgpio").mkdir(parents=True)
    (site / "lgpio" / "__init__.py").write_text("raise ImportError('not a Pi')\n")
    monkeypatch.setattr(gpio, "SYSTEM_SITE", site)
    return site


def test_doctor_names_the_fix_for_a_venv_that_hides_the_systems_lgpio(
        tmp_path: Path, system_lgpio: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    venv = make_venv(tmp_path / "venv")
    monkeypatch.setattr(sys, "prefix", str(venv))  # as if timerd ran from that venv
    checks = doctor.check_gpio(config_mod.Config())
    factory = next(c for c in checks if c.topic == "pin factory")
    assert factory.level == doctor.FAIL
    assert f"lgpio is installed for the system ({system_lgpio})" in factory.message
    assert "sudo apt install python3-lgpio" not in factory.message  # it is installed already
    command = re.search(r"Fix it with `([^`]+)`", factory.message)
    assert command is not None
    assert command.group(1).endswith(f"-m venv --system-site-packages {venv}")

    # The named command is the fix: afterwards the venv sees the system's packages.
    subprocess.run(shlex.split(command.group(1)), check=True, timeout=120)
    assert "include-system-site-packages = true" in (venv / "pyvenv.cfg").read_text()
    assert gpio.lgpio_hint() == ""


def test_no_hint_where_the_venv_sees_the_system_or_lgpio_is_nowhere(
        tmp_path: Path, system_lgpio: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    venv = make_venv(tmp_path / "venv", "--system-site-packages")
    monkeypatch.setattr(sys, "prefix", str(venv))
    assert gpio.lgpio_hint() == ""
    monkeypatch.setattr(sys, "prefix", sys.base_prefix)  # no venv at all
    assert gpio.lgpio_hint() == ""
    hidden = make_venv(tmp_path / "hidden")
    monkeypatch.setattr(sys, "prefix", str(hidden))
    monkeypatch.setattr(gpio, "SYSTEM_SITE", tmp_path / "empty")
    assert gpio.lgpio_hint() == ""
    # Off a Pi without the trap, the error keeps its simulate advice.
    with pytest.raises(gpio.NoGpio, match="timerd run --simulate"):
        gpio.pin_factory("auto")
