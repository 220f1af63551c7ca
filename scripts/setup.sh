#!/usr/bin/env bash
# The one setup path. A connected machine gets Debian packages and torch (in a cached venv); an offline one (a lent
# GPU node, an air-gapped cluster) builds from what deps/ carries: `scripts/setup.sh --bundle` fills deps/ on a
# connected machine with every build and test dependency except torch, taken from Debian's packages.
#
# Used by ./ablate, ./report, ./run_all.sh, scripts/python and scripts/test.sh whenever something is missing.
#   scripts/setup.sh            install what is missing (never stalls: an unreachable registry gives up in seconds)
#   scripts/setup.sh --python   the same, then print the interpreter whose torch the build uses
#   scripts/setup.sh --pythonpath [PYTHON]  print PYTHONPATH with the bundled packages for PYTHON's version
#                               (deps/site/pythonX.Y, installed from deps/wheels first where PYTHON lacks them) first:
#                               ./report, scripts/verify-gpu.sh and every Python step they start import from there
#   scripts/setup.sh --bundle   put the build and test dependencies into deps/ (needs apt-get and pip with a registry),
#                               with the built corpus and the prebuilt binaries a GPU node runs (scripts/prebuilt.py);
#                               fails first, in one line, when it cannot make the prebuilt (no nvcc, a failed build)
#   scripts/setup.sh --bundle --without-prebuilt  the same without the binaries (a node then builds what it runs)
#   scripts/setup.sh --corpus NAME  install the Debian package NAME's text comes from, then build the corpus
#                               (scripts/corpus.py build NAME) into the cache; --data=corpus:NAME reads it
#
# Environment:
#   STEPWISE_VENV          where the virtual environment lives (default: a per-user cache dir keyed by the pin)
#   STEPWISE_PYTHON        use this interpreter as is (it must import torch); skips the venv entirely
#   STEPWISE_DEPS          the offline bundle (default: deps/ in the checkout)
#   STEPWISE_NET_TIMEOUT   seconds a registry may take to answer before setup gives up on it (default 20)
#   STEPWISE_SETUP_TIMEOUT seconds any one install may take: apt-get install, pip, the corpus build (default 1800;
#                          30 under scripts/verify-gpu.sh, where a node is offline and held for minutes)
#   STEPWISE_BUNDLE_PYTHON_VERSION  the GPU image's python X.Y that --bundle fetches wheels and headers for (3.12)
#   STEPWISE_CORPUS_DIR    where corpora are built (default: ${XDG_CACHE_HOME:-~/.cache}/stepwise/corpus)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REQUIREMENTS="$ROOT/scripts/requirements.txt"
DEPS="${STEPWISE_DEPS:-$ROOT/deps}"
NET_TIMEOUT="${STEPWISE_NET_TIMEOUT:-20}"
SETUP_TIMEOUT="${STEPWISE_SETUP_TIMEOUT:-1800}"

# Libraries the build and the tests compile against: exactly what --bundle carries into deps/.
BUNDLED_PACKAGES=(
  nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev
  libbenchmark-dev libbenchmark1debian  # the -dev package's libbenchmark.so.1 lives in the runtime package
  libgloo-dev  # headers only: ProcessGroupGloo.hpp includes them; torch carries its own gloo library
)
# Tools, by the command that shows them present (a GPU image brings its own cmake, ninja and g++).
TOOL_PACKAGES=(cmake:cmake ninja-build:ninja g++:g++)
# Wanted, not required: venvs, Python.h for torch.compile's C++ backend on CPU, the dashboard test's browser,
# the format check's clang-format, the English text of the default corpus (scripts/corpus.py; throughput runs
# never need it), the two host allocators the host_allocator flag can load (bench/host_allocator.h), and ccache, which
# makes a rebuild after a small change cost seconds (CMakeLists.txt uses it whenever it is on PATH), and shellcheck,
# which actionlint runs on the CI workflow's scripts (tests/structure/test_workflow_lint.py).
WANTED_PACKAGES=(python3-venv python3-dev chromium clang-format fortunes libjemalloc2 libtcmalloc-minimal4 ccache
                 shellcheck)
