"""Hall mode's table side in this process, against a real mosquitto: commands from the broker,
the results outbox, the clock offset from chrony, and the missing extra."""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require, wired
from tests.hall_rig import Broker, Observer, mosquitto_path, wait_until
from timerd import cli, config
from timerd.adapters.hall.link import (
    ClockSync,
    HallLink,
    Outbox,
    parse_chrony_tracking,
    parse_timesync_status,
    read_clock_sync,
)
from timerd.adapters.hall.protocol import HallUnavailable, import_aiomqtt, table_of
from timerd.config import HallConfig, profiles
from timerd.config.schema import SchemaError
from timerd.core.effects import Phase
from timerd.core.match import Match
from timerd.service import Service
from timerd.wire import REPLY_FORMAT

#: A real mosquitto on loopback and real time: the e2e tier (generous margins).
pytestmark = pytest.mark.e2e

SAMPLE_RESULT = {"match_id": "20260528T100000Z-abc123", "home": "Ann", "away": "Bob",
                 "goals": [3, 1], "winner": "home"}


def hall_config(broker: Broker | None = None, **overrides: Any) -> HallConfig:
    values: dict[str, Any] = {"enabled": True, "host": "127.0.0.1", "hall": "hall",
                              "table": "t1", "reconnect_max_s": 0.05, "chronyc": "none",
                              "timedatectl": "none"}
    if broker is not None:
        values["port"] = broker.port
    values.update(overrides)
    return HallConfig(**values)


def service() -> Service:
    return Service(Match(profiles.load("ithf")))


# -- commands from the broker, handled without one ------------------------------------------

def test_malformed_unknown_and_foreign_commands_are_ignored_with_a_log_line(
        caplog: pytest.LogCaptureFixture) -> None:
    async def main() -> None:
        svc = service()
        link = HallLink(hall_config(), svc, Outbox(Path("/nonexistent")))
        caplog.set_level(logging.INFO, "timerd.hall")
        for payload in (b"{not json", b"\xff\xfe", b"[1, 2]", b'{"args": []}',
                        b'{"command": "self_destruct"}',
                        b'{"command": "start_round", "at": 1e12, "hall": "other"}'):
            link.on_message("timerd/hall/cmd", payload)
        assert svc.match.phase.value == "idle"
        assert list(link._events) == []  # nothing was answered: these are not for us

    asyncio.run(main())
    text = caplog.text
    # One line per kind per 30 s: the second malformed message is counted, not logged.
    assert text.count("malformed JSON") == 1
    assert 'expected {"command": NAME' in text
    assert "unknown command 'self_destruct'" in text
    assert "for hall 'other'" in text


def test_a_refused_or_bad_command_is_answered_and_the_match_is_untouched() -> None:
    async def main() -> list[dict[str, Any]]:
        svc = service()
        link = HallLink(hall_config(), svc, Outbox(Path("/nonexistent")))
        link.on_message("timerd/hall/cmd", b'{"command": "pause", "id": "p1"}')
        link.on_message("timerd/hall/cmd", b'{"command": "start_round", "at": "noon"}')
        link.on_message("timerd/hall/cmd", b'{"command": "start_round", "at": true}')
        assert svc.match.phase.value == "idle"
        return [e for e in link._events if e["type"] == "reply"]

    replies = asyncio.run(main())
    assert [(r["command"], r["ok"]) for r in replies] == [
        ("pause", False), ("start_round", False), ("start_round", False)]
    assert replies[0]["id"] == "p1"
    assert "no match is running" in replies[0]["error"]
    assert "epoch seconds" in replies[1]["error"]


def test_start_round_converts_the_wall_instant_once_to_the_loop_clock() -> None:
    async def main() -> tuple[float, float, str | None]:
        svc = service()
        wall_now = 1_700_000_000.0
        link = HallLink(hall_config(), svc, Outbox(Path("/nonexistent")), wall=lambda: wall_now,
                        rate=2.0)  # `--speed 2`: 30 real seconds are 60 loop seconds
        now = svc.now()
        link.on_message("timerd/hall/tables/t1/cmd", json.dumps(
            {"command": "start_round", "at": wall_now + 30, "round": "R7"}).encode())
        start_at = svc.match.start_at
        assert start_at is not None
        return start_at - now, start_at - svc.now(), link.round

    ahead_at_command, _, round_id = asyncio.run(main())
    assert ahead_at_command == pytest.approx(60.0, abs=0.01)
    assert round_id == "R7"


