/* qpscen: messy-capture scenarios (issue 14): merged captures, READ loss,
 * RNR on multi-packet messages, NAKs lost after the tap, clocks that step
 * back.  Each is written packet by packet on a timeline (what the hosts
 * did and where the tap sat), so the manifest is what was sent: every
 * emit() carries the truth about its packet in its flags. */
#include "qpscen.h"

#include <string.h>

#define US 1000ull
#define MIRROR_NS (6 * US) /* merged captures: the other host sees a packet this later */

static const path_t P4 = { LT_ETH, NET_IP4, 0, { 0, 0 }, 26, 2 };
#define VA_W 0x7f2000000000ull
#define VA_R 0x7f3000000000ull

/* One RC conversation A (requester) -> B, MTU 1024. */
typedef struct {
    ctx_t *c;
    conv_t *cv;
    ep_t A, B;
    int mirror; /* captured on both hosts and merged */
    uint16_t req_ipid; /* nonzero: every request carries this IP ID (DF set) */
} lk_t;



static void lk_init(ctx_t *c, lk_t *l, uint32_t qa, uint32_t qb)
{
    memset(l, 0, sizeof *l);
    l->c = c;
    ep_v4(&l->A, 10, 0, 0, 1, qa);
    ep_v4(&l->B, 10, 0, 0, 2, qb);
    l->cv = conv_new(c, "RC", "traffic", &l->A, &l->B);
    l->cv->extra = 1;
}

/* Queue packet p of direction dir at time t (ns since the start). */
static void put(lk_t *l, uint64_t t, pkt_t *p, int dir, unsigned fl, uint32_t miss)
{
    if (!p->ipid && dir == 0 && l->req_ipid)
        p->ipid = l->req_ipid;
    if (!p->ipid)
        p->ipid = ++l->c->ipid; /* a copy keeps the IP ID: same ICRC */
    emit_queue(l->c, t, p, l->cv, dir, fl, miss);
    if (l->mirror)
        emit_queue(l->c, t + MIRROR_NS, p, l->cv, dir, F_DUP, 0);
}

/* Write the queue in time order (sorted: raw_time scenarios emit as queued). */
static void flush(ctx_t *c, int sort)
{
    emit_flush(c, c->t, sort);
}

static pkt_t rq(lk_t *l, uint8_t opc, uint32_t psn, uint32_t paylen, int ackreq, uint64_t va,
                uint32_t len)
{
    pkt_t p;
    pkt_init(&p);
    pkt_addr(&p, &P4, &l->A, &l->B);
    p.opcode = opc;
    p.dqp = l->B.qpn;
    p.psn = psn & PSN_MASK;
    p.ackreq = (uint8_t)ackreq;
    p.paylen = paylen;
    p.payseed = psn;
    p.reth_va = va;
    p.reth_rkey = 0x1234;
    p.reth_len = len;
    return p;
}

static pkt_t rs(lk_t *l, uint8_t opc, uint32_t psn, uint32_t paylen, uint8_t syn, uint32_t msn)
{
    pkt_t p;
    pkt_init(&p);
    pkt_addr(&p, &P4, &l->B, &l->A);
    p.opcode = opc;
    p.dqp = l->A.qpn;
    p.psn = psn & PSN_MASK;
    p.paylen = paylen;
    p.payseed = psn ^ 0x55;
    p.aeth_syn = syn;
    p.aeth_msn = msn;
    return p;
}

static void req(lk_t *l, uint64_t t_us, uint8_t opc, uint32_t psn, uint32_t paylen, int ackreq,
                uint64_t va, uint32_t len, unsigned fl, uint32_t miss)
{
    pkt_t p = rq(l, opc, psn, paylen, ackreq, va, len);
    put(l, t_us * US, &p, 0, fl, miss);
}

static void rsp(lk_t *l, uint64_t t_us, uint8_t opc, uint32_t psn, uint32_t paylen, uint8_t syn,
                uint32_t msn, unsigned fl, uint32_t miss)
{
    pkt_t p = rs(l, opc, psn, paylen, syn, msn);
    put(l, t_us * US, &p, 1, fl, miss);
}

#define ACK(l, t, psn, msn) rsp(l, t, OP_ACK, psn, 0, 0x1F, msn, 0, 0)

