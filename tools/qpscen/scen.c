/* qpscen: scenario definitions. */
#include "qpscen.h"

#include <string.h>

/* ---------- common building blocks ---------- */
static const path_t P_ETH4 = { LT_ETH, NET_IP4, 0, { 0, 0 }, 26, 2 };
static const path_t P_ETH6 = { LT_ETH, NET_IP6, 0, { 0, 0 }, 26, 2 };

#define QPA 0x000011u
#define QPB 0x000012u
#define GUID_A 0x0002c90300a1b2c1ull
#define GUID_B 0x0002c90300a1b2c2ull

static void std_eps(ep_t *a, ep_t *b)
{
    ep_v4(a, 10, 0, 0, 1, QPA);
    ep_v4(b, 10, 0, 0, 2, QPB);
}

static void mk(pkt_t *p, const path_t *path, const ep_t *s, const ep_t *d, uint8_t opc, uint32_t psn)
{
    pkt_init(p);
    pkt_addr(p, path, s, d);
    p->opcode = opc;
    p->dqp = d->qpn;
    p->psn = psn & PSN_MASK;
    p->payseed = psn;
}

/* emit after a gap (ns, with jitter) from the previous frame */
static uint32_t tx(ctx_t *c, conv_t *cv, int dir, pkt_t *p, uint64_t gap, unsigned flags)
{
    c->t += jit(c, gap, gap / 2 + 1);
    return emit(c, c->t, p, cv, dir, flags, 0);
}

static uint32_t tx_snap(ctx_t *c, conv_t *cv, int dir, pkt_t *p, uint64_t gap, uint32_t snap)
{
    c->t += jit(c, gap, gap / 2 + 1);
    return emit(c, c->t, p, cv, dir, 0, snap);
}

/* ACK/NAK from b to a */
static uint32_t ack(ctx_t *c, conv_t *cv, const path_t *path, const ep_t *from, const ep_t *to,
                    uint32_t psn, uint8_t syn, uint32_t msn, uint64_t gap)
{
    pkt_t p;
    mk(&p, path, from, to, OP_ACK, psn);
    p.aeth_syn = syn;
    p.aeth_msn = msn;
    return tx(c, cv, 1, &p, gap, 0);
}

/* run one RC conversation through the event model */
static void run_rc(ctx_t *c, rc_t *r)
{
    rc_start(r, c->t + 2000);
    sim_run(c);
    rc_free(r);
}

/* non-RC stream message (UC/UD/XRC...): FIRST/MIDDLE/LAST or ONLY */
static void stream_msg(ctx_t *c, conv_t *cv, int dir, const path_t *path, const ep_t *s, const ep_t *d,
                       uint8_t tr, int mo, uint32_t len, uint32_t mtu, uint32_t *psn)
{
    uint32_t n = len ? (len + mtu - 1) / mtu : 1;
    int wr = mo == MO_WRITE || mo == MO_WRITE_IMM;
    for (uint32_t i = 0; i < n; i++) {
        uint8_t o;
        if (n == 1)
            o = mo == MO_WRITE ? OP_WRITE_ONLY : mo == MO_WRITE_IMM ? OP_WRITE_ONLY_IMM
              : mo == MO_SEND_IMM ? OP_SEND_ONLY_IMM : OP_SEND_ONLY;
        else if (i == 0)
            o = wr ? OP_WRITE_FIRST : OP_SEND_FIRST;
        else if (i < n - 1)
            o = wr ? OP_WRITE_MIDDLE : OP_SEND_MIDDLE;
        else
            o = mo == MO_WRITE ? OP_WRITE_LAST : mo == MO_WRITE_IMM ? OP_WRITE_LAST_IMM
              : mo == MO_SEND_IMM ? OP_SEND_LAST_IMM : OP_SEND_LAST;
        pkt_t p;
        mk(&p, path, s, d, (uint8_t)(tr | o), *psn);
        uint32_t off = i * mtu;
        p.paylen = len - off < mtu ? len - off : mtu;
        p.reth_va = 0x7f1000000000ull;
        p.reth_rkey = 0x5678;
        p.reth_len = len;
        p.imm = 0xABCD0000u | *psn;
        p.deth_qkey = 0x00001234;
        p.deth_srcqp = s->qpn;
        tx(c, cv, dir, &p, 1500 + p.paylen, 0);
        *psn = psn_add(*psn, 1);
    }
}

/* ---------- MAD / CM (shared with scen_messy.c through qpscen.h) ---------- */

static const char *cm_name(uint16_t a)
{
    static const char *n[] = { "REQ", "MRA", "REJ", "REP", "RTU", "DREQ", "DREP", "SIDR_REQ",
                               "SIDR_REP", "LAP", "APR" };
    return a >= 0x10 && a <= 0x1A ? n[a - 0x10] : "?";
}

uint32_t mad_send(ctx_t *c, madctx_t *m, int dir, uint16_t attr, uint64_t tid,
                         const uint8_t *cm, conv_t *note_cv)
{
    uint8_t mad[256];
    memset(mad, 0, sizeof mad);
    mad[0] = 1;        /* BaseVersion */
    mad[1] = 0x07;     /* CM */
    mad[2] = 2;        /* ClassVersion */
    mad[3] = 0x03;     /* Send */
    put64(mad + 8, tid);
    put16(mad + 16, attr);
    memcpy(mad + 24, cm, 232);
    pkt_t p;
    const ep_t *s = dir ? &m->q1b : &m->q1a, *d = dir ? &m->q1a : &m->q1b;
    mk(&p, &m->path, s, d, TR_UD | OP_SEND_ONLY, m->psn[dir]);
    m->psn[dir] = psn_add(m->psn[dir], 1);
    p.deth_qkey = 0x80010000u;
    p.deth_srcqp = 1;
    p.payload = mad;
    p.paylen = 256;
    uint32_t f = tx(c, m->mad, dir, &p, 60000, 0);
    if (note_cv)
        cm_note(note_cv, f, cm_name(attr));
    return f;
}

void mad_init(ctx_t *c, madctx_t *m, const path_t *path, const ep_t *a, const ep_t *b)
{
    memset(m, 0, sizeof *m);
    m->path = *path;
    m->q1a = *a;
    m->q1a.qpn = 1;
    m->q1b = *b;
    m->q1b.qpn = 1;
    m->psn[0] = 0x000100;
    m->psn[1] = 0x000200;
    m->mad = conv_new(c, "UD", "traffic", &m->q1a, &m->q1b);
    m->mad->role = "cm_mad";
}

void cm_req(uint8_t *d, uint32_t lcid, uint16_t port, uint64_t guid, const ep_t *a,
                   const ep_t *b, uint32_t spsn)
{
    memset(d, 0, 232);
    put32(d + 0, lcid);
    put64(d + 8, 0x0000000001060000ull | port);
    put64(d + 16, guid);
    put32(d + 28, 0);
    put24(d + 32, a->qpn); d[35] = 16;          /* responder resources */
    put24(d + 36, 0);      d[39] = 16;          /* initiator depth */
    put24(d + 40, 0);      d[43] = (uint8_t)(20 << 3 | 0 << 1 | 0); /* timeout|RC|e2e */
    put24(d + 44, spsn);   d[47] = (uint8_t)(20 << 3 | 7);
    put16(d + 48, 0xFFFF);
    d[50] = (uint8_t)(3 << 4 | 0 << 3 | 7);     /* MTU 1024, RNR retry 7 */
    d[51] = (uint8_t)(15 << 4);
    put16(d + 52, 0xFFFF);
    put16(d + 54, 0xFFFF);
    memcpy(d + 56, a->addr, 16);
    memcpy(d + 72, b->addr, 16);
    put32(d + 88, 0x00000007u);                 /* flow label 0, rate 7 */
    d[92] = 0;
    d[93] = 64;
    d[94] = 0;
    d[95] = (uint8_t)(18 << 3);
    /* RDMA-CM private data header */
    d[140] = 0;
    d[141] = 4 << 4;
    put16(d + 142, 0x9c41);                     /* src port 40001 */
    memcpy(d + 144 + 12, a->addr + 12, 4);
    memcpy(d + 160 + 12, b->addr + 12, 4);
}

