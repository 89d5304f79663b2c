/* qpscen: lossless-network scenarios (issue 18): 802.1Q priorities and
 * DSCPs, ECN-CE marks and the CNPs that answer them, the sender's rate
 * around CNPs, MTUs, captures that miss a direction or packets.
 *
 * Each conversation is written on a timeline (whole microseconds, no
 * jitter: the pcap keeps microseconds) by a small model of the two hosts:
 *   - A sends WRITE packets every 2 us; for 100 us after a CNP it reached
 *     it sends every 4 us (the reaction point slows down);
 *   - B ACKs every 4th packet (AckReq) 3 us after it;
 *   - the switch marks chosen packets ECN-CE; B, the notification point,
 *     answers a marked packet with a CNP to A's QP cnp_delay later, unless
 *     it sent one less than cnp_interval before (the NIC's CNP timer: the
 *     mark is covered by that CNP) or its CNPs are off for that mark.
 * The manifest's "lossless" object is what the model did: the reaction
 * time of each CNP (its time - the first mark since the previous CNP), the
 * marks no CNP answered, the marks the timer covered, the sender's bytes
 * in the rate window before and after each CNP, the findings the capture
 * must and must not give.  The PCP/DSCP counts come from emit.c. */
#include "qpscen.h"

#include <string.h>

#define US 1000ull
#define RATE_WIN (100 * US) /* qptrace's default --cnp rate window */


typedef struct {
    ctx_t *c;
    conv_t *cv;
    ep_t A, B;
    path_t P;
    uint64_t base;              /* ns: the timeline's 0 */
    int pcp_data, pcp_ack;      /* -1: untagged */
    int cnp_pcp[2], cnp_dscp;   /* CNPs alternate between the two PCPs */
    uint64_t cnp_delay, cnp_interval;
    uint32_t psn_a, psn_b, msn_b, msn_a;
    /* the model's state and truth */
    int have_cnp, ncnp;
    uint64_t last_cnp;
    GArray *reaction;           /* uint64 ns */
    uint64_t ce_no_cnp, ce_covered;
    GArray *data_t, *data_len, *cnp_t; /* uint64 */
    uint64_t slow_until;
    uint64_t t0;                /* stream() starts here on the timeline */
    uint64_t first_ack;         /* B's first ACK (0: none yet) */
    int have_ack;
} ln_t;


static void ln_init(ctx_t *c, ln_t *l, uint32_t qa, uint32_t qb, const char *pairing)
{
    memset(l, 0, sizeof *l);
    l->c = c;
    ep_v4(&l->A, 10, 0, 0, 1, qa);
    ep_v4(&l->B, 10, 0, 0, 2, qb);
    l->P = (path_t){ LT_ETH, NET_IP4, 1, { 100, 0 }, 26, 2, 0, 0 };
    l->cv = conv_new(c, "RC", pairing, &l->A, &l->B);
    l->cv->qos = 1;
    l->pcp_data = l->pcp_ack = 3;
    l->cnp_pcp[0] = l->cnp_pcp[1] = 6;
    l->cnp_dscp = 48;
    l->cnp_delay = 3 * US;
    l->cnp_interval = 50 * US;
    l->psn_a = 0x010000 + qa * 0x100;
    l->psn_b = 0x020000 + qb * 0x100;
    l->reaction = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    l->data_t = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    l->data_len = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    l->cnp_t = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    /* the timeline starts on a whole microsecond after what came before */
    l->base = (c->t / US + 20) * US;
}

static void ln_free(ln_t *l)
{
    g_array_free(l->reaction, TRUE);
    g_array_free(l->data_t, TRUE);
    g_array_free(l->data_len, TRUE);
    g_array_free(l->cnp_t, TRUE);
}

static void put(ln_t *l, uint64_t t, const pkt_t *p, int dir, unsigned fl, uint32_t miss)
{
    emit_queue(l->c, l->base + t, p, l->cv, dir, fl, miss);
}