# Python packages a GPU image may lack: jsonschema and what it requires beyond attrs and typing-extensions (the Python
# rows and ./report), and tiktoken with regex (scripts/corpus.py's GPT-2 BPE; its `requests` only downloads, which the
# corpus never does). The lent nodes' image has tiktoken and regex but no jsonschema (scripts/verify/node_image.txt);
# an air-gapped cluster may have neither. Bundled as wheels for that python, and installed for it in deps/site.
BUNDLED_WHEELS=(jsonschema jsonschema-specifications referencing rpds-py
                "$(grep -E '^tiktoken==' "$REQUIREMENTS" || echo tiktoken)" regex)
# The corpus setup builds when its text is here (scripts/corpus.py), and the packages --bundle carries for it.
DEFAULT_CORPUS=fortunes
CORPUS_PACKAGES=(fortunes fortunes-min)
# The allocators host_allocator loads (bench/host_allocator.cpp also looks under deps/root).
ALLOCATOR_PACKAGES=(libjemalloc2 libtcmalloc-minimal4)
BUNDLE_PYTHON_VERSION="${STEPWISE_BUNDLE_PYTHON_VERSION:-3.12}"

log() { echo "[setup] $*" >&2; }

pin_key() {
  # The environment is keyed by the requirements file, so a new pin gets a new environment.
  grep -v '^\s*#' "$REQUIREMENTS" | grep -v '^\s*$' | sha256sum | cut -c1-12
}

venv_dir() {
  local torch_pin
  torch_pin="$(grep -E '^torch==' "$REQUIREMENTS" | cut -d= -f3)"
  echo "${STEPWISE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/stepwise/venv-torch${torch_pin}-$(pin_key)}"
}

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

bundled() { [[ -f "$DEPS/MANIFEST.txt" ]] && grep -q "^deb $1 " "$DEPS/MANIFEST.txt"; }

# Prints the missing packages; returns 1 when only wanted ones are missing.
missing_apt_packages() {
  local missing=() required=0 entry
  for p in "${BUNDLED_PACKAGES[@]}"; do installed "$p" || bundled "$p" || { missing+=("$p"); required=1; }; done
  for entry in "${TOOL_PACKAGES[@]}"; do
    command -v "${entry#*:}" >/dev/null || installed "${entry%%:*}" || { missing+=("${entry%%:*}"); required=1; }
  done
  for p in "${WANTED_PACKAGES[@]}"; do installed "$p" || missing+=("$p"); done
  echo "${missing[@]:-}"
  return $((1 - required))
}

# A registry that did not answer is not asked again for an hour when only wanted packages are missing, so every
# ./ablate on an offline machine does not wait for it.
NO_REGISTRY_MARK="${TMPDIR:-/tmp}/stepwise-no-registry-$(id -u)"
recently_unreachable() { [[ -n "$(find "$NO_REGISTRY_MARK" -mmin -60 2>/dev/null)" ]]; }

how_to_bundle() {
  log "  on a machine with a package registry: scripts/setup.sh --bundle, then carry deps/ here (it holds every"
  log "  build and test dependency except torch; the build uses it whenever it is there)"
}

install_apt() {
  command -v dpkg-query >/dev/null || { log "not a Debian system: install ${BUNDLED_PACKAGES[*]} by hand"; return 0; }
  local missing required=1
  missing="$(missing_apt_packages)" || required=0
  [[ -z "$missing" ]] && return 0
  [[ $required == 0 ]] && recently_unreachable && return 0
  apt_install $missing
}

