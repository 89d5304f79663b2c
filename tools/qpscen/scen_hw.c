/* qpscen: go-back-N at hardware timing (issue 29).  A NIC at 100-400
 * Gbit/s sends a packet every 0.3 us, a one-way delay is 2 us, a NIC
 * answers 0.2 us after a packet and resends 0.5 us after a NAK: a whole
 * message is on the wire before the NAK that asks for it again comes back,
 * so at a tap at the responder the originals still in flight arrive AFTER
 * the NAK the responder sent (and are dropped by it), then come the
 * resends, byte for byte the same (the IPv4 ID is fixed: DF is set,
 * RFC 6864), a few microseconds later.
 *
 * Each scenario is written packet by packet on a timeline in nanoseconds
 * (the pcap stamps keep microseconds) that says where the tap sits and
 * what was lost before or after it; every packet carries the truth of what
 * its sender did in its flags (F_RETRANS: the sender had sent this PSN
 * before, whether or not the capture saw it; F_DUP: the capture saw one
 * sending twice; F_GBN + trigger: the first packet of a go-back-N).  The
 * conversations are `extra`: read_retries, psn_gaps (PSNs the tap never
 * saw), response_gaps, out_of_order, episode_triggers ... are checked. */
#include "qpscen.h"

#include <string.h>

#define VA_W 0x7f4000000000ull
#define VA_R 0x7f5000000000ull
#define VA_R2 0x7f5100000000ull
#define RKEY_INV 0x5678u
#define IPID_HW 0xffff   /* the NIC's fixed IPv4 ID: a resend is its original byte for byte */

#define SP 300           /* ns between two packets of one sender */
#define OWD 2000         /* ns one way */
#define TURN 200         /* ns from a packet to the answer it draws */
#define RESEND 500       /* ns from a NAK's arrival to the resend */

static const path_t H4 = { .link = LT_ETH, .net = NET_IP4, .dscp = 26, .ecn = 2 };
static const path_t H4V = { .link = LT_ETH, .net = NET_IP4, .nvlan = 1, .vid = { 100, 0 },
                            .dscp = 26, .ecn = 2 };
static const path_t H6 = { .link = LT_ETH, .net = NET_IP6, .dscp = 26, .ecn = 2 };

typedef struct {
    uint64_t t, seq;
    pkt_t p;
    int dir;
    unsigned fl;
    uint32_t miss;
} hq_t;

/* One RC conversation, A (requester) -> B, MTU 1024. */
typedef struct {
    ctx_t *c;
    conv_t *cv;
    ep_t A, B;
    const path_t *path;
    uint8_t pcp;      /* 802.1Q priority of every frame (tagged paths) */
    uint32_t snap;    /* snap length of every frame (0: whole) */
    GArray *q;        /* hq_t, written in time order by hw_flush() */
} hw_t;

static void hw_init(ctx_t *c, hw_t *l, const path_t *path, int v6)
{
    memset(l, 0, sizeof *l);
    l->c = c;
    l->path = path;
    if (v6) {
        ep_v6(&l->A, "fd00::1", 0x11);
        ep_v6(&l->B, "fd00::2", 0x12);
    } else {
        ep_v4(&l->A, 10, 0, 0, 1, 0x11);
        ep_v4(&l->B, 10, 0, 0, 2, 0x12);
    }
    l->cv = conv_new(c, "RC", "traffic", &l->A, &l->B);
    l->cv->extra = 1;
    l->q = g_array_new(FALSE, TRUE, sizeof(hq_t));
}

/* Queue packet p of direction dir, captured at t ns after the start. */
static void put(hw_t *l, uint64_t t, const pkt_t *p, int dir, unsigned fl, uint32_t miss)
{
    hq_t e = { t, l->q->len, *p, dir, fl, miss };
    g_array_append_val(l->q, e);
}

