"""`timerctl status` shows ball hockey's timeouts, penalties and stoppage countdowns."""

from __future__ import annotations

import io

from timerd.adapters.terminal import TerminalDisplay, status_line
from timerd.cli import format_status
from timerd.config import profiles
from timerd.core.match import Match
from timerd.i18n import LANGUAGES, Messages
from timerd.service import Service


def test_status_lines_for_timeouts_penalties_and_countdowns() -> None:
    match = Match(profiles.load("isbhf"))
    match.handle(match.parse("start"), 0.0)
    match.handle(match.parse("stop"), 10.0)
    for player in ("17", "4", "5"):
        match.handle(match.parse("penalty", "home", "minor", player), 11.0)
    match.handle(match.parse("timeout", "away"), 12.0)
    match.handle(match.parse("linechange"), 12.0)
    match.handle(match.parse("goalie-change", "home"), 13.0)
    status = match.status(14.0).to_dict()
    lines = format_status(status, Messages("en")).splitlines()
    assert lines[-6:] == [
        "timeouts  Home 1 left, Away 0 left (running 0:28)",
        "penalty 1 Home #17 minor 2:00",
        "penalty 2 Home #4 minor 2:00",
        "penalty 3 Home #5 minor 2:00 (waiting)",
        "line change visitors (1/3) 3.0",
        "goalie change Home 9:59"]
    # The same lines in Slovak, with the ISBHF rulebook's terms (menší trest, oddychový čas).
    assert format_status(status, Messages("sk")).splitlines()[-6:] == [
        "oddych. č. Domáci ešte 1, Hostia ešte 0 (beží 0:28)",
        "trest 1 Domáci #17 menší trest 2:00",
        "trest 2 Domáci #4 menší trest 2:00",
        "trest 3 Domáci #5 menší trest 2:00 (čaká)",
        "striedanie hostia (1/3) 3.0",
        "striedanie brankára Domáci 9:59"]


def test_no_ball_hockey_lines_for_table_hockey() -> None:
    match = Match(profiles.load("ithf"))
    match.handle(match.parse("start"), 0.0)
    text = format_status(match.status(30.0).to_dict(), Messages("en"))
    assert "timeouts" not in text
    assert "penalty" not in text


def test_the_status_line_keeps_the_countdowns_at_80_columns_in_every_language() -> None:
    """Issue 18 item 5: with long names, a timeout and a line change running in a stoppage,
    the line fits 80 columns and shows both countdowns whole; what gives way is the last
    signal, then the names. Net time reads as the whistle's stop (ISBHF 407)."""
    match = Match(profiles.load("isbhf"))
    match.handle(match.parse("teams", "Jana Novak-Kovač", "Peter Horvat"), 0.0)
    match.handle(match.parse("start"), 0.0)
    match.handle(match.parse("stop"), 10.0)
    match.handle(match.parse("timeout", "away"), 12.0)
    match.handle(match.parse("linechange"), 12.0)
    status = match.status(14.0)
    for language in LANGUAGES:
        msg = Messages(language)
        line = status_line(status, msg, 80, stop_clock=True)
        assert len(line) <= 79, line
        assert msg("term.timeout", side=msg.side("away"), time="0:28") in line, line
        assert msg("term.line_change", time="3.0") in line, line
        assert msg("term.stopped", s=4) in line, line
    quiet = Match(profiles.load("isbhf"))  # no countdowns: the names and the last signal fit
    quiet.handle(quiet.parse("teams", "Jana Novak-Kovač", "Peter Horvat"), 0.0)
    quiet.handle(quiet.parse("start"), 0.0)
    assert status_line(quiet.status(9.0), Messages("en"), 80) == \
        "14:51 P1/3  Jana Novak-… 0:0 Peter Horvat  running  last: START"


def test_timerctl_says_time_stopped_under_net_time() -> None:
    match = Match(profiles.load("isbhf"))
    match.handle(match.parse("start"), 0.0)
    match.handle(match.parse("stop"), 10.0)
    status = match.status(14.0).to_dict() | {"clock_rule": "stop"}
    lines = format_status(status, Messages("en")).splitlines()
    assert "phase     time stopped" in lines
    assert "stopped   4.0 s (this stoppage)" in lines
    assert "stoppages 1, 4.0 s in all" in lines
    ithf = format_status(status | {"clock_rule": "running"}, Messages("en")).splitlines()
    assert "phase     paused" in ithf


def test_the_key_help_names_only_the_keys_of_the_profiles_commands() -> None:
    """Issue 18 item 5: ball hockey has no faceoff or passive-play key (play restarts with
    START, ISBHF 401), table hockey no line-change key (ISBHF 404b)."""
    def keys(profile: str, language: str = "en") -> str:
        service = Service(Match(profiles.load(profile)))
        return TerminalDisplay(io.StringIO(), Messages(language), service).keys()

    assert keys("ithf") == ("Keys: [space] start/pause  [r] reset (held)  [h/a] goal "
                            "home/away  [f] faceoff  [u] undo (held)  [1/2] passive home/away"
                            "  [?] keys  [q] quit")
    assert keys("isbhf") == ("Keys: [space] start/pause  [r] reset (held)  [h/a] goal "
                             "home/away  [u] undo (held)  [l] line change  [?] keys  [q] quit")
    assert "vhadzovanie" not in keys("isbhf", "sk")
    assert "striedanie" in keys("isbhf", "sk")


def test_status_columns_align_and_every_word_is_translated_in_every_language() -> None:
    """Issue 31 item 6: the values of `timerctl status`'s rows start in one column in every
    language (Slovenian's "ustavljeno", Slovak's "oddych. č." are wider than the old
    column), the speaker's state is a word of the language ("off"), and a running timeout
    says whose it is by team name."""
    match = Match(profiles.load("isbhf"))
    match.handle(match.parse("teams", "HK Olimpija", "HC Košice", "2"), 0.0)
    match.handle(match.parse("start"), 0.0)
    match.handle(match.parse("stop"), 10.0)
    match.handle(match.parse("timeout", "away"), 12.0)
    status = match.status(14.0).to_dict() | {"speaker": "off", "speaker_muted": False,
                                             "clock_rule": "stop",
                                             "buzzer_muted": False, "version": "1.0"}
    for language in LANGUAGES:
        msg = Messages(language)
        lines = format_status(status, msg).splitlines()
        labels = {msg(k) for k in ("st.profile", "st.phase", "st.clock", "st.version",
                                   "st.teams", "st.stopped", "st.last", "st.score",
                                   "st.timeouts", "st.sound")}
        rows = [line for line in lines if any(line.startswith(f"{label} ") for label in labels)]
        assert len(rows) == len(labels), (language, lines)
        starts = {len(row) - len(row[len(next(la for la in labels if row.startswith(la))):]
                                  .lstrip()) for row in rows}
        assert len(starts) == 1, (language, lines)
        sound = next(row for row in rows if row.startswith(msg("st.sound")))
        assert sound.endswith(msg("st.speaker", state=msg("st.speaker.off"))), sound
        if language != "en":
            assert msg("st.speaker.off") != "off"
        timeouts = next(row for row in rows if row.startswith(msg("st.timeouts")))
        assert msg("st.timeout_left", side="HC Košice", n=0) in timeouts, timeouts
