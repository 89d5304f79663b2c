/* qpscen: lossless-network scenarios, PFC (802.1Qbb) and PAUSE (802.3x).
 *
 * RoCE streams (RC WRITE Only 1024 B, an ACK per 8) tagged 802.1Q with a
 * chosen priority (PCP), and MAC control frames from the switch port
 * (02:00:00:00:00:fe to 01:80:c2:00:00:01, ethertype 0x8808, untagged, 60
 * bytes without FCS; pfc_mismatch's refresh behind an 802.1Q tag, VID 100):
 *
 *   PAUSE | opcode 0x0001 | pause_time:16 | pad |
 *   PFC   | opcode 0x0101 | class-enable vector:16 | time[0..7]:16 each | pad |
 *
 * The link is 100 Gbit/s, so a quantum (512 bit times) is 5.12 ns.  The
 * manifest's "pfc" member says what was written: per priority the frames
 * naming it, XOFF (time > 0) and XON (time 0) frames, the quanta asked for,
 * and the conversations the scenario held silent through a pause (it sent
 * just before the XOFF and nothing until after the XON).
 */
#include "qpscen.h"

#include <string.h>

#define LINK_BPS 100000000000ull
#define NPRIO 8

typedef struct {
    conv_t *cv;
    ep_t a, b;
    path_t path;
    uint8_t pcp;
    uint32_t psn, msn, unacked;
} stream_t;

typedef struct {
    ctx_t *c;
    uint64_t frames[NPRIO], xoff[NPRIO], xon[NPRIO], quanta[NPRIO], p8023x[NPRIO];
    GArray *stalled[NPRIO]; /* manifest conversation ids */
    int roce[NPRIO];        /* RoCE data on this priority */
    int mismatch;           /* the scenario is made to show pfc_priority_mismatch */
} gen_t;

/* Events of one scenario, written in time order (ties: in the order added). */
enum { EV_WRITE, EV_ACK, EV_PFC, EV_PAUSE, EV_RAW };
typedef struct {
    uint64_t t;
    unsigned seq;
    int kind;
    stream_t *s;
    uint16_t cev, q[NPRIO];
    uint32_t len, caplen; /* EV_RAW: a MAC control frame cut or short */
    int vlan;             /* EV_PFC: behind an 802.1Q tag (VID 100, PCP 0) */
    const char *note;
} ev_t;

static void gen_init(gen_t *g, ctx_t *c)
{
    memset(g, 0, sizeof *g);
    g->c = c;
    for (int p = 0; p < NPRIO; p++)
        g->stalled[p] = g_array_new(FALSE, FALSE, sizeof(int));
}

static void stream_init(gen_t *g, stream_t *s, uint8_t a4, uint8_t b4, uint32_t qa, uint32_t qb,
                        int vlan, uint8_t pcp, uint32_t psn)
{
    memset(s, 0, sizeof *s);
    ep_v4(&s->a, 10, 0, 0, a4, qa);
    ep_v4(&s->b, 10, 0, 0, b4, qb);
    s->path = (path_t){ LT_ETH, NET_IP4, vlan ? 1 : 0, { (uint16_t)(vlan ? 100 : 0), 0 }, 26, 2, 0, 0 };
    s->pcp = vlan ? pcp : 0;
    s->psn = psn;
    s->cv = conv_new(g->c, "RC", "traffic", &s->a, &s->b);
    g->roce[s->pcp] = 1; /* untagged is priority 0 */
}

static void add(GArray *evs, uint64_t t, int kind, stream_t *s)
{
    ev_t e = { .t = t, .seq = evs->len, .kind = kind, .s = s };
    g_array_append_val(evs, e);
}

static void add_pfc(GArray *evs, uint64_t t, uint16_t cev, int prio, uint16_t q)
{
    ev_t e = { .t = t, .seq = evs->len, .kind = EV_PFC, .cev = cev };
    e.q[prio] = q;
    g_array_append_val(evs, e);
}

static void add_pause(GArray *evs, uint64_t t, uint16_t q)
{
    ev_t e = { .t = t, .seq = evs->len, .kind = EV_PAUSE };
    e.q[0] = q;
    g_array_append_val(evs, e);
}

static gint ev_cmp(gconstpointer pa, gconstpointer pb)
{
    const ev_t *a = pa, *b = pb;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* 14-byte Ethernet header of a MAC control frame (18 with a tag), then
 * the opcode. */
static uint8_t *macc_head_tag(uint8_t *f, uint16_t opcode, int vlan)
{
    static const uint8_t dst[6] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x01 };
    static const uint8_t src[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0xfe };
    memset(f, 0, 64);
    memcpy(f, dst, 6);
    memcpy(f + 6, src, 6);
    uint8_t *w = f + 12;
    if (vlan) {
        w = put16(w, 0x8100);
        w = put16(w, 100);
    }
    w = put16(w, 0x8808);
    return put16(w, opcode);
}

static uint8_t *macc_head(uint8_t *f, uint16_t opcode)
{
    return macc_head_tag(f, opcode, 0);
}

