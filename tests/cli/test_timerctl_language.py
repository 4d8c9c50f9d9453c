"""timerctl speaks the terminal's language (issue 46 item 1): its errors (no daemon at the
socket, a bad instance name, a missing command), its help, `timerctl desk`, the storage lines
and the "not durable" warning, like its replies, in the config's `[ui] language` (or the
locale's, for "auto"), from the message catalogue. Every scenario is run in English, Slovenian
and Slovak, and no line of the sl/sk output may be English (tests/untranslated.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.daemon_process import Daemon
from tests.untranslated import untranslated
from timerd import cli
from timerd import config as config_mod
from timerd.config import paths
from timerd.core.effects import SignalKind
from timerd.i18n import Messages

LOCALES = {"en": "en_GB.UTF-8", "sl": "sl_SI.UTF-8", "sk": "sk_SK.UTF-8"}
HOME, AWAY = "HC Olimpija", "HK Poprad"
#: Commands are words of the protocol, the same in every language.
COMMANDS = ("help", "status", "start", "pause", "resume", "toggle", "reset", "desk")

Run = Callable[..., tuple[int, str]]


@pytest.fixture
def config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The machine's /etc/timerd/timerd.toml, under tmp_path, and no other socket."""
    config = tmp_path / "etc" / "timerd.toml"
    config.parent.mkdir()
    monkeypatch.setattr(paths, "SYSTEM_CONFIG", config)
    monkeypatch.setattr(paths, "SYSTEM_RUNTIME", tmp_path / "run")
    for name in ("TIMERD_SOCKET", "RUNTIME_DIRECTORY", "STATE_DIRECTORY",
                 config_mod.INSTANCE_ENV, "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "session"))
    return config


@pytest.fixture
def run(config_file: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> Run:
    """`run(language, *argv, config="")`: timerctl in a terminal of `language` (its locale),
    with `config` as the machine's config; its exit code and all it printed."""
    def timerctl(language: str, *argv: str, config: str = "") -> tuple[int, str]:
        monkeypatch.setenv("LC_ALL", LOCALES[language])
        config_file.write_text(config)
        try:
            code = cli.timerctl(list(argv))
        except SystemExit as exc:  # argparse's usage error
            code = int(exc.code or 0)
        out = capsys.readouterr()
        return code, out.out + out.err
    return timerctl


def in_each_language(scenario: Callable[[str], str], data: tuple[str, ...] = ()) -> None:
    """Run `scenario` in en, sl and sk; no line of the sl and sk output is English."""
    english = scenario("en")
    for language in ("sl", "sk"):
        said = scenario(language)
        assert said.strip(), language
        assert untranslated(language, said, english, data) == [], (language, said)


def test_errors_help_and_the_desk_without_a_daemon(tmp_path: Path, run: Run) -> None:
    """The config's own problem (its schema's words, as `timerd config` prints them) and the
    positional arguments' names argparse shows are data."""
    nowhere = str(tmp_path / "nowhere.sock")
    shared = tmp_path / "shared"  # anyone may swap a socket in it: refused
    shared.mkdir()
    shared.chmod(0o777)
    broken = tmp_path / "broken.toml"
    broken.write_text("not a socket\n")

    def scenario(language: str) -> str:
        said = []
        for argv, config, code in [
                (["--socket", nowhere, "start"], "", cli.EXIT_USAGE),
                (["--socket", nowhere, "--help"], "", 0),
                (["--socket", str(shared / "control.sock"), "status"], "", cli.EXIT_USAGE),
                (["--socket", str(tmp_path / "broken.toml"), "status"], "", cli.EXIT_USAGE),
                ([], "", cli.EXIT_USAGE),
                (["--instance", "no good", "status"], "", cli.EXIT_USAGE),
                (["--socket", nowhere, "desk"], "", cli.EXIT_USAGE),
                (["--socket", nowhere, "status", "--list"], "", cli.EXIT_USAGE)]:
            got, out = run(language, *argv, config=config)
            assert got == code, (argv, out)
            said.append(out)
        return "".join(said)
    in_each_language(scenario, data=("command", "args", *COMMANDS))
    assert "na " + nowhere + " ne posluša noben timerd" in scenario("sl")


def test_the_configs_language_comes_before_the_locale(tmp_path: Path, run: Run) -> None:
    """`[ui] language = "sk"` in a Slovenian terminal: Slovak; "auto": the locale's."""
    nowhere = str(tmp_path / "nowhere.sock")
    said = run("sl", "--socket", nowhere, "status", config='[ui]\nlanguage = "sk"\n')[1]
    assert f"na {nowhere} nepočúva žiadny timerd" in said
    said = run("sl", "--socket", nowhere, "status", config='[ui]\nlanguage = "auto"\n')[1]
    assert f"na {nowhere} ne posluša noben timerd" in said


def test_the_lines_no_test_daemon_can_provoke(tmp_path: Path) -> None:
    """The storage lines and a warning, as a failing card gives them
    (tests/cli/test_recovery_storage.py drives that in English), and a socket this user may
    not use (the suite runs as root, whom no permission stops)."""
    status = {"phase": "running", "remaining_s": 600.0, "language": "auto",
              "storage": {"ok": False, "pending_results": 2,
                          "faults": dict.fromkeys(("journal", "heartbeat", "outbox", "results"),
                                                  "ENOSPC (No space left on device)")}}
    reply = {"ok": True, "status": status, "durable": False, "problem": "ENOSPC",
             "warning": "not durable: ENOSPC; a crash now would lose this command"}
    path = tmp_path / "control.sock"

    def scenario(language: str) -> str:
        msg = Messages(language)
        return "\n".join([cli.action_line("start", reply, msg).split("\n", 1)[1],
                          cli._warning(reply, msg),
                          cli._unreachable(path, PermissionError(13, "Permission denied"), msg),
                          cli._unreachable(path, OSError(5, "I/O error"), msg)])
    in_each_language(scenario, data=("ENOSPC", "No space left on device", "I/O error"))
    assert "SHRAMBA   dnevnik: zapisovanje ni mogoče: ENOSPC" in scenario("sl")


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Callable[[], Daemon]]:
    """A fresh daemon (ISBHF, "auto": the terminal's language) each call."""
    started: list[Daemon] = []

    def start() -> Daemon:
        home = tmp_path / f"table{len(started)}"
        home.mkdir()
        table = Daemon(home, "--profile", "isbhf-playoff", speed=1.0)
        started.append(table)
        return table.ready()
    yield start
    for table in started:
        table.__exit__(None, None, None)


def test_a_daemons_replies_refusals_and_help(run: Run, daemon: Callable[[], Daemon]) -> None:
    """A fresh match each language: the same replies, a refusal (a timeout while the clock
    runs, ISBHF 412), an unknown command and `timerctl help`."""
    def scenario(language: str) -> str:
        sock = ["--socket", str(daemon().socket)]
        said = []
        for argv, code in [(["teams", HOME, AWAY], 0), (["status"], 0), (["start"], 0),
                           (["timeout", "home"], cli.EXIT_REFUSED), (["faceoff"], 0),
                           (["goal", "home", "17", "4"], 0), (["pause"], 0),
                           (["bogus"], cli.EXIT_REFUSED), (["help"], 0),
                           (["desk", "--list"], 0), (["desk"], cli.EXIT_REFUSED),
                           (["desk", "--revoke", "nobody"], cli.EXIT_REFUSED)]:
            got, out = run(language, *sock, *argv)
            assert got == code, (argv, out)
            said.append(out)
        return "".join(said)
    listed = cli.request(daemon().socket, "commands", [])["commands"]
    words = {c["command"] for c in listed} | {
        a.rstrip("?").removesuffix("...") for c in listed for a in c["args"]}
    in_each_language(scenario, data=(HOME, AWAY, "nobody", *words))


#: `timerd`'s subcommands and the names argparse shows of its positional arguments: words
#: of the command line, the same in every language.
TIMERD_WORDS = ("run", "config", "profiles", "results", "sound-test", "install", "uninstall",
                "doctor", "hall", "completion", "status", "round", "load", "start-round",
                "pause", "resume", "reset", "secure", "board", "show", "name", "command",
                "hall_command", "round_command", "bogus", "sl", "sk", "Excel",
                "Windows", "UTF-8", "Raspberry Pi OS", "systemd", "gpiozero MockFactory",
                "bash", "zsh", "tcsh", "JSON", "CSV", "TOML", "NAME", "HTTP", "sudo",
                "LG_WD", "TCP", "SD", "QR", "--wait S", "--timeout S", "timerd@NAME",
                "Python", "apt-get", "-y", "python3")


def test_timerd_and_timerd_hall_help_and_usage_errors(
        config_file: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`timerd --help`, each command's and `timerd hall ...`'s, and argparse's usage errors
    (its own words through its gettext hook: "usage:", "options:", "the following arguments
    are required", ...), in the terminal's language. Failed on the old code: all English."""
    signals = tuple(kind.value for kind in SignalKind)
    helps = [[], ["run"], ["config"], ["profiles"], ["results"], ["sound-test"], ["doctor"],
             ["hall"], ["hall", "status"], ["hall", "round"], ["hall", "round", "load"],
             ["hall", "start-round"], ["hall", "pause"], ["hall", "resume"], ["hall", "reset"],
             ["hall", "results"], ["hall", "secure"], ["hall", "board"], ["install"],
             ["uninstall"], ["completion"]]
    errors = [["hall", "start-round"], ["hall", "bogus"], ["run", "--speed", "0"],
              ["run", "--speed", "x"], ["run", "--bogus"], ["results", "-n"],
              ["hall", "start-round", "--in", "5s", "--at", "1"], ["hall", "secure"]]

    def scenario(language: str) -> str:
        monkeypatch.setenv("LC_ALL", LOCALES[language])
        said = []
        for argv, code in [*(([*h, "--help"], 0) for h in helps), *((e, 2) for e in errors)]:
            with pytest.raises(SystemExit) as exit_:
                cli.main(argv)
            assert exit_.value.code == code, argv
            out = capsys.readouterr()
            said.append(out.out + out.err)
        return "".join(said)
    in_each_language(scenario, data=(*TIMERD_WORDS, *signals))
    english, slovenian = scenario("en"), scenario("sl")
    assert english.startswith("usage: timerd [-h] [--version]")
    assert "options:\n  -h, --help            show this help message and exit" in english
    assert slovenian.startswith("uporaba: timerd [-h] [--version]")
    assert "timerd hall start-round: napaka: potreben je eden od argumentov --in --at" \
        in slovenian
    assert slovenian.count("timerd run: napaka: argument --speed: hitrost mora biti pozitiven "
                           "faktor") == 2  # 0 and x


#: What a config's problems show of it: key paths, values and the file's name.
CONFIG_WORDS = ("bogus", "gpio.buzer", "buzzer_pins", "buzer", "web.port", "match.clock",
                "clock", "ui.language", "auto", "web.enabled", "serial", "int", "web.token",
                "hall.port", "gpio.buzzer_pins", "web.trusted_proxies", "hall.username",
                "hall.allow_anonymous = true", "hall.hall", "web.host", "timerd hall secure",
                "docs/hall.md", '"Locking the broker down"', "section.key=value", "x", "de",
                "python3 -c 'import secrets; print(secrets.token_urlsafe(24))'",
                "timerd install", "UTF-8", "TOML", "KiB", "web.control", "HOST:PORT",
                "broken.toml", "latin1.toml", "Invalid value (at line 1, column 5)", "hall",
                "gpio.debounce_ms", "gpio.long_press_s", "hall.heartbeat_s",
                "signals.final.pattern_s", "signals.start.pattern_s", "control.idle_timeout_s",
                "max_connections", "ITHF")


def test_the_configs_errors(tmp_path: Path, config_file: Path,
                            monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> None:
    """`timerd config` (as `timerd run` and every command that loads the config) lists every
    problem of the config in the terminal's language: the schema's (an unknown key, a wrong
    type, a value not among the choices), a section's own checks, a file that is not TOML or
    not UTF-8, a bad `-o`, and `timerd hall` refused without a login (issue 41 item 5).
    Failed on the old code: all English."""
    (tmp_path / "broken.toml").write_text("x = = 1\n")
    (tmp_path / "latin1.toml").write_bytes("name = 'Žiga'\n".encode("cp1250"))
    overrides = ["bogus", "gpio.buzer=1", 'web.port="x"', "match.clock=3", 'ui.language="de"',
                 "web.enabled=1", "serial=3", 'web.token="short"', "hall.port=0",
                 "gpio.buzzer_pins=[99]", 'web.trusted_proxies=["x"]', "hall.enabled=true",
                 'hall.hall="a/b"', 'web.host=""', 'web.control="nowhere"',
                 # the bounds of the core's shared checks (timerd.core.checks)
                 "gpio.debounce_ms=500", "gpio.long_press_s=0", "hall.heartbeat_s=7200",
                 "signals.final.pattern_s=[1,1]", "signals.start.pattern_s=[40.0]",
                 "control.idle_timeout_s=9999"]
    runs = [["config", *(a for o in overrides for a in ("-o", o))],
            ["config", "--config", str(tmp_path / "broken.toml")],
            ["config", "--config", str(tmp_path / "latin1.toml")],
            ["hall", "status", "--once", "--store", str(tmp_path / "store")]]

    def scenario(language: str) -> str:
        monkeypatch.setenv("LC_ALL", LOCALES[language])
        said = []
        for argv in runs:
            assert cli.main(argv) == cli.EXIT_USAGE, argv
            out = capsys.readouterr()
            said.append(out.out + out.err)
        return "".join(said)
    in_each_language(scenario, data=(*CONFIG_WORDS, str(tmp_path)))
    english, slovak = scenario("en"), scenario("sk")
    assert "timerd: the config has errors:\n  -o 'bogus': write section.key=value\n" in english
    assert "  gpio.buzer: neznámy kľúč `buzer`; mysleli ste `buzzer_pins`?\n" in slovak
    assert "timerd hall: hall.username = '': hala nemá prihlásenie" in slovak
