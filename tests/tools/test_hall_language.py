"""`timerd hall ...` speaks the desk's language (issue 46 item 1): the desk's status, the
tables' outcomes, refusals, schedule errors, results, usage errors of our own, an unreachable
broker and `hall secure`, in the desk config's `[ui] language` (or the locale's, for "auto"),
from the message catalogue. Each scenario runs in English, Slovenian and Slovak against a real
mosquitto and real tables (tests/hall_rig.py); no line of the sl/sk output may be English
(tests/untranslated.py), apart from data: names, table ids, rounds and numbers. What a table
says of a command it took (its reply's `code` and `params`: the names it took, the start it
scheduled, the phase it is in) is said in the desk's language too."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hall_rig import ROOT, Broker, free_port, running_tables
from tests.untranslated import untranslated

#: Real processes, a broker and real time: the e2e tier (generous margins).
pytestmark = pytest.mark.e2e

LOCALES = {"en": "en_GB.UTF-8", "sl": "sl_SI.UTF-8", "sk": "sk_SK.UTF-8"}
SCHEDULE = """round,table,home,away
R1,a1,Åsa Müller,Jiří Novák
R1,a2,Łukasz Żółw,Søren Ødegård
R2,a1,Åsa Müller,Łukasz Żółw
"""
#: Data in every language: the tables, rounds and names. What a table says of a command it
#: took is not: its reply's `code` and `params` say it in the desk's language (a reply's
#: English `detail` is for desks before issue 46).
DATA = ("a1", "a2", "a9", "R1", "R2", "R9", "Åsa Müller", "Jiří Novák", "Łukasz Żółw",
        "Søren Ødegård", "hall", "desk", "mosquitto", "chrony", "sudo install",
        "sudo cp", "sudo systemctl restart", "timerd.toml", "toml", "apt install")


def hall(language: str, port: int, *args: str, config: str = "") -> str:
    """A `timerd hall` command in a terminal of `language`; all it printed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LC_")} | {
        "LC_ALL": LOCALES[language]}
    done = subprocess.run(
        [sys.executable, "-m", "timerd", "hall", *args, "-o", f"hall.port={port}",
         "-o", 'hall.host="127.0.0.1"', "-o", "hall.allow_anonymous=true",
         *(["-o", config] if config else [])],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False, env=env)
    assert done.returncode in (0, 1, 2), done.stderr
    return done.stdout + done.stderr


def in_each_language(scenario: Callable[[str], str]) -> dict[str, str]:
    """What `scenario` printed in en, sl and sk; no line of the sl and sk output is English."""
    said = {language: scenario(language) for language in LOCALES}
    for language in ("sl", "sk"):
        assert said[language].strip(), language
        assert untranslated(language, said[language], said["en"], DATA) == [], (
            language, said[language])
    return said


def test_the_desk_commands_speak_the_desks_language(mosquitto: Broker, tmp_path: Path) -> None:
    """Two idle tables a1 and a2; every command leaves them as they were (a round of the
    scenario that starts names a table that is not there), so each language sees the same."""
    schedule = tmp_path / "schedule.csv"
    schedule.write_text(SCHEDULE, encoding="utf-8")
    broken = tmp_path / "broken.csv"
    broken.write_text("round,table,home,away\nR1,,x,y\n", encoding="utf-8")
    nobody = free_port()

    def scenario(language: str) -> str:
        store = ["--store", str(tmp_path / f"store-{language}")]
        run = [["status", "--once", *store],
               ["pause", *store],  # idle tables refuse, each with its reason
               ["resume", "--table", "a2", *store],
               ["reset", *store],
               ["start-round", "--in", "soon", *store],
               ["start-round", "--at", "25:00", *store],
               ["start-round", "--in", "600s", "--round", "R9", "--table", "a9", *store],
               ["round", "load", str(schedule), *store],
               ["round", "load", str(schedule), "--round", "R7", *store],
               ["round", "load", str(broken), *store],
               ["round", "load", str(schedule), "--round", "R1", *store],
               ["start-round", "--in", "600s", "--table", "a1", *store],
               ["reset", "a1", "a2", *store],  # a1 scheduled, a2 idle: both idle again
               ["results", "--round", "R1", "--timeout", "1", *store],
               ["results", "--round", "R8", "--timeout", "1", *store]]
        said = [hall(language, mosquitto.port, *args) for args in run]
        said.append(hall(language, nobody, "status", "--once", *store))
        said.append(hall(language, mosquitto.port, "secure", "--tables", "a1,a1",
                         "--out", str(tmp_path / f"secure-{language}")))
        said.append(hall(language, mosquitto.port, "secure", "--tables", "a1,a2",
                         "--out", str(tmp_path / f"secure-{language}")))
        return "".join(said)
    with running_tables(mosquitto, tmp_path, ("a1", "a2"), period_s=60, lead_s=0.3):
        slovenian = in_each_language(scenario)["sl"]
    assert "povezanih miz: 2 od 2" in slovenian
    assert "ZAVRNJENO" in slovenian
    # What the tables did, from their replies' code and params (English before issue 46).
    assert "Åsa Müller - Jiří Novák, krog R1" in slovenian
    assert "začetek določen: začetni signal čez 59" in slovenian


def test_the_configs_language_comes_before_the_locale(mosquitto: Broker) -> None:
    said = hall("sl", mosquitto.port, "reset", config='ui.language="sk"')
    assert "uveďte stoly alebo --all-finished" in said
