#!/bin/sh
# docs/screenshot.sh - redo the Wireshark screenshots of the roce plugin:
#   docs/wireshark-roce.png        nak_gbn.pcap, frame 15 (the first go-back-N
#                                  retransmission), RoCE tree expanded
#   docs/wireshark-roce-stats.png  Statistics → RoCE QP Conversations on naks.pcap
#
# Not run by the tests.  Needs (Debian 12):
#   echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
#   apt-get install -y wireshark xvfb xauth x11-utils imagemagick xdotool
# and a built plugin (ninja -C build).  Usage, from the top of the repo:
#   docs/screenshot.sh [build/dissector/roce.so]
#
# Wireshark runs under Xvfb (display :99, or $SHOT_DISPLAY) with a throw-away
# HOME whose personal plugin folder holds roce.so; nothing is installed.
# Wireshark ignores personal plugins when it runs as root, so as root it runs
# as nobody (setpriv).  There is no window manager: window geometry comes
# from the recent files written below, and the GUI is driven with xdotool
# (clicks at fixed positions of that geometry, keyboard search in the tree).
set -eu

REPO=$(cd "$(dirname "$0")/.." && pwd)
PLUGIN=${1:-$REPO/build/dissector/roce.so}
DPY=${SHOT_DISPLAY:-:99}
W=1400
H=1200
UPPER=250            # packet list height (px)

[ -f "$PLUGIN" ] || { echo "no plugin at $PLUGIN (ninja -C build)" >&2; exit 1; }
for p in wireshark Xvfb xdotool import; do
	command -v $p >/dev/null || { echo "missing $p (see the header of $0)" >&2; exit 1; }
done

T=$(mktemp -d /tmp/roce-screenshot.XXXXXX)
XVFB_PID=
WS_PID=
cleanup() {
	[ -n "$WS_PID" ] && kill "$WS_PID" 2>/dev/null || true
	[ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

# ---- a temporary HOME with the plugin and a fixed layout -------------------------
HOMEDIR=$T/home
CFG=$HOMEDIR/.config/wireshark
mkdir -p "$HOMEDIR/.local/lib/wireshark/plugins/4.0/epan" "$CFG"
cp "$PLUGIN" "$HOMEDIR/.local/lib/wireshark/plugins/4.0/epan/roce.so"
cp "$REPO/captures/made/nak_gbn.pcap" "$REPO/captures/made/naks.pcap" "$HOMEDIR/"
cat > "$CFG/recent_common" <<EOF
gui.geometry_main_x: 0
gui.geometry_main_y: 0
gui.geometry_main_width: $W
gui.geometry_main_height: $H
gui.geometry_main_maximized: FALSE
privs.warn_if_elevated: FALSE
sys.warn_if_no_capture: FALSE
EOF
cat > "$CFG/recent" <<EOF
gui.byte_view_show: FALSE
gui.packet_diagram_show: FALSE
gui.geometry_main_upper_pane: $UPPER
column.width:
        %m, 50,
        %t, 90,
        %s, 90,
        %d, 90,
        %p, 70,
        %L, 60,
        %i, 800
EOF
RUN=
if [ "$(id -u)" = 0 ]; then
	chown -R nobody:nogroup "$T"
	RUN="setpriv --reuid=nobody --regid=nogroup --clear-groups"
fi

# ---- X server -------------------------------------------------------------------
Xvfb "$DPY" -screen 0 ${W}x${H}x24 -nolisten tcp >"$T/xvfb.log" 2>&1 &
XVFB_PID=$!
export DISPLAY="$DPY"
for i in $(seq 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.2; done

# start_wireshark FILE FRAME: starts the GUI on FILE at FRAME, sets WIN
start_wireshark() {
	env HOME="$HOMEDIR" XDG_RUNTIME_DIR="$T" $RUN \
		wireshark -r "$HOMEDIR/$1" -g "$2" >"$T/wireshark.log" 2>&1 &
	WS_PID=$!
	WIN=
	for i in $(seq 60); do
		WIN=$(xdotool search --name "^$1\$" 2>/dev/null | head -1) || true
		[ -n "$WIN" ] && break
		sleep 0.5
	done
	[ -n "$WIN" ] || { cat "$T/wireshark.log" >&2; echo "no Wireshark window" >&2; exit 1; }
	sleep 3   # file read, packet selected
}
stop_wireshark() {
	kill "$WS_PID" 2>/dev/null || true
	wait "$WS_PID" 2>/dev/null || true
	WS_PID=
}

# ---- 1: packet details of a retransmission --------------------------------------
start_wireshark nak_gbn.pcap 15
# The details pane starts at UPPER + 95 px; rows are 17 px high (Wireshark's
# default font under Xvfb).  Typing would go to the display filter, so the
# tree is driven with clicks and arrow keys: click the 5th top-level row
# (RoCE), expand it with all its subtrees (Shift+Right), then walk down to
# the Retransmission flag (23 rows further) so the status bar names it.
ROW0=$((UPPER + 103))
xdotool mousemove 300 $((ROW0 + 4 * 17)) click 1
sleep 0.5
xdotool key shift+Right
sleep 0.6
for i in $(seq 23); do xdotool key Down; done
sleep 1
import -window root "$REPO/docs/wireshark-roce.png"
stop_wireshark

# ---- 2: Statistics → RoCE QP Conversations ---------------------------------------
start_wireshark naks.pcap 1
xdotool mousemove 900 $((UPPER + 400)) click 1
sleep 0.3
# Statistics menu (Alt+S opens it on its first entry), then 11 entries down:
# "RoCE QP Conversations" (after Capture File Properties ... Service Response
# Time, DHCP (BOOTP) Statistics, NetPerfMeter Statistics, ONC-RPC Programs in
# Debian's Wireshark 4.0).
xdotool key alt+s
sleep 0.8
for i in $(seq 11); do xdotool key Down; sleep 0.1; done
xdotool key Return
DLG=
for i in $(seq 30); do
	DLG=$(xdotool search --name "RoCE QP Conversations" 2>/dev/null | head -1) || true
	[ -n "$DLG" ] && break
	sleep 0.5
done
[ -n "$DLG" ] || { echo "the RoCE QP Conversations dialog did not open" >&2; exit 1; }
xdotool windowmove "$DLG" 0 0 windowsize "$DLG" 1000 260
sleep 2
import -window "$DLG" "$REPO/docs/wireshark-roce-stats.png"
stop_wireshark

echo "wrote docs/wireshark-roce.png and docs/wireshark-roce-stats.png"
