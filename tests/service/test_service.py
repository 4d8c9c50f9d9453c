"""The real asyncio service on virtual time: deadlines, ticks, commands, outputs."""

import asyncio
from typing import Any

import pytest

from tests.conftest import Recorder, play, run_virtual, said
from timerd.config import profiles
from timerd.core.effects import Phase, Signal, SignalKind, Tick
from timerd.core.match import Match
from timerd.core.refused import CommandRefused
from timerd.ports import ExtraCommand
from timerd.service import Service
from timerd.timer import slack_margin
from timerd.wire import REPLY_FORMAT


def test_a_full_match_gives_every_signal_once_in_order():
    recorder = play("ithf", [(0, "start")], 400)
    kinds = [e["signal"] for e in recorder.events("signal")]
    assert kinds == ["pre_signal", "start", "interval", "interval", "interval", "interval",
                     "last_30", "final"]


def test_ticks_follow_the_shown_clock():
    recorder = play("ithf", [(0, "start")], 400)
    running_ticks = [t for t, e, s in recorder.seen
                     if isinstance(e, Tick) and s.phase is Phase.RUNNING and t > 20]
    # one per shown second from 4:59 to 0:10, then one per tenth down to 0.1
    assert len(running_ticks) == (300 - 10) + 99
    assert running_ticks[0] == pytest.approx(21.0)
    assert running_ticks[-1] == pytest.approx(319.9)


def test_a_tick_says_when_only_the_tenths_changed():
    """Tick.tenth marks the ticks between whole seconds of the last 10 s (of play and of the
    pre-signal's countdown, ITHF 4.4): a view that runs its clock itself skips them."""
    recorder = play("ithf", [(0, "start")], 400)
    ticks = [(round(t, 6), e.tenth) for t, e, s in recorder.seen if isinstance(e, Tick)]
    tenths = {t for t, tenth in ticks if tenth}
    whole = [t for t, tenth in ticks if not tenth]
    # 9.9 to 9.1, ..., 0.9 to 0.1 left: 9 a second over the last 10 s, before the start
    # signal (20 s) and before the final one (320 s)
    assert len(tenths) == 2 * 90
    assert all(10 < t < 20 or 310 < t < 320 for t in tenths)
    assert all(abs(t - round(t)) > 0.05 for t in tenths)
    assert all(abs(t - round(t)) < 1e-6 for t in whole)  # the whole seconds are kept
    assert {float(t) for t in range(311, 320)} <= set(whole)


def test_without_a_display_of_tenths_the_clock_ticks_once_a_second():
    """Issue 16 (CPU): with no output showing tenths (`Service.tenths`, set by app.build)
    the loop is woken once a second in the last 10 s too, not ten times. Fails on the old
    code: it always ticked the tenths."""
    recorder = play("ithf", [(0, "start")], 400,
                    setup=lambda service: setattr(service, "tenths", False))
    running_ticks = [t for t, e, s in recorder.seen
                     if isinstance(e, Tick) and s.phase is Phase.RUNNING and t > 20]
    assert len(running_ticks) == 299  # 4:59 down to 0:01
    assert running_ticks == pytest.approx([21.0 + i for i in range(299)])
    assert not any(e.tenth for _, e, _ in recorder.seen if isinstance(e, Tick))


def test_the_interruption_length_is_shown_while_paused():
    recorder = play("ithf", [(0, "start"), (30, "pause"), (42, "resume")], 60)
    paused = [s.interruption_s for t, e, s in recorder.seen
              if isinstance(e, Tick) and s.phase is Phase.PAUSED]
    assert paused == pytest.approx([1.0 * i for i in range(1, 12)])


def test_a_refused_command_becomes_a_notice_and_changes_nothing():
    recorder = play("ithf", [(0, "start"), (30, "reset")], 40)
    notices = said(e for _, e, _ in recorder.seen)
    assert notices == ["reset refused: the clock is running; pause first"]
    assert recorder.seen[-1][2].phase is Phase.RUNNING


