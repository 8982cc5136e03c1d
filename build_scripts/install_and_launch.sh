#!/usr/bin/env bash
# Install Attention Explorer into .venv (CPU torch, Qt's system libraries) and launch it with the bundled model.
#
#   bash build_scripts/install_and_launch.sh [app arguments, e.g. --model DIR]
#
# Debian/Ubuntu: installs the missing Qt system packages with apt-get (sudo only when not root).
# Other systems: prints the package list and continues. See build_scripts/common.sh for knobs
# (PYTHON, VENV, TORCH_INDEX_URL for a GPU build, SKIP_APT=1, BIN_DIR, NO_PATH_EDIT=1). It links the commands
# attention-explorer and attention-explorer-score into ~/.local/bin and puts that folder on PATH for new shells.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source build_scripts/common.sh

# shellcheck disable=SC2086  # word splitting of the package lists is intended
ensure_apt_packages $PYTHON_PACKAGES $QT_RUNTIME_PACKAGES
ensure_venv "hf"
link_entry_points  # attention-explorer and attention-explorer-score on PATH in new shells (~/.local/bin)

if [ ! -f resources/model/model.safetensors ]; then
    log "warning: resources/model/model.safetensors is missing; the app will say so (train one: README, 'Retrain')"
fi
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ] && [ -z "${QT_QPA_PLATFORM:-}" ]; then
    log "warning: no DISPLAY/WAYLAND_DISPLAY: run this from a desktop session (or under 'xvfb-run -a')"
fi
log "launching: .venv/bin/attention-explorer $*"
exec "${VENV:-.venv}/bin/attention-explorer" "$@"