static gint hq_cmp(gconstpointer a, gconstpointer b)
{
    const hq_t *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Write the queue in time order (equal times: in the order queued).  emit()
 * counts a capture copy of a NAK as no other NAK. */
static void hw_flush(hw_t *l)
{
    ctx_t *c = l->c;
    uint64_t base = c->t; /* a whole microsecond: the stamps cut where planned */
    g_array_sort(l->q, hq_cmp);
    for (guint i = 0; i < l->q->len; i++) {
        hq_t *e = &g_array_index(l->q, hq_t, i);
        c->x_missing = e->miss;
        emit(c, base + e->t, &e->p, l->cv, e->dir, e->fl, l->snap);
    }
    g_array_free(l->q, TRUE);
    l->q = NULL;
}

static pkt_t rq(hw_t *l, uint8_t opc, uint32_t psn, uint32_t paylen, int ackreq, uint64_t va,
                uint32_t len)
{
    pkt_t p;
    pkt_init(&p);
    pkt_addr(&p, l->path, &l->A, &l->B);
    p.pcp = l->pcp;
    p.ipid = IPID_HW;
    p.opcode = opc;
    p.dqp = l->B.qpn;
    p.psn = psn & PSN_MASK;
    p.ackreq = (uint8_t)ackreq;
    p.paylen = paylen;
    p.payseed = psn;
    p.reth_va = va;
    p.reth_rkey = 0x1234;
    p.reth_len = len;
    p.ieth_rkey = RKEY_INV;
    return p;
}

static pkt_t rs(hw_t *l, uint8_t opc, uint32_t psn, uint32_t paylen, uint8_t syn, uint32_t msn)
{
    pkt_t p;
    pkt_init(&p);
    pkt_addr(&p, l->path, &l->B, &l->A);
    p.pcp = l->pcp;
    p.ipid = IPID_HW;
    p.opcode = opc;
    p.dqp = l->A.qpn;
    p.psn = psn & PSN_MASK;
    p.paylen = paylen;
    p.payseed = psn ^ 0x55;
    p.aeth_syn = syn;
    p.aeth_msn = msn;
    return p;
}

static void req(hw_t *l, uint64_t t, uint8_t opc, uint32_t psn, uint32_t paylen, int ackreq,
                uint64_t va, uint32_t len, unsigned fl, uint32_t miss)
{
    pkt_t p = rq(l, opc, psn, paylen, ackreq, va, len);
    put(l, t, &p, 0, fl, miss);
}

static void rsp(hw_t *l, uint64_t t, uint8_t opc, uint32_t psn, uint32_t paylen, uint8_t syn,
                uint32_t msn, unsigned fl, uint32_t miss)
{
    pkt_t p = rs(l, opc, psn, paylen, syn, msn);
    put(l, t, &p, 1, fl, miss);
}

#define ACK(l, t, psn, msn) rsp(l, t, OP_ACK, psn, 0, 0x1F, msn, 0, 0)
#define NAK(l, t, psn, msn) rsp(l, t, OP_ACK, psn, 0, 0x60, msn, 0, 0) /* PSN sequence error */

/* READ response k of n (FIRST/MIDDLE/LAST, ONLY) */
static uint8_t resp_opc(uint32_t k, uint32_t n)
{
    return n == 1 ? OP_READ_RESP_ONLY : k == 0 ? OP_READ_RESP_FIRST
         : k == n - 1 ? OP_READ_RESP_LAST : OP_READ_RESP_MIDDLE;
}

static void resp(hw_t *l, uint64_t t, uint32_t psn, uint32_t k, uint32_t n, uint32_t msn,
                 unsigned fl, uint32_t miss)
{
    uint8_t o = resp_opc(k, n);
    rsp(l, t, o, psn, 1024, o == OP_READ_RESP_MIDDLE ? 0 : 0x1F, msn, fl, miss);
}

/* ---- case 1: a 5-packet message whose FIRST is lost before a tap at the
 * responder, and its variants ---- */

enum { K_WRITE, K_SEND_INV };
#define N5 5u
#define LEN5 4600u /* 4 x 1024 + 504 */

typedef struct {
    const path_t *path;
    int v6, kind;
    uint8_t pcp;
    uint32_t snap;
    uint32_t P;        /* the lost FIRST */
    uint64_t T;        /* ns: when P would have reached the tap */
    int mid;           /* the capture starts after the NAK */
    unsigned dup_k;    /* 1 + the resent packet a mirror copies 0.3 us later (0: none) */
} first_lost_t;

static void msg5(hw_t *l, const first_lost_t *v, uint64_t t, unsigned k, unsigned fl,
                 uint32_t miss)
{
    uint8_t o;
    if (v->kind == K_WRITE)
        o = k == 0 ? OP_WRITE_FIRST : k == N5 - 1 ? OP_WRITE_LAST : OP_WRITE_MIDDLE;
    else
        o = k == 0 ? OP_SEND_FIRST : k == N5 - 1 ? OP_SEND_LAST_INV : OP_SEND_MIDDLE;
    req(l, t, o, psn_add(v->P, (int32_t)k), k < N5 - 1 ? 1024 : LEN5 - 4 * 1024, k == N5 - 1,
        VA_W, LEN5, fl, miss);
}

/* A WRITE ONLY 1024 at P-1 and its ACK; then the 5-packet message P..P+4,
 * P lost between the requester and the tap.  P+1 reaches the responder at
 * T + SP: out of sequence, it sends a NAK for P 0.2 us later; P+2..P+4
 * arrive after the NAK and are dropped.  The NAK reaches the requester
 * 2 us later, it goes back to P 0.5 us after that: the resends reach the
 * tap 5 us after P would have; the LAST draws the ACK. */
static void first_lost(ctx_t *c, const first_lost_t *v)
{
    hw_t l;
    uint32_t P = v->P;
    uint64_t T = v->T, nak = T + SP + TURN, R = nak + OWD + RESEND + OWD;
    hw_init(c, &l, v->path, v->v6);
    l.pcp = v->pcp;
    l.snap = v->snap;
    if (!v->mid) {
        req(&l, 2000, OP_WRITE_ONLY, psn_add(P, -1), 1024, 1, VA_W - 0x10000, 1024, 0, 0);
        ACK(&l, 2000 + TURN, psn_add(P, -1), 1);
        msg5(&l, v, T + SP, 1, 0, 1);  /* P lost before the tap */
        NAK(&l, nak, P, 1);
    }
    for (unsigned k = 2; k < N5; k++) /* in flight: they arrive after the NAK */
        msg5(&l, v, T + k * SP, k, 0, 0);
    for (unsigned k = 0; k < N5; k++)
        msg5(&l, v, R + k * SP, k, F_RETRANS | (k ? 0 : F_GBN | (v->mid ? F_TRS : F_TNAK)), 0);
    if (v->dup_k) /* queued after the next resend: written after it, at the same time */
        msg5(&l, v, R + v->dup_k * SP, v->dup_k - 1, F_DUP, 0);
    ACK(&l, R + (N5 - 1) * SP + TURN, psn_add(P, N5 - 1), 2);
    hw_flush(&l);
}

/* P+1 reaches the tap at x.85 us, the NAK at (x+1).05 us: the NAK has a
 * microsecond of its own after P+1 (hw_nak_same_us: the same one). */
#define T_BASE 10550
#define T_SAME 10250

void s_hw_write_first_lost(ctx_t *c)
{
    first_lost_t v = { .path = &H4, .kind = K_WRITE, .P = 0x0A1000, .T = T_BASE };
    first_lost(c, &v);
}

void s_hw_send_inv(ctx_t *c)
{
    first_lost_t v = { .path = &H4, .kind = K_SEND_INV, .P = 0x0A2000, .T = T_BASE };
    first_lost(c, &v);
}

void s_hw_vlan(ctx_t *c)
{
    first_lost_t v = { .path = &H4V, .kind = K_WRITE, .pcp = 3, .P = 0x0A3000, .T = T_BASE };
    first_lost(c, &v);
}

void s_hw_ipv6(ctx_t *c)
{
    first_lost_t v = { .path = &H6, .v6 = 1, .kind = K_WRITE, .P = 0x0A4000, .T = T_BASE };
    first_lost(c, &v);
}

void s_hw_snaplen(ctx_t *c)
{
    first_lost_t v = { .path = &H4, .kind = K_WRITE, .snap = 128, .P = 0x0A5000, .T = T_BASE };
    first_lost(c, &v);
}

void s_hw_psn_wrap(ctx_t *c)
{
    first_lost_t v = { .path = &H4, .kind = K_WRITE, .P = 0xFFFFFE, .T = T_BASE };
    first_lost(c, &v);
}

void s_hw_nak_same_us(ctx_t *c)
{
    first_lost_t v = { .path = &H4, .kind = K_WRITE, .P = 0x0A6000, .T = T_SAME };
    first_lost(c, &v);
}

void s_hw_mid_resend(ctx_t *c)
{
    first_lost_t v = { .path = &H4, .kind = K_WRITE, .P = 0x0A7000, .T = T_BASE, .mid = 1 };
    first_lost(c, &v);
}

/* case 7: a mirror copies the resent P+2 0.3 us after it */
void s_hw_copy_in_gbn(ctx_t *c)
{
    first_lost_t v = { .path = &H4, .kind = K_WRITE, .P = 0x0A8000, .T = T_BASE, .dup_k = 3 };
    first_lost(c, &v);
}

/* ACK coalescing: WRITE ONLY 1024 x16, AckReq on each; the responder ACKs
 * every 4th packet it takes (and the last after 1 us idle).  P+11 is lost
 * before the tap (at the responder): NAK for P+11 after P+12, P+13..P+15
 * arrive after it; the requester resends P+11..P+15. */
void s_hw_coalesced(ctx_t *c)
{
    hw_t l;
    uint32_t P = 0x0A9000;
    uint64_t T = 2250, nak = T + 12 * SP + TURN, R = nak + OWD + RESEND + OWD;
    hw_init(c, &l, &H4, 0);
    for (uint32_t k = 0; k < 16; k++) {
        if (k == 11)
            continue; /* lost before the tap */
        req(&l, T + k * SP, OP_WRITE_ONLY, P + k, 1024, 1, VA_W + k * 0x10000ull, 1024, 0,
            k == 12);
        if (k == 3 || k == 7)
            ACK(&l, T + k * SP + TURN, P + k, k + 1);
    }
    NAK(&l, nak, P + 11, 11);
    for (uint32_t k = 11; k < 16; k++)
        req(&l, R + (k - 11) * SP, OP_WRITE_ONLY, P + k, 1024, 1, VA_W + k * 0x10000ull, 1024,
            k == 11 ? F_RETRANS | F_COUNTMSG | F_GBN | F_TNAK : F_RETRANS, 0);
    ACK(&l, R + 3 * SP + TURN, P + 14, 15);
    ACK(&l, R + 4 * SP + 1000, P + 15, 16);
    hw_flush(&l);
}

/* ---- case 2: tap at the requester.  READ 8192 (P..P+7); response P+2
 * lost before the tap; 0.1 us after P+3 the requester re-issues the READ
 * from P+2 while P+4..P+7 are still arriving; the responder restarts its
 * response stream at P+2 (FIRST .. LAST of the 6144-byte re-issue). */
void s_hw_read_reissue_resp(ctx_t *c)
{
    hw_t l;
    uint32_t P = 0x0AA000;
    hw_init(c, &l, &H4, 0);
    req(&l, 1000, OP_WRITE_FIRST, P - 2, 1024, 0, VA_W, 2048, 0, 0);
    req(&l, 1000 + SP, OP_WRITE_LAST, P - 1, 1024, 1, 0, 0, 0, 0);
    ACK(&l, 1000 + SP + 2 * OWD + TURN, P - 1, 1);
    req(&l, 10000, OP_READ_REQ, P, 0, 0, VA_R, 8192, 0, 0);
    uint64_t r0 = 10000 + OWD + 300 + OWD; /* the first response at the tap */
    for (uint32_t k = 0; k < 8; k++)
        if (k != 2)
            resp(&l, r0 + k * 200, P + k, k, 8, 2, 0, k == 3);
    uint64_t ri = r0 + 3 * 200 + 100;
    req(&l, ri, OP_READ_REQ, P + 2, 0, 0, VA_R + 2048, 6144,
        F_RETRANS | F_GBN | F_TRR | F_RREISSUE, 0);
    for (uint32_t k = 0; k < 6; k++)
        resp(&l, ri + OWD + 300 + OWD + k * 200, P + 2 + k, k, 6, 2, F_RETRANS, 0);
    req(&l, 21000, OP_WRITE_ONLY, P + 8, 1024, 1, VA_W + 0x10000, 1024, 0, 0);
    ACK(&l, 21000 + 2 * OWD + TURN, P + 8, 3);
    hw_flush(&l);
}

/* ---- case 3: a second go-back-N inside an unfinished one ---- */

/* Tap at the responder.  WRITE 8192 (P..P+7), P lost before the tap: NAK
 * for P after P+1, P+2..P+7 arrive after it.  The resend of P+3 is lost
 * again before the tap: a second NAK (for P+3) after the resent P+4, the
 * resent P+5..P+7 arrive after it; the requester goes back to P+3.  (The
 * PSN P+3 was captured, as an original: one PSN gap, P.) */
void s_hw_nested_nak(ctx_t *c)
{
    hw_t l;
    uint32_t P = 0x0AB000;
    uint64_t T = T_BASE, nak = T + SP + TURN, R = nak + OWD + RESEND + OWD;
    uint64_t nak2 = R + 4 * SP + TURN, R2 = nak2 + OWD + RESEND + OWD;
    hw_init(c, &l, &H4, 0);
    req(&l, 2000, OP_WRITE_ONLY, P - 1, 1024, 1, VA_W - 0x10000, 1024, 0, 0);
    ACK(&l, 2000 + TURN, P - 1, 1);
#define W8(t, k, fl, miss) req(&l, t, (k) == 0 ? OP_WRITE_FIRST : (k) == 7 ? OP_WRITE_LAST \
        : OP_WRITE_MIDDLE, P + (k), 1024, (k) == 7, VA_W, 8192, fl, miss)
    for (uint32_t k = 1; k < 8; k++)
        W8(T + k * SP, k, 0, k == 1);
    NAK(&l, nak, P, 1);
    for (uint32_t k = 0; k < 8; k++)
        if (k != 3) /* lost again before the tap */
            W8(R + k * SP, k, k ? F_RETRANS : F_RETRANS | F_GBN | F_TNAK, 0);
    NAK(&l, nak2, P + 3, 1);
    for (uint32_t k = 3; k < 8; k++)
        W8(R2 + (k - 3) * SP, k, k == 3 ? F_RETRANS | F_GBN | F_TNAK : F_RETRANS, 0);
#undef W8
    ACK(&l, R2 + 4 * SP + TURN, P + 7, 2);
    hw_flush(&l);
}

