#!/bin/sh
# The table's monitor: Chromium in kiosk mode on the scoreboard page, started by the desktop
# session at login (scoreboard-kiosk.desktop, installed by install-kiosk.sh). docs/scoreboard.md.
#
#   scoreboard-kiosk.sh [URL]        default $SCOREBOARD_URL, else http://127.0.0.1:8080/
#
# This monitor's own choices, added to the page's address (docs/scoreboard.md):
#              SCOREBOARD_TABLE   the table id this monitor belongs to (the journal's table id,
#                                 else the profile's name): another table's page on that
#                                 address is shown as WRONG TABLE, never as this table's;
#              SCOREBOARD_LANG    its languages, e.g. zh-Hant,en (default: the profile's);
#              SCOREBOARD_DENSITY standard, large or dense (default: the profile's).
# Environment: SCOREBOARD_WAIT_S  give up when the page has not answered for this many seconds
#                                 (default 0: wait for as long as it takes: at boot the
#                                 controller may start after the desktop);
#              SCOREBOARD_ONCE=1  start the browser once, no restart loop (tests);
#              SCOREBOARD_BROWSER the browser to run (default: chromium, else chromium-browser);
#              SCOREBOARD_EXTRA_ARGS more browser options, e.g. --force-device-scale-factor=2
#                                 on a 4K monitor.
set -u

URL="${1:-${SCOREBOARD_URL:-http://127.0.0.1:8080/}}"
WAIT_S="${SCOREBOARD_WAIT_S:-0}"
DATA_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/scoreboard-kiosk"
BROWSER="${SCOREBOARD_BROWSER:-$(command -v chromium || command -v chromium-browser || true)}"

log() { echo "scoreboard-kiosk: $*" >&2; }

# The page's address with this monitor's choices; each checked, so nothing else gets in.
BASE="${URL%%\?*}"
BASE="${BASE%/}"
PAGE="$URL"
sep="?"
case "$URL" in *\?*) sep="&" ;; esac
add() {  # NAME VALUE PATTERN
    [ -n "$2" ] || return 0
    if ! printf '%s' "$2" | grep -Eqx "$3"; then
        log "SCOREBOARD_$(echo "$1" | tr a-z A-Z)=$2 is not allowed"
        exit 2
    fi
    PAGE="$PAGE$sep$1=$2"
    sep="&"
}
add table "${SCOREBOARD_TABLE:-}" '[A-Za-z0-9][A-Za-z0-9._-]{0,63}'
add lang "${SCOREBOARD_LANG:-}" '(en|zh-Hant|zh-Hans)(,(en|zh-Hant|zh-Hans))?'
add density "${SCOREBOARD_DENSITY:-}" 'standard|large|dense'

[ -n "$BROWSER" ] || { log "no chromium: apt-get install chromium"; exit 1; }

# Screen blanking off for this session on X11. On Wayland (labwc, wayfire) the compositor's
# idle settings decide: raspi-config's "Screen Blanking" off (install-kiosk.sh does it), see
# docs/scoreboard.md "Kiosk".
if [ -n "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ] && command -v xset >/dev/null 2>&1; then
    xset s off
    xset s noblank
    xset -dpms
fi

# Wait until the page answers: a browser started before the controller shows an error page
# that does not retry. (Once loaded, the page reconnects by itself.)
waited=0
until python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' \
        "$BASE/healthz" >/dev/null 2>&1; do
    if [ "$WAIT_S" -gt 0 ] && [ "$waited" -ge "$WAIT_S" ]; then
        log "no answer from $URL after $WAIT_S s"
        exit 1
    fi
    [ $((waited % 30)) -eq 0 ] && log "waiting for $URL"
    sleep 1
    waited=$((waited + 1))
done

mkdir -p "$DATA_DIR"
while :; do
    # A browser that was killed (power cut) would offer to restore the last session: say it
    # exited cleanly, so the kiosk comes back straight to the page.
    prefs="$DATA_DIR/Default/Preferences"
    if [ -f "$prefs" ]; then
        sed -i -e 's/"exited_cleanly":false/"exited_cleanly":true/' \
               -e 's/"exit_type":"[^"]*"/"exit_type":"Normal"/' "$prefs"
    fi
    # SCOREBOARD_EXTRA_ARGS is split into words on purpose.
    # shellcheck disable=SC2086
    "$BROWSER" --kiosk --noerrdialogs --disable-infobars --no-first-run \
        --disable-session-crashed-bubble --disable-translate --disable-features=Translate \
        --check-for-update-interval=31536000 --overscroll-history-navigation=0 \
        --password-store=basic --ozone-platform-hint=auto \
        --user-data-dir="$DATA_DIR" ${SCOREBOARD_EXTRA_ARGS:-} "$PAGE"
    status=$?
    [ "${SCOREBOARD_ONCE:-0}" = 1 ] && exit "$status"
    log "browser exited ($status); starting it again"
    sleep 2
done
