/* qpgen: drive a scripted workload between two local RDMA endpoints
 * (typically rxe0 and rxe1 of tools/rxe-vm) and write a JSON manifest of
 * what was posted and how it completed, so that a capture of the traffic can
 * be checked against it.
 *
 *   qpgen [-s SERVER_ADDR] [-c CLIENT_ADDR] [-p PORT] [-o MANIFEST]
 *         [-t RC|UC|UD] [-q NQPS] [-k GENERATIONS] [-r RNR_DELAY_MS] OP...
 *
 * -t RC (default): RC QPs connected through RDMA CM.  -t UC, -t UD: QPs
 * created with ibv_create_qp on the devices that own the two addresses
 * (RoCE v2 GIDs), addresses exchanged inside the process and moved to
 * INIT/RTR/RTS here (as ibv_uc_pingpong/ibv_ud_pingpong do); UD sends carry
 * an address handle with a GRH.  -q N: N QP pairs, each running the whole
 * workload; every operation is posted on all of them before any completion
 * is awaited, so their packets interleave on the wire.  -k N (RC): N
 * generations: after the workload the QPs are disconnected (CM DREQ/DREP)
 * and destroyed, and new ones are connected over RDMA CM (same addresses,
 * same port) for the next round of the whole workload; the manifest's "qps"
 * lists every generation's QP pairs (qp index = generation * NQPS + i).
 * RC QPs get the local ACK timeout 14 (4.096 us * 2^14 = 67 ms) through
 * rdma_set_option, not RDMA CM's default for RoCE (about 1 s), so a lost
 * last packet costs a short timer retry.
 *
 * OP is [client:|server:]NAME[:SIZE][xCOUNT]; the prefix names the side
 * that posts (default client).  NAME is one of
 *   SEND SEND_IMM WRITE WRITE_IMM READ CMP_SWAP FETCH_ADD
 *   SEND_INV         RC SEND with invalidate: the receiving side binds a
 *                    type 2 memory window over its buffer first, the SEND
 *                    carries that window's rkey in its IETH and the
 *                    receive completes "with invalidate"
 *   RNR_SEND         a SEND posted before the peer has a receive: the
 *                    responder answers RNR NAK until the receive is posted
 *                    (after -r MS milliseconds, default 100)
 *   BAD_RKEY_WRITE   an RDMA WRITE with a wrong rkey: NAK remote access
 *   BAD_RKEY_READ    an RDMA READ with a wrong rkey; both move the QPs to
 *                    the error state, so they must come last.
 * UC takes SEND SEND_IMM WRITE WRITE_IMM, UD SEND SEND_IMM (size <= MTU).
 * Every operation waits for its completion (and the peer's receive
 * completion) before the next is posted.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

enum opkind { OP_SEND, OP_SEND_IMM, OP_WRITE, OP_WRITE_IMM, OP_READ,
              OP_CMP_SWAP, OP_FETCH_ADD, OP_SEND_INV, OP_RNR_SEND, OP_BAD_WRITE, OP_BAD_READ };

static const struct {
    const char *name;
    enum opkind kind;
    unsigned transports; /* bit 0 RC, 1 UC, 2 UD */
} op_names[] = {
    { "SEND", OP_SEND, 7 }, { "SEND_IMM", OP_SEND_IMM, 7 }, { "WRITE", OP_WRITE, 3 },
    { "WRITE_IMM", OP_WRITE_IMM, 3 }, { "READ", OP_READ, 1 }, { "CMP_SWAP", OP_CMP_SWAP, 1 },
    { "FETCH_ADD", OP_FETCH_ADD, 1 }, { "SEND_INV", OP_SEND_INV, 1 }, { "RNR_SEND", OP_RNR_SEND, 1 },
    { "BAD_RKEY_WRITE", OP_BAD_WRITE, 1 }, { "BAD_RKEY_READ", OP_BAD_READ, 1 },
};

enum transport { TR_RC, TR_UC, TR_UD };
static const char *const tr_names[] = { "RC", "UC", "UD" };

#define UD_QKEY 0x11111111u
#define GRH_LEN 40

struct opspec {
    enum opkind kind;
    int from;           /* 0 client, 1 server */
    size_t size;
    unsigned count;
};

struct side {
    const char *role;
    struct rdma_cm_id *id;      /* NULL for out-of-band (UC, UD) QPs */
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_mr *mr;
    struct ibv_qp *qp;
    struct ibv_ah *ah;          /* UD: address handle towards the peer */
    struct ibv_mw *mw;          /* SEND_INV: type 2 window over buf */
    char *buf;
    size_t buflen;
    uint32_t start_psn, rq_psn, dest_qpn;
    union ibv_gid gid;
    int gid_index;
    enum ibv_mtu mtu;
    uint32_t kept_qpn, kept_rkey;   /* after destroy_cm_side */
    char devname[64];
};

struct conn {
    struct side s[2];   /* 0 client, 1 server */
};