/* Tap at the responder.  The 5-packet WRITE of hw_write_first_lost; in its
 * go-back-N the resent LAST (P+4) is lost again before the tap: no NAK
 * (nothing follows it), no ACK.  The requester's local ACK timeout (2^8 x
 * 4.096 us after its last packet) sends P..P+4 again. */
void s_hw_nested_timeout(ctx_t *c)
{
    hw_t l;
    first_lost_t v = { .path = &H4, .kind = K_WRITE, .P = 0x0AC000, .T = T_BASE };
    uint32_t P = v.P;
    uint64_t T = v.T, nak = T + SP + TURN, R = nak + OWD + RESEND + OWD;
    uint64_t R2 = R + 4 * SP + 1048576; /* at the tap: 2 us after the timeout fires */
    hw_init(c, &l, v.path, 0);
    req(&l, 2000, OP_WRITE_ONLY, P - 1, 1024, 1, VA_W - 0x10000, 1024, 0, 0);
    ACK(&l, 2000 + TURN, P - 1, 1);
    msg5(&l, &v, T + SP, 1, 0, 1);
    NAK(&l, nak, P, 1);
    for (unsigned k = 2; k < N5; k++)
        msg5(&l, &v, T + k * SP, k, 0, 0);
    for (unsigned k = 0; k < N5 - 1; k++) /* the resent P+4 is lost */
        msg5(&l, &v, R + k * SP, k, k ? F_RETRANS : F_RETRANS | F_GBN | F_TNAK, 0);
    for (unsigned k = 0; k < N5; k++)
        msg5(&l, &v, R2 + k * SP, k, k ? F_RETRANS : F_RETRANS | F_GBN | F_TMO, 0);
    ACK(&l, R2 + (N5 - 1) * SP + TURN, P + 4, 2);
    hw_flush(&l);
}

