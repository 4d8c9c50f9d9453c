"""`timerctl desk`: pair a phone with the score desk by one scan (issue 31).

It prints the desk's address with the token (`web.token`) as a QR code in the terminal and as
text, once per address of the Pi (its IPv4 addresses, then its `.local` name, which phones
that know mDNS resolve), e.g. `http://192.168.1.20:8080/control#token=...`. The token rides
in the fragment, which a browser never sends: it reaches neither the server's log nor a proxy.
Opening the link stores the token in that browser and drops it from the address bar
(timerd/web/control.js). The config is root:timerd 0640: whoever can read the token here may
use it anyway. Nothing is sent on the network: the addresses are the interfaces' own.
"""

from __future__ import annotations

import json
import socket
import subprocess
from typing import TextIO
from urllib.parse import quote

from timerd.config.sections import WebConfig
from timerd.i18n import LOG_TEXT, Messages


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


def desk_links(web: WebConfig, addresses: list[str], hostname: str) -> list[str]:
    """The desk's address with the token, for each of `addresses` and `hostname.local`."""
    control = web.control_address()
    host, port = control if control else (web.host, web.port)
    hosts = ([host] if host not in ("0.0.0.0", "::", "") else
             [*addresses, f"{hostname.split('.', maxsplit=1)[0]}.local"])
    fragment = quote(web.token, safe="")
    return [f"http://{h}:{port}/control#token={fragment}" for h in hosts]


def problem(web: WebConfig, msg: Messages = LOG_TEXT) -> str | None:
    """Why there is no link a phone can open (the config's problem, in its words), or None."""
    control = web.control_address()
    if not web.enabled:
        return msg("cli.desk.web_off")
    if not web.token:
        return msg("cli.desk.no_token")
    if control and control[0] in ("127.0.0.1", "::1", "localhost"):
        return msg("cli.desk.pi_only", control=web.control)
    return None


def print_desk(web: WebConfig, out: TextIO, msg: Messages = LOG_TEXT,
               addresses: list[str] | None = None, hostname: str | None = None) -> None:
    """The QR code of the first link (the first IP address: every phone opens it), then every
    link as text, in `msg`'s language."""
    import segno  # noqa: PLC0415 (only this command draws a QR code)

    links = desk_links(web, local_addresses() if addresses is None else addresses,
                       socket.gethostname() if hostname is None else hostname)
    print(msg("cli.desk.scan"), file=out)
    segno.make(links[0], error="m").terminal(out=out, compact=True)
    print(msg("cli.desk.or_open"), file=out)
    for link in links:
        print(f"  {link}", file=out)