/* Case 6: both hosts captured, the files merged: every packet twice, the
 * second copy 6 us later, interleaved with the next packets. */
void s_merged_hosts(ctx_t *c)
{
    lk_t l;
    uint32_t P = 0x062000;
    lk_init(c, &l, 0x11, 0x12);
    l.mirror = 1;
    req(&l, 10, OP_WRITE_FIRST, P, 1024, 0, VA_W, 3000, 0, 0);
    req(&l, 12, OP_WRITE_MIDDLE, P + 1, 1024, 0, 0, 0, 0, 0);
    req(&l, 14, OP_WRITE_LAST, P + 2, 952, 1, 0, 0, 0, 0);
    req(&l, 16, OP_WRITE_ONLY, P + 3, 512, 1, VA_W + 0x10000, 512, 0, 0);
    req(&l, 18, OP_READ_REQ, P + 4, 0, 0, VA_R, 2048, 0, 0);
    ACK(&l, 21, P + 2, 1);
    ACK(&l, 23, P + 3, 2);
    rsp(&l, 25, OP_READ_RESP_FIRST, P + 4, 1024, 0x1F, 3, 0, 0);
    rsp(&l, 27, OP_READ_RESP_LAST, P + 5, 1024, 0x1F, 3, 0, 0);
    req(&l, 30, OP_SEND_ONLY, P + 6, 100, 1, 0, 0, 0, 0);
    req(&l, 32, OP_WRITE_ONLY, P + 7, 1024, 1, VA_W + 0x20000, 1024, 0, 0);
    ACK(&l, 37, P + 6, 4);
    ACK(&l, 39, P + 7, 5);
    flush(c, 1);
}

/* Case 1: tap at the responder.  The READ at P+2 is lost before the tap,
 * the WRITE after it draws a NAK; the resent READ fills the gap, its 3rd
 * response (captured) is lost after the tap, and the requester re-issues
 * the READ from inside its range. */
void s_read_fill_reissue(ctx_t *c)
{
    lk_t l;
    uint32_t P = 0x063000;
    lk_init(c, &l, 0x11, 0x12);
    req(&l, 10, OP_WRITE_FIRST, P, 1024, 0, VA_W, 2048, 0, 0);
    req(&l, 12, OP_WRITE_LAST, P + 1, 1024, 1, 0, 0, 0, 0);
    ACK(&l, 13, P + 1, 1);
    /* READ 4096 at P+2 (P+2..P+5): lost before the tap */
    req(&l, 16, OP_WRITE_ONLY, P + 6, 512, 1, VA_W + 0x10000, 512, 0, 4);
    rsp(&l, 17, OP_ACK, P + 2, 0, 0x60, 1, 0, 0); /* NAK PSN sequence error */
    req(&l, 28, OP_READ_REQ, P + 2, 0, 0, VA_R, 4096, F_RETRANS | F_COUNTMSG | F_GBN | F_TNAK, 0);
    rsp(&l, 29, OP_READ_RESP_FIRST, P + 2, 1024, 0x1F, 2, 0, 0);
    req(&l, 30, OP_WRITE_ONLY, P + 6, 512, 1, VA_W + 0x10000, 512, F_RETRANS, 0);
    rsp(&l, 31, OP_READ_RESP_MIDDLE, P + 3, 1024, 0, 2, 0, 0);
    rsp(&l, 33, OP_READ_RESP_MIDDLE, P + 4, 1024, 0, 2, 0, 0); /* lost after the tap */
    rsp(&l, 35, OP_READ_RESP_LAST, P + 5, 1024, 0x1F, 2, 0, 0);
    ACK(&l, 36, P + 6, 3);
    req(&l, 46, OP_READ_REQ, P + 4, 0, 0, VA_R + 2048, 2048,
        F_RETRANS | F_GBN | F_TRR | F_RREISSUE, 0);
    rsp(&l, 47, OP_READ_RESP_FIRST, P + 4, 1024, 0x1F, 3, F_RETRANS, 0);
    rsp(&l, 49, OP_READ_RESP_LAST, P + 5, 1024, 0x1F, 3, F_RETRANS, 0);
    req(&l, 60, OP_WRITE_ONLY, P + 7, 1024, 1, VA_W + 0x20000, 1024, 0, 0);
    ACK(&l, 61, P + 7, 4);
    flush(c, 1);
}

