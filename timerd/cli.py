"""Command lines: `timerd` (the daemon and its helpers), `timerctl` (talks to a running daemon)."""

from __future__ import annotations

import argparse
import functools
import json
import logging
import math
import os
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from timerd import config as config_mod
from timerd import version
from timerd.config import profiles
from timerd.config.schema import SchemaError
from timerd.config.schema import said as said_problem
from timerd.core.effects import SignalKind
from timerd.i18n import LOG_TEXT, Messages, resolve
from timerd.tools import argparse_text, completion, desk_link, hall_args, install
from timerd.tools.argparse_text import Parser, said

EXIT_REFUSED = 1
EXIT_USAGE = 2
#: `timerctl goal` taken but not counted (ITHF 5.1: before the start; 5.6: the guard).
EXIT_NOT_COUNTED = 3
#: Its reader went away (`| head`): as a process that SIGPIPE ended, without a traceback.
EXIT_PIPE = 128 + 13


class _Version(argparse.Action):
    """`--version`, as argparse's own, but the version is looked up only when asked: the
    package metadata costs some 70 ms, which every start of the daemon would pay."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS,
                 help: str = "show program's version number and exit"
                 ) -> None:
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        print(f"{parser.prog} {version()}")
        parser.exit()


def _version_arg(parser: argparse.ArgumentParser, help_text: str) -> None:
    parser.add_argument("--version", action=_Version, help=help_text)


def _instance_arg(parser: argparse.ArgumentParser, help_text: str) -> None:
    parser.add_argument("--instance", metavar="NAME", help=help_text)


def _set_instance(name: str | None, msg: Messages = LOG_TEXT) -> str | None:
    """Select the instance for the path functions (and any child process); an error text."""
    if name is None:
        return None
    if install.check_instance_name(name):
        return msg("cli.instance_name", name=repr(name))
    os.environ[config_mod.INSTANCE_ENV] = name
    return None


def terminal_messages() -> Messages:
    """The terminal's language where no daemon's status says it (an error before any reply,
    a refusal, the desk's link): the config's `[ui] language`, its "auto" (or a config this
    user cannot read) the locale's (LC_ALL, LC_MESSAGES, LANG), as the desk pages'."""
    try:
        setting = config_mod.load().ui.language
    except SchemaError:  # not readable by this user (root:timerd 0640), or broken
        setting = "auto"
    return Messages(resolve(setting))


def _config_args(parser: argparse.ArgumentParser) -> None:
    _instance_arg(parser, said("cli.help.instance"))
    parser.add_argument("--config", type=Path, metavar="PATH",
                        help=said("timerd.help.config_file", path=config_mod.SYSTEM_CONFIG))
    parser.add_argument("-o", dest="overrides", action="append", default=[],
                        metavar="SECTION.KEY=VALUE", help=said("timerd.help.override"))
    parser.add_argument("--profile", metavar="NAME|PATH", help=said("timerd.help.profile"))


def _load_config(args: argparse.Namespace) -> config_mod.Config:
    overrides = list(args.overrides)
    if args.profile:
        overrides.append(f'match.profile="{args.profile}"')
    return config_mod.load(args.config, overrides)


def _speed(text: str) -> float:
    """`--speed`: a positive factor; anything else is told in the terminal's language (not
    argparse's "invalid _speed value", which names this function)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value > 0:
        raise argparse.ArgumentTypeError(argparse_text.spoken()("timerd.speed_positive"))
    return value


Main = Callable[[list[str] | None], int]


def quiet_pipe(main: Main) -> Main:
    """`main`, ending quietly when its reader goes away (`timerctl help | head`): no
    BrokenPipeError traceback, exit status 141 as a process that SIGPIPE ended."""
    @functools.wraps(main)
    def wrapper(argv: list[str] | None = None) -> int:
        try:
            try:
                code: int = main(argv)
                return code
            finally:
                sys.stdout.flush()  # here, not at exit, where the error could not be caught
        except BrokenPipeError:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return EXIT_PIPE
    return wrapper


def parser() -> argparse.ArgumentParser:
    """`timerd`'s parser: its help in the terminal's language when printed (argparse_text)."""
    top = Parser(prog="timerd", description=said("timerd.help.about"))
    _version_arg(top, said("cli.help.version"))
    sub = top.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help=said("timerd.help.run"))
    _config_args(run)
    run.add_argument("--simulate", action="store_true", help=said("timerd.help.simulate"))
    run.add_argument("--speed", type=_speed, default=1.0, metavar="FACTOR",
                     help=said("timerd.help.speed"))
    run.add_argument("--events", metavar="PATH", help=said("timerd.help.events"))
    run.add_argument("--control", type=Path, metavar="PATH", help=said("timerd.help.control"))
    cfg = sub.add_parser("config", help=said("timerd.help.config"))
    _config_args(cfg)
    cfg.add_argument("--show-secrets", action="store_true",
                     help=said("timerd.help.show_secrets"))
    cfg.add_argument("--annotated", action="store_true", help=said("timerd.help.annotated"))
    shown = sub.add_parser("profiles", help=said("timerd.help.profiles"))
    shown.add_argument("show", nargs="?", choices=["show"],
                       help=said("timerd.help.profiles_show"))
    shown.add_argument("name", nargs="?", help=said("timerd.help.profiles_name"))
    res = sub.add_parser("results", help=said("timerd.help.results"))
    _config_args(res)
    res.add_argument("-n", type=int, default=20, metavar="N", help=said("timerd.help.results_n"))
    res.add_argument("--file", type=Path, metavar="PATH", help=said("timerd.help.results_file"))
    res.add_argument("--json", action="store_true", help=said("timerd.help.results_json"))
    test = sub.add_parser("sound-test", help=said("timerd.help.sound_test"))
    _config_args(test)
    test.add_argument("signal", nargs="?", choices=[k.value for k in SignalKind],
                      metavar="SIGNAL", help=said("timerd.help.signal", signals=", ".join(
                          k.value for k in SignalKind)))
    test.add_argument("--beeps", type=int, default=1, metavar="N",
                      help=said("timerd.help.beeps"))
    test.add_argument("--simulate", action="store_true",
                      help=said("timerd.help.simulate_buzzer"))
    install.add_arguments(sub.add_parser("install", help=said("timerd.help.install")),
                          sub.add_parser("uninstall", help=said("timerd.help.uninstall")))
    doctor = sub.add_parser("doctor", help=said("timerd.help.doctor"))
    _config_args(doctor)
    doctor.add_argument("--service", action="store_true",
                        help=said("timerd.help.doctor_service"))
    doctor.add_argument("--root", type=Path, default=Path("/"), metavar="DIR",
                        help=said("timerd.help.doctor_root"))
    hall_args.add_parser(sub, _config_args)
    completion.add_arguments(sub.add_parser("completion", help=said("timerd.help.completion")))
    return top


