"""Where timerd's files are: the config file, the control socket, the state and runtime
directories (systemd's, else the user's XDG ones; one set per `--instance`), and the checks
that keep another user from planting a directory or a socket there.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import stat
import tempfile
from pathlib import Path
from typing import Any

from timerd.i18n import LOG_TEXT

#: The config file read without `--config` (`system_config()`: one per instance).
SYSTEM_CONFIG = Path("/etc/timerd/timerd.toml")

#: `--instance NAME` (or this variable) runs one of several timerds on one machine, each with
#: its own config, socket, state and runtime directory (docs/service.md, "Several tables").
INSTANCE_ENV = "TIMERD_INSTANCE"
#: Where the service's control socket lives (systemd's RuntimeDirectory): timerctl looks here
#: before the per-user places.
SYSTEM_RUNTIME = Path("/run")


def instance() -> str:
    """This process's instance name; empty: the single, unnamed timerd of a machine."""
    return os.environ.get(INSTANCE_ENV, "")


def dir_name() -> str:
    """`timerd`, or `timerd-NAME` for an instance: the name of its directories."""
    return f"timerd-{name}" if (name := instance()) else "timerd"


def system_config() -> Path:
    """The config file read without `--config`: /etc/timerd/timerd.toml, or
    /etc/timerd/NAME.toml for an instance."""
    return SYSTEM_CONFIG.with_name(f"{name}.toml") if (name := instance()) else SYSTEM_CONFIG


def system_socket() -> Path:
    """The service's control socket, /run/timerd/control.sock (/run/timerd-NAME/...)."""
    return SYSTEM_RUNTIME / dir_name() / "control.sock"


def fallback_runtime_dir() -> Path:
    """The runtime directory when neither systemd nor the login session gives one:
    /tmp/timerd-UID (the temporary directory honours $TMPDIR)."""
    return Path(tempfile.gettempdir()) / f"{dir_name()}-{os.geteuid()}"


def runtime_dir() -> Path:
    """Where the control socket lives: systemd's RuntimeDirectory, else a per-user one."""
    if env := os.environ.get("RUNTIME_DIRECTORY"):
        return Path(env.split(":")[0])
    if env := os.environ.get("XDG_RUNTIME_DIR"):
        return Path(env) / dir_name()
    return fallback_runtime_dir()


def state_dir() -> Path:
    """Where state that must survive a reboot lives: systemd's StateDirectory, else the
    user's XDG state directory (~/.local/state/timerd, or timerd-NAME for an instance)."""
    if env := os.environ.get("STATE_DIRECTORY"):
        return Path(env.split(":")[0])
    base = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
    return Path(base) / dir_name()


class UnsafePath(RuntimeError):
    """A directory or socket that another user could have made or may change; `key` and
    `params`, where given, are its sentence in the catalogue, for timerctl to say it in its
    reader's language (issue 46)."""

    def __init__(self, text: str, key: str = "", **params: Any) -> None:
        super().__init__(text)
        self.key, self.params = key, params


def _unsafe(key: str, **params: Any) -> UnsafePath:
    """An UnsafePath of the catalogue's sentence `key` (English in its text)."""
    return UnsafePath(LOG_TEXT(key, **params), key, **params)


class InUse(RuntimeError):
    """A control socket, port, serial port or state directory that another running timerd
    holds: a second daemon refuses to start rather than take it over (issue 30 item 3)."""


#: What a refusal to share advises (`timerd run` prints it after the clash).
INSTANCE_HINT = "use --instance NAME or --control PATH"


def _owner(uid: int) -> str:
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def private_directory(path: Path) -> Path:
    """Make sure the daemon's runtime directory is its own before it writes there.

    A missing one is created with mode 0700. An existing one must be a real directory (not a
    symbolic link), owned by this user, and writable by nobody else; the /tmp fallback must
    also be unreadable by others. Otherwise another user could have planted it (in /tmp
    anyone can): the heartbeat written through their symbolic link would overwrite a file
    of ours, and a control socket they swap in would take `timerctl`'s commands. Raises
    UnsafePath saying what is wrong and what to do; nothing is changed then.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    info = os.lstat(path)
    me = os.geteuid()
    private = path == fallback_runtime_dir()
    problem = (
        "is a symbolic link" if stat.S_ISLNK(info.st_mode) else
        "is not a directory" if not stat.S_ISDIR(info.st_mode) else
        f"belongs to {_owner(info.st_uid)}, not to {_owner(me)}" if info.st_uid != me else
        f"may be changed by other users (mode {stat.S_IMODE(info.st_mode):04o})"
        if info.st_mode & 0o022 else
        f"may be read by other users (mode {stat.S_IMODE(info.st_mode):04o}, want 0700)"
        if private and info.st_mode & 0o077 else "")
    if problem:
        raise UnsafePath(
            f"the runtime directory {path} {problem}: another user may have made it, so "
            "timerd does not use it. Remove it (or `chmod 700` it if it is yours), or set "
            "state.runtime_directory or $XDG_RUNTIME_DIR to a directory of your own")
    return path


def _made_by_root(directory: Path) -> bool:
    """Whether only root can have created `directory`: its parent is root's and closed."""
    parent = os.stat(directory.parent)
    return parent.st_uid == 0 and not parent.st_mode & 0o022


def trusted_socket(path: Path) -> None:
    """Refuse a control socket that someone other than this user, root or the service could
    have put there, before `timerctl` sends it a command (or shows its fake status).

    The socket's directory (symbolic links resolved) must be this user's or root's, or one
    that only root could have made (/run/timerd, made by systemd for the service's user);
    a directory others may write to is only trusted with the sticky bit, and then only a
    socket of this user's or root's. A missing socket is left to `connect` to report.
    """
    directory = Path(os.path.realpath(path.parent))
    me = os.geteuid()
    try:
        info = os.stat(directory)
    except FileNotFoundError:
        return
    ours = info.st_uid in (me, 0)
    if not ours and not _made_by_root(directory):
        raise _unsafe("cli.unsafe.owner", directory=directory, owner=_owner(info.st_uid))
    shared = bool(info.st_mode & 0o022)
    if shared and not (ours and info.st_mode & stat.S_ISVTX):
        raise _unsafe("cli.unsafe.shared", directory=directory,
                      mode=f"{stat.S_IMODE(info.st_mode):04o}")
    try:
        sock = os.lstat(directory / path.name)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(sock.st_mode):
        raise _unsafe("cli.unsafe.not_socket", path=directory / path.name)
    allowed = {me, 0} if shared else {me, 0, info.st_uid}
    if sock.st_uid not in allowed:
        raise _unsafe("cli.unsafe.socket_owner", path=directory / path.name,
                      owner=_owner(sock.st_uid))