/* Write every queued packet in time order. */
static void flush(ctx_t *c)
{
    emit_flush(c, 0, 1);
}

static pkt_t mkp(ln_t *l, int dir, uint8_t opc, uint32_t psn, int pcp)
{
    pkt_t p;
    pkt_init(&p);
    pkt_addr(&p, &l->P, dir ? &l->B : &l->A, dir ? &l->A : &l->B);
    p.pcp = (uint8_t)(pcp < 0 ? 0 : pcp);
    if (pcp < 0)
        p.nvlan = 0;
    p.opcode = opc;
    p.dqp = dir ? l->A.qpn : l->B.qpn;
    p.psn = psn & PSN_MASK;
    p.payseed = psn ^ (uint32_t)dir;
    return p;
}

/* A WRITE packet of direction dir on the data priority (its RETH: va,
 * rkey, len, in every packet, as the generator writes them). */
static pkt_t mkw(ln_t *l, int dir, uint8_t opc, uint32_t psn, uint32_t paylen, uint64_t va,
                 uint32_t rkey, uint32_t len, int ackreq)
{
    pkt_t p = mkp(l, dir, opc, psn, l->pcp_data);
    p.paylen = paylen;
    p.reth_va = va;
    p.reth_rkey = rkey;
    p.reth_len = len;
    p.ackreq = (uint8_t)ackreq;
    return p;
}

/* B's CNP to A's QP at time t (us on the timeline). */
static void cnp(ln_t *l, uint64_t t, int dscp)
{
    pkt_t p = mkp(l, 1, OPC_CNP, 0, l->cnp_pcp[l->ncnp & 1]);
    p.becn = 1;
    p.tclass = (uint8_t)(dscp << 2);
    put(l, t, &p, 1, 0, 0);
    g_array_append_val(l->cnp_t, t);
    l->ncnp++;
}

/* A WRITE stream of n packets of seg bytes each (messages of per_msg
 * packets), A->B; marks: indexes CE-marked; np_off(i): B sends no CNP for
 * mark i.  Returns the timeline's end (ns). */
typedef int (*mark_fn)(int i);
typedef int (*off_fn)(int i);

static uint64_t stream(ln_t *l, int n, uint32_t seg, int per_msg, mark_fn marked, off_fn np_off)
{
    uint64_t t = l->t0;
    uint8_t buf[MAX_FRAME];
    for (int i = 0; i < n; i++) {
        int k = i % per_msg;
        uint8_t o = per_msg == 1 ? OP_WRITE_ONLY : k == 0 ? OP_WRITE_FIRST
                  : k == per_msg - 1 ? OP_WRITE_LAST : OP_WRITE_MIDDLE;
        int ack = (i % 4 == 3) || i == n - 1;
        pkt_t p = mkw(l, 0, o, l->psn_a, seg, 0x7f4000000000ull + (uint64_t)(i - k) * seg,
                      0x4321, seg * (uint32_t)per_msg, ack && (k == per_msg - 1));
        int ce = marked && marked(i);
        if (ce)
            p.tclass = (uint8_t)(l->P.dscp << 2 | 3);
        put(l, t, &p, 0, 0, 0);
        /* the RoCE packet: BTH to ICRC (the frame less Ethernet, its
         * tag, IPv4 and UDP), as qptrace counts the rate */
        uint64_t len = pkt_build(&p, buf) - (14 + 4 * (uint64_t)p.nvlan + 20 + 8);
        g_array_append_val(l->data_t, t);
        g_array_append_val(l->data_len, len);
        if (p.ackreq) {
            pkt_t a = mkp(l, 1, OP_ACK, l->psn_a, l->pcp_ack);
            a.aeth_syn = 0x1F;
            a.aeth_msn = ++l->msn_b;
            put(l, t + 3 * US, &a, 1, 0, 0);
            if (!l->have_ack) {
                l->have_ack = 1;
                l->first_ack = t + 3 * US;
            }
        }
        if (ce) {
            /* the notification point */
            if (np_off && np_off(i)) {
                l->ce_no_cnp++;
            } else if (l->have_cnp && t - l->last_cnp < l->cnp_interval) {
                l->ce_covered++;
            } else {
                /* the first mark since the last CNP (the bursts are far
                 * apart: the marks the timer covered are long expired) */
                uint64_t ct = t + l->cnp_delay;
                uint64_t r = ct - t;
                g_array_append_val(l->reaction, r);
                l->have_cnp = 1;
                l->last_cnp = ct;
                cnp(l, ct, l->cnp_dscp);
                l->slow_until = ct + 100 * US;
            }
        }
        l->psn_a = psn_add(l->psn_a, 1);
        t += t < l->slow_until ? 4 * US : 2 * US;
    }
    return t;
}

