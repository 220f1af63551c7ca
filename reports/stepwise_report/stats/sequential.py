"""When an interleaved gated run looks at its rounds, and the significance level each look may spend.

A gated run that goes on while the gate cannot judge (gated_run.py --against) looks at its rounds more than once and
stops at the first look that judges. Each look is one more chance for a same-commit pair to cross the line by chance:
simulated at the spreads a loaded runner shows, looking after every round from 5 to 20 raised the false-FAIL rate
from what one look gives to several times it (docs/ci.md). So the run looks only at a few rounds fixed in advance (a
geometric schedule, `looks`), and each look may call a change only below its share of the level (`level_at`): an
alpha-spending rule in the manner of Lan and DeMets with the Pocock-type spending function
alpha * ln(1 + (e - 1) t), t the rounds so far over the most the run may make. A look's share is the increase of the
spent level since the look before, and by the union bound the shares of all looks add up to at most alpha whatever
the correlation between looks (the exact Lan-DeMets boundary would spend a little more per look; this one is the
conservative side of it, and needs no numerical integration to be right). The Pocock-type function spends more early
than O'Brien-Fleming's, which suits a gate whose quiet runs stop at their first look.

The plan (its looks and the level they share) is recorded in the run's manifest, so the gate that judges the
finished run applies the very level the run stopped on.
"""

from __future__ import annotations

import math

# Each look comes at about 1.4 times the rounds of the one before (5, 7, 10, 14, 20 from 5 to 20): few looks, so each
# keeps most of the level, yet a busy runner is looked at again before its rounds double.
LOOK_GROWTH = 1.4
SPENDING = "pocock-type alpha spending (Lan-DeMets), shared by the union bound"


def looks(first: int, most: int) -> list[int]:
    """The rounds after which the gate looks: `first`, then each about LOOK_GROWTH times the one before, and `most`
    last. A run that never goes on (first == most) looks once."""
    if first < 1 or most < first:
        raise ValueError(f"looks need 1 <= first <= most (got {first}, {most})")
    out = [first]
    while out[-1] < most:
        out.append(min(most, max(out[-1] + 1, round(out[-1] * LOOK_GROWTH))))
    return out


def spent(alpha: float, fraction: float) -> float:
    """The level spent by the time `fraction` of the most rounds are done: alpha * ln(1 + (e - 1) t), 0 at t = 0 and
    alpha at t = 1."""
    t = min(max(fraction, 0.0), 1.0)
    return alpha * math.log(1 + (math.e - 1) * t)


def level_at(alpha: float, plan: list[int], rounds: int) -> float:
    """The level the look after `rounds` rounds may spend: its share of alpha under the plan's looks. `rounds` that is
    no look of the plan (a run judged by hand at another point) is given the share of the last look at or before it,
    never more than alpha in all; a plan of one look spends all of alpha there."""
    if len(plan) == 1:
        return alpha
    done = [n for n in plan if n <= rounds]
    if not done:
        return spent(alpha, rounds / plan[-1])
    j = plan.index(done[-1])
    before = spent(alpha, plan[j - 1] / plan[-1]) if j > 0 else 0.0
    return spent(alpha, plan[j] / plan[-1]) - before
