"""`timerd install` and `timerd uninstall`: timerd as a systemd service on Raspberry Pi OS.

Install: first a platform check (Raspberry Pi OS, or Debian with apt) and the plan in plain
words, then one question (`--yes` skips it), and only then: the system packages
(python3-lgpio where apt has it, and libasound2 for the speaker), the groups gpio, audio,
dialout and input if missing, a system user `timerd` in them (its own group `timerd` is the
socket group: its members may use the control socket), the installing (sudo) user added to
that group, a virtual environment in /opt/timerd/venv (with the system's site packages, for
lgpio) holding timerd from this source tree with its sound, hall and keypad extras, `timerd`
and `timerctl` linked into /usr/local/bin with their bash and zsh completion, the example config at
/etc/timerd/timerd.toml (an existing one is kept; either is made root:timerd 0640, it may hold
the web token), the unit at
/etc/systemd/system/timerd.service, a udev rule that lets the group timerd hold the CPUs'
wake-up latency (/etc/udev/rules.d/60-timerd.rules), then `systemctl enable` and
`systemctl restart`: an
upgrade restarts the running service, and asks first if a match is running on it.
Uninstall reverses it and keeps the config, the match journal and the results unless
`--purge`, which names what it deletes and asks.

Every step is printed in plain words before it runs. `--dry-run` only prints. `--root DIR`
prepares an SD card image mounted at DIR (each path reached as the Pi would reach it:
`inside`): it writes the config, a copy of the package's source and a first-boot unit there;
the steps that must run on the Pi itself (apt, users, the venv) run at its first boot, and the
installer says so. Only the standard library is used here, so that
`sudo python3 -m timerd.tools.install` works from a fresh checkout before any dependency is there.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import grp
import json
import os
import pwd
import re
import secrets
import shlex
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from timerd.core.display import ClockFace
from timerd.tools import completion
from timerd.tools.argparse_text import said

USER = "timerd"
#: The service user's own group: members may use the control socket (/run/timerd is 0750
#: timerd:timerd, the socket 0660), and read the config (root:timerd 0640).
SOCKET_GROUP = USER
GROUPS = ("gpio", "audio", "dialout", "input")
PREFIX = Path("/opt/timerd")
UNIT_NAME = "timerd.service"
UNITS = Path("/etc/systemd/system")
UNIT_PATH = UNITS / UNIT_NAME
FIRSTBOOT_NAME = "timerd-firstboot.service"
FIRSTBOOT_PATH = UNITS / FIRSTBOOT_NAME
#: An enabled unit is a link here (what `systemctl enable` makes; under --root we make it).
WANTS = UNITS / "multi-user.target.wants"
#: The source copied into an image for its first boot.
IMAGE_SOURCE = PREFIX / "src"
#: What of the checkout is copied there: what `pip install` builds the package from
#: (pyproject.toml, its readme and MANIFEST.in, the package) and the installer's files
#: (systemd/). Not the tests, the benchmarks, nor any cache (issue 43 item 1: 8.8 MB of
#: .hypothesis/ went to the card).
PACKAGE_PARTS = ("pyproject.toml", "README.md", "MANIFEST.in", "timerd", "systemd")
BIN = Path("/usr/local/bin")
COMMANDS = ("timerd", "timerctl")
CONFIG_PATH = Path("/etc/timerd/timerd.toml")
#: Lets the group timerd hold the CPUs' wake-up latency (`[service] cpu_latency_us`).
UDEV_RULE = Path("/etc/udev/rules.d/60-timerd.rules")
UDEV_TRIGGER = ("udevadm", "trigger", "--settle", "--subsystem-match=misc",
                "--sysname-match=cpu_dma_latency")
STATE_PATH = Path("/var/lib/timerd")
SOCKET_PATH = Path("/run/timerd/control.sock")
#: libasound2-dev brings libasound2, which the speaker calls; python3-dev and gcc build a
#: dependency without a wheel for the Pi; python3-venv: the venv.
APT_PACKAGES = ("python3-venv", "python3-dev", "gcc", "libasound2-dev")
#: The pin factory on every Pi; Raspberry Pi OS has it, plain Debian does not.
LGPIO_PACKAGE = "python3-lgpio"
#: The hall and keypad extras too: aiomqtt and python-evdev are imported only when [hall] or
#: [keypad] is switched on, so they cost nothing otherwise.
EXTRAS = "sound,hall,keypad"
#: Phases in which no match is under way (a restart then interrupts nobody).
RESTING = ("idle", "finished")
#: What to do on a system whose apt has no python3-lgpio (issue 17).
LGPIO_BY_HAND = (
    f"apt here has no {LGPIO_PACKAGE} (it is in Raspberry Pi OS, not plain Debian), so the "
    "service gets no lgpio pin factory. On a Pi, either use Raspberry Pi OS, or build lgpio "
    "from source: `sudo apt install swig unzip python3-dev gcc make`, then `wget "
    "https://github.com/joan2937/lg/archive/master.zip && unzip master.zip && cd lg-master && "
    "make && sudo make install && sudo ldconfig`, then `sudo /opt/timerd/venv/bin/pip install "
    "lgpio` and `sudo systemctl restart timerd`. Off a Pi there are no pins: set "
    "gpio.pin_factory = \"mock\" in "
    f"{CONFIG_PATH} to try the service.")


def check_instance_name(name: str) -> str | None:
    """Why `name` cannot be an instance name (it becomes part of paths and a unit's name)."""
    if not name or len(name) > 32 or not all(c.isascii() and (c.isalnum() or c in "-_")
                                             for c in name):
        return (f"instance name {name!r}: use 1 to 32 letters, digits, - or _ "
                "(it names the unit, the socket and the directories)")
    return None


@dataclass(frozen=True)
class Target:
    """What one timerd on this machine is made of: the single one, or instance NAME
    (`--instance`, docs/service.md "Several tables on one machine"): a unit timerd@NAME of
    the template timerd@.service, /etc/timerd/NAME.toml, /var/lib/timerd-NAME and
    /run/timerd-NAME, the paths `timerd run --instance NAME` uses."""

    instance: str = ""

    @property
    def dir_name(self) -> str:
        return f"timerd-{self.instance}" if self.instance else "timerd"

    @property
    def unit(self) -> str:
        return f"timerd@{self.instance}.service" if self.instance else UNIT_NAME

    @property
    def unit_path(self) -> Path:
        return UNITS / "timerd@.service" if self.instance else UNIT_PATH

    @property
    def config(self) -> Path:
        return CONFIG_PATH.with_name(f"{self.instance}.toml") if self.instance else CONFIG_PATH

    @property
    def state(self) -> Path:
        return STATE_PATH.with_name(self.dir_name)

    @property
    def socket(self) -> Path:
        return SOCKET_PATH.parent.with_name(self.dir_name) / SOCKET_PATH.name


#: The unit's lines that name its directories; an instance's template gets its own.
PER_INSTANCE = re.compile(r"^((?:RuntimeDirectory|StateDirectory)=timerd|"
                          r"WorkingDirectory=/var/lib/timerd|Environment=LG_WD=/run/timerd)$",
                          re.MULTILINE)


def instance_template(unit: str) -> str:
    """timerd@.service from the rendered unit: `--instance %i`, and directories
    timerd-%i (systemd sets $RUNTIME_DIRECTORY and $STATE_DIRECTORY from them)."""
    unit = PER_INSTANCE.sub(r"\1-%i", unit)
    unit = re.sub(r"^(ExecStart=.*)$", r"\1 --instance %i", unit, count=1, flags=re.MULTILINE)
    return re.sub(r"^(Description=.*)$", r"\1, table %i", unit, count=1, flags=re.MULTILINE)


def free_web_port(root: Path) -> int:
    """The first port from 8081 that no config in /etc/timerd names (a new instance's)."""
    taken = {8080}
    for config in inside(root, CONFIG_PATH.parent).glob("*.toml"):
        with contextlib.suppress(OSError):
            taken |= {int(n) for n in re.findall(r"^port\s*=\s*(\d+)", config.read_text(),
                                                 re.MULTILINE)}
    return next(port for port in range(8081, 65536) if port not in taken)


def instance_config(example: str, name: str, port: int) -> str:
    return (f"{example}\n"
            f"# The table {name!r} (`timerd install --instance {name}`): its own socket\n"
            f"# /run/timerd-{name}/control.sock (`timerctl --instance {name}`), state\n"
            f"# /var/lib/timerd-{name} and this web port. Give it pins no other table on this\n"
            "# machine uses, or \"none\" (a table run from its serial display or the web).\n"
            f"[web]\nport = {port}\n")


def with_desk_token(config: str) -> str:
    """A new config with a random `web.token` (issue 31): the score desk works from the first
    start, and `timerctl desk` pairs a phone by one scan. 43 URL-safe characters (256 bits);
    the file is written 0600 and then made root:timerd 0640."""
    token = secrets.token_urlsafe(32)
    line = ("# The score desk's token (made by the installer; `timerctl desk` shows the link\n"
            "# with it). Anyone who has it may run the match from a browser.\n"
            f"token = \"{token}\"\n")
    if re.search(r"^\[web\]\s*$", config, re.MULTILINE):
        return re.sub(r"^\[web\]\s*$", lambda m: f"[web]\n{line}", config, count=1,
                      flags=re.MULTILINE)
    return f"{config}\n[web]\n{line}"


@dataclass(frozen=True)
class Step:
    """One thing the installer does, said in plain words: run a command, write, link, copy
    or remove."""

    what: str
    command: tuple[str, ...] = ()
    write: tuple[Path, str] | None = None
    link: tuple[Path, Path] | None = None  # (the link, what it points to)
    copy: tuple[Path, Path] | None = None  # (a source tree, where it goes)
    remove: Path | None = None
    keep_existing: bool = False  # write only if the file is not there yet (the config)
    private: bool = False  # written 0600: it holds a secret (the web token)
    done: Callable[[], bool] | None = None  # True: nothing to do (the user exists already)

    def reach(self, root: Path) -> Path | None:
        """The file this step writes, links, copies to or removes, under `root` as the system
        there reaches it (`inside`; a written file through a link at its end, the others
        the name itself); None for a command. Raises LinkLoop."""
        for path, follow in ((self.write and self.write[0], True),
                             (self.link and self.link[0], False),
                             (self.copy and self.copy[1], False), (self.remove, False)):
            if path:
                return inside(root, path, follow_last=follow)
        return None


@dataclass
class Plan:
    """The steps, and what the operator must know before saying yes (or after)."""

    steps: list[Step]
    notes: list[str] = field(default_factory=list)
    question: str = "Go on?"


def render_unit(template: str, exec_start: str) -> str:
    """The unit with its ExecStart= line pointing at `exec_start` (the venv's timerd)."""
    lines = template.splitlines(keepends=True)
    found = [i for i, line in enumerate(lines) if line.startswith("ExecStart=")]
    if len(found) != 1:
        raise ValueError(f"the unit template needs exactly one ExecStart= line, has {len(found)}")
    lines[found[0]] = f"ExecStart={exec_start}\n"
    return "".join(lines)


def source_tree() -> Path | None:
    """The checkout this module runs from, else the current directory if it is one (it holds
    the unit and pyproject): `cd timerd && git pull && sudo timerd install` updates from the
    checkout, though the installed timerd runs from its venv."""
    for top in (Path(__file__).resolve().parents[2], Path.cwd()):
        if (top / "pyproject.toml").is_file() and (top / "systemd" / "timerd.service").is_file():
            return top
    return None


def _known(lookup: Callable[[str], object], name: str) -> bool:
    """Whether the user or group `name` exists (`lookup` is pwd.getpwnam or grp.getgrnam)."""
    try:
        lookup(name)
    except KeyError:
        return False
    return True


#: Links followed on the way to one path before it is refused: Linux's own limit (a loop).
MAX_LINKS = 40


class LinkLoop(OSError):
    """A path under --root whose links do not end (ELOOP): refused, with the link's name."""


def inside(root: Path, path: Path, *, follow_last: bool = True) -> Path:
    """`path`, as the system under `root` names it, as a path under `root` that reaches what
    that system would reach (issue 43 item 1).

    A Raspberry Pi OS card holds absolute links (`/etc/resolv.conf`, units enabled by
    `systemctl enable`); the laptop that mounts it follows them out of the card, into its
    own /etc. Here each link on the way is followed as the Pi would, with `root` as its /:
    an absolute target from `root`, and `..` never above it (what openat2's RESOLVE_IN_ROOT
    does; its standard-library bindings are not there in Python 3.11, and the installer runs
    on the standard library alone). `follow_last=False` leaves the last name as it is: a link
    to replace or remove, never what it points to. Raises LinkLoop after MAX_LINKS links."""
    pending = list(reversed(path.relative_to("/").parts))
    done: list[str] = []
    links = 0
    while pending:
        name = pending.pop()
        if name == "..":
            del done[-1:]
            continue
        here = root.joinpath(*done, name)
        if (pending or follow_last) and here.is_symlink():
            links += 1
            if links > MAX_LINKS:
                raise LinkLoop(f"{here}: more than {MAX_LINKS} links on the way to {path} "
                               "(a loop): refused")
            target = Path(os.readlink(here))
            if target.is_absolute():
                done, target = [], target.relative_to("/")
            pending.extend(reversed(target.parts))
        else:
            done.append(name)
    return root.joinpath(*done)


# -- what machine this is ---------------------------------------------------------------------

@dataclass(frozen=True)
class Platform:
    """What the installer needs to know of the system under `root`."""

    name: str  # PRETTY_NAME of os-release
    debian: bool  # Debian or a derivative (Raspberry Pi OS): apt and its package names
    pi: str  # the board ("Raspberry Pi 5 Model B Rev 1.0"), or "Raspberry Pi OS"; "" if not


def platform(root: Path) -> Platform:
    """Read /etc/os-release and the device tree's model under `root` (an image has no model:
    Raspberry Pi OS is then known by its /etc/rpi-issue)."""
    fields: dict[str, str] = {}
    for candidate in ("/etc/os-release", "/usr/lib/os-release"):
        try:
            text = inside(root, Path(candidate)).read_text()
        except OSError:
            continue
        for line in text.splitlines():
            key, sep, value = line.partition("=")
            if sep:
                fields[key.strip()] = value.strip().strip('"')
        break
    family = {fields.get("ID", ""), *fields.get("ID_LIKE", "").split()}
    try:
        model = inside(root, Path("/proc/device-tree/model")).read_bytes().rstrip(b"\0").decode(
            errors="replace")
    except OSError:
        model = ""
    if "Raspberry Pi" not in model:
        model = "Raspberry Pi OS" if inside(root, Path("/etc/rpi-issue")).exists() else ""
    return Platform(fields.get("PRETTY_NAME", "an unknown system"),
                    bool(family & {"debian", "raspbian", "ubuntu"}), model)


def _quiet(command: list[str]) -> subprocess.CompletedProcess[str] | None:
    """Run a read-only query; None when the program is not there."""
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None


def apt_has(package: str) -> bool:
    """Whether apt knows `package` (installed or installable)."""
    result = _quiet(["apt-cache", "show", package])
    return result is not None and result.returncode == 0 and bool(result.stdout.strip())


def running_match(venv: Path, target: Target) -> str:
    """What the running service's match is doing, in words, if one is under way; else ''.

    Asked with the installed timerctl (`status --json`), so that it speaks the installed
    version's protocol; no service, no socket or an idle table all give ''.
    """
    active = _quiet(["systemctl", "is-active", "--quiet", target.unit])
    if active is None or active.returncode != 0:
        return ""
    reply = _quiet([str(venv / "bin" / "timerctl"), "--socket", str(target.socket),
                    "status", "--json"])
    try:
        status = json.loads(reply.stdout) if reply is not None and reply.returncode == 0 else {}
    except ValueError:
        status = {}
    phase = status.get("phase", "idle") if isinstance(status, dict) else "idle"
    if phase in RESTING:
        return ""
    try:  # the clock as the table shows it (`core.display`: its time left rounded up,
        # the time played in a sudden-death overtime); an older daemon's document has none
        clock = ", " + ClockFace.from_dict(status["clock_face"]).said()
    except (KeyError, TypeError, ValueError):
        clock = ""
    return f"a match is under way on this table ({status.get('profile', '?')}: {phase}{clock})"


# -- the plans ----------------------------------------------------------------------------------

def install_steps(source: Path, venv: Path, python: str, apt: tuple[str, ...], *,
                  user: str | None, target: Target, web_port: int) -> list[Step]:
    """The steps of an install or upgrade on the machine itself; `web_port` for a new
    instance's config."""
    example = (source / "systemd" / "timerd.toml").read_text()
    udev_rule = (source / "systemd" / UDEV_RULE.name).read_text()
    unit = render_unit((source / "systemd" / "timerd.service").read_text(),
                       f"{venv / 'bin' / 'timerd'} run")
    if target.instance:
        example = instance_config(example, target.instance, web_port)
        unit = instance_template(unit)
    example = with_desk_token(example)
    steps = []
    if apt:  # a card's first boot has no package lists yet: apt-get install would fail
        steps += [Step("update apt's package lists", ("apt-get", "update")),
                  Step("install the system packages timerd builds on",
                       ("apt-get", "install", "-y", "--no-install-recommends", *apt))]
    steps += [Step(f"create the group {g} (Raspberry Pi OS has it; other systems may not)",
                   ("groupadd", "--system", g), done=functools.partial(_known, grp.getgrnam, g))
              for g in GROUPS]
    steps += [
        Step(f"create the system user {USER} and its group {SOCKET_GROUP}; the user runs the "
             "daemon and cannot log in",
             ("useradd", "--system", "--user-group", "--home-dir", str(STATE_PATH),
              "--no-create-home", "--shell", "/usr/sbin/nologin", USER),
             done=functools.partial(_known, pwd.getpwnam, USER)),
        Step(f"let {USER} use the GPIO pins, the sound card and serial ports",
             ("usermod", "--append", "--groups", ",".join(GROUPS), USER)),
    ]
    if user:
        steps.append(Step(f"let {user} use timerctl: add them to the group {SOCKET_GROUP} "
                          "(from their next login)",
                          ("usermod", "--append", "--groups", SOCKET_GROUP, user)))
    steps += [
        Step(f"create the virtual environment {venv}, seeing the system's lgpio",
             (python, "-m", "venv", "--system-site-packages", str(venv))),
        Step(f"install timerd from {source} into it, with speaker sounds and hall mode",
             (str(venv / "bin" / "pip"), "install", "--upgrade", f"{source}[{EXTRAS}]")),
        *(Step(f"put {name} on everyone's PATH: {BIN / name}",
               link=(BIN / name, venv / "bin" / name)) for name in COMMANDS),
        Step("install tab completion of timerd and timerctl for bash and zsh: "
             + ", ".join(str(d) for d, _ in completion.INSTALLED.values()),
             (str(venv / "bin" / "timerd"), "completion", "--install")),
        Step(f"write the example config {target.config}, with a random token for the score "
             "desk (an existing one is kept as it is)",
             write=(target.config, example), keep_existing=True, private=True),
        Step(f"let the service read the config and nobody else but root and the group "
             f"{SOCKET_GROUP} (it may hold the web token)",
             ("chown", f"root:{SOCKET_GROUP}", str(target.config))),
        Step("", ("chmod", "0640", str(target.config))),
        Step(f"write the service unit {target.unit_path}", write=(target.unit_path, unit)),
        Step(f"let {USER} keep the CPUs quick to wake while it runs ([service] "
             f"cpu_latency_us): the udev rule {UDEV_RULE}", write=(UDEV_RULE, udev_rule)),
        Step("", UDEV_TRIGGER),
        Step("tell systemd about the unit", ("systemctl", "daemon-reload")),
        Step(f"start {target.unit} at every boot", ("systemctl", "enable", target.unit)),
        Step(f"start {target.unit} now (an upgrade: restart it with the new version)",
             ("systemctl", "restart", target.unit)),
    ]
    return steps


def firstboot_unit(options: list[str]) -> str:
    """The one-shot unit that finishes an image's install on the Pi's first boot."""
    command = shlex.join(["/usr/bin/python3", "-m", "timerd.tools.install", "install", "--yes",
                          "--source", str(IMAGE_SOURCE), *options])
    return (
        "# Written by `timerd install --root`: finishes the install on the first boot (apt\n"
        "# packages, the timerd user, the virtual environment), then disables itself.\n"
        "[Unit]\n"
        "Description=timerd: finish the install on the first boot\n"
        "Wants=network-online.target\n"
        "After=network-online.target\n\n"
        "[Service]\n"
        "Type=oneshot\n"
        f"WorkingDirectory={IMAGE_SOURCE}\n"
        f"ExecStart={command}\n"
        f"ExecStartPost=/usr/bin/systemctl disable {FIRSTBOOT_NAME}\n\n"
        "[Install]\n"
        "WantedBy=multi-user.target\n")


def image_steps(source: Path, options: list[str]) -> list[Step]:
    """The steps for an SD card image: the files now, the rest at the Pi's first boot."""
    return [
        Step(f"write the example config {CONFIG_PATH}, with a random token for the score desk "
             "(edit it before the first boot; an existing one is kept)",
             write=(CONFIG_PATH, with_desk_token((source / "systemd" / "timerd.toml")
                                                 .read_text())),
             keep_existing=True, private=True),
        Step(f"copy the timerd source to {IMAGE_SOURCE}", copy=(source, IMAGE_SOURCE)),
        Step(f"write {FIRSTBOOT_PATH}: it runs this installer at the first boot",
             write=(FIRSTBOOT_PATH, firstboot_unit(options))),
        Step(f"enable it: {WANTS / FIRSTBOOT_NAME}",
             link=(WANTS / FIRSTBOOT_NAME, FIRSTBOOT_PATH)),
    ]


def _purge_question(config: str, root: Path, target: Target, more: str) -> str:
    """What --purge deletes, the results named with their count, and the question."""
    return (f"--purge deletes for good: {config} (with the web token), the match journal, "
            f"{_results_summary(root, target)}{more}. Copy the results first if you want "
            "them (`timerd results`). Delete all that?")


def _results_summary(root: Path, target: Target) -> str:
    """How many results the results file under `root` holds, for the purge question."""
    results = target.state / "results.jsonl"
    try:
        with inside(root, results).open("rb") as file:
            count = sum(1 for line in file if line.strip())
    except OSError:
        return f"{results} (none yet)"
    return f"{results}: {count} finished matches, this table's whole results history"


def uninstall_plan(venv: Path, purge: bool, root: Path, target: Target) -> Plan:
    if target.instance:  # the others keep the template, the venv and the commands
        return instance_uninstall_plan(purge, root, target)
    steps = [
        Step("stop timerd and no longer start it at boot",
             ("systemctl", "disable", "--now", UNIT_NAME),
             done=lambda: not inside(root, UNIT_PATH).exists()),
        Step(f"remove the service unit {UNIT_PATH}", remove=UNIT_PATH),
        Step(f"remove the udev rule {UDEV_RULE}", remove=UDEV_RULE),
        Step("", UDEV_TRIGGER),
        Step(f"remove the first-boot unit {FIRSTBOOT_PATH}, if an image had one",
             remove=FIRSTBOOT_PATH),
        Step("", remove=WANTS / FIRSTBOOT_NAME),
        Step("tell systemd the unit is gone", ("systemctl", "daemon-reload")),
        *(Step(f"remove {BIN / name}", remove=BIN / name) for name in COMMANDS),
        Step("remove the tab completion of timerd and timerctl"),
        *(Step("", remove=path) for path in completion.installed_paths()),
        Step(f"remove the virtual environment {venv}", remove=venv),
    ]
    if not purge:
        return Plan(steps, [f"kept: the config {CONFIG_PATH.parent}, the match journal and "
                            f"the results in {STATE_PATH}, the user {USER} (`--purge` removes "
                            "them)"])
    steps += [
        Step(f"remove the config {CONFIG_PATH.parent}", remove=CONFIG_PATH.parent),
        Step(f"remove {STATE_PATH}: the match journal and the results", remove=STATE_PATH),
        Step(f"remove {PREFIX}", remove=PREFIX),
        Step(f"remove the system user {USER} and its group", ("userdel", USER),
             done=lambda: not _known(pwd.getpwnam, USER)),
    ]
    return Plan(steps, [], _purge_question(f"the config {CONFIG_PATH.parent}", root, target,
                                           f", and the user {USER}"))


def instance_uninstall_plan(purge: bool, root: Path, target: Target) -> Plan:
    steps = [Step(f"stop {target.unit} and no longer start it at boot",
                  ("systemctl", "disable", "--now", target.unit))]
    if not purge:
        return Plan(steps, [f"kept: {target.config}, the journal and results in "
                            f"{target.state} (`--purge` removes them), and the template unit, "
                            "the venv and the commands the other tables use"])
    steps += [Step(f"remove the config {target.config}", remove=target.config),
              Step(f"remove {target.state}: its match journal and results",
                   remove=target.state)]
    return Plan(steps, [], _purge_question(str(target.config), root, target, ""))


def passwd_users(root: Path) -> set[str]:
    """The user names of the system under `root`: its /etc/passwd, and the user Raspberry Pi
    Imager makes at the first boot (userconf.txt on the boot partition, mounted beside the
    root one as bootfs), who exists before timerd's first-boot install runs."""
    names = set()
    for name in ("/etc/passwd", "../bootfs/userconf.txt"):  # bootfs: beside the root, not in
        try:
            text = (inside(root, Path(name)) if name.startswith("/") else root / name
                    ).read_text()
        except OSError:
            continue
        names |= {line.split(":", 1)[0] for line in text.splitlines() if ":" in line}
    return names


def image_problem(root: Path, user: str | None) -> str:
    """Why `root` is not a Raspberry Pi OS root to prepare (a card not mounted, the wrong
    partition, a typo), or why `user` cannot be added there; '' when all is well."""
    if not all(inside(root, Path(name)).is_file() for name in ("/etc/rpi-issue",
                                                                 "/etc/os-release")):
        return (f"{root} is not the root of a Raspberry Pi OS card (no etc/rpi-issue and "
                "etc/os-release there): is the card mounted? Give its root partition "
                "(usually /media/$USER/rootfs), not the boot one (bootfs)")
    if user and user not in passwd_users(root):
        return (f"there is no user {user} on the card (not in {root / 'etc/passwd'}, nor in "
                f"{root.parent / 'bootfs/userconf.txt'}, where Raspberry Pi Imager puts the "
                "user it makes at the first boot): give --user the admin user you set in "
                "Imager, with the boot partition mounted too, or leave --user out and run "
                f"`sudo usermod -aG {SOCKET_GROUP} NAME` on the Pi")
    return ""


def install_plan(args: argparse.Namespace, source: Path, machine: bool) -> Plan | str:
    """The install plan for `args`, or why this machine cannot have it. Not on the `machine`
    itself (--root): the image's plan."""
    where = platform(args.root)
    notes = []
    if not machine:
        if problem := image_problem(args.root, args.user):
            return problem
        options = ([] if args.apt else ["--no-apt"]) + (["--user", args.user] if args.user
                                                         else [])
        who = (f"add {args.user} to the group {SOCKET_GROUP} (may use timerctl)" if args.user
               else f"add nobody to the group {SOCKET_GROUP} (no --user: later, on the Pi, "
                    f"`sudo usermod -aG {SOCKET_GROUP} NAME`)")
        return Plan(image_steps(source, options), [
            f"At the first boot the Pi will update apt's package lists, install the packages, "
            f"create the user {USER} and {who}.",
            f"Not done now, under --root {args.root}: installing the system packages, the "
            f"groups and the user {USER}, the virtual environment and timerd in it, the links "
            f"in {BIN}, the unit and starting it. They need the Pi itself: {FIRSTBOOT_NAME} "
            "does them at its first boot, which needs the network (watch it with `journalctl "
            f"-u {FIRSTBOOT_NAME}`; timerd runs once it has finished)."])
    if args.apt and not where.debian:
        return (f"this is {where.name}, not Raspberry Pi OS or Debian: the installer's apt "
                f"packages would not be found. Install {' '.join(APT_PACKAGES)} (or what your "
                "system calls them) yourself and run it with --no-apt")
    apt: tuple[str, ...] = ()
    if args.apt:
        apt = APT_PACKAGES
        if apt_has(LGPIO_PACKAGE):
            apt = (*apt[:1], LGPIO_PACKAGE, *apt[1:])
        else:
            notes.append(LGPIO_BY_HAND)
    if not where.pi:
        notes.append(f"{where.name} is not a Raspberry Pi: there are no GPIO pins here. The "
                     "service starts only with gpio.pin_factory = \"mock\" in the config.")
    if not args.user:
        notes.append(f"no user to add to the group {SOCKET_GROUP} (run it with sudo, or give "
                     f"--user NAME): `sudo usermod -aG {SOCKET_GROUP} NAME` lets NAME use "
                     "timerctl")
    target = Target(args.instance or "")
    plan = Plan(install_steps(source, args.venv, args.python, apt, user=args.user,
                              target=target, web_port=free_web_port(args.root)), notes)
    if match := running_match(args.venv, target):
        plan.question = (f"{match[0].upper()}{match[1:]}. The upgrade restarts timerd: the "
                         "match comes back paused, to be resumed with START/PAUSE. Go on?")
    return plan


# -- carrying it out --------------------------------------------------------------------------

def _run_step(step: Step, root: Path, commands: bool, dry_run: bool, out: TextIO) -> bool:
    """Do one step; False if its command or its file failed (the message is printed).
    Every file is under `root`, reached as the system there would reach it (`inside`)."""
    if step.command:
        print(f"   $ {shlex.join(step.command)}", file=out)
        if not commands:
            return True
        try:
            subprocess.run(step.command, check=True)
        except (OSError, subprocess.CalledProcessError) as exc:
            print(f"timerd: that failed ({exc}); fix it and run the same command again: "
                  "finished steps are skipped or harmless to repeat", file=out)
            return False
        return True
    try:
        _file_step(step, root, dry_run, out)
    except OSError as exc:
        print(f"timerd: that failed ({exc}); nothing was written outside {root}", file=out)
        return False
    return True


def _file_step(step: Step, root: Path, dry_run: bool, out: TextIO) -> None:
    path = step.reach(root)
    if path is None:  # a step of words only
        return
    if step.write is not None:
        if step.keep_existing and path.exists():
            print(f"   kept {path}: it exists", file=out)
        else:
            print(f"   write {path}", file=out)
            if not dry_run:
                path.parent.mkdir(parents=True, exist_ok=True)
                if step.private:  # never readable by others, not even for a moment
                    path.touch(mode=0o600)
                    path.chmod(0o600)
                path.write_text(step.write[1])
    elif step.link is not None:
        print(f"   link {path} -> {step.link[1]}", file=out)
        if not dry_run:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.unlink(missing_ok=True)
            path.symlink_to(step.link[1])
    elif step.copy is not None:
        print(f"   copy {step.copy[0]} to {path}: " + ", ".join(PACKAGE_PARTS), file=out)
        if not dry_run:
            copy_package(step.copy[0], path)
    elif step.remove is not None:
        if path.is_symlink() or path.exists():
            print(f"   remove {path}", file=out)
        if not dry_run:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif path.is_symlink() or path.exists():
                path.unlink()


def copy_package(source: Path, to: Path) -> None:
    """Copy what the first boot's `pip install` and installer need (PACKAGE_PARTS) from the
    checkout `source` to `to`, replacing what was there: regular files and folders only, no
    caches (.hypothesis/, __pycache__, a .venv), no links, no lgpio FIFO (.lgd-nfy*)."""
    if to.is_symlink():
        to.unlink()
    elif to.exists():
        shutil.rmtree(to)
    to.mkdir(parents=True)

    def unwanted(folder: str, names: list[str]) -> set[str]:
        return {name for name in names if name == "__pycache__" or name.endswith(".egg-info")
                or name.startswith(".") or not _plain(Path(folder, name))}

    for part in PACKAGE_PARTS:
        here = source / part
        if here.is_dir() and not here.is_symlink():
            shutil.copytree(here, to / part, ignore=unwanted)
        elif _plain(here):
            shutil.copy2(here, to / part)


def _plain(path: Path) -> bool:
    """A regular file or folder, not a link (a FIFO, a socket or a link is not copied)."""
    try:
        mode = path.lstat().st_mode
    except OSError:
        return False
    return stat.S_ISREG(mode) or stat.S_ISDIR(mode)


def execute(steps: list[Step], root: Path, out: TextIO, *, machine: bool,
            dry_run: bool) -> int:
    """Carry the steps out in order: files under `root`; commands only on the `machine`
    itself and not in a dry run."""
    commands = machine and not dry_run
    number = 0
    for step in steps:
        if step.what:  # a step without words is the second half of the one before
            number += 1
            print(f"{number}. {step.what}", file=out)
        # This machine's users and groups say nothing about an image under --root.
        if machine and step.done is not None and step.done():
            print("   already done", file=out)
            continue
        if not _run_step(step, root, commands, dry_run, out):
            return 1
    return 0


def confirm(question: str, yes: bool, out: TextIO) -> bool:
    """Ask `question`; --yes answers it. No answer (no terminal) is no."""
    if yes:
        return True
    print(f"{question} [y/N] (--yes skips this question) ", end="", file=out, flush=True)
    try:
        answer = input()
    except EOFError:
        answer = ""
    return answer.strip().lower() in ("y", "yes")


def add_arguments(install: argparse.ArgumentParser, uninstall: argparse.ArgumentParser) -> None:
    """`timerd install` and `uninstall`'s options, their help in the terminal's language."""
    for parser in (install, uninstall):
        parser.add_argument("--dry-run", action="store_true", help=said("install.help.dry_run"))
        parser.add_argument("--root", type=Path, default=Path("/"), metavar="DIR",
                            help=said("install.help.root"))
        parser.add_argument("--venv", type=Path, default=PREFIX / "venv", metavar="DIR",
                            help=said("install.help.venv", path=PREFIX / "venv"))
        parser.add_argument("--yes", "-y", action="store_true", help=said("install.help.yes"))
        parser.add_argument("--instance", metavar="NAME", help=said("install.help.instance"))
    install.add_argument("--source", type=Path, metavar="DIR", help=said("install.help.source"))
    install.add_argument("--python", default="/usr/bin/python3", metavar="PATH",
                         help=said("install.help.python"))
    install.add_argument("--no-apt", dest="apt", action="store_false",
                         help=said("install.help.no_apt"))
    install.add_argument("--user", default=os.environ.get("SUDO_USER") or None,
                         metavar="NAME", help=said("install.help.user", group=SOCKET_GROUP))
    uninstall.add_argument("--purge", action="store_true", help=said("install.help.purge"))


def _installed_version(venv: Path) -> str:
    reply = _quiet([str(venv / "bin" / "timerd"), "--version"])
    return reply.stdout.strip() if reply is not None and reply.returncode == 0 else "timerd"


def main(args: argparse.Namespace, out: TextIO = sys.stdout,
         machine: bool | None = None) -> int:
    """Run `install` or `uninstall` (`args.command`) as parsed by `add_arguments`.

    `machine`: whether this is the machine itself, whose commands run (default: --root is
    /; else DIR is an image). The tests say True with files under a directory and fake
    commands on PATH.
    """
    if machine is None:
        machine = args.root == Path("/")
    if args.instance is not None and (problem := check_instance_name(args.instance)):
        print(f"timerd {args.command}: {problem}", file=out)
        return 2
    if args.instance and not machine:
        print(f"timerd {args.command}: --instance is for the machine itself, not an image "
              "(install the image, then add tables on the Pi)", file=out)
        return 2
    if getattr(args, "user", None) == "root":
        args.user = None
    if machine and not args.dry_run and os.geteuid() != 0:
        print(f"timerd {args.command}: run it as root (sudo), or look first with --dry-run",
              file=out)
        return 2
    if args.command == "uninstall":
        plan = uninstall_plan(args.venv, args.purge, args.root, Target(args.instance or ""))
    else:
        source = args.source or source_tree()
        if source is None or not (source / "systemd" / "timerd.service").is_file():
            print("timerd install: run it from a timerd source checkout, or give --source DIR",
                  file=out)
            return 2
        found = install_plan(args, source.resolve(), machine)
        if isinstance(found, str):
            print(f"timerd install: {found}", file=out)
            return 2
        plan = found
    try:  # a loop of links under --root is refused before anything is done
        for step in plan.steps:
            step.reach(args.root)
    except LinkLoop as exc:
        print(f"timerd {args.command}: {exc}", file=out)
        return 2
    print(f"timerd {args.command} will:", file=out)
    for number, step in enumerate((s for s in plan.steps if s.what), 1):
        print(f"  {number}. {step.what}", file=out)
    for note in plan.notes:
        print(f"Note: {note}", file=out)
    if machine and not args.dry_run and not confirm(plan.question, args.yes, out):
        print(f"timerd {args.command}: nothing changed", file=out)
        return 1
    code = execute(plan.steps, args.root, out, machine=machine, dry_run=args.dry_run)
    if code == 0 and machine and not args.dry_run and args.command == "install":
        print(f"{_installed_version(args.venv)} is installed and (re)started: `systemctl "
              "status timerd`, `journalctl -u timerd -f`, `timerd doctor`, `timerctl status`",
              file=out)
    return code


if __name__ == "__main__":  # `sudo python3 -m timerd.tools.install [install|uninstall] ...`
    top = argparse.ArgumentParser(prog="python3 -m timerd.tools.install", description=__doc__)
    sub = top.add_subparsers(dest="command", required=True)
    add_arguments(sub.add_parser("install"), sub.add_parser("uninstall"))
    sys.exit(main(top.parse_args()))