/* The manifest's "lossless" object of the A->B stream. */
static void truth(ln_t *l, uint64_t end, const char *present, const char *absent)
{
    GString *s = g_string_new("{\"a_to_b\": {");
    uint64_t before = 0, after = 0, windows = 0, cut = 0;
    for (guint k = 0; k < l->cnp_t->len; k++) {
        uint64_t c = g_array_index(l->cnp_t, uint64_t, k);
        /* a CNP before the QP's first ACK: qptrace pairs a traffic-paired
         * QP's two directions at that ACK and gives the CNPs before it no
         * rate window (README: lossless network) */
        if (!strcmp(l->cv->pairing, "traffic") && (!l->have_ack || c < l->first_ack))
            continue;
        if (c + RATE_WIN > end) {
            cut++;
            continue;
        }
        windows++;
        for (guint i = 0; i < l->data_t->len; i++) {
            uint64_t t = g_array_index(l->data_t, uint64_t, i);
            uint64_t n = g_array_index(l->data_len, uint64_t, i);
            if (t + RATE_WIN >= c && t < c)
                before += n;
            if (t >= c && t < c + RATE_WIN)
                after += n;
        }
    }
    g_string_append_printf(s, "\"ce_without_cnp\": %" G_GUINT64_FORMAT ", \"ce_covered\": %"
                           G_GUINT64_FORMAT ", \"ecn_reaction_us\": [", l->ce_no_cnp, l->ce_covered);
    for (guint k = 0; k < l->reaction->len; k++)
        g_string_append_printf(s, "%s%" G_GUINT64_FORMAT, k ? ", " : "",
                               (guint64)(g_array_index(l->reaction, uint64_t, k) / US));
    g_string_append_printf(s, "], \"rate_windows\": %" G_GUINT64_FORMAT ", \"rate_windows_cut\": %"
                           G_GUINT64_FORMAT, windows, cut);
    if (windows)
        g_string_append_printf(s, ", \"rate_before_bps\": %.0f, \"rate_after_bps\": %.0f",
                               (double)before * 8 / ((double)windows * RATE_WIN / 1e9),
                               (double)after * 8 / ((double)windows * RATE_WIN / 1e9));
    g_string_append_printf(s, "}, \"findings\": [%s], \"no_findings\": [%s]}", present, absent);
    l->cv->lossless = s;
}

/* The end of a conversation whose A->B stream ended at end: its packets
 * written in time order, its "lossless" object (truth()), the model freed. */
static void ln_finish(ln_t *l, uint64_t end, const char *present, const char *absent)
{
    flush(l->c);
    truth(l, end, present, absent);
    ln_free(l);
}

/* ---- CM (path MTU 1024, as cm_req writes it) ---- */
static void cm_open(ctx_t *c, ln_t *l, madctx_t *m, uint32_t lcid, uint32_t rcid)
{
    uint8_t d[232];
    mad_init(c, m, &l->P, &l->A, &l->B);
    cm_req(d, lcid, 7174, 0x0002c90300a1b2c1ull, &l->A, &l->B, l->psn_a);
    mad_send(c, m, 0, CM_REQ, 0x100 + lcid, d, l->cv);
    cm_rep(d, rcid, lcid, 0x0002c90300a1b2c2ull, &l->B, l->psn_b);
    mad_send(c, m, 1, CM_REP, 0x100 + lcid, d, l->cv);
    cm_ids(d, lcid, rcid);
    mad_send(c, m, 0, CM_RTU, 0x100 + lcid, d, l->cv);
    l->base = (c->t / US + 20) * US;
}