# Installs the named Debian packages; an unreachable registry or a failed install warns (and says how to bundle).
apt_install() {
  local missing="$*"
  if ! command -v apt-get >/dev/null; then
    log "apt-get is not available; missing Debian packages: $missing"
    how_to_bundle
    return 0
  fi
  local sudo=()
  [[ "$(id -u)" != 0 ]] && sudo=(sudo -n)
  local apt_log net=(-o Acquire::http::Timeout=5 -o Acquire::https::Timeout=5 -o Acquire::Retries=0)
  apt_log="$(mktemp -t stepwise-apt.XXXXXX)"
  log "installing Debian packages: $missing (log: $apt_log)"
  # `timeout` bounds a registry that accepts connections and never answers; apt's own timeouts the rest.
  if ! timeout "$NET_TIMEOUT" "${sudo[@]}" apt-get "${net[@]}" update -qq >"$apt_log" 2>&1; then
    touch "$NO_REGISTRY_MARK"
    log "WARNING: no package registry answered within ${NET_TIMEOUT} s (see $apt_log); still missing: $missing"
    how_to_bundle
    return 0
  fi
  if ! DEBIAN_FRONTEND=noninteractive timeout "$SETUP_TIMEOUT" "${sudo[@]}" apt-get "${net[@]}" install -y -qq \
       --no-install-recommends $missing >>"$apt_log" 2>&1; then
    log "WARNING: could not install $missing (see $apt_log); continuing, CMake will name what is missing"
    how_to_bundle
  fi
}

# Prints the python interpreter whose torch the build uses.
resolve_python() {
  if [[ -n "${STEPWISE_PYTHON:-}" ]]; then
    echo "$STEPWISE_PYTHON"
    return
  fi
  # A machine that already has torch (a GPU box) uses it instead of installing one.
  if python3 -c 'import torch' 2>/dev/null; then
    command -v python3
    return
  fi
  echo "$(venv_dir)/bin/python"
}

install_venv() {
  local py="$1" venv
  [[ "$py" != "$(venv_dir)/bin/python" ]] && return 0
  venv="$(venv_dir)"
  [[ -f "$venv/.stepwise-complete" ]] && return 0
  mkdir -p "$(dirname "$venv")"
  # Two concurrent setups (a test and ./ablate) must not install into the same directory at once.
  exec 9>"$venv.lock"
  flock 9
  if [[ ! -f "$venv/.stepwise-complete" ]]; then
    log "creating $venv (torch wheel with CUDA libraries: several GB, once per pin)"
    rm -rf "$venv"
    python3 -m venv "$venv"
    local pip=("$venv/bin/pip" --disable-pip-version-check --timeout 10 --retries 1)
    if ! timeout "$SETUP_TIMEOUT" "${pip[@]}" install -q -r "$REQUIREMENTS" >&2; then
      rm -rf "$venv"
      log "pip could not install $REQUIREMENTS (is PyPI reachable?). Offline, point STEPWISE_PYTHON at a python"
      log "that imports torch $(grep -E '^torch==' "$REQUIREMENTS" | cut -d= -f3), and carry deps/ (scripts/setup.sh --bundle)"
      exit 1
    fi
    touch "$venv/.stepwise-complete"
  fi
  flock -u 9
}

