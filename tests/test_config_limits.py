"""Config and profile files that would break a match are refused before anything starts
(issue 13 item 9): NaN and infinity, numbers past any rule, booleans for numbers, files that
are not UTF-8 or too large. Each gives one clear line naming the file and the key, and exit 2.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from timerd import cli, config
from timerd.config import profiles
from timerd.config.schema import MAX_FILE_BYTES, MAX_PROBLEMS, SchemaError
from timerd.core.profile import Profile

ROOT = Path(__file__).resolve().parents[1]


def float_keys(tp: Any, path: str) -> Iterator[str]:
    """The key path of every number of seconds (or other float) under the dataclass `tp`,
    found from its type hints so that a key added later is covered too."""
    for f in dataclasses.fields(tp):
        hint = typing.get_type_hints(tp)[f.name]
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        key = f"{path}.{f.name}" if path else f.name
        origin = typing.get_origin(hint)
        if hint is float or (origin in (typing.Union, types.UnionType) and args == [float]):
            yield key
        elif origin is tuple:  # lists of tables are written out in PROFILE_SPECIAL
            yield from [f"{key}[0]"] if args[0] is float else []
        elif dataclasses.is_dataclass(hint) or (args and dataclasses.is_dataclass(args[0])):
            yield from float_keys(hint if dataclasses.is_dataclass(hint) else args[0], key)


CONFIG_FLOATS = [*float_keys(config.Config, ""),
                 "signals.final.pattern_s[0]", "signals.final.gap_s", "signals.final.volume"]
#: Numbers inside lists and tables of a profile, written out; the others are found.
PROFILE_SPECIAL = {
    "penalties.kinds.minor.duration_s": "[penalties]\nkinds.minor = {{ duration_s = {} }}",
    "signals[0].remaining_s": 'signals = [{{ signal = "interval", remaining_s = {} }}]',
    "horn.final[0]": "[horn]\nfinal = [{}]",
}
PROFILE_FLOATS = [*(k for k in float_keys(Profile, "") if not k.startswith("penalties.")),
                  *PROFILE_SPECIAL]


def toml_assignment(key: str, value: str) -> str:
    """`key = value` as TOML, `pattern_s[0]` as a one-item list, a section as a table."""
    section, _, leaf = key.rpartition(".")
    line = (f"{leaf.removesuffix('[0]')} = [{value}]" if leaf.endswith("[0]")
            else f"{leaf} = {value}")
    return f"[{section}]\n{line}" if section else line


def test_every_number_key_is_found() -> None:
    assert {"gpio.long_press_s", "gpio.debounce_ms", "serial.keepalive_s",
            "hall.max_offset_ms", "state.resume_within_s"} <= set(CONFIG_FLOATS)
    assert {"period_s", "overtime.length_s", "intermission.warning_s", "timeouts.length_s",
            "line_change.stage_s", "goalie_change_s", "forfeit_window_s"} <= set(PROFILE_FLOATS)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
@pytest.mark.parametrize("key", CONFIG_FLOATS)
def test_nan_and_infinity_are_refused_in_every_config_number(tmp_path: Path, key: str,
                                                            value: str) -> None:
    path = tmp_path / "timerd.toml"
    path.write_text(toml_assignment(key, value) + "\n")
    with pytest.raises(SchemaError) as err:
        config.load(path)
    assert err.value.problems == [
        f"config file {path}: {key}: expected a finite number, got {value}"]


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
@pytest.mark.parametrize("key", PROFILE_FLOATS)
def test_nan_and_infinity_are_refused_in_every_profile_number(tmp_path: Path, key: str,
                                                             value: str) -> None:
    text = PROFILE_SPECIAL[key].format(value) if key in PROFILE_SPECIAL \
        else toml_assignment(key, value)
    path = tmp_path / "p.toml"
    path.write_text(f'name = "x"\nithf_conformant = false\n{text}\n')
    with pytest.raises(SchemaError) as err:
        profiles.load(str(path))
    assert f"profile file {path}: {key}: expected a finite number, got {value}" in \
        err.value.problems


@pytest.mark.parametrize(("option", "problem"), [
    ("serial.stop_bits=true", "serial.stop_bits: true is not one of 1, 2"),
    ("serial.stop_bits=1.0", "serial.stop_bits: 1.0 is not one of 1, 2"),
    ("serial.data_bits=true", "serial.data_bits: true is not one of 5, 6, 7, 8"),
    ("serial.baud=true", "serial.baud: expected a whole number, got true"),
    ("gpio.long_press_s=true", "gpio.long_press_s: expected a number, got true"),
    ("gpio.reset_pin=false", "gpio.reset_pin: expected a whole number, got false"),
    ("signals.final.pattern_s=[3600.0]", "signals.final.pattern_s = [3600]: at most 31 entries "
     "and 30 s in all (a signal must end before the next one can fall due, ITHF 4.4)"),
    (f"signals.interval.pattern_s={[0.1] * 41}", "signals.interval.pattern_s = [0.1, 0.1, 0.1, "
     "0.1, 0.1, 0.1, 0.1, 0.1, ...]: at most 31 entries and 30 s in all"),
    ("signals.interval.gap_s=60", "signals.interval.gap_s = 60: at most 10 s (the pause"),
    ("gpio.long_press_s=1e300", "gpio.long_press_s = 1e+300: at most 10 s"),
    ("gpio.debounce_ms=5000", "gpio.debounce_ms = 5000: at most 200 ms"),
    ("serial.baud=100000000", "serial.baud = 100000000: at most 4000000 (no USB"),
    ("serial.keepalive_s=1e9", "serial.keepalive_s = 1e+09: at most 60 s"),
    ("state.resume_within_s=1e12", "state.resume_within_s = 1e+12: at most 604800 s"),
    ("hall.heartbeat_s=86400", "hall.heartbeat_s = 86400: at most 3600 s"),
    ("web.idle_timeout_s=1e6", "web.idle_timeout_s = 1e+06: at most 3600 s"),
])
def test_booleans_are_not_numbers_and_numbers_have_an_upper_bound(option: str,
                                                                  problem: str) -> None:
    """One line each; a bound's line ends with its reason, in brackets."""
    with pytest.raises(SchemaError) as err:
        config.load(None, [option])
    assert len(err.value.problems) == 1
    assert err.value.problems[0].startswith(problem)
    assert err.value.problems[0].endswith(")") == ("at most" in problem)