void cm_rep(uint8_t *d, uint32_t lcid, uint32_t rcid, uint64_t guid, const ep_t *b, uint32_t spsn)
{
    memset(d, 0, 232);
    put32(d + 0, lcid);
    put32(d + 4, rcid);
    put32(d + 8, 0);
    put24(d + 12, b->qpn);
    put24(d + 20, spsn);
    d[24] = 16;
    d[25] = 16;
    d[26] = (uint8_t)(15 << 3);
    d[27] = (uint8_t)(7 << 5);
    put64(d + 28, guid);
}

void cm_ids(uint8_t *d, uint32_t lcid, uint32_t rcid)
{
    memset(d, 0, 232);
    put32(d + 0, lcid);
    put32(d + 4, rcid);
}

/* CM connect phase on the standard pair: REQ/REP/RTU. Returns nothing; notes frames in rc_cv. */
static void cm_connect(ctx_t *c, madctx_t *m, conv_t *rc_cv, const ep_t *a, const ep_t *b,
                       uint32_t psn_a, uint32_t psn_b, uint64_t tid)
{
    uint8_t d[232];
    cm_req(d, 0x1000A001, 7174, GUID_A, a, b, psn_a);
    mad_send(c, m, 0, CM_REQ, tid, d, rc_cv);
    cm_rep(d, 0x2000B001, 0x1000A001, GUID_B, b, psn_b);
    mad_send(c, m, 1, CM_REP, tid, d, rc_cv);
    cm_ids(d, 0x1000A001, 0x2000B001);
    mad_send(c, m, 0, CM_RTU, tid, d, rc_cv);
}

static void cm_disconnect(ctx_t *c, madctx_t *m, conv_t *rc_cv, const ep_t *b, uint64_t tid)
{
    uint8_t d[232];
    cm_ids(d, 0x1000A001, 0x2000B001);
    put24(d + 8, b->qpn);
    mad_send(c, m, 0, CM_DREQ, tid, d, rc_cv);
    cm_ids(d, 0x2000B001, 0x1000A001);
    mad_send(c, m, 1, CM_DREP, tid, d, rc_cv);
}

/* ================= decode-path scenarios ================= */

static void s_rocev1(ctx_t *c)
{
    ep_t a, b;
    std_eps(&a, &b);
    path_t path = { LT_ETH, NET_GRH, 0, { 0, 0 }, 0, 0 };
    conv_t *cv = conv_new(c, "RC", "traffic", &a, &b);
    rc_t *r = rc_new(c, cv, &path, &a, &b, 0x001000, 1024);
    rc_msg(r, MO_SEND, 2000);
    rc_msg(r, MO_SEND, 512);
    rc_msg(r, MO_SEND_IMM, 64);
    rc_msg(r, MO_SEND, 3000);
    run_rc(c, r);
}

static void s_ib_native(ctx_t *c)
{
    ep_t a, b;
    ep_ib(&a, 1, GUID_A, QPA);
    ep_ib(&b, 2, GUID_B, QPB);
    path_t lrh = { LT_IB, NET_NONE, 0, { 0, 0 }, 0, 0 };
    conv_t *cv = conv_new(c, "RC", "traffic", &a, &b);
    rc_t *r = rc_new(c, cv, &lrh, &a, &b, 0x000100, 1024);
    for (int i = 0; i < 4; i++)
        rc_msg(r, MO_WRITE, 2500);
    rc_msg(r, MO_READ, 2048);
    run_rc(c, r);
    /* a second pair that uses a GRH (LNH 3) */
    ep_t a2 = a, b2 = b;
    a2.qpn = 0x21;
    b2.qpn = 0x22;
    path_t grh = { LT_IB, NET_GRH, 0, { 0, 0 }, 0, 0 };
    conv_t *cv2 = conv_new(c, "RC", "traffic", &a2, &b2);
    rc_t *r2 = rc_new(c, cv2, &grh, &a2, &b2, 0x000500, 1024);
    rc_msg(r2, MO_SEND, 300);
    rc_msg(r2, MO_WRITE, 100);
    run_rc(c, r2);
}

static void s_ipv6(ctx_t *c)
{
    ep_t a, b;
    ep_v6(&a, "fd00::1", QPA);
    ep_v6(&b, "fd00::2", QPB);
    conv_t *cv = conv_new(c, "RC", "traffic", &a, &b);
    rc_t *r = rc_new(c, cv, &P_ETH6, &a, &b, 0x002000, 1024);
    rc_msg(r, MO_WRITE, 3000);
    rc_msg(r, MO_WRITE, 700);
    rc_msg(r, MO_READ, 4096);
    rc_msg(r, MO_WRITE, 1024);
    run_rc(c, r);
}

static void s_vlan(ctx_t *c)
{
    ep_t a, b;
    std_eps(&a, &b);
    path_t q = { LT_ETH, NET_IP4, 1, { 100, 0 }, 26, 2 };
    conv_t *cv = conv_new(c, "RC", "traffic", &a, &b);
    rc_t *r = rc_new(c, cv, &q, &a, &b, 0x003000, 1024);
    rc_msg(r, MO_WRITE, 3000);
    rc_msg(r, MO_SEND, 200);
    run_rc(c, r);
    ep_t a2 = a, b2 = b;
    a2.qpn = 0x31;
    b2.qpn = 0x32;
    path_t qq = { LT_ETH, NET_IP4, 2, { 200, 300 }, 26, 2 };
    conv_t *cv2 = conv_new(c, "RC", "traffic", &a2, &b2);
    rc_t *r2 = rc_new(c, cv2, &qq, &a2, &b2, 0x003100, 1024);
    rc_msg(r2, MO_WRITE, 2048);
    rc_msg(r2, MO_READ, 1500);
    run_rc(c, r2);
}

static void cooked(ctx_t *c, int lt)
{
    ep_t a, b;
    std_eps(&a, &b);
    path_t sp = { lt, NET_IP4, 0, { 0, 0 }, 26, 2 };
    conv_t *cv = conv_new(c, "RC", "traffic", &a, &b);
    rc_t *r = rc_new(c, cv, &sp, &a, &b, 0x004000, 1024);
    rc_msg(r, MO_WRITE, 3000);
    rc_msg(r, MO_WRITE, 100);
    rc_msg(r, MO_SEND, 1500);
    run_rc(c, r);
}
static void s_sll(ctx_t *c) { cooked(c, LT_SLL); }
static void s_sll2(ctx_t *c) { cooked(c, LT_SLL2); }

static void s_raw(ctx_t *c)
{
    ep_t a, b;
    std_eps(&a, &b);
    path_t r4 = { LT_RAW, NET_IP4, 0, { 0, 0 }, 26, 2 };
    conv_t *cv = conv_new(c, "RC", "traffic", &a, &b);
    rc_t *r = rc_new(c, cv, &r4, &a, &b, 0x005000, 1024);
    rc_msg(r, MO_WRITE, 2048);
    rc_msg(r, MO_SEND, 64);
    run_rc(c, r);
    ep_t a6, b6;
    ep_v6(&a6, "fd00::1", 0x41);
    ep_v6(&b6, "fd00::2", 0x42);
    path_t r6 = { LT_RAW, NET_IP6, 0, { 0, 0 }, 26, 2 };
    conv_t *cv6 = conv_new(c, "RC", "traffic", &a6, &b6);
    rc_t *q = rc_new(c, cv6, &r6, &a6, &b6, 0x005100, 1024);
    rc_msg(q, MO_WRITE, 1500);
    rc_msg(q, MO_READ, 1024);
    run_rc(c, q);
}

