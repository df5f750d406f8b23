#!/usr/bin/env bash
# Install the table controller as a systemd service on Raspberry Pi OS (Pi 4 or Pi 5).
#
#   sudo systemd/install.sh --profile hw_profiles/rpi4-paigow.toml
#
# Creates the user table-controller (groups dialout, gpio), a virtual environment under
# /opt/table-controller with the package (extra 'pi' on a Pi 4, 'pi5' on a Pi 5), copies the
# profile (and the files it includes) to /etc/table-controller, builds the program manifest,
# installs and enables the unit. Run it again to upgrade: the manifest is rebuilt.
#
# --stage DIR installs the same tree under DIR without touching the system (no user, no
# systemctl, no root needed): the unit test uses it to check the unit against a real install.
set -euo pipefail

usage() {
    echo "usage: $0 --profile PROFILE.toml [--extra pi|pi5|none] [--stage DIR] [--no-start]" >&2
    exit 2
}

SRC="$(cd "$(dirname "$0")/.." && pwd)"
PROFILE=""
EXTRA=""
STAGE=""
START=1
PYTHON="${PYTHON:-python3}"
while [ $# -gt 0 ]; do
    case "$1" in
        --profile) PROFILE="${2:-}"; shift 2 ;;
        --extra) EXTRA="${2:-}"; shift 2 ;;
        --stage) STAGE="${2:-}"; shift 2 ;;
        --no-start) START=0; shift ;;
        *) usage ;;
    esac
done
[ -n "$PROFILE" ] || usage
[ -f "$PROFILE" ] || { echo "profile not found: $PROFILE" >&2; exit 1; }

if [ -z "$EXTRA" ]; then
    model="$(tr -d '\0' </proc/device-tree/model 2>/dev/null || true)"
    case "$model" in
        *"Raspberry Pi 5"*) EXTRA=pi5 ;;
        *"Raspberry Pi 4"*) EXTRA=pi ;;
        *) EXTRA=none; echo "not a Raspberry Pi 4/5 ($model): installing without a GPIO extra" >&2 ;;
    esac
fi

ROOT="${STAGE%/}"
OPT="$ROOT/opt/table-controller"
ETC="$ROOT/etc/table-controller"
UNIT_DIR="$ROOT/etc/systemd/system"

if [ -z "$STAGE" ]; then
    [ "$(id -u)" = 0 ] || { echo "run as root (or use --stage DIR)" >&2; exit 1; }
    getent group gpio >/dev/null || groupadd --system gpio
    getent group dialout >/dev/null || groupadd --system dialout
    if ! id table-controller >/dev/null 2>&1; then
        useradd --system --no-create-home --home-dir /var/lib/table-controller \
            --shell /usr/sbin/nologin --user-group table-controller
    fi
    usermod -a -G dialout,gpio table-controller
fi

echo "== venv $OPT/venv (extra: $EXTRA)"
mkdir -p "$OPT" "$ETC" "$UNIT_DIR"
"$PYTHON" -m venv "$OPT/venv"
spec="$SRC"
[ "$EXTRA" = none ] || spec="$SRC[$EXTRA]"
if [ -n "${PIP_INSTALL_ARGS:-}" ]; then
    # shellcheck disable=SC2086
    "$OPT/venv/bin/pip" install -q $PIP_INSTALL_ARGS "$spec"
else
    "$OPT/venv/bin/pip" install -q --upgrade "$spec"
fi
site="$("$OPT/venv/bin/python" -c 'import controller, pathlib; print(pathlib.Path(controller.__file__).resolve().parent.parent)')"
# The manifest covers the .py files; nothing compiled may run in their place.
find "$site/controller" "$site/drivers" -name __pycache__ -type d -prune -exec rm -rf {} +

echo "== profile -> $ETC"
# The profile and every file it includes, keeping their relative layout (includes are relative).
mapfile -t files < <("$OPT/venv/bin/python" -c '
import os, sys
from controller.config.profile import load_profile
for f in load_profile(sys.argv[1]).source_files:
    print(os.path.abspath(f))' "$PROFILE")
top="$(cd "$(dirname "$PROFILE")" && pwd)/$(basename "$PROFILE")"
base="$(dirname "$top")"
for f in "${files[@]}"; do
    if [ "$f" = "$top" ]; then
        install -m 0644 "$f" "$ETC/profile.toml"
    else
        rel="${f#"$base"/}"
        [ "$rel" != "$f" ] || { echo "included file outside the profile's folder: $f" >&2; exit 1; }
        install -D -m 0644 "$f" "$ETC/$rel"
    fi
done
"$OPT/venv/bin/table-controller" check-profile "$ETC/profile.toml" >/dev/null

echo "== manifest $OPT/manifest.json"
# Built from the installed tree and the installed profile, at the paths the service reads.
(cd "$ETC" && "$OPT/venv/bin/python" -m controller.program.manifest build --out "$OPT/manifest.json" \
    --root "$site" --profile-of "$ETC/profile.toml")
install -m 0644 "$SRC/systemd/README.md" "$OPT/README.md"
install -m 0644 "$SRC/systemd/table-controller.service" "$UNIT_DIR/table-controller.service"
# The scoreboard's loopback-only network drop-in, only when the profile serves the pages.
DROPIN_DIR="$UNIT_DIR/table-controller.service.d"
if "$OPT/venv/bin/python" -c '
import sys
from controller.config.profile import load_profile
sys.exit(0 if load_profile(sys.argv[1]).scoreboard.enabled else 1)' "$ETC/profile.toml"; then
    echo "== scoreboard on: $DROPIN_DIR/scoreboard.conf (loopback only)"
    install -D -m 0644 "$SRC/systemd/table-controller.service.d/scoreboard.conf" \
        "$DROPIN_DIR/scoreboard.conf"
else
    rm -f "$DROPIN_DIR/scoreboard.conf"
fi

echo "== udev rule: the service user reads /dev/hwrng (the RNG health-tests it; root-only by default)"
UDEV_DIR="$ROOT/etc/udev/rules.d"
mkdir -p "$UDEV_DIR"
printf '%s\n' '# table-controller: the RNG health-tests the board'"'"'s hardware generator (docs/rng.md)' \
    'KERNEL=="hw_random", GROUP="table-controller", MODE="0440"' \
    >"$UDEV_DIR/60-table-controller-hwrng.rules"

if [ -z "$STAGE" ]; then
    chmod -R a-w "$OPT/venv/lib"
    udevadm control --reload-rules && udevadm trigger --sysname-match=hw_random || true
    systemctl daemon-reload
    systemd-analyze verify "$UNIT_DIR/table-controller.service"
    systemctl enable table-controller.service
    [ "$START" = 0 ] || systemctl restart table-controller.service
    echo "installed; status: systemctl status table-controller; logs: journalctl -u table-controller"
else
    echo "staged under $ROOT"
fi