/* marks: two bursts of three, 4 us apart, at packets 40.. and 120.. */
static int marks_two(int i) { return (i >= 40 && i < 46 && i % 2 == 0) || (i >= 120 && i < 126 && i % 2 == 0); }
/* three bursts: 40.., 120.., 200.. */
static int marks_three(int i) { return marks_two(i) || (i >= 200 && i < 206 && i % 2 == 0); }
static int off_after_first(int i) { return i >= 100; }

/* Everything right: data and ACKs on priority 3 (VLAN 100, DSCP 26), CNPs
 * on priority 6 / DSCP 48 answering every burst of marks within 3 us, a CM
 * connection with path MTU 1024 and 1024-byte segments, both directions. */
void s_lossless_ok(ctx_t *c)
{
    ln_t l;
    madctx_t m;
    ln_init(c, &l, 0x31, 0x32, "cm");
    cm_open(c, &l, &m, 0x1000C001, 0x2000D001);
    uint64_t end = stream(&l, 240, 1024, 2, marks_two, NULL);
    ln_finish(&l, end, "",
              "\"ecn_no_cnp\", \"cnp_priority\", \"mtu_mismatch\", \"capture_incomplete\"");
}

/* B stops answering marks after the first burst: 6 marks without CNP. */
void s_ecn_no_cnp(ctx_t *c)
{
    ln_t l;
    ln_init(c, &l, 0x41, 0x42, "traffic");
    uint64_t end = stream(&l, 300, 1024, 1, marks_three, off_after_first);
    ln_finish(&l, end, "\"ecn_no_cnp\"",
              "\"cnp_priority\", \"mtu_mismatch\", \"capture_incomplete\"");
}

/* Conversation 0: CNPs on DSCP 46 (expected 48); conversation 1: CNPs on
 * priority 6 and 3 by turns (DSCP 48). */
void s_cnp_priority_bad(ctx_t *c)
{
    ln_t l, k;
    ln_init(c, &l, 0x51, 0x52, "traffic");
    l.cnp_dscp = 46;
    uint64_t end = stream(&l, 200, 1024, 1, marks_two, NULL);
    ln_finish(&l, end, "\"cnp_priority\"",
              "\"ecn_no_cnp\", \"mtu_mismatch\", \"capture_incomplete\"");
    ln_init(c, &k, 0x53, 0x54, "traffic");
    k.cnp_pcp[1] = 3;
    end = stream(&k, 200, 1024, 1, marks_two, NULL);
    ln_finish(&k, end, "\"cnp_priority\"",
              "\"ecn_no_cnp\", \"mtu_mismatch\", \"capture_incomplete\"");
}

/* Conversation 0: CM path MTU 1024, A sends 2048-byte segments;
 * conversation 1: A writes in 4096-byte segments, B in 1024-byte ones. */
void s_mtu_mismatch(ctx_t *c)
{
    ln_t l, k;
    madctx_t m;
    ln_init(c, &l, 0x61, 0x62, "cm");
    cm_open(c, &l, &m, 0x1000E001, 0x2000F001);
    uint64_t end = stream(&l, 40, 2048, 2, NULL, NULL);
    ln_finish(&l, end, "\"mtu_mismatch\"",
              "\"ecn_no_cnp\", \"cnp_priority\", \"capture_incomplete\"");

    ln_init(c, &k, 0x63, 0x64, "traffic");
    end = stream(&k, 40, 4096, 2, NULL, NULL);
    /* after A's stream, B writes to A: FIRST/LAST of 1024 bytes, which A
     * ACKs at the end */
    for (int i = 0; i < 8; i++) {
        pkt_t p = mkw(&k, 1, i % 2 ? OP_WRITE_LAST : OP_WRITE_FIRST, k.psn_b, 1024,
                      0x7f5000000000ull + (uint64_t)(i / 2) * 2048, 0x8765, 2048, i % 2);
        put(&k, end + (uint64_t)i * 2 * US, &p, 1, 0, 0);
        if (i == 7) { /* one ACK for all four */
            pkt_t a = mkp(&k, 0, OP_ACK, k.psn_b, k.pcp_ack);
            a.aeth_syn = 0x1F;
            a.aeth_msn = k.msn_a += 4;
            put(&k, end + 15 * US, &a, 0, 0, 0);
        }
        k.psn_b = psn_add(k.psn_b, 1);
    }
    ln_finish(&k, end, "\"mtu_mismatch\"",
              "\"ecn_no_cnp\", \"cnp_priority\", \"capture_incomplete\"");
}

