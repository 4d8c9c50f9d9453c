"""Issue 31: `timerctl desk` pairs a phone by one scan: the desk's link with the token as a QR
code in the terminal and as text, for the Pi's IP addresses and its `.local` name."""

from __future__ import annotations

from pathlib import Path

import pytest
import segno

from timerd import cli
from timerd.config import paths
from timerd.config.sections import WebConfig
from timerd.tools import desk_link

TOKEN = "Xq3_vT9-kLm2Pz8RwYb4Nc7Hd1Jf6Gs0Ae5Uo"  # 38 characters, as the installer's are URL-safe


def qr_modules(text: str) -> list[list[bool]]:
    """The QR code segno drew in the terminal (compact: a character is two rows of modules,
    the light ones as blocks) back as rows of dark modules, the quiet zone left off."""
    top = {"█": False, " ": True, "▀": False, "▄": True}
    bottom = {"█": False, " ": True, "▀": True, "▄": False}
    lines = [line for line in text.splitlines() if line and set(line) <= set(top)]
    rows = [r for line in lines for r in ([top[c] for c in line], [bottom[c] for c in line])
            if not all(r)]  # an odd count of rows: the last character's lower half is none
    dark = [i for i, row in enumerate(rows) if any(row)]
    cols = [j for row in rows for j, d in enumerate(row) if d]
    return [row[min(cols):max(cols) + 1] for row in rows[dark[0]:dark[-1] + 1]]


def test_the_desk_link_carries_the_token_for_each_address_and_the_local_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "timerd.toml"
    config.write_text(f'[web]\nport = 8081\ntoken = "{TOKEN}"\n')
    monkeypatch.setattr(paths, "SYSTEM_CONFIG", config)
    monkeypatch.setattr(desk_link, "local_addresses", lambda: ["192.168.1.20", "10.0.0.7"])
    monkeypatch.setattr(desk_link.socket, "gethostname", lambda: "table3")
    assert cli.timerctl(["desk"]) == 0
    out = capsys.readouterr().out
    links = [f"http://{h}:8081/control#token={TOKEN}"
             for h in ("192.168.1.20", "10.0.0.7", "table3.local")]
    assert [line.strip() for line in out.splitlines() if "://" in line] == links
    # The QR code is the first link's, module for module (what a phone's camera reads).
    expected = segno.make(links[0], error="m").matrix
    assert qr_modules(out) == [[bool(m) for m in row] for row in expected]


def test_a_token_with_reserved_characters_is_escaped_in_the_link() -> None:
    web = WebConfig(token="a#b&c=d%e")
    assert desk_link.desk_links(web, ["192.168.1.20"], "pi.lan") == [
        "http://192.168.1.20:8080/control#token=a%23b%26c%3Dd%25e",
        "http://pi.local:8080/control#token=a%23b%26c%3Dd%25e"]
    # Control on a listener of its own: its address, not the scoreboard's.
    web = WebConfig(token="t" * 32, control="192.168.1.20:8443")
    assert desk_link.desk_links(web, ["10.0.0.7"], "pi") == [
        f"http://192.168.1.20:8443/control#token={'t' * 32}"]


@pytest.mark.parametrize(("web", "words"), [
    (WebConfig(), "web.token"),
    (WebConfig(enabled=False, token="t" * 32), "enabled = false"),
    (WebConfig(token="t" * 32, control="127.0.0.1:8081"), "only on the Pi"),
])
def test_no_link_is_given_where_a_phone_could_not_use_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        web: WebConfig, words: str) -> None:
    problem = desk_link.problem(web)
    assert problem is not None
    assert words in problem
    config = tmp_path / "timerd.toml"
    config.write_text("")  # no token at all: what a config from before issue 31 has
    monkeypatch.setattr(paths, "SYSTEM_CONFIG", config)
    assert cli.timerctl(["desk"]) == cli.EXIT_USAGE
    assert "web.token" in capsys.readouterr().err


def test_the_machines_own_addresses_are_read_without_any_traffic() -> None:
    addresses = desk_link.local_addresses()
    assert all(a.count(".") == 3 and not a.startswith("127.") for a in addresses)
