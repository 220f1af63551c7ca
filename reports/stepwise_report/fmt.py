"""Number formatting shared by the tables, plots and the regression gate."""

from __future__ import annotations

DASH = "—"
GIB = 1024**3
MIB = 1024**2


def tokens(x: float | None) -> str:
    return DASH if x is None else f"{x:,.0f}"


def ratio(x: float | None) -> str:
    return DASH if x is None else f"{x:.2f}×"


def ms(x: float | None) -> str:
    if x is None:
        return DASH
    if x >= 100:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def ms_spread(median: float | None, lo: float | None, hi: float | None) -> str:
    if median is None:
        return DASH
    if lo is None or hi is None:
        return ms(median)
    return f"{ms(median)} ({ms(lo)}–{ms(hi)})"


def memory(n_bytes: float | None) -> str:
    if n_bytes is None:
        return DASH
    if n_bytes >= GIB:
        return f"{n_bytes / GIB:.2f} GiB"
    return f"{n_bytes / MIB:.0f} MiB"


def gib(x: float | None) -> str:
    return DASH if x is None else f"{x:.2f} GiB"


def percent(fraction: float | None, digits: int = 1) -> str:
    return DASH if fraction is None else f"{100 * fraction:.{digits}f}%"


def signed_percent(fraction: float | None, digits: int = 1) -> str:
    return DASH if fraction is None else f"{100 * fraction:+.{digits}f}%"


def flags(names: list[str]) -> str:
    return ", ".join(names) if names else DASH
