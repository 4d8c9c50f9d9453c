"""`timerd install`, `uninstall` and `doctor`, as far as they can run without systemd and root:
--dry-run prints every step, --root writes the files under a directory and runs no command."""

from __future__ import annotations

import io
import json
import os
import pwd
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_unit_file import settings
from timerd import cli
from timerd import config as config_mod
from timerd.adapters.journal.format import JOURNAL_NAME
from timerd.config import INSTANCE_ENV, paths, profiles
from timerd.core.match import Match
from timerd.tools import doctor, install
from timerd.tools.install import render_unit
from timerd.wire import status_document

REPO = Path(__file__).resolve().parent.parent.parent


def timerd(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "timerd", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=60, check=False)


# -- the installer on "the machine", with fake commands on PATH -----------------------------

#: Each fake appends its name and arguments to $FAKE_LOG, then behaves as the test needs.
FAKE = """#!/bin/sh
echo "$(basename "$0") $*" >> "$FAKE_LOG"
"""
FAKES = {
    "apt-get": "", "groupadd": "", "useradd": "", "usermod": "", "userdel": "",
    "chown": "", "chmod": "", "udevadm": "",
    # apt knows python3-lgpio on Raspberry Pi OS (FAKE_LGPIO=1), not on plain Debian.
    "apt-cache": '[ -n "$FAKE_LGPIO" ] && echo "Package: $2" || exit 100\n',
    # The service is running when FAKE_ACTIVE=1.
    "systemctl": '[ "$1" != is-active ] || [ -n "$FAKE_ACTIVE" ] || exit 3\n',
    # `python3 -m venv ... DIR` makes a venv whose pip records, timerd tells its version and
    # timerctl prints $FAKE_STATUS (what the running service would say).
    "python3": """for last; do :; done
mkdir -p "$last/bin"
for tool in pip timerd timerctl; do
  printf '#!/bin/sh\\necho "%s $*" >> "$FAKE_LOG"\\n' "$tool" > "$last/bin/$tool"
done
echo 'echo "timerd 9.9.9"' >> "$last/bin/timerd"
echo 'echo "$FAKE_STATUS"' >> "$last/bin/timerctl"
/bin/chmod +x "$last/bin/"*
""",
}
PI_OS = 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\n'


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Raspberry Pi 5 whose files are under tmp_path/root and whose system commands are
    fakes that record what they were asked, in order (tmp_path/calls)."""
    root, bin_dir = tmp_path / "root", tmp_path / "bin"
    (root / "etc").mkdir(parents=True)
    (root / "etc/os-release").write_text(PI_OS)
    (root / "proc/device-tree").mkdir(parents=True)
    (root / "proc/device-tree/model").write_bytes(b"Raspberry Pi 5 Model B Rev 1.0\0")
    bin_dir.mkdir()
    for name, body in FAKES.items():
        (bin_dir / name).write_text(FAKE + body)
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_LOG", str(tmp_path / "calls"))
    monkeypatch.setenv("FAKE_LGPIO", "1")
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    return root


def calls(root: Path) -> list[str]:
    log = root.parent / "calls"
    return log.read_text().splitlines() if log.exists() else []


def run_installer(root: Path, *argv: str, answer: str = "",
                  monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    """`timerd install ...` as on the machine (its commands run: the fakes), files under root,
    `answer` typed at the question. The install's venv is made at root/opt/timerd/venv, where
    uninstall's default /opt/timerd/venv, taken under root, finds it."""
    args = cli.parser().parse_args([*argv[:1], "--root", str(root), *argv[1:]])
    if argv[0] == "install":
        args.venv = root / "opt/timerd/venv"
        args.python = str(root.parent / "bin" / "python3")
    monkeypatch.setattr(sys, "stdin", io.StringIO(answer))
    out = io.StringIO()
    code = install.main(args, out, machine=True)
    return code, out.getvalue()