/* RoCEv2 after IPv6 extension headers, and RoCEv2 packets larger than the
 * IP MTU, fragmented by IPv4 (a misconfiguration: RoCE sets DF). */
static void s_ip_options(ctx_t *c)
{
    ep_t a6, b6;
    ep_v6(&a6, "fd00::1", QPA);
    ep_v6(&b6, "fd00::2", QPB);
    path_t e6 = { LT_ETH, NET_IP6, 0, { 0, 0 }, 26, 2, 1, 0 };
    conv_t *cv6 = conv_new(c, "RC", "traffic", &a6, &b6);
    rc_t *r = rc_new(c, cv6, &e6, &a6, &b6, 0x01B000, 1024);
    rc_msg(r, MO_WRITE, 3000);
    rc_msg(r, MO_SEND, 200);
    run_rc(c, r);

    ep_t a, b;
    std_eps(&a, &b);
    pkt_t p;
    path_t f4 = { LT_ETH, NET_IP4, 0, { 0, 0 }, 26, 2, 0, 1 };
    mk(&p, &f4, &a, &b, OP_SEND_ONLY, 0x01B100);
    p.paylen = 2048;
    p.payseed = 7;
    emit(c, c->t + 5000, &p, NULL, 0, 0, 0);
    note(c, c->nframes - 1, "frames %u-%u: one RoCEv2 SEND Only of 2048 bytes in two IPv4 fragments (not in any conversation)",
         c->nframes - 1, c->nframes);
}

static void s_exthdrs(ctx_t *c)
{
    ep_t a, b;
    std_eps(&a, &b);
    const path_t *P = &P_ETH4;
    conv_t *cv = conv_new(c, "RC", "traffic", &a, &b);
    pkt_t p;
    uint32_t psn = 100, msn = 0;

    mk(&p, P, &a, &b, OP_SEND_ONLY_INV, psn); p.ackreq = 1; p.ieth_rkey = 0x00004321; p.paylen = 64;
    tx(c, cv, 0, &p, 2000, 0);
    ack(c, cv, P, &b, &a, psn++, 0x1F, ++msn, 8000);

    mk(&p, P, &a, &b, OP_CMP_SWAP, psn); p.ackreq = 1;
    p.at_va = 0x7f0000001000ull; p.at_rkey = 0x1234; p.at_swap = 0x2222; p.at_cmp = 0x1111;
    tx(c, cv, 0, &p, 20000, 0);
    mk(&p, P, &b, &a, OP_ATOMIC_ACK, psn++); p.aeth_syn = 0x1F; p.aeth_msn = ++msn; p.atack_orig = 0x1111;
    tx(c, cv, 1, &p, 8000, 0);

    mk(&p, P, &a, &b, OP_FETCH_ADD, psn); p.ackreq = 1;
    p.at_va = 0x7f0000001008ull; p.at_rkey = 0x1234; p.at_swap = 5; p.at_cmp = 0;
    tx(c, cv, 0, &p, 20000, 0);
    mk(&p, P, &b, &a, OP_ATOMIC_ACK, psn++); p.aeth_syn = 0x1F; p.aeth_msn = ++msn; p.atack_orig = 40;
    tx(c, cv, 1, &p, 8000, 0);

    mk(&p, P, &a, &b, OP_WRITE_ONLY_IMM, psn); p.ackreq = 1;
    p.reth_va = 0x7f0000002000ull; p.reth_rkey = 0x1234; p.reth_len = 100; p.paylen = 100; p.imm = 0xDEADBEEF;
    tx(c, cv, 0, &p, 20000, 0);
    ack(c, cv, P, &b, &a, psn++, 0x1F, ++msn, 8000);

    mk(&p, P, &a, &b, OP_SEND_ONLY_IMM, psn); p.ackreq = 1; p.paylen = 33; p.imm = 0x01020304;
    tx(c, cv, 0, &p, 20000, 0);
    ack(c, cv, P, &b, &a, psn++, 0x1F, ++msn, 8000);

    mk(&p, P, &a, &b, OP_FLUSH, psn); p.ackreq = 1; p.feth = 0x00000011;
    p.reth_va = 0x7f0000002000ull; p.reth_rkey = 0x1234; p.reth_len = 4096;
    tx(c, cv, 0, &p, 20000, 0);
    ack(c, cv, P, &b, &a, psn++, 0x1F, ++msn, 8000);

    mk(&p, P, &a, &b, OP_ATOMIC_WRITE, psn); p.ackreq = 1;
    p.reth_va = 0x7f0000003000ull; p.reth_rkey = 0x1234; p.reth_len = 8; p.paylen = 8;
    tx(c, cv, 0, &p, 20000, 0);
    ack(c, cv, P, &b, &a, psn++, 0x1F, ++msn, 8000);

    /* READ 3000 bytes: request + FIRST/MIDDLE/LAST */
    uint32_t rp = psn;
    mk(&p, P, &a, &b, OP_READ_REQ, rp); p.ackreq = 1;
    p.reth_va = 0x7f0000004000ull; p.reth_rkey = 0x1234; p.reth_len = 3000;
    tx(c, cv, 0, &p, 20000, 0);
    ++msn;
    mk(&p, P, &b, &a, OP_READ_RESP_FIRST, rp); p.aeth_syn = 0x1F; p.aeth_msn = msn; p.paylen = 1024;
    tx(c, cv, 1, &p, 8000, 0);
    mk(&p, P, &b, &a, OP_READ_RESP_MIDDLE, rp + 1); p.paylen = 1024;
    tx(c, cv, 1, &p, 1500, 0);
    mk(&p, P, &b, &a, OP_READ_RESP_LAST, rp + 2); p.aeth_syn = 0x1F; p.aeth_msn = msn; p.paylen = 952;
    tx(c, cv, 1, &p, 1500, 0);
    psn = rp + 3;

    /* SEND FIRST + SEND LAST w/Inv, WRITE FIRST + WRITE LAST w/Imm */
    mk(&p, P, &a, &b, OP_SEND_FIRST, psn++); p.paylen = 1024;
    tx(c, cv, 0, &p, 20000, 0);
    mk(&p, P, &a, &b, OP_SEND_LAST_INV, psn); p.ackreq = 1; p.paylen = 500; p.ieth_rkey = 0x00004322;
    tx(c, cv, 0, &p, 1500, 0);
    ack(c, cv, P, &b, &a, psn++, 0x1F, ++msn, 8000);
    mk(&p, P, &a, &b, OP_WRITE_FIRST, psn++); p.paylen = 1024;
    p.reth_va = 0x7f0000005000ull; p.reth_rkey = 0x1234; p.reth_len = 1030;
    tx(c, cv, 0, &p, 20000, 0);
    mk(&p, P, &a, &b, OP_WRITE_LAST_IMM, psn); p.ackreq = 1; p.paylen = 6; p.imm = 0xCAFEF00D;
    tx(c, cv, 0, &p, 1500, 0);
    ack(c, cv, P, &b, &a, psn++, 0x1F, ++msn, 8000);

    /* UD SEND Only w/Imm and plain */
    ep_t ua = a, ub = b;
    ua.qpn = 0x21;
    ub.qpn = 0x22;
    conv_t *ud = conv_new(c, "UD", "traffic", &ua, &ub);
    mk(&p, P, &ua, &ub, TR_UD | OP_SEND_ONLY_IMM, 0x10);
    p.deth_qkey = 0x11111111; p.deth_srcqp = ua.qpn; p.imm = 0x0000BEEF; p.paylen = 128;
    tx(c, ud, 0, &p, 20000, 0);
    mk(&p, P, &ua, &ub, TR_UD | OP_SEND_ONLY, 0x11);
    p.deth_qkey = 0x11111111; p.deth_srcqp = ua.qpn; p.paylen = 256;
    tx(c, ud, 0, &p, 3000, 0);

    /* XRC SEND Only (0xA4) */
    ep_t xa = a, xb = b;
    xa.qpn = 0x31;
    xb.qpn = 0x32;
    conv_t *xrc = conv_new(c, "XRC", "traffic", &xa, &xb);
    mk(&p, P, &xa, &xb, TR_XRC | OP_SEND_ONLY, 0x200);
    p.xrc_srq = 0x000777; p.ackreq = 1; p.paylen = 96;
    tx(c, xrc, 0, &p, 20000, 0);
    mk(&p, P, &xb, &xa, TR_XRC | OP_ACK, 0x200);
    p.xrc_srq = 0; p.aeth_syn = 0x1F; p.aeth_msn = 1;
    tx(c, xrc, 1, &p, 8000, 0);

    /* RD SEND Only (0x44) */
    ep_t da = a, db = b;
    da.qpn = 0x41;
    db.qpn = 0x42;
    conv_t *rd = conv_new(c, "RD", "traffic", &da, &db);
    mk(&p, P, &da, &db, TR_RD | OP_SEND_ONLY, 0x300);
    p.rdeth_eec = 0x000042; p.deth_qkey = 0x22222222; p.deth_srcqp = da.qpn; p.ackreq = 1; p.paylen = 40;
    tx(c, rd, 0, &p, 20000, 0);
}