/* Conversation 0: A's requests, never an ACK in the capture (a mirror of
 * one direction); conversation 1: both sides write, each side's stream
 * has a PSN the capture dropped (the ACKs cover it, nothing is re-sent). */
void s_capture_incomplete(ctx_t *c)
{
    ln_t l, k;
    ln_init(c, &l, 0x71, 0x72, "none"); /* nothing to pair by */
    for (int i = 0; i < 16; i++) {
        pkt_t p = mkw(&l, 0, OP_WRITE_ONLY, l.psn_a, 1024, 0x7f6000000000ull + (uint64_t)i * 1024,
                      0x1111, 1024, i % 4 == 3);
        put(&l, (uint64_t)i * 2 * US, &p, 0, 0, 0);
        l.psn_a = psn_add(l.psn_a, 1);
    }
    flush(c);
    l.cv->lossless = g_string_new("{\"findings\": [\"capture_incomplete\"], \"no_findings\": "
                                  "[\"ecn_no_cnp\", \"cnp_priority\", \"mtu_mismatch\"]}");
    ln_free(&l);

    ln_init(c, &k, 0x73, 0x74, "traffic");
    uint64_t t = 0;
    for (int i = 0; i < 12; i++, t += 4 * US) {
        /* A -> B: PSN 5 of A's stream, B -> A: PSN 7 of B's, dropped by
         * the capture (the receivers got them: the ACKs follow) */
        pkt_t p = mkw(&k, 0, OP_WRITE_ONLY, k.psn_a, 512, 0x7f7000000000ull + (uint64_t)i * 512,
                      0x2222, 512, 1);
        if (i != 5)
            put(&k, t, &p, 0, 0, 0);
        k.psn_a = psn_add(k.psn_a, 1);
        pkt_t q = mkw(&k, 1, OP_WRITE_ONLY, k.psn_b, 512, 0x7f8000000000ull + (uint64_t)i * 512,
                      0x3333, 512, 1);
        if (i != 7)
            put(&k, t + 2 * US, &q, 1, 0, 0);
        k.psn_b = psn_add(k.psn_b, 1);
        /* each side ACKs the other's request 1 us after it (B's first ACK
         * comes before B's first request: the two sides pair at once) */
        if (i != 5) {
            pkt_t a = mkp(&k, 1, OP_ACK, psn_add(k.psn_a, -1), k.pcp_ack);
            a.aeth_syn = 0x1F;
            a.aeth_msn = ++k.msn_b;
            put(&k, t + US, &a, 1, 0, 0);
        }
        if (i != 7) {
            pkt_t a = mkp(&k, 0, OP_ACK, psn_add(k.psn_b, -1), k.pcp_ack);
            a.aeth_syn = 0x1F;
            a.aeth_msn = ++k.msn_a;
            put(&k, t + 3 * US, &a, 0, 0, 0);
        }
    }
    flush(c);
    k.cv->lossless = g_string_new("{\"findings\": [\"capture_incomplete\"], \"no_findings\": "
                                  "[\"capture_gaps\", \"ecn_no_cnp\", \"cnp_priority\", \"mtu_mismatch\"]}");
    ln_free(&k);
}
