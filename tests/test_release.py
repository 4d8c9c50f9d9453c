"""The release and the guide that installs it (issue 30 item 7): the source archive is a tree
the installer runs from, and no command in the docs has a `<placeholder>` a reader cannot
type."""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

import timerd

ROOT = Path(__file__).resolve().parent.parent
#: The fences whose lines a reader types.
SHELL_FENCES = ("sh", "bash", "console", "shell")


def _shell_lines(path: Path) -> list[tuple[int, str]]:
    lines, fence = [], None
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if match := re.match(r"^\s*```(\w*)", line):
            fence = None if fence is not None else match.group(1)
        elif fence in SHELL_FENCES:
            lines.append((number, line))
    return lines


def test_no_command_in_the_docs_has_a_placeholder_a_reader_cannot_type() -> None:
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
             for number, line in _shell_lines(path) if re.search(r"<[A-Za-z][^>]*>", line)]
    assert found == []


@pytest.mark.e2e
def test_the_source_archive_is_a_tree_the_installer_runs_from(tmp_path: Path) -> None:
    """`python -m build` (as .ci/run does, which also runs `twine check`), then the guide's
    path: unpack the archive, run the installer in it (a dry run into an image directory)."""
    dist = tmp_path / "dist"
    built = subprocess.run([sys.executable, "-m", "build", "--sdist", "--outdir", str(dist),
                            str(ROOT)], check=True, capture_output=True, text=True, timeout=300)
    # A clean build (issue 46 item 5): no deprecation a later setuptools turns into an error
    # (the license as a TOML table stops working on 2027-02-18).
    assert "deprecat" not in (built.stdout + built.stderr).lower(), built.stdout + built.stderr
    # The release is named by the changelog's version (tests/test_changelog.py).
    (archive,) = dist.glob("timerd-*.tar.gz")
    assert archive.name == f"timerd-{timerd.__version__}.tar.gz"
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path / "unpacked", filter="data")
    (tree,) = (tmp_path / "unpacked").iterdir()
    for part in ("systemd/timerd.service", "systemd/timerd.toml", "systemd/60-timerd.rules",
                 "timerd/tools/install.py", "docs/raspberry-pi.md", "docs/config.md"):
        assert (tree / part).is_file(), part
    image = tmp_path / "image"
    (image / "etc").mkdir(parents=True)
    (image / "etc/rpi-issue").write_text("Raspberry Pi reference\n")
    (image / "etc/os-release").write_text('PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n'
                                          "ID=debian\n")
    (image / "etc/passwd").write_text("root:x:0:0:root:/root:/bin/bash\n"
                                      "alice:x:1000:1000::/home/alice:/bin/bash\n")
    done = subprocess.run([sys.executable, "-E", "-s", "-m", "timerd.tools.install", "install",
                           "--dry-run", "--root", str(image), "--user", "alice"],
                          cwd=tree, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "timerd install will:" in done.stdout
    assert f"copy {tree} to" in done.stdout  # the unpacked archive is the source it installs


def test_the_guide_says_how_the_phone_desk_pairs_and_how_to_find_the_pis_address() -> None:
    """Issue 30 item 10: the guide names the pairing command (`timerctl desk`, which the
    installer's random token makes work) and the way to the Pi when `.local` does not
    resolve; and `timerctl desk` is a command timerctl has."""
    guide = (ROOT / "docs" / "raspberry-pi.md").read_text()
    assert "`timerctl desk`" in guide
    assert "`hostname -I`" in guide
    assert ".local` names need mDNS" in guide
    from timerd.cli import _ctl_parser  # noqa: PLC0415

    assert "desk" in _ctl_parser().format_help()