static void s_naks(ctx_t *c)
{
    ep_t a, b;
    std_eps(&a, &b);
    const path_t *P = &P_ETH4;
    conv_t *cv = conv_new(c, "RC", "traffic", &a, &b);
    pkt_t p;
    uint32_t msn = 0;
    /* plain ACK */
    mk(&p, P, &a, &b, OP_WRITE_ONLY, 500); p.ackreq = 1; p.paylen = 256; p.reth_len = 256;
    p.reth_va = 0x7f0000000000ull; p.reth_rkey = 0x1234;
    tx(c, cv, 0, &p, 2000, 0);
    ack(c, cv, P, &b, &a, 500, 0x1F, ++msn, 8000);
    /* RNR NAK then retry */
    mk(&p, P, &a, &b, OP_SEND_ONLY, 501); p.ackreq = 1; p.paylen = 128;
    tx(c, cv, 0, &p, 20000, 0);
    ack(c, cv, P, &b, &a, 501, 0x20 | 0x0E, msn, 8000);
    mk(&p, P, &a, &b, OP_SEND_ONLY, 501); p.ackreq = 1; p.paylen = 128;
    tx(c, cv, 0, &p, 1280000, F_RETRANS);
    ack(c, cv, P, &b, &a, 501, 0x1F, ++msn, 8000);
    /* PSN sequence error: 502 lost before the capture point */
    mk(&p, P, &a, &b, OP_WRITE_ONLY, 503); p.ackreq = 1; p.paylen = 64; p.reth_len = 64;
    p.reth_va = 0x7f0000000100ull; p.reth_rkey = 0x1234;
    tx(c, cv, 0, &p, 20000, 0);
    ack(c, cv, P, &b, &a, 502, 0x60, msn, 8000);
    mk(&p, P, &a, &b, OP_WRITE_ONLY, 502); p.ackreq = 1; p.paylen = 64; p.reth_len = 64;
    p.reth_va = 0x7f0000000080ull; p.reth_rkey = 0x1234;
    tx(c, cv, 0, &p, 10000, F_RETRANS | F_GBN | F_COUNTMSG);
    mk(&p, P, &a, &b, OP_WRITE_ONLY, 503); p.ackreq = 1; p.paylen = 64; p.reth_len = 64;
    p.reth_va = 0x7f0000000100ull; p.reth_rkey = 0x1234;
    tx(c, cv, 0, &p, 1500, F_RETRANS);
    ack(c, cv, P, &b, &a, 502, 0x1F, ++msn, 8000);
    ack(c, cv, P, &b, &a, 503, 0x1F, ++msn, 1000);

    /* fatal NAKs, each on its own QP pair (the QP goes to error afterwards) */
    static const uint8_t codes[4] = { 0x61, 0x62, 0x63, 0x64 };
    static const uint8_t ops[4] = { OP_WRITE_ONLY, OP_READ_REQ, OP_SEND_ONLY, OP_SEND_ONLY };
    for (int i = 0; i < 4; i++) {
        ep_t xa = a, xb = b;
        xa.qpn = 0x100 + (uint32_t)i * 2;
        xb.qpn = 0x101 + (uint32_t)i * 2;
        conv_t *x = conv_new(c, "RC", "traffic", &xa, &xb);
        uint32_t ps = 0x1000 * (uint32_t)(i + 1);
        mk(&p, P, &xa, &xb, ops[i], ps); p.ackreq = 1;
        p.reth_va = 0x7f0000000000ull; p.reth_rkey = 0xBAD; p.reth_len = 512;
        p.paylen = ops[i] == OP_READ_REQ ? 0 : 512;
        tx(c, x, 0, &p, 30000, 0);
        uint32_t f = ack(c, x, P, &xb, &xa, ps, codes[i], 0, 8000);
        note(c, f, "NAK code %d", codes[i] & 0x1F);
    }
}

static void cnp_common(ctx_t *c, int nmsg, int ce_from, int ce_to)
{
    ep_t a, b;
    std_eps(&a, &b);
    conv_t *cv = conv_new(c, "RC", "traffic", &a, &b);
    rc_t *r = rc_new(c, cv, &P_ETH4, &a, &b, 0x006000, 1024);
    for (int i = 0; i < nmsg; i++)
        rc_msg(r, MO_WRITE, 1024);
    for (int i = ce_from; i < ce_to; i++)
        rc_ce(r, 0x006000u + (uint32_t)i);
    run_rc(c, r);
}
static void s_cnp(ctx_t *c) { cnp_common(c, 8, 2, 6); }
static void s_cnp_ecn(ctx_t *c)
{
    ep_t a, b;
    std_eps(&a, &b);
    conv_t *cv = conv_new(c, "RC", "traffic", &a, &b);
    rc_t *r = rc_new(c, cv, &P_ETH4, &a, &b, 0x006000, 1024);
    for (int i = 0; i < 60; i++)
        rc_msg(r, MO_WRITE, 4096);
    /* congestion episode: every second packet CE-marked for a while */
    for (int i = 40; i < 200; i += 2)
        rc_ce(r, 0x006000u + (uint32_t)i);
    run_rc(c, r);
}

static void s_bad_icrc(ctx_t *c)
{
    ep_t a, b;
    std_eps(&a, &b);
    const path_t *P = &P_ETH4;
    conv_t *cv = conv_new(c, "RC", "traffic", &a, &b);
    uint32_t msn = 0;
    for (uint32_t i = 0; i < 8; i++) {
        pkt_t p;
        mk(&p, P, &a, &b, OP_WRITE_ONLY, 0x7000 + i); p.ackreq = 1; p.paylen = 200 + i * 10;
        p.reth_va = 0x7f0000000000ull + i * 0x1000; p.reth_rkey = 0x1234; p.reth_len = p.paylen;
        p.bad_icrc = (i == 2 || i == 5);
        uint32_t f = tx(c, cv, 0, &p, 20000, 0);
        if (p.bad_icrc)
            note(c, f, "bad_icrc");
        mk(&p, P, &b, &a, OP_ACK, 0x7000 + i); p.aeth_syn = 0x1F; p.aeth_msn = ++msn;
        p.bad_icrc = (i == 6);
        f = tx(c, cv, 1, &p, 8000, 0);
        if (p.bad_icrc)
            note(c, f, "bad_icrc");
    }
}

