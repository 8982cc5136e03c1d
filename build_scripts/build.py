"""Build the one-folder PyInstaller bundle ``dist/AttentionExplorer/`` and smoke-test it.

Usage (from the repository root, inside the venv with the ``build`` extra)::

    python build_scripts/build.py                # build, then run the bundle's --self-test
    python build_scripts/build.py --no-check     # build only
    python build_scripts/build.py --check-only   # self-test an existing bundle

Steps: refuse to build without ``transformers`` (the Hugging Face backend the bundle carries; the ``build``
extra installs it) unless ``ATTENTION_EXPLORER_BUNDLE_HF=0``, make sure the icon set exists (``build_scripts/make_icons.py``), refuse to build without the
trained weights ``resources/model/model.safetensors`` unless ``--allow-missing-weights``, run
PyInstaller on ``build_scripts/attention_explorer.spec``, copy the Linux desktop entry, its MIME types
and the icon beside the executable, then run ``AttentionExplorer --self-test`` offscreen in a scrubbed environment
(no Python, no venv on PATH) and print its JSON line and the bundle size in bytes.

Exit codes: 0 success; 1 the build or the self-test failed; 2 bad input (missing files/arguments).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "build_scripts" / "attention_explorer.spec"
APP_NAME = "AttentionExplorer"
WEIGHTS = ROOT / "resources" / "model" / "model.safetensors"
ICON_PNG = ROOT / "resources" / "icons" / "attention-explorer.png"
DESKTOP_FILE = ROOT / "build_scripts" / "attention-explorer.desktop"
MIME_FILE = ROOT / "build_scripts" / "attention-explorer-mime.xml"  # the session type (shared-mime-info)


HF_MISSING = ("the bundle carries the Hugging Face backend, and transformers is not installed in this environment: "
              "pip install -e \".[build]\" (the build extra pulls it), or set ATTENTION_EXPLORER_BUNDLE_HF=0 to build "
              "a bundle that opens only the app's own model folders")


def hf_backend_missing() -> str | None:
    """Why the build cannot carry the Hugging Face backend, or None when it can (or is told not to).

    The bundle opens Hugging Face folders only with ``transformers`` inside (a user of the executable cannot
    pip-install it), so it is required unless ``ATTENTION_EXPLORER_BUNDLE_HF=0`` asks for a bundle without it.
    """
    if os.environ.get("ATTENTION_EXPLORER_BUNDLE_HF", "1") == "0":
        return None
    return None if importlib.util.find_spec("transformers") is not None else HF_MISSING


def executable_path(dist: Path) -> Path:
    """Path of the bundle's executable under ``dist`` (``AttentionExplorer`` or ``AttentionExplorer.exe``)."""
    suffix = ".exe" if sys.platform == "win32" else ""
    return dist / APP_NAME / f"{APP_NAME}{suffix}"


