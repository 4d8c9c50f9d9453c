"""The message catalogue: every language complete, the same placeholders, the choice of language."""

from __future__ import annotations

import re
import string

import pytest

from timerd.i18n import LANGUAGES, Messages, catalogue, from_accept, from_locale, resolve


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


@pytest.mark.parametrize("language", [lang for lang in LANGUAGES if lang != "en"])
def test_every_key_of_english_is_in_each_language_with_the_same_placeholders(
        language: str) -> None:
    english, other = catalogue("en"), catalogue(language)
    assert sorted(set(english) - set(other)) == [], f"missing in {language}"
    assert sorted(set(other) - set(english)) == [], f"only in {language}"
    wrong = {key: (fields(english[key]), fields(other[key])) for key in english
             if fields(english[key]) != fields(other[key])}
    assert wrong == {}
    assert [key for key, text in other.items() if not text.strip()] == []


def test_rule_references_are_kept_in_every_translation() -> None:
    """A reason names its rule (ITHF 5.6...) in every language: the players look it up."""
    for key, text in catalogue("en").items():
        rules = re.findall(r"(?:ITHF|ISBHF) [0-9.]+", text)
        for language in LANGUAGES:
            assert re.findall(r"(?:ITHF|ISBHF) [0-9.]+", catalogue(language)[key]) == rules, \
                (language, key)


def test_the_rulebooks_terms() -> None:
    """Slovenian ITHF: buli (faceoff), podaljšek; Slovak ISBHF: vhadzovanie, oddychový čas."""
    assert "buli" in Messages("sl").reason("faceoff_guard")
    assert Messages("sl")("phase.break") == "Odmor pred podaljškom"
    assert Messages("sk")("ctl.cmd.timeout") == "oddychový čas"
    assert Messages("sk")("kind.minor") == "menší trest"


def test_texts_with_values_and_fallbacks() -> None:
    en = Messages("en")
    assert en("goal.not_counted", side="home", reason=en.reason("faceoff_guard")) == \
        "goal home NOT counted: faceoff guard (ITHF 5.6)"
    assert en.signal("interval", 3) == "BEEP x3"
    assert en.signal("final") == "FINAL"
    assert en.side("away", {"home": "Jana", "away": "Peter"}) == "Peter"
    assert en.side("away", {"home": "Jana", "away": ""}) == "Away"
    assert en.get("kind.tripping", "tripping") == "tripping"  # a custom profile's kind
    with pytest.raises(KeyError, match="nope"):
        en("nope")
    with pytest.raises(ValueError, match="en, sl, sk"):
        catalogue("de")


def test_language_choice() -> None:
    assert from_locale({"LANG": "sl_SI.UTF-8"}) == "sl"
    assert from_locale({"LC_ALL": "sk_SK.UTF-8", "LANG": "sl_SI.UTF-8"}) == "sk"
    assert from_locale({"LANG": "de_DE.UTF-8"}) == "en"
    assert from_locale({}) == "en"
    assert from_accept("de-DE,sk;q=0.8,sl;q=0.9") == "sl"
    assert from_accept("sk-SK,sk;q=0.9,en;q=0.5") == "sk"
    assert from_accept("de,fr") is None
    assert from_accept("en;q=bad, sl") == "sl"
    assert resolve("sk", {"LANG": "sl_SI"}) == "sk"
    assert resolve("auto", {"LANG": "sl_SI"}) == "sl"