static void s_truncated(ctx_t *c)
{
    ep_t a, b;
    std_eps(&a, &b);
    const path_t *P = &P_ETH4;
    conv_t *cv = conv_new(c, "RC", "traffic", &a, &b);
    const uint32_t hdr = 14 + 20 + 8; /* up to BTH */
    struct { uint32_t snap; const char *what; } cuts[] = {
        { 0, NULL }, { hdr + 6, "truncated inside BTH" }, { 0, NULL },
        { hdr + 12 + 9, "truncated inside RETH" }, { 0, NULL },
        { hdr + 12 + 16 + 100, "truncated inside payload (ICRC missing)" },
        { 0, NULL }, { hdr + 12 + 16 + 512 + 2, "truncated inside ICRC" }, { 0, NULL },
    };
    uint32_t msn = 0;
    for (uint32_t i = 0; i < G_N_ELEMENTS(cuts); i++) {
        pkt_t p;
        mk(&p, P, &a, &b, OP_WRITE_ONLY, 0x8000 + i); p.ackreq = 1; p.paylen = 512;
        p.reth_va = 0x7f0000000000ull + i * 0x1000; p.reth_rkey = 0x1234; p.reth_len = 512;
        /* a frame cut inside its BTH names no QP: not in any conversation */
        uint32_t f = tx_snap(c, cuts[i].snap == hdr + 6 ? NULL : cv, 0, &p, 20000,
                             cuts[i].snap);
        if (cuts[i].what)
            note(c, f, "%s (caplen %u)", cuts[i].what, cuts[i].snap);
        ack(c, cv, P, &b, &a, 0x8000 + i, 0x1F, ++msn, 8000);
    }
}

static void s_lies(ctx_t *c)
{
    ep_t a, b;
    std_eps(&a, &b);
    const path_t *P = &P_ETH4;
    conv_t *cv = conv_new(c, "RC", "traffic", &a, &b);
    pkt_t p;
    uint32_t f, psn = 0x9000, msn = 0;
#define GOODW() do { mk(&p, P, &a, &b, OP_WRITE_ONLY, psn); p.ackreq = 1; p.paylen = 128; p.reth_len = 128; \
        p.reth_va = 0x7f0000000000ull; p.reth_rkey = 0x1234; tx(c, cv, 0, &p, 20000, 0); \
        ack(c, cv, P, &b, &a, psn++, 0x1F, ++msn, 8000); } while (0)
    GOODW();
    mk(&p, P, &a, &b, OP_WRITE_ONLY, psn); p.ackreq = 1; p.paylen = 128; p.reth_len = 128;
    p.reth_va = 0x7f0000000000ull; p.reth_rkey = 0x1234; p.ip_len_delta = 200;
    f = tx(c, cv, 0, &p, 20000, 0);
    note(c, f, "IPv4 total length 200 bytes larger than the frame");
    ack(c, cv, P, &b, &a, psn++, 0x1F, ++msn, 8000);
    GOODW();
    mk(&p, P, &a, &b, OP_WRITE_ONLY, psn); p.ackreq = 1; p.paylen = 128; p.reth_len = 128;
    p.reth_va = 0x7f0000000000ull; p.reth_rkey = 0x1234; p.udp_len_delta = 64;
    f = tx(c, cv, 0, &p, 20000, 0);
    note(c, f, "UDP length 64 bytes larger than the IP payload");
    ack(c, cv, P, &b, &a, psn++, 0x1F, ++msn, 8000);
    GOODW();
    mk(&p, P, &a, &b, OP_WRITE_ONLY, psn); p.ackreq = 1; p.paylen = 0; p.reth_len = 0;
    p.reth_va = 0x7f0000000000ull; p.reth_rkey = 0x1234; p.pad_override = 3;
    f = tx(c, cv, 0, &p, 20000, 0);
    note(c, f, "PadCnt 3 with a 0-byte payload (no pad bytes present)");
    ack(c, cv, P, &b, &a, psn++, 0x1F, ++msn, 8000);
    GOODW();
    ep_t q1a = a, q1b = b;
    q1a.qpn = 1;
    q1b.qpn = 1;
    conv_t *mad = conv_new(c, "UD", "traffic", &q1a, &q1b);
    mad->role = "cm_mad";
    uint8_t shortmad[16] = { 1, 0x07, 2, 0x03, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x42 };
    mk(&p, P, &q1a, &q1b, TR_UD | OP_SEND_ONLY, 0x100);
    p.deth_qkey = 0x80010000u; p.deth_srcqp = 1; p.payload = shortmad; p.paylen = sizeof shortmad;
    f = tx(c, mad, 0, &p, 20000, 0);
    note(c, f, "MAD on QP1 with only 16 bytes of payload (shorter than the 24-byte MAD header)");
    GOODW();
    /* valid but unusual: a zero-length SEND (Wireshark 4.0 hands the empty payload to the
     * RPC-over-RDMA heuristic, which reports it as malformed) */
    mk(&p, P, &a, &b, OP_SEND_ONLY, psn); p.ackreq = 1; p.paylen = 0;
    f = tx(c, cv, 0, &p, 20000, 0);
    note(c, f, "zero-length SEND Only (valid; Wireshark 4.0 flags it Malformed via RPCoRDMA heuristic)");
    ack(c, cv, P, &b, &a, psn++, 0x1F, ++msn, 8000);
#undef GOODW
}

static void s_srcport69(ctx_t *c)
{
    ep_t a, b;
    std_eps(&a, &b);
    conv_t *cv = conv_new(c, "RC", "traffic", &a, &b);
    rc_t *r = rc_new(c, cv, &P_ETH4, &a, &b, 0x00A000, 1024);
    rc_resp_sport(r, 69);
    for (int i = 0; i < 4; i++)
        rc_msg(r, MO_WRITE, 1500);
    run_rc(c, r);
}

static void cm_traffic(rc_t *r)
{
    rc_msg(r, MO_WRITE, 3000);
    rc_msg(r, MO_WRITE, 512);
    rc_msg(r, MO_READ, 2048);
    rc_msg(r, MO_SEND, 100);
    rc_msg(r, MO_WRITE, 1024);
}

