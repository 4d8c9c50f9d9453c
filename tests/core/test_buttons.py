"""Debounce and long press on raw, timestamped edges (our own logic: mock pins do not bounce)."""

from timerd.core.buttons import ButtonLogic, Gesture


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