/* Tap at the requester.  WRITE 2048 (P, P+1), READ 4096 (P+2..P+5), WRITE
 * ONLY P+6 without AckReq.  P+1 is lost after the tap: NAK for P+1, the
 * requester resends P+1, the READ and P+6.  The READ's 2nd response (P+3)
 * is lost before the tap: 0.1 us after P+4 the requester re-issues the
 * READ from P+3, the go-back-N still unfinished (nothing has answered
 * P+6), and resends P+6 after it; P+5 arrives after the re-issue, the
 * restarted responses P+3..P+5 later.  Then WRITE ONLY P+7 and its ACK. */
void s_hw_nested_read(ctx_t *c)
{
    hw_t l;
    uint32_t P = 0x0AD000;
    hw_init(c, &l, &H4, 0);
    req(&l, 1000, OP_WRITE_ONLY, P - 1, 1024, 1, VA_W - 0x10000, 1024, 0, 0);
    ACK(&l, 1000 + 2 * OWD + TURN, P - 1, 1);
    req(&l, 10000, OP_WRITE_FIRST, P, 1024, 0, VA_W, 2048, 0, 0);
    req(&l, 10000 + SP, OP_WRITE_LAST, P + 1, 1024, 1, 0, 0, 0, 0); /* lost after the tap */
    req(&l, 10000 + 2 * SP, OP_READ_REQ, P + 2, 0, 0, VA_R, 4096, 0, 0);
    req(&l, 10000 + 3 * SP, OP_WRITE_ONLY, P + 6, 1024, 0, VA_W + 0x10000, 1024, 0, 0);
    uint64_t nak = 10000 + 2 * SP + OWD + TURN + OWD;         /* after the READ, at the tap */
    NAK(&l, nak, P + 1, 1);
    uint64_t R = nak + RESEND;
    req(&l, R, OP_WRITE_LAST, P + 1, 1024, 1, 0, 0, F_RETRANS | F_GBN | F_TNAK, 0);
    req(&l, R + SP, OP_READ_REQ, P + 2, 0, 0, VA_R, 4096, F_RETRANS, 0);
    req(&l, R + 2 * SP, OP_WRITE_ONLY, P + 6, 1024, 0, VA_W + 0x10000, 1024, F_RETRANS, 0);
    ACK(&l, R + OWD + TURN + OWD, P + 1, 2);
    uint64_t r0 = R + SP + OWD + 300 + OWD; /* the READ's first response at the tap */
    for (uint32_t k = 0; k < 4; k++)
        if (k != 1)
            resp(&l, r0 + k * 200, P + 2 + k, k, 4, 3, 0, k == 2);
    uint64_t ri = r0 + 2 * 200 + 100;
    req(&l, ri, OP_READ_REQ, P + 3, 0, 0, VA_R + 1024, 3072,
        F_RETRANS | F_GBN | F_TRR | F_RREISSUE, 0);
    req(&l, ri + SP, OP_WRITE_ONLY, P + 6, 1024, 0, VA_W + 0x10000, 1024, F_RETRANS, 0);
    for (uint32_t k = 0; k < 3; k++)
        resp(&l, ri + OWD + 300 + OWD + k * 200, P + 3 + k, k, 3, 3, F_RETRANS, 0);
    req(&l, 30000, OP_WRITE_ONLY, P + 7, 1024, 1, VA_W + 0x20000, 1024, 0, 0);
    ACK(&l, 30000 + 2 * OWD + TURN, P + 7, 5);
    hw_flush(&l);
}

