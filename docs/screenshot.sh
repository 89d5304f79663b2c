#!/bin/sh
# docs/screenshot.sh - redo the Wireshark screenshots of the roce plugin:
#   docs/wireshark-roce.png         rxe/lossy/lossy_rping.client.pcap, frame 848
#                                   (a go-back-N retransmission after a NAK),
#                                   RoCE colouring profile, RoCE tree expanded
#   docs/wireshark-roce-expert.png  Analyze > Expert Information, same capture
#   docs/wireshark-roce-stats.png   Statistics > RoCE QP Conversations, made/naks.pcap
#   docs/wireshark-roce-conv.png    Statistics > Conversations > RoCE, a row's
#                                   Apply as Filter, and the filtered packet list
#
# Not run by the tests.  Needs (Debian 12; not in tools/setup-deps, no test
# needs them):
#   echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
#   apt-get install -y wireshark-qt xvfb xauth x11-utils imagemagick xdotool
# and a built plugin (ninja -C build).  Usage, from the top of the repo:
#   docs/screenshot.sh [build/dissector/roce.so]
#
# Wireshark runs under Xvfb (display :99, or $SHOT_DISPLAY) with a throw-away
# HOME whose personal plugin folder holds roce.so and whose profile RoCE
# holds the colouring rules (dissector/install-colorfilters); nothing is
# installed.  Wireshark ignores personal plugins when it runs as root, so as
# root it runs as nobody (setpriv).  There is no window manager: the main
# window's geometry and panes come from the recent files written below, and
# the GUI is driven with xdotool: clicks at fixed positions of that geometry
# (Wireshark 4.0's default font under Xvfb: tree and list rows 17 px high),
# menus with the keyboard.  Another Wireshark version or font moves the
# rows: look at the pictures before committing them.
set -eu

REPO=$(cd "$(dirname "$0")/.." && pwd)
PLUGIN=${1:-$REPO/build/dissector/roce.so}
DPY=${SHOT_DISPLAY:-:99}
W=1280
H=900
WSV=$(tshark --version 2>/dev/null | sed -n '1s/.* \([0-9]*\.[0-9]*\)\..*/\1/p')

[ -f "$PLUGIN" ] || { echo "no plugin at $PLUGIN (ninja -C build)" >&2; exit 1; }
for p in wireshark tshark Xvfb xdotool import convert; do
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

# ---- a temporary HOME with the plugin, the RoCE profile and a fixed layout --------
HOMEDIR=$T/home
CFG=$HOMEDIR/.config/wireshark
mkdir -p "$HOMEDIR/.local/lib/wireshark/plugins/$WSV/epan" "$CFG"
cp "$PLUGIN" "$HOMEDIR/.local/lib/wireshark/plugins/$WSV/epan/roce.so"
cp "$REPO/captures/rxe/lossy/lossy_rping.client.pcap" "$REPO/captures/made/naks.pcap" "$HOMEDIR/"
HOME=$HOMEDIR "$REPO/dissector/install-colorfilters" >/dev/null
cat > "$CFG/recent_common" <<EOF
gui.geometry_main_x: 0
gui.geometry_main_y: 0
gui.geometry_main_width: $W
gui.geometry_main_height: $H
gui.geometry_main_maximized: FALSE
privs.warn_if_elevated: FALSE
sys.warn_if_no_capture: FALSE
EOF
cat > "$CFG/profiles/RoCE/recent" <<EOF
gui.byte_view_show: FALSE
gui.packet_diagram_show: FALSE
gui.geometry_main_upper_pane: 330
column.width:
        %m, 60,
        %t, 80,
        %s, 80,
        %d, 80,
        %p, 60,
        %L, 55,
        %i, 800
EOF
RUN=
if [ "$(id -u)" = 0 ]; then
	chown -R nobody:nogroup "$T"
	chmod 700 "$T"
	RUN="setpriv --reuid=nobody --regid=nogroup --clear-groups"
fi

