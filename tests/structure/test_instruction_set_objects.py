"""model/softcap_rows.cpp is compiled once per instruction set (model/CMakeLists.txt) and linked into one library.
A function the linker may merge across objects (an inline or template function, emitted weak in each) compiled with
AVX-512 could be the one an AVX2 machine runs, and crash it; and code that runs when the library loads runs on every
machine. So each object defines nothing outside its own set's namespace but local symbols, and its load-time code
uses no vector registers wider than SSE's. Reads the objects ctest names (STEPWISE_ROWS_OBJECTS); each check also runs
on synthetic input that must fail."""

import os
import re
import subprocess

import pytest

OBJECTS = [p for p in os.environ.get("STEPWISE_ROWS_OBJECTS", "").split(":") if p]


def set_of(path: str) -> str:
    return re.search(r"stepwise_softcap_rows_(\w+)\.dir", path).group(1)


def foreign_symbols(nm_lines: list[str], instruction_set: str) -> list[str]:
    """Defined symbols other than local ones (lower-case types) and those in the set's own namespace."""
    own = f"stepwise::model::softcap_rows::{instruction_set}::"
    problems = []
    for line in nm_lines:
        parts = line.split(maxsplit=2)
        if len(parts) == 3 and not parts[1].islower() and not parts[2].startswith(own):
            problems.append(line)
    return problems


def wide_registers_at_load(disassembly: str) -> list[str]:
    """Instructions of the static initialisers (_GLOBAL__sub_I_*) that use ymm or zmm registers."""
    found, inside = [], False
    for line in disassembly.splitlines():
        if re.match(r"^[0-9a-f]+ <", line):
            inside = "_GLOBAL__sub_I" in line
        elif inside and re.search(r"%[yz]mm\d", line):
            found.append(line.strip())
    return found


@pytest.mark.skipif(not OBJECTS, reason="STEPWISE_ROWS_OBJECTS unset: ctest sets it")
@pytest.mark.parametrize("path", OBJECTS, ids=[set_of(p) for p in OBJECTS] if OBJECTS else None)
def test_each_instruction_sets_object_keeps_to_its_namespace(path):
    nm = subprocess.run(["nm", "-C", "--defined-only", path], capture_output=True, text=True, check=True).stdout
    assert f"softcap_rows::{set_of(path)}::loops" in nm, "the set's loops are not in its object"
    assert foreign_symbols(nm.splitlines(), set_of(path)) == []
    disassembly = subprocess.run(["objdump", "-d", path], capture_output=True, text=True, check=True).stdout
    assert wide_registers_at_load(disassembly) == []


def test_the_checks_catch_a_shared_symbol_and_wide_load_time_code():
    lines = [
        "0000000000000000 R stepwise::model::softcap_rows::AVX512::loops",
        "0000000000000000 t _GLOBAL__sub_I_softcap_rows.cpp",
        "0000000000000000 W c10::BFloat16::operator float() const",
    ]
    assert foreign_symbols(lines, "AVX512") == [lines[2]]
    assert foreign_symbols(lines, "AVX2") == [lines[0], lines[2]]
    disassembly = (
        "0000000000000000 <_GLOBAL__sub_I_softcap_rows.cpp>:\n   0:\tvmovups %zmm0,(%rdi)\n"
        "0000000000000010 <other>:\n  10:\tvmovups %zmm1,(%rdi)\n"
    )
    assert wide_registers_at_load(disassembly) == ["0:\tvmovups %zmm0,(%rdi)"]
