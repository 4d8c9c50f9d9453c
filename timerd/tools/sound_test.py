"""`timerd sound-test`: play signals now through the configured buzzer and speaker, one after
another, and say what played where, with no match running (the installer's and an operator's
check that every sound reaches its output).

The parts are built by the composition root as the daemon builds them
(`timerd.app.sounding_parts`); this tool only plays and reports.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

from timerd.app import sounding_parts
from timerd.config import Config, SignalOutput
from timerd.core.effects import SignalKind
from timerd.core.pulses import pulses

#: Real seconds a sound may run past its length before the test goes on without it.
OVERRUN_S = 5.0
#: A breath between signals, so that each is heard on its own.
BREATH_S = 0.3


async def sound_test(config: Config, kinds: list[SignalKind], beeps: int, factory: Any | None,
                     say: Callable[[str], None]) -> bool:
    """Play each of `kinds` now through the configured outputs, one after another, and say
    what played where. `factory` is the GPIO pin factory (None: no GPIO). True if every
    configured output played."""
    ok = True
    async with contextlib.AsyncExitStack() as stack:
        parts = await sounding_parts(config, factory, stack)
        speaker, board = parts.speaker, parts.board
        for kind in kinds:
            out = config.signals.get(kind, SignalOutput())
            wait_s = 0.0
            if out.speaker and config.speaker.enabled:
                sound = speaker.test_sound(kind, beeps)
                if sound is not None:
                    times = f", {sound.times} times" if sound.times > 1 else ""
                    say(f"{kind.value}: speaker plays {sound.source} "
                        f"({sound.duration_s:.2f} s{times})")
                    wait_s = sound.duration_s
                else:
                    ok = False
                    say(f"{kind.value}: speaker did not play (see the messages above)")
            if out.buzzer and board is not None and config.gpio.buzzer_pins:
                edges = pulses(out.pattern_s, beeps, out.gap_s)
                board.buzzers.sound(edges)
                pins = ", ".join(f"GPIO{p}" for p in config.gpio.buzzer_pins)
                say(f"{kind.value}: buzzer on {pins} ({edges[-1][1]:.2f} s)")
                wait_s = max(wait_s, edges[-1][1])
            deadline = time.monotonic() + wait_s + OVERRUN_S
            await asyncio.sleep(wait_s)
            # The playback thread marks a sound done; poll it.
            while speaker.playing() and time.monotonic() < deadline:  # noqa: ASYNC110
                await asyncio.sleep(0.02)
            await asyncio.sleep(BREATH_S)
    return ok
