"""Profiles and config: every error at once, with key paths and suggestions."""

import pytest

from timerd import config
from timerd.config import profiles
from timerd.config.schema import SchemaError
from timerd.core.effects import SignalKind

TRAINING = """
name = "training"
ithf_conformant = {conformant}
period_s = 120
pre_signal_lead_s = 5
signals = [{{ signal = "last_30", remaining_s = 30 }}]
"""


def test_builtin_profiles_are_listed_and_load():
    assert {"ithf", "ithf-thirds"} <= set(profiles.builtin_names())
    for name in profiles.builtin_names():
        assert profiles.load(name).name == name


def test_ithf_4_4_a_lead_outside_15_to_30_s_is_refused(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(TRAINING.format(conformant="true"))
    with pytest.raises(SchemaError, match=r"ITHF 4\.4.*15 to 30 s"):
        profiles.load(str(path))


def test_a_training_profile_may_say_it_is_not_ithf_conformant(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(TRAINING.format(conformant="false"))
    assert profiles.load(str(path)).pre_signal_lead_s == 5


def test_profile_signal_outside_the_period_is_refused(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text('name = "x"\nsignals = [{ signal = "interval", remaining_s = 400 }]\n')
    with pytest.raises(SchemaError, match=r"signals\[0\]\.remaining_s = 400"):
        profiles.load(str(path))


def test_config_reports_every_error_with_key_paths_and_suggestions(tmp_path):
    path = tmp_path / "timerd.toml"
    path.write_text('[gpio]\nbuzer_pins = [5]\nlong_press_s = "long"\n[matc]\nprofile = "x"\n')
    with pytest.raises(SchemaError) as err:
        config.load(path, ["signals.intervall.gap_s=1", "match.profile=nope"])
    problems = err.value.problems
    assert any("gpio.buzer_pins: unknown key" in p and "did you mean `buzzer_pins`" in p
               for p in problems)
    assert f"config file {path}: gpio.long_press_s: expected a number, got 'long'" in problems
    assert any("`matc`" in p and "did you mean `match`" in p for p in problems)
    assert any(p.startswith("signals.intervall:") and "interval" in p for p in problems)
    assert any(p.startswith("match.profile:") and "nope" in p for p in problems)


def test_pin_conflicts_are_refused():
    with pytest.raises(SchemaError, match=r"gpio.reset_pin = 17: pin already used"):
        config.load(None, ["gpio.reset_pin=17"])


def test_overrides_layer_over_the_file(tmp_path):
    path = tmp_path / "timerd.toml"
    path.write_text('[match]\nprofile = "ithf-thirds"\n[gpio]\nbuzzer_pins = [18, 2]\n')
    cfg = config.load(path, ['gpio.led_paused_pin="none"', "signals.interval.gap_s=0.5"])
    assert cfg.match.profile == "ithf-thirds"
    assert cfg.gpio.buzzer_pins == (18, 2)
    assert cfg.gpio.led_paused_pin is None
    assert cfg.signals[SignalKind.INTERVAL].gap_s == 0.5
    assert cfg.signals[SignalKind.FINAL].pattern_s == (2.5,)
    assert 'profile = "ithf-thirds"' in cfg.to_toml()


# -- issue 28 item 5: ITHF 4.4 checked exactly for an ITHF-conformant profile ---------------

ITHF_SIGNALS = """
name = "mine"
extends = "ithf"
signals = [{signals}]
"""
MINUTES = ('{ signal = "interval", remaining_s = 240, beeps = 4 }, '
           '{ signal = "interval", remaining_s = 180, beeps = 3 }, '
           '{ signal = "interval", remaining_s = 120, beeps = 2 }, '
           '{ signal = "interval", remaining_s = 60, beeps = 1 }')


def ithf_problems(tmp_path, signals: str) -> str:
    path = tmp_path / "mine.toml"
    path.write_text(ITHF_SIGNALS.format(signals=signals))
    with pytest.raises(SchemaError) as refused:
        profiles.load(str(path))
    return str(refused.value)


@pytest.mark.parametrize("left", [10, 45])
def test_ithf_4_4_a_last_30_cue_elsewhere_than_30_s_left_is_refused(tmp_path, left):
    """Old code: accepted, and the daemon ran a 0:10 cue as `last_30`."""
    told = ithf_problems(tmp_path, f'{MINUTES}, {{ signal = "last_30", remaining_s = {left} }}')
    assert f"signals[4] last_30 at 0:{left:02d} left: ITHF 4.4" in told


def test_ithf_4_4_minute_signals_have_as_many_beeps_as_minutes_left(tmp_path):
    """Old code: four one-beep minute signals were accepted."""
    one_beep = MINUTES.replace("beeps = 4", "beeps = 1").replace("beeps = 3", "beeps = 1") \
        .replace("beeps = 2", "beeps = 1")
    told = ithf_problems(tmp_path, f'{one_beep}, {{ signal = "last_30", remaining_s = 30 }}')
    assert "signals[0] interval at 4:00 left has 1 beep(s): ITHF 4.4" in told
    assert "signals[2] interval at 2:00 left has 1 beep(s)" in told
    assert "signals[3]" not in told  # one minute left: one beep is right


def test_ithf_4_4_intervals_are_at_thirds_or_every_minute(tmp_path):
    """Old code: a single interval at 2:30 was accepted."""
    told = ithf_problems(tmp_path, '{ signal = "interval", remaining_s = 150, beeps = 2 }, '
                                   '{ signal = "last_30", remaining_s = 30 }')
    assert ("the interval signals (at 2:30 left) are neither at the thirds of the period "
            "(3:20, 1:40 left) nor at every whole minute left") in told
    assert "ITHF 4.4" in told


def test_ithf_4_4_the_built_in_ithf_profiles_conform():
    for name in ("ithf", "ithf-thirds", "ithf-playoff"):
        assert profiles.load(name).ithf_conformant


# -- issue 42 item 3: ITHF 4.1 checked for an ITHF-conformant profile ------------------------

ITHF_LENGTH = """
name = "mine"
extends = "ithf"
{length}
signals = [{{ signal = "last_30", remaining_s = 30 }}, {{ signal = "interval", remaining_s = {a} }},
           {{ signal = "interval", remaining_s = {b} }}]
"""


@pytest.mark.parametrize(("length", "a", "b", "why"), [
    ("period_s = 600", 400, 200, "period_s = 600: ITHF 4.1 says a match lasts five minutes"),
    ("periods = 2\nperiod_s = 150", 100, 50, "periods = 2: ITHF 4.1 plays a match as one period"),
])
def test_ithf_4_1_a_match_other_than_one_period_of_300_s_is_refused(tmp_path, length, a, b, why):
    """Old code: `ithf_conformant = true` accepted a 10:00 match and two periods of 2:30."""
    path = tmp_path / "mine.toml"
    path.write_text(ITHF_LENGTH.format(length=length, a=a, b=b))
    with pytest.raises(SchemaError) as refused:
        profiles.load(str(path))
    assert why in str(refused.value)
    assert "ithf_conformant = false" in str(refused.value)  # the way out


def test_ithf_4_1_a_training_profile_may_play_any_length(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(ITHF_LENGTH.format(length="ithf_conformant = false\nperiod_s = 600",
                                       a=400, b=200))
    assert profiles.load(str(path)).period_s == 600
