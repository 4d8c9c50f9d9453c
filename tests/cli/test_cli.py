"""The command lines as a user runs them: a real daemon subprocess in simulate mode, timerctl."""

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from timerd import cli

ROOT = Path(__file__).resolve().parents[2]


def env():
    """The test's environment (its own state directories, see conftest) for a subprocess."""
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def timerd(*args, **kw):
    return subprocess.run([sys.executable, "-m", "timerd", *args], cwd=ROOT, env=env(),
                          capture_output=True, text=True, timeout=30, check=False, **kw)


def wait_for(condition, timeout_s=30.0):
    """Poll `condition` until it is true; fail after `timeout_s` (waiting, not timing)."""
    end = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > end:
            pytest.fail(f"timed out waiting for {condition}")
        time.sleep(0.02)


@pytest.fixture
def daemon(tmp_path):
    sock = tmp_path / "control.sock"
    events = tmp_path / "events.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "timerd", "run", "--simulate", "--speed", "20",
         "--control", str(sock), "--events", str(events), "-o", "web.port=0"],
        cwd=ROOT, env=env(), stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for(sock.exists)
    yield sock, events, proc
    proc.terminate()
    proc.wait(timeout=10)


def ctl(capsys, sock, *args):
    code = cli.timerctl(["--socket", str(sock), *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def read_events(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_timerctl_drives_a_running_daemon(daemon, capsys):
    sock, events, _ = daemon
    assert ctl(capsys, sock, "start")[0] == 0
    wait_for(lambda: any(e.get("signal") == "start" for e in read_events(events)))
    code, out, _ = ctl(capsys, sock, "pause")
    assert code == 0
    assert out.startswith("pause - paused "), out  # what it did, in one line
    assert out.count("\n") == 1, out
    code, out, _ = ctl(capsys, sock, "status", "--json")
    status = json.loads(out)
    assert status["phase"] == "paused"
    assert 0 < status["remaining_s"] < 300
    assert ctl(capsys, sock, "resume")[0] == 0
    # The stream is written by a thread of its own: wait for the resume to reach the file.
    wait_for(lambda: any(e.get("signal") == "resume" for e in read_events(events)))
    # At 20x an interval signal may fall in between on a loaded machine: not looked at here.
    kinds = [e.get("signal") or e.get("state") for e in read_events(events)
             if e["type"] in ("signal", "state") and e.get("signal") != "interval"]
    assert kinds[:8] == ["pre_signal", "pre_signal", "running", "start",
                         "paused", "pause", "running", "resume"]
    for event in read_events(events):
        assert isinstance(event["t"], float)


def test_refused_and_malformed_commands_get_errors_and_the_daemon_still_answers(daemon, capsys):
    sock, _, proc = daemon
    code, _, err = ctl(capsys, sock, "resume")
    assert code == cli.EXIT_REFUSED
    assert "resume refused" in err
    code, _, err = ctl(capsys, sock, "self-destruct")
    assert code == cli.EXIT_REFUSED
    assert "unknown command" in err
    with socket.socket(socket.AF_UNIX) as raw:
        raw.connect(str(sock))
        raw.sendall(b'{"command": "start", \n\xff\xfe garbage\n{"args": 3}\n')
        reader = raw.makefile()
        replies = [reader.readline() for _ in range(3)]
    assert all(json.loads(r)["ok"] is False for r in replies)
    assert "malformed JSON" in json.loads(replies[0])["error"]
    code, out, _ = ctl(capsys, sock, "status")
    assert code == 0
    assert "phase     idle" in out
    assert proc.poll() is None


def test_timerctl_without_a_daemon_says_where_it_looked(tmp_path, capsys):
    code, _, err = ctl(capsys, tmp_path / "nothing.sock", "status")
    assert code == cli.EXIT_USAGE
    assert f"no timerd is listening at {tmp_path / 'nothing.sock'}" in err


def test_an_invalid_config_exits_non_zero_with_every_error_listed(tmp_path):
    bad = tmp_path / "timerd.toml"
    bad.write_text('[gpio]\nstart_pause_pin = 99\nbuzer_pins = [4]\n[match]\nprofile = "x"\n')
    for command in ("config", "run"):
        result = timerd(command, "--config", str(bad), "-o", "log.level=loud",
                        *(["--simulate"] if command == "run" else []))
        assert result.returncode == cli.EXIT_USAGE
        err = result.stderr
        assert "did you mean `buzzer_pins`" in err
        assert "match.profile" in err
        assert "log.level: 'loud' is not one of" in err


def test_config_prints_the_effective_config():
    result = timerd("config", "-o", "gpio.buzzer_pins=[18]", "--profile", "ithf-thirds")
    assert result.returncode == 0
    assert "buzzer_pins = [\n    18,\n]" in result.stdout
    assert 'profile = "ithf-thirds"' in result.stdout


def test_profiles_lists_the_builtin_profiles():
    result = timerd("profiles")
    assert result.returncode == 0
    assert "ithf " in result.stdout
    assert "ithf-thirds" in result.stdout


def test_run_without_gpio_points_to_simulate(tmp_path):
    if Path("/proc/device-tree/model").exists():
        pytest.skip("this machine has GPIO")
    result = timerd("run", "--control", str(tmp_path / "c.sock"), "-o", "web.port=0")
    assert result.returncode == cli.EXIT_USAGE
    assert "--simulate" in result.stderr


def test_events_to_stdout(tmp_path):
    """`--events -` streams JSON lines on stdout; SIGTERM stops the daemon cleanly."""
    sock = tmp_path / "c.sock"
    proc = subprocess.Popen(
        [sys.executable, "-m", "timerd", "run", "--simulate", "--speed", "50",
         "--control", str(sock), "--events", "-", "-o", "web.port=0"],
        cwd=ROOT, env=env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    try:
        wait_for(sock.exists)
        cli.request(sock, "start", [])
        first = json.loads(proc.stdout.readline())
        assert first["type"] == "state"
        assert first["state"] == "pre_signal"
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0
    assert not sock.exists()


def test_sigterm_hangs_up_on_connected_tools_cleanly(daemon):
    """A tool still connected when the daemon stops (a monitor, a desk script) sees the end of
    the stream, and the daemon stops without an error in its log."""
    sock, _, proc = daemon
    with socket.socket(socket.AF_UNIX) as tool:
        tool.connect(str(sock))
        tool.sendall(b"status\n")
        reader = tool.makefile("rb")
        assert json.loads(reader.readline())["ok"] is True
        proc.terminate()
        assert reader.readline() == b""  # hung up
    assert proc.wait(timeout=10) == 0
    log = proc.stderr.read()
    assert "timerd stopped" in log
    assert "Traceback" not in log


def test_config_masks_the_secrets_unless_asked(tmp_path: Path) -> None:
    path = tmp_path / "timerd.toml"
    path.write_text('[web]\ntoken = "s3cret-token-abcdef"\n[hall]\npassword = "hunter2"\n')
    run = [sys.executable, "-m", "timerd", "config", "--config", str(path)]
    shown = subprocess.run(run, capture_output=True, text=True, check=True).stdout
    assert "s3cret-token-abcdef" not in shown
    assert "hunter2" not in shown
    assert shown.count('"********"') == 2
    assert 'username = ""' in shown  # an empty one stays empty: nothing to hide
    full = subprocess.run([*run, "--show-secrets"], capture_output=True, text=True,
                          check=True).stdout
    assert 'token = "s3cret-token-abcdef"' in full
