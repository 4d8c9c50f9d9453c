"""`timerctl desk`: pair a phone with the score desk by one scan (issues 31, 43).

It asks the running daemon over its control socket (`desk`) for a one-time pairing code and
where its control page listens, so it works for whatever config, `-o`, `--socket` or
`--instance` the daemon was started with. It prints the desk's address with the code as a
QR code in the terminal and as text, once per address of the Pi (its IPv4 addresses, then
its `.local` name, which phones that know mDNS resolve), e.g.
`http://192.168.1.20:8080/control#code=...`. The code is good once, for a few minutes: the
page exchanges it for a credential of its own (timerd/adapters/web/pairing.py), and the link
left in the phone's history opens nothing. The table's token is never in a link.

`timerctl desk --list` lists the paired devices and `timerctl desk --revoke ID` revokes one.
Nothing is sent on the network: the addresses are the interfaces' own.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from typing import Any, TextIO
from urllib.parse import quote

from timerd.i18n import LOG_TEXT, Messages

#: A host the daemon reports for "every address of the machine".
WILDCARDS = ("0.0.0.0", "::", "")


def local_addresses() -> list[str]:
    """The machine's global IPv4 addresses (`ip -j -4 addr`), in the order the kernel lists
    them; none if iproute2 cannot tell."""
    try:
        done = subprocess.run(["ip", "-j", "-4", "addr", "show", "scope", "global"],
                              capture_output=True, text=True, timeout=5, check=True)
        interfaces = json.loads(done.stdout or "[]")
    except (OSError, subprocess.SubprocessError, ValueError):
        return []
    return [a["local"] for i in interfaces for a in i.get("addr_info", [])
            if a.get("family") == "inet" and a.get("local")]


def desk_links(reply: dict[str, Any], addresses: list[str], hostname: str) -> list[str]:
    """The desk's address with the pairing code of the daemon's `desk` reply, for its host,
    or (it listens on every address) for each of `addresses` and `hostname.local`."""
    host, port = str(reply["host"]), int(reply["port"])
    hosts = ([host] if host not in WILDCARDS else
             [*addresses, f"{hostname.split('.', maxsplit=1)[0]}.local"])
    fragment = quote(str(reply["code"]), safe="")
    return [f"http://{f'[{h}]' if ':' in h else h}:{port}/control#code={fragment}"
            for h in hosts]


def print_desk(reply: dict[str, Any], out: TextIO, addresses: list[str] | None = None,
               hostname: str | None = None, *, msg: Messages = LOG_TEXT) -> None:
    """The QR code of the first link (the first IP address: every phone opens it), then every
    link as text, and how long the code is good, in `msg`'s language."""
    import segno  # noqa: PLC0415 (only this command draws a QR code)

    links = desk_links(reply, local_addresses() if addresses is None else addresses,
                       socket.gethostname() if hostname is None else hostname)
    minutes = max(1, round(float(reply["expires_s"]) / 60))
    print(msg("cli.desk.scan"), file=out)
    segno.make(links[0], error="m").terminal(out=out, compact=True)
    print(msg("cli.desk.or_open"), file=out)
    for link in links:
        print(f"  {link}", file=out)
    print(msg("cli.desk.expires", minutes=minutes), file=out)


def format_devices(devices: list[dict[str, Any]], *, msg: Messages = LOG_TEXT) -> str:
    """`timerctl desk --list`: one paired device a line, paired longest ago first."""
    if not devices:
        return msg("cli.desk.none_paired")
    rows = [tuple(msg(f"cli.desk.col.{k}") for k in ("id", "paired", "used", "from", "browser"))]
    rows += [(str(d["id"]), _when(d.get("paired")), _when(d.get("last_used")),
              str(d.get("address") or "-"), str(d.get("label") or "-")) for d in devices]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
                     for row in rows)


def _when(wall: Any) -> str:
    """A wall time as local date and minute; "-" for none."""
    if not isinstance(wall, int | float):
        return "-"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(wall))
