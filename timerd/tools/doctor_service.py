"""`timerd doctor --service`: check what the installed service sees, not what the admin's
shell sees (issue 30 item 8).

`sudo -u timerd timerd doctor` from an admin's checkout checks that checkout's folders, cannot
write lgpio's FIFO there, and fails on a correct install. This reads the installed unit
(/etc/systemd/system/timerd.service, or timerd@.service for `--instance NAME`) for the
service's user and groups, its working directory, `LG_WD`, its state and runtime directories
and the config it reads, and checks each as that user may use it (the permission bits against
the user's uid and groups, so root can run it with the service running), then reads the real
match journal and heartbeat. `--root DIR` checks an install under DIR (an image, a test).
"""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
import stat
from pathlib import Path

from timerd import config as config_mod
from timerd.config.schema import SchemaError
from timerd.tools import install
from timerd.tools.doctor import FAIL, OK, WARN, Check, journal_summary

READ, WRITE = 4, 2


def unit_settings(text: str, instance: str) -> dict[str, list[str]]:
    """The unit's [Service] settings, each key with every value it is given (`%i`: the
    instance)."""
    out: dict[str, list[str]] = {}
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            section = line
        elif section == "[Service]" and "=" in line and not line.startswith("#"):
            key, _, value = line.partition("=")
            out.setdefault(key.strip(), []).append(value.strip().replace("%i", instance))
    return out


def _gids(user: pwd.struct_passwd, settings: dict[str, list[str]]) -> set[int]:
    """The groups the service runs with: its user's, the unit's Group= and
    SupplementaryGroups=."""
    names = [n for key in ("Group", "SupplementaryGroups") for v in settings.get(key, [])
             for n in v.split()]
    gids = {user.pw_gid} | {g.gr_gid for g in grp.getgrall() if user.pw_name in g.gr_mem}
    for name in names:
        with contextlib.suppress(KeyError):  # a missing group: the user check says so
            gids.add(grp.getgrnam(name).gr_gid)
    return gids


def may(user: pwd.struct_passwd, gids: set[int], path: Path, want: int) -> bool:
    """Whether `user` with groups `gids` may `want` (READ, WRITE or both) `path`, by its
    permission bits (root may anything)."""
    if user.pw_uid == 0:
        return True
    info = os.stat(path)
    shift = 6 if info.st_uid == user.pw_uid else 3 if info.st_gid in gids else 0
    return (stat.S_IMODE(info.st_mode) >> shift) & want == want


def _under(root: Path, path: Path) -> Path:
    return root / path.relative_to("/")


def _directory(topic: str, path: Path, root: Path, user: pwd.struct_passwd, gids: set[int],
               *, made_at_start: bool) -> Check:
    real = _under(root, path)
    if not real.is_dir():
        if made_at_start:
            return Check(WARN, topic, f"{path} is not there now: systemd makes it when the "
                                      "service starts (`sudo systemctl start timerd`)")
        return Check(FAIL, topic, f"{path} does not exist: run `sudo timerd install` again")
    if not may(user, gids, real, READ | WRITE):
        return Check(FAIL, topic, f"{path} is not writable by {user.pw_name}: `sudo chown "
                                  f"{user.pw_name}: {path}`, or `sudo timerd install` again")
    return Check(OK, topic, f"{path}, writable by {user.pw_name}")


def run_checks(root: Path, instance: str, config_path: Path | None,
               overrides: list[str]) -> list[Check]:
    target = install.Target(instance)
    unit_path = _under(root, target.unit_path)
    try:
        settings = unit_settings(unit_path.read_text(), instance)
    except OSError:
        return [Check(FAIL, "unit", f"no {target.unit_path}: the service is not installed "
                                    "(`sudo python3 -m timerd.tools.install install`)")]
    out = [Check(OK, "unit", f"{target.unit_path}: ExecStart="
                             + " ".join(settings.get("ExecStart", ["?"])))]
    name = (settings.get("User") or ["root"])[-1]
    try:
        user = pwd.getpwnam(name)
    except KeyError:
        return [*out, Check(FAIL, "user", f"the unit's user {name} does not exist: run `sudo "
                                          "timerd install` again")]
    gids = _gids(user, settings)
    out.append(Check(OK, "user", f"{name} (uid {user.pw_uid}), groups "
                                 + ", ".join(sorted(g.gr_name for g in grp.getgrall()
                                                    if g.gr_gid in gids))))
    env = dict(v.partition("=")[::2] for e in settings.get("Environment", [])
               for v in e.split())
    state = Path("/var/lib") / (settings.get("StateDirectory") or ["timerd"])[-1]
    runtime = Path("/run") / (settings.get("RuntimeDirectory") or ["timerd"])[-1]
    config_file = config_path or target.config
    try:
        config = config_mod.load(_under(root, config_file) if config_path is None
                                 else config_file, overrides)
    except SchemaError as exc:
        out.append(Check(FAIL, "config", f"{config_file}: " + "; ".join(exc.problems)))
        config = config_mod.Config()
    else:
        real = _under(root, config_file) if config_path is None else config_file
        readable = real.exists() and may(user, gids, real, READ)
        out.append(Check(OK if readable else FAIL, "config", f"{config_file} "
                         + ("readable by " if readable else "not readable by ") + name))
    if config.state.directory:
        state = Path(config.state.directory)
    if config.state.runtime_directory:
        runtime = Path(config.state.runtime_directory)
    working = Path((settings.get("WorkingDirectory") or ["/"])[-1])
    out.append(_directory("working directory", working, root, user, gids,
                          made_at_start=working == state))
    lg_wd = env.get("LG_WD")
    if lg_wd is None:
        out.append(Check(WARN, "LG_WD", "not set: lgpio writes its FIFO in the working "
                                        "directory"))
    else:
        out.append(_directory("LG_WD", Path(lg_wd), root, user, gids,
                              made_at_start=Path(lg_wd) == runtime))
    out.append(_directory("state directory", state, root, user, gids, made_at_start=True))
    out.append(_directory("runtime directory", runtime, root, user, gids, made_at_start=True))
    if _under(root, state).is_dir():
        out.append(journal_summary(_under(root, state), _under(root, runtime),
                                   config.state.resume_within_s))
    return out
