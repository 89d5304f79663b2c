#!/bin/bash
# Regenerate the rxe captures in the VM (tools/capture) into a scratch
# directory and validate them with tests/capture/validate.py.
#   regen-and-validate.sh QPTRACE [SCENARIO...]
# Exit 77 (meson: skipped) only when qemu cannot run on this machine.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
QPTRACE=${1:?usage: regen-and-validate.sh QPTRACE [SCENARIO...]}; shift
t0=$SECONDS
if ! "$TOP/tools/rxe-vm" check; then
    echo "SKIP: qemu-system-x86_64 (TCG) cannot run on this machine"
    exit 77
fi
out=$(mktemp -d /tmp/qptrace-capture.XXXXXX)
trap 'rm -rf "$out"' EXIT
"$TOP/tools/capture" -o "$out" "$@"; crc=$?
t1=$SECONDS
python3 "$TOP/tests/capture/validate.py" --qptrace "$QPTRACE" "$out"; vrc=$?
echo "wall time: capture $((t1 - t0)) s, validate $((SECONDS - t1)) s, total $((SECONDS - t0)) s"
[ $crc -eq 0 ] || { echo "capture failed (exit $crc)"; exit 1; }
exit $vrc