def test_start_round_refuses_an_instant_beyond_the_horizon_and_a_round_no_name_could_be(
) -> None:
    """Issue 34 items 0 and 3: `at: 1.7e308` (it bricked a table), an instant more than the
    profile's `start_horizon_s` (an hour) ahead, and a `round` that `teams` would refuse (over
    40 characters, a control or bidi character) are refused; the table stays idle and
    answers the next start, whose round is the match's own."""
    async def main() -> tuple[list[tuple[str | None, str | None]], Any]:
        svc = service()
        wall_now = 1_700_000_000.0
        link = HallLink(hall_config(), svc, Outbox(Path("/nonexistent")), wall=lambda: wall_now)
        codes = []
        for at, round_id in ((1.7e308, "R1"), (wall_now + 3601, "R1"), (wall_now + 60, "R" * 41),
                             (wall_now + 60, "R1\u202e"), (wall_now + 60, "R1\x1b[2J")):
            reply = send(link, command="start_round", at=at, round=round_id)
            codes.append((reply.get("code"), svc.status().round))
        assert svc.match.phase.value == "idle"
        started = send(link, command="start_round", at=wall_now + 3600, round="R1")
        return codes, (started["ok"], svc.status().round, link.round)

    codes, started = asyncio.run(main())
    assert codes == [("refused.start_too_far", None)] * 2 + [("refused.round_too_long", None)] * 3
    assert started == (True, "R1", "R1")


def replies_of(link: HallLink) -> list[dict[str, Any]]:
    return [e for e in link._events if e["type"] == "reply"]


def send(link: HallLink, **command: Any) -> dict[str, Any]:
    """`command` from the desk to this table; its reply."""
    link.on_message("timerd/hall/tables/t1/cmd", json.dumps(command).encode())
    return replies_of(link)[-1]


def test_teams_from_the_desk_name_the_sides_and_the_round_through_the_match() -> None:
    async def main() -> None:
        svc = service()
        link = HallLink(hall_config(), svc, Outbox(Path("/nonexistent")))
        ok = send(link, command="teams", home="Åsa Müller", away="Jiří Novák", round="R3")
        assert ok["ok"], ok
        status = svc.status_dict()
        assert status["teams"] == {"home": "Åsa Müller", "away": "Jiří Novák"}
        assert status["round"] == "R3"
        assert link.status_extra()["hall"]["round"] == "R3"
        too_long = send(link, command="teams", home="x" * 41, away="B", round="R3")
        assert not too_long["ok"]
        assert "at most 40 printable characters" in too_long["error"]  # the match's own rule
        assert not send(link, command="teams", home=1, away="B")["ok"]
        svc.match.phase = Phase.RUNNING  # a match in play keeps its round's names
        refused = send(link, command="teams", home="C", away="D", round="R4")
        assert refused["error"] == ("teams refused: the match of round R3 is running; names "
                                    "for round R4 after it")
        assert svc.status().round == "R3"
        fixed = send(link, command="teams", home="Åsa Müller", away="J. Novák", round="R3")
        assert fixed["ok"]  # the same round: a name put right mid-match

    asyncio.run(main())


def test_start_round_resets_a_finished_table_only_once_the_desk_has_its_result() -> None:
    async def main() -> None:
        svc = service()
        link = HallLink(hall_config(), svc, Outbox(Path("/nonexistent")), wall=lambda: 1000.0)
        link.outbox.add = lambda message: None  # type: ignore[assignment,method-assign,return-value]
        svc.match.phase = Phase.FINISHED  # a match that ended (its rules are the core's tests)
        first = send(link, command="start_round", at=1030.0, round="R2", id="s1")
        assert not first["ok"]
        assert "not at the desk yet (this run has sent none)" in first["error"]
        # Typed: the code and the result id, no English in the values (issue 14, invariant 7).
        assert (first["code"], first["params"]) == (
            "refused.result_not_sent", {"command": "start_round"})
        result_id = link.publish_result(SAMPLE_RESULT)
        assert link.status_extra()["hall"]["result"] == {"id": result_id, "round": None,
                                                         "acked": False}
        second = send(link, command="start_round", at=1030.0, round="R2")
        assert not second["ok"]
        assert f"result {result_id} not acknowledged" in second["error"]
        assert (second["code"], second["params"]) == (
            "refused.result_not_acked", {"command": "start_round", "result": result_id})
        wrong = send(link, command="ack", result="nonsense")
        assert not wrong["ok"]
        assert (wrong["code"], wrong["params"]) == (
            "refused.ack_unknown", {"command": "ack", "result": "nonsense", "sent": result_id})
        assert send(link, command="ack", result=result_id)["ok"]
        assert link.status_extra()["hall"]["result"]["acked"] is True
        third = send(link, command="start_round", at=1030.0, round="R2")
        assert third["ok"], third
        # Invariant 6: a reply, done or refused, carries wire's reply format.
        assert (first["format"], third["format"]) == (REPLY_FORMAT, REPLY_FORMAT)
        assert third["detail"].startswith("reset (result acknowledged), scheduled")
        assert svc.match.phase is Phase.SCHEDULED

    asyncio.run(main())


