"""`timerd install` and `timerd uninstall`: timerd as a systemd service on Raspberry Pi OS.

Install: the system packages (python3-lgpio, and what simpleaudio builds with), the groups
gpio, audio and dialout if missing, a system user `timerd` in them, a virtual environment in
/opt/timerd/venv (with the system's site packages, for lgpio) holding timerd from this source
tree, the example config at /etc/timerd/timerd.toml (an existing one is kept), the unit at
/etc/systemd/system/timerd.service, then `systemctl enable --now`. Uninstall reverses it and
keeps the config and the match journal unless `--purge`.

Every step is printed in plain words before it runs. `--dry-run` only prints; `--root DIR`
writes the files under DIR and prints the commands without running them (for tests, and to
prepare an SD card image). Only the standard library is used here, so that
`sudo python3 -m timerd.install` works from a fresh checkout before any dependency is there.
"""

from __future__ import annotations

import argparse
import functools
import grp
import os
import pwd
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

USER = "timerd"
GROUPS = ("gpio", "audio", "dialout")
PREFIX = Path("/opt/timerd")
UNIT_PATH = Path("/etc/systemd/system/timerd.service")
CONFIG_PATH = Path("/etc/timerd/timerd.toml")
STATE_PATH = Path("/var/lib/timerd")
#: python3-lgpio: the pin factory on every Pi; gcc and libasound2-dev: simpleaudio builds.
APT_PACKAGES = ("python3-venv", "python3-lgpio", "python3-dev", "gcc", "libasound2-dev")


@dataclass(frozen=True)
class Step:
    """One thing the installer does, said in plain words: run a command, write or remove."""

    what: str
    command: tuple[str, ...] = ()
    write: tuple[Path, str] | None = None
    remove: Path | None = None
    keep_existing: bool = False  # write only if the file is not there yet (the config)
    done: Callable[[], bool] | None = None  # True: nothing to do (the user exists already)


def render_unit(template: str, exec_start: str) -> str:
    """The unit with its ExecStart= line pointing at `exec_start` (the venv's timerd)."""
    lines = template.splitlines(keepends=True)
    found = [i for i, line in enumerate(lines) if line.startswith("ExecStart=")]
    if len(found) != 1:
        raise ValueError(f"the unit template needs exactly one ExecStart= line, has {len(found)}")
    lines[found[0]] = f"ExecStart={exec_start}\n"
    return "".join(lines)


def source_tree() -> Path | None:
    """The checkout this module runs from, if it is one (it holds the unit and pyproject)."""
    top = Path(__file__).resolve().parents[1]
    ok = (top / "pyproject.toml").is_file() and (top / "systemd" / "timerd.service").is_file()
    return top if ok else None


def _known(lookup: Callable[[str], object], name: str) -> bool:
    """Whether the user or group `name` exists (`lookup` is pwd.getpwnam or grp.getgrnam)."""
    try:
        lookup(name)
    except KeyError:
        return False
    return True


def install_steps(source: Path, venv: Path, python: str, apt: bool) -> list[Step]:
    steps = []
    if apt:
        steps.append(Step("install the system packages timerd builds on",
                          ("apt-get", "install", "-y", "--no-install-recommends",
                           *APT_PACKAGES)))
    steps += [Step(f"create the group {g} (Raspberry Pi OS has it; other systems may not)",
                   ("groupadd", "--system", g), done=functools.partial(_known, grp.getgrnam, g))
              for g in GROUPS]
    steps += [
        Step(f"create the system user {USER}, who runs the daemon and cannot log in",
             ("useradd", "--system", "--user-group", "--home-dir", str(STATE_PATH),
              "--no-create-home", "--shell", "/usr/sbin/nologin", USER),
             done=functools.partial(_known, pwd.getpwnam, USER)),
        Step(f"let {USER} use the GPIO pins, the sound card and serial ports",
             ("usermod", "--append", "--groups", ",".join(GROUPS), USER)),
        Step(f"create the virtual environment {venv}, seeing the system's lgpio",
             (python, "-m", "venv", "--system-site-packages", str(venv))),
        Step(f"install timerd from {source} into it, with speaker sounds",
             (str(venv / "bin" / "pip"), "install", "--upgrade", f"{source}[sound]")),
        Step(f"write the example config {CONFIG_PATH} (an existing one is kept as it is)",
             write=(CONFIG_PATH, (source / "systemd" / "timerd.toml").read_text()),
             keep_existing=True),
        Step(f"write the service unit {UNIT_PATH}",
             write=(UNIT_PATH, render_unit((source / "systemd" / "timerd.service").read_text(),
                                           f"{venv / 'bin' / 'timerd'} run"))),
        Step("tell systemd about the unit", ("systemctl", "daemon-reload")),
        Step("start timerd now and at every boot", ("systemctl", "enable", "--now",
                                                     "timerd.service")),
    ]
    return steps


