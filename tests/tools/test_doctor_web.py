"""`timerd doctor` names what writes the web's JSON (issue 44 item 8): orjson, or a warning
that the standard library does it, a push in about ten times orjson's time."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from timerd import config as config_mod
from timerd.tools import doctor
from timerd.tools.checks import WARN


def test_doctor_says_orjson_writes_the_web_json(tmp_path: Path) -> None:
    import orjson  # noqa: PLC0415 (the version the line must name)

    config = tmp_path / "timerd.toml"
    config.write_text("")
    out = io.StringIO()
    doctor.main(doctor.argparse.Namespace(overrides=[], profile=None, config=config), out)
    line = next(line for line in out.getvalue().splitlines() if line.split()[1:2] == ["web"])
    assert line.startswith("ok")
    assert f"orjson {orjson.__version__}" in line


def test_doctor_warns_where_orjson_is_missing_and_is_silent_with_the_web_off(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "orjson", None)  # import orjson raises ImportError
    [check] = doctor.check_web(config_mod.Config())
    assert check.level == WARN
    assert "pip install orjson" in check.message
    off = config_mod.load(None, ["web.enabled=false"])
    assert doctor.check_web(off) == []