def test_the_desk_resets_a_finished_or_idle_table_never_a_match_in_play() -> None:
    async def main() -> None:
        svc = service()
        link = HallLink(hall_config(), svc, Outbox(Path("/nonexistent")))
        assert send(link, command="reset", finished_only=True)["detail"] == "idle already"
        svc.match.phase = Phase.FINISHED
        done = send(link, command="reset")
        assert done["ok"]
        assert done["detail"].startswith("idle (no result sent by this run: it stays")
        svc.match.phase = Phase.PAUSED
        for finished_only in (False, True):
            refused = send(link, command="reset", finished_only=finished_only)
            assert not refused["ok"]
            assert "the match is paused; only a long press of RESET" in refused["error"]
        svc.match.phase = Phase.SCHEDULED
        refused = send(link, command="reset", finished_only=True)
        assert refused["error"] == "reset refused: the match is scheduled, not finished"

    asyncio.run(main())


def test_table_of_reads_the_table_from_a_topic() -> None:
    assert table_of("timerd/hall/tables/t7/state") == "t7"
    assert table_of("timerd/hall/cmd") is None


# -- against a real broker -------------------------------------------------------------------

def test_state_status_and_commands_over_a_real_broker(mosquitto: Broker) -> None:
    observer = Observer(mosquitto.port)

    async def main() -> None:
        svc = service()
        async with wired(HallLink(hall_config(mosquitto), svc, Outbox(mosquitto.directory / "ob"))):
            await asyncio.to_thread(observer.wait_for, lambda ms: any(
                m.topic.endswith("t1/status") and m.payload == b"online" for m in ms),
                10, "online")
            late = Observer(mosquitto.port)  # a desk that comes later gets the retained state
            try:
                state = await asyncio.to_thread(late.wait_for, lambda _: late.last(
                    "t1", "state"), 10, "the retained state")
            finally:
                late.close()
            assert state.retain
            assert state.json()["phase"] == "idle"
            assert state.json()["hall"]["table"] == "t1"
            # Garbage first: the link must still take the next command.
            observer.publish("timerd/hall/cmd", b"\x00garbage")
            observer.publish("timerd/hall/tables/t1/cmd", {"command": "start_round",
                                                          "at": time.time() + 600,
                                                          "round": "R1"})
            await asyncio.to_thread(observer.wait_for, lambda ms: any(
                m.topic.endswith("t1/state") and m.json()["phase"] == "scheduled" for m in ms),
                10, "the scheduled state")
            reply = await asyncio.to_thread(observer.wait_for, lambda _: next(
                (e for e in observer.events("t1") if e["type"] == "reply"), None),
                10, "the reply")
            assert (reply["command"], reply["ok"]) == ("start_round", True)
            assert svc.status_dict()["hall"]["round"] == "R1"
        # A clean stop says offline (the last will covers the unclean one).
        await asyncio.to_thread(observer.wait_for, lambda _: (
            (m := observer.last("t1", "status")) is not None and m.payload == b"offline"),
            10, "offline on a clean stop")

    try:
        asyncio.run(main())
    finally:
        observer.close()