def uninstall_steps(venv: Path, purge: bool) -> list[Step]:
    steps = [
        Step("stop timerd and no longer start it at boot",
             ("systemctl", "disable", "--now", "timerd.service"),
             done=lambda: not UNIT_PATH.exists()),
        Step(f"remove the service unit {UNIT_PATH}", remove=UNIT_PATH),
        Step("tell systemd the unit is gone", ("systemctl", "daemon-reload")),
        Step(f"remove the virtual environment {venv}", remove=venv),
    ]
    if purge:
        steps += [
            Step(f"remove the config {CONFIG_PATH.parent}", remove=CONFIG_PATH.parent),
            Step(f"remove the match journal {STATE_PATH}", remove=STATE_PATH),
            Step(f"remove the system user {USER}", ("userdel", USER),
                 done=lambda: not _known(pwd.getpwnam, USER)),
        ]
    return steps


def execute(steps: list[Step], root: Path, dry_run: bool, out: TextIO) -> int:
    """Carry the steps out in order (see the module docstring for --dry-run and --root)."""
    commands_run = root == Path("/") and not dry_run
    for number, step in enumerate(steps, 1):
        print(f"{number}. {step.what}", file=out)
        # This machine's users and groups say nothing about an image under --root.
        if root == Path("/") and step.done is not None and step.done():
            print("   already done", file=out)
            continue
        if step.command:
            print(f"   $ {shlex.join(step.command)}", file=out)
            if not commands_run:
                continue
            try:
                subprocess.run(step.command, check=True)
            except (OSError, subprocess.CalledProcessError) as exc:
                print(f"timerd: step {number} failed ({exc}); fix that and run the same "
                      "command again: finished steps are skipped or harmless to repeat",
                      file=out)
                return 1
        elif step.write is not None:
            path = root / step.write[0].relative_to("/")
            if step.keep_existing and path.exists():
                print(f"   kept {path}: it exists", file=out)
            else:
                print(f"   write {path}", file=out)
                if not dry_run:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(step.write[1])
        elif step.remove is not None:
            path = root / step.remove.relative_to("/")
            print(f"   remove {path}", file=out)
            if not dry_run:
                if path.is_dir():
                    shutil.rmtree(path)
                elif path.exists():
                    path.unlink()
    return 0


def add_arguments(install: argparse.ArgumentParser, uninstall: argparse.ArgumentParser) -> None:
    for parser in (install, uninstall):
        parser.add_argument("--dry-run", action="store_true",
                            help="print every step, change nothing")
        parser.add_argument("--root", type=Path, default=Path("/"), metavar="DIR",
                            help="write files under DIR, do not run commands (image building)")
        parser.add_argument("--venv", type=Path, default=PREFIX / "venv", metavar="DIR",
                            help=f"the virtual environment (default {PREFIX / 'venv'})")
    install.add_argument("--source", type=Path, metavar="DIR",
                         help="the timerd source tree (default: the one this runs from)")
    install.add_argument("--python", default="/usr/bin/python3", metavar="PATH",
                         help="the Python the virtual environment is made from")
    install.add_argument("--no-apt", dest="apt", action="store_false",
                         help="skip installing system packages with apt-get")
    uninstall.add_argument("--purge", action="store_true",
                           help="also remove the config, the match journal and the user")


def main(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    """Run `install` or `uninstall` (`args.command`) as parsed by `add_arguments`."""
    if args.root == Path("/") and not args.dry_run and os.geteuid() != 0:
        print(f"timerd {args.command}: run it as root (sudo), or look first with --dry-run",
              file=out)
        return 2
    if args.command == "uninstall":
        return execute(uninstall_steps(args.venv, args.purge), args.root, args.dry_run, out)
    source = args.source or source_tree()
    if source is None or not (source / "systemd" / "timerd.service").is_file():
        print("timerd install: run it from a timerd source checkout, or give --source DIR",
              file=out)
        return 2
    steps = install_steps(source.resolve(), args.venv, args.python, args.apt)
    code = execute(steps, args.root, args.dry_run, out)
    if code == 0 and not args.dry_run and args.root == Path("/"):
        print("timerd is installed and running: `systemctl status timerd`, "
              "`journalctl -u timerd -f`, `timerd doctor`", file=out)
    return code


if __name__ == "__main__":  # `sudo python3 -m timerd.install [install|uninstall] ...`
    top = argparse.ArgumentParser(prog="python3 -m timerd.install", description=__doc__)
    sub = top.add_subparsers(dest="command", required=True)
    add_arguments(sub.add_parser("install"), sub.add_parser("uninstall"))
    sys.exit(main(top.parse_args()))
