"""`timerd hall results --excel` as a Slovenian or Slovak spreadsheet reads it (issue 41 item
6): real tables play a round on a real mosquitto, the real desk exports it, and headless
LibreOffice (Debian's libreoffice-calc-nogui) imports the file with the sl-SI and sk-SK
locales. Every number of the export must arrive as that number, not as text and not a
thousand times too big.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import require
from tests.hall_rig import ROOT, START_AHEAD_S, Broker, running_tables
from timerd.tools.hall_round import MATCH_COLUMNS

#: Real processes, a broker, LibreOffice and real time: the e2e tier (generous margins).
pytestmark = pytest.mark.e2e

#: LibreOffice's language ids (Windows LCIDs) of the locales a spreadsheet imports with.
LOCALES = {"sl": 1060, "sk": 1051}
NS = {"table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
      "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
      "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0"}


def imported(csv_file: Path, language_id: int, work: Path) -> list[list[tuple[str, str]]]:
    """`csv_file` opened by LibreOffice as a spreadsheet in locale `language_id` (";"
    separated, UTF-8, special numbers detected, as a user's import dialog does): each row's
    cells as (value type, value), read from the flat ODF it saves."""
    out = work / f"out-{language_id}"
    subprocess.run(
        ["soffice", f"-env:UserInstallation=file://{work / 'profile'}", "--headless",
         f"--infilter=CSV:59,34,76,1,,{language_id},false,true", "--convert-to", "fods",
         "--outdir", str(out), str(csv_file)],
        capture_output=True, timeout=300, check=True)
    sheet = ET.parse(out / f"{csv_file.stem}.fods").getroot()
    rows = []
    for row in sheet.iterfind(".//table:table-row", NS):
        cells = []
        for cell in row.iterfind("table:table-cell", NS):
            kind = cell.get(f"{{{NS['office']}}}value-type", "")
            value = cell.get(f"{{{NS['office']}}}value") if kind == "float" else "".join(
                "".join(p.itertext()) for p in cell.iterfind("text:p", NS))
            repeat = int(cell.get(f"{{{NS['table']}}}number-columns-repeated", "1"))
            cells += [(kind, value or "")] * min(repeat, len(MATCH_COLUMNS))
        rows.append(cells[:len(MATCH_COLUMNS)])
    return rows


def test_an_excel_export_in_sl_or_sk_imports_with_every_number_right(
        mosquitto: Broker, tmp_path: Path) -> None:
    """Fails on the old code: LibreOffice's sl-SI import read played_s 1.25 as 125 and a
    whole number written as a float (300.0) as text."""
    require(shutil.which("soffice") is not None, "LibreOffice (libreoffice-calc-nogui)")
    with running_tables(mosquitto, tmp_path, ("t1", "t2"), period_s=1.25, lead_s=0.2) as (
            observer, tables):
        observer.publish("timerd/hall/cmd", {"command": "start_round", "round": "R1",
                                             "at": time.time() + START_AHEAD_S})
        for table in tables:
            table.wait_event(lambda e: e.get("state") == "finished", 30, "its match's end")

        def results(*args: str) -> str:
            done = subprocess.run(
                [sys.executable, "-m", "timerd", "hall", "results", "--round", "R1",
                 "--store", str(tmp_path / "desk"), "--timeout", "10", *args,
                 "-o", f"hall.port={mosquitto.port}", "-o", 'hall.host="127.0.0.1"',
                 "-o", "hall.allow_anonymous=true"],
                cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
            assert done.returncode == 0, done.stdout + done.stderr
            return done.stdout

        expected = json.loads(results("--json", "-"))["matches"]
        assert len(expected) == 2
        numbers = [c for c in MATCH_COLUMNS
                   if isinstance(expected[0][c], int | float) and not isinstance(
                       expected[0][c], bool)]
        assert {"played_s", "duration_s", "home_goals", "revision"} <= set(numbers)
        # a fraction the locale must read right, and a whole number written as a float
        assert [m["played_s"] for m in expected] == [1.25, 1.25], expected
        for language, language_id in LOCALES.items():
            export = tmp_path / f"round-{language}.csv"
            results("--csv", str(export), "--excel", "-o", f'ui.language="{language}"')
            assert export.read_bytes().startswith(b"\xef\xbb\xbfround;table;")
            header, *rows = imported(export, language_id, tmp_path)
            assert [value for _, value in header] == list(MATCH_COLUMNS)
            by_table = {row[MATCH_COLUMNS.index("table")][1]: row for row in rows}
            for match in expected:
                row = by_table[match["table"]]
                for column in numbers:
                    kind, value = row[MATCH_COLUMNS.index(column)]
                    assert kind == "float", (language, column, kind, value)
                    assert float(value) == pytest.approx(match[column]), (language, column)
                assert row[MATCH_COLUMNS.index("round")] == ("string", "R1")
