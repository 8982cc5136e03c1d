# Shared shell functions for install_and_launch.sh, setup_and_test.sh and .ci/run.
# Source it from the repository root:  source build_scripts/common.sh
#
# Environment knobs:
#   PYTHON           interpreter used to create the venv (default: python3; needs >= 3.10)
#   VENV             venv folder (default: .venv in the repository root)
#   TORCH_INDEX_URL  where torch comes from when it is not on local disk
#                    (default: the CPU-only index https://download.pytorch.org/whl/cpu;
#                    a GPU user sets e.g. https://download.pytorch.org/whl/cu126)
#   SKIP_APT=1       never call apt-get (just report what is missing)
#   BIN_DIR          where install_and_launch.sh links the commands (default: ~/.local/bin)
#   NO_PATH_EDIT=1   never add BIN_DIR to ~/.bashrc (just say how)

TORCH_SPEC="torch==2.13.0"

# Libraries Qt 6 (PySide6 wheels) loads on Linux/X11, as Debian 12 package names
# (found with ldd on libqxcb.so, libqwayland.so, libQt6Gui/Widgets/XcbQpa), plus a font.
QT_RUNTIME_PACKAGES="libgl1 libegl1 libglib2.0-0 libfontconfig1 libfreetype6 libdbus-1-3 libx11-xcb1
 libxkbcommon0 libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1
 libxcb-randr0 libxcb-render-util0 libxcb-shape0 libxcb-xinerama0 libxcb-xkb1 libxcb-sync1
 libxcb-xfixes0 libxcb-shm0 libxcb-glx0 libwayland-client0 libwayland-cursor0 libwayland-egl1
 fonts-dejavu-core"
# Python with venv support.
PYTHON_PACKAGES="python3 python3-venv"
# Tests: a virtual X server for GUI checks; PyInstaller needs ldd/objdump (binutils).
TEST_PACKAGES="xvfb xauth binutils"

log() { printf '[attention-explorer] %s\n' "$*" >&2; }

_sudo() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# ensure_apt_packages PKG...: installs the Debian packages that are missing (apt-get update first).
ensure_apt_packages() {
    local missing=() pkg
    if ! command -v dpkg-query >/dev/null 2>&1; then
        log "not a Debian/Ubuntu system: make sure these (or your distribution's equivalents) are installed: $*"
        return 0
    fi
    for pkg in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$pkg")
        fi
    done
    if [ ${#missing[@]} -eq 0 ]; then
        return 0
    fi
    if [ "${SKIP_APT:-0}" = "1" ]; then
        log "SKIP_APT=1: not installing missing packages: ${missing[*]}"
        return 0
    fi
    log "installing system packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    _sudo apt-get update -qq
    _sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# The Debian package with libpython3.X.so for the system interpreter ($PYTHON), which PyInstaller
# bundles; prints nothing for interpreters outside /usr (pyenv, conda: they ship their own).
libpython_package() {
    "${PYTHON:-python3}" -c 'import sys; print("libpython%d.%d" % sys.version_info[:2] if sys.base_prefix == "/usr" else "")' \
        2>/dev/null || true
}

# ensure_venv EXTRAS: creates $VENV if needed, installs the CPU torch build, then `pip install -e ".[EXTRAS]"`.
ensure_venv() {
    local extras="$1"
    VENV="${VENV:-.venv}"
    PYTHON="${PYTHON:-python3}"
    export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
    if [ ! -x "$VENV/bin/python" ]; then
        log "creating virtual environment $VENV with $("$PYTHON" --version 2>&1)"
        "$PYTHON" -m venv "$VENV"
    fi
    local py="$VENV/bin/python"
    if ! "$py" -c "import torch" >/dev/null 2>&1; then
        # 1) a wheel on local disk (pip's find-links), 2) the CPU-only PyTorch index: never the multi-GB CUDA build
        #    that plain PyPI serves on Linux. --no-deps here; torch's own dependencies come with the next step.
        log "installing $TORCH_SPEC"
        if ! "$py" -m pip install -q --no-deps --no-index "$TORCH_SPEC" 2>/dev/null; then
            "$py" -m pip install -q --no-deps "$TORCH_SPEC" --index-url "${TORCH_INDEX_URL:-https://download.pytorch.org/whl/cpu}"
        fi
    fi
    log "installing attention-explorer${extras:+[$extras]} (editable)"
    "$py" -m pip install -q -e ".${extras:+[$extras]}"
}

ENTRY_POINTS="attention-explorer attention-explorer-score"

# link_entry_points: puts the app's commands on the user's PATH: a symlink in $BIN_DIR (default ~/.local/bin) to
# each of $ENTRY_POINTS in $VENV/bin (a file there that is not such a link is left alone, and said so). When
# $BIN_DIR is not on PATH, one marked line in ~/.bashrc adds it (NO_PATH_EDIT=1: only says what to type), so the
# commands work in every new shell, and the line to type now is printed.
link_entry_points() {
    local bin="${BIN_DIR:-$HOME/.local/bin}" venv_bin name target
    venv_bin="$(cd "${VENV:-.venv}/bin" && pwd)"
    mkdir -p "$bin"
    for name in $ENTRY_POINTS; do
        target="$venv_bin/$name"
        if [ -e "$bin/$name" ] && [ ! -L "$bin/$name" ]; then
            log "left $bin/$name alone (not a link of ours); run $target instead"
            continue
        fi
        ln -sfn "$target" "$bin/$name"
    done
    log "linked $ENTRY_POINTS into $bin"
    case ":$PATH:" in *":$bin:"*) return 0 ;; esac
    local line="export PATH=\"$bin:\$PATH\"  # added by attention-explorer (build_scripts/install_and_launch.sh)"
    if [ "${NO_PATH_EDIT:-0}" != "1" ] && ! grep -qsF "$line" "$HOME/.bashrc"; then
        printf '\n%s\n' "$line" >> "$HOME/.bashrc"
        log "added $bin to PATH in ~/.bashrc (new shells)"
    fi
    log "in this shell, type first:  export PATH=\"$bin:\$PATH\""
}
