# Helpers sourced by /init and available to run scripts (. /vm-lib.sh).
IP=/usr/sbin/ip
TC=/usr/sbin/tc
RDMA=/usr/bin/rdma
MAC_A=02:00:00:00:00:0a
MAC_B=02:00:00:00:00:0b
ADDR_A=10.0.0.1
ADDR_B=10.0.0.2

say() { echo "[vm] $*" > /dev/console 2>/dev/null || echo "[vm] $*"; }

sysw() { [ -w "$1" ] && echo "$2" > "$1"; }

# The "network" between the two hosts: vethA's peer pA and vethB's peer pB,
# joined by tc mirred (whatever arrives on pA leaves on pB and back).  A
# qdisc on pB's egress acts on what rxe0 sends to rxe1 after vethA has seen
# it and before vethB does, and pA's egress on the other direction: loss in
# the middle, seen by the sender's capture only (tools/capture -L).
#   rxe_setup [DEV_A NETDEV_A ADDR_A DEV_B NETDEV_B ADDR_B]: other names and
#   addresses than rxe0 vethA 10.0.0.1 / rxe1 vethB 10.0.0.2 (the peers stay
#   pA and pB; tests/capture/host-in-vm.sh, after rxe_teardown)
rxe_setup() {
    da=${1:-rxe0} na=${2:-vethA} aa=${3:-$ADDR_A} db=${4:-rxe1} nb=${5:-vethB} ab=${6:-$ADDR_B}
    $IP link set lo up
    $IP link add $na address $MAC_A type veth peer name pA
    $IP link add $nb address $MAC_B type veth peer name pB
    for d in $na $nb pA pB; do
        sysw /proc/sys/net/ipv6/conf/$d/disable_ipv6 1
    done
    $IP addr add $aa/24 dev $na
    $IP addr add $ab/24 dev $nb
    for d in pA pB $na $nb; do $IP link set $d up; done
    $TC qdisc add dev pA ingress
    $TC filter add dev pA parent ffff: matchall action mirred egress redirect dev pB
    $TC qdisc add dev pB ingress
    $TC filter add dev pB parent ffff: matchall action mirred egress redirect dev pA
    for c in all default $na $nb; do
        sysw /proc/sys/net/ipv4/conf/$c/accept_local 1
        sysw /proc/sys/net/ipv4/conf/$c/rp_filter 0
    done
    # Locally generated traffic to the peer address leaves through the other
    # veth instead of lo: rxe drops what arrives on lo.
    $IP rule add pref 100 iif lo to $ab lookup 100
    $IP route add $ab dev $na src $aa table 100
    $IP rule add pref 101 iif lo to $aa lookup 101
    $IP route add $aa dev $nb src $ab table 101
    if $IP rule show pref 0 | grep -q 'lookup local'; then
        $IP rule del pref 0 lookup local
        $IP rule add pref 1000 lookup local
    fi
    $IP neigh replace $ab lladdr $MAC_B dev $na nud permanent
    $IP neigh replace $aa lladdr $MAC_A dev $nb nud permanent
    $RDMA link add $da type rxe netdev $na
    $RDMA link add $db type rxe netdev $nb
    i=0
    while [ $i -lt 300 ]; do
        s0=$(cat /sys/class/infiniband/$da/ports/1/state 2>/dev/null)
        s1=$(cat /sys/class/infiniband/$db/ports/1/state 2>/dev/null)
        case "$s0$s1" in *ACTIVE*ACTIVE*) break ;; esac
        sleep 0.1; i=$((i+1))
    done
    [ -n "$(gid_index $da 2)" ] || sleep 1
}

# rxe_teardown: undo rxe_setup (every rxe device, both veth pairs, the rules)
rxe_teardown() {
    for d in $($RDMA link show 2>/dev/null | awk '$1 == "link" {split($2, a, "/"); print a[1]}'); do
        $RDMA link delete $d 2>/dev/null
    done
    for d in pA pB; do $IP link del $d 2>/dev/null; done
    $IP rule del pref 100 2>/dev/null; $IP rule del pref 101 2>/dev/null
    true
}

# gid_index DEV VERSION(1|2): index of the IPv4-mapped GID of RoCE vVERSION
gid_index() {
    want="RoCE v2"; [ "$2" = 1 ] && want="IB/RoCE v1"
    for g in /sys/class/infiniband/$1/ports/1/gids/*; do
        n=${g##*/}
        case $(cat $g 2>/dev/null) in
            0000:0000:0000:0000:0000:ffff:*) ;;
            *) continue ;;
        esac
        t=$(cat /sys/class/infiniband/$1/ports/1/gid_attrs/types/$n 2>/dev/null)
        [ "$t" = "$want" ] && { echo $n; return 0; }
    done
    return 1
}

# ulp_modload NAME[=PARAMS]...: load modules put in by QPTRACE_VM_MODULES
# (tools/rxe-vm) and what they depend on (/lib/modules/extra/NAME.deps, in
# load order), each once; NAME with - or _ as given to QPTRACE_VM_MODULES,
# PARAMS (comma-separated) for NAME itself
ulp_modload() {
    for want in "$@"; do
        w=${want%%=*}; p=; [ "$w" = "$want" ] || p=$(echo "${want#*=}" | tr ',' ' ')
        w=$(echo "$w" | tr - _)
        [ -f /lib/modules/extra/$w.deps ] || { say "no module $w"; return 1; }
        for m in $(cat /lib/modules/extra/$w.deps); do
            n=$(echo "${m%.ko}" | tr - _)
            grep -q "^$n " /proc/modules && continue
            [ -f /lib/modules/extra/$m ] || continue      # in the base image, built in
            grep -qx "$m" /tmp/ulp_modload.failed 2>/dev/null && continue
            a=; [ "$n" = "$w" ] && a=$p
            # a failure is fatal for NAME only: an optional accelerated
            # variant (crct10dif-pclmul: no PCLMULQDQ under TCG) may fail
            insmod /lib/modules/extra/$m $a 2>/dev/null || {
                echo "ulp_modload: insmod $m $a failed" >&2; echo "$m" >> /tmp/ulp_modload.failed
                [ "$n" = "$w" ] && return 1; }
        done
    done
}
