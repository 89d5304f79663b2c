#!/bin/bash
# Make the upper-layer captures in the VM (tools/capture-ulp: NVMe-oF,
# iSER, NFS over RDMA with the kernel's own targets and initiators) into a
# scratch directory and check them with tests/capture/validate_ulp.py, on
# Debian 12's kernel (6.1) and on Debian 13's (6.12, QPTRACE_VM_KERNEL=trixie).
#   ulp-regen.sh QPTRACE [SCENARIO...]
# QPTRACE_ULP_KERNELS: the kernels to run ("bookworm trixie", default).
# Exit 77 (meson: skipped) only when qemu cannot run on this machine.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
QPTRACE=${1:?usage: ulp-regen.sh QPTRACE [SCENARIO...]}; shift
if ! "$TOP/tools/rxe-vm" check; then
    echo "SKIP: qemu-system-x86_64 (TCG) cannot run on this machine"
    exit 77
fi
out=$(mktemp -d /tmp/qptrace-ulp.XXXXXX)
trap 'rm -rf "$out"' EXIT
rc=0
for k in ${QPTRACE_ULP_KERNELS:-bookworm trixie}; do
    t0=$SECONDS
    mkdir -p "$out/$k"
    if [ "$k" = bookworm ]; then
        env -u QPTRACE_VM_KERNEL "$TOP/tools/capture-ulp" -o "$out/$k" "$@"; crc=$?
    else
        QPTRACE_VM_KERNEL=$k "$TOP/tools/capture-ulp" -o "$out/$k" "$@"; crc=$?
    fi
    t1=$SECONDS
    echo "=== $k: validate"
    python3 "$TOP/tests/capture/validate_ulp.py" --qptrace "$QPTRACE" "$out/$k"; vrc=$?
    echo "=== $k: wall time capture $((t1 - t0)) s, validate $((SECONDS - t1)) s"
    [ $crc -eq 0 ] || { echo "=== $k: capture-ulp failed (exit $crc)"; rc=1; }
    [ $vrc -eq 0 ] || rc=1
done
exit $rc
