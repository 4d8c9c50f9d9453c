"""`timerd doctor --service` checks what the installed service sees (issue 30 item 8): the
unit's user, working directory, LG_WD, state and runtime directories, its config and the real
journal, read from the installed unit under --root. A correct install passes; a directory the
service's user cannot write fails, naming the fix. (The old doctor, run as the service's user
from an admin's checkout, checked that checkout's folders instead.)"""

from __future__ import annotations

import io
import os
import pwd
import re
from pathlib import Path

import pytest

from timerd import cli
from timerd.tools import install, unit_file

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
    # The root's own users (--root reads them there, not on this machine): USER, with this
    # machine's ids, so that the files chown'd here are its.
    (root / "etc/passwd").write_text(
        "root:x:0:0:root:/root:/bin/bash\n"
        f"{USER}:x:{account.pw_uid}:{account.pw_gid}::/var/lib/timerd:/usr/sbin/nologin\n")
    (root / "etc/group").write_text(f"root:x:0:\n{USER}:x:{account.pw_gid}:\n")
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
    # Under --root the fix names the root's path, its user by number (this machine's names
    # are not the root's) and keeps --root.
    account = pwd.getpwnam(USER)
    assert found["state directory"] == (
        f"FAIL /var/lib/timerd is not writable by {USER}: `sudo chown "
        f"{account.pw_uid}:{account.pw_gid} {root}/var/lib/timerd`, or `sudo python3 -m "
        f"timerd.tools.install install --root {root}` again")
    assert found["config"] == f"FAIL /etc/timerd/timerd.toml not readable by {USER}"


