#!/usr/bin/env bash
# Install the table's monitor on a Raspberry Pi with a desktop (Raspberry Pi OS Bookworm):
# Chromium in kiosk mode on the scoreboard page, started at login by the desktop's autostart.
#
#   sudo systemd/kiosk/install-kiosk.sh --user pi [--url http://127.0.0.1:8080/] [--table ID]
#        [--lang zh-Hant,en] [--density standard|large|dense] [--no-autologin]
#
# --table names the table this monitor belongs to (its journal table id, else its profile's
# name): a page of another table reached on that address shows WRONG TABLE. --lang and
# --density are this monitor's own (the profile's [scoreboard] gives the defaults).
#
# The kiosk script comes with the release (/opt/table-controller/share/kiosk/, covered by its
# manifest: nothing else may be added to the release's tree); this installs the autostart entry
# that runs it in the user's ~/.config/autostart/, and with raspi-config: the desktop logs that user in at boot
# (do_boot_behaviour B4) and the screen never blanks (do_blanking 1: X11, wayfire and labwc).
# The profile must serve the page: [scoreboard] enabled (docs/scoreboard.md); install.sh then
# opens the service's loopback. --stage DIR writes the same files under DIR and nothing else.
set -euo pipefail

usage() {
    echo "usage: $0 --user NAME [--url URL] [--table ID] [--lang L[,L]]" \
         "[--density standard|large|dense] [--no-autologin] [--stage DIR]" >&2
    exit 2
}

SRC="$(cd "$(dirname "$0")" && pwd)"
KIOSK_USER=""
URL=""
TABLE=""
LANGS=""
DENSITY=""
AUTOLOGIN=1
STAGE=""
while [ $# -gt 0 ]; do
    case "$1" in
        --user) KIOSK_USER="${2:-}"; shift 2 ;;
        --url) URL="${2:-}"; shift 2 ;;
        --table) TABLE="${2:-}"; shift 2 ;;
        --lang) LANGS="${2:-}"; shift 2 ;;
        --density) DENSITY="${2:-}"; shift 2 ;;
        --no-autologin) AUTOLOGIN=0; shift ;;
        --stage) STAGE="${2:-}"; shift 2 ;;
        *) usage ;;
    esac
done
[ -n "$KIOSK_USER" ] || usage
case "$URL" in
    ""|http://*|https://*) ;;
    *) echo "--url must start with http:// or https://" >&2; exit 2 ;;
esac
check() {  # OPTION VALUE PATTERN
    [ -z "$2" ] || printf '%s' "$2" | grep -Eqx "$3" || { echo "$1 $2: not allowed" >&2; exit 2; }
}
check --table "$TABLE" '[A-Za-z0-9][A-Za-z0-9._-]{0,63}'
check --lang "$LANGS" '(en|zh-Hant|zh-Hans)(,(en|zh-Hant|zh-Hans))?'
check --density "$DENSITY" 'standard|large|dense'

ROOT="${STAGE%/}"
if [ -z "$STAGE" ]; then
    [ "$(id -u)" = 0 ] || { echo "run as root (or use --stage DIR)" >&2; exit 1; }
    HOME_DIR="$(getent passwd "$KIOSK_USER" | cut -d: -f6)"
    [ -n "$HOME_DIR" ] || { echo "no user $KIOSK_USER" >&2; exit 1; }
else
    HOME_DIR="/home/$KIOSK_USER"
fi
BIN="/opt/table-controller/share/kiosk/scoreboard-kiosk.sh"
AUTOSTART="$ROOT$HOME_DIR/.config/autostart"

if [ -z "$STAGE" ] && [ ! -x "$BIN" ]; then
    echo "no $BIN: install the release first (systemd/install.sh --release ...)" >&2
    exit 1
fi
mkdir -p "$AUTOSTART"
vars="${TABLE:+SCOREBOARD_TABLE=$TABLE }${LANGS:+SCOREBOARD_LANG=$LANGS }"
vars="$vars${DENSITY:+SCOREBOARD_DENSITY=$DENSITY }"
exec_line="Exec=${vars:+env $vars}$BIN${URL:+ $URL}"
sed "s|^Exec=.*|$exec_line|" "$SRC/scoreboard-kiosk.desktop" > "$AUTOSTART/scoreboard-kiosk.desktop"
chmod 0644 "$AUTOSTART/scoreboard-kiosk.desktop"
echo "== autostart $AUTOSTART/scoreboard-kiosk.desktop: ${vars}$BIN ${URL:-(default URL)}"

if [ -n "$STAGE" ]; then
    echo "staged under $ROOT"
    exit 0
fi
chown -R "$KIOSK_USER": "$HOME_DIR/.config/autostart"
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
    || echo "WARNING: no chromium: apt-get install chromium" >&2
if command -v raspi-config >/dev/null 2>&1; then
    raspi-config nonint do_blanking 1            # 1 = blanking off
    if [ "$AUTOLOGIN" = 1 ]; then
        # desktop, that user logged in automatically (raspi-config takes the user from SUDO_USER)
        SUDO_USER="$KIOSK_USER" raspi-config nonint do_boot_behaviour B4
    fi
else
    echo "no raspi-config: turn screen blanking off and desktop autologin on by hand" \
         "(docs/scoreboard.md \"Kiosk\")" >&2
fi
echo "installed; reboot to start the kiosk"
