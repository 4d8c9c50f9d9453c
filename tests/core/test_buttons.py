"""Debounce and long press on raw, timestamped edges (our own logic: mock pins do not bounce)."""

from typing import Any

import pytest

from timerd.core import rules
from timerd.core.buttons import Button, ButtonLogic, Chord, Gesture
from timerd.core.rule import RuleModule
from timerd.core.rules.rulings import Forfeit
from timerd.core.rules.scoring import Faceoff
from timerd.core.score import Side


def test_a_press_acts_on_its_first_edge():
    button = ButtonLogic(debounce_s=0.03)
    assert button.edge(True, 10.0) == [Gesture.PRESS]


def test_chatter_within_the_debounce_time_is_one_press():
    button = ButtonLogic(debounce_s=0.03)
    gestures = []
    for i in range(20):  # 20 edges 1 ms apart: a bouncing contact
        gestures += button.edge(i % 2 == 0, 10.0 + i * 0.001)
    gestures += button.poll(10.5)
    assert gestures == [Gesture.PRESS]


def test_a_burst_that_ends_released_reads_released_after_the_window():
    button = ButtonLogic(debounce_s=0.03)
    button.edge(True, 0.0)
    button.edge(False, 0.01)
    assert button.pressed
    assert button.next_deadline() == 0.03
    button.poll(0.03)
    assert not button.pressed
    assert button.edge(True, 0.2) == [Gesture.PRESS]


def test_long_press_acts_only_when_held_long_enough():
    button = ButtonLogic(debounce_s=0.03, long_press_s=2.0)
    assert button.edge(True, 0.0) == []
    assert button.next_deadline() == 2.0
    assert button.poll(1.99) == []
    assert button.poll(2.0) == [Gesture.LONG_PRESS]
    assert button.poll(5.0) == []
    assert button.edge(False, 6.0) == []


def test_a_short_press_on_a_long_press_button_does_nothing_but_say_so():
    button = ButtonLogic(debounce_s=0.03, long_press_s=2.0)
    assert button.edge(True, 0.0) == []
    assert button.edge(False, 0.5) == [Gesture.SHORT]
    assert button.poll(3.0) == []


def test_a_chord_acts_once_after_both_buttons_were_held_together_for_its_time() -> None:
    chord = Chord(("reset", "goal_home"), 2.0, "forfeit away")
    assert not chord.update({"reset": True}, 10.0)
    assert not chord.swallows("reset")  # RESET alone is still RESET
    assert not chord.update({"reset": True, "goal_home": True}, 10.5)
    assert chord.swallows("reset")
    assert chord.swallows("goal_home")
    assert not chord.swallows("goal_away")
    assert chord.next_deadline() == 12.5
    assert not chord.update({"reset": True, "goal_home": True}, 12.4)
    assert chord.update({"reset": True, "goal_home": True}, 12.5)
    assert not chord.update({"reset": True, "goal_home": True}, 20.0)  # once per hold
    assert chord.next_deadline() is None


def test_a_chord_let_go_early_does_nothing_and_is_forgotten_at_the_next_press() -> None:
    chord = Chord(("reset", "goal_home"), 2.0, "forfeit away")
    chord.update({"reset": True, "goal_home": True}, 1.0)
    assert not chord.update({"reset": True, "goal_home": False}, 2.0)
    assert chord.next_deadline() is None
    assert chord.swallows("reset")  # RESET's release still belongs to the chord
    chord.update({}, 2.5)
    assert chord.swallows("reset")
    chord.update({"reset": True}, 5.0)  # a new hold of RESET alone
    assert not chord.swallows("reset")


def test_the_registry_gives_the_buttons_in_the_configs_order_and_refuses_a_name_twice(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The buttons are the phase machine's and each registered module's, in the order of the
    config's keys (issue 44 item 5); a second button of one name would share its config keys."""
    assert [b.name for b in rules.buttons()] == [
        "start_pause", "reset", "goal_home", "goal_away", "faceoff", "undo", "passive_home",
        "passive_away", "line_change"]
    assert [(c.buttons, c.command) for c in rules.chords()] == [
        (("reset", "goal_home"), Forfeit(Side.AWAY)), (("reset", "goal_away"), Forfeit(Side.HOME))]

    class Twice(RuleModule):
        name = "twice"
        buttons = (Button("goal_home", "Another GOAL button.", press=Faceoff()),)

    monkeypatch.setattr(rules, "REGISTERED", (*rules.REGISTERED, Twice))
    with pytest.raises(TypeError, match="buttons declared twice"):
        rules.buttons()


@pytest.mark.parametrize("wrong", [
    {"name": "Goal-Home", "press": Faceoff()},  # not a config key
    {"name": "x", "press": Faceoff(), "long_press": Faceoff()},  # which gesture?
    {"name": "x"},  # no command
    {"name": "x", "press": Faceoff(), "hint": "notice.hold_reset"},  # a hint for a tap
    {"name": "x", "press": Faceoff(), "meaning": ""},
])
def test_a_button_declared_wrong_is_refused(wrong: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="button"):
        Button(**{"meaning": "The X button.", **wrong})
