#!/usr/bin/env bash
# Install a release of the table controller as a systemd service (Raspberry Pi OS Bookworm on a
# Pi 4 or Pi 5; any Debian 12 for the amd64 release). No network: everything is in the artifact.
#
#   sudo systemd/install.sh --release table-controller-0.1.0-arm64.tar.gz --profile rpi4-paigow
#
# ARTIFACT is built by scripts/build-release; --sha256 HEX refuses any other (the build prints
# the hash and writes it to ARTIFACT.sha256). PROFILE is a profile
# file, or the name of one the release carries (share/hw_profiles/NAME.toml). The script:
#   1. unpacks the artifact beside /opt/table-controller and checks every file against the
#      release's manifest with the release's own interpreter (which also proves it runs here);
#   2. copies the profile (and the files it includes) to /etc/table-controller and seals it
#      (profile.toml.manifest.json: the digest of each file);
#   3. swaps the new tree in (the old one is kept as /opt/table-controller.previous), owned by
#      root and read-only to everyone;
#   4. creates the user table-controller (groups dialout, gpio; tss when it exists, for the
#      TPM's /dev/tpmrm0), installs and enables the unit
#      (with its loopback-only network drop-in when the profile serves the scoreboard, and one
#      that opens the broker's address only when the profile has [feed]), the udev rule that
#      lets the service's group read /dev/hwrng, the udev rules that name the serial adapters
#      by USB port (/dev/tc-shoe, /dev/tc-display, /dev/tc-console) and the system.conf.d
#      drop-in that arms the SoC's hardware watchdog (RuntimeWatchdogSec=14s).
# Run it again with a new artifact to upgrade; the journal in /var/lib/table-controller stays.
#
# --stage DIR installs the same trees under DIR without touching the system (no user, no
# systemctl, no root needed): the tests check the unit and the release against a staged install.
set -euo pipefail

usage() {
    echo "usage: $0 --release ARTIFACT.tar.gz --profile PROFILE [--sha256 HEX] [--stage DIR]" \
         "[--no-start]" >&2
    exit 2
}
die() { echo "install.sh: $*" >&2; exit 1; }

ARTIFACT=""
EXPECT=""
PROFILE=""
STAGE=""
START=1
while [ $# -gt 0 ]; do
    case "$1" in
        --release) ARTIFACT="${2:-}"; shift 2 ;;
        --sha256) EXPECT="${2:-}"; shift 2 ;;
        --profile) PROFILE="${2:-}"; shift 2 ;;
        --stage) STAGE="${2:-}"; shift 2 ;;
        --no-start) START=0; shift ;;
        *) usage ;;
    esac
done
[ -n "$ARTIFACT" ] && [ -n "$PROFILE" ] || usage
[ -f "$ARTIFACT" ] || die "no such artifact: $ARTIFACT"
ARTIFACT="$(realpath "$ARTIFACT")"
SHA="$(sha256sum "$ARTIFACT" | cut -d' ' -f1)"
if [ -n "$EXPECT" ] && [ "$SHA" != "$(echo "$EXPECT" | tr 'A-F' 'a-f')" ]; then
    die "$ARTIFACT has sha256 $SHA, not the expected $EXPECT"
fi
[ ! -f "$PROFILE" ] || PROFILE="$(realpath "$PROFILE")"

if [ -n "$STAGE" ]; then
    mkdir -p "$STAGE"
    ROOT="$(realpath "$STAGE")"
else
    [ "$(id -u)" = 0 ] || die "run as root (or use --stage DIR)"
    ROOT=""
fi
OPT="$ROOT/opt/table-controller"
ETC="$ROOT/etc/table-controller"
UNIT_DIR="$ROOT/etc/systemd/system"
mkdir -p "$ROOT/opt" "$ETC" "$UNIT_DIR"

# -- 1. unpack and check ----------------------------------------------------------------------
unpack="$(mktemp -d "$ROOT/opt/.table-controller.unpack.XXXXXX")"
NEW="$ROOT/opt/.table-controller.new"
cleanup() {
    for d in "$unpack" "$NEW"; do
        [ -e "$d" ] || continue
        chmod -R u+w "$d" 2>/dev/null || true
        rm -rf "$d"
    done
}
trap cleanup EXIT
echo "== unpacking $ARTIFACT"
tar --extract --file "$ARTIFACT" --directory "$unpack" --no-same-owner \
    --preserve-permissions || die "cannot unpack $ARTIFACT"