/* ---- case 4: SEND 2048 (P, P+1), SEND ONLY P+2, SEND ONLY P+3, all sent
 * before the RNR NAK for P (timer 0x01: 10 us) comes back; the responder
 * drops P+1..P+3.  10 us after the RNR NAK arrives the requester retries
 * from P: P..P+3 (the next two messages too).  At a tap at the responder
 * (hw_rnr_continue) P+1..P+3 arrive after the RNR NAK; at one at the
 * requester (hw_rnr_continue_req) everything it sent is before it. */
static void rnr_continue(ctx_t *c, uint32_t P, int at_resp)
{
    hw_t l;
    static const uint8_t op[4] = { OP_SEND_FIRST, OP_SEND_LAST, OP_SEND_ONLY, OP_SEND_ONLY };
    uint64_t dA = at_resp ? OWD : 0, dB = at_resp ? 0 : OWD; /* host A, host B to the tap */
    uint64_t S = at_resp ? 8850 : 10000;   /* A sends P (at the responder tap at x.85 us) */
    uint64_t R = S + 2 * OWD + TURN + 10000; /* A retries: 10 us after the RNR NAK came */
    hw_init(c, &l, &H4, 0);
    req(&l, 1000 + dA, OP_WRITE_ONLY, P - 1, 1024, 1, VA_W - 0x10000, 1024, 0, 0);
    ACK(&l, 1000 + OWD + TURN + dB, P - 1, 1);
    for (uint32_t k = 0; k < 4; k++)
        req(&l, S + dA + k * SP, op[k], P + k, 1024, k > 0, 0, 0, 0, 0);
    rsp(&l, S + OWD + TURN + dB, OP_ACK, P, 0, 0x20 | 0x01, 1, 0, 0); /* RNR NAK, 0.01 ms */
    for (uint32_t k = 0; k < 4; k++)
        req(&l, R + dA + k * SP, op[k], P + k, 1024, k > 0, 0, 0, F_RETRANS, 0);
    for (uint32_t k = 1; k < 4; k++)
        ACK(&l, R + k * SP + OWD + TURN + dB, P + k, k + 1);
    hw_flush(&l);
}

