"""The GPU node's python, rehearsed on this machine. scripts/verify-gpu.sh --rehearse-on-cpu --as-node puts this
folder on PYTHONPATH, so every Python process of the call starts here: the interpreter's own site-packages then yield
only the distributions the node's image holds (../node_image.txt, from the device tool's description of the image),
and a module the image lacks is not found, as on the node, unless it comes from elsewhere on the path: deps/site (the
bundle), the checkout. `import` and importlib.util.find_spec both answer as the node's python would (a path entry
finder that finds nothing, not a finder that raises). Not rehearsed: Python's own version, and each package's version.

Each module hidden is appended to $STEPWISE_AS_NODE_LOG, when set, with the program that asked, so the call can say
what the node would have lacked. Then the next sitecustomize on the path runs, as it would have without this one."""

import importlib.machinery
import importlib.metadata
import importlib.util
import os
import re
import site
import sys

HERE = os.path.dirname(os.path.realpath(__file__))
IMAGE_LIST = os.path.join(os.path.dirname(HERE), "node_image.txt")
# Looked for on the path at start-up, by whatever interpreter: never the image's to have or lack.
ALWAYS = {"sitecustomize", "usercustomize"}


def normal(name: str) -> str:
    """A distribution's name as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def image() -> set[str]:
    with open(IMAGE_LIST) as f:
        return {normal(l.strip()) for l in f if l.strip() and not l.startswith("#")}


def note(name: str) -> None:
    log = os.environ.get("STEPWISE_AS_NODE_LOG")
    if log:
        program = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "python"
        with open(log, "a") as f:  # one short line, appended: processes running at once do not interleave
            f.write(f"{name}\t{program}\n")


class ImageOnly:
    """The path entry finder of one of the interpreter's site-packages folders: a top-level module is found there only
    where a distribution of the image owns it. Submodules are found under their package's own folder, not here."""

    def __init__(self, inner, owners: dict, allowed: set[str]):
        self.inner, self.owners, self.allowed = inner, owners, allowed

    def find_spec(self, fullname, target=None):
        spec = self.inner.find_spec(fullname, target)
        if spec is None or "." in fullname or fullname in ALWAYS:
            return spec
        if any(normal(d) in self.allowed for d in self.owners.get(fullname, ())):
            return spec
        note(fullname)
        return None

    def invalidate_caches(self):
        self.inner.invalidate_caches()


def entry_finder(path: str):
    """The finder the interpreter would use for a path entry (its FileFinder), before this one wraps it."""
    for hook in sys.path_hooks:
        try:
            return hook(path)
        except ImportError:
            continue
    return None


def install() -> int:
    allowed = image()
    owners = importlib.metadata.packages_distributions()
    own = {os.path.realpath(p) for p in [*site.getsitepackages(), site.getusersitepackages()]}
    for entry in sys.path:
        if entry and os.path.realpath(entry) in own and os.path.isdir(entry):
            inner = sys.path_importer_cache.get(entry) or entry_finder(entry)
            if inner is not None and not isinstance(inner, ImageOnly):
                sys.path_importer_cache[entry] = ImageOnly(inner, owners, allowed)
    return len(allowed)


def run_next() -> None:
    """The sitecustomize this one hides (a later folder on the path), run as Python would have run it."""
    for entry in sys.path:
        if not entry or os.path.realpath(entry) == HERE:
            continue
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", [entry])
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return


# How many distributions the rehearsed image has: the warm-up's probe reads it to say the rehearsal is on.
IMAGE_SIZE = install()
run_next()