/* Case 2 (and 4): tap at the requester, no CM; the READ is the first
 * packet, so its range cannot be known when it is sent.  Response P+1 is
 * lost before the tap; the requester re-issues from P+1, its next request. */
void s_read_reissue_mtu(ctx_t *c)
{
    lk_t l;
    uint32_t P = 0x064000;
    lk_init(c, &l, 0x11, 0x12);
    req(&l, 10, OP_READ_REQ, P, 0, 0, VA_R, 4096, 0, 0);
    rsp(&l, 20, OP_READ_RESP_FIRST, P, 1024, 0x1F, 1, 0, 0);
    /* P+1 (MIDDLE) lost before the tap */
    rsp(&l, 24, OP_READ_RESP_MIDDLE, P + 2, 1024, 0, 1, 0, 1);
    req(&l, 25, OP_READ_REQ, P + 1, 0, 0, VA_R + 1024, 3072,
        F_RETRANS | F_GBN | F_TRR | F_RREISSUE, 0);
    rsp(&l, 26, OP_READ_RESP_LAST, P + 3, 1024, 0x1F, 1, 0, 0);
    rsp(&l, 36, OP_READ_RESP_FIRST, P + 1, 1024, 0x1F, 1, F_RETRANS, 0);
    rsp(&l, 38, OP_READ_RESP_MIDDLE, P + 2, 1024, 0, 1, F_RETRANS, 0);
    rsp(&l, 40, OP_READ_RESP_LAST, P + 3, 1024, 0x1F, 1, F_RETRANS, 0);
    req(&l, 50, OP_WRITE_ONLY, P + 4, 1024, 1, VA_W, 1024, 0, 0);
    ACK(&l, 62, P + 4, 2);
    flush(c, 1);
}

/* Case 3 (and 4): tap at the requester.  The first response of a READ is
 * lost before the tap; 1 us after the second one came the requester
 * re-issues the READ, byte for byte the same: the requester sends every
 * packet with one IP ID (0xffff), as hardware with DF set may (with IDs
 * that count, a re-issue has an ID of its own). */
void s_read_reissue_fast(ctx_t *c)
{
    lk_t l;
    uint32_t P = 0x065000;
    pkt_t p;
    lk_init(c, &l, 0x11, 0x12);
    l.req_ipid = 0xffff;
    req(&l, 10, OP_WRITE_FIRST, P, 1024, 0, VA_W, 2048, 0, 0);
    req(&l, 12, OP_WRITE_LAST, P + 1, 1024, 1, 0, 0, 0, 0);
    ACK(&l, 24, P + 1, 1);
    p = rq(&l, OP_READ_REQ, P + 2, 0, 0, VA_R, 4096);
    p.ipid = 0xffff; /* the same on the re-issue */
    put(&l, 30 * US, &p, 0, 0, 0);
    /* response P+2 (FIRST) lost before the tap */
    rsp(&l, 42, OP_READ_RESP_MIDDLE, P + 3, 1024, 0, 2, 0, 1);
    p = rq(&l, OP_READ_REQ, P + 2, 0, 0, VA_R, 4096);
    p.ipid = 0xffff;
    put(&l, 43 * US, &p, 0, F_RETRANS | F_GBN | F_TRR | F_RREISSUE, 0);
    rsp(&l, 44, OP_READ_RESP_MIDDLE, P + 4, 1024, 0, 2, 0, 0);
    rsp(&l, 46, OP_READ_RESP_LAST, P + 5, 1024, 0x1F, 2, 0, 0);
    rsp(&l, 55, OP_READ_RESP_FIRST, P + 2, 1024, 0x1F, 2, F_RETRANS, 0);
    rsp(&l, 57, OP_READ_RESP_MIDDLE, P + 3, 1024, 0, 2, F_RETRANS, 0);
    rsp(&l, 59, OP_READ_RESP_MIDDLE, P + 4, 1024, 0, 2, F_RETRANS, 0);
    rsp(&l, 61, OP_READ_RESP_LAST, P + 5, 1024, 0x1F, 2, F_RETRANS, 0);
    req(&l, 70, OP_WRITE_ONLY, P + 6, 1024, 1, VA_W + 0x10000, 1024, 0, 0);
    ACK(&l, 82, P + 6, 3);
    flush(c, 1);
}