void s_hw_rnr_continue(ctx_t *c)
{
    rnr_continue(c, 0x0AE000, 1);
}

void s_hw_rnr_continue_req(ctx_t *c)
{
    rnr_continue(c, 0x0B2000, 0);
}

/* ---- case 5: tap at the requester.  READ 4096 (P..P+3) and READ 2048
 * (P+4, P+5) outstanding; response P+1 lost before the tap.  0.1 us after
 * P+2 the requester re-issues the first READ from P+1; the response P+3
 * comes; 0.1 us later the requester resends the second READ (go-back-N:
 * the requests after the re-issued one go again).  One episode. */
void s_hw_read_middle_next(ctx_t *c)
{
    hw_t l;
    uint32_t P = 0x0AF000;
    hw_init(c, &l, &H4, 0);
    req(&l, 1000, OP_WRITE_FIRST, P - 2, 1024, 0, VA_W, 2048, 0, 0);
    req(&l, 1000 + SP, OP_WRITE_LAST, P - 1, 1024, 1, 0, 0, 0, 0);
    ACK(&l, 1000 + SP + 2 * OWD + TURN, P - 1, 1);
    req(&l, 10000, OP_READ_REQ, P, 0, 0, VA_R, 4096, 0, 0);
    req(&l, 10200, OP_READ_REQ, P + 4, 0, 0, VA_R2, 2048, 0, 0);
    uint64_t r0 = 10000 + OWD + 300 + OWD;
    for (uint32_t k = 0; k < 6; k++)
        if (k != 1)
            resp(&l, r0 + k * 200, P + k, k < 4 ? k : k - 4, k < 4 ? 4 : 2, k < 4 ? 2 : 3, 0,
                 k == 2);
    uint64_t ri = r0 + 2 * 200 + 100; /* before P+3 */
    req(&l, ri, OP_READ_REQ, P + 1, 0, 0, VA_R + 1024, 3072,
        F_RETRANS | F_GBN | F_TRR | F_RREISSUE, 0);
    req(&l, ri + 200, OP_READ_REQ, P + 4, 0, 0, VA_R2, 2048, F_RETRANS, 0); /* after P+3 */
    uint64_t s0 = ri + OWD + 300 + OWD;
    for (uint32_t k = 0; k < 5; k++)
        resp(&l, s0 + k * 200, P + 1 + k, k < 3 ? k : k - 3, k < 3 ? 3 : 2, k < 3 ? 2 : 3,
             F_RETRANS, 0);
    req(&l, 21000, OP_WRITE_ONLY, P + 6, 1024, 1, VA_W + 0x10000, 1024, 0, 0);
    ACK(&l, 21000 + 2 * OWD + TURN, P + 6, 4);
    hw_flush(&l);
}