tops=("$unpack"/*)
[ "${#tops[@]}" = 1 ] && [ -d "${tops[0]}" ] || die "$ARTIFACT: expected one top folder"
[ ! -e "$NEW" ] || { chmod -R u+w "$NEW"; rm -rf "$NEW"; }
mv "${tops[0]}" "$NEW"
PY="$NEW/python/bin/python3.11"
[ -f "$NEW/manifest.json" ] && [ -x "$PY" ] && [ -f "$NEW/bin/table-controller" ] \
    || die "$ARTIFACT is not a table-controller release (no manifest, interpreter or entry point)"
# The release's interpreter must run here (right architecture, Debian's shared libraries).
"$PY" -I -S -B -c 'import sqlite3, hashlib, zlib, termios, fcntl, select, json, decimal' \
    || die "the release's interpreter does not run on this machine ($(uname -m)): wrong" \
           "architecture, or a Debian library it needs (libsqlite3-0, libssl3) is missing"
tc() { "$PY" -I -S -B -u "$NEW/bin/table-controller" "$@"; }
echo "== checking every file against the release's manifest"
tc manifest check "$NEW/manifest.json" >/dev/null || {
    tc manifest check "$NEW/manifest.json" | head -20 >&2 || true
    die "the unpacked release does not match its own manifest"
}

# -- 2. the profile ---------------------------------------------------------------------------
if [ ! -f "$PROFILE" ]; then
    name="${PROFILE%.toml}"
    [ -f "$NEW/share/hw_profiles/$name.toml" ] \
        || die "no profile $PROFILE (neither a file nor one of: $(cd "$NEW/share/hw_profiles" \
               && ls ./*.toml | sed 's|^\./||; s|\.toml$||' | tr '\n' ' '))"
    PROFILE="$NEW/share/hw_profiles/$name.toml"
fi
echo "== profile $PROFILE -> $ETC"
# The profile and every file it includes, keeping their layout (includes are relative).
mapfile -t files < <("$PY" -I -S -B -c '
import os, sys
sys.path.insert(0, sys.argv[1])
from controller.config.profile import load_profile
for f in load_profile(sys.argv[2]).source_files:
    print(os.path.abspath(f))' "$NEW/lib" "$PROFILE")
[ "${#files[@]}" -gt 0 ] || die "cannot read the profile $PROFILE"
base="$(dirname "$PROFILE")"
for f in "${files[@]}"; do
    if [ "$f" = "$PROFILE" ]; then
        install -m 0644 "$f" "$ETC/profile.toml"
    else
        rel="${f#"$base"/}"
        [ "$rel" != "$f" ] || die "included file outside the profile's folder: $f"
        install -D -m 0644 "$f" "$ETC/$rel"
    fi
done
tc check-profile "$ETC/profile.toml" >/dev/null || die "the profile does not load"
# A pkcs11 signer's module is code loaded from outside the release: the sealed profile must pin
# its SHA-256 (pkcs11_module_sha256), and the module here must have it.
"$PY" -I -S -B -c '
import sys
sys.path.insert(0, sys.argv[1])
from controller.config.profile import load_profile
from controller.journal.signer import SignerError, check_module
j = load_profile(sys.argv[2]).journal
if j.signer == "pkcs11":
    try:
        check_module(j.pkcs11_module, j.pkcs11_module_sha256, required=True)
    except SignerError as exc:
        sys.exit(f"install.sh: {exc}")
    print(f"== pkcs11 module {j.pkcs11_module}: sha256 {j.pkcs11_module_sha256} (pinned)")
' "$NEW/lib" "$ETC/profile.toml" || exit 1
tc manifest seal-profile "$ETC/profile.toml"
chmod 0644 "$ETC/profile.toml.manifest.json"

# -- 3. swap in, read-only --------------------------------------------------------------------
echo "== installing $OPT"
if [ -z "$STAGE" ]; then chown -R root:root "$NEW"; fi
chmod -R a-w "$NEW"
if [ -e "$OPT" ]; then
    if [ -e "$OPT.previous" ]; then chmod -R u+w "$OPT.previous"; rm -rf "$OPT.previous"; fi
    mv "$OPT" "$OPT.previous"
fi
mv "$NEW" "$OPT"
"$OPT/python/bin/python3.11" -I -S -B "$OPT/bin/table-controller" manifest check \
    "$OPT/manifest.json" --profile-of "$ETC/profile.toml" >/dev/null \
    || die "the installed tree does not match its manifest"
install -m 0644 "$OPT/share/table-controller.service" "$UNIT_DIR/table-controller.service"
# The scoreboard's loopback-only network drop-in, only when the profile serves the pages.
DROPIN_DIR="$UNIT_DIR/table-controller.service.d"
if "$OPT/python/bin/python3.11" -I -S -B -c '
import sys
sys.path.insert(0, sys.argv[1])
from controller.config.profile import load_profile
sys.exit(0 if load_profile(sys.argv[2]).scoreboard.enabled else 1)' "$OPT/lib" "$ETC/profile.toml"
then
    echo "== scoreboard on: $DROPIN_DIR/scoreboard.conf (loopback only)"
    install -D -m 0644 "$OPT/share/table-controller.service.d/scoreboard.conf" \
        "$DROPIN_DIR/scoreboard.conf"
else
    rm -f "$DROPIN_DIR/scoreboard.conf"
fi
# The host feed's drop-in, only when the profile has [feed]: the service may then reach the
# broker's address (every port of it: IPAddressAllow= filters addresses, not ports) and nothing
# else; IPAddressDeny=any stays from the unit. A host name is resolved here, from /etc/hosts only
# (the service resolves it the same way at run time: DNS is not reachable from it); a name only
# DNS knows is refused: put it in /etc/hosts or name the address.
broker="$("$OPT/python/bin/python3.11" -I -S -B -c '
import sys
sys.path.insert(0, sys.argv[1])
from controller.config.profile import load_profile
from controller.feed.broker import parse_broker_url
feed = load_profile(sys.argv[2]).feed
if feed is not None:
    b = parse_broker_url(feed.broker)
    print(b.host, b.port, b.url)' "$OPT/lib" "$ETC/profile.toml")" || die "cannot read [feed]"
if [ -n "$broker" ]; then
    read -r bhost bport burl <<<"$broker"
    addrs="$("$OPT/python/bin/python3.11" -I -S -B -c '
import ipaddress, socket, sys
host = sys.argv[1]
try:
    print(ipaddress.ip_address(host.strip("[]")))
    sys.exit(0)
except ValueError:
    pass
found = set()
with open("/etc/hosts") as fh:
    for line in fh:
        fields = line.split("#", 1)[0].split()
        if len(fields) > 1 and host.lower() in (f.lower() for f in fields[1:]):
            found.add(str(ipaddress.ip_address(fields[0].split("%")[0])))
print(" ".join(sorted(found)))' "$bhost")" || die "cannot resolve the broker's host $bhost"
    [ -n "$addrs" ] || die "the broker's host $bhost is not an address and not in /etc/hosts:"         "the service cannot use DNS (it may reach only the broker); add "ADDRESS $bhost" to"         "/etc/hosts or name the address in [feed] broker"
    families="AF_UNIX"
    case "$addrs" in *.*) families="$families AF_INET" ;; esac
    case "$addrs" in *:*) families="$families AF_INET6" ;; esac
    echo "== feed on: $DROPIN_DIR/feed.conf (the broker $bhost only: $addrs; port $bport not"          "restricted by the unit)"
    mkdir -p "$DROPIN_DIR"
    {
        echo "# Generated by install.sh from the sealed profile's [feed] broker = $burl."
        echo "# The service reaches this address and nothing else (IPAddressDeny=any is the"
        echo "# unit's). Every port of it: IPAddressAllow= filters addresses, not ports; the"
        echo "# broker host's firewall (or the floor's) limits the port. systemd/README.md."
        echo "[Service]"
        echo "PrivateNetwork=no"
        echo "RestrictAddressFamilies=$families"
        for a in $addrs; do echo "IPAddressAllow=$a"; done
    } >"$DROPIN_DIR/feed.conf.new"
    chmod 0644 "$DROPIN_DIR/feed.conf.new"
    mv "$DROPIN_DIR/feed.conf.new" "$DROPIN_DIR/feed.conf"
else
    rm -f "$DROPIN_DIR/feed.conf"
fi
echo "== udev rule: the service user reads /dev/hwrng (the RNG health-tests it; root-only by default)"
UDEV_DIR="$ROOT/etc/udev/rules.d"
mkdir -p "$UDEV_DIR"
printf '%s\n' '# table-controller: the RNG health-tests the board'"'"'s hardware generator (docs/rng.md)' \
    'KERNEL=="hw_random", GROUP="table-controller", MODE="0440"' \
    >"$UDEV_DIR/60-table-controller-hwrng.rules"
echo "== udev rules: the shoe, the dealer display and a USB console adapter named by USB port"
install -m 0644 "$OPT/share/udev/70-table-controller-serial.rules" \
    "$UDEV_DIR/70-table-controller-serial.rules"
echo "== the SoC's hardware watchdog armed (RuntimeWatchdogSec=14s)"
install -D -m 0644 "$OPT/share/system.conf.d/60-table-controller-watchdog.conf" \
    "$ROOT/etc/systemd/system.conf.d/60-table-controller-watchdog.conf"
echo "installed $(basename "$ARTIFACT") (sha256 $SHA)"
echo "manifest sha256 $(sha256sum "$OPT/manifest.json" | cut -d' ' -f1)"

# -- 4. the system ----------------------------------------------------------------------------
if [ -n "$STAGE" ]; then
    echo "staged under $ROOT"
    exit 0
fi
getent group gpio >/dev/null || groupadd --system gpio
getent group dialout >/dev/null || groupadd --system dialout
if ! id table-controller >/dev/null 2>&1; then
    useradd --system --no-create-home --home-dir /var/lib/table-controller \
        --shell /usr/sbin/nologin --user-group table-controller
fi
usermod -a -G dialout,gpio table-controller
# /dev/tpmrm0 (a TPM variant profile's journal counter): group tss, mode 0660, by tpm-udev's rule
if getent group tss >/dev/null; then usermod -a -G tss table-controller; fi
udevadm control --reload-rules && udevadm trigger --sysname-match=hw_random || true
udevadm trigger --subsystem-match=tty --action=add || true  # /dev/tc-* for adapters plugged in
systemctl daemon-reexec  # PID 1 reads system.conf.d again: the hardware watchdog is armed now
systemctl daemon-reload
systemd-analyze verify "$UNIT_DIR/table-controller.service"
systemctl enable table-controller.service
[ "$START" = 0 ] || systemctl restart table-controller.service
echo "status: systemctl status table-controller; logs: journalctl -u table-controller"