def test_a_fresh_install_runs_every_step_in_order(machine: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    code, out = run_installer(machine, "install", "--user", "alice", "--yes",
                              monkeypatch=monkeypatch)
    assert code == 0, out
    venv = machine / "opt/timerd/venv"
    expected = [
        "apt-cache show python3-lgpio",
        "systemctl is-active --quiet timerd.service",
        "apt-get update",  # a card's first boot has no package lists yet (issue 30 item 9)
        "apt-get install -y --no-install-recommends python3-venv python3-lgpio python3-dev "
        "gcc libasound2-dev",
        "useradd --system --user-group --home-dir /var/lib/timerd --no-create-home "
        "--shell /usr/sbin/nologin timerd",
        "usermod --append --groups gpio,audio,dialout,input timerd",
        "usermod --append --groups timerd alice",
        f"python3 -m venv --system-site-packages {venv}",
        f"pip install --upgrade {REPO}[sound,hall,keypad]",
        "timerd completion --install",  # tab completion (issue 30 item 12)
        "chown root:timerd /etc/timerd/timerd.toml",
        "chmod 0640 /etc/timerd/timerd.toml",
        "udevadm trigger --settle --subsystem-match=misc --sysname-match=cpu_dma_latency",
        "systemctl daemon-reload",
        "systemctl enable timerd.service",
        "systemctl restart timerd.service",
        "timerd --version",
    ]
    # groupadd runs only for the groups this machine lacks (Debian has audio and dialout).
    assert [c for c in calls(machine) if not c.startswith("groupadd")] == expected
    assert all(c.split()[-1] in install.GROUPS for c in calls(machine) if "groupadd" in c)
    # The plan comes first, before apt is touched.
    assert out.index("timerd install will:") < out.index("$ apt-get")
    for name in ("timerd", "timerctl"):
        assert os.readlink(machine / "usr/local/bin" / name) == str(venv / "bin" / name)
    unit = (machine / "etc/systemd/system/timerd.service").read_text()
    assert unit == render_unit((REPO / "systemd/timerd.service").read_text(),
                               f"{venv}/bin/timerd run")
    # The group timerd may hold the CPUs' wake-up latency ([service] cpu_latency_us).
    assert 'KERNEL=="cpu_dma_latency", GROUP="timerd", MODE="0660"' in (
        machine / "etc/udev/rules.d/60-timerd.rules").read_text()
    config = config_mod.load(machine / "etc/timerd/timerd.toml")  # SchemaError if not valid
    assert config.gpio.buttons["start_pause"] == 17
    assert "timerd 9.9.9 is installed and (re)started" in out

    # A second install keeps the operator's edited config.
    (machine / "etc/timerd/timerd.toml").write_text('[match]\nprofile = "ithf-thirds"\n')
    code, out = run_installer(machine, "install", "--yes", monkeypatch=monkeypatch)
    assert "kept " in out
    assert "ithf-thirds" in (machine / "etc/timerd/timerd.toml").read_text()


def test_the_plan_is_shown_and_nothing_is_touched_without_a_yes(
        machine: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out = run_installer(machine, "install", answer="n\n", monkeypatch=monkeypatch)
    assert code == 1
    assert "install the system packages" in out
    assert "Go on? [y/N]" in out
    assert "nothing changed" in out
    assert [c for c in calls(machine) if not c.startswith(("apt-cache", "systemctl is-active"))
            ] == []
    assert not (machine / "etc/timerd").exists()


def test_a_dry_run_names_every_step_and_changes_nothing(machine: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    code, out = run_installer(machine, "install", "--dry-run", monkeypatch=monkeypatch)
    assert code == 0, out
    for expected in ("apt-get install -y --no-install-recommends python3-venv python3-lgpio",
                     "systemctl restart timerd.service", f"pip install --upgrade '{REPO}"):
        assert expected in out
    assert "[y/N]" not in out
    assert [c.split()[0] for c in calls(machine)] == ["apt-cache", "systemctl"]  # queries only
    assert sorted(p.name for p in machine.iterdir()) == ["etc", "proc"]
    assert not (machine / "etc/timerd").exists()


def test_an_upgrade_asks_when_a_match_is_running_and_then_restarts(
        machine: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_installer(machine, "install", "--yes", monkeypatch=monkeypatch)
    (machine.parent / "calls").unlink()
    monkeypatch.setenv("FAKE_ACTIVE", "1")
    running = Match(profiles.load("ithf"))
    running.handle(running.parse("start"), 0.0)
    running.poll(168.8)  # 151.2 s left: the table's clock reads 2:32 (rounded up), not 2:31
    monkeypatch.setenv("FAKE_STATUS", json.dumps(status_document(running.status(168.8), [])))
    code, out = run_installer(machine, "install", answer="\n", monkeypatch=monkeypatch)
    assert code == 1
    assert "A match is under way on this table (ithf: running, 2:32 left)" in out
    assert "the match comes back paused" in out
    assert not any(c.startswith(("apt-get", "pip", "systemctl restart")) for c in calls(machine))

    code, out = run_installer(machine, "install", "--yes", monkeypatch=monkeypatch)
    assert code == 0, out
    done = calls(machine)
    assert done.index("systemctl restart timerd.service") > done.index(
        f"pip install --upgrade {REPO}[sound,hall,keypad]")

    # An idle table is upgraded without the match warning.
    monkeypatch.setenv("FAKE_STATUS", json.dumps({"phase": "idle", "profile": "ithf"}))
    code, out = run_installer(machine, "install", answer="y\n", monkeypatch=monkeypatch)
    assert code == 0, out
    assert "under way" not in out


def test_the_match_warning_tells_the_clock_the_table_shows(
        machine: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The clock face (issue 32): a sudden-death overtime is told by its time played, not
    "0:00 left"; an older daemon's document without a face is told without a clock."""
    run_installer(machine, "install", "--yes", monkeypatch=monkeypatch)
    monkeypatch.setenv("FAKE_ACTIVE", "1")
    overtime = Match(profiles.load("ithf-playoff"))
    overtime.handle(overtime.parse("start"), 0.0)
    overtime.poll(421.75)  # the final at 320, a 30-s break, overtime from 350
    monkeypatch.setenv("FAKE_STATUS", json.dumps(status_document(overtime.status(421.75), [])))
    code, out = run_installer(machine, "install", answer="\n", monkeypatch=monkeypatch)
    assert code == 1
    assert "(ithf-playoff: running, overtime 1:11 played)" in out
    monkeypatch.setenv("FAKE_STATUS", json.dumps({"phase": "paused", "profile": "ithf",
                                                  "remaining_s": 12.0}))
    code, out = run_installer(machine, "install", answer="\n", monkeypatch=monkeypatch)
    assert "A match is under way on this table (ithf: paused)" in out


def test_plain_debian_without_lgpio_says_exactly_what_to_do(
        machine: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FAKE_LGPIO")
    (machine / "proc/device-tree/model").unlink()
    code, out = run_installer(machine, "install", "--yes", monkeypatch=monkeypatch)
    assert code == 0, out
    assert "apt-get install -y --no-install-recommends python3-venv python3-dev gcc " \
           "libasound2-dev" in calls(machine)
    assert "apt here has no python3-lgpio" in out
    assert "https://github.com/joan2937/lg" in out
    assert "is not a Raspberry Pi" in out
    assert "no user to add to the group timerd" in out


def test_a_system_without_apt_is_refused_before_anything_runs(
        machine: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (machine / "etc/os-release").write_text('PRETTY_NAME="Fedora Linux 40"\nID=fedora\n')
    code, out = run_installer(machine, "install", "--yes", monkeypatch=monkeypatch)
    assert code == 2
    assert "this is Fedora Linux 40, not Raspberry Pi OS or Debian" in out
    assert "--no-apt" in out
    assert calls(machine) == []


def test_uninstall_keeps_the_config_and_results_and_purge_asks_naming_them(
        machine: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_installer(machine, "install", "--yes", monkeypatch=monkeypatch)
    state = machine / "var/lib/timerd"
    state.mkdir(parents=True)
    (state / "results.jsonl").write_text('{"match": 1}\n{"match": 2}\n{"match": 3}\n')
    (machine.parent / "calls").unlink()

    code, out = run_installer(machine, "uninstall", "--yes", monkeypatch=monkeypatch)
    assert code == 0, out
    assert calls(machine) == [
        "systemctl disable --now timerd.service",
        "udevadm trigger --settle --subsystem-match=misc --sysname-match=cpu_dma_latency",
        "systemctl daemon-reload"]
    assert not (machine / "etc/systemd/system/timerd.service").exists()
    assert not (machine / "etc/udev/rules.d/60-timerd.rules").exists()
    assert not (machine / "opt/timerd/venv").exists()
    assert not (machine / "usr/local/bin/timerd").is_symlink()
    assert (machine / "etc/timerd/timerd.toml").exists()
    assert "kept: the config /etc/timerd" in out

    code, out = run_installer(machine, "uninstall", "--purge", answer="no\n",
                              monkeypatch=monkeypatch)
    assert code == 1
    assert "results.jsonl: 3 finished matches, this table's whole results history" in out
    assert (state / "results.jsonl").exists()
    code, out = run_installer(machine, "uninstall", "--purge", answer="y\n",
                              monkeypatch=monkeypatch)
    assert code == 0, out
    # userdel runs only if this machine has the user (the fake useradd made none).
    assert "remove the system user timerd" in out
    assert ("userdel timerd" in calls(machine)) == install._known(pwd.getpwnam, "timerd")
    assert not (machine / "etc/timerd").exists()
    assert not state.exists()


def test_each_table_instance_gets_its_unit_config_socket_state_and_web_port(
        machine: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("table2", "table3"):
        code, out = run_installer(machine, "install", "--instance", name, "--yes",
                                  monkeypatch=monkeypatch)
        assert code == 0, out
    done = calls(machine)
    assert "systemctl is-active --quiet timerd@table2.service" in done
    assert done.index("systemctl enable timerd@table2.service") < done.index(
        "systemctl restart timerd@table2.service")
    assert "chmod 0640 /etc/timerd/table3.toml" in done
    ports = [config_mod.load(machine / f"etc/timerd/{n}.toml").web.port
             for n in ("table2", "table3")]
    assert ports == [8081, 8082]
    unit = settings((machine / "etc/systemd/system/timerd@.service").read_text())
    assert unit["ExecStart"] == [f"{machine}/opt/timerd/venv/bin/timerd run --instance %i"]
    assert unit["RuntimeDirectory"] == ["timerd-%i"]
    assert unit["StateDirectory"] == ["timerd-%i"]
    assert unit["WorkingDirectory"] == ["/var/lib/timerd-%i"]
    assert "LG_WD=/run/timerd-%i" in unit["Environment"]
    # The paths the daemon and timerctl use for that instance are the unit's.
    target = install.Target("table2")
    assert (target.socket, target.state) == (Path("/run/timerd-table2/control.sock"),
                                             Path("/var/lib/timerd-table2"))
    # systemd finds nothing wrong with the template as an instance (ExecStart made real).
    if shutil.which("systemd-analyze"):
        text = (machine / "etc/systemd/system/timerd@.service").read_text().replace(
            f"{machine}/opt/timerd/venv/bin/timerd", f"{sys.executable} -m timerd")
        (tmp_path / "timerd@table2.service").write_text(text)
        verify = subprocess.run(["systemd-analyze", "verify", "--man=no",
                                 str(tmp_path / "timerd@table2.service")],
                                capture_output=True, text=True, timeout=60, check=False)
        assert verify.stdout + verify.stderr == ""
    assert run_installer(machine, "install", "--instance", "../x", "--yes",
                         monkeypatch=monkeypatch)[0] == 2


# -- an SD card image: --root ---------------------------------------------------------------

def test_an_image_gets_the_files_and_a_first_boot_step_and_says_what_is_left(
        machine: Path, tmp_path: Path) -> None:
    image = card(tmp_path)
    result = timerd("install", "--root", str(image), "--user", "alice")
    assert result.returncode == 0, result.stdout + result.stderr
    assert calls(machine) == []  # nothing ran on this machine
    out = result.stdout
    assert "Not done now, under --root" in out
    assert ("At the first boot the Pi will update apt's package lists, install the packages, "
            "create the user timerd and add alice to the group timerd") in out
    assert "timerd-firstboot.service" in out
    # The image's config has the desk's token (issue 31), readable by root alone until the
    # first boot's install makes it root:timerd 0640.
    assert len(config_mod.load(image / "etc/timerd/timerd.toml").web.token) >= 32
    assert (image / "etc/timerd/timerd.toml").stat().st_mode & 0o077 == 0
    unit = (image / "etc/systemd/system/timerd-firstboot.service").read_text()
    assert ("ExecStart=/usr/bin/python3 -m timerd.tools.install install --yes --source "
            "/opt/timerd/src --user alice") in unit
    link = image / "etc/systemd/system/multi-user.target.wants/timerd-firstboot.service"
    assert os.readlink(link) == "/etc/systemd/system/timerd-firstboot.service"
    # The copied source is enough for the first boot's command (standard library only).
    src = image / "opt/timerd/src"
    assert not (src / ".git").exists()
    first = subprocess.run([sys.executable, "-m", "timerd.tools.install", "install", "--dry-run",
                            "--source", str(src)], cwd=src, capture_output=True, text=True,
                           timeout=60, check=False, env={**os.environ, "PYTHONPATH": ""})
    assert first.returncode == 0, first.stdout + first.stderr
    assert "systemctl restart timerd.service" in first.stdout


def card(tmp_path: Path) -> Path:
    """A freshly written Raspberry Pi OS card's root partition, as mounted, with alice."""
    image = tmp_path / "image"
    (image / "etc").mkdir(parents=True)
    (image / "etc/rpi-issue").write_text("Raspberry Pi reference 2024-11-19\n")
    (image / "etc/os-release").write_text(PI_OS)
    (image / "etc/passwd").write_text("root:x:0:0:root:/root:/bin/bash\n"
                                      "alice:x:1000:1000:,,,:/home/alice:/bin/bash\n")
    return image


@pytest.mark.parametrize("what", ["empty", "boot partition", "plain debian"])
def test_an_image_that_is_not_a_mounted_pi_os_root_is_refused(
        machine: Path, tmp_path: Path, what: str) -> None:
    """Fails on the old code, which wrote a config and a first-boot unit into any directory
    (an unmounted card's empty mount point, the boot partition)."""
    image = tmp_path / "image"
    image.mkdir()
    if what == "boot partition":
        (image / "config.txt").write_text("dtparam=audio=on\n")
        (image / "cmdline.txt").write_text("console=serial0,115200 root=PARTUUID=x\n")
    elif what == "plain debian":
        (image / "etc").mkdir()
        (image / "etc/os-release").write_text(PI_OS)
    result = timerd("install", "--root", str(image), "--user", "alice")
    assert result.returncode == 2
    assert "is the card mounted?" in result.stdout
    assert not (image / "etc/timerd").exists()
    assert not (image / "opt").exists()


def test_an_image_from_a_checkout_where_timerd_ran_skips_lgpios_fifo(tmp_path: Path) -> None:
    """lgpio leaves a FIFO (.lgd-nfy0) in the directory timerd ran in; copying the checkout
    into an image failed on it ("is a named pipe")."""
    source = tmp_path / "checkout"
    shutil.copytree(REPO / "systemd", source / "systemd")
    os.mkfifo(source / ".lgd-nfy0")
    image = card(tmp_path)
    result = timerd("install", "--root", str(image), "--source", str(source), "--user", "alice")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (image / "opt/timerd/src/systemd/timerd.service").is_file()
    assert not (image / "opt/timerd/src/.lgd-nfy0").exists()


def test_an_image_with_links_pointing_out_is_written_inside_it_alone(machine: Path,
                                                                    tmp_path: Path) -> None:
    """A card's absolute links name the Pi's own files; the laptop that mounts the card
    follows them into its own. Issue 43 item 1: fails on the old code, which wrote the
    first-boot unit, its enable link, the config and the source tree in `laptop`."""
    image, laptop = card(tmp_path), tmp_path / "laptop"
    for folder in ("etc/systemd/system/multi-user.target.wants", "etc/timerd", "opt"):
        (laptop / folder).mkdir(parents=True)
    (image / "etc/systemd").mkdir()
    (image / "etc/systemd/system").symlink_to(laptop / "etc/systemd/system")  # absolute
    (image / "opt").symlink_to(laptop / "opt")
    (image / "etc/timerd").symlink_to("../../../laptop/etc/timerd")  # climbs out by ..
    result = timerd("install", "--root", str(image), "--user", "alice")
    assert result.returncode == 0, result.stdout + result.stderr
    assert [p for p in laptop.rglob("*") if not p.is_dir()] == []
    # Where the Pi finds them: its /etc/systemd/system is the link's target on the card.
    units = image / laptop.relative_to("/") / "etc/systemd/system"
    assert "ExecStart=" in (units / "timerd-firstboot.service").read_text()
    assert os.readlink(units / "multi-user.target.wants/timerd-firstboot.service") == (
        "/etc/systemd/system/timerd-firstboot.service")
    assert (image / laptop.relative_to("/") / "opt/timerd/src/pyproject.toml").is_file()
    # `..` stops at the card's root, as it stops at the Pi's /.
    assert config_mod.load(image / "laptop/etc/timerd/timerd.toml").web.token


def test_an_image_with_a_loop_of_links_is_refused_naming_it(machine: Path,
                                                            tmp_path: Path) -> None:
    image = card(tmp_path)
    (image / "opt").symlink_to("/opt")
    result = timerd("install", "--root", str(image), "--user", "alice")
    assert result.returncode == 2
    assert f"{image / 'opt'}: more than 40 links" in result.stdout
    assert not (image / "etc/timerd").exists()  # refused before anything was done


def test_inside_follows_links_as_the_system_under_the_root_would(tmp_path: Path) -> None:
    (tmp_path / "usr/lib").mkdir(parents=True)
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/os-release").symlink_to("/usr/lib/os-release")
    (tmp_path / "etc/up").symlink_to("../../../..")
    assert install.inside(tmp_path, Path("/etc/os-release")) == tmp_path / "usr/lib/os-release"
    assert install.inside(tmp_path, Path("/etc/os-release"), follow_last=False) == (
        tmp_path / "etc/os-release")  # a link to replace, not what it points to
    assert install.inside(tmp_path, Path("/etc/up/etc/passwd")) == tmp_path / "etc/passwd"
    assert install.inside(tmp_path, Path("/../x")) == tmp_path / "x"


def test_an_image_gets_the_package_and_not_the_checkouts_caches(tmp_path: Path) -> None:
    """Fails on the old code, which copied .hypothesis/ (8.8 MB), the tests and the rest."""
    source = tmp_path / "checkout"
    shutil.copytree(REPO / "systemd", source / "systemd")
    (source / "pyproject.toml").write_text("[project]\nname = 'timerd'\n")
    for junk in (".hypothesis/examples/a", ".venv/bin/python", "timerd/__pycache__/a.pyc",
                 "tests/test_a.py", ".mypy_cache/a", "timerd.egg-info/PKG-INFO"):
        (source / junk).parent.mkdir(parents=True, exist_ok=True)
        (source / junk).write_text("x")
    (source / "timerd/__init__.py").write_text("")
    image = card(tmp_path)
    result = timerd("install", "--root", str(image), "--source", str(source), "--user", "alice")
    assert result.returncode == 0, result.stdout + result.stderr
    src = image / "opt/timerd/src"
    assert sorted(str(p.relative_to(src)) for p in src.rglob("*") if p.is_file()) == sorted(
        ["pyproject.toml", "timerd/__init__.py",
         *(f"systemd/{p.name}" for p in (REPO / "systemd").iterdir())])


def test_an_image_refuses_a_user_the_card_does_not_have(machine: Path, tmp_path: Path) -> None:
    image = card(tmp_path)
    result = timerd("install", "--root", str(image), "--user", "bob")
    assert result.returncode == 2
    assert "there is no user bob on the card" in result.stdout
    assert not (image / "etc/timerd").exists()
    # The admin user that Raspberry Pi Imager makes at the first boot, from the boot partition
    # mounted beside the root one: known.
    (tmp_path / "bootfs").mkdir()
    (tmp_path / "bootfs/userconf.txt").write_text("bob:$6$salt$hash\n")
    assert timerd("install", "--root", str(image), "--user", "bob").returncode == 0


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
    """`sudo python3 -m timerd.tools.install` on a fresh Pi, before any dependency is installed."""
    code = ("import sys; sys.modules['gpiozero'] = sys.modules['tomli_w'] = None\n"
            "import runpy; sys.argv = ['x', 'install', '--dry-run', '--root', sys.argv[1]]\n"
            "runpy.run_module('timerd.tools.install', run_name='__main__')")
    result = subprocess.run([sys.executable, "-c", code, str(card(tmp_path))], cwd=REPO,
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert "timerd-firstboot.service" in result.stdout


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



def test_doctor_checks_the_instances_own_config_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`timerd --instance t2 doctor` reads /etc/timerd/t2.toml, as the daemon does, and says
    so (it named /etc/timerd/timerd.toml before)."""
    monkeypatch.setattr(paths, "SYSTEM_CONFIG", tmp_path / "timerd.toml")
    monkeypatch.setenv(INSTANCE_ENV, "t2")
    (tmp_path / "t2.toml").write_text('[match]\nprofile = "isbhf"\n')
    (check,), config = doctor.check_config(None, [])
    assert config is not None
    assert check.message == f"{tmp_path / 't2.toml'} is valid; profile isbhf"


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
    from timerd.config.profiles import load  # noqa: PLC0415
    from timerd.config.schema import to_plain  # noqa: PLC0415

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


def test_an_installed_timerd_updates_from_the_checkout_it_is_run_in(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`cd timerd && git pull && sudo timerd install`: the installed timerd runs from its venv,
    which is no checkout, so the current directory is the source (docs/service.md)."""
    monkeypatch.setattr(install, "__file__", str(tmp_path / "venv/lib/timerd/install.py"))
    monkeypatch.chdir(REPO)
    assert install.source_tree() == REPO
    monkeypatch.chdir(tmp_path)
    assert install.source_tree() is None


def test_a_new_config_gets_a_random_desk_token_only_root_and_timerd_read(
        machine: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 31: the score desk works from the first start: the new config holds a random
    web.token (43 URL-safe characters), written 0600 and then made root:timerd 0640; an
    existing config keeps its own; each install draws its own."""
    code, out = run_installer(machine, "install", "--yes", monkeypatch=monkeypatch)
    assert code == 0, out
    path = machine / "etc/timerd/timerd.toml"
    token = config_mod.load(path).web.token
    assert len(token) >= 32
    assert re.fullmatch(r"[A-Za-z0-9_-]+", token)
    assert path.stat().st_mode & 0o077 == 0  # nobody else, before the chown below
    done = calls(machine)
    assert done.index("chown root:timerd /etc/timerd/timerd.toml") < done.index(
        "chmod 0640 /etc/timerd/timerd.toml")
    run_installer(machine, "install", "--yes", monkeypatch=monkeypatch)  # an upgrade
    assert config_mod.load(path).web.token == token
    # A table instance's config has its port and its own token in one [web] table.
    assert run_installer(machine, "install", "--instance", "t2", "--yes",
                         monkeypatch=monkeypatch)[0] == 0
    web = config_mod.load(machine / "etc/timerd/t2.toml").web
    assert web.port == 8081
    assert len(web.token) >= 32
    assert web.token != token
