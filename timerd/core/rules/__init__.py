"""The rule modules a profile may list (`rules = [...]`), by name. Each is one feature of a
rulebook (`timerd.core.rule.RuleModule`); a profile that lists none is a bare clock that keeps
the score (`BUILT_IN`: the score desk every match has).

A new module is registered here, once: its settings, its status keys, its record keys and its
buttons reach `Profile`, `Status`, the result and the config's `[gpio]` and `[keypad]` keys
through this registry alone (docs/ARCHITECTURE.md, "A new sport rule")."""

from __future__ import annotations

from collections.abc import Iterable

from timerd.core.buttons import PHASE_BUTTONS, Button, ButtonChord
from timerd.core.commands import Command
from timerd.core.refused import CommandRefused
from timerd.core.rule import RuleModule
from timerd.core.rules.corrections import Corrections
from timerd.core.rules.intermission import Intermissions
from timerd.core.rules.passive import Passive
from timerd.core.rules.penalties import Penalties
from timerd.core.rules.rulings import Rulings
from timerd.core.rules.scheduled import ScheduledStart
from timerd.core.rules.scoring import Scoring
from timerd.core.rules.shootout import Shootouts
from timerd.core.rules.stoppage import GoalieChanges, LineChanges
from timerd.core.rules.timeouts import TeamTimeouts
from timerd.core.settings import ProfileBase

#: The modules every match has, whatever its profile, ahead of the profile's: the score desk
#: (goals, faceoffs, names), its corrections (undo, a reopen, ISBHF 420 !3) and the start at
#: a given instant (hall mode).
BUILT_IN: tuple[type[RuleModule], ...] = (Scoring, Corrections, ScheduledStart)
#: Every rule module, by the name a profile lists it by.
MODULES: dict[str, type[RuleModule]] = {m.name: m for m in (
    Passive, Rulings, Penalties, TeamTimeouts, LineChanges, GoalieChanges, Intermissions,
    Shootouts)}
#: The one registry: every module, built in or listed. `Profile` (`timerd.core.profile`) is
#: composed from their settings and `Status` (`timerd.core.status`) from what they show.
REGISTERED: tuple[type[RuleModule], ...] = (*BUILT_IN, *MODULES.values())
#: The commands rule modules add: refused with the reason under a profile without them.
RULE_COMMANDS: dict[str, type[RuleModule]] = {
    c.name: m for m in MODULES.values() for c in m.declares}


def undeclared(name: str, declared: Iterable[type[Command]],
               profile: ProfileBase) -> CommandRefused:
    """The refusal of command `name`, which the match under `profile` does not declare: a rule
    module's that the profile leaves out (`lacks_<module>`), else one nobody knows."""
    known = sorted(cls.name for cls in declared)
    if name in RULE_COMMANDS and name not in known:
        return CommandRefused(f"lacks_{RULE_COMMANDS[name].name}", profile=profile.name)
    return CommandRefused("unknown", known=", ".join(known))


def buttons() -> tuple[Button, ...]:
    """Every push button a control surface can have: the phase machine's, then each registered
    module's (`REGISTERED` read now: a module registered later has its buttons too), in that
    order (the config's). TypeError if two declare one name (a button's config keys are its
    own) or one key of simulate mode's keyboard."""
    out = (*PHASE_BUTTONS, *(b for module in REGISTERED for b in module.buttons))
    for taken in ([b.name for b in out], [b.panel for b in out if b.panel]):
        if twice := sorted({name for name in taken if taken.count(name) > 1}):
            raise TypeError("buttons declared twice", twice)
    return out


def chords() -> tuple[ButtonChord, ...]:
    """Every chord the registered modules declare (`REGISTERED` read now), each of two
    declared buttons; TypeError naming a chord's button that nobody declares."""
    out = tuple(c for module in REGISTERED for c in module.chords)
    names = {b.name for b in buttons()}
    if strays := sorted({n for c in out for n in c.buttons} - names):
        raise TypeError("chords of undeclared buttons", strays)
    return out
