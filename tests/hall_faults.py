"""The hall under faults (issue 41 item 7): a seeded, randomized tournament of real parts, and
a checker that compares what the desk stored and exports with what every table played.

One run (`run_tournament(seed, ...)`) sets up a hall as docs/hall.md says: `timerd hall
secure` for the tables, a mosquitto locked down by its snippet, a daemon per table logged in
by its login, the desk's commands (`timerd hall ...` processes) under the desk's login. Then,
round after round:

- the next round's schedule is loaded (`hall round load`), at random also early, while the
  round before is still in play (the tables refuse it then; it is loaded again after);
- `hall start-round` starts it on every table; goals are scored at the tables (their control
  sockets, as the score desk does);
- at random instants: a table SIGKILLed and started again mid-round (it comes back paused,
  and its referee resumes it), the broker SIGKILLed and started again, a desk command
  SIGKILLed mid-run;
- at random, a finished match is corrected at its table (`undo` of its last goal: a new
  revision), before or after the desk stored it;
- `hall results` collects the round (again after a killed run) until the desk has every
  result.

Afterwards `check` compares, for every table, its own results file (every match at its
latest revision) with the desk's export of each round (`hall results --json`) and its store:
every match exactly once, in its round, with its names, score and latest revision; nothing
exported that no table played; no match exported as final that its table has reopened.
What differs is a divergence, each said in a line.

`python -m tests.hall_faults --seeds 1-20 --tables 4 --rounds 4` runs the long set and prints
the figures docs/hall.md reports; tests/adapters/test_hall_faults.py runs a short one.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.hall_rig import (
    ROOT,
    Broker,
    Table,
    free_port,
    locked_broker,
    login,
    secure_hall,
    wait_until,
    write_profile,
)
from timerd.cli import request

#: Names with letters a schedule from a Slovenian or Slovak club has.
NAMES = ("Åsa Müller", "Jiří Novák", "Žan Šeško", "Ľubo Ďurica", "Anže Čeh", "Mia Kranjc",
         "Tomáš Král", "Nina Zupan")
#: The match: short, so that a round takes seconds (a training profile, not ITHF's 300 s).
PERIOD_S = 5.0
LEAD_S = 0.3
#: Each desk command's longest run before it counts as hung (real seconds).
DESK_TIMEOUT_S = 90.0
IN_PLAY = ("running", "paused", "break", "shootout", "scheduled", "pre_signal")


@dataclass
class Figures:
    """What one run did and found."""

    seed: int
    faults: Counter[str] = field(default_factory=Counter)
    divergences: list[str] = field(default_factory=list)
    matches: int = 0
    seconds: float = 0.0

    def line(self) -> str:
        faults = ", ".join(f"{k} {v}" for k, v in sorted(self.faults.items())) or "none"
        return (f"seed {self.seed}: {self.matches} matches, faults: {faults}; "
                f"{len(self.divergences)} divergences ({self.seconds:.0f} s)")


class Hall:
    """The hall of one run: the locked broker, the tables and the desk's login."""

    def __init__(self, directory: Path, tables: int, rng: random.Random,
                 figures: Figures) -> None:
        self.directory = directory
        self.rng = rng
        self.figures = figures
        self.names = [f"t{n}" for n in range(1, tables + 1)]
        port = free_port()
        self.secure = secure_hall(directory, port, *self.names)
        self.broker: Broker = locked_broker(directory, self.secure, port)
        profile = write_profile(directory / "short.toml", period_s=PERIOD_S, lead_s=LEAD_S)
        # every goal counts: no faceoff guard (ITHF 5.6's 3 s is most of a 5 s match)
        profile.write_text(profile.read_text() + 'faceoff_guard_s = "none"\n')
        self.tables = {name: Table(directory, name, port, profile, options=(
            "-o", f'hall.username="{login(self.secure, name)[0]}"',
            "-o", f'hall.password="{login(self.secure, name)[1]}"',
            "-o", "hall.allow_anonymous=false")) for name in self.names}
        self.desk_login = login(self.secure, "desk")
        self.store = directory / "desk"
        for table in self.tables.values():
            table.start()

    # -- the desk ---------------------------------------------------------------------------

    def desk_args(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "timerd", "hall", *args, "--store", str(self.store),
                "-o", f"hall.port={self.broker.port}", "-o", 'hall.host="127.0.0.1"',
                "-o", f'hall.username="{self.desk_login[0]}"',
                "-o", f'hall.password="{self.desk_login[1]}"']

    def desk(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.desk_args(*args), cwd=ROOT, capture_output=True, text=True,
                              timeout=DESK_TIMEOUT_S, check=False)

    def desk_killed(self, *args: str) -> None:
        """A desk command SIGKILLed at a random instant of its run."""
        proc = subprocess.Popen(self.desk_args(*args), cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(self.rng.uniform(0.2, 2.5))
        proc.kill()
        proc.wait()
        self.figures.faults["desk killed"] += 1

    # -- the tables -------------------------------------------------------------------------

    def status(self, name: str) -> dict[str, Any] | None:
        try:
            found: dict[str, Any] = request(self.tables[name].socket, "status", [])["status"]
        except (OSError, ValueError, KeyError):
            return None
        return found

    def connected(self, name: str) -> dict[str, Any] | None:
        self.tables[name].check_alive()
        status = self.status(name)
        return status if status and status.get("hall", {}).get("connected") else None

    def all_connected(self) -> None:
        for name in self.names:
            wait_until(lambda n=name: self.connected(n), 60, f"{name} connected")

    def at_table(self, name: str, command: str, *args: str) -> dict[str, Any] | None:
        try:
            return request(self.tables[name].socket, command, list(args))
        except (OSError, ValueError):
            return None

    def kill_table(self, name: str) -> None:
        """SIGKILL the table and start it again; its referee resumes it once it is back."""
        self.tables[name].stop(signal.SIGKILL)
        self.tables[name].start()
        self.figures.faults["table killed"] += 1
        status = wait_until(lambda: self.status(name), 60, f"{name} back")
        if status.get("phase") == "paused":
            self.at_table(name, "resume")

    def kill_broker(self) -> None:
        self.broker.kill()
        self.figures.faults["broker killed"] += 1
        time.sleep(self.rng.uniform(0.2, 2.0))
        self.broker.start()

    def stop(self) -> None:
        for table in self.tables.values():
            if table.proc is not None and table.proc.poll() is None:
                table.proc.terminate()
        for table in self.tables.values():
            table.stop()
        self.broker.stop()


# -- one tournament -------------------------------------------------------------------------

def schedule(directory: Path, round_id: str, names: list[str], rng: random.Random) -> Path:
    path = directory / f"{round_id}.csv"
    lines = ["round,table,home,away"]
    for table in names:
        home, away = rng.sample(NAMES, 2)
        lines.append(f"{round_id},{table},{home} {round_id},{away} {round_id}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def load(hall: Hall, path: Path, round_id: str) -> None:
    """`hall round load` until every table took the round's names."""
    wait_until(lambda: hall.desk("round", "load", str(path), "--round", round_id,
                                 "--timeout", "10").returncode == 0, 240,
               f"round {round_id} loaded on every table")


def start(hall: Hall, round_id: str) -> None:
    """`hall start-round` until every table has the round scheduled or in play."""
    def started() -> bool:
        hall.all_connected()
        pending = [n for n in hall.names
                   if (s := hall.status(n)) is None or s.get("round") != round_id
                   or s.get("phase") not in IN_PLAY]
        if not pending:
            return True
        hall.desk("start-round", "--in", "3s", "--round", round_id, "--timeout", "10",
                  *(a for n in pending for a in ("--table", n)))
        return False

    wait_until(started, 300, f"round {round_id} started on every table")


def play(hall: Hall, round_id: str, early: Path | None) -> None:
    """Goals and faults until every table's match of `round_id` is over."""
    deadline = time.monotonic() + 240
    restarted: dict[str, float] = {}  # table: when the desk may start it again
    while True:
        states = {n: hall.status(n) for n in hall.names}
        if all(s is not None and s.get("phase") == "finished"
               and (s.get("hall", {}).get("result") or {}).get("round") == round_id
               for s in states.values()):
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"round {round_id} not over in 240 s: " + ", ".join(
                f"{n} {(s or {}).get('phase')} in round {(s or {}).get('round')}, its "
                f"result of {((s or {}).get('hall', {}).get('result') or {}).get('round')}"
                for n, s in states.items()))
        name = hall.rng.choice(hall.names)
        roll = hall.rng.random()
        state = states[name] or {}
        if state.get("phase") == "running" and roll < 0.6:
            hall.at_table(name, "goal", hall.rng.choice(("home", "away")))
        elif state.get("phase") == "paused":
            hall.at_table(name, "resume")
        elif state.get("phase") == "idle" and time.monotonic() > restarted.get(name, 0):
            # killed in its pre-signal, it came back idle (docs/service.md: "press START for
            # a new pre-signal", ITHF 4.4): the desk starts the round there again
            hall.desk("start-round", "--in", "2s", "--round", round_id, "--table", name,
                      "--timeout", "5")
            hall.figures.faults["round started again"] += 1
            restarted[name] = time.monotonic() + 10
        elif roll < 0.66 and state.get("phase") in IN_PLAY:
            hall.kill_table(name)
        elif roll < 0.7:
            hall.kill_broker()
        elif roll < 0.74:
            hall.desk_killed("status", "--once")
        elif early is not None and roll < 0.8:
            hall.desk("round", "load", str(early), "--timeout", "5")  # refused while in play
            hall.figures.faults["round loaded early"] += 1
            early = None
        time.sleep(hall.rng.uniform(0.05, 0.6))


def correct(hall: Hall) -> None:
    """At random, a finished match corrected at its table: `undo` of its last goal."""
    for name in hall.names:
        if hall.rng.random() < 0.4:
            reply = hall.at_table(name, "undo")
            if reply and reply.get("ok"):
                hall.figures.faults["result corrected"] += 1


def collect(hall: Hall, round_id: str) -> None:
    """`hall results` until the desk has every table's result of the round (a run killed
    at random first)."""
    if hall.rng.random() < 0.5:
        hall.desk_killed("results", "--round", round_id, "--timeout", "5")
    wait_until(lambda: hall.desk("results", "--round", round_id, "--timeout", "10")
               .returncode == 0, 240, f"every result of {round_id} at the desk")


def run_tournament(directory: Path, seed: int, tables: int = 4, rounds: int = 3) -> Figures:
    """One seeded tournament under faults, then the check; its figures."""
    rng = random.Random(seed)
    figures = Figures(seed)
    began = time.monotonic()
    hall = Hall(directory, tables, rng, figures)
    try:
        hall.all_connected()
        rounds_ids = [f"R{k}" for k in range(1, rounds + 1)]
        files = {r: schedule(directory, r, hall.names, rng) for r in rounds_ids}
        load(hall, files["R1"], "R1")
        for index, round_id in enumerate(rounds_ids):
            start(hall, round_id)
            later = rounds_ids[index + 1] if index + 1 < rounds else None
            early = files[later] if later and rng.random() < 0.7 else None
            try:
                play(hall, round_id, early)
            except TimeoutError as exc:  # the tournament cannot go on: said, then checked
                figures.divergences.append(str(exc))
                rounds_ids = rounds_ids[:index + 1]
                break
            if rng.random() < 0.5:
                correct(hall)  # before the desk has the results
            collect(hall, round_id)
            if rng.random() < 0.5:
                correct(hall)  # after: the desk must take the new revision
                collect(hall, round_id)
            if later:
                load(hall, files[later], later)
        figures.divergences += check(hall, rounds_ids, files)
        figures.matches = tables * rounds
    finally:
        hall.stop()
        figures.seconds = time.monotonic() - began
    return figures


# -- the check --------------------------------------------------------------------------------

def table_results(path: Path) -> dict[str, dict[str, Any]]:
    """A table's results file: every match at its latest revision, by match id."""
    latest: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return latest
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            result = json.loads(line)
        except ValueError:
            continue  # a torn last line (docs/scoring.md)
        known = latest.get(result["match_id"])
        if known is None or result["revision"] >= known["revision"]:
            latest[result["match_id"]] = result
    return latest


def scheduled_names(files: dict[str, Path]) -> dict[tuple[str, str], tuple[str, str]]:
    names = {}
    for round_id, path in files.items():
        for line in path.read_text(encoding="utf-8").splitlines()[1:]:
            _, table, home, away = line.split(",")
            names[(round_id, table)] = (home, away)
    return names


def check(hall: Hall, rounds: list[str], files: dict[str, Path]) -> list[str]:
    """Every divergence between the tables' own results and the desk's export, each a line."""
    out: list[str] = []
    played: dict[str, dict[str, Any]] = {}  # match id: the table's latest result
    table_of: dict[str, str] = {}
    for name, table in hall.tables.items():
        for match_id, result in table_results(table.directory / "state" /
                                              "results.jsonl").items():
            played[match_id], table_of[match_id] = result, name
    names = scheduled_names(files)
    exported: dict[str, list[dict[str, Any]]] = {}
    for round_id in rounds:
        done = hall.desk("results", "--round", round_id, "--timeout", "10", "--json", "-")
        if done.returncode != 0:
            out.append(f"{round_id}: hall results exits {done.returncode}: "
                       f"{done.stderr.strip()[-300:]}")
        try:
            rows = json.loads(done.stdout)["matches"]
        except (ValueError, KeyError):
            out.append(f"{round_id}: no JSON export")
            continue
        for row in rows:
            exported.setdefault(str(row["match_id"]), []).append(row)
    for match_id, result in played.items():
        where = f"{table_of[match_id]} {result.get('round')} {match_id}"
        rows = exported.get(match_id, [])
        if len(rows) != 1:
            out.append(f"{where}: exported {len(rows)} times")
            continue
        row = rows[0]
        played_names = (result["teams"].get("home", ""), result["teams"].get("away", ""))
        schedule_names = names.get((str(result.get("round")), table_of[match_id]))
        # A result without names is filled in from the desk's schedule (docs/hall.md); the
        # table that lost them is a divergence of its own, below.
        shown = schedule_names if played_names == ("", "") and schedule_names else played_names
        expected = {"round": result.get("round"), "table": table_of[match_id],
                    "home": shown[0], "away": shown[1],
                    "home_goals": result["score"]["home"], "away_goals": result["score"]["away"],
                    "revision": result["revision"]}
        for key, value in expected.items():
            if row.get(key) != value:
                out.append(f"{where}: {key} exported {row.get(key)!r}, the table has {value!r}")
        if schedule_names and played_names != schedule_names:
            out.append(f"{where}: the table played it as {played_names[0]!r} - "
                       f"{played_names[1]!r}, the schedule says {schedule_names}")
    for match_id, rows in exported.items():
        if match_id not in played:
            out.append(f"{rows[0].get('table')} {rows[0].get('round')} {match_id}: exported, "
                       "but no table has played it")
    for name in hall.names:
        status = hall.status(name) or {}
        if status.get("phase") in IN_PLAY and status.get("match_id") in exported:
            out.append(f"{name}: match {status.get('match_id')} is in play again at its table "
                       "but exported as final")
        per_round = Counter(r.get("round") for r in played.values()
                            if table_of[r["match_id"]] == name)
        for round_id in rounds:
            if per_round[round_id] != 1:
                out.append(f"{name}: played {per_round[round_id]} matches of {round_id}")
    return out


def main(argv: list[str] | None = None) -> int:
    """`python -m tests.hall_faults --seeds 1-20`: the long run; its figures, one line per
    seed and a total; exit 1 when a run found a divergence."""
    parser = argparse.ArgumentParser(prog="python -m tests.hall_faults")
    parser.add_argument("--seeds", default="1-5", help="a range A-B or a list A,B,C")
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="keep each run's files under this directory")
    args = parser.parse_args(argv)
    if "-" in args.seeds:
        first, last = map(int, args.seeds.split("-"))
        seeds = list(range(first, last + 1))
    else:
        seeds = [int(s) for s in args.seeds.split(",")]
    import tempfile  # noqa: PLC0415

    total: Counter[str] = Counter()
    found = 0
    for seed in seeds:
        base = args.keep or Path(tempfile.mkdtemp(prefix="timerd-hall-faults-"))
        directory = base / f"seed-{seed}"
        directory.mkdir(parents=True, exist_ok=True)
        figures = run_tournament(directory, seed, args.tables, args.rounds)
        print(figures.line(), flush=True)
        for divergence in figures.divergences:
            print(f"  {divergence}", flush=True)
        total.update(figures.faults)
        found += len(figures.divergences)
        if args.keep is None:
            shutil.rmtree(directory, ignore_errors=True)
    print(f"{len(seeds)} seeds, {args.tables} tables, {args.rounds} rounds: faults "
          + ", ".join(f"{k} {v}" for k, v in sorted(total.items()))
          + f"; {found} divergences")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