def test_a_result_published_while_the_broker_is_down_arrives_when_it_is_back(
        mosquitto: Broker) -> None:
    mosquitto.stop()
    outbox_dir = mosquitto.directory / "outbox"

    async def main() -> dict[str, Any]:
        svc = service()
        async with wired(HallLink(hall_config(mosquitto), svc, Outbox(outbox_dir))) as link:
            result_id = link.publish_result(SAMPLE_RESULT)
            entry = link.outbox.pending()[0]
            assert entry.saved is not None
            await entry.saved
            assert [p.name for p in outbox_dir.glob("*.json")] == [entry.path.name]
            mosquitto.start()
            observer = Observer(mosquitto.port)
            try:
                message = await asyncio.to_thread(observer.wait_for, lambda _: observer.last(
                    "t1", "results"), 15, "the result after the broker came back")
            finally:
                observer.close()
            # The entry leaves memory only after its file is gone (Outbox.done), so wait for
            # the later of the two; the file's removal alone may be seen a moment before.
            await asyncio.to_thread(wait_until, lambda: not link.outbox.pending(),
                                    5, "the result forgotten after the acknowledgement")
            assert list(outbox_dir.glob("*.json")) == []
            got: dict[str, Any] = message.json()
            assert got["id"] == result_id
            return got

    got = asyncio.run(main())
    assert got["result"] == SAMPLE_RESULT
    assert (got["hall"], got["table"]) == ("hall", "t1")


def test_a_result_left_in_the_outbox_by_a_stopped_daemon_is_sent_by_the_next_run(
        mosquitto: Broker) -> None:
    mosquitto.stop()
    outbox_dir = mosquitto.directory / "outbox"

    async def first_run() -> str:
        async with wired(HallLink(hall_config(mosquitto), service(), Outbox(outbox_dir))) as link:
            result_id = link.publish_result(SAMPLE_RESULT)
            saved = link.outbox.pending()[0].saved
            assert saved is not None
            await saved
            return result_id

    result_id = asyncio.run(first_run())
    assert len(list(outbox_dir.glob("*.json"))) == 1
    (outbox_dir / "0-broken.json").write_text("{half a file")
    mosquitto.start()
    observer = Observer(mosquitto.port)

    async def second_run() -> None:
        async with wired(HallLink(hall_config(mosquitto), service(),
                                  Outbox(outbox_dir))) as link:
            # It holds that result for the desk, as the run that made it did.
            assert link.result == {"id": result_id, "round": None, "acked": False}
            await asyncio.to_thread(observer.wait_for, lambda _: observer.last(
                "t1", "results"), 15, "the earlier run's result")

    try:
        asyncio.run(second_run())
        message = observer.last("t1", "results")
        assert message is not None
        assert message.json()["id"] == result_id
    finally:
        observer.close()
    assert not list(outbox_dir.glob("*.json"))
    assert (outbox_dir / "0-broken.bad").exists()  # set aside, not lost, not resent forever


# -- the clock offset ------------------------------------------------------------------------

CHRONY_SYNCED = """\
Reference ID    : C0A80101 (ntp.example)
Stratum         : 3
Ref time (UTC)  : Thu Mar 14 10:00:00 2024
System time     : 0.000231000 seconds slow of NTP time
Last offset     : -0.000012345 seconds
RMS offset      : 0.000045678 seconds
Frequency       : 12.345 ppm fast
Leap status     : Normal
"""

CHRONY_UNSYNCED = """\
Reference ID    : 00000000 ()
Stratum         : 0
System time     : 1.250000000 seconds fast of NTP time
Leap status     : Not synchronised
"""


def test_chrony_tracking_is_read_as_offset_and_sync_state() -> None:
    assert parse_chrony_tracking(CHRONY_SYNCED) == ClockSync(
        "chrony", synced=True, offset_ms=-0.231, detail="leap status Normal")
    unsynced = parse_chrony_tracking(CHRONY_UNSYNCED)
    assert (unsynced.synced, unsynced.offset_ms) == (False, 1250.0)
    assert parse_chrony_tracking("506 Cannot talk to daemon").synced is None


# Captured from systemd 252 (Debian 12, Raspberry Pi OS bookworm) and 255 (a UTF-8 locale).
TIMESYNC_SYNCED = """\
       Server: 192.168.10.1 (desk.local)
Poll interval: 34min 8s (min: 32s; max 34min 8s)
         Leap: normal
      Version: 4
      Stratum: 3
    Reference: C0A80A01
    Precision: 1us (-25)
Root distance: 1.201ms (max: 5s)
       Offset: -1.017ms
        Delay: 1.123ms
       Jitter: 412us
 Packet count: 42
    Frequency: +12.345ppm
"""
TIMESYNC_BEHIND = TIMESYNC_SYNCED.replace("-1.017ms", "+1min 2.5s").replace(
    "412us", "870μs")