/* Case 4: tap at the requester; two responses in the middle of an 8-packet
 * READ are lost before the tap, the requester re-issues from the first. */
void s_read_resp_lost(ctx_t *c)
{
    lk_t l;
    uint32_t P = 0x066000;
    lk_init(c, &l, 0x11, 0x12);
    req(&l, 10, OP_WRITE_FIRST, P, 1024, 0, VA_W, 2048, 0, 0);
    req(&l, 12, OP_WRITE_LAST, P + 1, 1024, 1, 0, 0, 0, 0);
    ACK(&l, 24, P + 1, 1);
    req(&l, 30, OP_READ_REQ, P + 2, 0, 0, VA_R, 8192, 0, 0);
    rsp(&l, 40, OP_READ_RESP_FIRST, P + 2, 1024, 0x1F, 2, 0, 0);
    rsp(&l, 42, OP_READ_RESP_MIDDLE, P + 3, 1024, 0, 2, 0, 0);
    /* P+4 and P+5 lost before the tap */
    rsp(&l, 48, OP_READ_RESP_MIDDLE, P + 6, 1024, 0, 2, 0, 2);
    req(&l, 49, OP_READ_REQ, P + 4, 0, 0, VA_R + 2048, 6144,
        F_RETRANS | F_GBN | F_TRR | F_RREISSUE, 0);
    rsp(&l, 50, OP_READ_RESP_MIDDLE, P + 7, 1024, 0, 2, 0, 0);
    rsp(&l, 52, OP_READ_RESP_MIDDLE, P + 8, 1024, 0, 2, 0, 0);
    rsp(&l, 54, OP_READ_RESP_LAST, P + 9, 1024, 0x1F, 2, 0, 0);
    for (uint32_t k = 4; k <= 9; k++)
        rsp(&l, 60 + 2 * (k - 4), k == 4 ? OP_READ_RESP_FIRST : k == 9 ? OP_READ_RESP_LAST
            : OP_READ_RESP_MIDDLE, P + k, 1024, k == 4 || k == 9 ? 0x1F : 0, 2, F_RETRANS, 0);
    req(&l, 80, OP_WRITE_ONLY, P + 10, 1024, 1, VA_W + 0x10000, 1024, 0, 0);
    ACK(&l, 92, P + 10, 3);
    flush(c, 1);
}

/* Case 7: an RNR NAK for a 3-packet SEND; all three are resent 1.28 ms
 * later (the sim: rc_rnr). */
void s_rnr_multi(ctx_t *c)
{
    ep_t a, b;
    ep_v4(&a, 10, 0, 0, 1, 0x11);
    ep_v4(&b, 10, 0, 0, 2, 0x12);
    conv_t *cv = conv_new(c, "RC", "traffic", &a, &b);
    cv->extra = 1;
    rc_t *r = rc_new(c, cv, &P4, &a, &b, 0x067000, 1024);
    for (int i = 0; i < 3; i++)
        rc_msg(r, MO_SEND, 3000);
    rc_opts(r, 1, 1, 0);
    rc_rnr(r, 1);
    rc_start(r, c->t + 2000);
    sim_run(c);
    rc_free(r);
}

/* Case 9: tap at the responder.  P+4 is lost before the tap; the NAK for
 * it is captured but lost after the tap, so the requester never sees it
 * and resends from its oldest unacknowledged PSN (P+3) after 4 ms. */
