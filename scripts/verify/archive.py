"""verify-artifacts.tar.gz: the logs, JUnit, results and report of a pass, bounded by construction so it always comes
back from a lent machine. Written last, after verify.md and verify.json, so a kill while it compresses loses only the
archive."""

from __future__ import annotations

import tarfile
import time

from verify.runner import Verifier

ARCHIVE_LIMIT_BYTES = 16 * 2**20
ARCHIVE_FILE_LIMIT_BYTES = 4 * 2**20
NEVER_ARCHIVED = (".safetensors", ".bin", ".pt", ".pth", ".npy", ".ckpt")


def write_archive(v: Verifier, end: float) -> None:
    """Logs, JUnit, results and the report, in that order, as long as they fit: never a weights or token file, no file
    over ARCHIVE_FILE_LIMIT_BYTES, the whole under ARCHIVE_LIMIT_BYTES (counted uncompressed, so the gzip can only be
    smaller), and nothing added once `end` (time.monotonic()) is reached. What was left out is listed in verify.md."""
    left_out, size, count = [], 1024, 0  # tar's end-of-archive blocks
    target = v.out / "verify-artifacts.tar.gz"
    with tarfile.open(target, "w:gz", compresslevel=6) as tar:
        for top in ("logs", "junit", "results", "report"):
            for p in sorted((v.work / top).rglob("*")) if (v.work / top).exists() else []:
                if not p.is_file() or p.is_symlink():
                    continue
                rel, bytes_ = p.relative_to(v.work), p.stat().st_size
                cost = 512 + (bytes_ + 511) // 512 * 512
                why = (
                    "weights or token data"
                    if p.suffix in NEVER_ARCHIVED
                    else f"over {ARCHIVE_FILE_LIMIT_BYTES // 2**20} MiB"
                    if bytes_ > ARCHIVE_FILE_LIMIT_BYTES
                    else "the archive is full"
                    if size + cost > ARCHIVE_LIMIT_BYTES - 65536
                    else "out of time"
                    if end - time.monotonic() < 1
                    else ""
                )
                if why:
                    left_out.append(f"{rel} ({bytes_ / 2**20:.1f} MiB, {why})")
                    continue
                tar.add(p, arcname=f"verify-artifacts/{rel}")
                size, count = size + cost, count + 1
    v.archive = {"files": count, "bytes": target.stat().st_size, "left_out": left_out}