struct result {
    const char *op;
    const char *from;
    int qp;
    size_t size;
    unsigned seq;
    uint32_t imm;
    uint32_t inv_rkey;          /* SEND_INV: the rkey the SEND carried */
    int peer_invalidated;       /* -1 n/a, else the receive says "with invalidate" */
    uint32_t peer_inv_rkey;
    unsigned peer_wc_flags;
    const char *status;
    const char *peer_status;
    int rnr_delay_ms;
    double t_post, t_done;
};

static struct conn *conns;
static int nconns = 1, ngen = 1, gen;   /* conns holds ngen * nconns; gen is the current one */
static struct rdma_cm_id *listen_id;
static enum transport transport = TR_RC;
static bool need_mw;
static struct result *results;
static size_t nresults;
static struct timespec t_zero;

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "qpgen: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t_zero.tv_sec) + (t.tv_nsec - t_zero.tv_nsec) / 1e9;
}

static const char *kind_name(enum opkind k)
{
    for (size_t i = 0; i < sizeof op_names / sizeof op_names[0]; i++)
        if (op_names[i].kind == k)
            return op_names[i].name;
    return "?";
}

static bool parse_op(const char *arg, struct opspec *o)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", arg);
    char *p = buf;
    o->from = 0;
    o->count = 1;
    o->size = 0;
    if (!strncmp(p, "client:", 7)) {
        p += 7;
    } else if (!strncmp(p, "server:", 7)) {
        o->from = 1;
        p += 7;
    }
    char *x = strrchr(p, 'x'); /* operation names are upper case */
    if (x) {
        char *end;
        unsigned long c = strtoul(x + 1, &end, 10);
        if (*end != '\0' || c == 0)
            return false;
        o->count = (unsigned)c;
        *x = '\0';
    }
    char *colon = strchr(p, ':');
    if (colon) {
        *colon = '\0';
        char *end;
        o->size = strtoul(colon + 1, &end, 10);
        if (*end != '\0')
            return false;
    }
    for (size_t i = 0; i < sizeof op_names / sizeof op_names[0]; i++) {
        if (!strcmp(p, op_names[i].name)) {
            o->kind = op_names[i].kind;
            if (!(op_names[i].transports & (1u << transport)))
                die("%s is not an operation of %s QPs", p, tr_names[transport]);
            if (o->kind == OP_CMP_SWAP || o->kind == OP_FETCH_ADD)
                o->size = 8;
            else if (!colon)
                o->size = 64;
            return true;
        }
    }
    return false;
}

static struct rdma_cm_event *expect_event(struct rdma_event_channel *ec, enum rdma_cm_event_type want)
{
    struct rdma_cm_event *ev;
    if (rdma_get_cm_event(ec, &ev))
        die("rdma_get_cm_event: %s", strerror(errno));
    if (ev->event != want)
        die("expected CM event %s, got %s (status %d)", rdma_event_str(want),
            rdma_event_str(ev->event), ev->status);
    return ev;
}

/* PD, CQ, buffer and MR of one side (the QP comes later) */
static void setup_resources(struct side *s, struct ibv_context *ctx, size_t buflen, int fill)
{
    s->ctx = ctx;
    snprintf(s->devname, sizeof s->devname, "%s", ibv_get_device_name(ctx->device));
    s->pd = ibv_alloc_pd(ctx);
    if (!s->pd)
        die("ibv_alloc_pd (%s)", s->role);
    s->cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
    if (!s->cq)
        die("ibv_create_cq (%s)", s->role);
    s->buflen = buflen;
    if (posix_memalign((void **)&s->buf, 4096, buflen))
        die("out of memory");
    memset(s->buf, fill, buflen);
    int access = IBV_ACCESS_LOCAL_WRITE;
    if (transport == TR_RC)
        access |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
    else if (transport == TR_UC)
        access |= IBV_ACCESS_REMOTE_WRITE;
    if (need_mw)
        access |= IBV_ACCESS_MW_BIND;
    s->mr = ibv_reg_mr(s->pd, s->buf, buflen, access);
    if (!s->mr)
        die("ibv_reg_mr (%s): %s", s->role, strerror(errno));
    if (need_mw) {
        s->mw = ibv_alloc_mw(s->pd, IBV_MW_TYPE_2);
        if (!s->mw)
            die("ibv_alloc_mw type 2 (%s): %s", s->role, strerror(errno));
    }
}

static struct ibv_qp_init_attr qp_init_attr(struct side *s)
{
    struct ibv_qp_init_attr qa = {
        .send_cq = s->cq, .recv_cq = s->cq,
        .qp_type = transport == TR_RC ? IBV_QPT_RC : transport == TR_UC ? IBV_QPT_UC : IBV_QPT_UD,
        .cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1 },
        .sq_sig_all = 1,
    };
    return qa;
}

static void setup_cm_side(struct side *s, struct rdma_cm_id *id, size_t buflen, int fill)
{
    s->id = id;
    setup_resources(s, id->verbs, buflen, fill);
    struct ibv_qp_init_attr qa = qp_init_attr(s);
    if (rdma_create_qp(id, s->pd, &qa))
        die("rdma_create_qp (%s): %s", s->role, strerror(errno));
    s->qp = id->qp;
}