@quiet_pipe
def main(argv: list[str] | None = None) -> int:
    argparse_text.speak(terminal_messages)  # its help and usage errors, when it gives any
    args = parser().parse_args(argv)
    if problem := _set_instance(getattr(args, "instance", None)):
        print(f"timerd: {problem}", file=sys.stderr)
        return EXIT_USAGE
    if args.command == "profiles":
        if args.show:
            try:
                print(profiles.builtin_text(args.name or ""), end="")
            except SchemaError as exc:
                print(f"timerd: {exc.problems[0]}", file=sys.stderr)
                return EXIT_USAGE
            return 0
        for name in profiles.builtin_names():
            print(f"{name:16} {profiles.load(name).description}")
        return 0
    if args.command == "completion":
        return completion.main(args, {"timerd": parser, "timerctl": lambda: _ctl_parser(
            completion.profile_commands())}, sys.stdout)
    if args.command in ("install", "uninstall"):
        return install.main(args)
    if args.command == "doctor":
        from timerd.tools import doctor  # noqa: PLC0415 (imports gpiozero)

        return doctor.main(args, sys.stdout)
    try:
        config = _load_config(args)
    except SchemaError as exc:  # in the terminal's language (issue 46)
        msg = argparse_text.spoken()
        print(f"timerd: {msg('config.has_errors')}", file=sys.stderr)
        for problem in exc.problems:
            print(f"  {said_problem(problem, msg)}", file=sys.stderr)
        return EXIT_USAGE
    if args.command == "config" and args.annotated:
        from timerd.config.reference import annotated  # noqa: PLC0415 (only for --annotated)

        sys.stdout.write(annotated(config, secrets=args.show_secrets))
        return 0
    if args.command == "config":
        sys.stdout.write(config.to_toml(secrets=args.show_secrets))
        return 0
    if args.command == "results":
        return _results(args.file or config.results_path(), args.n, args.json)
    if args.command == "sound-test":
        return _sound_test(config, args)
    if args.command == "hall":  # its commands speak the desk's language (issue 46)
        from timerd.tools import hall_text  # noqa: PLC0415

        with hall_text.speaking(config.ui.language):
            return _hall(config, args)
    return _run(config, args)


