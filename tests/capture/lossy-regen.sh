#!/bin/bash
# Make the lossy rxe runs in the VM (tools/capture -L) into a scratch
# directory and check them with tests/capture/validate_lossy.py: every
# scenario on Debian 12's kernel (6.1) and on Debian 13's (6.12,
# QPTRACE_VM_KERNEL=trixie).
#   lossy-regen.sh QPTRACE [SCENARIO...]      (default: all on 6.1)
# QPTRACE_LOSSY_KERNELS: the kernels to run ("bookworm trixie", default),
# QPTRACE_LOSSY_TRIXIE: the scenarios for 6.12 (default: all).
# QPTRACE_LOSSY_KEEP=1: keep the runs and say where.
# Exit 77 (meson: skipped) only when qemu cannot run on this machine.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
QPTRACE=${1:?usage: lossy-regen.sh QPTRACE [SCENARIO...]}; shift
TRIXIE=${QPTRACE_LOSSY_TRIXIE:-}   # empty: all (the whole set takes about 1 minute on 6.12)
if ! "$TOP/tools/rxe-vm" check; then
    echo "SKIP: qemu-system-x86_64 (TCG) cannot run on this machine"
    exit 77
fi
out=$(mktemp -d /tmp/qptrace-lossy.XXXXXX)
# QPTRACE_LOSSY_KEEP=1: keep the runs (random: a failing one is worth a look)
if [ -z "${QPTRACE_LOSSY_KEEP:-}" ]; then trap 'rm -rf "$out"' EXIT; else echo "runs kept in $out"; fi
rc=0
for k in ${QPTRACE_LOSSY_KERNELS:-bookworm trixie}; do
    t0=$SECONDS
    mkdir -p "$out/$k"
    if [ "$k" = bookworm ]; then
        env -u QPTRACE_VM_KERNEL "$TOP/tools/capture" -L -o "$out/$k" "$@"; crc=$?
    else
        # shellcheck disable=SC2086
        QPTRACE_VM_KERNEL=$k "$TOP/tools/capture" -L -o "$out/$k" $TRIXIE; crc=$?
    fi
    t1=$SECONDS
    echo "=== $k: validate"
    python3 "$TOP/tests/capture/validate_lossy.py" --qptrace "$QPTRACE" "$out/$k"; vrc=$?
    echo "=== $k: wall time capture $((t1 - t0)) s, validate $((SECONDS - t1)) s"
    [ $crc -eq 0 ] || { echo "=== $k: capture failed (exit $crc)"; rc=1; }
    [ $vrc -eq 0 ] || rc=1
done
exit $rc