/* the QP and everything of one side, and its CM id; the side's record
 * (QPN, PSNs, rkey) stays for the manifest */
static void destroy_cm_side(struct side *s)
{
    uint32_t qpn = s->qp->qp_num, rkey = s->mr->rkey;
    rdma_destroy_qp(s->id);
    if (s->mw)
        ibv_dealloc_mw(s->mw);
    ibv_dereg_mr(s->mr);
    ibv_destroy_cq(s->cq);
    ibv_dealloc_pd(s->pd);
    free(s->buf);
    s->kept_qpn = qpn;
    s->kept_rkey = rkey;
    s->qp = NULL;
    s->mr = NULL;
    rdma_destroy_id(s->id);
    s->id = NULL;
}

static void query_side(struct side *s)
{
    struct ibv_qp_attr a;
    struct ibv_qp_init_attr ia;
    if (ibv_query_qp(s->qp, &a, IBV_QP_SQ_PSN | IBV_QP_RQ_PSN | IBV_QP_DEST_QPN |
                     IBV_QP_PATH_MTU | IBV_QP_AV, &ia))
        die("ibv_query_qp (%s)", s->role);
    s->start_psn = a.sq_psn;
    s->rq_psn = a.rq_psn;
    s->dest_qpn = a.dest_qp_num;
    s->mtu = a.path_mtu;
    s->gid_index = a.ah_attr.grh.sgid_index;
    ibv_query_gid(s->ctx, 1, s->gid_index, &s->gid);
}

/* ------------------------------------------------ out-of-band QPs (UC, UD) */

/* the RDMA device with a RoCE v2 GID for the IPv4 address addr */
static struct ibv_context *open_by_addr(const char *addr, int *gid_index, union ibv_gid *gid)
{
    struct in_addr in;
    if (inet_pton(AF_INET, addr, &in) != 1)
        die("addresses must be IPv4");
    int n;
    struct ibv_device **list = ibv_get_device_list(&n);
    if (!list)
        die("ibv_get_device_list: %s", strerror(errno));
    for (int d = 0; d < n; d++) {
        struct ibv_context *ctx = ibv_open_device(list[d]);
        if (!ctx)
            continue;
        struct ibv_port_attr pa;
        if (!ibv_query_port(ctx, 1, &pa)) {
            for (int i = 0; i < pa.gid_tbl_len; i++) {
                struct ibv_gid_entry e;
                if (ibv_query_gid_ex(ctx, 1, (uint32_t)i, &e, 0))
                    continue;
                static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
                if (e.gid_type == IBV_GID_TYPE_ROCE_V2 && !memcmp(e.gid.raw, v4mapped, 12) &&
                    !memcmp(e.gid.raw + 12, &in, 4)) {
                    *gid_index = i;
                    *gid = e.gid;
                    ibv_free_device_list(list);
                    return ctx;
                }
            }
        }
        ibv_close_device(ctx);
    }
    die("no RDMA device has a RoCE v2 GID for %s", addr);
    return NULL;
}

static void oob_create(struct side *s, struct ibv_context *ctx, int gid_index, union ibv_gid gid,
                       size_t buflen, int fill)
{
    setup_resources(s, ctx, buflen, fill);
    s->gid_index = gid_index;
    s->gid = gid;
    struct ibv_qp_init_attr qa = qp_init_attr(s);
    s->qp = ibv_create_qp(s->pd, &qa);
    if (!s->qp)
        die("ibv_create_qp %s (%s): %s", tr_names[transport], s->role, strerror(errno));
    struct ibv_port_attr pa;
    if (ibv_query_port(ctx, 1, &pa))
        die("ibv_query_port (%s)", s->role);
    s->mtu = pa.active_mtu;
    s->start_psn = (uint32_t)lrand48() & 0xffffff;
    struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1 };
    int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
    if (transport == TR_UD) {
        a.qkey = UD_QKEY;
        mask |= IBV_QP_QKEY;
    } else {
        a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
        mask |= IBV_QP_ACCESS_FLAGS;
    }
    if (ibv_modify_qp(s->qp, &a, mask))
        die("modify %s QP to INIT (%s): %s", tr_names[transport], s->role, strerror(errno));
}

static struct ibv_ah_attr ah_to(struct side *me, struct side *peer)
{
    struct ibv_ah_attr ah = { .is_global = 1, .port_num = 1,
                              .grh = { .dgid = peer->gid, .sgid_index = (uint8_t)me->gid_index,
                                       .hop_limit = 64 } };
    return ah;
}

