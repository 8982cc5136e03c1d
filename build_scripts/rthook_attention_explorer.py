"""PyInstaller runtime hook: runs inside the bundle before the app's own code.

* matplotlib (imported by captum) gets only its Agg backend in the bundle, so pin it.
* numba (umap-learn's JIT, the corpus map) caches its compiled code in ``NUMBA_CACHE_DIR``: a folder the user may
  write (``~/.cache/attention-explorer/numba``, or the temporary folder), not the bundle's folder.
* With no locale in the environment (e.g. ``env -i``), ask for C.UTF-8 so that Qt does not warn
  about a non-UTF-8 locale; a locale the user set is left alone.
"""

import os

os.environ.setdefault("MPLBACKEND", "Agg")
if not any(os.environ.get(k) for k in ("LC_ALL", "LC_CTYPE", "LANG")):
    os.environ["LC_CTYPE"] = "C.UTF-8"
if "NUMBA_CACHE_DIR" not in os.environ:
    import tempfile

    _base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    _cache = os.path.join(_base, "attention-explorer", "numba")
    try:
        os.makedirs(_cache, exist_ok=True)
    except OSError:
        _cache = os.path.join(tempfile.gettempdir(), "attention-explorer-numba")
    os.environ["NUMBA_CACHE_DIR"] = _cache