void s_nak_lost_after_tap(ctx_t *c)
{
    lk_t l;
    uint32_t P = 0x068000;
    lk_init(c, &l, 0x11, 0x12);
    req(&l, 10, OP_WRITE_FIRST, P, 1024, 0, VA_W, 3000, 0, 0);
    req(&l, 12, OP_WRITE_MIDDLE, P + 1, 1024, 0, 0, 0, 0, 0);
    req(&l, 14, OP_WRITE_LAST, P + 2, 952, 1, 0, 0, 0, 0);
    ACK(&l, 15, P + 2, 1);
    req(&l, 20, OP_WRITE_FIRST, P + 3, 1024, 0, VA_W + 0x10000, 3000, 0, 0);
    /* P+4 lost before the tap */
    req(&l, 24, OP_WRITE_LAST, P + 5, 952, 1, 0, 0, 0, 1);
    rsp(&l, 25, OP_ACK, P + 4, 0, 0x60, 1, 0, 0); /* NAK, lost after the tap */
    req(&l, 4024, OP_WRITE_FIRST, P + 3, 1024, 0, VA_W + 0x10000, 3000,
        F_RETRANS | F_GBN | F_TMO, 0);
    req(&l, 4026, OP_WRITE_MIDDLE, P + 4, 1024, 0, 0, 0, F_RETRANS, 0);
    req(&l, 4028, OP_WRITE_LAST, P + 5, 952, 1, 0, 0, F_RETRANS, 0);
    ACK(&l, 4029, P + 5, 2);
    flush(c, 1);
}

/* Case 11: tap at the requester; the capture clock steps back 2 s between
 * a WRITE whose ACK was lost before the tap and its timeout resend (same
 * bytes, IP ID 0). */
void s_time_backwards(ctx_t *c)
{
    lk_t l;
    uint32_t P = 0x069000;
    uint64_t t0 = 3000000; /* us: room to step back */
    pkt_t p;
    lk_init(c, &l, 0x11, 0x12);
    for (uint32_t i = 0; i < 3; i++) {
        req(&l, t0 + 10 + 20 * i, OP_WRITE_ONLY, P + i, 1024, 1, VA_W + i * 0x10000, 1024, 0, 0);
        ACK(&l, t0 + 22 + 20 * i, P + i, i + 1);
    }
    p = rq(&l, OP_WRITE_ONLY, P + 3, 1024, 1, VA_W + 0x30000, 1024);
    p.ipid = 0xffff;
    put(&l, (t0 + 70) * US, &p, 0, 0, 0);
    /* its ACK is lost before the tap; the clock steps back 2 s */
    uint64_t t1 = t0 + 70 + 4000 - 2000000;
    /* a timeout resend, but a capture whose clock stepped back cannot show
     * the silence: no trigger in the manifest ("?") */
    put(&l, t1 * US, &p, 0, F_RETRANS | F_GBN, 0);
    ACK(&l, t1 + 12, P + 3, 4);
    req(&l, t1 + 30, OP_WRITE_ONLY, P + 4, 1024, 1, VA_W + 0x40000, 1024, 0, 0);
    ACK(&l, t1 + 42, P + 4, 5);
    c->raw_time = 1;
    flush(c, 0);
    c->raw_time = 0;
}

#define GUID_1 0x0002c90300c1d2e1ull
#define GUID_2 0x0002c90300c1d2e2ull

/* CM REQ/REP/RTU between m's two ends for conversation cv. */
static void cm_connect2(ctx_t *c, madctx_t *m, conv_t *cv, const ep_t *a, const ep_t *b,
                    uint32_t ida, uint32_t idb, uint32_t psn_a, uint32_t psn_b, uint64_t tid)
{
    uint8_t d[232];
    cm_req(d, ida, 7174, GUID_1, a, b, psn_a);
    mad_send(c, m, 0, CM_REQ, tid, d, cv);
    cm_rep(d, idb, ida, GUID_2, b, psn_b);
    mad_send(c, m, 1, CM_REP, tid, d, cv);
    cm_ids(d, ida, idb);
    mad_send(c, m, 0, CM_RTU, tid, d, cv);
}

/* Case 10: a REQ from 10.0.0.1 QP 0x100 to 10.0.0.2; before its REP, a REP
 * between 10.0.0.4 and 10.0.0.3 (its REQ not captured) whose own comm ID
 * equals our REQ's; then our REP (QP 0x200), RTU and RC traffic. */
