"""The views that show the clock take the core's clock face: in a sudden-death overtime
`systemctl status` and the desk say how long it has been played, not "0:00 left" (issue 14)."""

from timerd.adapters.systemd import status_text
from timerd.adapters.terminal import event_line, status_line
from timerd.config import profiles
from timerd.core.match import Match
from timerd.i18n import Messages
from timerd.tools.hall_desk import shown_time


def test_systemd_and_the_desk_show_a_sudden_death_overtime_counting_up() -> None:
    match = Match(profiles.load("ithf-playoff"))
    match.handle(match.parse("start"), 0.0)
    match.poll(421.75)  # the final at 320, a 30-s break, overtime from 350
    status = match.status(421.75)
    assert status_text(status) == "ithf-playoff: running, overtime 1:11 played"
    sent = {**status.to_dict(), "wall": 1000.0}
    assert shown_time(sent, 1002.5) == "OT +1:14"  # counted on from when it was sent


def test_the_desk_counts_a_break_down_by_itself() -> None:
    match = Match(profiles.load("ithf-playoff"))
    match.handle(match.parse("start"), 0.0)
    match.poll(330.0)
    sent = {**match.status(330.0).to_dict(), "wall": 1000.0}
    assert shown_time(sent, 1005.0) == "0:15"


def test_the_terminal_tells_a_signal_in_sudden_death_by_the_time_played() -> None:
    """Its event line said "0:00  PAUSE" under a status line of "OT +1:11" (issue 32)."""
    match = Match(profiles.load("ithf-playoff"))
    match.handle(match.parse("start"), 0.0)
    match.poll(421.75)
    effects = match.handle(match.parse("pause"), 421.75)
    status = match.status(421.75)
    lines = [line for e in effects if (line := event_line(e, status, Messages())) is not None]
    assert lines == ["OT +1:11  PAUSE"]
    assert status_line(status).startswith("OT +1:11")
