"""Every sound timerd makes, by kind: what the profiles place (`core.settings`), the match
sounds (`core.effects.Signal`) and the config says how to sound. A module of its own, so that
the profile's settings read it without the effects, which read the commands, which read the
profile (issue 44 item 6: no import circle); `core.effects` names it too."""

from __future__ import annotations

from enum import StrEnum


class SignalKind(StrEnum):
    """Every sound timerd makes. Profiles place the timed ones; config says how each sounds."""

    PRE_SIGNAL = "pre_signal"  # ITHF 4.4, 15 to 30 s before the start
    START = "start"  # ITHF 5.1, the first faceoff
    INTERVAL = "interval"  # ITHF 4.4, minutes (N beeps for N minutes left) or thirds
    LAST_30 = "last_30"  # ITHF 4.4, the last 30 seconds
    PERIOD_END = "period_end"  # end of a period that is not the last
    FINAL = "final"  # ITHF 4.4, the clear final signal
    PAUSE = "pause"  # acknowledgement: the clock stopped (ITHF 10.1)
    RESUME = "resume"  # acknowledgement: the clock runs again
    GOAL = "goal"  # acknowledgement: a goal entered and counted
    GOAL_REJECTED = "goal_rejected"  # "no goal": entered but not counted (ITHF 5.6, 6.5, 10.3)
    PASSIVE_WARNING = "passive_warning"  # ITHF 8.3: five seconds of passive play
    BREAK_WARNING = "break_warning"  # a break ends soon (ITHF 4.8; ISBHF 410, a minute)
    INTERMISSION_END = "intermission_end"  # ISBHF 410: the intermission is over
    OVERTIME_START = "overtime_start"  # ITHF 4.8: overtime starts with a new faceoff
    RECOVERED = "recovered"  # the daemon restarted and restored the match, paused (ITHF 10.2)
    TIMEOUT_END = "timeout_end"  # ISBHF 412: the 30-s timeout is over
    PENALTY_END = "penalty_end"  # a penalty ran out (or a power-play goal ended a minor)
    LINE_CHANGE = "line_change"  # ISBHF 404b: a 5-s line-change stage is over (beeps = stage)
    HALF_PERIOD = "half_period"  # ISBHF 407 !3: outdoor rinks switch ends at half-time
    GOALIE_CHANGE_END = "goalie_change_end"  # ISBHF 408: the time to dress a goalie is over

    @property
    def acknowledges(self) -> bool:
        """It acknowledges a press rather than marks match time (not shown as "last
        signal")."""
        return self in (SignalKind.PAUSE, SignalKind.RESUME, SignalKind.GOAL,
                        SignalKind.GOAL_REJECTED)