static void s_cm_full(ctx_t *c)
{
    ep_t a, b;
    std_eps(&a, &b);
    madctx_t m;
    mad_init(c, &m, &P_ETH4, &a, &b);
    conv_t *cv = conv_new(c, "RC", "cm", &a, &b);
    cm_connect(c, &m, cv, &a, &b, 0x00B000, 0x00C000, 0x0000000100000001ull);
    rc_t *r = rc_new(c, cv, &P_ETH4, &a, &b, 0x00B000, 1024);
    cm_traffic(r);
    run_rc(c, r);
    /* LAP + APR */
    uint8_t d[232];
    cm_ids(d, 0x1000A001, 0x2000B001);
    put24(d + 12, b.qpn);
    d[15] = (uint8_t)(20 << 3);
    put16(d + 20, 0xFFFF);
    put16(d + 22, 0xFFFF);
    memcpy(d + 24, a.addr, 16);
    memcpy(d + 40, b.addr, 16);
    mad_send(c, &m, 0, CM_LAP, 0x0000000100000002ull, d, cv);
    cm_ids(d, 0x2000B001, 0x1000A001);
    d[8] = 0;
    d[9] = 0;   /* APStatus: path loaded */
    mad_send(c, &m, 1, CM_APR, 0x0000000100000002ull, d, cv);
    cm_disconnect(c, &m, cv, &b, 0x0000000100000003ull);

    /* second exchange: REQ, MRA, REJ */
    ep_t a2 = a, b2 = b;
    a2.qpn = 0x15;
    b2.qpn = 0x16;
    conv_t *cv2 = conv_new(c, "RC", "cm", &a2, &b2);
    cm_req(d, 0x1000A002, 7174, GUID_A, &a2, &b2, 0x00D000);
    mad_send(c, &m, 0, CM_REQ, 0x0000000100000004ull, d, cv2);
    cm_ids(d, 0x2000B002, 0x1000A002);
    d[8] = 0 << 6;           /* MRA'ed message: REQ */
    d[9] = (uint8_t)(20 << 3);
    mad_send(c, &m, 1, CM_MRA, 0x0000000100000004ull, d, cv2);
    cm_ids(d, 0x2000B002, 0x1000A002);
    d[8] = 0 << 6;           /* rejected message: REQ */
    d[9] = 0;
    put16(d + 10, 28);       /* consumer reject */
    mad_send(c, &m, 1, CM_REJ, 0x0000000100000004ull, d, cv2);

    /* SIDR */
    ep_t ua = a, ub = b;
    ua.qpn = 0x25;
    ub.qpn = 0x26;
    conv_t *ud = conv_new(c, "UD", "cm", &ua, &ub);
    memset(d, 0, sizeof d);
    put32(d, 0x3000C001);
    put16(d + 4, 0xFFFF);
    put64(d + 8, 0x0000000002110000ull | 7175);  /* RDMA_PS_UDP */
    mad_send(c, &m, 0, CM_SIDR_REQ, 0x0000000100000005ull, d, ud);
    memset(d, 0, sizeof d);
    put32(d, 0x3000C001);
    d[4] = 0;
    put24(d + 8, ub.qpn);
    put64(d + 12, 0x0000000002110000ull | 7175);
    put32(d + 20, 0x01234567);
    mad_send(c, &m, 1, CM_SIDR_REP, 0x0000000100000005ull, d, ud);
    uint32_t psn = 0;
    stream_msg(c, ud, 0, &P_ETH4, &ua, &ub, TR_UD, MO_SEND, 200, 1024, &psn);
    psn = 0x100;
    stream_msg(c, ud, 1, &P_ETH4, &ub, &ua, TR_UD, MO_SEND, 200, 1024, &psn);
}

/* ================= flow-analysis scenarios ================= */

static rc_t *std_rc(ctx_t *c, uint32_t psn, const char *pairing)
{
    ep_t a, b;
    std_eps(&a, &b);
    conv_t *cv = conv_new(c, "RC", pairing, &a, &b);
    return rc_new(c, cv, &P_ETH4, &a, &b, psn, 1024);
}

static void s_clean_write(ctx_t *c)
{
    rc_t *r = std_rc(c, 0x010000, "traffic");
    for (int i = 0; i < 5; i++)
        rc_msg(r, MO_WRITE, 3000);
    run_rc(c, r);
}

static void s_clean_read(ctx_t *c)
{
    rc_t *r = std_rc(c, 0x011000, "traffic");
    rc_msg(r, MO_READ, 4096);
    rc_msg(r, MO_READ, 4096);
    rc_msg(r, MO_READ, 512);
    rc_msg(r, MO_READ, 3000);
    rc_msg(r, MO_WRITE, 100);
    run_rc(c, r);
}

static void s_clean_send(ctx_t *c)
{
    rc_t *r = std_rc(c, 0x012000, "traffic");
    rc_msg(r, MO_SEND, 3000);
    rc_msg(r, MO_SEND, 200);
    rc_msg(r, MO_SEND_IMM, 2048);
    rc_msg(r, MO_SEND, 16);
    rc_msg(r, MO_SEND_INV, 64);
    run_rc(c, r);
}

static void s_clean_atomic(ctx_t *c)
{
    rc_t *r = std_rc(c, 0x013000, "traffic");
    for (int i = 0; i < 3; i++) {
        rc_msg(r, MO_CMP_SWAP, 8);
        rc_msg(r, MO_FETCH_ADD, 8);
    }
    run_rc(c, r);
}

static void s_nak_gbn(ctx_t *c)
{
    rc_t *r = std_rc(c, 0x014000, "traffic");
    for (int i = 0; i < 8; i++)
        rc_msg(r, MO_WRITE, 3000);
    rc_drop_req(r, 0x014005);
    run_rc(c, r);
}

static void s_timeout_resend(ctx_t *c)
{
    rc_t *r = std_rc(c, 0x015000, "traffic");
    for (int i = 0; i < 5; i++)
        rc_msg(r, MO_WRITE, 3000);
    rc_opts(r, 1, 1, 1);
    rc_drop_req(r, 0x015008);   /* LAST packet of message 2 */
    run_rc(c, r);
}

static void s_rnr(ctx_t *c)
{
    rc_t *r = std_rc(c, 0x016000, "traffic");
    for (int i = 0; i < 4; i++)
        rc_msg(r, MO_SEND, 512);
    rc_opts(r, 1, 1, 0);
    rc_rnr(r, 2);
    run_rc(c, r);
}

static void s_dup_capture(ctx_t *c)
{
    rc_t *r = std_rc(c, 0x017000, "traffic");
    for (int i = 0; i < 4; i++)
        rc_msg(r, MO_WRITE, 3000);
    rc_dup(r, 0x017004);
    run_rc(c, r);
}

static void s_dup_ack(ctx_t *c)
{
    rc_t *r = std_rc(c, 0x01A000, "traffic");
    for (int i = 0; i < 3; i++)
        rc_msg(r, MO_WRITE, 1024);
    rc_opts(r, 1, 1, 1);
    rc_lose_ack(r, 0x01A001);   /* the ACK of message 2: captured, then lost */
    run_rc(c, r);
}

static void s_coalesced_acks(ctx_t *c)
{
    rc_t *r = std_rc(c, 0x018000, "traffic");
    for (int i = 0; i < 32; i++)
        rc_msg(r, MO_WRITE, 1024);
    rc_opts(r, 8, 0, 0);
    run_rc(c, r);
}

static void s_psn_wrap(ctx_t *c)
{
    rc_t *r = std_rc(c, 0xFFFFF0, "traffic");
    for (int i = 0; i < 10; i++)
        rc_msg(r, MO_WRITE, 3000);
    rc_msg(r, MO_READ, 4096);
    rc_msg(r, MO_WRITE, 1024);
    run_rc(c, r);
}

static void s_ud(ctx_t *c)
{
    ep_t a, b, a2, b2;
    ep_v4(&a, 10, 0, 0, 1, 0x000101);
    ep_v4(&b, 10, 0, 0, 2, 0x000201);
    ep_v4(&a2, 10, 0, 0, 1, 0x000102);
    ep_v4(&b2, 10, 0, 0, 3, 0x000202);
    conv_t *u1 = conv_new(c, "UD", "traffic", &a, &b);
    conv_t *u2 = conv_new(c, "UD", "traffic", &a2, &b2);
    uint32_t pa = 0x100, pb = 0x200, pa2 = 0x300, pb2 = 0x400;
    for (int i = 0; i < 6; i++) {
        stream_msg(c, u1, 0, &P_ETH4, &a, &b, TR_UD, i == 3 ? MO_SEND_IMM : MO_SEND, 256 + (uint32_t)i * 100, 1024, &pa);
        stream_msg(c, u2, 0, &P_ETH4, &a2, &b2, TR_UD, MO_SEND, 1024, 1024, &pa2);
        stream_msg(c, u1, 1, &P_ETH4, &b, &a, TR_UD, MO_SEND, 64, 1024, &pb);
        if (i % 2)
            stream_msg(c, u2, 1, &P_ETH4, &b2, &a2, TR_UD, MO_SEND, 32, 1024, &pb2);
    }
}