@pytest.mark.parametrize(("profile", "problem"), [
    ('signals = [{ signal = "interval", remaining_s = 60, beeps = 100000000 }]',
     "signals[0].beeps = 100000000: at most 20 (ITHF 4.4"),
    ("period_s = 36000", "period_s = 36000: at most 3600 s (no period"),
    ("periods = 1000", "periods = 1000: at most 9 (ISBHF 410"),
    ("forfeit_window_s = 1e9", "forfeit_window_s = 1e+09: at most 3600 s"),
    ("forfeit_score = [0, 1000]", "forfeit_score = [0, 1000]: each from 0 to 99"),
    ("walkout_award = 100", "walkout_award = 100: at most 99"),
    ("goalie_change_s = 1e9", "goalie_change_s = 1e+09: at most 3600 s"),
    ("horn.final = [1e6]", "horn.final = [1e+06]: at most 31 entries and 30 s in all"),
    ("timeouts = { per_team = 1000 }", "timeouts.per_team = 1000: at most 20 (ISBHF 412"),
    ("overtime = { shootout_rounds = 100000, length_s = 60 }",
     "overtime.shootout_rounds = 100000: at most 20 (ISBHF 414b"),
    ("penalties = { max_running = 1000 }", "penalties.max_running = 1000: at most 20"),
    ("line_change = { stages = " + str(["x"] * 11) + " }",
     "line_change.stages: at most 10 stages (ISBHF 404b"),
    ('name = "' + "x" * 100 + '"', "name = 'xxxx"),
])
def test_profile_numbers_and_counts_have_an_upper_bound(tmp_path: Path, profile: str,
                                                        problem: str) -> None:
    path = tmp_path / "p.toml"
    name = "" if profile.startswith("name") else 'name = "x"\n'
    path.write_text(f"{name}ithf_conformant = false\n{profile}\n")
    with pytest.raises(SchemaError) as err:
        profiles.load(str(path))
    assert len(err.value.problems) == 1
    assert err.value.problems[0].startswith(f"profile file {path}: {problem}")


def test_a_non_utf8_config_names_the_file_and_the_line(tmp_path: Path) -> None:
    path = tmp_path / "timerd.toml"
    path.write_bytes(b'[table]\nname = "Tisch 3"\n# Gr\xfc\xdfe\n')
    with pytest.raises(SchemaError) as err:
        config.load(path)
    assert err.value.problems == [
        f"config file {path}: not UTF-8 text (byte 0xfc on line 3); save it as UTF-8"]


def test_a_non_utf8_profile_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_bytes(b'name = "Tr\xe4ning"\n')
    with pytest.raises(SchemaError) as err:
        config.load(None, [f"match.profile={str(path)!r}"])
    assert err.value.problems == [
        f"match.profile: profile file {path}: not UTF-8 text (byte 0xe4 on line 1); save it "
        "as UTF-8"]