void s_cm_stranger(ctx_t *c)
{
    ep_t a, b, s3, s4;
    madctx_t m, ms;
    uint8_t d[232];
    ep_v4(&a, 10, 0, 0, 1, 0x100);
    ep_v4(&b, 10, 0, 0, 2, 0x200);
    ep_v4(&s3, 10, 0, 0, 3, 0x300);
    ep_v4(&s4, 10, 0, 0, 4, 0x400);
    mad_init(c, &m, &P4, &a, &b);
    mad_init(c, &ms, &P4, &s3, &s4);
    conv_t *cv = conv_new(c, "RC", "cm", &a, &b);
    cv->extra = 1;
    cm_req(d, 0x1000A001, 7174, GUID_1, &a, &b, 0x06a000);
    mad_send(c, &m, 0, CM_REQ, 0x11, d, cv);
    cm_rep(d, 0x1000A001, 0x3000C001, GUID_2, &s4, 0x44a000); /* the stranger */
    mad_send(c, &ms, 1, CM_REP, 0x77, d, NULL);
    cm_rep(d, 0x2000B001, 0x1000A001, GUID_2, &b, 0x06b000);
    mad_send(c, &m, 1, CM_REP, 0x11, d, cv);
    cm_ids(d, 0x1000A001, 0x2000B001);
    mad_send(c, &m, 0, CM_RTU, 0x11, d, cv);
    rc_t *r = rc_new(c, cv, &P4, &a, &b, 0x06a000, 1024);
    rc_msg(r, MO_WRITE, 3000);
    rc_msg(r, MO_READ, 2048);
    rc_msg(r, MO_SEND, 100);
    rc_start(r, c->t + 2000);
    sim_run(c);
    rc_free(r);
}

/* Case 8: QPNs 0x11/0x12 serve two CM connections, the second starting
 * millions of PSNs below the first; QPNs 0x21/0x22 (no CM captured) start
 * a new sequence after 2 s of silence. */
void s_qpn_reuse(ctx_t *c)
{
    ep_t a, b;
    madctx_t m;
    uint8_t d[232];
    ep_v4(&a, 10, 0, 0, 1, 0x11);
    ep_v4(&b, 10, 0, 0, 2, 0x12);
    mad_init(c, &m, &P4, &a, &b);
    for (int k = 0; k < 2; k++) {
        uint32_t psn = k ? 0x100000 : 0x700000;
        conv_t *cv = conv_new(c, "RC", "cm", &a, &b);
        cv->extra = 1;
        cm_connect2(c, &m, cv, &a, &b, 0x1000A001u + (uint32_t)k, 0x2000B001u + (uint32_t)k, psn,
                psn + 0x10000, 0x20 + (uint64_t)k);
        rc_t *r = rc_new(c, cv, &P4, &a, &b, psn, 1024);
        rc_msg(r, MO_WRITE, 3000);
        rc_msg(r, MO_READ, 2048);
        rc_msg(r, MO_WRITE, 1024);
        rc_start(r, c->t + 2000);
        sim_run(c);
        rc_free(r);
        cm_ids(d, 0x1000A001u + (uint32_t)k, 0x2000B001u + (uint32_t)k);
        put24(d + 8, b.qpn);
        mad_send(c, &m, 0, CM_DREQ, 0x30 + (uint64_t)k, d, cv);
        cm_ids(d, 0x2000B001u + (uint32_t)k, 0x1000A001u + (uint32_t)k);
        mad_send(c, &m, 1, CM_DREP, 0x30 + (uint64_t)k, d, cv);
        c->t += 50000000; /* 50 ms */
    }
    lk_t l;
    lk_init(c, &l, 0x21, 0x22);
    for (uint32_t k = 0; k < 2; k++) {
        uint32_t P = k ? 0x080000 : 0x900000;
        uint64_t t0 = k ? 2000000 : 0; /* us */
        for (uint32_t i = 0; i < 3; i++) {
            req(&l, t0 + 10 + 20 * i, OP_WRITE_ONLY, P + i, 1024, 1, VA_W + i * 0x10000, 1024,
                k && !i ? F_NEWSEQ : 0, 0);
            ACK(&l, t0 + 22 + 20 * i, P + i, i + 1);
        }
    }
    flush(c, 1);
}

/* fill_gbn's QP: its WRITE at P+1 lost before the tap, the NAK for it not
 * captured; the requester goes back to P+1 (the filler, at 40 us), then
 * resends P+2 and P+3 (at resend_us). */