def _hall(config: config_mod.Config, args: argparse.Namespace) -> int:
    """`timerd hall ...`: the broker's users (`secure`), the board, or the desk."""
    if args.hall_command == "secure":
        from timerd.tools import hall_secure  # noqa: PLC0415

        return hall_secure.main(config.hall.hall, args)
    if args.hall_command == "board":
        from timerd.tools import hall_board  # noqa: PLC0415 (aiohttp only for the board)

        return hall_board.main(config, args)
    from timerd.tools import hall_desk  # noqa: PLC0415 (its MQTT client only for `hall`)

    return hall_desk.main(config, args)


def _results(path: Path | None, n: int, as_json: bool) -> int:
    from timerd.adapters.results.format import recent_results  # noqa: PLC0415

    if path is None:
        print("timerd: results are not kept (results.path = \"none\")", file=sys.stderr)
        return EXIT_USAGE
    records = recent_results(path, n)
    if as_json:
        for record in records:
            print(json.dumps(record))
        return 0
    if not records:
        print(f"no results in {path}")
        return 0
    print(format_results(records))
    return 0


def format_results(records: list[dict[str, Any]]) -> str:
    """Results as a table, one match a line, oldest first: when it started, its round and the
    sides' names (issue 30: "-" where none were given), its id, profile and score."""
    rows = [("started", "round", "home", "away", "match", "profile", "score", "how", "goals",
             "paused")]
    for r in records:
        score = r.get("score") or {}
        teams: dict[str, Any] = r["teams"] if isinstance(r.get("teams"), dict) else {}
        how = str(r.get("how"))
        if r.get("state") in ("reopened", "abandoned"):  # issue 42: no winner (for now)
            how = f"{r['state']}, no winner"
        if r.get("side"):
            how += f" ({r['side']})"
        if r.get("overtime_s") is not None:
            how += f" +{r['overtime_s']:.0f}s"
        if r.get("revision"):  # issue 28: only the latest revision is shown
            how += f", corrected (revision {r['revision']})"
        goals = r.get("goals") or []
        rejected = sum(not g.get("counted") for g in goals)
        rows.append((
            str(r.get("started") or "?")[:19].replace("T", " "),
            _shown(r.get("round")), _shown(teams.get("home")), _shown(teams.get("away")),
            str(r.get("match_id", "?")),
            str(r.get("profile", "?")),
            f"{score.get('home', '?')}:{score.get('away', '?')}",
            how,
            f"{len(goals) - rejected}+{rejected} not counted" if rejected else str(len(goals)),
            str(len(r.get("interruptions") or [])),
        ))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
                     for row in rows)


