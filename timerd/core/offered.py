"""Which commands a rule profile has: read from its data, so a control surface offers only those.

`Match.commands()` takes every command under every profile and refuses the ones a profile
lacks with a reason; a score desk should not show them at all. The phase machine's own
commands are always there; each rule module the match has (built in, or listed in `rules`)
says which of its commands mean something under the profile (`RuleModule.offered`).
"""

from __future__ import annotations

from timerd.core.commands import Pause, Reset, Resume, Start, Stop, Toggle
from timerd.core.rules import BUILT_IN, MODULES
from timerd.core.settings import ProfileBase

#: The phase machine's own commands (the clock).
OWN = frozenset(c.name for c in (Start, Pause, Stop, Resume, Toggle, Reset))


def offered_commands(profile: ProfileBase) -> frozenset[str]:
    """The commands that `profile` has: the phase machine's own, and what each module of the
    match (built in, or listed) offers under it."""
    modules = (*BUILT_IN, *(MODULES[name] for name in profile.rules))
    return OWN.union(*(module.offered(profile) for module in modules))


#: Every profile has these: what a bare clock offers (no rules, no faceoff guard, a running
#: clock), the clock, the names, goals and their correction; a profile only adds to them.
ALWAYS = offered_commands(ProfileBase(name="bare"))