static void oob_connect(struct side *me, struct side *peer)
{
    struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
    int mask = IBV_QP_STATE;
    me->dest_qpn = peer->qp->qp_num;
    me->rq_psn = peer->start_psn;
    if (transport == TR_UC) {
        a.path_mtu = me->mtu;
        a.dest_qp_num = peer->qp->qp_num;
        a.rq_psn = peer->start_psn;
        a.ah_attr = ah_to(me, peer);
        mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
    }
    if (ibv_modify_qp(me->qp, &a, mask))
        die("modify %s QP to RTR (%s): %s", tr_names[transport], me->role, strerror(errno));
    struct ibv_qp_attr b = { .qp_state = IBV_QPS_RTS, .sq_psn = me->start_psn };
    if (ibv_modify_qp(me->qp, &b, IBV_QP_STATE | IBV_QP_SQ_PSN))
        die("modify %s QP to RTS (%s): %s", tr_names[transport], me->role, strerror(errno));
    if (transport == TR_UD) {
        struct ibv_ah_attr ah = ah_to(me, peer);
        me->ah = ibv_create_ah(me->pd, &ah);
        if (!me->ah)
            die("ibv_create_ah (%s): %s", me->role, strerror(errno));
    }
}

/* ------------------------------------------------------------ operations */

static void post_recv(struct side *s, uint64_t wr_id)
{
    struct ibv_sge sge = { .addr = (uintptr_t)s->buf, .length = (uint32_t)s->buflen, .lkey = s->mr->lkey };
    struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;
    if (ibv_post_recv(s->qp, &wr, &bad))
        die("ibv_post_recv (%s)", s->role);
}

/* wait for one completion on s; returns its status */
static enum ibv_wc_status wait_wc(struct side *s, double timeout, bool *got, struct ibv_wc *out)
{
    struct ibv_wc wc;
    double end = now_s() + timeout;
    *got = false;
    while (now_s() < end) {
        int n = ibv_poll_cq(s->cq, 1, &wc);
        if (n < 0)
            die("ibv_poll_cq (%s)", s->role);
        if (n == 1) {
            *got = true;
            if (out)
                *out = wc;
            return wc.status;
        }
        usleep(50);
    }
    return IBV_WC_GENERAL_ERR;
}

/* bind s's type 2 window over its whole buffer with a new rkey */
static uint32_t bind_mw(struct side *s, unsigned seq)
{
    uint32_t rkey = ibv_inc_rkey(s->mw->rkey);
    struct ibv_send_wr wr = { .wr_id = 5000 + seq, .opcode = IBV_WR_BIND_MW,
                              .send_flags = IBV_SEND_SIGNALED }, *bad;
    wr.bind_mw.mw = s->mw;
    wr.bind_mw.rkey = rkey;
    wr.bind_mw.bind_info.mr = s->mr;
    wr.bind_mw.bind_info.addr = (uintptr_t)s->buf;
    wr.bind_mw.bind_info.length = s->buflen;
    wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    if (ibv_post_send(s->qp, &wr, &bad))
        die("ibv_post_send BIND_MW (%s): %s", s->role, strerror(errno));
    bool got;
    enum ibv_wc_status st = wait_wc(s, 5.0, &got, NULL);
    if (!got || st != IBV_WC_SUCCESS)
        die("bind of a type 2 memory window (%s): %s", s->role,
            got ? ibv_wc_status_str(st) : "no completion");
    s->mw->rkey = rkey; /* type 2: the consumer keeps track of the key */
    return rkey;
}

struct pending {
    struct result r;
    bool needs_recv;
};

static void post_op(struct conn *c, int qpi, const struct opspec *o, unsigned seq, struct pending *pd)
{
    struct side *me = &c->s[o->from], *peer = &c->s[!o->from];
    struct ibv_sge sge = { .addr = (uintptr_t)me->buf, .length = (uint32_t)o->size, .lkey = me->mr->lkey };
    struct ibv_send_wr wr = { .wr_id = seq, .sg_list = &sge, .num_sge = 1,
                              .send_flags = IBV_SEND_SIGNALED }, *bad;
    bool needs_recv = false;
    struct result r = { .op = kind_name(o->kind), .from = me->role, .qp = qpi, .size = o->size,
                        .seq = seq, .peer_status = NULL, .peer_invalidated = -1 };
    uint32_t rkey = peer->mr->rkey;
    uint64_t raddr = (uintptr_t)peer->buf;

    switch (o->kind) {
    case OP_SEND: case OP_RNR_SEND:
        wr.opcode = IBV_WR_SEND; needs_recv = true; break;
    case OP_SEND_IMM:
        wr.opcode = IBV_WR_SEND_WITH_IMM; needs_recv = true; break;
    case OP_SEND_INV:
        wr.opcode = IBV_WR_SEND_WITH_INV; needs_recv = true; break;
    case OP_WRITE: case OP_BAD_WRITE:
        wr.opcode = IBV_WR_RDMA_WRITE; break;
    case OP_WRITE_IMM:
        wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM; needs_recv = true; break;
    case OP_READ: case OP_BAD_READ:
        wr.opcode = IBV_WR_RDMA_READ; break;
    case OP_CMP_SWAP:
        wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP; break;
    case OP_FETCH_ADD:
        wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD; break;
    }
    if (o->kind == OP_BAD_WRITE || o->kind == OP_BAD_READ)
        rkey ^= 0x00a5a500u;
    if (wr.opcode == IBV_WR_SEND_WITH_IMM || wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
        r.imm = 0x51000000u | seq;
        wr.imm_data = htonl(r.imm);
    }
    if (o->kind == OP_SEND_INV) {
        r.inv_rkey = bind_mw(peer, seq);
        wr.invalidate_rkey = r.inv_rkey;
    }
    if (wr.opcode == IBV_WR_RDMA_WRITE || wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM ||
        wr.opcode == IBV_WR_RDMA_READ) {
        wr.wr.rdma.remote_addr = raddr;
        wr.wr.rdma.rkey = rkey;
    } else if (wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
        wr.wr.atomic.remote_addr = raddr;
        wr.wr.atomic.rkey = rkey;
        if (wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP) {
            uint64_t cur;
            memcpy(&cur, peer->buf, 8);
            wr.wr.atomic.compare_add = cur;       /* succeeds */
            wr.wr.atomic.swap = 0x1000 + seq;
        } else {
            wr.wr.atomic.compare_add = 1;
        }
    }
    if (transport == TR_UD) {
        wr.wr.ud.ah = me->ah;
        wr.wr.ud.remote_qpn = peer->qp->qp_num;
        wr.wr.ud.remote_qkey = UD_QKEY;
        if (o->size + GRH_LEN > peer->buflen)
            die("UD SEND of %zu bytes does not fit the receive buffer", o->size);
    }
    if (needs_recv && o->kind != OP_RNR_SEND)
        post_recv(peer, 1000 + seq);
    r.t_post = now_s();
    if (ibv_post_send(me->qp, &wr, &bad))
        die("ibv_post_send %s (%s): %s", r.op, me->role, strerror(errno));
    pd->r = r;
    pd->needs_recv = needs_recv;
}

