"""`timerd doctor --service`: check what the installed service sees, not what the admin's
shell sees (issue 30 item 8).

`sudo -u timerd timerd doctor` from an admin's checkout checks that checkout's folders, cannot
write lgpio's FIFO there, and fails on a correct install. This reads the installed unit
(/etc/systemd/system/timerd.service, or timerd@.service for `--instance NAME`) as systemd reads
it, drop-ins applied (`unit_file`), for the service's user and groups, its working directory,
`LG_WD`, its state and runtime directories and the config it reads, and checks each as that
user may use it (the permission bits against the user's uid and groups, so root can run it
with the service running), then reads the real match journal and heartbeat.

`--root DIR` checks an install under DIR: a card, a test (issue 43 item 3). Every path is
reached as the system in DIR would reach it, its users and groups are DIR's own (etc/passwd,
etc/group), and every command it advises keeps `--root DIR`. A card just prepared by
`timerd install --root` has no service yet but its first-boot unit: the doctor says what the
first boot will do and checks what can be checked before it (the unit enabled, the source
copied, the Python it runs, the user it adds, the config).
"""

from __future__ import annotations

import grp
import os
import pwd
import shlex
import stat
from dataclasses import dataclass
from pathlib import Path

from timerd import config as config_mod
from timerd.config.schema import SchemaError
from timerd.tools import install, unit_file
from timerd.tools.checks import FAIL, OK, WARN, Check, journal_summary

READ, WRITE = 4, 2
HERE = Path("/")


@dataclass(frozen=True)
class Account:
    name: str
    uid: int
    gid: int
    home: str


class Accounts:
    """The users and groups of the system under `root`: this machine's (with its NSS) for /,
    else the root's own etc/passwd and etc/group (a card's users are not the laptop's)."""

    def __init__(self, root: Path) -> None:
        self.users: list[Account]
        self.groups: list[tuple[str, int, list[str]]]  # name, gid, members
        if root == HERE:
            self.users = [Account(u.pw_name, u.pw_uid, u.pw_gid, u.pw_dir)
                          for u in pwd.getpwall()]
            self.groups = [(g.gr_name, g.gr_gid, list(g.gr_mem)) for g in grp.getgrall()]
            return
        self.users = [Account(f[0], int(f[2]), int(f[3]), f[5])
                      for f in _fields(root, "/etc/passwd", 7)]
        self.groups = [(f[0], int(f[2]), [m for m in f[3].split(",") if m])
                       for f in _fields(root, "/etc/group", 4)]

    def user(self, name: str) -> Account | None:
        """User `name`, or a number: the uid (systemd takes either)."""
        return next((u for u in self.users if name in (u.name, str(u.uid))), None)

    def gid(self, name: str) -> int | None:
        return next((gid for group, gid, _ in self.groups if name in (group, str(gid))), None)

    def gids(self, user: Account, named: list[str]) -> set[int]:
        """The groups a service of `user` runs with: its own, those it is a member of, and
        `named` (the unit's Group= and SupplementaryGroups=; a missing one is left out)."""
        out = {user.gid} | {gid for _, gid, members in self.groups if user.name in members}
        return out | {gid for gid in map(self.gid, named) if gid is not None}

    def group_names(self, gids: set[int]) -> list[str]:
        return sorted(name for name, gid, _ in self.groups if gid in gids)


def _fields(root: Path, path: str, count: int) -> list[list[str]]:
    """The lines of a passwd-like file under `root` with `count` fields and numeric ids."""
    try:
        text = install.inside(root, Path(path)).read_text(errors="replace")
    except OSError:
        return []
    rows = [line.split(":") for line in text.splitlines()]
    return [row for row in rows if len(row) == count and row[2].isdigit()
            and (count == 4 or row[3].isdigit())]


def may(user: Account, gids: set[int], path: Path, want: int) -> bool:
    """Whether `user` with groups `gids` may `want` (READ, WRITE or both) `path`, by its
    permission bits (root may anything)."""
    if user.uid == 0:
        return True
    info = os.stat(path)
    shift = 6 if info.st_uid == user.uid else 3 if info.st_gid in gids else 0
    return (stat.S_IMODE(info.st_mode) >> shift) & want == want