TIMESYNC_NO_ANSWER = """\
       Server: n/a (desk.local)
Poll interval: 0 (min: 32s; max 34min 8s)
 Packet count: 0
"""


def test_timesyncd_status_is_read_as_offset_and_sync_state() -> None:
    # timesyncd's offset is the server's time minus this clock's: -1.017 ms is 1.017 ahead.
    assert parse_timesync_status(TIMESYNC_SYNCED) == ClockSync(
        "timesyncd", synced=True, offset_ms=1.017,
        detail="leap normal, server 192.168.10.1 (desk.local)")
    assert parse_timesync_status(TIMESYNC_BEHIND).offset_ms == -62500.0
    unsynced = parse_timesync_status(TIMESYNC_SYNCED.replace("normal", "not synchronized"))
    assert unsynced.synced is False
    none_yet = parse_timesync_status(TIMESYNC_NO_ANSWER)
    assert (none_yet.synced, none_yet.offset_ms) == (False, None)
    assert "no NTP answer yet" in none_yet.detail
    assert parse_timesync_status("Failed to connect to bus: Host is down").synced is None


def fake_tools(directory: Path, name: str, argument: str, output: str,
               error: str) -> tuple[Path, Path]:
    """A `name` that prints `output` when given `argument`, and one that fails with `error`."""
    fake, down = directory / name, directory / f"{name}-down"
    fake.write_text(f"#!/bin/sh\n[ \"$1\" = {argument} ] && cat <<'X'\n{output}X\n")
    down.write_text(f"#!/bin/sh\necho '{error}' >&2\nexit 1\n")
    for tool in (fake, down):
        tool.chmod(0o755)
    return fake, down


def test_timesyncd_is_asked_where_chrony_is_not_installed(tmp_path: Path) -> None:
    fake, down = fake_tools(tmp_path, "timedatectl", "timesync-status", TIMESYNC_SYNCED,
                            "Failed to connect to bus: Host is down")
    no_chrony = str(tmp_path / "chronyc")

    async def main() -> list[ClockSync]:
        return [await read_clock_sync(no_chrony, 5.0, str(p))
                for p in (fake, down, tmp_path / "missing")]

    ok, failing, neither = asyncio.run(main())
    assert (ok.source, ok.synced, ok.offset_ms) == ("timesyncd", True, 1.017)
    assert (failing.source, failing.synced) == ("timesyncd", None)
    assert failing.detail == "Failed to connect to bus: Host is down"
    assert neither.source == "none"
    assert "chronyc: No such file" in neither.detail
    assert "missing: No such file" in neither.detail


def test_chronyc_is_run_and_its_absence_or_failure_is_reported(tmp_path: Path) -> None:
    fake, failing = fake_tools(tmp_path, "chronyc", "tracking", CHRONY_SYNCED,
                               "506 Cannot talk to daemon")

    async def main() -> list[ClockSync]:
        return [await read_clock_sync(str(p), 5.0)
                for p in (fake, failing, tmp_path / "missing", "none")]

    ok, down, missing, off = asyncio.run(main())
    assert (ok.synced, ok.offset_ms) == (True, -0.231)
    assert (down.source, down.synced, down.detail) == ("chrony", None,
                                                       "506 Cannot talk to daemon")
    assert missing.source == "none"
    assert "No such file" in missing.detail
    assert off.source == "none"


# -- without the extra -----------------------------------------------------------------------