static void finish_op(struct conn *c, const struct opspec *o, struct pending *pd)
{
    struct side *me = &c->s[o->from], *peer = &c->s[!o->from];
    struct result *r = &pd->r;
    bool got;
    enum ibv_wc_status st = wait_wc(me, 30.0, &got, NULL);
    r->t_done = now_s();
    r->status = got ? ibv_wc_status_str(st) : "timeout";
    if (pd->needs_recv) {
        struct ibv_wc wc;
        enum ibv_wc_status pst = wait_wc(peer, got && st == IBV_WC_SUCCESS ? 10.0 : 0.5, &got, &wc);
        r->peer_status = got ? ibv_wc_status_str(pst) : "none";
        if (o->kind == OP_SEND_INV && got) {
            /* rxe (kernel 6.1, rdma-core 44) hands the kernel's
             * IB_WC_WITH_INVALIDATE (1 << 2) through to user space, where
             * that bit is IBV_WC_IP_CSUM_OK; IBV_WC_WITH_INV is 1 << 3 */
            r->peer_wc_flags = wc.wc_flags;
            r->peer_invalidated = (wc.wc_flags & IBV_WC_WITH_INV) ||
                                  ((wc.wc_flags & (1u << 2)) && wc.invalidated_rkey == r->inv_rkey);
            r->peer_inv_rkey = wc.invalidated_rkey;
        }
    }
    results = realloc(results, (nresults + 1) * sizeof *results);
    if (!results)
        die("out of memory");
    results[nresults++] = *r;
    fprintf(stderr, "qpgen: qp %d %s %s size %zu: %s%s%s%s\n", r->qp, me->role, r->op, o->size, r->status,
            r->peer_status ? ", peer receive " : "", r->peer_status ? r->peer_status : "",
            r->peer_invalidated == 1 ? " with invalidate" : "");
}

/* one operation on every QP: post them all, then collect the completions */
static void run_op(const struct opspec *o, unsigned seq, int rnr_delay_ms)
{
    struct pending *pd = calloc((size_t)nconns, sizeof *pd);
    if (!pd)
        die("out of memory");
    struct conn *cs = conns + gen * nconns;
    for (int i = 0; i < nconns; i++)
        post_op(&cs[i], gen * nconns + i, o, seq, &pd[i]);
    if (o->kind == OP_RNR_SEND) {
        usleep((useconds_t)rnr_delay_ms * 1000);
        for (int i = 0; i < nconns; i++) {
            pd[i].r.rnr_delay_ms = rnr_delay_ms;
            post_recv(&cs[i].s[!o->from], 1000 + seq);
        }
    }
    for (int i = 0; i < nconns; i++)
        finish_op(&cs[i], o, &pd[i]);
    free(pd);
}