def test_no_installed_unit_says_how_to_install(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    code, found = _doctor(tmp_path, capsys)
    assert code == 1
    assert found["unit"].startswith("FAIL no /etc/systemd/system/timerd.service")


# -- the unit as systemd reads it, and a card under --root (issue 43 item 3) ----------------

CARD_PASSWD = ("root:x:0:0:root:/root:/bin/bash\n"
               "timerd:x:997:997::/var/lib/timerd:/usr/sbin/nologin\n")


def _card(root: Path, unit: bytes, drop_ins: dict[str, str] | None = None) -> Path:
    """A root with the installer's unit (or `unit`), the card's own users (timerd is 997,
    whom this machine need not have) and open directories, so that no chown is needed."""
    (root / "etc/systemd/system").mkdir(parents=True)
    (root / "etc/systemd/system/timerd.service").write_bytes(unit)
    for name, text in (drop_ins or {}).items():
        (root / "etc/systemd/system" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "etc/systemd/system" / name).write_text(text)
    (root / "etc/passwd").write_text(CARD_PASSWD)
    (root / "etc/group").write_text("root:x:0:\ntimerd:x:997:\ninput:x:105:timerd\n")
    (root / "etc/timerd").mkdir()
    (root / "etc/timerd/timerd.toml").write_text((REPO / "systemd/timerd.toml").read_text())
    (root / "etc/timerd/timerd.toml").chmod(0o644)
    for directory in ("var/lib/timerd", "run/timerd", "root"):
        (root / directory).mkdir(parents=True)
        (root / directory).chmod(0o777)
    return root


def _unit(**changes: str) -> bytes:
    """The installer's unit with each KEY=value line given replaced (or added)."""
    text = install.render_unit((REPO / "systemd/timerd.service").read_text(),
                               "/opt/timerd/venv/bin/timerd run")
    for key, value in changes.items():
        line = f"{key}={value}"
        text, found = re.subn(rf"^{key}=.*$", line.replace("\\", "\\\\"), text, count=1,
                              flags=re.MULTILINE)
        if not found:
            text = text.replace("[Service]\n", f"[Service]\n{line}\n")
    return text.encode()


def test_the_cards_own_users_are_read_not_this_machines(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Fails on the old code, which looked timerd up on this machine ("does not exist")."""
    code, found = _doctor(_card(tmp_path, _unit()), capsys)
    assert found["user"] == "ok timerd (uid 997), groups input, timerd", found
    assert found["state directory"] == "ok /var/lib/timerd, writable by timerd"
    assert code == 0, found


@pytest.mark.parametrize(("value", "expected"), [
    ("-/srv/gone", "warn /srv/gone does not exist; the unit allows that (its '-')"),
    ("~", "ok /root, writable by root"),  # the user's home, from the card
    ("-~/", "ok /root, writable by root"),
])
def test_working_directory_as_systemd_reads_it(tmp_path: Path, value: str, expected: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Fails on the old code: a traceback (ValueError: '-/srv/gone' is not relative to '/')."""
    unit = _unit(WorkingDirectory=value, User="root")
    _, found = _doctor(_card(tmp_path, unit), capsys)
    assert found["working directory"].startswith(expected), found


def test_a_unit_that_is_not_utf8_is_read_as_systemd_reads_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """systemd skips a line that is not UTF-8 and reads the rest. Fails on the old code: a
    traceback (UnicodeDecodeError)."""
    unit = _unit(User="root").replace(b"# A dedicated system user",
                                      b"# A d\xe9di\xe9 system user")
    code, found = _doctor(_card(tmp_path, unit), capsys)
    assert found["unit syntax"].startswith("warn /etc/systemd/system/timerd.service:")
    assert found["unit syntax"].endswith(": not valid UTF-8, skipped by systemd")
    assert found["user"].startswith("ok root (uid 0)")
    assert code == 0, found


def test_drop_ins_are_applied_in_order(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The unit runs as root; `systemctl edit` put User=timerd in a drop-in, and a second
    drop-in resets LG_WD. Fails on the old code, which checked root and ignored both."""
    unit = _unit(User="root", Group="root")
    drop_ins = {"timerd.service.d/override.conf": "[Service]\nUser=timerd\nGroup=timerd\n",
                "timerd.service.d/zz-env.conf": "[Service]\nEnvironment=\n"
                                                "Environment=\"PYTHONUNBUFFERED=1\"\n",
                "service.d/10-all.conf": "[Service]\n# every service\n"}
    code, found = _doctor(_card(tmp_path, unit, drop_ins), capsys)
    assert found["unit"].startswith(
        "ok /etc/systemd/system/timerd.service; drop-ins: /etc/systemd/system/service.d/"
        "10-all.conf, /etc/systemd/system/timerd.service.d/override.conf, "
        "/etc/systemd/system/timerd.service.d/zz-env.conf: ExecStart=")
    assert found["user"].startswith("ok timerd (uid 997)")
    assert found["LG_WD"].startswith("warn not set")
    (tmp_path / "var/lib/timerd").chmod(0o755)  # root's: timerd (not root) cannot write
    code, found = _doctor(tmp_path, capsys)
    assert code == 1
    assert found["state directory"].startswith("FAIL /var/lib/timerd is not writable by timerd")


def test_a_state_directory_outside_var_lib_fails(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """systemd refuses StateDirectory=../../etc. Fails on the old code, which checked
    /var/lib/../../etc (the root's /etc) and said ok."""
    drop_ins = {"timerd.service.d/state.conf": "[Service]\nStateDirectory=\n"
                                               "StateDirectory=../../etc\n"}
    code, found = _doctor(_card(tmp_path, _unit(User="root"), drop_ins), capsys)
    assert code == 1
    assert found["StateDirectory"].startswith(
        "FAIL StateDirectory=../../etc is not a relative path below /var/lib: systemd ignores "
        "it"), found
    assert "state directory" not in found


def test_a_card_just_prepared_says_what_its_first_boot_does(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Fails on the old code: "FAIL unit ... not installed" and a fix without --root, which
    would have installed the service on this machine."""
    image = tmp_path / "image"
    (image / "etc").mkdir(parents=True)
    (image / "etc/rpi-issue").write_text("Raspberry Pi reference 2024-11-19\n")
    (image / "etc/os-release").write_text('PRETTY_NAME="Debian GNU/Linux 12"\nID=debian\n')
    (image / "etc/passwd").write_text("root:x:0:0:root:/root:/bin/bash\n"
                                      "alice:x:1000:1000:,,,:/home/alice:/bin/bash\n")
    (image / "usr/bin").mkdir(parents=True)
    (image / "usr/bin/python3").write_text("")
    out = io.StringIO()
    args = cli.parser().parse_args(["install", "--root", str(image), "--user", "alice"])
    assert install.main(args, out) == 0, out.getvalue()
    code, found = _doctor(image, capsys)
    assert code == 0, found
    assert found["first boot"].startswith(
        "ok the service is not installed yet: this card is prepared (/etc/systemd/system/"
        "timerd-firstboot.service). At its first boot, with the network, the Pi will update "
        "apt's package lists and install the packages timerd needs, create the user timerd, "
        "its virtual environment /opt/timerd/venv with timerd in it, the service "
        "timerd.service, add alice to the group timerd, and start timerd")
    assert found["enabled"] == ("ok /etc/systemd/system/multi-user.target.wants/"
                                "timerd-firstboot.service")
    assert found["python"] == "ok /usr/bin/python3 is on the card"
    assert found["source"].startswith("ok /opt/timerd/src")
    assert found["user"].startswith("ok alice")
    assert found["config"].startswith("ok /etc/timerd/timerd.toml is valid")
    (image / "etc/systemd/system/multi-user.target.wants/timerd-firstboot.service").unlink()
    code = cli.main(["doctor", "--service", "--root", str(image)])
    text = capsys.readouterr().out
    assert code == 1
    assert "FAIL  enabled" in text
    advised = re.findall(r"`(sudo [^`]*)`", text)
    assert advised == [f"sudo python3 -m timerd.tools.install install --root {image}"]


def test_an_instance_reads_its_template_its_drop_ins_and_continued_lines(
        tmp_path: Path) -> None:
    units = tmp_path / "etc/systemd/system"
    (units / "timerd@.service.d").mkdir(parents=True)
    (units / "timerd@east.service.d").mkdir()
    (units / "timerd@.service").write_text(
        "[Service]\n; a comment\nStateDirectory=timerd-%i\nSupplementaryGroups=gpio \\\n"
        "# within a continued line\n  audio\nEnvironment=A=100%%\n")
    (units / "timerd@.service.d/a.conf").write_text("[Service]\nUser=timerd\n")
    (units / "timerd@east.service.d/b.conf").write_text("[Service]\nSupplementaryGroups=input\n")
    (units / "timerd@west.service.d").mkdir()
    (units / "timerd@west.service.d/b.conf").write_text("[Service]\nUser=root\n")
    unit = unit_file.load(tmp_path, "timerd@east.service")
    assert unit.path == Path("/etc/systemd/system/timerd@.service")
    assert unit.last("StateDirectory") == "timerd-east"
    assert unit.words("SupplementaryGroups") == ["gpio", "audio", "input"]
    assert unit.last("Environment") == "A=100%"
    assert unit.last("User") == "timerd"
    (units / "timerd@east.service").symlink_to("/dev/null")  # masked
    assert unit_file.load(tmp_path, "timerd@east.service").masked
