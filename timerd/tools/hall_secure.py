"""`timerd hall secure`: the broker's own security for a hall, set up for the organiser
(docs/hall.md, "Locking the broker down"; issue 34).

mosquitto does the work: no anonymous client, one user per table, one for the desk and a
read-only one for the hall board in a password file (hashed by Debian's `mosquitto_passwd`),
and an ACL by which a table publishes only under its own topics and reads only its own
commands and the hall's, and only the desk publishes commands. This writes, under `--out DIR`:

- `passwd`: the users, hashed (`mosquitto_passwd -U`);
- `acl`: the access list;
- `mosquitto.conf`: the snippet for `/etc/mosquitto/conf.d/` (with `allow_anonymous false`,
  each client's id its user name so that no login takes over another's session, a packet
  size limit, and where TLS goes, which stays as docs/hall.md describes it);
- `tables/<table>.toml`, `desk.toml` and `board.toml`: each one's `[hall]` login with the
  broker's host and port, a config drop-in (`/etc/timerd/timerd.d/`, `timerd.config.layers`).

Passwords are random (`secrets`), written only to files readable by their owner alone. No
file is written through a symbolic link: each is made new (O_EXCL, O_NOFOLLOW) in `--out`,
opened without following links, and renamed over the old one; a link where a file or
`tables/` goes is refused (issue 41 item 5).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import secrets
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import tomli_w

from timerd.adapters.hall.protocol import MAX_PAYLOAD_BYTES, Topics
from timerd.tools.hall_text import text as said

#: The desk's user name on the broker.
DESK_USER = "desk"
#: The hall board's (`timerd hall board`) user: reads the hall, commands nothing. Its own, so
#: that the board, which runs all day, and the desk's commands never share a client id.
BOARD_USER = "board"
#: The largest MQTT packet the broker takes (`max_packet_size`): the desk's largest message
#: and room for its topic and header; a bigger one disconnects its sender.
MAX_PACKET_BYTES = MAX_PAYLOAD_BYTES + 4096
#: A table id as a user name and in a topic: what `[hall] table` takes.
_TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")


class SecureError(ValueError):
    """What `hall secure` cannot do, said for the organiser."""


def acl_text(hall: str, tables: list[str]) -> str:
    """The ACL: the desk reads and writes the whole hall; each table writes its own state,
    events, results and status (its last will too) and reads its own commands and the
    hall's; nobody else, anonymous clients included, reads or writes anything."""
    desk = Topics(hall, "+")
    lines = ["# timerd hall secure: the access list for hall " + hall,
             f"user {DESK_USER}", f"topic readwrite timerd/{hall}/#", "",
             f"user {BOARD_USER}", f"topic read timerd/{hall}/#", ""]
    for table in tables:
        own = Topics(hall, table)
        lines += [f"user {table}",
                  *(f"topic write {t}" for t in (own.state, own.events, own.results,
                                                  own.status)),
                  f"topic read {own.table_cmd}", f"topic read {desk.hall_cmd}", ""]
    return "\n".join(lines)


#: Where the broker reads the password file and the access list (its own, mode 600).
BROKER_DIR = Path("/etc/mosquitto/timerd")


def conf_text(port: int = 1883) -> str:
    """The mosquitto.conf snippet: no anonymous clients, the users and the access list; each
    client's id is its user name, so a login cannot take over another's session by
    connecting with its client id (it would take over only its own); no packet larger than
    `MAX_PACKET_BYTES` (a login parking a huge retained message for every desk run)."""
    return (f"# timerd hall secure: /etc/mosquitto/conf.d/timerd.conf (docs/hall.md)\n"
            f"per_listener_settings false\n"
            f"allow_anonymous false\n"
            f"password_file {BROKER_DIR / 'passwd'}\n"
            f"acl_file {BROKER_DIR / 'acl'}\n"
            f"max_packet_size {MAX_PACKET_BYTES}\n"
            f"listener {port}\n"
            f"# a listener's own setting: every listener of the hall needs it\n"
            f"use_username_as_clientid true\n"
            f"# TLS, as docs/hall.md describes it: a second listener with your certificates\n"
            f"# listener 8883\n# use_username_as_clientid true\n"
            f"# cafile /etc/mosquitto/certs/ca.crt\n"
            f"# certfile /etc/mosquitto/certs/broker.crt\n"
            f"# keyfile /etc/mosquitto/certs/broker.key\n")


def login_toml(hall: str, broker: tuple[str, int], user: str, password: str,
               table: str | None) -> str:
    """A `[hall]` section with the broker and this user's login: a config drop-in."""
    section: dict[str, object] = {"host": broker[0], "port": broker[1], "hall": hall,
                                  "username": user, "password": password}
    if table is not None:
        section |= {"enabled": True, "table": table}
    where = ("this table's /etc/timerd/timerd.d/hall-login.toml" if table else
             f"the {user}'s config drop-in (timerd.d/hall-login.toml beside its timerd.toml)")
    return (f"# timerd hall secure: {where}, root:timerd mode 640 (docs/hall.md)\n"
            + tomli_w.dumps({"hall": section}))