static const char *mtu_str(enum ibv_mtu m)
{
    switch (m) {
    case IBV_MTU_256: return "256";
    case IBV_MTU_512: return "512";
    case IBV_MTU_1024: return "1024";
    case IBV_MTU_2048: return "2048";
    case IBV_MTU_4096: return "4096";
    }
    return "0";
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static void write_endpoint(FILE *f, struct side *s, const char *addr)
{
    char gid[INET6_ADDRSTRLEN];
    inet_ntop(AF_INET6, s->gid.raw, gid, sizeof gid);
    fprintf(f, "{\"device\": ");
    json_str(f, s->devname);
    fprintf(f, ", \"addr\": ");
    json_str(f, addr);
    fprintf(f, ", \"gid_index\": %d, \"gid\": \"%s\", \"qpn\": %u, \"dest_qpn\": %u, "
            "\"starting_psn\": %u, \"expected_rq_psn\": %u, \"rkey\": %u, \"buffer_bytes\": %zu",
            s->gid_index, gid, s->qp ? s->qp->qp_num : s->kept_qpn, s->dest_qpn, s->start_psn, s->rq_psn,
            s->mr ? s->mr->rkey : s->kept_rkey, s->buflen);
    if (transport == TR_UD)
        fprintf(f, ", \"qkey\": %u", UD_QKEY);
    fputc('}', f);
}

static void write_manifest(FILE *f, int argc, char **argv, const char *saddr, const char *caddr, int port)
{
    fprintf(f, "{\n  \"generator\": \"qpgen\",\n  \"command\": [");
    for (int i = 0; i < argc; i++) {
        if (i)
            fputs(", ", f);
        json_str(f, argv[i]);
    }
    fprintf(f, "],\n  \"transport\": \"%s\",\n  \"connected_by\": \"%s\",\n", tr_names[transport],
            transport == TR_RC ? "rdma_cm" : "out-of-band");
    if (transport == TR_RC)
        fprintf(f, "  \"cm_port\": %d,\n", port);
    fprintf(f, "  \"path_mtu\": %s,\n  \"nqps\": %d,\n  \"generations\": %d,\n", mtu_str(conns[0].s[0].mtu),
            nconns, gen + 1);
    /* "endpoints": the first QP pair (as before -q existed) */
    fprintf(f, "  \"endpoints\": {\n    \"client\": ");
    write_endpoint(f, &conns[0].s[0], caddr);
    fprintf(f, ",\n    \"server\": ");
    write_endpoint(f, &conns[0].s[1], saddr);
    fprintf(f, "\n  },\n  \"qps\": [\n");
    int nall = (gen + 1) * nconns;
    for (int i = 0; i < nall; i++) {
        fprintf(f, "    {\"qp\": %d, \"generation\": %d, \"transport\": \"%s\",\n     \"client\": ", i,
                i / nconns, tr_names[transport]);
        write_endpoint(f, &conns[i].s[0], caddr);
        fprintf(f, ",\n     \"server\": ");
        write_endpoint(f, &conns[i].s[1], saddr);
        fprintf(f, "}%s\n", i + 1 < nall ? "," : "");
    }
    fprintf(f, "  ],\n  \"ops\": [\n");
    for (size_t i = 0; i < nresults; i++) {
        struct result *r = &results[i];
        fprintf(f, "    {\"seq\": %u, \"qp\": %d, \"op\": \"%s\", \"from\": \"%s\", \"size\": %zu, \"status\": ",
                r->seq, r->qp, r->op, r->from, r->size);
        json_str(f, r->status);
        if (r->peer_status) {
            fprintf(f, ", \"peer_receive_status\": ");
            json_str(f, r->peer_status);
        }
        if (r->imm)
            fprintf(f, ", \"imm\": %u", r->imm);
        if (!strcmp(r->op, "SEND_INV")) {
            fprintf(f, ", \"invalidate_rkey\": %u", r->inv_rkey);
            if (r->peer_invalidated >= 0)
                fprintf(f, ", \"peer_with_invalidate\": %s, \"peer_invalidated_rkey\": %u, "
                        "\"peer_wc_flags\": %u", r->peer_invalidated ? "true" : "false",
                        r->peer_inv_rkey, r->peer_wc_flags);
        }
        if (r->rnr_delay_ms)
            fprintf(f, ", \"receive_posted_after_ms\": %d", r->rnr_delay_ms);
        fprintf(f, ", \"t_post\": %.6f, \"t_done\": %.6f}%s\n", r->t_post, r->t_done,
                i + 1 < nresults ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
}

static void usage(void)
{
    fprintf(stderr,
            "usage: qpgen [-s SERVER_ADDR] [-c CLIENT_ADDR] [-p PORT] [-o MANIFEST] [-t RC|UC|UD]\n"
            "             [-q NQPS] [-k GENERATIONS] [-r RNR_DELAY_MS] OP...\n"
            "  OP: [client:|server:]NAME[:SIZE][xCOUNT], NAME one of SEND SEND_IMM WRITE WRITE_IMM\n"
            "      READ CMP_SWAP FETCH_ADD SEND_INV RNR_SEND BAD_RKEY_WRITE BAD_RKEY_READ\n");
    exit(2);
}

static void set_ack_timeout(struct rdma_cm_id *id)
{
    uint8_t t = 14;
    if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &t, sizeof t))
        fprintf(stderr, "qpgen: warning: cannot set the ACK timeout: %s\n", strerror(errno));
}

static void cm_connect_all(struct rdma_event_channel *ec, const char *saddr, const char *caddr,
                           int port, size_t buflen)
{
    struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    struct sockaddr_in cin = { .sin_family = AF_INET };
    if (inet_pton(AF_INET, saddr, &sin.sin_addr) != 1 || inet_pton(AF_INET, caddr, &cin.sin_addr) != 1)
        die("addresses must be IPv4");
    if (!listen_id) {
        if (rdma_create_id(ec, &listen_id, NULL, RDMA_PS_TCP))
            die("rdma_create_id: %s", strerror(errno));
        if (rdma_bind_addr(listen_id, (struct sockaddr *)&sin))
            die("rdma_bind_addr %s: %s", saddr, strerror(errno));
        if (rdma_listen(listen_id, nconns))
            die("rdma_listen: %s", strerror(errno));
    }
    for (int i = gen * nconns; i < (gen + 1) * nconns; i++) {
        struct rdma_cm_id *cli_id;
        if (rdma_create_id(ec, &cli_id, NULL, RDMA_PS_TCP))
            die("rdma_create_id: %s", strerror(errno));
        if (rdma_resolve_addr(cli_id, (struct sockaddr *)&cin, (struct sockaddr *)&sin, 5000))
            die("rdma_resolve_addr: %s", strerror(errno));
        struct rdma_cm_event *ev = expect_event(ec, RDMA_CM_EVENT_ADDR_RESOLVED);
        rdma_ack_cm_event(ev);
        if (rdma_resolve_route(cli_id, 5000))
            die("rdma_resolve_route: %s", strerror(errno));
        ev = expect_event(ec, RDMA_CM_EVENT_ROUTE_RESOLVED);
        rdma_ack_cm_event(ev);
        setup_cm_side(&conns[i].s[0], cli_id, buflen, 'c');
        set_ack_timeout(cli_id);
        struct rdma_conn_param cp = { .responder_resources = 4, .initiator_depth = 4,
                                      .retry_count = 7, .rnr_retry_count = 7 };
        if (rdma_connect(cli_id, &cp))
            die("rdma_connect: %s", strerror(errno));
        ev = expect_event(ec, RDMA_CM_EVENT_CONNECT_REQUEST);
        struct rdma_cm_id *srv_id = ev->id;
        rdma_ack_cm_event(ev);
        setup_cm_side(&conns[i].s[1], srv_id, buflen, 's');
        set_ack_timeout(srv_id);
        if (rdma_accept(srv_id, &cp))
            die("rdma_accept: %s", strerror(errno));
        for (int established = 0; established < 2;) {
            ev = expect_event(ec, RDMA_CM_EVENT_ESTABLISHED);
            rdma_ack_cm_event(ev);
            established++;
        }
        /* RNR NAK timer ~41 ms (encoding 24) on both responders, so an
         * RNR_SEND gives a few RNR NAKs before the delayed receive is posted */
        for (int k = 0; k < 2; k++) {
            struct ibv_qp_attr a = { .min_rnr_timer = 24 };
            if (ibv_modify_qp(conns[i].s[k].qp, &a, IBV_QP_MIN_RNR_TIMER))
                fprintf(stderr, "qpgen: warning: cannot set min_rnr_timer on %s\n", conns[i].s[k].role);
        }
        query_side(&conns[i].s[0]);
        query_side(&conns[i].s[1]);
    }
}

static void cm_disconnect_all(struct rdma_event_channel *ec)
{
    /* DREQ from each client; the server answers with DREP when it sees the
     * disconnect, so the capture has a clean CM teardown */
    struct conn *cs = conns + gen * nconns;
    for (int i = 0; i < nconns; i++)
        rdma_disconnect(cs[i].s[0].id);
    for (int disconnected = 0; disconnected < 2 * nconns;) {
        struct pollfd pfd = { .fd = ec->fd, .events = POLLIN };
        struct rdma_cm_event *ev;
        if (poll(&pfd, 1, 5000) <= 0)
            break;
        if (rdma_get_cm_event(ec, &ev))
            break;
        if (ev->event == RDMA_CM_EVENT_DISCONNECTED) {
            for (int i = 0; i < nconns; i++)
                if (ev->id == cs[i].s[1].id)
                    rdma_disconnect(ev->id);
            disconnected++;
        }
        rdma_ack_cm_event(ev);
    }
}

int main(int argc, char **argv)
{
    const char *saddr = "10.0.0.1", *caddr = "10.0.0.2", *manifest = NULL;
    int port = 7471, rnr_delay = 100, c;
    clock_gettime(CLOCK_MONOTONIC, &t_zero);
    srand48((long)getpid() ^ (long)time(NULL));
    while ((c = getopt(argc, argv, "s:c:p:o:r:t:q:k:h")) != -1) {
        switch (c) {
        case 's': saddr = optarg; break;
        case 'c': caddr = optarg; break;
        case 'p': port = atoi(optarg); break;
        case 'o': manifest = optarg; break;
        case 'r': rnr_delay = atoi(optarg); break;
        case 't':
            if (!strcmp(optarg, "RC")) transport = TR_RC;
            else if (!strcmp(optarg, "UC")) transport = TR_UC;
            else if (!strcmp(optarg, "UD")) transport = TR_UD;
            else usage();
            break;
        case 'q':
            nconns = atoi(optarg);
            if (nconns < 1 || nconns > 64)
                usage();
            break;
        case 'k':
            ngen = atoi(optarg);
            if (ngen < 1 || ngen > 64)
                usage();
            break;
        default: usage();
        }
    }
    int nops = argc - optind;
    if (nops <= 0)
        usage();
    struct opspec *ops = calloc((size_t)nops, sizeof *ops);
    size_t maxsize = 64;
    for (int i = 0; i < nops; i++) {
        if (!parse_op(argv[optind + i], &ops[i]))
            die("bad operation '%s'", argv[optind + i]);
        if (ops[i].size > maxsize)
            maxsize = ops[i].size;
        if (ops[i].kind == OP_SEND_INV)
            need_mw = true;
    }
    size_t buflen = (maxsize + GRH_LEN + 4095) & ~(size_t)4095;
    if (ngen > 1 && transport != TR_RC)
        die("-k (new QPs over RDMA CM) is for RC only");
    conns = calloc((size_t)(nconns * ngen), sizeof *conns);
    if (!conns)
        die("out of memory");
    for (int i = 0; i < nconns * ngen; i++) {
        conns[i].s[0].role = "client";
        conns[i].s[1].role = "server";
    }

    struct rdma_event_channel *ec = NULL;
    if (transport == TR_RC) {
        ec = rdma_create_event_channel();
        if (!ec)
            die("rdma_create_event_channel: %s", strerror(errno));
        cm_connect_all(ec, saddr, caddr, port, buflen);
    } else {
        int gi[2];
        union ibv_gid gid[2];
        struct ibv_context *ctx[2] = { open_by_addr(caddr, &gi[0], &gid[0]),
                                       open_by_addr(saddr, &gi[1], &gid[1]) };
        for (int i = 0; i < nconns; i++)
            for (int k = 0; k < 2; k++)
                oob_create(&conns[i].s[k], ctx[k], gi[k], gid[k], buflen, k ? 's' : 'c');
        for (int i = 0; i < nconns; i++) {
            oob_connect(&conns[i].s[0], &conns[i].s[1]);
            oob_connect(&conns[i].s[1], &conns[i].s[0]);
        }
    }
    for (int i = 0; i < nconns; i++)
        fprintf(stderr, "qpgen: %s qp %d: %s qpn %u psn %u <-> %s qpn %u psn %u, mtu %s\n",
                tr_names[transport], i,
                ibv_get_device_name(conns[i].s[0].ctx->device), conns[i].s[0].qp->qp_num,
                conns[i].s[0].start_psn,
                ibv_get_device_name(conns[i].s[1].ctx->device), conns[i].s[1].qp->qp_num,
                conns[i].s[1].start_psn, mtu_str(conns[i].s[0].mtu));

    unsigned seq = 0;
    int failed = 0;
next_generation:
    for (int i = 0; i < nops; i++) {
        for (unsigned k = 0; k < ops[i].count; k++) {
            size_t first = nresults;
            run_op(&ops[i], seq++, rnr_delay);
            bool expected_error = ops[i].kind == OP_BAD_WRITE || ops[i].kind == OP_BAD_READ;
            for (size_t j = first; j < nresults; j++) {
                struct result *r = &results[j];
                if (expected_error)
                    continue;
                if (strcmp(r->status, "success") != 0 ||
                    (r->peer_status && strcmp(r->peer_status, "success") != 0) ||
                    r->peer_invalidated == 0)
                    failed++;
            }
            if (expected_error)
                goto done; /* QPs are in the error state now */
        }
    }
    if (gen + 1 < ngen) {
        /* tear this generation down and connect new QPs for the next */
        cm_disconnect_all(ec);
        for (int i = gen * nconns; i < (gen + 1) * nconns; i++)
            for (int k = 0; k < 2; k++)
                destroy_cm_side(&conns[i].s[k]);
        gen++;
        cm_connect_all(ec, saddr, caddr, port, buflen);
        for (int i = gen * nconns; i < (gen + 1) * nconns; i++)
            fprintf(stderr, "qpgen: generation %d RC qp %d: qpn %u psn %u <-> qpn %u psn %u\n", gen, i,
                    conns[i].s[0].qp->qp_num, conns[i].s[0].start_psn,
                    conns[i].s[1].qp->qp_num, conns[i].s[1].start_psn);
        goto next_generation;
    }
done:
    if (manifest) {
        FILE *f = strcmp(manifest, "-") ? fopen(manifest, "w") : stdout;
        if (!f)
            die("cannot write %s: %s", manifest, strerror(errno));
        write_manifest(f, argc, argv, saddr, caddr, port);
        if (f != stdout)
            fclose(f);
    }
    if (ec)
        cm_disconnect_all(ec);
    return failed ? 1 : 0;
}
