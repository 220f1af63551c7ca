#!/usr/bin/env -S sh -c 'exec "$(dirname "$(readlink -f "$0")")/python" "$0" "$@"'
"""Real English text that stepwise prepares by itself on a fresh machine, with nothing downloaded at run time.

The text comes from a Debian package installed by name (`fortunes`: BSD-licensed quotations, about 2.6 MB). It is
tokenized with GPT-2's BPE (tiktoken, with the r50k ranks read from a local file whose sha256 is the one tiktoken
expects) or, where those cannot be had, byte by byte; and written, never committed, into the cache:

    <root>/<name>/train.bin, val.bin   nanoGPT's raw uint16 tokens; each document followed by the end-of-text token
    <root>/<name>/meta.json            vocab_size, tokenizer, the ranks file's sha256, the source package and its
                                       version, each file's token count and sha256

<root> is STEPWISE_CORPUS_DIR, else ${XDG_CACHE_HOME:-~/.cache}/stepwise/corpus; `./ablate --data=corpus:NAME` reads it.
A document goes to val.bin when the sha256 of its text is 0 modulo 10 (about a tenth): the split depends on the text
alone, and a document that occurs twice lands on the same side, so validation never meets the training stream.

The ranks file: --ranks FILE, else the copy cached by an earlier build, else deps/tokenizers/ (scripts/setup.sh
--bundle), else fetched now (this is the set-up step) from PyPI's openai-whisper source package, which ships it as
whisper/assets/gpt2.tiktoken, with `pip download` into a temporary directory.

    scripts/corpus.py build NAME [--tokenizer gpt2|bytes] [--ranks FILE] [--text-dir DIR]
    scripts/corpus.py path NAME        the directory of a built corpus (exit 1 when it is not built)
    scripts/corpus.py list             the corpora this can build, and which are built here
    scripts/corpus.py packages NAME    the Debian packages NAME's text comes from (scripts/setup.sh --corpus)
    scripts/corpus.py fetch-ranks DIR  the checked ranks file into DIR (scripts/setup.sh --bundle: deps/tokenizers)
"""

from __future__ import annotations

