"""CHANGELOG.md is the release's word to users and scripts (issue 46 item 3): its versions are
well formed, the newest dated one is the version timerd reports, and no change to a public
contract (the golden event traces, the shapes built in wire.py, the formats tools read) lands on
main without a changelog line."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

import timerd

REPO = Path(__file__).resolve().parent.parent
CHANGELOG = REPO / "CHANGELOG.md"
SECTIONS = ("Added", "Changed", "Fixed", "Removed")
VERSION = re.compile(r"^## (?P<version>\d+\.\d+\.\d+) - (?P<date>\d{4}-\d{2}-\d{2})$")
#: What scripts and tools rely on: a change to one of these is a change users must read about.
CONTRACTS = ("tests/golden/", "timerd/wire.py", "timerd/adapters/results/format.py",
             "timerd/adapters/hall/protocol.py", "timerd/adapters/serial_protocol.py",
             "timerd/adapters/journal/format.py")
#: A commit that touches a contract file but changes no shape says so in its message.
WAIVER = re.compile(r"^Changelog: none \(.+\)$", re.MULTILINE)


def versions(text: str) -> list[tuple[str, str]]:
    """The changelog's versions, newest first, as (version, date); `Unreleased` has no date."""
    found: list[tuple[str, str]] = []
    for line in text.splitlines():
        if not line.startswith("## "):
            continue
        if line == "## Unreleased":
            assert not found, "'## Unreleased' stands above every version"
            found.append(("Unreleased", ""))
            continue
        match = VERSION.match(line)
        assert match, f"a version heading is '## X.Y.Z - YYYY-MM-DD': {line!r}"
        found.append((match["version"], match["date"]))
    return found


def test_the_changelog_is_well_formed():
    text = CHANGELOG.read_text(encoding="utf-8")
    released = [(v, d) for v, d in versions(text) if d]
    assert released, "the changelog names at least one released version"
    numbers = [tuple(int(p) for p in v.split(".")) for v, _ in released]
    assert numbers == sorted(numbers, reverse=True), "newest version first"
    assert [d for _, d in released] == sorted((d for _, d in released), reverse=True)
    for line in text.splitlines():
        if line.startswith("### "):
            assert line[4:] in SECTIONS, f"a section is one of {SECTIONS}: {line!r}"


def test_timerd_reports_the_newest_released_version():
    released = [v for v, d in versions(CHANGELOG.read_text(encoding="utf-8")) if d]
    assert timerd.__version__ == released[0]


def test_a_version_heading_in_the_wrong_form_is_refused():
    with pytest.raises(AssertionError, match=r"X\.Y\.Z"):
        versions("## 0.3 (soon)\n")
    with pytest.raises(AssertionError, match="Unreleased"):
        versions("## 0.1.0 - 2026-12-02\n## Unreleased\n")


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True,
                          check=True).stdout


def unlogged_contract_changes(commits: list[tuple[str, str, list[str]]]) -> list[str]:
    """Of `commits` (hash, message, files changed against its first parent), those that change
    a contract file without CHANGELOG.md and without a `Changelog: none (why)` line."""
    return [f"{sha[:9]}: {', '.join(f for f in files if f.startswith(CONTRACTS))}"
            for sha, message, files in commits
            if any(f.startswith(CONTRACTS) for f in files) and "CHANGELOG.md" not in files
            and not WAIVER.search(message)]


def test_the_contract_check_names_a_golden_changed_without_a_changelog_line():
    commits = [("a" * 40, "Goal entries gain a field", ["tests/golden/ithf_4_7_walkout.txt"]),
               ("b" * 40, "Same, logged", ["timerd/wire.py", "CHANGELOG.md"]),
               ("c" * 40, "Refactor\n\nChangelog: none (no shape changes)", ["timerd/wire.py"]),
               ("d" * 40, "Docs", ["docs/api.md"])]
    assert unlogged_contract_changes(commits) == [
        "aaaaaaaaa: tests/golden/ithf_4_7_walkout.txt"]


def main_history() -> list[tuple[str, str, list[str]]]:
    """Every commit on main's first-parent line since CHANGELOG.md was added, with the files it
    changed against its first parent (a merged branch is judged as one change)."""
    since = git("log", "--diff-filter=A", "--format=%H", "--", "CHANGELOG.md").split()[-1]
    commits = []
    for sha in git("rev-list", "--first-parent", f"{since}..HEAD").split():
        message = git("log", "-1", "--format=%B", sha)
        files = git("diff", "--name-only", f"{sha}^1", sha).split()
        commits.append((sha, message, files))
    return commits


def test_no_public_contract_changed_on_main_without_a_changelog_line():
    if not (REPO / ".git").exists() or git("rev-parse", "--is-shallow-repository").strip() == (
            "true"):
        if os.environ.get("TIMERD_REQUIRE_ALL") == "1":
            pytest.fail("the contract check needs the whole git history (a full clone)")
        pytest.skip("not a full git checkout: the contract check reads main's history")
    assert unlogged_contract_changes(main_history()) == [], (
        "a public contract changed without a CHANGELOG.md line: say what changed for users "
        "and scripts, or end the commit message with 'Changelog: none (why)'")
