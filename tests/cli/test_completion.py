"""Tab completion for timerd and timerctl, and `--help` that names every subcommand (issue 30
item 12). The bash scripts are run in a real bash, as bash-completion would call them."""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
from pathlib import Path

import pytest

from timerd import cli
from timerd.tools import completion

ROOT = Path(__file__).resolve().parents[2]


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found.update(action.choices)
    return found


def _script(*argv: str) -> str:
    out = io.StringIO()
    args = cli.parser().parse_args(["completion", *argv])
    assert completion.main(args, {"timerd": cli.parser, "timerctl": cli._ctl_parser}, out) == 0
    return out.getvalue()


def _complete(tmp_path: Path, program: str, words: list[str]) -> set[str]:
    """What bash offers for `words` (the last one being typed), from the generated script."""
    path = tmp_path / program
    path.write_text(_script("bash", "--program", program))
    func = f"_shtab_{program}"
    line = " ".join(["source", str(path), ";", f"COMP_WORDS=({program} {' '.join(words)})",
                     f"; COMP_CWORD={len(words)}", f"; COMP_LINE='{program} {' '.join(words)}'",
                     f"; COMP_POINT=${{#COMP_LINE}}; {func}",
                     "; printf '%s\\n' \"${COMPREPLY[@]}\""])
    done = subprocess.run(["bash", "-c", line],
                          capture_output=True, text=True, timeout=30, check=True)
    return {w.strip() for w in done.stdout.splitlines() if w.strip()}


def test_bash_completes_every_timerd_subcommand(tmp_path: Path) -> None:
    names = set(_subcommands(cli.parser()))
    assert {"run", "config", "hall", "completion", "doctor"} <= names
    assert names <= _complete(tmp_path, "timerd", ['""'])
    assert "--annotated" in _complete(tmp_path, "timerd", ["config", "--a"])


def test_bash_completes_timerctl_options(tmp_path: Path) -> None:
    offered = _complete(tmp_path, "timerctl", ["--"])
    assert {"--socket", "--instance", "--json", "--help", "--version"} <= offered


@pytest.mark.parametrize("shell", ["zsh", "tcsh"])
def test_the_other_shells_get_a_script(shell: str) -> None:
    text = _script(shell, "--program", "timerctl")
    assert "timerctl" in text
    assert "socket" in text


def test_install_writes_and_uninstall_removes_the_scripts(tmp_path: Path) -> None:
    out = io.StringIO()
    args = cli.parser().parse_args(["completion", "--install", "--root", str(tmp_path)])
    assert completion.main(args, {"timerd": cli.parser, "timerctl": cli._ctl_parser}, out) == 0
    paths = [tmp_path / p.relative_to("/") for p in completion.installed_paths()]
    assert {p.name for p in paths} == {"timerd", "timerctl", "_timerd", "_timerctl"}
    assert all("--version" in p.read_text() for p in paths)
    args = cli.parser().parse_args(["completion", "--uninstall", "--root", str(tmp_path)])
    assert completion.main(args, {}, out) == 0
    assert not any(p.exists() for p in paths)


def _help(*argv: str) -> str:
    return subprocess.run([sys.executable, "-m", "timerd", *argv, "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=30, check=True).stdout


def test_help_names_every_subcommand() -> None:
    top = cli.parser()
    text = _help()
    for name in _subcommands(top):
        assert f"\n    {name} " in text or f"\n    {name}\n" in text, name
    for name, sub in _subcommands(top).items():
        nested = _subcommands(sub)
        if nested:
            text = _help(name)
            assert all(n in text for n in nested), (name, nested)
