"""The annotated config reference (issue 30 item 13): generated from the config's sections and
their checks, shipped as docs/config.md and printed by `timerd config --annotated`; and one
example config per use, each valid."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from timerd import config as config_mod
from timerd.config import Config, SignalOutput
from timerd.config.reference import annotated, markdown, meanings

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "docs" / "examples"


REGENERATE = ("docs/config.md is out of date with timerd/config/sections.py; regenerate it: "
              "python -c \"from timerd.config.reference import markdown; "
              "open('docs/config.md', 'w').write(markdown())\"")


def test_docs_config_md_is_the_generated_reference() -> None:
    assert (ROOT / "docs" / "config.md").read_text() == markdown(), REGENERATE


def test_every_key_has_a_meaning() -> None:
    sections = [type(getattr(Config(), f.name)) for f in dataclasses.fields(Config)
                if f.name != "signals"] + [SignalOutput]
    missing = [f"{cls.__name__}.{f.name}" for cls in sections for f in dataclasses.fields(cls)
               if not meanings(cls).get(f.name)]
    assert missing == [], "give each key a `#:` comment above it in timerd/config/sections.py"


def test_the_bounds_are_the_checks_own_words() -> None:
    text = annotated(Config())
    block = text[text.index("[web]"):text.index("[ui]")]
    port = block[block.index("# The TCP port"):block.index("port = 8080")]
    assert "a whole number; default 8080; a TCP port is 1 to 65535 (0: any free port)" in (
        port.replace("\n# ", " "))
    assert "at most 40 printable characters on one line" in text  # table.name
    assert "BCM pins on the 40-pin header are 0 to 27" in text  # every pin


def _timerd(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "timerd", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=True)


def test_timerd_config_annotated_prints_a_valid_config_with_the_values_in_force(
        tmp_path: Path) -> None:
    empty = tmp_path / "empty.toml"
    empty.write_text("")
    assert _timerd("config", "--annotated", "--config", str(empty)).stdout == annotated(Config())
    mine = tmp_path / "mine.toml"
    mine.write_text('[table]\nname = "Table 7"\n[web]\ntoken = "s3cret-desk-token-0042"\n')
    out = _timerd("config", "--annotated", "--config", str(mine)).stdout
    assert 'name = "Table 7"' in out
    assert "s3cret-desk-token-0042" not in out
    assert 'token = "********"' in out
    # The output is itself a config: read back, it is the one in force (the secret masked).
    again = tmp_path / "again.toml"
    again.write_text(out.replace("********", "s3cret-desk-token-0042"))
    assert tomllib.loads(out)["table"]["name"] == "Table 7"
    assert config_mod.load(again, []) == config_mod.load(mine, [])


@pytest.mark.parametrize(("name", "check"), [
    ("club-table.toml", lambda c: c.match.profile == "ithf" and not c.hall.enabled),
    ("tournament-table.toml", lambda c: c.hall.enabled and c.web.token and c.hall.table),
    ("ball-hockey.toml", lambda c: c.match.profile == "isbhf" and c.serial.port
     and c.gpio.horn_pin is not None),
])
def test_each_example_config_loads_and_validates(name: str, check: object) -> None:
    config = config_mod.load(EXAMPLES / name, [])
    config.profile()  # its profile loads too
    assert callable(check)
    assert check(config)
