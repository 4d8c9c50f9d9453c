"""`timerd hall secure`: the broker's own security for a hall, set up for the organiser
(docs/hall.md, "Locking the broker down"; issue 34).

mosquitto does the work: no anonymous client, one user per table and one for the desk in a
password file (hashed by Debian's `mosquitto_passwd`), and an ACL by which a table publishes
only under its own topics and reads only its own commands and the hall's, and only the desk
publishes commands. This writes, under `--out DIR`:

- `passwd`: the users, hashed (`mosquitto_passwd -U`);
- `acl`: the access list;
- `mosquitto.conf`: the snippet for `/etc/mosquitto/conf.d/` (with `allow_anonymous false`
  and where TLS goes, which stays as docs/hall.md describes it);
- `tables/<table>.toml` and `desk.toml`: each one's `[hall]` login, for its `timerd.toml`.

Passwords are random (`secrets`), written only to files readable by their owner alone.
"""

from __future__ import annotations

import argparse
import re
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import tomli_w

from timerd.adapters.hall.protocol import Topics
from timerd.tools.hall_text import text as said

#: The desk's user name on the broker.
DESK_USER = "desk"
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
             f"user {DESK_USER}", f"topic readwrite timerd/{hall}/#", ""]
    for table in tables:
        own = Topics(hall, table)
        lines += [f"user {table}",
                  *(f"topic write {t}" for t in (own.state, own.events, own.results,
                                                  own.status)),
                  f"topic read {own.table_cmd}", f"topic read {desk.hall_cmd}", ""]
    return "\n".join(lines)


#: Where the broker reads the password file and the access list (its own, mode 600).
BROKER_DIR = Path("/etc/mosquitto/timerd")


def conf_text() -> str:
    """The mosquitto.conf snippet: no anonymous clients, the users and the access list."""
    return (f"# timerd hall secure: /etc/mosquitto/conf.d/timerd.conf (docs/hall.md)\n"
            f"per_listener_settings false\n"
            f"allow_anonymous false\n"
            f"password_file {BROKER_DIR / 'passwd'}\n"
            f"acl_file {BROKER_DIR / 'acl'}\n"
            f"listener 1883\n"
            f"# TLS, as docs/hall.md describes it: a second listener with your certificates\n"
            f"# listener 8883\n# cafile /etc/mosquitto/certs/ca.crt\n"
            f"# certfile /etc/mosquitto/certs/broker.crt\n"
            f"# keyfile /etc/mosquitto/certs/broker.key\n")


def login_toml(hall: str, user: str, password: str, table: str | None) -> str:
    """A `[hall]` section with this user's login, for its timerd.toml."""
    section: dict[str, object] = {"enabled": table is not None, "hall": hall,
                                  "username": user, "password": password}
    if table is not None:
        section["table"] = table
    return ("# timerd hall secure: this login belongs in "
            + ("the table's /etc/timerd/timerd.toml\n" if table else "the desk's config\n")
            + tomli_w.dumps({"hall": section}))


def _private(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.touch(mode=0o600)
    path.chmod(0o600)
    path.write_text(text, encoding="utf-8")


def secure(hall: str, tables: list[str], out: Path,
           passwd_tool: str | None = None) -> dict[str, str]:
    """Write the hall's broker security under `out`; the users and their passwords."""
    tool = passwd_tool or shutil.which("mosquitto_passwd") or "/usr/bin/mosquitto_passwd"
    if not Path(tool).exists():
        raise SecureError(said("hall.secure.no_passwd"))
    bad = [t for t in tables if not _TABLE_ID.fullmatch(t) or t == DESK_USER]
    if bad or not tables or len(set(tables)) < len(tables):
        raise SecureError(said("hall.secure.tables", desk=repr(DESK_USER)) + (
            " " + said("hall.secure.bad", tables=", ".join(bad[:3])) if bad else ""))
    users = {DESK_USER: secrets.token_urlsafe(18)} | {
        t: secrets.token_urlsafe(18) for t in tables}
    passwd = out / "passwd"
    _private(passwd, "".join(f"{user}:{password}\n" for user, password in users.items()))
    hashed = subprocess.run([tool, "-U", str(passwd)], capture_output=True, text=True,
                            check=False)
    if hashed.returncode != 0:
        passwd.unlink()
        raise SecureError(said("hall.secure.failed", error=hashed.stderr.strip()))
    (out / "acl").write_text(acl_text(hall, tables), encoding="utf-8")
    (out / "mosquitto.conf").write_text(conf_text(), encoding="utf-8")
    _private(out / "desk.toml", login_toml(hall, DESK_USER, users[DESK_USER], None))
    for table in tables:
        _private(out / "tables" / f"{table}.toml", login_toml(hall, table, users[table], table))
    return users


def main(hall: str, args: argparse.Namespace) -> int:
    """`timerd hall secure --tables t1,t2 --out DIR`."""
    tables = [t.strip() for t in args.tables.split(",") if t.strip()]
    try:
        secure(hall, tables, Path(args.out))
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
    print(said("hall.secure.tables_desk", tables=out / "tables", desk=out / "desk.toml"))
    return 0
