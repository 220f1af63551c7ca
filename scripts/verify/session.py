"""The whole session on a lent node, as the device tool lends it: 15 minutes of device time for everything (the node's
start, each call, the transfers and the idle time between calls), one command at most 600 s, and a node that stays
warm 30 s after a call. The two calls must fit with time to spare: docs/offline-gpu.md's session table is
session_table()'s, and tests/scripts/test_verify_budgets.py holds the sums."""

from __future__ import annotations

from verify.steps import CALL_S, SECOND_CALL_S, planned

# The device time a session may use, all of it together (the device tool's README).
SESSION_S = 900
# A node's start: one or two minutes, counted against the session; planned at the longer.
START_S = 120
# The working tree and deps/ carried to the node, $OUT carried back, and the moments between the two calls.
TRANSFER_S = 15
# What is left when everything takes what it was planned: a slow start, a slow transfer, a call that ends late.
SPARE_MIN_S = 60


def spare_s() -> float:
    return SESSION_S - START_S - CALL_S - TRANSFER_S - SECOND_CALL_S


def session_table() -> str:
    """The session in seconds, as a Markdown table: each call at its deadline, with what its steps plan beside it."""
    rows = [
        "| part of the session | seconds | of which planned |",
        "|---|---:|---:|",
        f"| the node's start (one to two minutes) | {START_S} | |",
        f'| call 1: `scripts/verify-gpu.sh --out "$OUT"`, to its deadline | {CALL_S} | {planned((1, 2)):g} |',
        f"| carrying the tree and deps/ in, $OUT back, and the gap between the calls | {TRANSFER_S} | |",
        f"| call 2: `--passes 3`, to its deadline | {SECOND_CALL_S} | {planned((3,)):g} |",
        f"| to spare | {spare_s():g} | |",
        f"| **the session's device time** | **{SESSION_S}** | |",
    ]
    return "\n".join(rows)
