"""Config drop-ins (issue 41 item 5): `*.toml` in the directory beside the config file named
as the file with `.d` for `.toml`, merged key by key after the file, in name order, before
`-o`; a problem names the file that wrote the key. `timerd hall secure`'s login file is one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from timerd import config
from timerd.config.schema import SchemaError


def test_a_login_drop_in_adds_to_a_config_that_has_a_hall_section(tmp_path: Path) -> None:
    file = tmp_path / "timerd.toml"
    file.write_text('[hall]\nenabled = true\nhall = "main"\nheartbeat_s = 2\n')
    (tmp_path / "timerd.d").mkdir()
    (tmp_path / "timerd.d" / "hall-login.toml").write_text(
        '[hall]\nhost = "desk.local"\nport = 8883\nusername = "07"\npassword = "pw"\n'
        'table = "07"\n')
    (tmp_path / "timerd.d" / "zz-late.toml").write_text('[hall]\nport = 1884\n')
    (tmp_path / "timerd.d" / "notes.txt").write_text("not a drop-in: [[[")
    loaded = config.load(file, ['hall.heartbeat_s=3'])
    hall = loaded.hall
    assert (hall.enabled, hall.hall, hall.host, hall.port, hall.username, hall.table) == (
        True, "main", "desk.local", 1884, "07", "07")  # later drop-in wins, in name order
    assert hall.heartbeat_s == 3  # -o after every file


def test_a_bad_key_in_a_drop_in_is_reported_with_the_drop_ins_name(tmp_path: Path) -> None:
    file = tmp_path / "table.toml"
    file.write_text('[hall]\nusername = "07"\n')
    (tmp_path / "table.d").mkdir()
    drop_in = tmp_path / "table.d" / "login.toml"
    drop_in.write_text("[hall]\nport = 70000\n")
    with pytest.raises(SchemaError) as caught:
        config.load(file)
    assert caught.value.problems == [
        f"config file {drop_in}: hall.port = 70000: a TCP port is 1 to 65535"]