class Advice:
    """The commands the doctor advises, for this machine or for the card under --root: they
    keep --root, and name users by number on a card (the laptop's names are not the card's)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.card = root != HERE

    def install(self) -> str:
        where = f" --root {shlex.quote(str(self.root))}" if self.card else ""
        return f"`sudo python3 -m timerd.tools.install install{where}`"

    def chown(self, user: Account, path: Path) -> str:
        if self.card:
            return (f"`sudo chown {user.uid}:{user.gid} "
                    f"{shlex.quote(str(install.inside(self.root, path)))}`")
        return f"`sudo chown {user.name}: {path}`"

    def started(self) -> str:
        return ("systemd makes it when the service starts on the Pi" if self.card else
                "systemd makes it when the service starts (`sudo systemctl start timerd`)")


def _directory(topic: str, path: Path, user: Account, gids: set[int], advice: Advice, *,
               made_at_start: bool, optional: bool = False) -> Check:
    real = install.inside(advice.root, path)
    if not real.is_dir():
        if made_at_start:
            return Check(WARN, topic, f"{path} is not there now: {advice.started()}")
        if optional:  # `WorkingDirectory=-/x`: systemd goes on without it
            return Check(WARN, topic, f"{path} does not exist; the unit allows that (its "
                                      "'-'), and the service starts in its user's home")
        return Check(FAIL, topic, f"{path} does not exist: run {advice.install()} again")
    if not may(user, gids, real, READ | WRITE):
        return Check(FAIL, topic, f"{path} is not writable by {user.name}: "
                                  f"{advice.chown(user, path)}, or {advice.install()} again")
    return Check(OK, topic, f"{path}, writable by {user.name}")


def _exec_directory(unit: unit_file.Unit, key: str, base: Path) -> tuple[Path | None,
                                                                          list[Check]]:
    """The first valid directory of `key` (StateDirectory=, RuntimeDirectory=) under `base`,
    as systemd takes it: a relative, normalised path (no `..`, not absolute); systemd skips
    any other, and then sets no $STATE_DIRECTORY for it."""
    found, out = None, []
    for word in unit.words(key):
        name = word.split(":", 1)[0]  # `timerd:alias` (systemd 250): the alias is a link
        parts = name.split("/")
        if name.startswith("/") or any(p in ("", ".", "..") for p in parts):
            out.append(Check(FAIL, key, f"{key}={word} is not a relative path below {base}: "
                                        "systemd ignores it, and the service gets no such "
                                        f"directory (`{key}=timerd`, as the installer "
                                        "writes it)"))
        elif found is None:
            found = base / name
    if found is None and not out:
        out.append(Check(FAIL, key, f"the unit sets no {key}=: systemd makes no directory "
                                    f"for the service under {base} (the installer writes "
                                    f"`{key}=timerd`)"))
    return found, out


def _working_directory(value: str, user: Account) -> tuple[Path, bool]:
    """WorkingDirectory= as systemd takes it: a leading '-' allows it to be missing, `~` is
    the user's home. Unset: the service runs in /."""
    optional = value.startswith("-")
    value = value.removeprefix("-")
    if value == "~" or value.startswith("~/"):
        value = user.home + value[1:]
    return Path(value or "/"), optional


def _load_config(root: Path, path: Path | None, default: Path,
                 overrides: list[str]) -> tuple[Path, Path, config_mod.Config | None, str]:
    """The config the service reads: (its name, where it is here, it or None, why not)."""
    name = path or default
    real = path if path is not None else install.inside(root, default)
    try:
        return name, real, config_mod.load(real, overrides), ""
    except SchemaError as exc:
        return name, real, None, "; ".join(exc.problems)
    except (OSError, UnicodeDecodeError) as exc:
        return name, real, None, f"cannot be read ({exc})"


def run_checks(root: Path, instance: str, config_path: Path | None,
               overrides: list[str]) -> list[Check]:
    target = install.Target(instance)
    advice = Advice(root)
    accounts = Accounts(root)
    unit = unit_file.load(root, target.unit)
    if unit.path is None:
        prepared = unit_file.load(root, install.FIRSTBOOT_NAME)
        if prepared.path is not None and not prepared.masked:
            return first_boot(prepared, advice, config_path, overrides)
        return [Check(FAIL, "unit", f"no {target.unit_path}: the service is not installed "
                                    f"({advice.install()})")]
    if unit.masked:
        return [Check(FAIL, "unit", f"{unit.path} is masked (a link to /dev/null): systemd "
                                    f"will not start it (`sudo systemctl unmask {target.unit}`"
                                    + (" on the Pi" if advice.card else "") + ")")]
    drop_ins = (f"; drop-ins: {', '.join(map(str, unit.drop_ins))}" if unit.drop_ins else "")
    out = [Check(OK, "unit", f"{unit.path}{drop_ins}: ExecStart=" + (unit.last("ExecStart")
                                                                     or "?"))]
    out += [Check(WARN, "unit syntax", line) for line in unit.skipped]
    name = unit.last("User") or "root"
    user = accounts.user(name)
    if user is None:
        where = f" in {install.inside(root, Path('/etc/passwd'))}" if advice.card else ""
        return [*out, Check(FAIL, "user", f"the unit's user {name} does not exist{where}: "
                                          f"run {advice.install()} again")]
    gids = accounts.gids(user, unit.words("Group") + unit.words("SupplementaryGroups"))
    out.append(Check(OK, "user", f"{user.name} (uid {user.uid}), groups "
                                 + ", ".join(accounts.group_names(gids))))
    env: dict[str, str] = {}
    for value in unit.settings.get("Environment", []):
        try:
            words = shlex.split(value)
        except ValueError:
            words = value.split()
        env.update(w.partition("=")[::2] for w in words)
    state, problems = _exec_directory(unit, "StateDirectory", Path("/var/lib"))
    runtime, more = _exec_directory(unit, "RuntimeDirectory", Path("/run"))
    config_file, real, config, why = _load_config(root, config_path, target.config, overrides)
    if config is None:
        out.append(Check(FAIL, "config", f"{config_file}: {why}"))
        config = config_mod.Config()
    else:
        readable = real.exists() and may(user, gids, real, READ)
        out.append(Check(OK if readable else FAIL, "config", f"{config_file} "
                         + ("readable by " if readable else "not readable by ") + user.name))
    if config.state.directory:
        state, problems = Path(config.state.directory), []
    if config.state.runtime_directory:
        runtime, more = Path(config.state.runtime_directory), []
    out += problems + more
    working, optional = _working_directory(unit.last("WorkingDirectory"), user)
    out.append(_directory("working directory", working, user, gids, advice,
                          made_at_start=working == state, optional=optional))
    lg_wd = env.get("LG_WD")
    if lg_wd is None:
        out.append(Check(WARN, "LG_WD", "not set: lgpio writes its FIFO in the working "
                                        "directory"))
    else:
        out.append(_directory("LG_WD", Path(lg_wd), user, gids, advice,
                              made_at_start=Path(lg_wd) == runtime))
    for topic, path in (("state directory", state), ("runtime directory", runtime)):
        if path is not None:
            out.append(_directory(topic, path, user, gids, advice, made_at_start=True))
    if state is not None and runtime is not None and install.inside(root, state).is_dir():
        out.append(journal_summary(install.inside(root, state), install.inside(root, runtime),
                                   config.state.resume_within_s))
    return out