/* ---- case 6: a tap in the middle (1 us from each host).  WRITE 4600
 * (P..P+4), P lost before the tap; the responder's NAK for P passes the
 * tap but the capture drops it; the requester goes back to P: the gap
 * filler comes first, then the resends of P+1..P+4 it saw 4.7 us before. */
void s_hw_fill_resend(ctx_t *c)
{
    hw_t l;
    first_lost_t v = { .path = &H4, .kind = K_WRITE, .P = 0x0B0000 };
    uint32_t P = v.P;
    const uint64_t H = 1000; /* host to tap */
    hw_init(c, &l, v.path, 0);
    req(&l, 1000 + H, OP_WRITE_ONLY, P - 1, 1024, 1, VA_W - 0x10000, 1024, 0, 0);
    ACK(&l, 1000 + 2 * H + TURN + H, P - 1, 1);
    for (unsigned k = 1; k < N5; k++)
        msg5(&l, &v, 10000 + k * SP + H, k, 0, k == 1);
    /* the NAK: sent at 10000 + SP + 2H + TURN, at the tap H later, not captured */
    uint64_t R = 10000 + SP + 2 * H + TURN + 2 * H + RESEND;
    for (unsigned k = 0; k < N5; k++)
        msg5(&l, &v, R + k * SP + H, k, k ? F_RETRANS : F_RETRANS | F_GBN | F_TRS, 0);
    ACK(&l, R + (N5 - 1) * SP + 2 * H + TURN + H, P + 4, 2);
    hw_flush(&l);
}

