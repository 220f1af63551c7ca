"""--check-bundle: the bundle as a checked artifact, here, before a call. deps/ is ignored by git and nothing else says
when it was made or for which tree, so one command makes it when it is missing or does not fit the working tree that
will travel (scripts/setup.sh --bundle: a build and downloads, minutes), and then says, a line each: when it was made
and how long that took; whether deps/prebuilt fits that tree; its size with the tree's against what a call carries;
the packages installed for the node's python (deps/site/pythonX.Y); and any module the node's Python side imports that
neither the image (node_image.txt) nor the bundle has. Exit 0 when it all fits, 1 when something does not."""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import time
from pathlib import Path

import prebuilt

from verify.as_node import image, image_date
from verify.binaries import deps
from verify.node_imports import node_imports
from verify.target import ROOT

# The device tool carries the working tree and the paths named in `carry` (deps) in 64 MiB in all.
CARRY_LIMIT_BYTES = 64 * 2**20
# The node's python X.Y (node_image.txt's header): the version scripts/setup.sh --bundle installs deps/site for.
NODE_PYTHON = os.environ.get("STEPWISE_BUNDLE_PYTHON_VERSION") or "3.12"


def mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB"


def size_of(files) -> int:
    return sum(p.stat().st_size for p in files if p.is_file() and not p.is_symlink())


def site_of(d: Path) -> Path:
    return d / "site" / f"python{NODE_PYTHON}"


def why_make(d: Path) -> str:
    """Why deps/ must be made again for the tree that travels, or ''."""
    if not (d / "MANIFEST.txt").exists():
        return f"there is no {d / 'MANIFEST.txt'}"
    ident = prebuilt.load_id(d)
    if ident is None:
        return f"{d / 'prebuilt'} holds no {prebuilt.ID_FILE}"
    if ident.get("sources") != prebuilt.source_hash(ROOT)[0]:
        return "deps/prebuilt was built from other sources than the working tree that travels"
    if not (site_of(d) / ".stepwise-complete").exists():
        return f"{site_of(d)} (the packages for the node's python {NODE_PYTHON}) is not there"
    return ""


def make(d: Path) -> tuple[int, float]:
    """scripts/setup.sh --bundle into `d`, its words on stderr; its exit status and seconds."""
    began = time.monotonic()
    env = {**os.environ, "STEPWISE_DEPS": str(d)}
    code = subprocess.run([str(ROOT / "scripts" / "setup.sh"), "--bundle"], env=env).returncode
    return code, time.monotonic() - began


def made_line(d: Path, seconds: float | None, reason: str) -> str:
    """When and where deps/ was made and how long that took: now, or earlier (then whether it fits the tree)."""
    manifest = (d / "MANIFEST.txt").read_text()
    on = re.search(r"--bundle on (\S+), (\S+)", manifest)
    took = re.search(r"^# made in (\d+) s", manifest, re.M)
    when = f"on {on.group(1)} at {on.group(2)}" if on else "(MANIFEST.txt says nowhere when)"
    if seconds is not None:
        return f"bundle: made now, {when}, in {seconds:.0f} s"
    made = f"bundle: made {when}" + (f", in {took.group(1)} s" if took else "")
    return made + (f"; it does not fit this tree: {reason}" if reason else "; it fits this tree, so not again")


def prebuilt_line(d: Path) -> tuple[bool, str]:
    ident = prebuilt.load_id(d) or {}
    sources, files = prebuilt.source_hash(ROOT)
    if ident.get("sources") != sources:
        return False, (
            f"bundle: prebuilt stale: built from other sources ({ident.get('sources')}, commit "
            f"{str(ident.get('commit'))[:12]}); the working tree that travels hashes to {sources} ({files} files): "
            "the node would refuse it and build"
        )
    return True, (
        f"bundle: prebuilt fits the working tree that travels (sources {sources}, {files} files; packed "
        f"{ident.get('packed')}; the node's python must have torch {ident.get('torch')})"
    )