import argparse
import base64
import datetime
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from array import array
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The sha256 tiktoken expects of r50k_base.tiktoken (GPT-2's ranks), as tiktoken_ext/openai_public.py states it;
# tests/scripts/test_corpus.py reads it back from the installed tiktoken.
R50K_SHA256 = "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"
GPT2_VOCAB = 50257
GPT2_EOT = 50256  # <|endoftext|>, added in code: the ranks file holds the 50,256 byte-pair ranks alone
# The source package that ships the ranks file, and where in it; fetched at set-up time only.
WHISPER_SDIST = "openai-whisper==20250625"
WHISPER_RANKS = "whisper/assets/gpt2.tiktoken"
# Byte-level: the UTF-8 bytes as tokens, and NUL (which no document holds) after each document.
BYTES_VOCAB = 256
BYTES_EOT = 0
# One document in VAL_MODULUS goes to val.bin.
VAL_MODULUS = 10


@dataclass(frozen=True)
class Source:
    """Where a corpus's text comes from: Debian packages and the folder they install it into."""

    packages: tuple[str, ...]
    directory: str  # relative to / (or to deps/root when bundled)
    license: str
    description: str


SOURCES = {
    "fortunes": Source(
        packages=("fortunes", "fortunes-min"),
        directory="usr/share/games/fortunes",
        license="BSD",
        description="Debian's fortune cookies: quotations, jokes and verse (BSD, about 2.6 MB)",
    ),
}


def log(message: str) -> None:
    print(f"[corpus] {message}", file=sys.stderr)


def cache_home() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "stepwise"


def corpus_root() -> Path:
    """Where corpora are built; the C++ side (bench/data/corpus.cpp) looks in the same place."""
    return Path(os.environ["STEPWISE_CORPUS_DIR"]) if os.environ.get("STEPWISE_CORPUS_DIR") else cache_home() / "corpus"


def deps_dir() -> Path:
    return Path(os.environ.get("STEPWISE_DEPS") or ROOT / "deps")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# --- the text ---------------------------------------------------------------------------------------------------


def text_directory(source: Source) -> Path | None:
    """The installed text (Debian's packages), else the bundle's (deps/root, from scripts/setup.sh --bundle)."""
    for base in (Path("/"), deps_dir() / "root"):
        if (base / source.directory).is_dir():
            return base / source.directory
    return None


def package_versions(source: Source, directory: Path) -> dict[str, str | None]:
    """Each package's Debian version: dpkg's for installed text, the bundle's MANIFEST.txt for bundled text."""
    versions: dict[str, str | None] = {}
    manifest = deps_dir() / "MANIFEST.txt"
    bundled = directory.is_relative_to(deps_dir()) and manifest.is_file()
    lines = manifest.read_text().splitlines() if bundled else []
    for package in source.packages:
        if bundled:
            found = [line.split()[2] for line in lines if line.startswith(f"deb {package} ")]
            versions[package] = found[0] if found else None
            continue
        try:
            run = subprocess.run(
                ["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True, timeout=30
            )
            versions[package] = run.stdout.strip() if run.returncode == 0 and run.stdout.strip() else None
        except (OSError, subprocess.TimeoutExpired):
            versions[package] = None
    return versions


def text_files(source: Source, directory: Path) -> list[Path]:
    """The packages' own text files, sorted: not the strfile indexes (.dat) or the .u8 links beside them, and not
    what other packages (fortunes-off, fortunes-debian-hints, ...) add to the same folder, so the corpus is the same
    on every machine with the same package versions."""
    candidates = sorted(p for p in directory.iterdir() if p.is_file() and not p.is_symlink() and p.suffix != ".dat")
    if directory.is_relative_to(deps_dir()):
        return candidates  # the bundle unpacks these packages alone
    owned: set[str] = set()
    try:
        run = subprocess.run(["dpkg-query", "-L", *source.packages], capture_output=True, text=True, timeout=30)
        owned = {line.strip() for line in run.stdout.splitlines()}
    except (OSError, subprocess.TimeoutExpired):
        pass
    return [p for p in candidates if str(p) in owned] if owned else candidates


def fortune_documents(path: Path) -> list[str]:
    """A fortune file's entries: text between lines that hold a single %."""
    text = path.read_bytes().decode("utf-8", errors="replace")
    documents, current = [], []
    for line in text.splitlines():
        if line.strip() == "%":
            documents.append("\n".join(current).strip("\n"))
            current = []
        else:
            current.append(line)
    documents.append("\n".join(current).strip("\n"))
    return [d for d in documents if d.strip()]


def goes_to_val(document: str) -> bool:
    return int.from_bytes(hashlib.sha256(document.encode("utf-8")).digest()[:8], "big") % VAL_MODULUS == 0


# --- the tokenizers ---------------------------------------------------------------------------------------------


class Unavailable(Exception):
    """GPT-2's BPE cannot be had here: no tiktoken, or no ranks file with the expected sha256."""


def parse_ranks(data: bytes) -> dict[bytes, int]:
    """tiktoken's ranks format: one `base64-token rank` per line (tiktoken.load.load_tiktoken_bpe, without the
    download cache it keeps beside every file it reads)."""
    ranks = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def checked_ranks(path: Path) -> bytes:
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != R50K_SHA256:
        raise Unavailable(f"{path} has sha256 {digest}, not r50k_base's {R50K_SHA256}")
    return data


def fetch_ranks(into: Path, timeout: float) -> Path:
    """The ranks file from openai-whisper's source package, fetched with pip into a temporary directory and checked;
    copied to `into` (a directory)."""
    with tempfile.TemporaryDirectory(prefix="stepwise-ranks-") as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps"]
        cmd += ["--no-binary", ":all:", "--timeout", str(timeout), "--retries", "0", "-d", tmp, WHISPER_SDIST]
        try:
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=max(60.0, 6 * timeout))
        except (OSError, subprocess.TimeoutExpired) as e:
            raise Unavailable(f"pip download {WHISPER_SDIST} did not finish: {e}") from e
        archives = sorted(Path(tmp).glob("*.tar.gz"))
        if run.returncode != 0 or not archives:
            said = (run.stderr.strip().splitlines() or ["no archive"])[-1]
            raise Unavailable(f"pip download {WHISPER_SDIST} failed: {said}")
        with tarfile.open(archives[0]) as tar:
            member = next((m for m in tar.getmembers() if m.name.endswith("/" + WHISPER_RANKS)), None)
            if member is None:
                raise Unavailable(f"{archives[0].name} holds no {WHISPER_RANKS}")
            data = tar.extractfile(member).read()
        digest = hashlib.sha256(data).hexdigest()
        if digest != R50K_SHA256:
            raise Unavailable(f"{WHISPER_RANKS} in {archives[0].name} has sha256 {digest}, not {R50K_SHA256}")
        into.mkdir(parents=True, exist_ok=True)
        target = into / "gpt2.tiktoken"
        partial = target.with_suffix(f".{os.getpid()}.tmp")
        partial.write_bytes(data)
        partial.replace(target)
        return target


def find_ranks(explicit: Path | None, timeout: float) -> tuple[Path, str]:
    """The ranks file and where it came from: --ranks, the cached copy, deps/tokenizers, else fetched now."""
    if explicit:
        checked_ranks(explicit)
        return explicit, f"{explicit} (--ranks)"
    cached = cache_home() / "tokenizers" / "gpt2.tiktoken"
    # Both copies came from the same source package; the origin names it, not the copy, so a rebuild records the same.
    origin = f"{WHISPER_SDIST} (PyPI source package)"
    for path in (cached, deps_dir() / "tokenizers" / "gpt2.tiktoken"):
        if path.is_file():
            try:
                checked_ranks(path)
                return path, origin
            except Unavailable as e:
                log(f"ignoring {e}")
    log(f"fetching GPT-2's BPE ranks from {WHISPER_SDIST} (PyPI source package, {WHISPER_RANKS})")
    return fetch_ranks(cached.parent, timeout), origin


def gpt2_encoding(ranks_path: Path):
    """tiktoken's r50k_base built from the local ranks file: its pattern, its ranks, and <|endoftext|> = 50256."""
    try:
        import tiktoken
        from tiktoken_ext.openai_public import r50k_pat_str
    except ImportError as e:
        raise Unavailable(
            f"tiktoken is not importable by {sys.executable} ({e}); scripts/requirements.txt pins it"
        ) from e
    return tiktoken.Encoding(
        name="r50k_base",
        pat_str=r50k_pat_str,
        mergeable_ranks=parse_ranks(checked_ranks(ranks_path)),
        special_tokens={"<|endoftext|>": GPT2_EOT},
        explicit_n_vocab=GPT2_VOCAB,
    )


@dataclass
class Tokenizer:
    name: str  # "gpt2" or "bytes"
    vocab_size: int
    eot: int
    encode: object  # str -> list[int]
    ranks: dict | None  # {sha256, origin, tiktoken} for gpt2


def make_tokenizer(requested: str | None, ranks: Path | None, timeout: float) -> Tokenizer:
    """GPT-2's BPE when it can be had; bytes when asked for, or when GPT-2's cannot be had and no tokenizer was
    named (saying so)."""
    if requested != "bytes":
        try:
            path, origin = find_ranks(ranks, timeout)
            encoding = gpt2_encoding(path)
            import tiktoken

            info = {"sha256": R50K_SHA256, "origin": origin, "tiktoken": tiktoken.__version__}
            return Tokenizer("gpt2", GPT2_VOCAB, GPT2_EOT, encoding.encode_ordinary, info)
        except Unavailable as e:
            if requested == "gpt2":
                raise
            log(f"GPT-2's BPE cannot be had here: {e}")
            log("tokenizing byte by byte instead (vocabulary 256); for GPT-2's BPE, rebuild where PyPI is reachable")
            log("(scripts/setup.sh --corpus NAME), or carry deps/ from scripts/setup.sh --bundle")
    return Tokenizer("bytes", BYTES_VOCAB, BYTES_EOT, lambda text: list(text.encode("utf-8")), None)


# --- building ---------------------------------------------------------------------------------------------------


def write_tokens(path: Path, tokens: array) -> dict:
    with open(path, "wb") as f:
        tokens.tofile(f)
    return {"file": path.name, "tokens": len(tokens), "bytes": path.stat().st_size, "sha256": sha256_of(path)}


def build(name: str, requested: str | None, ranks: Path | None, timeout: float, text_dir: Path | None = None) -> Path:
    """Builds NAME into the cache from its package's text, or from `text_dir` (files in the same format: the tests'
    own text, or a copy of the package's) and returns its directory."""
    source = SOURCES[name]
    directory = text_dir or text_directory(source)
    if directory is None:
        raise SystemExit(
            f"corpus.py: the text of '{name}' is not here: install Debian's {' '.join(source.packages)} "
            f"(scripts/setup.sh --corpus {name} does), or carry deps/ from scripts/setup.sh --bundle"
        )
    if text_dir:
        files = sorted(p for p in text_dir.iterdir() if p.is_file() and not p.is_symlink() and p.suffix != ".dat")
    else:
        files = text_files(source, directory)
    if not files:
        raise SystemExit(f"corpus.py: {directory} holds none of {', '.join(source.packages)}'s text files")
    tokenizer = make_tokenizer(requested, ranks, timeout)
    assert sys.byteorder == "little", "nanoGPT's token files are little-endian uint16"
    train, val = array("H"), array("H")
    counts = {"train": 0, "val": 0}
    for path in files:
        for document in fortune_documents(path):
            split = "val" if goes_to_val(document) else "train"
            out = val if split == "val" else train
            out.extend(tokenizer.encode(document))
            out.append(tokenizer.eot)
            counts[split] += 1

    root = corpus_root()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two set-ups at once build one after the other, never into one folder
        staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=root))
        staging.chmod(0o755)  # mkdtemp makes it private; the corpus is read like any cache
        try:
            meta = {
                "name": name,
                "builder": "scripts/corpus.py",
                "format": "nanogpt",
                "vocab_size": tokenizer.vocab_size,
                "tokenizer": tokenizer.name,
                "eot_token": tokenizer.eot,
                "ranks": tokenizer.ranks,
                "source": {
                    "packages": None if text_dir else package_versions(source, directory),
                    "license": source.license,
                    "directory": str(directory),
                    "files": len(files),
                    "bytes": sum(p.stat().st_size for p in files),
                    "documents": counts["train"] + counts["val"],
                },
                "split": {
                    "rule": f"a document goes to val.bin when the sha256 of its UTF-8 text is 0 modulo {VAL_MODULUS}",
                    "train_documents": counts["train"],
                    "val_documents": counts["val"],
                },
                "train": write_tokens(staging / "train.bin", train),
                "val": write_tokens(staging / "val.bin", val),
                "built": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            }
            (staging / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
            target = root / name
            if target.exists():
                old = Path(tempfile.mkdtemp(prefix=f".{name}.old.", dir=root))
                target.rename(old / name)
                staging.rename(target)
                shutil.rmtree(old, ignore_errors=True)
            else:
                staging.rename(target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    log(
        f"{name}: {meta['train']['tokens']:,} training and {meta['val']['tokens']:,} validation tokens "
        f"({tokenizer.name}, vocabulary {tokenizer.vocab_size}) in {target}"
    )
    return target


def built_meta(name: str) -> dict | None:
    try:
        return json.loads((corpus_root() / name / "meta.json").read_text())
    except (OSError, ValueError):
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    b = commands.add_parser("build", help="build (or rebuild) a corpus into the cache")
    b.add_argument("name", choices=sorted(SOURCES))
    b.add_argument("--tokenizer", choices=("gpt2", "bytes"), help="default: gpt2, else bytes where it cannot be had")
    b.add_argument("--ranks", type=Path, help="GPT-2's r50k ranks file (gpt2.tiktoken); checked by its sha256")
    b.add_argument("--net-timeout", type=float, default=float(os.environ.get("STEPWISE_NET_TIMEOUT", 20)))
    b.add_argument("--if-missing", action="store_true", help="do nothing when the corpus is built or its text absent")
    b.add_argument("--text-dir", type=Path, help="read the text from this folder instead of the package's")
    p = commands.add_parser("path", help="print a built corpus's directory")
    p.add_argument("name")
    commands.add_parser("list", help="the corpora this can build, and which are built here")
    k = commands.add_parser("packages", help="the Debian packages a corpus's text comes from")
    k.add_argument("name", choices=sorted(SOURCES))
    f = commands.add_parser("fetch-ranks", help="put GPT-2's ranks file, checked, into DIR")
    f.add_argument("into", type=Path)
    f.add_argument("--net-timeout", type=float, default=float(os.environ.get("STEPWISE_NET_TIMEOUT", 20)))
    args = parser.parse_args(argv)

    if args.command == "build":
        if args.if_missing and (built_meta(args.name) or text_directory(SOURCES[args.name]) is None):
            return 0
        try:
            build(args.name, args.tokenizer, args.ranks, args.net_timeout, args.text_dir)
        except Unavailable as e:
            print(f"corpus.py: GPT-2's BPE cannot be had: {e} (--tokenizer bytes builds without it)", file=sys.stderr)
            return 1
        return 0
    if args.command == "path":
        if built_meta(args.name) is None:
            print(f"corpus.py: '{args.name}' is not built (scripts/setup.sh --corpus {args.name})", file=sys.stderr)
            return 1
        print(corpus_root() / args.name)
        return 0
    if args.command == "packages":
        print(" ".join(SOURCES[args.name].packages))
        return 0
    if args.command == "fetch-ranks":
        try:
            path, _ = find_ranks(None, args.net_timeout)
        except Unavailable as e:
            print(f"corpus.py: GPT-2's BPE ranks cannot be had: {e}", file=sys.stderr)
            return 1
        args.into.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, args.into / "gpt2.tiktoken")
        return 0
    for name, source in sorted(SOURCES.items()):
        meta = built_meta(name)
        state = (
            f"built: {meta['train']['tokens']:,} + {meta['val']['tokens']:,} tokens, {meta['tokenizer']}"
            if meta
            else "not built" + ("" if text_directory(source) else f" (needs Debian's {' '.join(source.packages)})")
        )
        print(f"{name:10} {state:48} {source.description}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