static void write_pkt(gen_t *g, stream_t *s, uint64_t t)
{
    pkt_t p;
    pkt_init(&p);
    pkt_addr(&p, &s->path, &s->a, &s->b);
    p.pcp = s->pcp;
    p.opcode = TR_RC | OP_WRITE_ONLY;
    p.dqp = s->b.qpn;
    p.psn = s->psn;
    p.payseed = s->psn;
    p.reth_va = 0x10000000ull + (uint64_t)s->msn * 1024u;
    p.reth_rkey = 0x1234;
    p.reth_len = 1024;
    p.paylen = 1024;
    p.ackreq = s->unacked + 1 == 8;
    emit(g->c, t, &p, s->cv, 0, 0, 0);
    s->psn = psn_add(s->psn, 1);
    s->msn++;
    s->unacked++;
}

static void ack_pkt(gen_t *g, stream_t *s, uint64_t t)
{
    pkt_t p;
    if (!s->unacked)
        return;
    pkt_init(&p);
    pkt_addr(&p, &s->path, &s->b, &s->a);
    p.pcp = s->pcp;
    p.opcode = TR_RC | OP_ACK;
    p.dqp = s->a.qpn;
    p.psn = psn_add(s->psn, -1);
    p.aeth_syn = 0x1f;
    p.aeth_msn = s->msn & 0xffffff;
    emit(g->c, t, &p, s->cv, 1, 0, 0);
    s->unacked = 0;
}

static void run(gen_t *g, GArray *evs)
{
    uint8_t f[64];
    g_array_sort(evs, ev_cmp);
    for (guint i = 0; i < evs->len; i++) {
        ev_t *e = &g_array_index(evs, ev_t, i);
        uint8_t *w;
        uint32_t fno;
        switch (e->kind) {
        case EV_WRITE:
            write_pkt(g, e->s, e->t);
            break;
        case EV_ACK:
            ack_pkt(g, e->s, e->t);
            break;
        case EV_PFC:
            w = macc_head_tag(f, 0x0101, e->vlan);
            w = put16(w, e->cev);
            for (int p = 0; p < NPRIO; p++)
                w = put16(w, e->q[p]);
            emit_raw(g->c, e->t, f, e->vlan ? 64 : 60, 0);
            for (int p = 0; p < NPRIO; p++) {
                if (!(e->cev & (1u << p)))
                    continue;
                g->frames[p]++;
                if (e->q[p]) {
                    g->xoff[p]++;
                    g->quanta[p] += e->q[p];
                } else {
                    g->xon[p]++;
                }
            }
            break;
        case EV_PAUSE:
            w = macc_head(f, 0x0001);
            put16(w, e->q[0]);
            emit_raw(g->c, e->t, f, 60, 0);
            for (int p = 0; p < NPRIO; p++) {
                g->frames[p]++;
                g->p8023x[p]++;
                if (e->q[0]) {
                    g->xoff[p]++;
                    g->quanta[p] += e->q[0];
                } else {
                    g->xon[p]++;
                }
            }
            break;
        case EV_RAW: /* a PFC frame asking priority 3 to pause, cut or short */
            w = macc_head(f, 0x0101);
            w = put16(w, 0x0008);
            for (int p = 0; p < NPRIO; p++)
                w = put16(w, p == 3 ? 0xffff : 0);
            fno = emit_raw(g->c, e->t, f, e->len, e->caplen);
            note(g->c, fno, "%s", e->note);
            break;
        }
    }
}

/* The manifest's "pfc" member. */
static void gen_finish(gen_t *g)
{
    GString *s = g_string_new("");
    int first = 1;
    g_string_append_printf(s, "  \"pfc\": {\n    \"link_speed_bps\": %llu,\n    \"roce_priorities\": [",
                           (unsigned long long)LINK_BPS);
    for (int p = 0; p < NPRIO; p++)
        if (g->roce[p]) {
            g_string_append_printf(s, "%s%d", first ? "" : ", ", p);
            first = 0;
        }
    g_string_append_printf(s, "],\n    \"pfc_priority_mismatch\": %s,\n    \"priorities\": [",
                           g->mismatch ? "true" : "false");
    first = 1;
    for (int p = 0; p < NPRIO; p++) {
        if (!g->frames[p])
            continue;
        g_string_append_printf(s, "%s\n      {\"priority\": %d, \"pause_frames\": %llu, "
                               "\"xoff_frames\": %llu, \"xon_frames\": %llu, \"pause_8023x\": %llu, "
                               "\"quanta_total\": %llu, \"stalled_conversations\": [",
                               first ? "" : ",", p, (unsigned long long)g->frames[p],
                               (unsigned long long)g->xoff[p], (unsigned long long)g->xon[p],
                               (unsigned long long)g->p8023x[p], (unsigned long long)g->quanta[p]);
        for (guint k = 0; k < g->stalled[p]->len; k++)
            g_string_append_printf(s, "%s%d", k ? ", " : "", g_array_index(g->stalled[p], int, k));
        g_string_append(s, "]}");
        first = 0;
    }
    g_string_append(s, "\n    ]\n  }");
    g->c->extra_json = s;
    for (int p = 0; p < NPRIO; p++)
        g_array_free(g->stalled[p], TRUE);
}

