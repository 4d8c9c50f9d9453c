"""What still spoke English in a Slovenian or Slovak terminal after the first round of issue 46
item 1, each checked per language: the clock cells of an overtime and a shootout (the desk's
status table, the simulate-mode terminal), ..."""

from __future__ import annotations

import contextlib
import dataclasses
import typing
from collections.abc import Iterator

import pytest

from tests.untranslated import untranslated
from timerd.adapters.hall.protocol import MAX_PAYLOAD_BYTES
from timerd.adapters.terminal import event_line, status_line
from timerd.config import Config, profiles
from timerd.config.reference import _probes
from timerd.config.sections import SignalOutput
from timerd.core.checks import HOUR_WHY, Line, at_most, durations, pattern, scores
from timerd.core.match import Match
from timerd.i18n import LOG_TEXT, Messages, catalogue
from timerd.tools import hall_text
from timerd.tools.hall_desk import Hall, shown_time

#: How each language marks the time played in a sudden-death overtime (ITHF 4.8) and a
#: shootout's attempts on a clock cell: the rulebooks' podaljšek / predĺženie, kazenski
#: streli / samostatné nájazdy.
MARKS = {"en": ("OT +", "SO "), "sl": ("POD +", "KS "), "sk": ("PP +", "SN ")}


@pytest.fixture(params=list(MARKS))
def language(request: pytest.FixtureRequest) -> Iterator[str]:
    """Each language, the desk's terminal speaking it (English again after the test)."""
    hall_text.speak(request.param)
    yield str(request.param)
    hall_text.speak("en")


def test_the_clock_cells_of_an_overtime_and_a_shootout(language: str) -> None:
    """The desk's status table (`timerd hall status`) and the terminal display; the English
    cells stay as they were ("OT +1:14", "SO 2:1"). Failed on the old code for sl and sk."""
    overtime, shootout = MARKS[language]
    match = Match(profiles.load("ithf-playoff"))
    match.handle(match.parse("start"), 0.0)
    match.poll(421.75)  # the final at 320, a 30-s break, overtime from 350
    running = {**match.status(421.75).to_dict(), "wall": 1000.0}
    assert shown_time(running, 1002.5) == f"{overtime}1:14"  # counted on from when sent
    effects = match.handle(match.parse("pause"), 421.75)
    status = match.status(421.75)
    msg = Messages(language)
    assert status_line(status, msg).startswith(f"{overtime}1:11")
    assert next(line for e in effects if (line := event_line(e, status, msg)) is not None) \
        .startswith(f"{overtime}1:11  ")
    shots = {"phase": "shootout", "wall": 1000.0, "remaining_s": 0.0,
             "clock_face": {"kind": "shootout", "value_s": 0.0, "text": "2:1"}}
    assert shown_time(shots, 1001.0) == f"{shootout}2:1"


#: Messages the desk sets aside, as the broker may hand them over (issue 36, 41 item 3), and
#: the words of their reasons that are the wire's own: field names and the values given.
BAD = {"state": [b'{"phase": "running", "wall": "yesterday", "remaining_s": 1}', b"[1]",
                 b"{", b'{"phase": "idle", "wall": 1, "remaining_s": 1e400}',
                 b'{"phase": "idle", "wall": 1, "remaining_s": 0, "version": "' + b"v" * 1200
                 + b'"}', b'{"phase": "idle", "wall": 1, "remaining_s": 0, "score": {"home": 1.5}}',
                 b'{"phase": "idle", "wall": 1, "remaining_s": 0, "hall": {"result": '
                 b'{"id": "r", "acked": "yes"}}}', b" " * (MAX_PAYLOAD_BYTES + 1),
                 b"[" * 100 + b"]" * 100],
       "results": [b'{"id": "r1", "table": "t0"}', b'{"id": "r1"}',
                   b'{"id": "r1", "table": "t", "proof": "zz", "result": {}}',
                   b'{"id": "r1", "table": "t3", "revision": 1e9, "result": {}}']}
WIRE_WORDS = ("wall", "yesterday", "remaining_s", "version", "score.home", "hall.result.acked",
              "result", "table", "proof", "revision", "None", "true", "false", "JSON", "inf")


def test_the_reasons_a_message_from_the_broker_is_set_aside(language: str) -> None:
    """`timerd hall status`'s "state unreadable: ..." and `results`' "set aside: ..." say
    why in the desk's language (the field's name and the value are the wire's). Failed on the
    old code for sl and sk: hall_wire's reasons and the JSON limits' were English."""
    reasons = {lang: reasons_given(lang) for lang in ("en", language)}
    for english, said in zip(reasons["en"], reasons[language], strict=True):
        assert (said == english) == (language == "en"), said
        assert untranslated(language, said, english, WIRE_WORDS) == [] or language == "en"
    assert len(set(reasons[language])) == len(reasons[language])  # a reason each


def reasons_given(language: str) -> list[str]:
    """Why the desk set each of BAD aside, in `language`."""
    hall_text.speak(language)
    hall = Hall("main")
    for kind, payloads in BAD.items():
        for i, payload in enumerate(payloads):
            hall.take(f"timerd/main/tables/t{i}/{kind}", payload)
    return [view.unreadable or "" for view in hall.tables.values() if view.unreadable] + [
        why for _, why in hall.aside]


def test_the_core_checks_lines_are_the_catalogues_english() -> None:
    """The core reads no catalogue, so its checks make their English themselves: it is the
    catalogue's (`check.*`), and each reason a config section gives is in it (`check.why.*`),
    so the command line says them in the user's language (issue 46)."""
    lines = [*durations(x=0), *at_most(1, HOUR_WHY, " s", x=2), *scores("x", [100]),
             *pattern("x", [1, 1]), *pattern("x", [40.0])]
    assert len(lines) == 5
    for line in lines:
        assert isinstance(line, Line)
        assert line == f"{line.head}: {LOG_TEXT(line.code, **line.values)}"
    reasons = {text for key, text in catalogue("en").items() if key.startswith("check.why.")}
    given = set(reasons_of_the_config_sections())
    assert len(given) >= 10
    assert given <= reasons, given - reasons


def reasons_of_the_config_sections() -> Iterator[str]:
    """Every reason a config section's bounds give, found as `timerd config --annotated`
    finds them: each number key of each section probed with values out of range."""
    config = Config()
    sections = [getattr(config, f.name) for f in dataclasses.fields(config)]
    for section in [*sections, SignalOutput()]:
        if not hasattr(section, "problems"):
            continue
        for key, tp in typing.get_type_hints(type(section)).items():
            for probe in _probes(tp):
                with contextlib.suppress(TypeError, ValueError):
                    tried = dataclasses.replace(section, **{key: probe})
                    yield from (line.values["why"] for line in tried.problems()
                                if getattr(line, "code", None) == "check.at_most")
