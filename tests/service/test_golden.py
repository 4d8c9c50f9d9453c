"""Golden traces: scripted matches on the real service (virtual time) and the exact signals and
states they must give, checked in as data in tests/golden/. A change that moves, adds or drops
a signal shows up here."""

import pytest
from conftest import GOLDEN, load_golden, play

KEYS = ("t", "type", "state", "signal", "beeps", "remaining_s")


@pytest.mark.parametrize("name", sorted(p.stem for p in GOLDEN.glob("*.json")))
def test_golden_trace(name):
    golden = load_golden(name)
    recorder = play(golden["profile"], [tuple(s) for s in golden["script"]], golden["until"])
    got = [{k: v for k, v in e.items() if k in KEYS and not (k == "remaining_s"
                                                             and e["type"] == "state")}
           for e in recorder.events("signal", "state")]
    assert got == golden["expected"]


def test_the_golden_traces_cover_the_foundation_cases():
    names = {p.stem for p in GOLDEN.glob("*.json")}
    assert {"ithf", "ithf-thirds", "ithf-two-interruptions"} <= names
