"""The serial display frame format: the documented example, the checksum, parsing display lines."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from timerd.adapters.serial_protocol import (
    MAX_LINE,
    BadLine,
    DisplayCommand,
    LineSplitter,
    checksum,
    flags,
    frame,
    parse_line,
    reply_frame,
    state_frame,
)
from timerd.config import profiles
from timerd.core.match import Match

DOC = Path(__file__).resolve().parents[2] / "docs" / "serial-protocol.md"

#: The example in docs/serial-protocol.md: second period of three, 1:23.4 left and running,
#: 3:2, penalties for an away player (4.25 s left) and home player 17 (71.3 s left), in the
#: status's order (running penalties, soonest end first).
DOC_EXAMPLE = "$TDS,1,running,1:24,R----,2,3,3,2,A=4.3;H17=1:12*2AE1"
DOC_STATUS: dict[str, Any] = {
    "phase": "running", "remaining_s": 83.4, "clock_running": True, "period": 2, "periods": 3,
    "score": {"home": 3, "away": 2}, "overtime": False,
    "penalties": [{"number": 2, "side": "away", "kind": "minor", "player": None,
                   "remaining_s": 4.25, "running": True},
                  {"number": 1, "side": "home", "kind": "minor", "player": "17",
                   "remaining_s": 71.3, "running": True}],
}
IDLE: dict[str, Any] = {"phase": "idle", "remaining_s": 300.0, "clock_running": False,
                        "period": 1, "periods": 1}


def crc16_ccitt_false(data: bytes) -> int:
    """The checksum bit by bit, as the doc defines it, independent of binascii."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def test_the_documented_example_frame() -> None:
    assert state_frame(DOC_STATUS) == DOC_EXAMPLE.encode() + b"\n"
    body = DOC_EXAMPLE[1:DOC_EXAMPLE.index("*")]
    assert crc16_ccitt_false(body.encode()) == 0x2AE1
    text = DOC.read_text()
    assert DOC_EXAMPLE in text
    assert f"The checksum `2AE1` is the CRC-16/CCITT-FALSE of\n`{body}`." in text


def test_every_frame_in_the_doc_has_a_right_checksum() -> None:
    frames = re.findall(r"^\$(TD[SCR],[^*\n]*)\*([0-9A-F]{4})$", DOC.read_text(), re.M)
    assert len(frames) >= 6
    for body, crc in frames:
        assert checksum(body.encode()) == crc, body


def test_checksum_is_crc16_ccitt_false() -> None:
    assert checksum(b"123456789") == "29B1"  # the catalogued check value of this CRC
    assert checksum(b"") == "FFFF"


@given(st.binary(max_size=200))
def test_checksum_matches_the_bitwise_definition(data: bytes) -> None:
    assert checksum(data) == f"{crc16_ccitt_false(data):04X}"


def test_defaults_when_other_parts_add_nothing() -> None:
    assert state_frame(IDLE) == b"$TDS,1,idle,5:00,-----,1,1,0,0,*C8DC\n"


@pytest.mark.parametrize(("extras", "fields"), [
    ({"score": "3:2"}, ["0", "0", ""]),  # not a mapping
    ({"score": {"home": True, "away": -4}}, ["0", "0", ""]),  # a bool is no score; clamped
    ({"score": {"home": 1234}}, ["999", "0", ""]),
    ({"penalties": "H7"}, ["0", "0", ""]),
    ({"penalties": [{"side": "left", "remaining_s": 5}, 7]}, ["0", "0", ""]),
    ({"penalties": [{"side": "home", "remaining_s": float("nan"), "player": "#12a,b",
                     "running": True}]},
     ["0", "0", "H12a=0:00"]),
    ({"penalties": [{"side": "home", "remaining_s": 120, "player": "7"}]},  # not known to run
     ["0", "0", ""]),
])
def test_extras_out_of_shape_are_defaulted(extras: dict[str, Any], fields: list[str]) -> None:
    line = state_frame({**IDLE, **extras}).decode()
    assert line.split("*")[0].split(",")[7:] == fields


def test_penalties_at_most_two_per_team_in_the_given_order() -> None:
    penalties = [{"side": side, "kind": "minor", "remaining_s": t, "player": n, "running": True}
                 for side, t, n in [("home", 120, 4), ("away", 30, 9), ("home", 100, 5),
                                    ("home", 80, 6), ("away", 9.85, 1)]]
    line = state_frame({**IDLE, "penalties": penalties}).decode()
    assert line.split("*")[0].split(",")[-1] == "H4=2:00;A9=0:30;H5=1:40;A1=9.9"


