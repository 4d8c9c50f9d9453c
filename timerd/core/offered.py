"""Which commands a rule profile has: read from its data, so a control surface offers only those.

`Match.commands()` takes every command under every profile and refuses the ones a profile
lacks with a reason; a score desk should not show them at all. The rulebooks' parts a profile
may leave out are data (`timerd.core.profile`): penalties, timeouts, passive play, a
shootout, the line-change helper... This module says, from that data alone, which commands
mean something under a profile.
"""

from __future__ import annotations

from timerd.core.profile import Profile
from timerd.core.rules import MODULES

#: Every profile has these: the clock, the names, goals and their correction.
ALWAYS = frozenset({"start", "teams", "pause", "stop", "resume", "toggle", "reset", "goal",
                    "undo", "correct", "start_in"})


def offered_commands(profile: Profile) -> frozenset[str]:
    """The commands that `profile` has: the phase machine's own, those of the rule modules it
    lists (`rules`) but `early-intermission` where the intermission may not come early
    (ISBHF 407 !2: no `early_window_s`), and `faceoff` where a guard runs after it (ITHF 5.6:
    ball hockey's faceoff is the referee's START, ISBHF 401)."""
    modules = {command.name for name in profile.rules for command in MODULES[name].declares}
    if profile.intermission is None or profile.intermission.early_window_s is None:
        modules.discard("early-intermission")
    faceoff = {"faceoff"} if profile.faceoff_guard_s is not None else set()
    late = {"late-goal"} if profile.clock == "stop" else set()  # ISBHF 410, 420
    return ALWAYS | modules | faceoff | late