def size_line(d: Path) -> tuple[bool, str]:
    tree = prebuilt.travelling(ROOT)
    tree_bytes = size_of(tree) if tree is not None else 0
    bundle = size_of(d.rglob("*"))
    total = tree_bytes + bundle
    fits = total <= CARRY_LIMIT_BYTES
    return fits, (
        f"bundle: deps/ {mib(bundle)} and the tree that travels {mib(tree_bytes)}: {mib(total)} of the "
        f"{mib(CARRY_LIMIT_BYTES)} a call carries: " + ("fits" if fits else "does NOT fit")
    )


def site_modules(site: Path) -> dict[str, str]:
    """The top-level modules deps/site holds, each with its distribution and version."""
    out = {}
    for dist in importlib.metadata.distributions(path=[str(site)]):
        label = f"{dist.metadata['Name']} {dist.version}"
        top = (dist.read_text("top_level.txt") or "").split()
        top += [f.parts[0].split(".")[0] for f in dist.files or [] if f.parts and not f.parts[0].endswith("-info")]
        for name in top:
            out.setdefault(name, label)
    return out


def site_line(d: Path) -> tuple[bool, str, dict[str, str]]:
    site = site_of(d)
    if not (site / ".stepwise-complete").exists():
        return False, f"bundle: no {site}: the node's python {NODE_PYTHON} would find no bundled package", {}
    modules = site_modules(site)
    dists = sorted(set(modules.values()))
    return (
        True,
        f"bundle: {site.relative_to(d.parent)} for the node's python {NODE_PYTHON}: {', '.join(dists)}",
        modules,
    )


def in_image(module: str, owners: dict, have: set[str]) -> bool:
    """The image holds the module: a distribution of the image owns it (as this interpreter's metadata says), or, for
    a module this interpreter does not have, one is named as the module is."""
    names = owners.get(module) or [module]
    return any(re.sub(r"[-_.]+", "-", n).lower() in have for n in names)


def modules_line(site: dict[str, str]) -> tuple[bool, str]:
    have, owners = image(), importlib.metadata.packages_distributions()
    missing, optional, by_module = {}, {}, {}
    for imp in node_imports():
        if imp.module in site:
            by_module.setdefault(imp.module, "deps/site")
        elif in_image(imp.module, owners, have):
            by_module.setdefault(imp.module, "the image")
        else:
            (optional if imp.optional else missing).setdefault(imp.module, []).append(imp.where)
    for m in missing:
        optional.pop(m, None)
    found = ", ".join(f"{m} ({w})" for m, w in sorted(by_module.items()))
    if missing:
        named = "; ".join(f"{m} (imported by {', '.join(w[:3])})" for m, w in sorted(missing.items()))
        return False, f"bundle: the node's Python side imports what neither the image nor deps/site has: {named}"
    extra = ""
    if optional:
        extra = "; optional there, and in neither: " + ", ".join(sorted(optional))
    return True, (
        f"bundle: every module the node's Python side imports is in the image (as read on {image_date()}) or "
        f"deps/site: {found}{extra}"
    )


def check_bundle(make_it: bool = True) -> int:
    """The command: make deps/ where it does not fit (unless `make_it` is False), then a line per check."""
    d = deps()
    reason = why_make(d)
    seconds = None
    if reason and make_it:
        print(f"bundle: making deps/ for the tree that travels ({reason}): scripts/setup.sh --bundle", flush=True)
        code, seconds = make(d)
        if code != 0:
            print(f"bundle: scripts/setup.sh --bundle failed (exit {code}) after {seconds:.0f} s: deps/ is not fit")
            return 1
    if not (d / "MANIFEST.txt").exists():
        print(f"bundle: no {d / 'MANIFEST.txt'}: scripts/setup.sh --bundle first")
        return 1
    print(made_line(d, seconds, "" if seconds is not None else reason))
    ok_prebuilt, said = prebuilt_line(d) if prebuilt.load_id(d) else (False, f"bundle: no {d / 'prebuilt'}")
    print(said)
    ok_size, said = size_line(d)
    print(said)
    ok_site, said, modules = site_line(d)
    print(said)
    ok_modules, said = modules_line(modules)
    print(said)
    return 0 if ok_prebuilt and ok_size and ok_site and ok_modules else 1
