"""A rule module that exists only in the tests (issue 44 item 5): video reviews, whose status
is made of parts, a list of entries (`reviews`: each asked-for review, its side and its
seconds left) and a value per side (`challenges`: the reviews a team may still ask for),
declared as data (`RuleModule.display`) with the texts of its parts in the catalogues, and
drawn by no view of its own. The tests register it as `core/rules/__init__.py` registers a
module and its texts as the catalogues hold them (`TEXTS`), and find its parts in
`timerctl status`, on the terminal's status line and on the pages (the scoreboard and the
desk, in chromium) in every language, without a line of any view naming it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from timerd.config import profiles
from timerd.core import rules
from timerd.core.match import Match
from timerd.core.rule import RuleModule, Shown
from timerd.i18n import catalogue
from timerd.wire import status_document

#: The module's catalogue texts, by language, as its lines in `i18n/*.json` would be.
TEXTS = {
    "en": {"st.review": "video review {side} {time}", "term.review": "review {time}",
           "st.challenges": "{side} {n} left", "web.review": "Review {time}",
           "web.challenges": "Challenges: {side} {n}"},
    "sl": {"st.review": "video pregled {side} {time}", "term.review": "pregled {time}",
           "st.challenges": "{side} še {n}", "web.review": "Pregled {time}",
           "web.challenges": "Izzivi: {side} {n}"},
    "sk": {"st.review": "videorozhodnutie {side} {time}", "term.review": "video {time}",
           "st.challenges": "{side} ešte {n}", "web.review": "Video {time}",
           "web.challenges": "Výzvy: {side} {n}"},
}


class Reviews(RuleModule):
    """The reviews asked for, each a side and the seconds left (the first ends at 100 s),
    counting down in real time, and the challenges each team has left (the home team none:
    not shown)."""

    name = "reviews"
    shows = MappingProxyType({"reviews": [], "challenges": dict.fromkeys(("home", "away"))})
    display = MappingProxyType({
        "reviews": Shown(None, "entries", texts={"st.review": ""},
                         brief={"term.review": "remaining_s"},
                         fields={"side": ("side", "side"),
                                 "time": ("remaining_s", "countdown")},
                         runs={"remaining_s": ("real", "")}),
        "challenges": Shown({"en": "Challenges", "sl": "Izzivi", "sk": "Výzvy"}, "sides",
                            texts={"st.challenges": ""},
                            fields={"side": ("side", "side"), "n": ("value", "text")}),
    })

    def status(self, now: float) -> Mapping[str, Any]:
        return {"reviews": [{"side": "away", "remaining_s": 100.0 - now},
                            {"side": "home", "remaining_s": 160.0 - now}],
                "challenges": {"home": None, "away": 2}}


class PlacedReviews(Reviews):
    """`Reviews` whose reviews a rink's board shows in their team's box (`board`), and whose
    challenges left are a line of their own (`banner`)."""

    display = MappingProxyType({
        "reviews": replace(Reviews.display["reviews"], board={"web.review": ""}),
        "challenges": replace(Reviews.display["challenges"],
                              banner={"web.challenges": ""}),
    })


def register(monkeypatch: pytest.MonkeyPatch, module: type[Reviews] = Reviews) -> None:
    """`module` (`Reviews`) registered, as one line of `core/rules/__init__.py` registers a
    module, and its texts in every language's catalogue."""
    monkeypatch.setitem(rules.MODULES, module.name, module)
    monkeypatch.setattr(rules, "REGISTERED", (*rules.REGISTERED, module))
    for language, texts in TEXTS.items():
        for key, text in texts.items():
            monkeypatch.setitem(catalogue(language), key, text)


def reviews_match(tmp_path: Path) -> Match:
    """An ITHF match with `Reviews` listed (registered first: `register`), its teams named
    Jana and Peter."""
    path = tmp_path / "reviews.toml"
    path.write_text('extends = "ithf"\nname = "reviews"\nrules = ["reviews"]\n',
                    encoding="utf-8")
    match = Match(profiles.load(str(path)))
    match.handle(match.parse("teams", "Jana", "Peter"), 0.0)
    return match


def reviews_document(tmp_path: Path) -> dict[str, Any]:
    """The status document of `reviews_match` at 40 s: Peter's review 1:00 left, Jana's
    2:00, Peter's two challenges."""
    return status_document(reviews_match(tmp_path).status(40.0), [{}])