static void s_uc(ctx_t *c)
{
    ep_t a, b;
    std_eps(&a, &b);
    conv_t *cv = conv_new(c, "UC", "traffic", &a, &b);
    uint32_t psn = 0x020000, pb = 0x021000;
    stream_msg(c, cv, 0, &P_ETH4, &a, &b, TR_UC, MO_SEND, 3000, 1024, &psn);
    stream_msg(c, cv, 0, &P_ETH4, &a, &b, TR_UC, MO_WRITE, 2048, 1024, &psn);
    stream_msg(c, cv, 0, &P_ETH4, &a, &b, TR_UC, MO_WRITE_IMM, 500, 1024, &psn);
    stream_msg(c, cv, 0, &P_ETH4, &a, &b, TR_UC, MO_SEND_IMM, 100, 1024, &psn);
    stream_msg(c, cv, 1, &P_ETH4, &b, &a, TR_UC, MO_SEND, 1500, 1024, &pb);
    stream_msg(c, cv, 0, &P_ETH4, &a, &b, TR_UC, MO_WRITE, 4096, 1024, &psn);
}

static void s_cm_rc(ctx_t *c)
{
    ep_t a, b;
    std_eps(&a, &b);
    madctx_t m;
    mad_init(c, &m, &P_ETH4, &a, &b);
    conv_t *cv = conv_new(c, "RC", "cm", &a, &b);
    cm_connect(c, &m, cv, &a, &b, 0x030000, 0x031000, 0x0000000200000001ull);
    rc_t *r = rc_new(c, cv, &P_ETH4, &a, &b, 0x030000, 1024);
    cm_traffic(r);
    run_rc(c, r);
    cm_disconnect(c, &m, cv, &b, 0x0000000200000002ull);
}

static void s_traffic_rc(ctx_t *c)
{
    rc_t *r = std_rc(c, 0x030000, "traffic");
    cm_traffic(r);
    run_rc(c, r);
}

static void s_read_retry(ctx_t *c)
{
    rc_t *r = std_rc(c, 0x040000, "traffic");
    rc_msg(r, MO_WRITE, 1024);
    rc_msg(r, MO_READ, 4096);     /* PSNs 0x040001..0x040004 */
    rc_msg(r, MO_WRITE, 2048);    /* starts at 0x040005 */
    rc_drop_resp(r, 0x040003);    /* 3rd response packet */
    run_rc(c, r);
}

static void s_multi_qp(ctx_t *c)
{
    ep_t a, b;
    rc_t *rs[8];
    for (int i = 0; i < 8; i++) {
        ep_v4(&a, 10, 0, 0, 1, 0x000100 + (uint32_t)i);
        ep_v4(&b, 10, 0, 0, (uint8_t)(2 + i % 3), 0x000200 + (uint32_t)i);
        conv_t *cv = conv_new(c, "RC", "traffic", &a, &b);
        rs[i] = rc_new(c, cv, &P_ETH4, &a, &b, 0x050000u + (uint32_t)i * 0x1000u, 1024);
        for (int k = 0; k < 4; k++)
            rc_msg(rs[i], (k + i) % 4 == 3 ? MO_READ : MO_WRITE, 1024u * (uint32_t)(1 + (k + i) % 3));
        rc_start(rs[i], c->t + 2000 + (uint64_t)i * 700);
    }
    sim_run(c);
    for (int i = 0; i < 8; i++)
        rc_free(rs[i]);
}