def folder_size_bytes(folder: Path) -> int:
    """Total size in bytes of the regular files under ``folder`` (symlinks not followed)."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def scrubbed_env() -> dict[str, str]:
    """A minimal environment without Python/venv variables: proves the bundle needs no Python install."""
    env = {"PATH": "/usr/bin:/bin", "QT_QPA_PLATFORM": "offscreen", "HOME": os.environ.get("HOME", "/tmp")}
    if sys.platform == "win32":  # Windows needs its system variables to start anything
        env = {k: v for k, v in os.environ.items() if k.upper() in {"SYSTEMROOT", "WINDIR", "TEMP", "TMP", "PATH"}}
        env["QT_QPA_PLATFORM"] = "offscreen"
    return env


def run_self_test(exe: Path, model_dir: Path | None = None, timeout_s: float = 300.0) -> dict:
    """Run ``exe --self-test`` offscreen in :func:`scrubbed_env`; return its parsed one-line JSON report.

    Raises:
        RuntimeError: the process failed, timed out, or printed no JSON line; the message carries its output.
    """
    cmd = [str(exe), "--self-test"] + (["--model", str(model_dir)] if model_dir else [])
    try:
        proc = subprocess.run(cmd, check=False, env=scrubbed_env(), capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"self-test timed out after {timeout_s:.0f} s") from exc
    report = None
    for line in reversed(proc.stdout.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                report = json.loads(line)
                break
            except json.JSONDecodeError:
                continue
    if proc.returncode != 0 or report is None:
        raise RuntimeError(
            f"self-test failed (exit code {proc.returncode})\n--- stdout ---\n{proc.stdout[-4000:]}"
            f"\n--- stderr ---\n{proc.stderr[-4000:]}"
        )
    return report


def build(dist: Path, work: Path, clean: bool) -> Path:
    """Run PyInstaller on the spec; returns the bundle folder. Raises RuntimeError when PyInstaller fails."""
    if not ICON_PNG.is_file():
        subprocess.run([sys.executable, str(ROOT / "build_scripts" / "make_icons.py")], check=True,
                       env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    cmd = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
           "--distpath", str(dist), "--workpath", str(work)]
    if clean:
        cmd.append("--clean")
    cmd.append(str(SPEC))
    print("+", " ".join(cmd), flush=True)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, check=False, cwd=ROOT)
    if proc.returncode != 0:
        raise RuntimeError(f"PyInstaller failed with exit code {proc.returncode}")
    bundle = dist / APP_NAME
    if sys.platform.startswith("linux"):
        shutil.copy2(DESKTOP_FILE, bundle / DESKTOP_FILE.name)
        shutil.copy2(MIME_FILE, bundle / MIME_FILE.name)
        shutil.copy2(ICON_PNG, bundle / ICON_PNG.name)
    print(f"built {bundle} in {time.perf_counter() - t0:.0f} s", flush=True)
    return bundle


def main(argv: list[str] | None = None) -> int:
    """Command line entry; returns the exit code (see the module docstring)."""
    parser = argparse.ArgumentParser(description="Build and smoke-test the Attention Explorer bundle.")
    parser.add_argument("--dist", type=Path, default=ROOT / "dist", help="output folder (default: dist/)")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "pyinstaller", help="PyInstaller work folder")
    parser.add_argument("--clean", action="store_true", help="clear PyInstaller's cache first")
    parser.add_argument("--no-check", action="store_true", help="do not run the bundle's --self-test")
    parser.add_argument("--check-only", action="store_true", help="only self-test an existing bundle")
    parser.add_argument("--allow-missing-weights", action="store_true",
                        help="build even without resources/model/model.safetensors (for trying the build)")
    parser.add_argument("--model", type=Path, default=None, help="model folder for the self-test (default: bundled)")
    args = parser.parse_args(argv)

    if not (ROOT / "desktop_app" / "__main__.py").is_file():
        print("error: desktop_app/__main__.py is missing", file=sys.stderr)
        return 2
    if not args.check_only:
        if (missing := hf_backend_missing()) is not None:
            print(f"error: {missing}", file=sys.stderr)
            return 2
        if not WEIGHTS.is_file() and not args.allow_missing_weights:
            print(f"error: {WEIGHTS.relative_to(ROOT)} is missing; train the model first (README, 'Retrain') "
                  "or pass --allow-missing-weights", file=sys.stderr)
            return 2
        try:
            build(args.dist, args.work, args.clean)
        except (RuntimeError, subprocess.CalledProcessError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    exe = executable_path(args.dist)
    if not exe.is_file():
        print(f"error: {exe} does not exist; build first", file=sys.stderr)
        return 2
    print(f"bundle size: {folder_size_bytes(exe.parent)} bytes ({folder_size_bytes(exe.parent) / 2**20:.0f} MiB)")
    if args.no_check:
        return 0
    try:
        report = run_self_test(exe, args.model)
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print("self-test:", json.dumps(report))
    return 0 if report.get("ok") else 1


if __name__ == "__main__":
    sys.exit(main())