/* ---- case 7b: the captures of both hosts merged (one file); a packet
 * reaches the other host 2 us after it left.  hw_write_first_lost's
 * traffic: P is lost after host A's capture (seen once), everything else
 * twice; host B's NAK is seen at B 0.2 us after P+1, at A 2 us later; B
 * sees P+2..P+4 after its NAK, A had sent them long before it. */
void s_hw_merged_nak(ctx_t *c)
{
    hw_t l;
    first_lost_t v = { .path = &H4, .kind = K_WRITE, .P = 0x0B1000 };
    uint32_t P = v.P;
    uint64_t S = 10550;                              /* A sends P */
    uint64_t nak = S + SP + OWD + TURN;              /* at B */
    uint64_t R = nak + OWD + RESEND;                 /* A resends P */
    hw_init(c, &l, v.path, 0);
    pkt_t p = rq(&l, OP_WRITE_ONLY, P - 1, 1024, 1, VA_W - 0x10000, 1024);
    put(&l, 2000, &p, 0, 0, 0);
    put(&l, 2000 + OWD, &p, 0, F_DUP, 0);
    p = rs(&l, OP_ACK, P - 1, 0, 0x1F, 1);
    put(&l, 2000 + OWD + TURN, &p, 1, 0, 0);
    put(&l, 2000 + 2 * OWD + TURN, &p, 1, F_DUP, 0);
    for (unsigned k = 0; k < N5; k++) {
        msg5(&l, &v, S + k * SP, k, 0, 0);           /* at A */
        if (k)                                       /* at B (P lost on the way) */
            msg5(&l, &v, S + k * SP + OWD, k, F_DUP, 0);
    }
    p = rs(&l, OP_ACK, P, 0, 0x60, 1);
    put(&l, nak, &p, 1, 0, 0);
    put(&l, nak + OWD, &p, 1, F_DUP, 0);
    for (unsigned k = 0; k < N5; k++) {
        msg5(&l, &v, R + k * SP, k, k ? F_RETRANS : F_RETRANS | F_GBN | F_TNAK, 0);
        msg5(&l, &v, R + k * SP + OWD, k, F_DUP, 0);
    }
    p = rs(&l, OP_ACK, P + 4, 0, 0x1F, 2);
    put(&l, R + 4 * SP + OWD + TURN, &p, 1, 0, 0);
    put(&l, R + 4 * SP + 2 * OWD + TURN, &p, 1, F_DUP, 0);
    hw_flush(&l);
}