def _shown(name: Any) -> str:
    """A name from the results file as one cell: printable characters only (a file edited by
    hand may hold anything), at most 40; "-" for none."""
    text = "".join(c for c in str(name or "") if c.isprintable())[:40]
    return text or "-"


def _sound_test(config: config_mod.Config, args: argparse.Namespace) -> int:
    import asyncio  # noqa: PLC0415 (only for sound-test)

    from timerd.app import CannotStart, open_pins  # noqa: PLC0415
    from timerd.tools.sound_test import sound_test  # noqa: PLC0415

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        factory = open_pins("mock" if args.simulate else config.gpio.pin_factory,
                            config.gpio.chip)
    except CannotStart as exc:
        print(f"timerd: buzzer not tested: {exc}", file=sys.stderr)
        factory = None
    kinds = [SignalKind(args.signal)] if args.signal else list(SignalKind)
    ok = asyncio.run(sound_test(config, kinds, max(args.beeps, 1), factory, print))
    return 0 if ok and factory is not None else EXIT_REFUSED


def _run(config: config_mod.Config, args: argparse.Namespace) -> int:
    from timerd.app import CannotStart, RunOptions, run  # noqa: PLC0415 (gpiozero: `run`)

    interactive = args.simulate and sys.stdin.isatty() and args.events != "-"
    logging.basicConfig(level=config.log.level.upper(), stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    options = RunOptions(simulate=args.simulate, speed=args.speed, events=args.events,
                         control=args.control, interactive=interactive)
    try:
        run(config, options)
    except CannotStart as exc:
        print(f"timerd: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return 0


# -- timerctl -------------------------------------------------------------------------------

def find_socket(flag: Path | None) -> Path:
    """The control socket timerctl talks to, the first of: `--socket PATH`, `$TIMERD_SOCKET`,
    `control.socket` in the config (or control.sock in its `state.runtime_directory`), the
    service's /run/timerd/control.sock if it exists
    (/run/timerd-NAME/ for `--instance NAME`), then the per-user runtime directory that
    `timerd run` uses by hand ($XDG_RUNTIME_DIR/timerd, else /tmp/timerd-UID)."""
    if flag is not None:
        return flag
    if env := os.environ.get("TIMERD_SOCKET"):
        return Path(env)
    try:
        config = config_mod.load()
    except SchemaError:  # not readable by this user (root:timerd 0640), or broken: not ours
        config = None
    if config is not None and (config.control.socket or config.state.runtime_directory):
        return config.control_socket()
    if (system := config_mod.system_socket()).exists():
        return system
    return config_mod.runtime_dir() / "control.sock"


def _unreachable(path: Path, exc: OSError, msg: Messages = LOG_TEXT) -> str:
    """Why timerctl cannot talk to `path`, and what to do about it."""
    if isinstance(exc, PermissionError):
        return msg("cli.not_allowed", path=path)
    if isinstance(exc, FileNotFoundError | ConnectionRefusedError):
        return msg("cli.not_listening", path=path)
    return msg("cli.cannot_reach", path=path, error=exc)


def request(path: Path, command: str, args: list[str], timeout_s: float = 5.0) -> dict[str, Any]:
    """Send one command to the daemon at `path` and return its reply."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout_s)
        sock.connect(str(path))
        sock.sendall(json.dumps({"command": command, "args": args}).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    reply: dict[str, Any] = json.loads(data)
    return reply


def _refusal(reply: dict[str, Any], msg: Messages) -> str:
    """Why the daemon refused, in this terminal's language when the reply gives its code."""
    code, params = reply.get("code"), reply.get("params")
    if isinstance(code, str) and isinstance(params, dict):
        return msg.notice(code, params)
    return str(reply.get("error"))


def format_status(status: dict[str, Any], msg: Messages | None = None) -> str:
    """`timerctl status` as text, in the daemon's `[ui] language` (its status says which;
    "auto" is this terminal's locale), from the message catalogue."""
    from timerd.core.display import shown_clock  # noqa: PLC0415

    msg = msg or Messages(resolve(str(status.get("language") or "auto")))
    width = _width(msg, status.get("display") or [])
    row = _row(msg, width)
    face = status.get("clock_face") or {}
    clock = str(face.get("text") or shown_clock(status["remaining_s"])) + (
        "  " + msg("st.period", n=status["period"], of=status["periods"])
        if status["periods"] > 1 else "")
    # Under net time (ISBHF 407) a stopped clock is the whistle's stop, not an interruption.
    stop = status.get("clock_rule") == "stop"
    phase = "stopped" if stop and status["phase"] == "paused" else status["phase"]
    lines = [row("st.profile", status["profile"]),
             row("st.phase", msg.get(f"term.phase.{phase}", phase)),
             row("st.clock", clock)]
    if status.get("next_profile"):
        lines.append(row("st.next_profile", status["next_profile"]))
    if status.get("table"):
        lines.append(row("st.table", status["table"]))
    if status.get("version"):
        lines.append(row("st.version", status["version"]))
    teams = status.get("teams") or {}
    if any(teams.values()):
        named = f"{msg.side('home', teams)} - {msg.side('away', teams)}"
        lines.append(row("st.teams", named + (f" ({msg('st.round', round=status['round'])})"
                                             if status.get("round") else "")))
    if status.get("start_in_s") is not None:
        lines.append(row("st.start_in", f"{status['start_in_s']:.1f} s"))
    if status.get("interruption_s") is not None:
        lines.append(row("st.stopped" if stop else "st.paused",
                         msg("st.this_stoppage" if stop else "st.this_interruption",
                             s=f"{status['interruption_s']:.1f}")))
    lines.append(msg("st.stoppages" if stop else "st.interruptions", n=status["interruptions"],
                     s=f"{status['paused_total_s']:.1f}"))
    if status.get("last_signal"):
        lines.append(row("st.last", msg.signal(status["last_signal"])))
    lines.extend(_score_lines(status, msg, row))
    # What the rule modules show (`Status.display`): no line here names one of their keys.
    rows, module_lines = msg.shown(status)
    lines.extend(f"{label:<{width}} {value}" for label, value in rows)
    lines.extend(module_lines)
    if "speaker" in status:
        state = msg.get(f"st.speaker.{status['speaker']}", status["speaker"])
        lines.append(row("st.sound", msg("st.speaker", state=state)
                         + (f" ({msg('st.muted')})" if status["speaker_muted"] else "")
                         + (f", {msg('st.buzzer_muted')}" if status["buzzer_muted"] else "")))
    return "\n".join(lines + _storage_lines(status, msg))


def _storage_lines(status: dict[str, Any], msg: Messages) -> list[str]:
    """What the card cannot keep (a full or failing state directory): every reply shows it."""
    storage = status.get("storage") or {"ok": True}
    lines = [msg("cli.storage_fault", what=msg.get(f"storage.{what}", what), why=why)
             for what, why in (storage.get("faults") or {}).items()]
    if storage.get("pending_results") and not storage["ok"]:
        lines.append(msg("cli.storage_pending", n=storage["pending_results"]))
    return lines


def action_line(command: str, reply: dict[str, Any], msg: Messages | None = None) -> str:
    """What an action did, in one line of the daemon's language: the notices, goal, reopen or
    corrected result its reply's `events` give, then where the match stands (the phase, the
    clock, the score with the teams' names); below it only what the card cannot keep.
    `timerctl status` gives the whole status."""
    from timerd.core.display import shown_clock  # noqa: PLC0415

    status = reply["status"]
    msg = msg or Messages(resolve(str(status.get("language") or "auto")))
    teams = status.get("teams") or {}
    said = [_event_said(event, teams, msg) for event in reply.get("events") or []]
    stop = status.get("clock_rule") == "stop" and status["phase"] == "paused"
    where = msg.get(f"term.phase.{'stopped' if stop else status['phase']}", status["phase"])
    face = status.get("clock_face") or {}
    where += " " + str(face.get("text") or shown_clock(status["remaining_s"]))
    if (score := status.get("score")) is not None:
        where += (f", {msg.side('home', teams)} {score['home']}:{score['away']} "
                  f"{msg.side('away', teams)}")
    if result := status.get("result"):
        where += ", " + _result_said(result, teams, msg)
    said = [s for s in said if s] or [command]  # the command itself when nothing else says
    return "\n".join(["; ".join(said) + f" - {where}", *_storage_lines(status, msg)])


def _event_said(event: dict[str, Any], teams: dict[str, str], msg: Messages) -> str:
    """An event record of a reply as a sentence ("" for one the line's end says anyway)."""
    kind = event.get("type")
    if kind == "notice":
        return msg.notice(event["code"], event.get("params") or {}, teams)
    if kind == "goal":
        side = msg.side(event["side"], teams)
        if event["counted"]:
            return msg("goal.counted", side=side,
                       score=f"{event['score']['home']}:{event['score']['away']}")
        return msg("goal.not_counted", side=side, reason=msg.reason(event["reason"]))
    if kind == "reopened":
        return msg("reply.reopened", goal=event["goal"], revision=event["revision"])
    if kind == "result_corrected":
        return msg("reply.corrected", revision=event["revision"])
    return ""


def _result_said(result: dict[str, Any], teams: dict[str, str], msg: Messages) -> str:
    """A match's result: how it was decided and the winner, by the team's name."""
    winner = result.get("winner")
    return msg("st.winner", how=msg.get(f"how.{result['how']}", result["how"]),
               winner=msg.side(winner, teams) if winner else msg("st.none"))


#: The labels of `timerctl status`'s rows: their column is as wide as the longest in the
#: language (at least 9), so the values line up in every language (issue 31).
ROW_KEYS = ("st.profile", "st.phase", "st.clock", "st.next_profile", "st.version", "st.table",
            "st.teams", "st.start_in", "st.paused", "st.stopped", "st.last", "st.score",
            "st.overtime", "st.result", "st.sound")


def _width(msg: Messages, display: list[dict[str, Any]]) -> int:
    """The labels' column: as wide as the longest label in the language, at least 9; the
    rule modules' rows whose labels are the catalogue's (`display`) too."""
    labels = [msg(key) for key in ROW_KEYS]
    labels += [msg.label(e) for e in display if isinstance(e.get("label"), str)]
    return max(9, *(len(label) for label in labels))


def _row(msg: Messages, width: int) -> Callable[[str, object], str]:
    """A status line: the label in its column, then the value."""
    def row(key: str, value: object) -> str:
        return f"{msg(key):<{width}} {value}"
    return row


def _score_lines(status: dict[str, Any], msg: Messages,
                 row: Callable[[str, object], str]) -> list[str]:
    """The score and the scoring rules' state, when the daemon reports them."""
    score = status.get("score")
    if score is None:
        return []
    lines = [row("st.score", f"{score['home']}:{score['away']}")]
    if status.get("overtime") and status.get("overtime_s") is not None:
        lines.append(row("st.overtime", f"{status['overtime_s']:.1f} s"))
    if status.get("faceoff_guard_s") is not None:
        lines.append(msg("st.guard", s=f"{status['faceoff_guard_s']:.1f}"))
    if status.get("faceoff_pending"):
        lines.append(msg("st.faceoff_pending"))
    if goals := status.get("goals"):
        last = goals[-1]
        verdict = msg("st.counted") if last["counted"] else msg(
            "st.no_goal", reason=msg.reason(last["reason"]))
        lines.append(msg("st.last_goal", side=msg.side(last["side"]),
                         s=f"{last['match_time_s']:.1f}", verdict=verdict))
    if result := status.get("result"):
        lines.append(row("st.result", _result_said(result, status.get("teams") or {}, msg)))
    return lines


def _desk(path: Path, args: argparse.Namespace, msg: Messages) -> int:
    """`timerctl desk`: a one-time pairing link of the running daemon, as a QR code and as
    text; `--list` the paired devices, `--revoke ID` one unpaired (issue 43); in the
    terminal's language."""
    words = ["list"] if args.list else ["revoke", args.revoke] if args.revoke else []
    try:
        reply = _ask(path, "desk", words, msg)
    except CannotAsk as exc:
        print(f"timerctl: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not reply.get("ok"):
        unknown = reply.get("code") == "refused.unknown"  # a daemon without a web server
        print(f"timerctl: {msg('cli.desk.web_off') if unknown else _refusal(reply, msg)}",
              file=sys.stderr)
        return EXIT_USAGE if unknown else EXIT_REFUSED
    if args.json:
        print(json.dumps(reply, indent=2))
    elif "devices" in reply:
        print(desk_link.format_devices(reply["devices"], msg=msg))
    else:
        desk_link.print_desk(reply, sys.stdout, msg=msg)
    return 0


class CannotAsk(Exception):
    """The daemon cannot be asked: why, and what to do (`down`: nothing answers there)."""

    def __init__(self, why: str, *, down: bool = False) -> None:
        super().__init__(why)
        self.down = down


def _ask(path: Path, command: str, words: list[str], msg: Messages) -> dict[str, Any]:
    """The daemon's reply to `command` over the socket `path`, or CannotAsk (why, in `msg`'s
    language)."""
    try:
        config_mod.trusted_socket(path)
        return request(path, command, words)
    except config_mod.UnsafePath as exc:
        raise CannotAsk(msg(exc.key, **exc.params) if exc.key else str(exc)) from None
    except OSError as exc:
        raise CannotAsk(_unreachable(path, exc, msg), down=True) from None
    except ValueError as exc:
        raise CannotAsk(msg("cli.cannot_reach", path=path, error=exc)) from None


def _usage(name: str, args: list[str]) -> str:
    """A command as `timerctl help` lists it: `goal <side> [scorer] [assist...]`."""
    words = [f"[{a[:-1]}]" if a.endswith("?") else f"[{a}]" if a.endswith("...") else f"<{a}>"
             for a in args]
    return " ".join([name, *words])


def format_commands(reply: dict[str, Any], msg: Messages | None = None) -> str:
    """`timerctl help`: every command the running daemon's profile (and its adapters)
    offer, with its arguments, from its `commands` reply, then what each argument is (the
    catalogue's `arg.*`, in the daemon's language)."""
    status = reply.get("status") or {}
    msg = msg or Messages(resolve(str(status.get("language") or "auto")))
    commands = reply.get("commands") or []
    lines = [msg("help.title", profile=status.get("profile", "?"))]
    lines += [f"  {_usage(c['command'], c['args'])}" for c in commands]
    lines.append(f"  help    {msg('help.this_list')}")
    names = dict.fromkeys(a.rstrip("?").removesuffix("...") for c in commands for a in c["args"])
    if names:
        lines.append(msg("help.arguments"))
        lines += [f"  {name:<12} {_argument_said(name, msg)}" for name in names]
    return "\n".join(lines)


def _argument_said(name: str, msg: Messages) -> str:
    """What an argument of a command is: a fixed choice its words, another the catalogue's
    sentence for its name."""
    if "|" in name:
        return msg("arg.choice", words=", ".join(name.split("|")))
    return msg.get(f"arg.{name}", name)


def _ctl_parser(commands: dict[str, tuple[str, ...]] | None = None,
                msg: Messages = LOG_TEXT) -> argparse.ArgumentParser:
    """timerctl's parser, its help in `msg`'s language; with `commands` (for completion), a
    subcommand per command with its arguments instead of any word the daemon may take."""
    top = Parser(prog="timerctl", add_help=False, description=msg("cli.help.about"))
    top.add_argument("-h", "--help", action="store_true", help=msg("cli.help.help"))
    _version_arg(top, msg("cli.help.version"))
    top.add_argument("--socket", type=Path, metavar="PATH", help=msg("cli.help.socket"))
    _instance_arg(top, msg("cli.help.instance"))
    top.add_argument("--json", action="store_true", help=msg("cli.help.json"))
    top.add_argument("--list", action="store_true", help=msg("cli.help.list"))
    top.add_argument("--revoke", metavar="ID", help=msg("cli.help.revoke"))
    if commands is not None:
        completion.add_commands(top, commands)
        return top
    top.add_argument("command", nargs="?", help=msg("cli.help.command"))
    top.add_argument("args", nargs="*", help=msg("cli.help.args"))
    return top


@quiet_pipe
def timerctl(argv: list[str] | None = None) -> int:
    msg = terminal_messages()
    argparse_text.speak(lambda: msg)
    top = _ctl_parser(msg=msg)
    args = top.parse_args(argv)
    if "--json" in args.args:  # `timerctl status --json` reads naturally; accept it there too
        args.args.remove("--json")
        args.json = True
    if args.help:
        top.print_help()
        print()
    elif args.command is None:
        top.error(msg("cli.give_command"))
    if problem := _set_instance(args.instance, msg):
        print(f"timerctl: {problem}", file=sys.stderr)
        return EXIT_USAGE
    path = find_socket(args.socket)
    if (args.list or args.revoke) and args.command != "desk":
        top.error(msg("cli.list_with_desk"))
    if args.command == "desk":
        return _desk(path, args, msg)
    listing = args.help or args.command == "help"
    try:
        reply = _ask(path, "commands" if listing else args.command, args.args, msg)
    except CannotAsk as exc:
        if args.help and exc.down:  # the help above stands; its commands need a daemon
            print(msg("cli.its_commands", error=exc))
            return 0
        print(f"timerctl: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if listing and reply.get("ok"):
        print(json.dumps(reply["commands"], indent=2) if args.json else format_commands(reply))
        return 0
    not_counted = _not_counted(args.command, reply)
    if not_counted:  # first, before the status: the goal the operator gave does not stand
        print(f"timerctl: {not_counted}", file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps(reply.get("status", reply), indent=2))
    elif reply.get("ok") and args.command == "status":
        print(format_status(reply["status"]))
    elif reply.get("ok"):  # an action: what it did, in one line
        print(action_line(args.command, reply))
    if reply.get("warning"):  # applied, but not on disk (docs/service.md)
        print(f"timerctl: {_warning(reply, msg)}", file=sys.stderr)
    if not reply.get("ok"):
        print(f"timerctl: {_refusal(reply, msg)}", file=sys.stderr)
        return EXIT_REFUSED
    return EXIT_NOT_COUNTED if not_counted else 0


def _not_counted(command: str, reply: dict[str, Any]) -> str:
    """For a `goal` the match took but did not count (before the start, in the face-off
    guard: ITHF 5.1, 5.6): the verdict, in the daemon's language; else ""."""
    status = reply.get("status") or {}
    goals = status.get("goals") or []
    if command != "goal" or not reply.get("ok") or not goals or goals[-1]["counted"]:
        return ""
    msg = Messages(resolve(str(status.get("language") or "auto")))
    return msg("st.no_goal", reason=msg.reason(goals[-1]["reason"]))


def _warning(reply: dict[str, Any], msg: Messages) -> str:
    """A command applied but not on disk, in the terminal's language: the reply's `problem`
    (a storage fault as the daemon describes it) where it gives one, else its `warning`."""
    warning = str(reply["warning"])
    if reply.get("durable") is False and "problem" in reply:
        warning = msg("reply.not_durable", problem=reply["problem"])
    return msg("cli.warning", warning=warning)