static void stall(gen_t *g, int prio, const stream_t *s)
{
    g_array_append_val(g->stalled[prio], s->cv->id);
}

/* n writes of s every gap ns from t, an ACK 600 ns after every 8th. */
static uint64_t burst(GArray *evs, stream_t *s, uint64_t t, int n, uint64_t gap)
{
    for (int i = 0; i < n; i++, t += gap) {
        add(evs, t, EV_WRITE, s);
        if (i % 8 == 7 || i == n - 1)
            add(evs, t + 600, EV_ACK, s);
    }
    return t;
}

/* Priority 3 stream (conversation 0) and priority 1 stream (1).  XOFF for
 * priority 3 (65535 quanta = 335.5 us) 1.2 us after 0's 24th WRITE, a
 * refresh 150 us later, the XON 250 us after the first: 0 sends nothing
 * from its last ACK before the XOFF until 5 us after the XON; 1, on a
 * priority not paused, sends every 5 us throughout. */
void s_pfc_stall(ctx_t *c)
{
    gen_t g;
    stream_t s0, s1;
    GArray *evs = g_array_new(FALSE, FALSE, sizeof(ev_t));
    gen_init(&g, c);
    stream_init(&g, &s0, 1, 2, 0x11, 0x12, 1, 3, 0x010000);
    stream_init(&g, &s1, 3, 4, 0x21, 0x22, 1, 1, 0x020000);
    uint64_t t0 = c->t + 1000;
    burst(evs, &s0, t0, 24, 1000);
    burst(evs, &s1, t0 + 300, 24, 1000);
    uint64_t tp = t0 + 24 * 1000 + 200;
    add_pfc(evs, tp, 0x0008, 3, 0xffff);
    add_pfc(evs, tp + 150000, 0x0008, 3, 0xffff);
    add_pfc(evs, tp + 250000, 0x0008, 3, 0);
    burst(evs, &s1, tp + 1000, 60, 5000);
    burst(evs, &s0, tp + 255000, 16, 1000);
    stall(&g, 3, &s0);
    run(&g, evs);
    g_array_free(evs, TRUE);
    gen_finish(&g);
}

/* RoCE on priority 3 only; the switch pauses priority 0 (XOFF, refresh,
 * XON) while the RoCE stream goes on: PFC is enabled on the wrong class. */
void s_pfc_mismatch(ctx_t *c)
{
    gen_t g;
    stream_t s0;
    GArray *evs = g_array_new(FALSE, FALSE, sizeof(ev_t));
    gen_init(&g, c);
    stream_init(&g, &s0, 1, 2, 0x11, 0x12, 1, 3, 0x030000);
    g.mismatch = 1;
    uint64_t t0 = c->t + 1000;
    burst(evs, &s0, t0, 64, 1000);
    add_pfc(evs, t0 + 10200, 0x0001, 0, 0xffff);
    add_pfc(evs, t0 + 30200, 0x0001, 0, 0xffff);
    g_array_index(evs, ev_t, evs->len - 1).vlan = 1; /* the refresh behind a tag */
    add_pfc(evs, t0 + 50200, 0x0001, 0, 0);
    run(&g, evs);
    g_array_free(evs, TRUE);
    gen_finish(&g);
}

/* Untagged RoCE (priority 0); an 802.3x PAUSE (65535 quanta, every
 * priority) 1.2 us after the 20th WRITE, the PAUSE 0 (XON) 100 us later,
 * the stream again 10 us after it.  Then two MAC control frames qptrace
 * must call malformed: a PFC frame cut by the capture after 20 bytes, and
 * one whose frame ends after the opcode (16 bytes on the wire). */
void s_pause_8023x(ctx_t *c)
{
    gen_t g;
    stream_t s0;
    GArray *evs = g_array_new(FALSE, FALSE, sizeof(ev_t));
    gen_init(&g, c);
    stream_init(&g, &s0, 1, 2, 0x11, 0x12, 0, 0, 0x040000);
    uint64_t t0 = c->t + 1000;
    burst(evs, &s0, t0, 20, 1000);
    uint64_t tp = t0 + 20 * 1000 + 200;
    add_pause(evs, tp, 0xffff);
    add_pause(evs, tp + 100000, 0);
    uint64_t te = burst(evs, &s0, tp + 110000, 20, 1000);
    ev_t cut = { .t = te + 5000, .seq = evs->len, .kind = EV_RAW, .len = 60, .caplen = 20,
                 .note = "PFC frame cut by the capture after 20 bytes (truncated)" };
    g_array_append_val(evs, cut);
    ev_t shrt = { .t = te + 6000, .seq = evs->len, .kind = EV_RAW, .len = 16, .caplen = 0,
                  .note = "MAC control frame of 16 bytes: PFC opcode, no parameters (malformed)" };
    g_array_append_val(evs, shrt);
    stall(&g, 0, &s0);
    run(&g, evs);
    g_array_free(evs, TRUE);
    gen_finish(&g);
}