def test_an_output_that_raises_does_not_stop_the_match(caplog):
    class Broken:
        def notify(self, dispatch):
            raise RuntimeError("display unplugged")

    recorder = play("ithf", [(0, "start")], 400, setup=lambda s: s.outputs.insert(0, Broken()))
    assert [e["signal"] for e in recorder.events("signal")][-1] == "final"
    assert "display unplugged" in caplog.text


def test_command_replies_for_tools():
    async def main():
        service = Service(Match(profiles.load("ithf")))
        task = asyncio.create_task(service.run())
        await asyncio.sleep(0)
        replies = [
            service.command({"command": "start", "args": []}),
            service.command({"command": "start"}),
            service.command({"command": "status"}),
            service.command({"command": "launch", "args": []}),
            service.command({"command": 5}),
            service.command({"command": "start", "args": "now"}),
            service.command(["start"]),
        ]
        task.cancel()
        return replies

    ok, refused, status, unknown, bad_name, bad_args, not_a_map = run_virtual(main)
    assert ok["ok"] is True
    assert ok["status"]["phase"] == "pre_signal"
    assert refused == {"format": REPLY_FORMAT, "ok": False, "error": refused["error"],
                       "code": "refused.in_pre_signal", "params": {"command": "start"}}
    assert (ok["format"], unknown["format"], not_a_map["format"]) == (REPLY_FORMAT,) * 3
    assert "pre-signal" in refused["error"]
    assert status["status"]["start_in_s"] == 20.0
    assert "launch refused: unknown command; known: " in unknown["error"]
    for reply in (bad_name, bad_args, not_a_map):
        assert reply["ok"] is False


def test_extra_commands_and_status_extras_from_adapters():
    async def main():
        service = Service(Match(profiles.load("ithf")))
        muted = {"muted": False}

        def mute(word):
            if word not in ("on", "off"):
                raise CommandRefused("mute_how")
            muted["muted"] = word == "on"

        service.extra_commands["mute"] = ExtraCommand(mute, ("word",))
        service.status_extras.append(lambda: dict(muted))
        return (service.command({"command": "mute", "args": ["on"]}),
                service.command({"command": "mute", "args": ["loud"]}),
                service.command({"command": "mute", "args": []}))

    on, bad, missing = run_virtual(main)
    assert on["ok"]
    assert on["status"]["muted"] is True
    assert bad["error"] == "mute refused: it takes on|off, or speaker|buzzer|all on|off"
    assert missing["ok"] is False
    assert (missing["code"], missing["params"]) == (
        "refused.arguments", {"command": "mute", "wanted": "<word>", "got": 0})


def test_malformed_requests_are_answered_with_codes() -> None:
    """Issue 44 item 6: a malformed request, and an adapter command's words that do not fit
    its declared arguments, get a refusal's code and values (the English beside them made
    from the catalogue), and the command is not run. Fails on the old code: English
    sentences only, and an adapter command was run to fail with a TypeError (which a defect
    inside the command raised too, and was told as 'wrong number of arguments')."""
    ran: list[tuple[str, ...]] = []

    def note(text: str, *more: str) -> None:
        ran.append((text, *more))
        raise TypeError("a defect inside the command")

    async def main() -> list[dict[str, Any]]:
        service = Service(Match(profiles.load("ithf")))
        service.extra_commands["note"] = ExtraCommand(note, ("text", "more..."))
        replies = [service.command(request) for request in (
            ["start"], {"command": 5}, {"command": "start", "args": "now"},
            {"command": "note", "args": []})]
        with pytest.raises(TypeError, match="a defect inside the command"):
            service.command({"command": "note", "args": ["a", "b"]})
        return replies

    a_list, not_a_name, not_strings, no_text = run_virtual(main)
    assert [r["code"] for r in (a_list, not_a_name, not_strings, no_text)] == [
        "refused.not_a_command", "refused.not_a_command", "refused.args_not_strings",
        "refused.arguments"]
    assert not_strings["error"] == "start refused: args must be a list of strings"
    assert no_text["params"] == {"command": "note", "wanted": "<text>", "got": 0}
    assert ran == [("a", "b")]  # the words that fit; a defect inside is no refusal