def first_boot(unit: unit_file.Unit, advice: Advice, config_path: Path | None,
               overrides: list[str]) -> list[Check]:
    """A card prepared by `timerd install --root`: what its first boot will do, and what can
    be checked now that it needs."""
    root = advice.root
    command = unit.last("ExecStart")
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    user = words[words.index("--user") + 1] if "--user" in words[:-1] else ""
    does = ("update apt's package lists and install the packages timerd needs, "
            if "--no-apt" not in words else "") + (
        f"create the user {install.USER}, its virtual environment {install.PREFIX / 'venv'} "
        f"with timerd in it, the service {install.UNIT_NAME}, "
        + (f"add {user} to the group {install.SOCKET_GROUP}, " if user else "")
        + "and start timerd")
    out = [Check(OK, "first boot", f"the service is not installed yet: this card is prepared "
                                   f"({unit.path}). At its first boot, with the network, the "
                                   f"Pi will {does}; then it disables {install.FIRSTBOOT_NAME}."
                                   f" On the Pi, `journalctl -u {install.FIRSTBOOT_NAME}` "
                                   "shows how it went")]
    out += [Check(WARN, "unit syntax", line) for line in unit.skipped]
    link = install.inside(root, install.WANTS / install.FIRSTBOOT_NAME, follow_last=False)
    out.append(Check(OK, "enabled", f"{install.WANTS / install.FIRSTBOOT_NAME}") if
               link.is_symlink() else
               Check(FAIL, "enabled", f"no {install.WANTS / install.FIRSTBOOT_NAME}: the first "
                                      f"boot will not run it; run {advice.install()} again"))
    python = Path(words[0]) if words else Path("?")
    real = install.inside(root, python) if python.is_absolute() else None
    out.append(Check(OK, "python", f"{python} is on the card") if real is not None and
               real.is_file() else
               Check(FAIL, "python", f"{python} is not on the card: the first boot cannot run "
                                     "the installer (is this Raspberry Pi OS, not Lite without "
                                     "Python?)"))
    source = install.IMAGE_SOURCE
    missing = [part for part in ("pyproject.toml", "timerd", "systemd/timerd.service")
               if not install.inside(root, source / part).exists()]
    out.append(Check(FAIL, "source", f"{source} lacks {', '.join(missing)}: run "
                                     f"{advice.install()} again") if missing else
               Check(OK, "source", f"{source}: the package the first boot installs"))
    if user:
        known = user in install.passwd_users(root)
        out.append(Check(OK, "user", f"{user}, the first boot adds to the group "
                                     f"{install.SOCKET_GROUP}, is a user of the card") if known
                   else Check(FAIL, "user", f"{user} is not a user of the card (not in its "
                                            "etc/passwd, nor in bootfs/userconf.txt): the "
                                            "first boot would stop there; run "
                                            f"{advice.install()} with the right --user"))
    name, real_config, config, why = _load_config(root, config_path, install.CONFIG_PATH,
                                                  overrides)
    if config is None:
        out.append(Check(FAIL, "config", f"{name}: {why}; the service will not start until "
                                         "it is fixed"))
    else:
        shared = real_config.exists() and stat.S_IMODE(real_config.stat().st_mode) & 0o077
        out.append(Check(WARN if shared else OK, "config", f"{name} is valid; profile "
                         f"{config.profile().name}" + (
                             "; others than root may read it (it holds the desk's token): "
                             f"`sudo chmod 0600 {shlex.quote(str(real_config))}`" if shared
                             else ", readable by root alone until the first boot makes it "
                                  f"root:{install.SOCKET_GROUP} 0640")))
    return out