const scen_t scenarios[] = {
    { "rocev1", "RoCEv1 (ethertype 0x8915, GRH) RC SEND/ACK", LT_ETH, s_rocev1 },
    { "ib_native", "native InfiniBand (LINKTYPE 247) RC WRITE/READ with LRH only, plus a GRH (LNH 3) pair; valid ICRC+VCRC", LT_IB, s_ib_native },
    { "ipv6", "RoCEv2 over IPv6: RC WRITE + READ", LT_ETH, s_ipv6 },
    { "vlan", "RoCEv2 behind 802.1Q (VID 100) and QinQ (200/300)", LT_ETH, s_vlan },
    { "sll", "RoCEv2 in Linux cooked capture (LINKTYPE_LINUX_SLL 113)", LT_SLL, s_sll },
    { "sll2", "RoCEv2 in Linux cooked capture v2 (LINKTYPE_LINUX_SLL2 276)", LT_SLL2, s_sll2 },
    { "raw", "RoCEv2 in LINKTYPE_RAW (101), IPv4 and IPv6", LT_RAW, s_raw },
    { "ip_options", "RoCEv2 after IPv6 Hop-by-Hop and Destination Options headers; a RoCEv2 SEND in two IPv4 fragments", LT_ETH, s_ip_options },
    { "exthdrs", "one of each extended header: IETH, AtomicETH/AtomicAckETH, ImmDt, DETH, XRCETH, RDETH, FETH, RETH, READ responses", LT_ETH, s_exthdrs },
    { "naks", "ACK, RNR NAK, and one NAK of each of the 5 codes", LT_ETH, s_naks },
    { "cnp", "ECN-CE marked WRITEs and CNPs back to the sender", LT_ETH, s_cnp },
    { "bad_icrc", "a few frames with a wrong ICRC among good ones", LT_ETH, s_bad_icrc },
    { "truncated", "frames cut by snaplen inside BTH, RETH, payload and ICRC", LT_ETH, s_truncated },
    { "lies", "inconsistent lengths: IP total length, UDP length, PadCnt 3 with no payload, short MAD", LT_ETH, s_lies },
    { "srcport69", "RC WRITE/ACK whose ACKs use UDP source port 69 (Wireshark shows TFTP)", LT_ETH, s_srcport69 },
    { "cm_full", "CM over QP1: REQ/REP/RTU, RC traffic, LAP/APR, DREQ/DREP; REQ/MRA/REJ; SIDR_REQ/SIDR_REP", LT_ETH, s_cm_full },
    { "clean_write", "RC WRITE 3000 B x5, MTU 1024, no loss", LT_ETH, s_clean_write },
    { "clean_read", "RC READs (multi-packet responses) and a WRITE, no loss", LT_ETH, s_clean_read },
    { "clean_send", "RC SEND / SEND w/Imm / SEND w/Inv, no loss", LT_ETH, s_clean_send },
    { "clean_atomic", "RC CMP_SWAP and FETCH_ADD with ATOMIC ACKs", LT_ETH, s_clean_atomic },
    { "nak_gbn", "RC WRITE stream, one packet lost before capture, NAK PSN seq err, go-back-N resend", LT_ETH, s_nak_gbn },
    { "timeout_resend", "RC WRITE, last packet of a message lost, no NAK, resend after 4 ms timeout", LT_ETH, s_timeout_resend },
    { "rnr", "RC SEND answered by RNR NAK (timer 0x0e), retried after 1.28 ms", LT_ETH, s_rnr },
    { "dup_capture", "one frame captured twice 1 us apart (identical bytes)", LT_ETH, s_dup_capture },
    { "coalesced_acks", "RC WRITE ONLY stream with one ACK per 8 packets", LT_ETH, s_coalesced_acks },
    { "dup_ack", "RC WRITE, an ACK lost after the capture point: timeout, resend, the same ACK again", LT_ETH, s_dup_ack },
    { "psn_wrap", "RC WRITE/READ stream crossing PSN 0xFFFFFF -> 0", LT_ETH, s_psn_wrap },
    { "cnp_ecn", "RC WRITE stream with a congestion episode: ECN-CE marks and rate-limited CNPs", LT_ETH, s_cnp_ecn },
    { "ud", "UD SENDs between two QP pairs", LT_ETH, s_ud },
    { "uc", "UC SEND and WRITE, no ACKs", LT_ETH, s_uc },
    { "cm_rc", "CM-paired RC: REQ/REP/RTU, WRITE/READ/SEND, DREQ/DREP", LT_ETH, s_cm_rc },
    { "traffic_rc", "same RC traffic as cm_rc but without CM", LT_ETH, s_traffic_rc },
    { "read_retry", "READ of 4 packets, 3rd response lost, READ re-issued from the missing PSN", LT_ETH, s_read_retry },
    { "multi_qp", "8 RC conversations interleaved", LT_ETH, s_multi_qp },
    /* messy captures (scen_messy.c) */
    { "merged_hosts", "captures of both hosts merged: every packet twice, 6 us apart, interleaved", LT_ETH, s_merged_hosts },
    { "read_fill_reissue", "tap at responder: READ lost before the tap, resent into the gap, re-issued from inside its range", LT_ETH, s_read_fill_reissue },
    { "read_reissue_mtu", "READ sent with the MTU unknown, 2nd response lost, re-issued as the next request", LT_ETH, s_read_reissue_mtu },
    { "read_reissue_fast", "READ's first response lost, the READ re-issued byte for byte 13 us after it", LT_ETH, s_read_reissue_fast },
    { "read_resp_lost", "two READ responses lost before the tap, READ re-issued from the first", LT_ETH, s_read_resp_lost },
    { "rnr_multi", "RNR NAK for a 3-packet SEND, all three resent 1.28 ms later", LT_ETH, s_rnr_multi },
    { "nak_lost_after_tap", "tap at responder: NAK captured but lost after the tap, timeout resend from below its PSN", LT_ETH, s_nak_lost_after_tap },
    { "cm_stranger", "a REP between two other hosts carries our REQ's comm ID; our REP/RTU and traffic follow", LT_ETH, s_cm_stranger },
    { "qpn_reuse", "QPNs reused: a second CM connection with PSNs millions back; without CM, a new PSN sequence after 2 s idle", LT_ETH, s_qpn_reuse },
    { "time_backwards", "capture clock steps back 2 s before a timeout resend with the same bytes", LT_ETH, s_time_backwards },
    /* lossless-network scenarios (scen_ecn.c) */
    { "lossless_ok", "VLAN 100: data and ACKs on priority 3, CE marks answered by CNPs on priority 6 / DSCP 48 within 3 us, CM path MTU 1024", LT_ETH, s_lossless_ok },
    { "ecn_no_cnp", "CE marks in three bursts, the receiver's CNPs stop after the first: 6 marks without CNP", LT_ETH, s_ecn_no_cnp },
    { "cnp_priority_bad", "CNPs on DSCP 46 (one conversation), CNPs on priority 6 and 3 by turns (another)", LT_ETH, s_cnp_priority_bad },
    { "mtu_mismatch", "CM path MTU 1024 but 2048-byte segments; a conversation whose sides write 4096- and 1024-byte segments", LT_ETH, s_mtu_mismatch },
    { "capture_incomplete", "requests and never an ACK (one direction missing); PSN gaps both ways, never re-sent", LT_ETH, s_capture_incomplete },
    { "fill_gbn", "tap in the middle: a WRITE lost before it, its NAK not captured; the go-back-N's first resend fills the gap, then the resends of what followed", LT_ETH, s_fill_gbn },
    /* go-back-N at hardware timing (scen_hw.c, issue 29) */
    { "hw_write_first_lost", "tap at the responder, hardware timing: a 5-packet WRITE's FIRST lost, NAK, 3 originals after it, go-back-N of all 5", LT_ETH, s_hw_write_first_lost },
    { "hw_send_inv", "hw_write_first_lost with a SEND ending in SEND LAST with Invalidate", LT_ETH, s_hw_send_inv },
    { "hw_vlan", "hw_write_first_lost behind 802.1Q (VID 100, PCP 3)", LT_ETH, s_hw_vlan },
    { "hw_ipv6", "hw_write_first_lost over IPv6", LT_ETH, s_hw_ipv6 },
    { "hw_snaplen", "hw_write_first_lost captured with a snap length of 128 bytes (no ICRC, payload cut)", LT_ETH, s_hw_snaplen },
    { "hw_psn_wrap", "hw_write_first_lost across PSN 0xFFFFFF -> 0 (the lost FIRST at 0xFFFFFE)", LT_ETH, s_hw_psn_wrap },
    { "hw_coalesced", "tap at the responder: WRITE ONLY x16, an ACK every 4; the 12th lost, NAK, 3 originals after it, go-back-N of 5", LT_ETH, s_hw_coalesced },
    { "hw_nak_same_us", "hw_write_first_lost with the NAK stamped in the same microsecond as the frame before it", LT_ETH, s_hw_nak_same_us },
    { "hw_mid_resend", "hw_write_first_lost's capture starting after the NAK: the late originals, then the whole go-back-N", LT_ETH, s_hw_mid_resend },
    { "hw_read_reissue_resp", "tap at the requester: READ 8 KB, 3rd response lost, READ re-issued while responses still arrive, response stream restarted at the lower PSN", LT_ETH, s_hw_read_reissue_resp },
    { "hw_nested_nak", "tap at the responder: go-back-N after a NAK, a resent packet lost again: a second NAK and go-back-N inside the first", LT_ETH, s_hw_nested_nak },
    { "hw_nested_timeout", "tap at the responder: go-back-N after a NAK, the resent LAST lost again: timeout resend inside the first go-back-N", LT_ETH, s_hw_nested_timeout },
    { "hw_nested_read", "tap at the requester: go-back-N after a NAK resends a READ; its 2nd response lost: READ re-issued inside the go-back-N", LT_ETH, s_hw_nested_read },
    { "hw_rnr_continue", "tap at the responder: RNR NAK for a SEND, the next messages arrive after it; the retry resends them too", LT_ETH, s_hw_rnr_continue },
    { "hw_rnr_continue_req", "hw_rnr_continue with the tap at the requester", LT_ETH, s_hw_rnr_continue_req },
    { "hw_read_middle_next", "tap at the requester: READ re-issued from its middle, a response, then the next outstanding READ resent: one episode", LT_ETH, s_hw_read_middle_next },
    { "hw_fill_resend", "tap in the middle, the NAK not captured: gap filler then the resends of the 4 PSNs after it", LT_ETH, s_hw_fill_resend },
    { "hw_copy_in_gbn", "hw_write_first_lost with a mirror copying one resent packet 0.3 us later", LT_ETH, s_hw_copy_in_gbn },
    { "hw_merged_nak", "captures of both hosts merged, a copy 2 us later: hw_write_first_lost's NAK and go-back-N", LT_ETH, s_hw_merged_nak },
    /* lossless network: PFC / PAUSE (scen_pfc.c) */
    { "pfc_stall", "RoCE on 802.1Q priority 3 and 1; PFC pauses on priority 3 stall the priority-3 conversation, the other sends on", LT_ETH, s_pfc_stall },
    { "pfc_mismatch", "RoCE on 802.1Q priority 3; PFC pauses only on priority 0 (PFC not enabled on the RoCE priority)", LT_ETH, s_pfc_mismatch },
    { "pause_8023x", "untagged RoCE; 802.3x PAUSE (all priorities) stalls it; a short and a cut MAC control frame", LT_ETH, s_pause_8023x },
    /* issue 29: verdicts decided at the end of the input */
    { "fill_end_many", "20 QPs, each ending with a PSN gap filler (out of order) that no later request decides: 20 verdicts at the end of the input", LT_ETH, s_fill_end_many },
    { "late_revision", "a PSN gap filler whose verdict (the first resend of a go-back-N) 300 frames of another QP later decide: more than qptrace packets holds", LT_ETH, s_late_revision },
};
const size_t n_scenarios = G_N_ELEMENTS(scenarios);