static void fill_gbn_qp(lk_t *l, uint32_t P, uint64_t resend_us)
{
    req(l, 10, OP_WRITE_ONLY, P, 512, 1, VA_W, 512, 0, 0);
    ACK(l, 14, P, 1);
    /* P+1 lost before the tap */
    req(l, 20, OP_WRITE_ONLY, P + 2, 512, 1, VA_W + 0x20000, 512, 0, 1);
    req(l, 22, OP_WRITE_ONLY, P + 3, 512, 1, VA_W + 0x30000, 512, 0, 0);
    /* the NAK for P+1: not in the capture */
    req(l, 40, OP_WRITE_ONLY, P + 1, 512, 1, VA_W + 0x10000, 512,
        F_RETRANS | F_GBN | F_TRS | F_COUNTMSG, 0);
    req(l, resend_us, OP_WRITE_ONLY, P + 2, 512, 1, VA_W + 0x20000, 512, F_RETRANS, 0);
    req(l, resend_us + 2, OP_WRITE_ONLY, P + 3, 512, 1, VA_W + 0x30000, 512, F_RETRANS, 0);
    ACK(l, resend_us + 6, P + 3, 4);
}

/* Case 5: a tap in the middle.  The WRITE at P+1 is lost before it, the
 * NAK the responder sends for it is not captured (the capture dropped it);
 * the requester goes back to P+1: the filler comes first, then the resends
 * of P+2 and P+3 that the capture saw before. */
void s_fill_gbn(ctx_t *c)
{
    lk_t l;
    lk_init(c, &l, 0x11, 0x12);
    fill_gbn_qp(&l, 0x06C000, 42);
    flush(c, 1);
}

/* Issue 29: 20 QPs, each ending with a gap filler that nothing decides.
 * On each, WRITE P is ACKed; P+1 is held back before the tap, so WRITE
 * P+2 comes first (a PSN gap); then P+1 comes, reordered, as the QP's last
 * request: no NAK, no silence, no request after it.  Its verdict (out of
 * order) is decided at the end of the input, for all 20 at once.  The QPs
 * are interleaved: the last 20 frames are the fillers. */
void s_fill_end_many(ctx_t *c)
{
    enum { NQ = 20 };
    lk_t l[NQ];
    for (uint32_t i = 0; i < NQ; i++)
        lk_init(c, &l[i], 0x100 + i, 0x200 + i);
    for (uint32_t i = 0; i < NQ; i++) {
        uint32_t P = 0x100000 + i * 0x1000;
        req(&l[i], 10 + i, OP_WRITE_ONLY, P, 512, 1, VA_W, 512, 0, 0);
        ACK(&l[i], 40 + i, P, 1);
        /* P+1 held back before the tap */
        req(&l[i], 70 + i, OP_WRITE_ONLY, P + 2, 512, 1, VA_W + 0x20000, 512, 0, 1);
        req(&l[i], 100 + i, OP_WRITE_ONLY, P + 1, 512, 1, VA_W + 0x10000, 512, F_OOO, 0);
    }
    flush(c, 1);
}

/* Issue 29: a verdict decided longer after its frame than `qptrace
 * packets` holds frames (256).  As fill_gbn: QP 0x41's WRITE at P+1 is
 * lost before the tap and the NAK for it not captured; the requester goes
 * back to P+1 (the filler), and 300 frames of another QP (0x43: WRITEs
 * and their ACKs, 100 ns apart) come before its resends of P+2 and P+3,
 * which decide that the filler was the first resend of a go-back-N. */
void s_late_revision(ctx_t *c)
{
    lk_t a, b;
    uint32_t Q = 0x0B0000;
    lk_init(c, &a, 0x41, 0x42);
    lk_init(c, &b, 0x43, 0x44);
    fill_gbn_qp(&a, 0x0A0000, 200);
    for (uint32_t i = 0; i < 150; i++) {
        pkt_t w = rq(&b, OP_WRITE_ONLY, Q + i, 64, 1, VA_W + (uint64_t)i * 0x100, 64);
        pkt_t k = rs(&b, OP_ACK, Q + i, 0, 0x1F, i + 1);
        put(&b, 41 * US + (uint64_t)i * 200, &w, 0, 0, 0);
        put(&b, 41 * US + (uint64_t)i * 200 + 100, &k, 1, 0, 0);
    }
    flush(c, 1);
}