# ---- X server -------------------------------------------------------------------
Xvfb "$DPY" -screen 0 ${W}x${H}x24 -nolisten tcp >"$T/xvfb.log" 2>&1 &
XVFB_PID=$!
export DISPLAY="$DPY"
for i in $(seq 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.2; done

# start_wireshark FILE ARGS...: starts the GUI on FILE, waits for its window
start_wireshark() {
	f=$1
	shift
	env HOME="$HOMEDIR" XDG_RUNTIME_DIR="$T" $RUN \
		wireshark -C RoCE -r "$HOMEDIR/$f" "$@" >"$T/wireshark.log" 2>&1 &
	WS_PID=$!
	WIN=
	for i in $(seq 60); do
		WIN=$(xdotool search --name "^$f\$" 2>/dev/null | head -1) || true
		[ -n "$WIN" ] && break
		sleep 0.5
	done
	[ -n "$WIN" ] || { cat "$T/wireshark.log" >&2; echo "no Wireshark window" >&2; exit 1; }
	sleep 4   # file read, packet selected
}
stop_wireshark() {
	kill "$WS_PID" 2>/dev/null || true
	wait "$WS_PID" 2>/dev/null || true
	WS_PID=
}
# window NAME: the id of the (first) window whose title contains NAME
window() {
	for i in $(seq 30); do
		w=$(xdotool search --name "$1" 2>/dev/null | head -1) || true
		[ -n "$w" ] && { echo "$w"; return; }
		sleep 0.5
	done
	echo "no window $1" >&2
	exit 1
}
click() { xdotool mousemove "$1" "$2" click "${3:-1}"; sleep 0.4; }
collapse() { click 300 "$1"; xdotool key Left; sleep 0.4; }
away() { xdotool mousemove $((W - 10)) 5; sleep 0.5; }
png8() { convert "$1" -strip -colors 128 PNG8:"$2"; }

# ---- 1: packet list and the analysis tree of frame 848 --------------------------
start_wireshark lossy_rping.client.pcap -g 848
# The details pane starts at y 433 (upper pane 330): the 7th row (y 535) is
# the RoCE tree; Shift+Right expands it with all its subtrees.  Then the
# BTH, RETH and ICRC subtrees and the retransmission expert info are
# collapsed (each moves the rows below it up), the go-back-N expert info
# too, and the "Triggered by frame" row is selected (the status bar names
# its field).
click 300 535
xdotool key shift+Right
sleep 1
for y in 569 586 620 705 739; do collapse $y; done
click 300 773
away
import -window root "$T/tree.png"
convert \( "$T/tree.png" -crop ${W}x800+0+0 +repage \) \( "$T/tree.png" -crop ${W}x24+0+$((H - 24)) +repage \) \
	-append "$T/tree2.png"
png8 "$T/tree2.png" "$REPO/docs/wireshark-roce.png"
stop_wireshark

# ---- 2: Expert Information, the go-back-N group expanded -------------------------
start_wireshark lossy_rping.client.pcap -z expert
DLG=$(window "Expert Information")
xdotool windowmove "$DLG" 0 0 windowsize "$DLG" 1000 520
sleep 1.5
click 21 75   # the third group (go-back-N episode starts)
away
import -window "$DLG" "$T/expert.png"
png8 "$T/expert.png" "$REPO/docs/wireshark-roce-expert.png"
stop_wireshark

# ---- 3: Statistics > RoCE QP Conversations ----------------------------------------
# (Alt+S opens the Statistics menu; the entry is the 13th: y 311 in
# Debian's Wireshark 4.0)
start_wireshark naks.pcap
click 600 300
xdotool key alt+s
sleep 1
click 400 311
DLG=$(window "RoCE QP Conversations")
xdotool windowmove "$DLG" 0 0 windowsize "$DLG" $W 250
sleep 1.5
away
import -window "$DLG" "$T/qp.png"
png8 "$T/qp.png" "$REPO/docs/wireshark-roce-stats.png"
xdotool windowclose "$DLG" 2>/dev/null || true
sleep 1

# ---- 4: Statistics > Conversations > RoCE, Apply as Filter > Selected > A <-> B ----
click 600 300
xdotool key alt+s
sleep 1
click 400 109
DLG=$(window "Conversations")
xdotool windowmove "$DLG" 0 0 windowsize "$DLG" $W 420
sleep 1.5
click 115 356                # the protocol list's search field
xdotool type "RoCE"
sleep 1
click 31 274                 # tick RoCE: its tab appears (5th)
sleep 1.5
click 495 26                 # the RoCE tab
sleep 1.5
click 400 88 3               # context menu of the second row (stream 1)
xdotool key Down Right
sleep 0.6
xdotool key Right
sleep 0.6
import -window root -crop ${W}x380+0+0 "$T/conv.png"
xdotool key Return
sleep 2
xdotool windowmove "$DLG" 0 600
sleep 1
import -window root -crop ${W}x150+0+0 "$T/main.png"
convert "$T/conv.png" "$T/main.png" -append "$T/conv2.png"
png8 "$T/conv2.png" "$REPO/docs/wireshark-roce-conv.png"
stop_wireshark

echo "wrote docs/wireshark-roce.png, -expert.png, -stats.png, -conv.png (Wireshark $WSV)"
