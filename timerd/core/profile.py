"""Rule profiles: what a match is, as data. The core reads a profile; it has no `if ithf:`.

`Profile` is composed, not written out: the phase machine's settings (`ProfileBase`, in
`timerd.core.settings`) and the settings of every registered rule module
(`RuleModule.settings`, `timerd.core.rules.REGISTERED`), one flat frozen dataclass whose
fields are the keys of a profile file (`timerd/profiles/*.toml`, or a user's own of the same
shape). A module's keys are there whether or not a profile lists the module, with the
rulebook's values; `problems()` is the base's checks and each module's.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Iterable
from typing import Any

from timerd.core import rules
from timerd.core.rule import RuleModule
from timerd.core.rules import BUILT_IN, MODULES, REGISTERED
from timerd.core.rules.intermission import Intermission
from timerd.core.rules.penalties import PenaltyKind, PenaltyRules
from timerd.core.rules.stoppage import LineChangeRule
from timerd.core.rules.timeouts import TimeoutRule
from timerd.core.settings import ITHF_LEAD_RANGE_S, Overtime, PlacedSignal, ProfileBase

__all__ = ["ITHF_LEAD_RANGE_S", "RULE_NAMES", "Intermission", "LineChangeRule", "Overtime",
           "PenaltyKind", "PenaltyRules", "PlacedSignal", "Profile", "TimeoutRule",
           "compose_profile", "registered"]

#: The rule modules a profile may list, by name (`timerd.core.rules.MODULES`).
RULE_NAMES = tuple(MODULES)


def rule_problems(profile: ProfileBase, names: Iterable[str]) -> list[str]:
    """The lines for `rules` naming a module that is not one of `names`, or one twice."""
    known = tuple(names)
    out = [f"rules: {name!r} is not a rule module; known: {', '.join(known)}"
           for name in profile.rules if name not in known]
    if len(set(profile.rules)) < len(profile.rules):
        out.append("rules: a rule module is listed twice")
    return out


@functools.cache
def compose_profile(modules: tuple[type[RuleModule], ...]) -> type[ProfileBase]:
    """`ProfileBase` with the settings of `modules` (each module's keys, in order), checked
    by the base and every module; TypeError if two declare the same key (a module's key is
    its own). One class per registry (cached), so profiles compare equal."""
    fields: list[tuple[str, Any, dataclasses.Field[Any]]] = []
    owner = {f.name: "the phase machine" for f in dataclasses.fields(ProfileBase)}
    for module in modules:
        hints = typing.get_type_hints(module.settings)
        for f in dataclasses.fields(module.settings):
            if f.name in owner:
                raise TypeError(f"profile key {f.name!r} of rule module {module.name!r} is "
                                f"already {owner[f.name]}'s")
            owner[f.name] = module.name
            fields.append((f.name, hints[f.name], dataclasses.field(
                default=f.default, default_factory=f.default_factory)))
    names = [m.name for m in modules if m not in BUILT_IN]

    def problems(self: ProfileBase) -> list[str]:
        out = rule_problems(self, names)
        out += ProfileBase.problems(self)
        for module in modules:
            out += module.settings.of(self).problems(self)
        return out

    return dataclasses.make_dataclass(
        "Profile", fields, bases=(ProfileBase,), frozen=True,
        namespace={"problems": problems, "__module__": __name__,
                   "__doc__": "A rule profile: the phase machine's settings and every rule "
                              "module's (composed by `compose_profile`)."})


def registered() -> type[ProfileBase]:
    """`Profile` for the registry as it is now (`rules.REGISTERED`, read at the call): what a
    profile file is built into (`timerd.config.profiles`)."""
    return compose_profile(rules.REGISTERED)


if typing.TYPE_CHECKING:
    #: To the type checker, the base: a module reads its own keys typed (`Settings.of`).
    Profile = ProfileBase
else:
    Profile = compose_profile(REGISTERED)