def test_the_clock_as_shown() -> None:
    def clock(remaining_s: float) -> str:
        return state_frame({**IDLE, "remaining_s": remaining_s}).decode().split(",")[3]

    assert [clock(t) for t in (300, 299.01, 10.5, 10.0, 9.85, 0.01, 0, -3, 7200)] == [
        "5:00", "5:00", "0:11", "0:10", "9.9", "0.1", "0:00", "0:00", "99:59"]


@pytest.mark.parametrize(("status", "expected"), [
    ({"phase": "running", "clock_running": True, "remaining_s": 31}, "R----"),
    ({"phase": "running", "clock_running": True, "remaining_s": 30}, "R-L--"),  # ITHF 4.4
    ({"phase": "paused", "clock_running": False, "remaining_s": 12}, "-PL--"),  # ITHF 10.1
    ({"phase": "finished", "clock_running": False, "remaining_s": 0}, "-----"),
    ({"phase": "running", "clock_running": True, "remaining_s": 200, "overtime": True},
     "R--O-"),  # ITHF 4.8
    ({"phase": "running", "clock_running": True, "remaining_s": 20, "overtime": True},
     "R-LO-"),  # ISBHF 411: a timed overtime has its last 30 s
    ({"phase": "running", "clock_running": True, "remaining_s": 0, "overtime": True,
      "count_up": True}, "R--O-"),  # ITHF 4.8: sudden death has no last 30 s
    ({"phase": "break", "clock_running": False, "remaining_s": 900, "start_in_s": 12,
      "break_kind": "intermission"}, "----I"),  # ISBHF 410
    ({"phase": "break", "clock_running": False, "remaining_s": 0, "start_in_s": 12,
      "break_kind": "overtime"}, "----I"),  # ITHF 4.8: the break before overtime
])
def test_phase_flags(status: dict[str, Any], expected: str) -> None:
    assert flags(status) == expected


def frame_fields(status: dict[str, Any]) -> list[str]:
    """A state frame's fields after the version: phase, clock, flags, ..., penalties."""
    return state_frame(status).decode().split("*")[0].split(",")[2:]


def test_ball_hockey_status_from_the_core() -> None:
    """The real status of an ISBHF match: running penalties are sent, a waiting one (its
    team already has `max_running` players off) is not; in the intermission the clock counts
    the intermission down and the I flag is set (ISBHF 410)."""
    isbhf = profiles.load("isbhf")
    assert isbhf.penalties is not None
    one_short = dataclasses.replace(  # a house rule: one player off at a time
        isbhf, penalties=dataclasses.replace(isbhf.penalties, max_running=1))
    match = Match(one_short)
    match.handle(match.parse("start"), 0.0)
    match.handle(match.parse("stop"), 10.0)  # the whistle, 10 s played
    match.handle(match.parse("penalty", "home", "minor", "17"), 12.0)
    match.handle(match.parse("penalty", "home", "minor", "4"), 13.0)  # waits for #17's place
    match.handle(match.parse("penalty", "away", "misconduct", "9"), 14.0)  # not short-handed: runs
    match.handle(match.parse("start"), 20.0)
    status = match.status(50.0).to_dict()  # 30 s of the penalties served
    assert [(p["player"], p["running"]) for p in status["penalties"]] == [
        ("17", True), ("9", True), ("4", False)]
    assert frame_fields(status) == ["running", "14:20", "R----", "1", "3", "0", "0",
                                    "H17=1:30;A9=9:30"]

    assert match.poll(910.0)  # 900 s played: the period ends, the intermission starts
    status = match.status(1000.0).to_dict()
    assert (status["phase"], status["break_kind"], status["period"]) == (
        "break", "intermission", 2)
    assert frame_fields(status)[:4] == ["break", "8:30", "----I", "2"]


def test_the_documented_intermission_frame_comes_from_a_real_match() -> None:
    match = Match(profiles.load("isbhf"))
    match.handle(match.parse("start"), 0.0)
    match.handle(match.parse("stop"), 850.0)  # the whistle with 0:50 left in the first period
    match.handle(match.parse("goal", "home"), 851.0)
    match.handle(match.parse("penalty", "away", "minor", "8"), 852.0)
    match.handle(match.parse("start"), 860.0)
    match.poll(910.0)  # the period's end: 50 s of the minor served, the intermission starts
    line = state_frame(match.status(1000.0).to_dict()).decode().rstrip("\n")
    assert line == "$TDS,1,break,8:30,----I,2,3,1,0,A8=1:10*7B5F"
    assert f"\n{line}\n" in DOC.read_text()


