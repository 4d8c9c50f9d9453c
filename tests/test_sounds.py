"""The signal sounds in sounds/: made by sounds/make_sounds.py, checked in, and shipped."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import wave
from pathlib import Path
from types import ModuleType

import pytest

from timerd.adapters.audio import BUILTIN_DIR
from timerd.core.effects import SignalKind

ROOT = Path(__file__).resolve().parents[1]
SOUNDS = ROOT / "sounds"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_sounds", SOUNDS / "make_sounds.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sounds")
    _script().write_all(out)
    return out


def test_the_script_reproduces_every_checked_in_wav_byte_for_byte(regenerated: Path) -> None:
    made = sorted(p.name for p in regenerated.glob("*.wav"))
    assert made == sorted(p.name for p in SOUNDS.glob("*.wav"))
    for name in made:
        assert (regenerated / name).read_bytes() == (SOUNDS / name).read_bytes(), name


def test_every_signal_kind_has_a_builtin_of_its_name_in_a_playable_format() -> None:
    names = {p.stem for p in SOUNDS.glob("*.wav")}
    assert {k.value for k in SignalKind} <= names
    assert {"goal_rejected", "recovered", "last_30_music"} <= names
    for name in names:
        with wave.open(str(SOUNDS / f"{name}.wav"), "rb") as w:
            assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (1, 2, 44100), name
            assert 0.2 <= w.getnframes() / 44100 <= 30.0, name


def test_the_music_lasts_exactly_the_last_30_seconds() -> None:
    with wave.open(str(SOUNDS / "last_30_music.wav"), "rb") as w:
        assert w.getnframes() == 30 * 44100


def test_the_final_signal_is_the_long_horn_and_distinct_from_the_rest() -> None:
    # ITHF 4.4: a clear final signal. It is the longest signal sound, and no two sounds share
    # both their length and their bytes' start (each is recognisable on its own).
    lengths = {}
    for path in SOUNDS.glob("*.wav"):
        with wave.open(str(path), "rb") as w:
            lengths[path.stem] = w.getnframes()
    signals = {k: v for k, v in lengths.items() if k != "last_30_music"}
    assert max(signals, key=lambda k: signals[k]) == "final"
    heads = {(SOUNDS / f"{k}.wav").read_bytes()[44:44 + 8820] for k in lengths}
    assert len(heads) == len(lengths)


def test_the_package_finds_the_sounds_in_the_source_tree() -> None:
    assert BUILTIN_DIR.resolve() == SOUNDS.resolve()


def test_an_installed_timerd_ships_the_wavs(tmp_path: Path) -> None:
    # What `pip install .` puts beside the code: setuptools' build_py is the step that copies
    # package data into a wheel. Run on a copy, so the checkout gets no build files.
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for name in ("timerd", "sounds"):
        shutil.copytree(ROOT / name, src / name, symlinks=True)
    done = subprocess.run(
        [sys.executable, "-c", "from setuptools import setup; setup()", "-q",
         "build_py", "--build-lib", str(tmp_path / "lib")],
        cwd=src, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    shipped = tmp_path / "lib" / "timerd" / "sounds"
    assert not shipped.is_symlink()
    for wav in SOUNDS.glob("*.wav"):
        assert (shipped / wav.name).read_bytes() == wav.read_bytes(), wav.name
