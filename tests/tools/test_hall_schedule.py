"""The desk's schedule file (`timerd hall round load`): what it takes, and how it refuses a
file it cannot use, naming the line, before anything is sent to a table."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from timerd import cli
from timerd.tools import hall_round
from timerd.tools.hall_round import Assignment, ScheduleError, read_schedule


def schedule(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "round.csv"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def test_a_spreadsheets_csv_utf8_with_its_byte_order_mark_and_diacritics(tmp_path: Path) -> None:
    text = "\ufeffround,table,home,away\nR1,01,Åsa Müller,Jiří Novák\n\nR2,01,Łukasz Ż,Søren Ø\n"
    assert read_schedule(schedule(tmp_path, text), "R1") == (
        "R1", [Assignment("01", "Åsa Müller", "Jiří Novák")])
    one_round = "table,away,home,round\n02, Bo ,Al,Final\n"  # any column order, cells trimmed
    assert read_schedule(schedule(tmp_path, one_round), None) == (
        "Final", [Assignment("02", "Al", "Bo")])


@pytest.mark.parametrize(("text", "message"), [
    ("round,table,home\nR1,01,A\n",
     "must name the columns round,table,home,away (separated by , or ;); missing away"),
    ("round,table,home,away\nR1,01,A,B\nR1,01,C,D\n",
     "line 3: table 01 has a match in round R1 already (line 2)"),
    ("round,table,home,away\nR1,,A,B\n", "line 2: no table"),
    ("round,table,home,away\nR1,01," + "x" * 41 + ",B\n",
     "line 2: home must be at most 40 printable characters"),
    ("round,table,home,away\nR1,01,A,B\nR2,02,C,D\n", "holds 2 rounds (R1, R2); say which"),
    (b"round,table,home,away\nR1,01,M\xfcller,B\n", "not UTF-8"),
])
def test_a_schedule_it_cannot_use_is_refused_naming_the_line(
        tmp_path: Path, text: str | bytes, message: str) -> None:
    with pytest.raises(ScheduleError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_schedule(schedule(tmp_path, text), None)


def test_a_schedule_over_the_limits_is_not_read(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hall_round, "MAX_SCHEDULE_BYTES", 100)
    with pytest.raises(ScheduleError, match="larger than 100 bytes"):
        read_schedule(schedule(tmp_path, "round,table,home,away\n" + "R1,01,A,B\n" * 20), None)
    monkeypatch.setattr(hall_round, "MAX_SCHEDULE_BYTES", 1 << 20)
    monkeypatch.setattr(hall_round, "MAX_SCHEDULE_ROWS", 3)
    rows = "".join(f"R1,{n},A,B\n" for n in range(5))
    with pytest.raises(ScheduleError, match="more than 3 rows"):
        read_schedule(schedule(tmp_path, "round,table,home,away\n" + rows), None)
    with pytest.raises(ScheduleError, match="No such file"):
        read_schedule(tmp_path / "missing.csv", None)


def round_load(path: Path) -> tuple[int, str]:
    """`timerd hall round load FILE` as the command line runs it: a file it cannot use is
    refused before the broker is asked (none listens on port 9 here)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(["hall", "round", "load", str(path), "-o", "hall.port=9",
                         "-o", 'hall.host="127.0.0.1"', "-o", "hall.allow_anonymous=true"])
    return code, err.getvalue()


@pytest.mark.parametrize(("text", "message"), [
    # issue 34 item 4: old code, a traceback (csv.Error: field larger than field limit).
    ("round,table,home,away\nR1,01,A,B\nR1,02,\"" + "x" * 200_000 + "\",B\n",
     "line 3: a field longer than 131,072 characters (names are at most 40)"),
    # Old code: "home must be at most 40 printable characters" about the file's rest.
    ('round,table,home,away\nR1,01,A,B\nR1,02,"Åsa Müller,B\nR1,03,C,D\n',
     'line 3: a quote (") that is never closed: the field runs on to the end of the file'),
    # An error that lists rounds lists a few (old code: all 40).
    ("round,table,home,away\n" + "".join(f"R{n:02},01,A,B\n" for n in range(40)),
     "holds 40 rounds (R00, R01, R02, R03, R04 and 35 more); say which with --round"),
], ids=["oversized-field", "unclosed-quote", "many-rounds"])
def test_the_command_line_names_the_line_of_a_broken_schedule(
        tmp_path: Path, text: str, message: str) -> None:
    code, err = round_load(schedule(tmp_path, text))
    assert code == 2
    assert err.startswith("timerd hall round load: ")
    assert message in err, err
    assert len(err) < 300


def test_a_schedule_excel_saved_in_sl_or_sk_settings_separated_by_semicolons(
        tmp_path: Path) -> None:
    """Issue 30 item 5: old code said the columns were missing."""
    text = "\ufeffround;table;home;away\nR1;01;Åsa Müller;\"Novák; Jiří\"\nR1;02;C;D\n"
    assert read_schedule(schedule(tmp_path, text), None) == (
        "R1", [Assignment("01", "Åsa Müller", "Novák; Jiří"), Assignment("02", "C", "D")])
