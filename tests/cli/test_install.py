"""`timerd install`, `uninstall` and `doctor`, as far as they can run without systemd and root:
--dry-run prints every step, --root writes the files under a directory and runs no command."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from timerd import cli, install
from timerd import config as config_mod
from timerd.adapters.journal import JOURNAL_NAME
from timerd.install import render_unit

REPO = Path(__file__).resolve().parent.parent.parent


def timerd(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "timerd", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=60, check=False)


def test_install_dry_run_names_every_step_and_changes_nothing(tmp_path: Path) -> None:
    result = timerd("install", "--dry-run", "--root", str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    for expected in (
            "apt-get install -y --no-install-recommends python3-venv python3-lgpio",
            "groupadd --system gpio",
            "useradd --system --user-group --home-dir /var/lib/timerd --no-create-home "
            "--shell /usr/sbin/nologin timerd",
            "usermod --append --groups gpio,audio,dialout timerd",
            "/usr/bin/python3 -m venv --system-site-packages /opt/timerd/venv",
            f"/opt/timerd/venv/bin/pip install --upgrade '{REPO}[sound]'",
            f"write {tmp_path}/etc/timerd/timerd.toml",
            f"write {tmp_path}/etc/systemd/system/timerd.service",
            "systemctl daemon-reload",
            "systemctl enable --now timerd.service"):
        assert expected in out
    assert list(tmp_path.iterdir()) == []


def test_install_under_a_root_writes_the_unit_and_a_valid_config(tmp_path: Path) -> None:
    result = timerd("install", "--root", str(tmp_path), "--no-apt")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "apt-get" not in result.stdout
    unit = (tmp_path / "etc/systemd/system/timerd.service").read_text()
    assert unit == render_unit((REPO / "systemd/timerd.service").read_text(),
                               "/opt/timerd/venv/bin/timerd run")
    config = config_mod.load(tmp_path / "etc/timerd/timerd.toml")  # SchemaError if not valid
    assert config.gpio.start_pause_pin == 17

    # A second install keeps the operator's edited config.
    (tmp_path / "etc/timerd/timerd.toml").write_text('[match]\nprofile = "ithf-thirds"\n')
    result = timerd("install", "--root", str(tmp_path), "--no-apt")
    assert "kept " in result.stdout
    assert "ithf-thirds" in (tmp_path / "etc/timerd/timerd.toml").read_text()


def test_uninstall_removes_the_unit_and_keeps_the_config_unless_purged(tmp_path: Path) -> None:
    timerd("install", "--root", str(tmp_path), "--no-apt")
    (tmp_path / "opt/timerd/venv/bin").mkdir(parents=True)  # as if pip had filled it
    (tmp_path / "var/lib/timerd").mkdir(parents=True)
    result = timerd("uninstall", "--root", str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "systemctl disable --now timerd.service" in result.stdout
    assert not (tmp_path / "etc/systemd/system/timerd.service").exists()
    assert not (tmp_path / "opt/timerd/venv").exists()
    assert (tmp_path / "etc/timerd/timerd.toml").exists()
    assert (tmp_path / "var/lib/timerd").exists()
    result = timerd("uninstall", "--root", str(tmp_path), "--purge")
    assert "userdel timerd" in result.stdout
    assert not (tmp_path / "etc/timerd").exists()
    assert not (tmp_path / "var/lib/timerd").exists()


def test_install_for_real_needs_root_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)  # whoever runs the tests: not root
    out = io.StringIO()
    for command in ("install", "uninstall"):
        args = cli.parser().parse_args([command])
        assert install.main(args, out) == 2
    assert out.getvalue().count("run it as root (sudo)") == 2


def test_render_unit_needs_exactly_one_exec_start() -> None:
    with pytest.raises(ValueError, match="exactly one ExecStart"):
        render_unit("[Service]\nType=notify\n", "/bin/true")


def test_the_installer_runs_with_the_standard_library_alone(tmp_path: Path) -> None:
    """`sudo python3 -m timerd.install` on a fresh Pi, before any dependency is installed."""
    code = ("import sys; sys.modules['gpiozero'] = sys.modules['tomli_w'] = None\n"
            "import runpy; sys.argv = ['x', 'install', '--dry-run', '--root', sys.argv[1]]\n"
            "runpy.run_module('timerd.install', run_name='__main__')")
    result = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=REPO,
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert "systemctl enable --now timerd.service" in result.stdout


# -- doctor ----------------------------------------------------------------------------------

def doctor_env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "STATE_DIRECTORY": str(tmp_path / "state"),
            "RUNTIME_DIRECTORY": str(tmp_path / "run")}


def test_doctor_checks_every_configured_pin_on_simulated_pins(tmp_path: Path) -> None:
    config = tmp_path / "timerd.toml"
    config.write_text('[gpio]\npin_factory = "mock"\nreset_pin = "none"\n')
    result = timerd("doctor", "--config", str(config), env=doctor_env(tmp_path))
    lines = result.stdout.splitlines()
    assert any(line.startswith("ok    config") and f"{config} is valid" in line
               for line in lines)
    assert any("pin factory" in line and "MockFactory" in line for line in lines)
    for pin, what in ((17, "input with pull-up"), (22, "output, driven low"),
                      (5, "output"), (6, "output"), (13, "output")):
        assert any(line.split()[1] == f"GPIO{pin}" and what in line for line in lines), pin
    assert not any("GPIO27" in line for line in lines)  # not fitted: not checked
    assert any(f"{tmp_path / 'state'} ($STATE_DIRECTORY) is writable" in line
               for line in lines)
    assert any("no unfinished match" in line for line in lines)
    assert result.returncode == 0, result.stdout


def test_doctor_explains_a_bad_config_and_a_machine_without_gpio(tmp_path: Path) -> None:
    config = tmp_path / "timerd.toml"
    config.write_text('[gpio]\nbuzer_pins = [22]\n')
    result = timerd("doctor", "--config", str(config), env=doctor_env(tmp_path))
    assert result.returncode == 1
    assert "did you mean `buzzer_pins`?" in result.stdout
    if not Path("/dev/gpiochip0").exists():
        assert "FAIL  gpio access" in result.stdout
        assert "no /dev/gpiochip*" in result.stdout
    assert "failed" in result.stdout.splitlines()[-1]


def test_doctor_tells_what_the_next_start_does_with_the_journal(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    from timerd.profiles import load  # noqa: PLC0415
    from timerd.schema import to_plain  # noqa: PLC0415

    records = [{"type": "match", "match": "m", "run": "r", "profile": to_plain(load("ithf")),
                "t": 0.0, "wall": 1e9},
               {"type": "command", "command": "start", "args": [], "t": 0.0, "wall": 1e9},
               {"type": "signal", "signal": "start", "t": 20.0, "wall": 1e9 + 20}]
    (state / JOURNAL_NAME).write_text("".join(json.dumps(r) + "\n" for r in records) + "{")
    config = tmp_path / "timerd.toml"
    config.write_text('[gpio]\npin_factory = "mock"\n')
    result = timerd("doctor", "--config", str(config), env=doctor_env(tmp_path))
    line = next(x for x in result.stdout.splitlines() if "match journal" in x)
    # Last seen in 2001: far older than two hours.
    assert "closed as abandoned" in line
    assert "1 damaged lines will be skipped" in line
    assert (state / JOURNAL_NAME).read_text().endswith("{")  # looked at, not changed
