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
rxe_setup() {
    $IP link set lo up
    $IP link add vethA address $MAC_A type veth peer name pA
    $IP link add vethB address $MAC_B type veth peer name pB
    for d in vethA vethB pA pB; do
        sysw /proc/sys/net/ipv6/conf/$d/disable_ipv6 1
    done
    $IP addr add $ADDR_A/24 dev vethA
    $IP addr add $ADDR_B/24 dev vethB
    for d in pA pB vethA vethB; do $IP link set $d up; done
    $TC qdisc add dev pA ingress
    $TC filter add dev pA parent ffff: matchall action mirred egress redirect dev pB
    $TC qdisc add dev pB ingress
    $TC filter add dev pB parent ffff: matchall action mirred egress redirect dev pA
    for c in all default vethA vethB; do
        sysw /proc/sys/net/ipv4/conf/$c/accept_local 1
        sysw /proc/sys/net/ipv4/conf/$c/rp_filter 0
    done
    # Locally generated traffic to the peer address leaves through the other
    # veth instead of lo: rxe drops what arrives on lo.
    $IP rule add pref 100 iif lo to $ADDR_B lookup 100
    $IP route add $ADDR_B dev vethA src $ADDR_A table 100
    $IP rule add pref 101 iif lo to $ADDR_A lookup 101
    $IP route add $ADDR_A dev vethB src $ADDR_B table 101
    $IP rule del pref 0 lookup local
    $IP rule add pref 1000 lookup local
    $IP neigh replace $ADDR_B lladdr $MAC_B dev vethA nud permanent
    $IP neigh replace $ADDR_A lladdr $MAC_A dev vethB nud permanent
    $RDMA link add rxe0 type rxe netdev vethA
    $RDMA link add rxe1 type rxe netdev vethB
    i=0
    while [ $i -lt 300 ]; do
        s0=$(cat /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null)
        s1=$(cat /sys/class/infiniband/rxe1/ports/1/state 2>/dev/null)
        case "$s0$s1" in *ACTIVE*ACTIVE*) break ;; esac
        sleep 0.1; i=$((i+1))
    done
    [ -n "$(gid_index rxe0 2)" ] || sleep 1
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