def test_a_sudden_death_overtime_counts_up() -> None:
    """ITHF 4.8: the clock field shows the overtime played, in whole seconds."""
    match = Match(profiles.load("ithf-playoff"))
    match.handle(match.parse("start"), 0.0)
    match.poll(425.6)  # the final at 320, a 30-s break, overtime from 350
    status = match.status(425.6).to_dict()
    assert frame_fields(status)[:3] == ["running", "1:15", "R--O-"]


def test_an_odd_phase_name_is_sent_as_unknown() -> None:
    assert b",unknown," in state_frame({**IDLE, "phase": "Half Time!"})


def test_worst_case_state_frame_fits_a_line() -> None:
    penalties = [{"side": side, "remaining_s": 5999, "player": "123"}
                 for side in ("home", "away", "home", "away")]
    line = state_frame({"phase": "x" * 24, "remaining_s": 10**9, "clock_running": True,
                        "period": 999, "periods": 999, "overtime": True,
                        "score": {"home": 999, "away": 999}, "penalties": penalties})
    assert len(line) <= MAX_LINE
    assert b"," + b"x" * 24 + b"," in line
    assert b",unknown," in state_frame({**IDLE, "phase": "x" * 25})  # at most 24 characters


def test_commands_and_replies() -> None:
    assert frame(["TDC", "1", "toggle"]) == b"$TDC,1,toggle*C15C\n"
    assert parse_line(b"$TDC,1,toggle*C15C") == DisplayCommand("toggle")
    assert parse_line(b"$TDC,1,toggle*c15c\r") == DisplayCommand("toggle")
    assert parse_line(b"\x00boot noise$TDC,1,goal,home*98E9") == DisplayCommand(
        "goal", ("home",))
    assert DisplayCommand("goal", ("home",)).request() == {"command": "goal", "args": ["home"]}
    assert reply_frame(True, "toggle") == b"$TDR,1,ok,toggle*7C48\n"
    assert reply_frame(False, "reset") == b"$TDR,1,no,reset*6036\n"


@pytest.mark.parametrize(("line", "why"), [
    (b"caf\xc3\xa9", "not ASCII"),
    (b"hello", "no frame start"),
    (b"$TDC,1,toggle", "no checksum"),
    (b"$TDC,1,toggle*C15D", "bad checksum"),
    (b"$TDC,1,toggle*C15C*", "bad checksum"),
    (frame(["TDS", "1", "idle"])[:-1], "unknown message type 'TDS'"),
    (frame(["TDC", "2", "toggle"])[:-1], "unsupported protocol version '2'"),
    (frame(["TDC"])[:-1], "unsupported protocol version ''"),
    (frame(["TDC", "1"])[:-1], "no command name"),
    (frame(["TDC", "1", "Toggle"])[:-1], "no command name"),
    (frame(["TDC", "1", "goal", "home team"])[:-1], "malformed argument"),
    (frame(["TDC", "1", "goal", ""])[:-1], "malformed argument"),
])
def test_bad_lines_say_why(line: bytes, why: str) -> None:
    with pytest.raises(BadLine, match=re.escape(why)):
        parse_line(line)


def test_line_splitter() -> None:
    splitter = LineSplitter(max_line=8)
    assert splitter.feed(b"ab") == []
    assert splitter.feed(b"c\nde\n") == [b"abc", b"de"]
    assert splitter.feed(b"1234567\n") == [b"1234567"]  # 8 bytes with the line feed: fits
    assert splitter.feed(b"12345678\n") == [None]
    assert splitter.feed(b"0123456789") == [None]  # reported once, when it grows too long
    assert splitter.feed(b"0123456789" * 5) == []  # the rest of the same line
    assert splitter.feed(b"tail\nok\n") == [b"ok"]


@given(st.lists(st.binary(max_size=300), max_size=20))
def test_line_splitter_never_holds_more_than_a_line(chunks: list[bytes]) -> None:
    splitter = LineSplitter()
    for chunk in chunks:
        for line in splitter.feed(chunk):
            assert line is None or (len(line) < MAX_LINE and b"\n" not in line)
        assert len(splitter._buffer) < MAX_LINE
