"""`timerd --instance NAME` names its instance in the process's environment for what it runs
(`cli._set_instance`); a test that does so in-process must not leave it to the tests after it,
nor to the suite's end, where `tests/conftest.py` looks for the live timerd on its default
socket (issue 46 item 4: a leaked name sent that look to another instance's socket)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from timerd import cli
from timerd.config import INSTANCE_ENV


@pytest.fixture(scope="module")
def nothing_left_after_the_module() -> Iterator[None]:
    yield
    assert INSTANCE_ENV not in os.environ, "a test's instance outlived it"


def test_an_instance_named_in_process(nothing_left_after_the_module: None) -> None:
    assert cli._set_instance("leak-check") is None
    assert os.environ[INSTANCE_ENV] == "leak-check"


def test_the_next_test_starts_without_it(nothing_left_after_the_module: None) -> None:
    assert INSTANCE_ENV not in os.environ
