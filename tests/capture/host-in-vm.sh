#!/bin/bash
# tools/capture --host, tested by running host mode inside the VM: there the
# "host" is the VM itself with its two rxe devices made over again under
# other names, on other netdevs, with other addresses (rxe_setup of
# vm-lib.sh: hostS on netS 192.168.77.1, hostC on netC 192.168.77.2; the
# rxe devices created as rxe0/rxe1 and renamed with `rdma dev set`), so no
# rxe0, rxe1, vethA, vethB or 10.0.0.x exists where the script runs: a name
# the substitution missed makes its tool fail.
#
#   host-in-vm.sh QPTRACE [SCENARIO...]
#
# 1. tools/capture --host ... --dry-run writes the host script here; it
#    must name none of the VM's own devices, netdevs or addresses, and
#    must name the ones given;
# 2. tools/rxe-vm run boots the VM, renames, runs the script: the first
#    half of the scenarios under busybox sh, the rest under bash (the
#    host's bash, put into the VM), as tools/capture --host runs it;
# 3. tools/capture --host ... --results writes the manifests (the same
#    manifest writer), tests/capture/validate.py checks them (the same
#    checks as the VM captures) and the manifests must say host, the
#    devices, taps and addresses.
# QPTRACE_HOST_TEST_BREAK=dev|addr puts rxe0 (10.0.0.1) back into the
# script's scenario lines after step 1: the run must then fail (the test
# of this test).  Exit 77 (meson: skipped) only when qemu cannot run.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
QPTRACE=${1:?usage: host-in-vm.sh QPTRACE [SCENARIO...]}; shift
SCEN=("$@")
[ ${#SCEN[@]} -gt 0 ] || SCEN=(rc_pingpong ud_pingpong write_bw rping qpgen_ops write_bw_drop read_bw_drop)
SPEC_S=hostS:netS:192.168.77.1 SPEC_C=hostC:netC:192.168.77.2
t0=$SECONDS
if ! "$TOP/tools/rxe-vm" check; then
    echo "SKIP: qemu-system-x86_64 (TCG) cannot run on this machine"
    exit 77
fi
work=$(mktemp -d /tmp/qptrace-host-in-vm.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# 1. the host scripts: busybox sh runs the first half, bash the rest
half=$(( (${#SCEN[@]} + 1) / 2 ))
part_sh=("${SCEN[@]:0:half}") part_bash=("${SCEN[@]:half}")
for sh in sh bash; do
    [ $sh = sh ] && part=("${part_sh[@]}") || part=("${part_bash[@]}")
    [ ${#part[@]} -gt 0 ] || { : > "$work/host-$sh.sh"; continue; }
    f=$work/host-$sh.sh
    "$TOP/tools/capture" --host $SPEC_S $SPEC_C --dry-run "${part[@]}" > "$f" ||
        fail "tools/capture --host --dry-run exit $?"
    left=$(grep -nE '(^|[^[:alnum:]_])(rxe0|rxe1|vethA|vethB)([^[:alnum:]_]|$)|10\.0\.0\.' "$f")
    [ -z "$left" ] || fail "the host script still names the VM's devices or addresses:"$'\n'"$left"
    for w in 'SDEV=hostS' 'CDEV=hostC' 'STAP=netS' 'CTAP=netC' 'SADDR=192.168.77.1' 'CADDR=192.168.77.2'; do
        grep -q "$w" "$f" || fail "the host script has no $w"
    done
    n=$(grep -c '^scenario ' "$f")
    [ "$n" = ${#part[@]} ] || fail "the host script runs $n scenarios, asked for ${#part[@]}"
    echo "ok   host script for $sh: $n scenarios (${part[*]}), no rxe0/rxe1/vethA/vethB/10.0.0.x"
    case ${QPTRACE_HOST_TEST_BREAK:-} in
        dev) sed -i '/^scenario /s/hostS/rxe0/g' "$f" ;;
        addr) sed -i '/^scenario /s/192\.168\.77\.1/10.0.0.1/g' "$f" ;;
        '') ;;
        *) fail "QPTRACE_HOST_TEST_BREAK=dev or addr" ;;
    esac
done

# 2. run it in the VM, the "host" made over first
cat > "$work/vm.sh" <<'EOF'
. /vm-lib.sh
rxe_teardown
rxe_setup rxe0 netS 192.168.77.1 rxe1 netC 192.168.77.2
$RDMA dev set rxe0 name hostS && $RDMA dev set rxe1 name hostC || { echo "host-in-vm: rename failed"; exit 1; }
echo "host-in-vm: $($RDMA link show | tr '\n' ';') $(ls /sys/class/infiniband | tr '\n' ' ')"
for d in rxe0 rxe1; do [ ! -e /sys/class/infiniband/$d ] || { echo "host-in-vm: $d still there"; exit 1; }; done
for n in vethA vethB; do [ ! -e /sys/class/net/$n ] || { echo "host-in-vm: $n still there"; exit 1; }; done
src=0
[ ! -s $EXTRA/host-sh.sh ] || sh $EXTRA/host-sh.sh || src=$?
[ ! -s $EXTRA/host-bash.sh ] || bash $EXTRA/host-bash.sh || src=$?
exit $src
EOF
qpgen=
if printf '%s\n' "${SCEN[@]}" | grep -q qpgen; then
    ${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -Wall -o "$work/qpgen" "$TOP/tools/qpgen/qpgen.c" -libverbs -lrdmacm ||
        fail "cannot build qpgen"
    qpgen=$work/qpgen
fi
bash=$(command -v bash)
QPTRACE_VM_EXTRA_BIN="${QPTRACE_VM_EXTRA_BIN:-} $qpgen $bash" QPTRACE_VM_TIMEOUT=${QPTRACE_VM_TIMEOUT:-600} \
    "$TOP/tools/rxe-vm" run "$work/vm.sh" "$work/vmout" "$work/host-sh.sh" "$work/host-bash.sh"; vrc=$?
cat "$work/vmout/run.log" 2>/dev/null
t1=$SECONDS
[ $vrc = 0 ] || echo "the VM run exited $vrc"

# 3. manifests, validation
"$TOP/tools/capture" --host $SPEC_S $SPEC_C --results "$work/vmout" -o "$work/cap" "${SCEN[@]}"; crc=$?
python3 "$TOP/tests/capture/validate.py" --qptrace "$QPTRACE" "$work/cap"; valrc=$?
python3 - "$work/cap" "${SCEN[@]}" <<'EOF'; mrc=$?
import json, os, sys
d, names = sys.argv[1], sys.argv[2:]
bad = 0
want = {"server": ("hostS", "netS", "192.168.77.1"), "client": ("hostC", "netC", "192.168.77.2")}
for n in names:
    p = os.path.join(d, n + ".json")
    if not os.path.exists(p):
        print(f"FAIL {n}: no manifest"); bad += 1; continue
    m = json.load(open(p))
    errs = []
    if m.get("host") is not True:
        errs.append("no host: true")
    for r, (dev, tap, addr) in want.items():
        got = m.get("devices", {}).get(r, {})
        if (got.get("device"), got.get("tap"), got.get("addr")) != (dev, tap, addr):
            errs.append(f"{r} device {got}")
        if (m[r].get("device"), m[r].get("addr")) != (dev, addr):
            errs.append(f"{r}: {m[r].get('device')} {m[r].get('addr')}")
        if got.get("parent") != tap:
            errs.append(f"{r}: parent {got.get('parent')}, expected the rxe netdev {tap}")
    if m["capture"].get("interface") != "netS":
        errs.append(f"capture interface {m['capture'].get('interface')}")
    if not m.get("kernel"):
        errs.append("no kernel")
    if (m.get("impairment") or {}).get("device") not in (None, "netS", "netC"):
        errs.append(f"impairment device {m['impairment'].get('device')}")
    text = json.dumps({k: v for k, v in m.items() if k not in ("logs", "qpgen", "kernel_version")})
    for w in ("rxe0", "rxe1", "vethA", "vethB", "10.0.0."):
        if w in text:
            errs.append(f"manifest names {w}")
    print(("FAIL " if errs else "ok   ") + n + ": host manifest" + (": " + "; ".join(errs) if errs else ""))
    bad += bool(errs)
sys.exit(1 if bad else 0)
EOF
echo "wall time: VM $((t1 - t0)) s, manifests and validation $((SECONDS - t1)) s, total $((SECONDS - t0)) s"
[ $crc -eq 0 ] || fail "tools/capture --host --results exit $crc"
[ $valrc -eq 0 ] || fail "validate.py exit $valrc"
[ $mrc -eq 0 ] || fail "the host manifests"
echo "passed"