def test_without_aiomqtt_hall_mode_fails_with_a_clear_error(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setitem(sys.modules, "aiomqtt", None)  # what Python does for a missing module
    with pytest.raises(HallUnavailable, match=r"pip install aiomqtt` in timerd's environment"):
        import_aiomqtt()
    code = cli.main(["run", "--simulate", "--control", str(tmp_path / "s.sock"),
                     "-o", "hall.enabled=true", "-o", 'hall.chronyc="none"',
                     "-o", "hall.allow_anonymous=true",
                     "-o", 'web.host="127.0.0.1"', "-o", "web.port=0"])  # never a live 8080
    assert code == cli.EXIT_USAGE
    assert "hall mode needs the aiomqtt package" in capsys.readouterr().err


# -- config ----------------------------------------------------------------------------------

def test_the_hall_section_is_checked_with_key_paths() -> None:
    with pytest.raises(SchemaError) as caught:
        config.load(Path("/dev/null"), ['hall.table="a/b"', "hall.port=70000",
                                        "hall.heartbeat_s=0"])
    assert caught.value.problems == [
        "hall.table = 'a/b': a topic level, not empty and without / + #",
        "hall.port = 70000: a TCP port is 1 to 65535",
        "hall.heartbeat_s = 0: must be more than 0",
    ]
    loaded = config.load(Path("/dev/null"), ['hall.table="07"', 'hall.outbox="/srv/ob"'])
    assert loaded.hall.table_id() == "07"
    assert config.hall_outbox(loaded) == Path("/srv/ob")


# -- TLS -------------------------------------------------------------------------------------

def make_certificates(directory: Path) -> tuple[Path, Path, Path]:
    """A throwaway CA, and a server certificate for 127.0.0.1 signed by it (openssl)."""
    ca_key, ca, key, csr, cert = (directory / n for n in (
        "ca.key", "ca.pem", "server.key", "server.csr", "server.pem"))
    san = directory / "san.ext"
    san.write_text("subjectAltName=IP:127.0.0.1\n")
    for args in (
        ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca,
         "-days", "1", "-subj", "/CN=timerd test CA"],
        ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr,
         "-subj", "/CN=127.0.0.1"],
        ["x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
         "-out", cert, "-days", "1", "-extfile", san],
    ):
        subprocess.run(["openssl", *map(str, args)], check=True, capture_output=True)
    return ca, cert, key


def test_a_table_talks_tls_to_a_broker_it_can_verify_and_not_to_one_it_cannot(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    require(mosquitto_path() is not None, "mosquitto (Debian package mosquitto)")
    require(shutil.which("openssl") is not None, "openssl (Debian package openssl)")
    ca, cert, key = make_certificates(tmp_path)
    # `user root`: mosquitto started as root would drop to its own user, which cannot read
    # pytest's private temporary directory (no effect when the tests do not run as root).
    broker = Broker(tmp_path, extra_config=f"cafile {ca}\ncertfile {cert}\nkeyfile {key}\n"
                    "user root\n")
    broker.start()
    caplog.set_level(logging.WARNING, "timerd.hall")

    def refused() -> bool:
        return any("certificate verify failed" in r.getMessage() for r in caplog.records)

    async def main() -> tuple[bool, bool]:
        trusting = HallLink(hall_config(broker, tls=True, ca_file=str(ca)), service(),
                            Outbox(tmp_path / "ob1"))
        # Without the CA: the system's CAs do not know this broker, so no connection.
        doubting = HallLink(hall_config(broker, tls=True, table="t2"), service(),
                            Outbox(tmp_path / "ob2"))
        async with trusting, doubting:
            await asyncio.to_thread(wait_until, lambda: trusting.connected, 10, "TLS session")
            await asyncio.to_thread(wait_until, refused, 10, "the unverified broker refused")
            return trusting.connected, doubting.connected

    try:
        # A bound on the whole exchange: a stuck TLS session fails the test, never hangs it.
        assert asyncio.run(asyncio.wait_for(main(), 60)) == (True, False)
    finally:
        broker.stop()


def test_isbhf_407_1_start_round_says_a_stop_clock_table_waits_for_the_faceoff() -> None:
    """Issue 28 item 6: the desk's `start-round` reply says per table what it did."""
    async def main() -> tuple[str, Phase]:
        svc = Service(Match(profiles.load("isbhf")))
        link = HallLink(hall_config(), svc, Outbox(Path("/nonexistent")), wall=lambda: 1000.0)
        reply = send(link, command="start_round", at=1030.0, round="R1")
        svc.match.poll(svc.now() + 30.0)
        return reply["detail"], svc.match.phase

    detail, phase = asyncio.run(main())
    assert detail.startswith("scheduled: ready for the referee's faceoff in 30.000 s")
    assert phase is Phase.PAUSED  # ready for the faceoff: the clock stands
