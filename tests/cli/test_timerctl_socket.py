"""Which control socket `timerctl` talks to, and `--version` (issue 17 items 3 and 4).

The order: `--socket`, `$TIMERD_SOCKET`, the config's `control.socket`, the service's
/run/timerd/control.sock when it exists, then the per-user runtime directory of `timerd run`.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from timerd import __version__, cli, version
from timerd import config as config_mod
from timerd.config import paths

REPO = Path(__file__).resolve().parent.parent.parent


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A machine whose /run, /etc/timerd and session runtime directory are under tmp_path."""
    monkeypatch.setattr(paths, "SYSTEM_RUNTIME", tmp_path / "run")
    monkeypatch.setattr(paths, "SYSTEM_CONFIG", tmp_path / "etc" / "timerd.toml")
    for name in ("TIMERD_SOCKET", "RUNTIME_DIRECTORY", "STATE_DIRECTORY", config_mod.INSTANCE_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "session"))
    return tmp_path


def service_socket(machine: Path, name: str = "timerd") -> Path:
    path = machine / "run" / name / "control.sock"
    path.parent.mkdir(parents=True)
    path.touch()
    return path


def test_without_a_service_timerctl_uses_the_per_user_socket(machine: Path) -> None:
    assert cli.find_socket(None) == machine / "session" / "timerd" / "control.sock"


def test_the_services_socket_comes_before_the_per_user_one(machine: Path) -> None:
    """Fails on main: timerctl looked only in the per-user places, never in /run/timerd."""
    path = service_socket(machine)
    assert cli.find_socket(None) == path


def test_the_config_then_the_variable_then_the_option_come_first(
        machine: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    service_socket(machine)
    (machine / "etc").mkdir()
    (machine / "etc" / "timerd.toml").write_text('[control]\nsocket = "/srv/from-config"\n')
    assert cli.find_socket(None) == Path("/srv/from-config")
    monkeypatch.setenv("TIMERD_SOCKET", "/srv/from-env")
    assert cli.find_socket(None) == Path("/srv/from-env")
    assert cli.find_socket(Path("/srv/flag")) == Path("/srv/flag")


def test_an_instance_has_its_own_sockets(machine: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    service_socket(machine)  # the unnamed instance's: not table2's
    monkeypatch.setenv(config_mod.INSTANCE_ENV, "table2")
    assert cli.find_socket(None) == machine / "session" / "timerd-table2" / "control.sock"
    assert cli.find_socket(None) == config_mod.runtime_dir() / "control.sock"
    assert config_mod.system_config() == machine / "etc" / "table2.toml"
    assert config_mod.state_dir().name == "timerd-table2"
    path = service_socket(machine, "timerd-table2")
    assert cli.find_socket(None) == path


def test_timerctl_instance_option_selects_the_instance(
        machine: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.timerctl(["--instance", "table2", "status"]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert f"no timerd is listening at {machine / 'session' / 'timerd-table2'}" in err
    assert cli.timerctl(["--instance", "../x", "status"]) == cli.EXIT_USAGE
    assert "instance name '../x'" in capsys.readouterr().err


def test_a_socket_timerctl_may_not_use_says_how_to_get_access(machine: Path) -> None:
    error = cli._unreachable(machine / "control.sock", PermissionError(13, "Permission denied"))
    assert "add yourself to the timerd group (`sudo usermod -aG timerd $USER`" in error


@pytest.mark.parametrize("program", ["timerd", "timerctl"])
def test_version_comes_from_the_package(program: str) -> None:
    code = f"import sys; from timerd import cli; sys.argv[0] = {program!r}; " \
           f"cli.{'main' if program == 'timerd' else 'timerctl'}(['--version'])"
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                            text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"{program} {version()}\n"
    assert version() == __version__  # pyproject reads it from timerd.__version__
