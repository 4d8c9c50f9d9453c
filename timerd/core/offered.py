"""Which commands a rule profile has: read from its data, so a control surface offers only those.

`Match.commands()` takes every command under every profile and refuses the ones a profile
lacks with a reason; a score desk should not show them at all. The rulebooks' parts a profile
may leave out are data (`timerd.core.profile`): penalties, timeouts, passive play, a
shootout, the line-change helper... This module says, from that data alone, which commands
mean something under a profile.
"""

from __future__ import annotations

from timerd.core.profile import Profile

#: Every profile has these: the clock, the names, goals and their correction.
ALWAYS = frozenset({"start", "teams", "pause", "stop", "resume", "toggle", "reset", "goal",
                    "undo", "start_in", "forfeit", "replay"})


def offered_commands(profile: Profile) -> frozenset[str]:
    """The commands that `profile` has, by its data.

    `faceoff` restarts the 3-s guard (ITHF 5.6), so a profile without a guard has no use for
    it (ball hockey's faceoff is the referee's START, ISBHF 401). A forfeit (ITHF 4.6) and a
    replay (4.5) are rulings any match may need, a walkout wherever the profile awards goals
    for it (4.7).
    """
    has = {
        "faceoff": profile.faceoff_guard_s is not None,
        "passive": profile.passive_play_s is not None,  # ITHF 8.3
        "walkout": profile.walkout_award > 0,  # ITHF 4.7's five extra goals, or none
        "shot": profile.overtime is not None and profile.overtime.shootout_rounds is not None,
        "timeout": profile.timeouts is not None,  # ISBHF 412
        "penalty": profile.penalties is not None,
        "penalty-cancel": profile.penalties is not None,
        "linechange": profile.line_change is not None,  # ISBHF 404b
        "early-intermission": profile.intermission is not None
        and profile.intermission.early_window_s is not None,  # ISBHF 407 !2
        "goalie-change": profile.goalie_change_s is not None,  # ISBHF 408
    }
    return ALWAYS | {name for name, present in has.items() if present}
