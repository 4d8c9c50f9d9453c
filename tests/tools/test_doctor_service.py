"""`timerd doctor --service` checks what the installed service sees (issue 30 item 8): the
unit's user, working directory, LG_WD, state and runtime directories, its config and the real
journal, read from the installed unit under --root. A correct install passes; a directory the
service's user cannot write fails, naming the fix. (The old doctor, run as the service's user
from an admin's checkout, checked that checkout's folders instead.)"""

from __future__ import annotations

import os
import pwd
import re
from pathlib import Path

import pytest

from timerd import cli
from timerd.tools import install

REPO = Path(__file__).resolve().parents[2]
USER = "nobody"  # stands in for `timerd`: a user that exists here and is not root


def _installed(root: Path) -> Path:
    """An install as `timerd install` leaves it, for the service user USER, under root."""
    unit = install.render_unit((REPO / "systemd/timerd.service").read_text(),
                               "/opt/timerd/venv/bin/timerd run")
    unit = re.sub(r"^User=timerd$", f"User={USER}", unit, flags=re.MULTILINE)
    unit_path = root / "etc/systemd/system/timerd.service"
    unit_path.parent.mkdir(parents=True)
    unit_path.write_text(unit)
    account = pwd.getpwnam(USER)
    config = root / "etc/timerd/timerd.toml"
    config.parent.mkdir(parents=True)
    config.write_text((REPO / "systemd/timerd.toml").read_text())
    os.chown(config, 0, account.pw_gid)  # root:timerd 0640, as the installer makes it
    config.chmod(0o640)
    for directory in ("var/lib/timerd", "run/timerd"):  # what systemd makes for the service
        (root / directory).mkdir(parents=True)
        os.chown(root / directory, account.pw_uid, account.pw_gid)
        (root / directory).chmod(0o750)
    return root


def _doctor(root: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, str]]:
    code = cli.main(["doctor", "--service", "--root", str(root)])
    lines = capsys.readouterr().out.splitlines()
    found = {}
    for line in lines:
        if match := re.match(r"^(ok|warn|FAIL)\s+(\S.*?)\s{2,}(.*)$", line):
            found[match.group(2)] = f"{match.group(1)} {match.group(3)}"
    return code, found


@pytest.mark.skipif(os.geteuid() != 0, reason="makes files owned by another user (root only)")
def test_a_correct_install_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, found = _doctor(_installed(tmp_path), capsys)
    assert code == 0, found
    assert found["user"].startswith(f"ok {USER} (uid ")
    assert found["working directory"] == f"ok /var/lib/timerd, writable by {USER}"
    assert found["LG_WD"] == f"ok /run/timerd, writable by {USER}"
    assert found["state directory"] == f"ok /var/lib/timerd, writable by {USER}"
    assert found["runtime directory"] == f"ok /run/timerd, writable by {USER}"
    assert found["config"] == f"ok /etc/timerd/timerd.toml readable by {USER}"
    assert found["match journal"] == "ok no unfinished match"


@pytest.mark.skipif(os.geteuid() != 0, reason="makes files owned by another user (root only)")
def test_what_the_service_user_cannot_use_fails_with_the_fix(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _installed(tmp_path)
    os.chown(root / "var/lib/timerd", 0, 0)  # root's: the service cannot write its journal
    (root / "etc/timerd/timerd.toml").chmod(0o600)
    code, found = _doctor(root, capsys)
    assert code == 1
    assert found["state directory"] == (
        f"FAIL /var/lib/timerd is not writable by {USER}: `sudo chown {USER}: /var/lib/timerd`"
        ", or `sudo timerd install` again")
    assert found["config"] == f"FAIL /etc/timerd/timerd.toml not readable by {USER}"


def test_no_installed_unit_says_how_to_install(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    code, found = _doctor(tmp_path, capsys)
    assert code == 1
    assert found["unit"].startswith("FAIL no /etc/systemd/system/timerd.service")
