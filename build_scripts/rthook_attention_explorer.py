"""PyInstaller runtime hook: runs inside the bundle before the app's own code.

* matplotlib (imported by captum) gets only its Agg backend in the bundle, so pin it.
* With no locale in the environment (e.g. ``env -i``), ask for C.UTF-8 so that Qt does not warn
  about a non-UTF-8 locale; a locale the user set is left alone.
"""

import os

os.environ.setdefault("MPLBACKEND", "Agg")
if not any(os.environ.get(k) for k in ("LC_ALL", "LC_CTYPE", "LANG")):
    os.environ["LC_CTYPE"] = "C.UTF-8"
