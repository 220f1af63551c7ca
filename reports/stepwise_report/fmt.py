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


_TIME_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))


def time_unit(seconds: float) -> tuple[float, str]:
    """The largest unit in which `seconds` is at least 1 (ns for anything shorter)."""
    return next(((scale, name) for scale, name in _TIME_UNITS if abs(seconds) >= scale), _TIME_UNITS[-1])


def duration(seconds: float | None) -> str:
    if seconds is None:
        return DASH
    scale, name = time_unit(seconds)
    return f"{ms(seconds / scale)} {name}"


def duration_range(lo: float, hi: float, like: float) -> str:
    """`lo–hi` in the unit `duration(like)` uses, so a spread reads beside its median."""
    scale, name = time_unit(like)
    return f"{ms(lo / scale)}–{ms(hi / scale)} {name}"


def rate(value: float | None, unit: str, binary: bool = False) -> str:
    """A per-second counter with an SI prefix (binary for bytes): '1.23 TFLOP/s', '715 MiB/s',
    '94.1 M elements/s' (a prefix joins a symbol but not a word)."""
    if value is None:
        return DASH
    base, prefixes = (1024.0, ("", "Ki", "Mi", "Gi", "Ti", "Pi")) if binary else (1000.0, ("", "k", "M", "G", "T", "P"))
    k = 0
    while abs(value) >= base and k < len(prefixes) - 1:
        value /= base
        k += 1
    joined = unit[:1].isupper() or not prefixes[k]
    return f"{ms(value)} {prefixes[k]}{'' if joined else ' '}{unit}"