def test_signals_sound_at_their_planned_instant_on_virtual_time():
    async def main():
        loop = asyncio.get_running_loop()
        service = Service(Match(profiles.load("ithf")))
        recorder = Recorder(loop, loop.time())
        service.outputs.append(recorder)
        task = asyncio.create_task(service.run())
        service.execute(service.parse("start"))
        await asyncio.sleep(400)
        task.cancel()
        return recorder

    recorder = run_virtual(main)
    for t, effect, _ in recorder.seen:
        if isinstance(effect, Signal) and effect.kind is not SignalKind.PRE_SIGNAL:
            assert t == pytest.approx(effect.due - recorder.t0, abs=1e-9)


def test_exact_calls_run_at_their_instant_even_on_an_idle_service(caplog):
    """A buzzer pulse's edges are the service's exact deadlines (`call_exactly_at`): a call
    given while the service sleeps with nothing due wakes it; a cancelled one never runs;
    one that fails is logged and the others still run."""

    async def main():
        loop = asyncio.get_running_loop()
        service = Service(Match(profiles.load("ithf")))
        task = asyncio.create_task(service.run())
        await asyncio.sleep(1)  # idle: the service waits for an input, with no timer
        t0 = service.now()
        ran = []

        def note(name):
            return lambda: ran.append((name, round(loop.time() - t0, 9)))

        def broken():
            raise RuntimeError("pin gone")

        service.call_exactly_at(t0 + 0.25, note("off"))
        service.call_exactly_at(t0 + 0.05, note("on"))
        service.call_exactly_at(t0 + 0.1, note("cancelled")).cancel()
        service.call_exactly_at(t0 + 0.1, broken)
        await asyncio.sleep(1)
        task.cancel()
        return ran

    assert run_virtual(main) == [("on", 0.05), ("off", 0.25)]
    assert "pin gone" in caplog.text


def test_a_defect_in_a_step_fails_the_run_instead_of_stalling_the_match():
    """The match is driven from a loop timer's callback: what a step raises (a defect, not a
    refused command) ends `run` with it, as a task would, and is never only in asyncio's log
    while the clock silently stops."""

    async def main():
        service = Service(Match(profiles.load("ithf")))
        task = asyncio.create_task(service.run())
        service.execute(service.parse("start"))
        await asyncio.sleep(5)

        def broken(now, **_):
            raise RuntimeError("defect")

        service.match.poll = broken
        with pytest.raises(RuntimeError, match="defect"):
            await asyncio.wait_for(task, 60)

    run_virtual(main)


@pytest.mark.parametrize(("wait", "margin"), [(1.0, 0.003), (60.0, 0.062), (600.0, 0.102)])
def test_long_waits_wake_early_by_the_timer_slack(wait, margin):
    """Linux may fire an epoll timeout late by 0.1% of it (up to 100 ms), rounded up to a whole
    millisecond: waking that much plus 2 ms early leaves the rest for the precise final sleep."""
    assert slack_margin(wait) == pytest.approx(margin)


def test_a_press_starts_and_stops_the_clock_at_its_own_timestamp():
    """The button's edge is timestamped in gpiozero's thread; the loop handles it a little
    later. The match takes the press instant, so that delay never shifts a signal."""

    async def main():
        service = Service(Match(profiles.load("ithf")))
        task = asyncio.create_task(service.run())
        await asyncio.sleep(10)
        service.execute(service.parse("start"), at=service.now() - 0.004)  # pressed 4 ms ago
        start_in = service.status().start_in_s
        await asyncio.sleep(30)
        pressed = service.now() - 0.002
        service.execute(service.parse("pause"), at=pressed)
        remaining = service.status().remaining_s
        # older than the pause: clamped
        stale = service.execute(service.parse("resume"), at=0.0).remaining_s
        task.cancel()
        return start_in, remaining, stale

    start_in, remaining, stale = run_virtual(main)
    assert start_in == pytest.approx(20 - 0.004)
    assert remaining == pytest.approx(300 - (30 - 20 + 0.004 - 0.002))
    # the resume is taken at the pause's instant (never before it): at 40.0 it has run 2 ms
    assert stale == pytest.approx(remaining - 0.002)