# The bundled wheels, installed: deps/site/pythonX.Y for an interpreter X.Y that lacks them. --bundle installs the GPU
# image's (STEPWISE_BUNDLE_PYTHON_VERSION) itself, so a node imports them from its first process on
# (scripts/verify-gpu.sh puts the folder on PYTHONPATH before anything runs); an interpreter of another version
# installs its own here, from the wheels carried for it. pip picks from deps/wheels the wheel of each name that fits
# the interpreter (rpds-py, regex and tiktoken are built per Python version). Without them the reports still run,
# unvalidated (jsonschema is optional there).
python_version() { "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null; }

wheel_names() { local w; for w in "${BUNDLED_WHEELS[@]}"; do echo "${w%%==*}"; done; }

install_bundled_wheels() {
  local py="$1" site
  [[ -d "$DEPS/wheels" ]] || return 0
  local lacking
  lacking="$("$py" -c 'import importlib.util as u; print(*(m for m in ("jsonschema", "tiktoken") if not u.find_spec(m)))' \
             2>/dev/null || echo jsonschema tiktoken)"
  [[ -z "$lacking" ]] && return 0
  site="$DEPS/site/python$(python_version "$py")"
  [[ -f "$site/.stepwise-complete" ]] && return 0
  # shellcheck disable=SC2046
  if timeout "$SETUP_TIMEOUT" "$py" -m pip install -q --disable-pip-version-check --no-index --no-deps \
       --find-links "$DEPS/wheels" --target "$site" $(wheel_names) >&2 2>/dev/null; then
    touch "$site/.stepwise-complete"
  else
    rm -rf "$site"
    lacking="${lacking/jsonschema/no jsonschema: reports run unvalidated;}"
    lacking="${lacking/tiktoken/no tiktoken: corpora are tokenized as bytes}"
    log "the wheels in $DEPS/wheels do not fit $py (bundled for python $BUNDLE_PYTHON_VERSION); ${lacking%;}"
  fi
}

# The default corpus (scripts/corpus.py), built once into the cache when its Debian package's text is here, installed or
# carried in deps/; never fatal, since only --data=corpus:NAME reads it. Checked without starting Python when built.
corpus_dir() { echo "${STEPWISE_CORPUS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/stepwise/corpus}"; }

prepare_corpus() {
  local py="$1"
  [[ -f "$(corpus_dir)/$DEFAULT_CORPUS/meta.json" ]] && return 0
  PYTHONPATH="$(python_path "$py")" STEPWISE_NET_TIMEOUT="$NET_TIMEOUT" \
    timeout "$SETUP_TIMEOUT" "$py" "$ROOT/scripts/corpus.py" build "$DEFAULT_CORPUS" --if-missing >&2 ||
    log "WARNING: could not build the corpus $DEFAULT_CORPUS (only --data=corpus:$DEFAULT_CORPUS needs it)"
}

# --corpus NAME: the packages its text comes from (when missing), then a fresh build, failing loudly.
install_corpus() {
  local name="$1" packages p missing=()
  install_all no-corpus
  packages="$("$PYTHON_FOUND" "$ROOT/scripts/corpus.py" packages "$name")" || exit 2
  if command -v dpkg-query >/dev/null; then
    for p in $packages; do installed "$p" || missing+=("$p"); done
    if ((${#missing[@]})); then apt_install "${missing[@]}"; fi
  fi
  PYTHONPATH="$(python_path "$PYTHON_FOUND")" STEPWISE_NET_TIMEOUT="$NET_TIMEOUT" \
    "$PYTHON_FOUND" "$ROOT/scripts/corpus.py" build "$name"
}

# PYTHONPATH with the bundled packages first (once, no duplicate): deps/site/pythonX.Y for the interpreter given (else
# STEPWISE_PYTHON, else python3), when they were installed there. Never another version's: its compiled modules
# would not load, and its packages would hide the interpreter's own.
python_path() {
  local py="${1:-${STEPWISE_PYTHON:-python3}}" path="${PYTHONPATH:-}" site
  site="$DEPS/site/python$(python_version "$py")"
  if [[ -f "$site/.stepwise-complete" && ":$path:" != *":$site:"* ]]; then
    path="$site${path:+:$path}"
  fi
  echo "$path"
}

# Python.h for the GPU image's python: torch.compile's Triton compiles a small C launcher against it, and an image
# without python3-dev has none. Debian's libpython$X-dev, headers only, under deps/python$X/include (verify-gpu puts
# them on CPATH when the interpreter lacks its own). Taken from this machine's package sources, else from the Debian
# releases that carry that python; a version no Debian release carries is named in the MANIFEST, not fatal.
bundle_python_headers() {
  local work="$1" version="$BUNDLE_PYTHON_VERSION" pkg="libpython${BUNDLE_PYTHON_VERSION}-dev" suite deb=""
  local dl=(-o Acquire::http::Timeout=10 -o Acquire::Retries=1)
  (cd "$work" && timeout 300 apt-get "${dl[@]}" download "$pkg" >>"$work/apt.log" 2>&1) || true
  for suite in trixie sid; do
    compgen -G "$work/${pkg}_*.deb" >/dev/null && break
    local apt="$work/apt-$suite"
    mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" \
      >"$apt/sources.list"
    local conf=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
                -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o Debug::NoLocking=1
                -o Acquire::Languages=none "${dl[@]}")
    log "looking for $pkg in Debian $suite"
    timeout 300 apt-get "${conf[@]}" update >>"$work/apt.log" 2>&1 &&
      (cd "$work" && timeout 300 apt-get "${conf[@]}" download "$pkg" >>"$work/apt.log" 2>&1) || true
  done
  deb="$(compgen -G "$work/${pkg}_*.deb" | head -1 || true)"
  if [[ -z "$deb" ]]; then
    log "WARNING: no Debian release reachable here has $pkg: Python.h for python $version is not bundled"
    echo "# no $pkg: no Debian release reachable from $(uname -n) has it; Python.h is not bundled" >>"$DEPS/MANIFEST.txt"
    return 0
  fi
  dpkg-deb -x "$deb" "$work/python-dev"
  mkdir -p "$DEPS/python$version/include"
  cp -a "$work/python-dev/usr/include/." "$DEPS/python$version/include/"
  echo "deb $pkg $(dpkg-deb -f "$deb" Version) (headers only: python$version/include)" >>"$DEPS/MANIFEST.txt"
}

# The prebuilt binaries a lent GPU node runs instead of building (scripts/prebuilt.py): Release ablate, stepwise_micro
# and the GoogleTests, stripped, with the build id the node holds against its checkout and its own torch. Made first,
# into the bundle's work folder: without them a node spends the build step's 150 s of its call building, so a bundle
# that cannot make them (a failed build, no nvcc here) fails at once, in one line, before minutes of downloads.
# Prints the pack's one-line summary.
bundle_prebuilt() {
  local into="$1" packed build_log="$1/build.log"
  mkdir -p "$into"
  if ! "$ROOT/scripts/build.sh" --quiet >"$build_log" 2>&1; then
    bundle_refused "the build failed (its log: $(grep -o '/[^ ]*build.log' "$build_log" | tail -1 || echo "$build_log"))"
  fi
  packed="$(python3 "$ROOT/scripts/prebuilt.py" pack --deps "$into" 2>&1)" ||
    bundle_refused "$(tail -1 <<<"$packed")"
  echo "$packed"
}

bundle_refused() {
  echo "setup: --bundle made no prebuilt binary: $1; a node would spend 150 s of its call building (scripts/setup.sh --bundle --without-prebuilt bundles without it)" >&2
  exit 1
}

# The built default corpus (a GPU node's time-to-target step trains on it; verify-gpu.sh reads deps/corpus when the
# node's cache has none): this machine's cache, else built here from the text just bundled.
bundle_corpus() {
  local built
  built="$(corpus_dir)/$DEFAULT_CORPUS"
  mkdir -p "$DEPS/corpus"
  if [[ ! -f "$built/meta.json" ]]; then
    STEPWISE_DEPS="$DEPS" STEPWISE_CORPUS_DIR="$DEPS/corpus" "$(resolve_python)" "$ROOT/scripts/corpus.py" build \
      "$DEFAULT_CORPUS" >&2 || log "WARNING: could not build the corpus $DEFAULT_CORPUS for deps/corpus"
  else
    cp -a "$built" "$DEPS/corpus/"
  fi
  if [[ -f "$DEPS/corpus/$DEFAULT_CORPUS/meta.json" ]]; then
    echo "corpus $DEFAULT_CORPUS $(du -sh "$DEPS/corpus/$DEFAULT_CORPUS" | cut -f1) (corpus/$DEFAULT_CORPUS)" >>"$DEPS/MANIFEST.txt"
  fi
}

# The wheels of BUNDLED_WHEELS for python X.Y ($1, then --install or not; the platforms after them, else this
# machine's) into deps/wheels; with --install, installed from there into deps/site/pythonX.Y as pip picks them for that
# version and platform, so the node imports them from the first process of its call with nothing to install there.
bundle_wheels() {
  local version="$1" install="$2" site="$DEPS/site/python$1"
  shift 2
  local target=(--only-binary=:all: --python-version "$version" --implementation cp "$@")
  log "downloading wheels for python $version: ${BUNDLED_WHEELS[*]}"
  timeout 600 python3 -m pip download -q --disable-pip-version-check --timeout 10 --retries 1 --no-deps \
    "${target[@]}" -d "$DEPS/wheels" "${BUNDLED_WHEELS[@]}" || { log "pip download failed"; exit 1; }
  [[ "$install" == --install ]] || return 0
  # shellcheck disable=SC2046
  timeout 600 python3 -m pip install -q --disable-pip-version-check --no-index --no-deps --find-links "$DEPS/wheels" \
    "${target[@]}" --target "$site" $(wheel_names) ||
    { log "pip could not install the wheels for python $version"; exit 1; }
  touch "$site/.stepwise-complete"
  echo "site python$version: $(cd "$site" && find . -maxdepth 1 -name '*.dist-info' -printf '%f\n' | sort |
    sed 's/\.dist-info$//' | tr '\n' ' ')(site/python$version)" >>"$DEPS/MANIFEST.txt"
}

# deps/: Debian packages unpacked under deps/root (dpkg -x, no root needed on the target), wheels for the GPU image's
# python under deps/wheels, and MANIFEST.txt naming every one with its version.
bundle() {
  local prebuilt="$1" packed="" began=$SECONDS
  for tool in apt-get dpkg-deb python3; do
    command -v "$tool" >/dev/null || { log "--bundle needs $tool (a Debian machine with a registry)"; exit 1; }
  done
  BUNDLE_WORK="$(mktemp -d -t stepwise-bundle.XXXXXX)"
  trap 'rm -rf "$BUNDLE_WORK"' EXIT
  local work="$BUNDLE_WORK"
  if [[ $prebuilt == with ]]; then
    packed="$(bundle_prebuilt "$work/prebuilt-deps")" || exit 1
    log "$packed"
  fi
  log "downloading ${BUNDLED_PACKAGES[*]} ${CORPUS_PACKAGES[*]} ${ALLOCATOR_PACKAGES[*]}"
  (cd "$work" && timeout 600 apt-get -o Acquire::http::Timeout=10 -o Acquire::Retries=1 download \
     "${BUNDLED_PACKAGES[@]}" "${CORPUS_PACKAGES[@]}" "${ALLOCATOR_PACKAGES[@]}" >"$work/apt.log" 2>&1) ||
    { cat "$work/apt.log" >&2; log "apt-get download failed"; exit 1; }
  rm -rf "$DEPS"
  mkdir -p "$DEPS/root" "$DEPS/wheels"
  {
    echo "# stepwise offline bundle: scripts/setup.sh --bundle on $(uname -n), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "# Debian packages unpacked under root/ (dpkg -x); wheels for python $BUNDLE_PYTHON_VERSION under wheels/"
  } >"$DEPS/MANIFEST.txt"
  local deb
  for deb in "$work"/*.deb; do
    dpkg-deb -x "$deb" "$DEPS/root"
    echo "deb $(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version)" >>"$DEPS/MANIFEST.txt"
  done
  # The corpus text's licence travels with it; the rest of the documentation does not.
  local keep
  for keep in "${CORPUS_PACKAGES[@]}"; do
    mkdir -p "$DEPS/licenses/$keep"
    cp "$DEPS/root/usr/share/doc/$keep/copyright" "$DEPS/licenses/$keep/" 2>/dev/null || true
  done
  rm -rf "$DEPS/root/usr/share/doc" "$DEPS/root/usr/share/lintian" "$DEPS/root/usr/src"
  bundle_python_headers "$work"
  # GPT-2's BPE ranks for scripts/corpus.py, checked against the sha256 tiktoken expects (deps/tokenizers/).
  if python3 "$ROOT/scripts/corpus.py" fetch-ranks "$DEPS/tokenizers" >&2; then
    echo "tokenizer gpt2.tiktoken $(sha256sum "$DEPS/tokenizers/gpt2.tiktoken" | cut -c1-64)" >>"$DEPS/MANIFEST.txt"
  else
    log "WARNING: GPT-2's BPE ranks are not bundled: corpora built from deps/ are tokenized as bytes"
    echo "# no tokenizer: GPT-2's BPE ranks could not be fetched; corpora built from deps/ use bytes" >>"$DEPS/MANIFEST.txt"
  fi
  bundle_wheels "$BUNDLE_PYTHON_VERSION" --install --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64
  local here
  here="$(python_version "$(resolve_python)")"
  # This machine's interpreter's wheels too, when it is another version (not installed: the node does not need them):
  # the rehearsal of the node's python (scripts/verify-gpu.sh --rehearse-on-cpu --as-node) installs them here.
  if [[ -n "$here" && "$here" != "$BUNDLE_PYTHON_VERSION" ]]; then bundle_wheels "$here" --download-only; fi
  local whl
  for whl in "$DEPS"/wheels/*.whl; do echo "wheel $(basename "$whl")" >>"$DEPS/MANIFEST.txt"; done
  bundle_corpus
  if [[ -n "$packed" ]]; then
    mv "$work/prebuilt-deps/prebuilt" "$DEPS/prebuilt"
    echo "$packed" >>"$DEPS/MANIFEST.txt"
  else
    echo "# no prebuilt binary (--without-prebuilt): a node builds what it runs" >>"$DEPS/MANIFEST.txt"
  fi
  echo "# made in $((SECONDS - began)) s" >>"$DEPS/MANIFEST.txt"
  log "deps/ ready: $(du -sh "$DEPS" | cut -f1) ($(grep -c '^deb ' "$DEPS/MANIFEST.txt") packages, $(grep -c '^wheel ' "$DEPS/MANIFEST.txt") wheels)"
}

# Installs what is missing; torch is imported once, to find the interpreter (none when STEPWISE_PYTHON is set).
# `no-corpus`: leave the default corpus to the caller.
install_all() {
  local py
  install_apt
  py="$(resolve_python)"
  install_venv "$py"
  install_bundled_wheels "$py"
  [[ "${1:-}" == no-corpus ]] || prepare_corpus "$py"
  PYTHON_FOUND="$py"
}

main() {
  case "${1:-}" in
    --python) install_all; echo "$PYTHON_FOUND" ;;
    --pythonpath)  # the bundle's packages made importable by that interpreter (installed if need be), then the path
      install_bundled_wheels "${2:-${STEPWISE_PYTHON:-python3}}"
      python_path "${2:-}" ;;
    --venv-dir) venv_dir ;;
    --bundle)
      case "${2:-}" in
        "") bundle with ;;
        --without-prebuilt) bundle without ;;
        *) echo "scripts/setup.sh: --bundle takes no option but --without-prebuilt, not '$2'" >&2; exit 2 ;;
      esac ;;
    --corpus) install_corpus "${2:-$DEFAULT_CORPUS}" ;;
    -h | --help) sed -n '2,/^set -euo/{/^#/{s/^# \{0,1\}//;p}}' "${BASH_SOURCE[0]}" ;;  # the comment above
    "" ) install_all ;;
    *) echo "scripts/setup.sh: unknown option '$1' (valid: --python, --pythonpath, --bundle, --venv-dir, --corpus, --help)" >&2
       exit 2 ;;
  esac
}

main "$@"