@contextlib.contextmanager
def _directory(path: Path | str, parent: int | None = None) -> Iterator[int]:
    """`path` (under the open directory `parent`) made if missing (mode 700) and opened
    without following a link: a symbolic link planted there is refused."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700, dir_fd=parent)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                     dir_fd=parent)
    except OSError as exc:
        raise SecureError(said("hall.secure.not_dir", path=path, error=exc.strerror)) from exc
    try:
        yield fd
    finally:
        os.close(fd)


def _write(directory: int, name: str, text: str, mode: int, shown: Path) -> None:
    """`text` as the file `name` in the open `directory`: made new under a random name
    (O_EXCL, O_NOFOLLOW: never through a link, never an existing file) and renamed over
    `name`, which is refused if it is a symbolic link (it would be replaced, not followed,
    but a link there is someone's trap and worth saying)."""
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISLNK(os.lstat(name, dir_fd=directory).st_mode):
            raise SecureError(said("hall.secure.link", path=shown))
    tmp = f".{name}.{secrets.token_hex(8)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 mode, dir_fd=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(tmp, name, src_dir_fd=directory, dst_dir_fd=directory)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=directory)
        raise


def _hashed(tool: str, users: dict[str, str]) -> str:
    """The password file's text, hashed by `mosquitto_passwd -U` in a private directory."""
    with tempfile.TemporaryDirectory(prefix="timerd-secure-") as private:
        plain = Path(private) / "passwd"
        plain.write_text("".join(f"{user}:{password}\n" for user, password in users.items()),
                         encoding="utf-8")
        hashed = subprocess.run([tool, "-U", str(plain)], capture_output=True, text=True,
                                check=False)
        if hashed.returncode != 0:
            raise SecureError(said("hall.secure.failed", error=hashed.stderr.strip()))
        return plain.read_text(encoding="utf-8")


def secure(hall: str, tables: list[str], out: Path, broker: tuple[str, int] = ("", 1883),
           passwd_tool: str | None = None) -> dict[str, str]:
    """Write the hall's broker security under `out`; the users and their passwords.
    `broker` is the host and port the logins name (host empty: this machine's name)."""
    broker = (broker[0] or socket.gethostname(), broker[1])
    tool = passwd_tool or shutil.which("mosquitto_passwd") or "/usr/bin/mosquitto_passwd"
    if not Path(tool).exists():
        raise SecureError(said("hall.secure.no_passwd"))
    bad = [t for t in tables if not _TABLE_ID.fullmatch(t) or t in (DESK_USER, BOARD_USER)]
    if bad or not tables or len(set(tables)) < len(tables):
        raise SecureError(said("hall.secure.tables", desk=repr(DESK_USER),
                               board=repr(BOARD_USER))
                          + (" " + said("hall.secure.bad", tables=", ".join(bad[:3]))
                             if bad else ""))
    if not 0 < broker[1] < 65536:
        raise SecureError(said("hall.secure.port", port=broker[1]))
    users = {user: secrets.token_urlsafe(18) for user in (DESK_USER, BOARD_USER, *tables)}
    passwd = _hashed(tool, users)
    out.parent.mkdir(parents=True, exist_ok=True)
    with _directory(out) as top:
        _write(top, "passwd", passwd, 0o600, out / "passwd")
        _write(top, "acl", acl_text(hall, tables), 0o600, out / "acl")
        _write(top, "mosquitto.conf", conf_text(broker[1]), 0o644, out / "mosquitto.conf")
        for user in (DESK_USER, BOARD_USER):
            _write(top, f"{user}.toml", login_toml(hall, broker, user, users[user], None),
                   0o600, out / f"{user}.toml")
        with _directory("tables", top) as logins:
            for table in tables:
                _write(logins, f"{table}.toml",
                       login_toml(hall, broker, table, users[table], table), 0o600,
                       out / "tables" / f"{table}.toml")
    return users


def main(hall: str, args: argparse.Namespace) -> int:
    """`timerd hall secure --tables t1,t2 --out DIR`."""
    tables = [t.strip() for t in args.tables.split(",") if t.strip()]
    try:
        secure(hall, tables, Path(args.out), (args.host or "", args.port))
    except (SecureError, OSError) as exc:
        print(f"timerd hall secure: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out)
    print(said("hall.secure.done", hall=hall, desk=DESK_USER, tables=", ".join(tables),
               passwd=out / "passwd", acl=out / "acl"))
    print(said("hall.secure.broker", commands=(
        f"sudo install -d -o mosquitto -m 700 {BROKER_DIR} && sudo install -o "
        f"mosquitto -m 600 {out / 'passwd'} {out / 'acl'} {BROKER_DIR}/ && sudo cp "
        f"{out / 'mosquitto.conf'} /etc/mosquitto/conf.d/timerd.conf && sudo systemctl "
        "restart mosquitto")))
    print(said("hall.secure.tables_desk", tables=out / "tables", desk=out / "desk.toml",
               board=out / "board.toml"))
    return 0