@pytest.mark.parametrize("what", ["config", "profile"])
def test_files_over_1_mib_are_refused_unread(tmp_path: Path, what: str) -> None:
    path = tmp_path / "big.toml"
    path.write_text("# padding\n" * (MAX_FILE_BYTES // 10 + 1))
    load = config.load if what == "config" else (lambda p: profiles.load(str(p)))
    with pytest.raises(SchemaError) as err:
        load(path)
    assert err.value.problems == [f"{what} file {path}: larger than 1024 KiB; a config or "
                                  "profile is a few KiB (is it the right file?)"]


def test_an_endless_config_file_is_read_only_up_to_the_limit() -> None:
    with pytest.raises(SchemaError, match=r"config file /dev/zero: larger than 1024 KiB"):
        config.load(Path("/dev/zero"))


def test_deep_nesting_is_an_error_not_a_recursion_error(tmp_path: Path) -> None:
    path = tmp_path / "timerd.toml"
    path.write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(SchemaError) as err:
        config.load(path)
    assert err.value.problems == [f"config file {path}: nested too deeply to read"]


def test_a_list_of_many_bad_entries_gives_a_bounded_report(tmp_path: Path) -> None:
    path = tmp_path / "timerd.toml"
    path.write_text("[signals.final]\npattern_s = [" + '"x", ' * 10_000 + "]\n")
    with pytest.raises(SchemaError) as err:
        config.load(path)
    problems = err.value.problems
    assert len(problems) == MAX_PROBLEMS + 1
    assert problems[0] == (f"config file {path}: signals.final.pattern_s[0]: expected a number, "
                           "got 'x'")
    assert problems[-1] == f"... and {10_000 - MAX_PROBLEMS} more problems"


def test_a_key_set_by_an_option_is_not_blamed_on_the_file(tmp_path: Path) -> None:
    path = tmp_path / "timerd.toml"
    path.write_text("[gpio]\nlong_press_s = nan\ndebounce_ms = inf\n")
    with pytest.raises(SchemaError) as err:
        config.load(path, ["gpio.debounce_ms=-inf"])
    assert err.value.problems == [  # in the order of the section's keys
        "gpio.debounce_ms: expected a finite number, got -inf",
        f"config file {path}: gpio.long_press_s: expected a finite number, got nan",
    ]


# -- as a user meets them: `timerd run --config F` -------------------------------------------

def bad_profile(tmp_path: Path, body: bytes) -> Path:
    path = tmp_path / "profile.toml"
    path.write_bytes(b'name = "x"\nithf_conformant = false\n' + body)
    return path


#: Each defect named in issue 13 item 9: the config file, and the line its error must print.
CASES: dict[str, tuple[bytes, str]] = {
    "final pattern inf": (b"[signals.final]\npattern_s = [inf]\n",
                          "signals.final.pattern_s[0]: expected a finite number, got inf"),
    "long press nan": (b"[gpio]\nlong_press_s = nan\n",
                       "gpio.long_press_s: expected a finite number, got nan"),
    "stop bits true": (b"[serial]\nstop_bits = true\n",
                       "serial.stop_bits: true is not one of 1, 2"),
    "not utf-8": (b'[table]\nname = "Tisch \xfc"\n', "not UTF-8 text (byte 0xfc on line 2)"),
    "too large": (b"#" * (MAX_FILE_BYTES + 1), "larger than 1024 KiB"),
}
PROFILE_CASES: dict[str, tuple[bytes, str]] = {
    "beeps 100000000": (b'signals = [{ signal = "interval", remaining_s = 60, '
                        b"beeps = 100000000 }]\n", "signals[0].beeps = 100000000: at most 20"),
    "period inf": (b"period_s = inf\n", "period_s: expected a finite number, got inf"),
    "profile not utf-8": (b"description = 'Tr\xe4ning'\n", "not UTF-8 text"),
}


@pytest.mark.parametrize("case", [*CASES, *PROFILE_CASES])
def test_timerd_run_refuses_a_bad_config_before_anything_starts(tmp_path: Path,
                                                                case: str) -> None:
    path = tmp_path / "timerd.toml"
    if case in CASES:
        body, expected = CASES[case]
        path.write_bytes(body)
        where = f"config file {path}: "
    else:
        body, expected = PROFILE_CASES[case]
        profile = bad_profile(tmp_path, body)
        path.write_text(f"[match]\nprofile = {str(profile)!r}\n")
        where = f"match.profile: profile file {profile}: "
    result = subprocess.run(
        [sys.executable, "-m", "timerd", "run", "--simulate", "--config", str(path)],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
        text=True, timeout=60, check=False, stdin=subprocess.DEVNULL)
    assert result.returncode == cli.EXIT_USAGE == 2
    lines = result.stderr.splitlines()
    assert lines[0] == "timerd: the config has errors:"
    assert len(lines) == 2
    assert lines[1].startswith(f"  {where}{expected}")
    assert result.stdout == ""
    # Nothing started: no journal, no heartbeat, no control socket.
    for env in ("STATE_DIRECTORY", "RUNTIME_DIRECTORY"):
        assert not Path(os.environ[env]).exists()
