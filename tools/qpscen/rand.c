/* qpscen random: a seeded random RC scenario, simulated event by event
 * (requester and responder after IBA chapter 9, a path through a switch
 * with losses anywhere on it, and capture points on that path), then
 * written as the chosen capture point(s) saw it.  The truth of every frame
 * comes from the simulated senders' own log (what each had sent before,
 * why it went back) and from what the capture point saw, never from the
 * analyzer.  The rules are in README.md, "Random scenarios". */
#include "qpscen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define US 1000ull
#define MS 1000000ull

/* timing profiles */
enum { TM_HW = RT_HW, TM_RXE = RT_RXE };
/* capture points: A (at the requester), S (the switch), B (at the
 * responder), or A and B merged into one file */
enum { TAP_A, TAP_S, TAP_B, TAP_AB };
static const char *const tap_names[] = { "A", "S", "B", "A+B" };
/* transmission kinds */
enum { K_REQ, K_ACK, K_NAK, K_RNR, K_RESP, K_ATACK };
/* why a requester went back */
enum { CA_NAK, CA_TMO, CA_READ, CA_ATOMIC, CA_RNR };


typedef struct {
    int op;             /* MO_* */
    uint32_t len;
    uint64_t va;
    uint32_t pk0, npk;  /* its packets */
    int rnr;            /* the responder answers its first packet with an RNR NAK once */
} rmsg_t;

typedef struct {
    uint32_t psn, span, msg, off, paylen;
    uint8_t opcode, ackreq, last; /* last: the message's LAST/ONLY (or READ, atomic) */
    /* requester */
    uint32_t rx_k;      /* READ: responses received in order */
    int done;
    uint32_t reoff;     /* the next sending re-issues the READ from response reoff */
    /* responder */
    int served;         /* READ/atomic executed once */
    uint32_t resp_hi;   /* READ: responses ever sent (index); atomic: 1 once sent */
    uint32_t resp_msn;
    /* observer */
    int counted;        /* its message was counted at a captured frame */
    int cap_seen;       /* a sending of it was captured */
} rpk_t;

typedef struct {
    int qp, cause;
    uint32_t psn;       /* where it went back to */
    int nak_tx;         /* CA_NAK: the NAK that made it (transmission id) */
    int first_tx;       /* its first packet (-1 until sent) */
    /* observer */
    int seen;           /* a packet of it was captured (the first decides) */
} gb_t;

typedef struct {
    pkt_t p;
    int qp, dir, kind;
    uint32_t psn;
    uint32_t pki;       /* request: packet index; READ response / atomic ACK: the request's */
    uint32_t roff;      /* READ request: response index it starts at; READ response: its index */
    uint8_t retrans;    /* its sender had sent this PSN before */
    uint8_t gb_first;
    int gb;             /* the go-back it belongs to, or -1 */
    int lost;           /* 0..3: lost before that hop (see tx_path), 4: delivered */
    uint64_t t_tap[3];  /* when it passed A, S, B */
    uint64_t t_arr;
} tx_t;

typedef struct {
    int id;
    conv_t *cv;
    ep_t A, B;
    int ha, hb;         /* host index of A and B (IP ID counters) */
    uint32_t mtu, spsn;
    GArray *msgs, *pk;
    int window, ack_every, losses, max_losses;
    uint64_t tmo_ns, rnr_ns;
    uint8_t rnr_code;
    /* requester */
    uint32_t idx, sent_hi, una;
    int tx_sched, gb_pending, gb_cur, retry_started, rnr_wait, started;
    uint32_t tx_gen;
    uint64_t paused_until;
    uint32_t tmo_gen;
    /* responder */
    uint32_t exp, msn, since_ack, flush_gen;
    int nak_sent, have_reack;
    uint64_t b_free, reack_t;
} qp_t;

enum { EV_REQ_TX, EV_B_RX, EV_A_RX, EV_TMO, EV_FLUSH };

typedef struct {
    uint64_t t, seq;
    int type, qp;
    uint32_t a;
} ev_t;

typedef struct {
    GRand *rng;
    int timing, tap, ipid_const, v6, vlan, snap, mirror_pct, nqp;
    double capdrop;      /* a capture point misses a frame that passes it */
    double loss;
    path_t path;
    GPtrArray *qps;
    GArray *tx, *gb;
    /* event heap */
    ev_t *h;
    size_t hn, hcap;
    uint64_t seq, now;
    /* path FIFO per direction and point (0: A, 1: S, 2: B, 3: the far end) */
    uint64_t last[2][4];
    uint64_t d_as, d_sb; /* one-way delay A->S, S->B (base) */
    uint16_t ipid[16];
    int stuck;           /* the run did not finish (a bug) */
    int wrap_qp;         /* the QP that starts just below the PSN wrap, or -1 */
} rs_t;

/* ---- random helpers ---- */
static uint32_t rint_(rs_t *s, uint32_t lo, uint32_t hi) /* [lo, hi] */
{
    return lo + (uint32_t)g_rand_int_range(s->rng, 0, (gint32)(hi - lo + 1));
}
static uint64_t rns(rs_t *s, uint64_t lo, uint64_t hi)
{
    if (hi <= lo)
        return lo;
    return lo + (uint64_t)(g_rand_double(s->rng) * (double)(hi - lo));
}
static int chance(rs_t *s, double p) { return g_rand_double(s->rng) < p; }

/* ---- event heap ---- */
static int ev_less(const ev_t *a, const ev_t *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}
static void sched(rs_t *s, uint64_t t, int type, int qp, uint32_t a)
{
    if (s->hn == s->hcap) {
        s->hcap = s->hcap ? s->hcap * 2 : 256;
        s->h = g_renew(ev_t, s->h, s->hcap);
    }
    ev_t e = { t, s->seq++, type, qp, a };
    size_t i = s->hn++;
    while (i) {
        size_t p = (i - 1) / 2;
        if (!ev_less(&e, &s->h[p]))
            break;
        s->h[i] = s->h[p];
        i = p;
    }
    s->h[i] = e;
}
static ev_t pop(rs_t *s)
{
    ev_t top = s->h[0], e = s->h[--s->hn];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const ev_t *cur = &e;
        if (l < s->hn && ev_less(&s->h[l], cur))
            m = l, cur = &s->h[l];
        if (r < s->hn && ev_less(&s->h[r], cur))
            m = r;
        if (m == i)
            break;
        s->h[i] = s->h[m];
        i = m;
    }
    if (s->hn)
        s->h[i] = e;
    return top;
}

static qp_t *QP(rs_t *s, int i) { return g_ptr_array_index(s->qps, i); }
static rpk_t *PK(qp_t *q, uint32_t i) { return &g_array_index(q->pk, rpk_t, i); }
static rmsg_t *MSG(qp_t *q, uint32_t i) { return &g_array_index(q->msgs, rmsg_t, i); }
static tx_t *TX(rs_t *s, int i) { return &g_array_index(s->tx, tx_t, i); }
static gb_t *GB(rs_t *s, int i) { return &g_array_index(s->gb, gb_t, i); }

/* ---- timing ---- */
static uint64_t t_gap(rs_t *s)  /* between a sender's packets */
{
    return s->timing == TM_HW ? rns(s, 100, 1000) : rns(s, 2 * US, 20 * US);
}
static uint64_t t_proc(rs_t *s) /* responder: packet in to answer out */
{
    return s->timing == TM_HW ? rns(s, 100, 600) : rns(s, 1 * US, 6 * US);
}
static uint64_t t_resend(rs_t *s) /* requester: NAK (or response gap) in to the resend */
{
    return s->timing == TM_HW ? rns(s, 1 * US, 20 * US) : rns(s, 100 * US, 2 * MS);
}
static uint64_t t_flush(rs_t *s) /* responder: a coalesced ACK's delay */
{
    return s->timing == TM_HW ? rns(s, 1 * US, 3 * US) : rns(s, 10 * US, 50 * US);
}

/* IBA RNR timer codes (table 45), in ns */
static uint64_t rnr_code_ns(uint8_t c)
{
    static const uint32_t us[32] = {
        655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920,
        2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920,
        122880, 163840, 245760, 327680, 491520 };
    return (uint64_t)us[c & 31] * US;
}

/* ---- the path: a transmission at time t from its sender ----
 * A->B passes A, S, B in that order; B->A passes B, S, A.  Lost (lost < 4)
 * before the point of that index in its order (0: before the first tap,
 * i.e. never on the wire; 3: after the last, at the receiving NIC). */
static int tx_new(rs_t *s, qp_t *q, uint64_t t, const pkt_t *p, int dir, int kind, uint32_t psn)
{
    tx_t x;
    memset(&x, 0, sizeof x);
    x.p = *p;
    x.qp = q->id;
    x.dir = dir;
    x.kind = kind;
    x.psn = psn;
    x.gb = -1;
    x.lost = 4;
    if (dir == 0 && !q->started) {
        q->started = 1; /* never lost: the capture sees each sequence begin */
    } else if (s->loss > 0 && q->losses < q->max_losses && chance(s, s->loss)) {
        x.lost = (int)rint_(s, 0, 3);
        q->losses++;
    }
    /* IP ID: the sending host's counter, or 0 (DF) */
    if (s->path.net == NET_IP4) {
        if (s->ipid_const) {
            x.p.ipid = 0;
        } else {
            int h = dir ? q->hb : q->ha;
            if (++s->ipid[h] == 0)
                s->ipid[h] = 1;
            x.p.ipid = s->ipid[h];
        }
    }
    /* points in travel order: dir 0: A S B far; dir 1: B S A far */
    static const int ord[2][3] = { { 0, 1, 2 }, { 2, 1, 0 } };
    uint64_t hop[4];
    hop[0] = rns(s, 50, s->timing == TM_HW ? 200 : 1000);
    hop[1] = s->d_as + rns(s, 0, s->d_as / 8 + 1);
    hop[2] = s->d_sb + rns(s, 0, s->d_sb / 8 + 1);
    hop[3] = rns(s, 50, s->timing == TM_HW ? 200 : 1000);
    if (dir) { /* B->A: B, S, A */
        uint64_t a = hop[1];
        hop[1] = hop[2];
        hop[2] = a;
    }
    uint64_t tt = t;
    for (int k = 0; k < 4; k++) {
        tt += hop[k];
        if (tt <= s->last[dir][k])
            tt = s->last[dir][k] + 20; /* FIFO */
        s->last[dir][k] = tt;
        if (k < 3)
            x.t_tap[ord[dir][k]] = tt;
        else
            x.t_arr = tt;
    }
    g_array_append_val(s->tx, x);
    return (int)s->tx->len - 1;
}

/* seen at point pt (0 A, 1 S, 2 B)? */
static int tx_seen(const tx_t *x, int pt)
{
    int k = x->dir ? 2 - pt : pt; /* index in its travel order */
    return x->lost > k;
}

/* ---- packets ---- */
static void build_req(rs_t *s, qp_t *q, const rpk_t *k, uint32_t reoff, pkt_t *p)
{
    rmsg_t *m = MSG(q, k->msg);
    pkt_init(p);
    pkt_addr(p, &s->path, &q->A, &q->B);
    p->opcode = k->opcode;
    p->dqp = q->B.qpn;
    p->psn = psn_add(k->psn, (int32_t)reoff);
    p->ackreq = k->ackreq;
    p->paylen = k->paylen;
    p->payseed = k->psn;
    p->reth_va = m->va + (uint64_t)reoff * q->mtu;
    p->reth_rkey = 0x1234 + (uint32_t)q->id;
    p->reth_len = m->len - reoff * q->mtu;
    p->imm = 0xC0DE0000u | k->msg;
    p->ieth_rkey = 0x4321;
    p->at_va = m->va;
    p->at_rkey = 0x1234 + (uint32_t)q->id;
    p->at_swap = k->opcode == OP_CMP_SWAP ? 0x1111111111111111ull * (k->msg + 1) : 1 + k->msg;
    p->at_cmp = k->opcode == OP_CMP_SWAP ? 0x42 : 0;
}

static void resp_init(rs_t *s, qp_t *q, pkt_t *p, uint8_t opcode, uint32_t psn)
{
    pkt_init(p);
    pkt_addr(p, &s->path, &q->B, &q->A);
    p->opcode = opcode;
    p->dqp = q->A.qpn;
    p->psn = psn & PSN_MASK;
}

/* index of the request packet whose PSN range holds psn, from una, or -1 */
static int pk_of(qp_t *q, uint32_t psn, uint32_t upto)
{
    for (uint32_t j = q->una; j < upto && j < q->pk->len; j++) {
        rpk_t *k = PK(q, j);
        int32_t d = psn_diff(psn, k->psn);
        if (d >= 0 && d < (int32_t)k->span)
            return (int)j;
    }
    return -1;
}

/* ---- requester ---- */
static void kick(rs_t *s, qp_t *q, uint64_t t)
{
    if (!q->tx_sched && q->idx < q->pk->len) {
        q->tx_sched = 1;
        sched(s, t, EV_REQ_TX, q->id, q->tx_gen);
    }
}

static void arm_tmo(rs_t *s, qp_t *q, uint64_t t)
{
    q->tmo_gen++;
    if (q->una < q->sent_hi)
        sched(s, t + q->tmo_ns, EV_TMO, q->id, q->tmo_gen);
}

/* Go back to psn after delay: resend from the packet that holds it (a READ
 * from its response there: re-issued with the RETH advanced). */
static void go_back(rs_t *s, qp_t *q, uint64_t t, uint32_t psn, int cause, int nak_tx,
                    uint64_t delay)
{
    if (q->gb_pending >= 0)
        return; /* one go-back at a time: the pending one resends from its PSN */
    int j = pk_of(q, psn, q->sent_hi);
    if (j < 0)
        return;
    rpk_t *k = PK(q, (uint32_t)j);
    k->reoff = (uint32_t)psn_diff(psn, k->psn);
    q->idx = (uint32_t)j;
    gb_t g = { q->id, cause, psn, nak_tx, -1, 0 };
    if (getenv("QPSCEN_DEBUG_GB"))
        fprintf(stderr, "t=%.3f us qp %d go-back %u to PSN %u cause %d nak_tx %d delay %.3f us\n",
                t / 1000.0, q->id, s->gb->len, psn, cause, nak_tx, delay / 1000.0);
    g_array_append_val(s->gb, g);
    q->gb_pending = (int)s->gb->len - 1;
    q->gb_cur = -1;
    q->paused_until = t + delay;
    if (cause == CA_RNR) {
        q->rnr_wait = 1;
        q->tmo_gen++; /* no timeout while waiting */
    }
    if (cause == CA_READ || cause == CA_ATOMIC)
        q->retry_started = 1;
    q->tx_sched = 1;
    sched(s, q->paused_until, EV_REQ_TX, q->id, ++q->tx_gen);
}

static void req_tx(rs_t *s, qp_t *q, uint64_t t, uint32_t gen)
{
    if (gen != q->tx_gen)
        return; /* superseded by a go-back */
    q->tx_sched = 0;
    if (t < q->paused_until) {
        q->tx_sched = 1;
        sched(s, q->paused_until, EV_REQ_TX, q->id, gen);
        return;
    }
    if (q->idx >= q->pk->len)
        return;
    rpk_t *k = PK(q, q->idx);
    int retrans = q->idx < q->sent_hi;
    if (!retrans && q->una < q->pk->len && k->msg >= PK(q, q->una)->msg + (uint32_t)q->window)
        return; /* the window is full: kick() on completion */
    pkt_t p;
    uint32_t reoff = k->reoff;
    build_req(s, q, k, reoff, &p);
    int gb = -1, first = 0;
    if (retrans) {
        if (q->gb_pending >= 0) {
            gb = q->gb_cur = q->gb_pending;
            q->gb_pending = -1;
            first = 1;
            GB(s, gb)->first_tx = (int)s->tx->len;
        } else {
            gb = q->gb_cur;
        }
    } else {
        q->gb_cur = -1;
        q->gb_pending = -1;
    }
    if (q->rnr_wait) {
        q->rnr_wait = 0;
    }
    int x = tx_new(s, q, t, &p, 0, K_REQ, p.psn);
    tx_t *tx = TX(s, x);
    tx->pki = q->idx;
    tx->roff = reoff;
    tx->retrans = (uint8_t)retrans;
    tx->gb = gb;
    tx->gb_first = (uint8_t)first;
    if (tx->lost == 4)
        sched(s, tx->t_arr, EV_B_RX, q->id, (uint32_t)x);
    k->reoff = 0;
    q->idx++;
    if (q->idx > q->sent_hi)
        q->sent_hi = q->idx;
    arm_tmo(s, q, t);
    if (q->idx < q->pk->len) {
        q->tx_sched = 1;
        sched(s, t + t_gap(s), EV_REQ_TX, q->id, q->tx_gen);
    }
}

/* Completion in order, as rxe_comp.c: an answer with PSN r (ack_to: it
 * acknowledges up to r, else up to r - 1).  A READ or atomic that later
 * PSNs were answered beyond without its own responses is retried from its
 * first missing response.  Returns 1 when it went back. */
static int complete(rs_t *s, qp_t *q, uint64_t t, uint32_t r, int kind, uint32_t roff_k)
{
    int progress = 0, back = 0;
    while (q->una < q->sent_hi) {
        rpk_t *w = PK(q, q->una);
        int32_t d = psn_diff(r, w->psn);
        if (w->opcode == OP_READ_REQ) {
            uint32_t want = psn_add(w->psn, (int32_t)w->rx_k);
            if (kind == K_RESP && r == want) {
                w->rx_k++;
                q->retry_started = 0;
                progress = 1;
                if (w->rx_k == w->span) {
                    w->done = 1;
                    q->una++;
                }
                break;
            }
            if (psn_diff(r, want) <= 0 || (kind == K_NAK || kind == K_RNR ? d <= 0 : d < 0))
                break; /* stale, or not past it */
            if (!q->retry_started)
                go_back(s, q, t, want, CA_READ, -1, t_resend(s)), back = 1;
            break;
        }
        if (w->opcode == OP_CMP_SWAP || w->opcode == OP_FETCH_ADD) {
            if (kind == K_ATACK && r == w->psn) {
                w->done = 1;
                q->una++;
                q->retry_started = 0;
                progress = 1;
                break;
            }
            if (d <= 0)
                break;
            if (!q->retry_started)
                go_back(s, q, t, w->psn, CA_ATOMIC, -1, t_resend(s)), back = 1;
            break;
        }
        /* SEND / WRITE: an ACK covers r; a response, NAK or RNR NAK all before it */
        if (kind == K_ACK ? d < 0 : d <= 0)
            break;
        w->done = 1;
        q->una++;
        progress = 1;
    }
    (void)roff_k;
    if (progress) {
        arm_tmo(s, q, t);
        kick(s, q, t);
    }
    return back;
}

static void a_rx(rs_t *s, qp_t *q, uint64_t t, int x)
{
    tx_t *tx = TX(s, x);
    uint32_t r = tx->psn;
    switch (tx->kind) {
    case K_ACK:
        complete(s, q, t, r, K_ACK, 0);
        break;
    case K_RESP:
    case K_ATACK:
        complete(s, q, t, r, tx->kind, tx->roff);
        break;
    case K_NAK:
    case K_RNR: {
        if (q->una >= q->sent_hi)
            break;
        if (psn_diff(r, PK(q, q->una)->psn) < 0)
            break; /* stale */
        if (complete(s, q, t, r, tx->kind, 0))
            break;
        if (pk_of(q, r, q->sent_hi) < 0)
            break;
        if (tx->kind == K_NAK)
            go_back(s, q, t, r, CA_NAK, x, t_resend(s));
        else
            go_back(s, q, t, r, CA_RNR, x, q->rnr_ns + rns(s, 0, q->rnr_ns / 20 + 1));
        break;
    }
    }
}

static void a_tmo(rs_t *s, qp_t *q, uint64_t t, uint32_t gen)
{
    if (gen != q->tmo_gen || q->una >= q->sent_hi)
        return;
    if (q->gb_pending >= 0 || q->rnr_wait) {
        arm_tmo(s, q, t);
        return;
    }
    rpk_t *w = PK(q, q->una);
    uint32_t psn = psn_add(w->psn, w->opcode == OP_READ_REQ ? (int32_t)w->rx_k : 0);
    q->retry_started = 0;
    go_back(s, q, t, psn, CA_TMO, -1, 0);
}

/* ---- responder ---- */
static uint64_t b_slot(rs_t *s, qp_t *q, uint64_t t)
{
    uint64_t tt = t + t_proc(s);
    if (tt < q->b_free)
        tt = q->b_free;
    q->b_free = tt + (s->timing == TM_HW ? rns(s, 60, 300) : rns(s, 1 * US, 4 * US));
    return tt;
}

static void b_send(rs_t *s, qp_t *q, uint64_t tt, pkt_t *p, int kind, uint32_t pki, uint32_t roff,
                   int retrans)
{
    int x = tx_new(s, q, tt, p, 1, kind, p->psn);
    tx_t *tx = TX(s, x);
    tx->pki = pki;
    tx->roff = roff;
    tx->retrans = (uint8_t)retrans;
    if (tx->lost == 4)
        sched(s, tx->t_arr, EV_A_RX, q->id, (uint32_t)x);
}

static void b_ack(rs_t *s, qp_t *q, uint64_t t, int kind, uint32_t psn, uint8_t syn)
{
    pkt_t p;
    resp_init(s, q, &p, OP_ACK, psn);
    p.aeth_syn = syn;
    p.aeth_msn = q->msn & PSN_MASK;
    b_send(s, q, b_slot(s, q, t), &p, kind, 0, 0, 0);
}

static void b_read_resp(rs_t *s, qp_t *q, uint64_t t, uint32_t i, uint32_t k0)
{
    rpk_t *rd = PK(q, i);
    rmsg_t *m = MSG(q, rd->msg);
    uint32_t n = rd->span, cnt = n - k0;
    for (uint32_t k = k0; k < n; k++) {
        uint32_t j = k - k0;
        uint8_t o = cnt == 1 ? OP_READ_RESP_ONLY : j == 0 ? OP_READ_RESP_FIRST
                  : j == cnt - 1 ? OP_READ_RESP_LAST : OP_READ_RESP_MIDDLE;
        pkt_t p;
        resp_init(s, q, &p, o, psn_add(rd->psn, (int32_t)k));
        uint32_t off = k * q->mtu;
        p.paylen = m->len > off ? (m->len - off < q->mtu ? m->len - off : q->mtu) : 0;
        p.payseed = p.psn ^ 0x55;
        p.aeth_syn = 0x1F;
        p.aeth_msn = rd->resp_msn & PSN_MASK;
        int re = k < rd->resp_hi;
        if (!re)
            rd->resp_hi = k + 1;
        b_send(s, q, b_slot(s, q, t), &p, K_RESP, i, k, re);
    }
}

static void b_atack(rs_t *s, qp_t *q, uint64_t t, uint32_t i)
{
    rpk_t *k = PK(q, i);
    pkt_t p;
    resp_init(s, q, &p, OP_ATOMIC_ACK, k->psn);
    p.aeth_syn = 0x1F;
    p.aeth_msn = k->resp_msn & PSN_MASK;
    p.atack_orig = 0x100 + (uint64_t)k->msg * 977;
    int re = k->resp_hi > 0;
    k->resp_hi = 1;
    b_send(s, q, b_slot(s, q, t), &p, K_ATACK, i, 0, re);
}

static void b_rx(rs_t *s, qp_t *q, uint64_t t, int x)
{
    tx_t *tx = TX(s, x);
    uint32_t i = tx->pki;
    rpk_t *k = PK(q, i);
    int32_t d = psn_diff(tx->psn, q->exp);
    if (d == 0) {
        rmsg_t *m = MSG(q, k->msg);
        if (m->rnr && i == m->pk0) {
            m->rnr = 0;
            q->nak_sent = 1; /* silent until the RNR'd PSN comes again */
            q->since_ack = 0; /* the RNR NAK acknowledges all before it */
            q->flush_gen++;
            b_ack(s, q, t, K_RNR, tx->psn, (uint8_t)(0x20 | q->rnr_code));
            return;
        }
        q->nak_sent = 0;
        if (k->opcode == OP_READ_REQ) {
            q->exp = psn_add(q->exp, (int32_t)k->span);
            q->msn++;
            k->resp_msn = q->msn;
            k->served = 1;
            q->since_ack = 0;
            b_read_resp(s, q, t, i, 0);
            return;
        }
        if (k->opcode == OP_CMP_SWAP || k->opcode == OP_FETCH_ADD) {
            q->exp = psn_add(q->exp, 1);
            q->msn++;
            k->resp_msn = q->msn;
            k->served = 1;
            q->since_ack = 0;
            b_atack(s, q, t, i);
            return;
        }
        q->exp = psn_add(q->exp, 1);
        if (k->last)
            q->msn++;
        if (k->ackreq) {
            if (++q->since_ack >= (uint32_t)q->ack_every) {
                q->since_ack = 0;
                b_ack(s, q, t, K_ACK, psn_add(q->exp, -1), 0x1F);
            } else {
                sched(s, t + t_flush(s), EV_FLUSH, q->id, ++q->flush_gen);
            }
        }
    } else if (d < 0) {
        /* a duplicate (C9-104 ff.): READ responses again from its PSN,
         * the atomic's saved result, else an ACK of all received */
        if (k->opcode == OP_READ_REQ) {
            if (k->served)
                b_read_resp(s, q, t, i, tx->roff);
        } else if (k->opcode == OP_CMP_SWAP || k->opcode == OP_FETCH_ADD) {
            if (k->served)
                b_atack(s, q, t, i);
        } else if (k->ackreq && (!q->have_reack || t - q->reack_t >= 60 * US)) {
            /* one ACK for a burst of duplicates: not again within 60 us */
            q->have_reack = 1;
            q->reack_t = t;
            q->since_ack = 0;
            b_ack(s, q, t, K_ACK, psn_add(q->exp, -1), 0x1F);
        }
    } else if (!q->nak_sent) {
        /* out of sequence: one NAK per episode (rxe_resp.c: sent_psn_nak) */
        q->nak_sent = 1;
        q->since_ack = 0; /* the NAK acknowledges all before it */
        q->flush_gen++;
        b_ack(s, q, t, K_NAK, q->exp, 0x60);
    }
}

static void b_flush(rs_t *s, qp_t *q, uint64_t t, uint32_t gen)
{
    if (gen != q->flush_gen || !q->since_ack)
        return;
    q->since_ack = 0;
    b_ack(s, q, t, K_ACK, psn_add(q->exp, -1), 0x1F);
}

/* ---- scenario ---- */
static void add_msg(rs_t *s, qp_t *q, int op, uint32_t len, uint32_t *psn)
{
    rmsg_t m;
    memset(&m, 0, sizeof m);
    m.op = op;
    m.len = len;
    m.va = 0x7f0000000000ull + ((uint64_t)q->id << 32) + (uint64_t)q->msgs->len * 0x100000ull;
    m.pk0 = q->pk->len;
    uint32_t mi = q->msgs->len;
    rpk_t k;
    memset(&k, 0, sizeof k);
    k.msg = mi;
    k.span = 1;
    k.last = 1;
    if (op == MO_READ || op == MO_CMP_SWAP || op == MO_FETCH_ADD) {
        k.psn = *psn;
        k.opcode = op == MO_READ ? OP_READ_REQ : op == MO_CMP_SWAP ? OP_CMP_SWAP : OP_FETCH_ADD;
        if (op == MO_READ)
            k.span = len ? (len + q->mtu - 1) / q->mtu : 1;
        *psn = psn_add(*psn, (int32_t)k.span);
        g_array_append_val(q->pk, k);
        m.npk = 1;
        g_array_append_val(q->msgs, m);
        return;
    }
    uint32_t n = len ? (len + q->mtu - 1) / q->mtu : 1;
    int wr = op == MO_WRITE || op == MO_WRITE_IMM;
    for (uint32_t i = 0; i < n; i++) {
        k.psn = *psn;
        *psn = psn_add(*psn, 1);
        k.off = i * q->mtu;
        k.paylen = len - k.off < q->mtu ? len - k.off : q->mtu;
        k.last = i == n - 1;
        k.ackreq = (uint8_t)k.last;
        uint8_t o;
        if (n == 1) {
            switch (op) {
            case MO_WRITE: o = OP_WRITE_ONLY; break;
            case MO_WRITE_IMM: o = OP_WRITE_ONLY_IMM; break;
            case MO_SEND_IMM: o = OP_SEND_ONLY_IMM; break;
            default: o = OP_SEND_ONLY; break;
            }
        } else if (i == 0) {
            o = wr ? OP_WRITE_FIRST : OP_SEND_FIRST;
        } else if (i < n - 1) {
            o = wr ? OP_WRITE_MIDDLE : OP_SEND_MIDDLE;
        } else {
            switch (op) {
            case MO_WRITE: o = OP_WRITE_LAST; break;
            case MO_WRITE_IMM: o = OP_WRITE_LAST_IMM; break;
            case MO_SEND_IMM: o = OP_SEND_LAST_IMM; break;
            default: o = OP_SEND_LAST; break;
            }
        }
        k.opcode = o;
        g_array_append_val(q->pk, k);
    }
    m.npk = n;
    /* RNR: a SEND whose receive queue is empty the first time */
    if ((op == MO_SEND || op == MO_SEND_IMM) && mi > 0 && chance(s, 0.08))
        m.rnr = 1;
    g_array_append_val(q->msgs, m);
}

static void qp_setup(rs_t *s, int i, uint32_t mtu)
{
    qp_t *q = g_new0(qp_t, 1);
    q->id = i;
    int hosts = s->nqp > 1 && chance(s, 0.5) ? 2 : 1; /* host pairs */
    int hp = hosts > 1 ? i % hosts : 0;
    q->ha = 2 * hp;
    q->hb = 2 * hp + 1;
    uint32_t qa = 0x100 + (uint32_t)i * 0x11, qb = 0x200 + (uint32_t)i * 0x13;
    if (s->v6) {
        char a[32], b[32];
        g_snprintf(a, sizeof a, "fd00::%x", 0x10 + 2 * hp);
        g_snprintf(b, sizeof b, "fd00::%x", 0x11 + 2 * hp);
        ep_v6(&q->A, a, qa);
        ep_v6(&q->B, b, qb);
    } else {
        ep_v4(&q->A, 10, 0, (uint8_t)hp, 1, qa);
        ep_v4(&q->B, 10, 0, (uint8_t)hp, 2, qb);
    }
    q->mtu = mtu;
    /* PSN anywhere, one QP of a seed sometimes just below the wrap (two
     * QPs between the same hosts with PSNs close together could not be
     * paired from the traffic: not generated) */
    q->spsn = i == s->wrap_qp ? 0xFFFFFFu - rint_(s, 0, 40) : rint_(s, 0, 0xFFFFFF);
    q->exp = q->spsn;
    q->msgs = g_array_new(FALSE, TRUE, sizeof(rmsg_t));
    q->pk = g_array_new(FALSE, TRUE, sizeof(rpk_t));
    q->window = (int)rint_(s, 1, 8);
    q->ack_every = chance(s, 0.5) ? 1 : (int)rint_(s, 2, 4);
    q->max_losses = (int)rint_(s, 1, 8);
    q->gb_pending = q->gb_cur = -1;
    if (s->timing == TM_HW) {
        q->tmo_ns = rns(s, 600 * US, 3 * MS);
        q->rnr_code = (uint8_t)rint_(s, 1, 8);
    } else {
        q->tmo_ns = rns(s, 4 * MS, 9 * MS);
        q->rnr_code = (uint8_t)rint_(s, 0x0A, 0x0E);
    }
    q->rnr_ns = rnr_code_ns(q->rnr_code);
    uint32_t psn = q->spsn;
    /* the first message shows the MTU (a full first packet) */
    add_msg(s, q, chance(s, 0.5) ? MO_WRITE : MO_SEND, mtu + rint_(s, 1, 2 * mtu), &psn);
    uint32_t n = rint_(s, 2, 14);
    for (uint32_t m = 0; m < n; m++) {
        uint32_t r = rint_(s, 0, 99), len;
        int op;
        if (r < 22) op = MO_WRITE;
        else if (r < 32) op = MO_WRITE_IMM;
        else if (r < 52) op = MO_SEND;
        else if (r < 60) op = MO_SEND_IMM;
        else if (r < 82) op = MO_READ;
        else if (r < 91) op = MO_CMP_SWAP;
        else op = MO_FETCH_ADD;
        switch (rint_(s, 0, 5)) {
        case 0: len = rint_(s, 0, 64); break;
        case 1: len = rint_(s, 1, mtu); break;
        case 2: len = mtu * rint_(s, 1, 4); break;
        default: len = rint_(s, 1, 6 * mtu); break;
        }
        if (op == MO_READ && !len)
            len = 1;
        if (op == MO_CMP_SWAP || op == MO_FETCH_ADD)
            len = 8;
        add_msg(s, q, op, len, &psn);
    }
    g_ptr_array_add(s->qps, q);
}

static void qp_free(gpointer p)
{
    qp_t *q = p;
    g_array_free(q->msgs, TRUE);
    g_array_free(q->pk, TRUE);
    g_free(q);
}

static void simulate(rs_t *s)
{
    for (guint i = 0; i < s->qps->len; i++) {
        qp_t *q = QP(s, (int)i);
        q->tx_sched = 1;
        sched(s, 2 * US + rns(s, 0, s->timing == TM_HW ? 3 * US : 50 * US), EV_REQ_TX, q->id, 0);
    }
    while (s->hn) {
        ev_t e = pop(s);
        s->now = e.t;
        if (e.t > 60ull * 1000 * MS) {
            s->stuck = 1;
            break;
        }
        qp_t *q = QP(s, e.qp);
        switch (e.type) {
        case EV_REQ_TX:
            req_tx(s, q, e.t, e.a);
            break;
        case EV_B_RX: b_rx(s, q, e.t, (int)e.a); break;
        case EV_A_RX: a_rx(s, q, e.t, (int)e.a); break;
        case EV_TMO: a_tmo(s, q, e.t, e.a); break;
        case EV_FLUSH: b_flush(s, q, e.t, e.a); break;
        }
    }
    for (guint i = 0; i < s->qps->len; i++)
        if (QP(s, (int)i)->una < QP(s, (int)i)->pk->len)
            s->stuck = 1;
}

/* ---- the capture ---- */
typedef struct {
    uint64_t t, seq;
    int tx;
    int copy;      /* a mirror's copy */
    unsigned fl;   /* the truth (emit flags) */
    uint32_t miss; /* PSNs (responses) skipped before it, lost before the capture point */
} sight_t;

static gint sight_cmp(gconstpointer a, gconstpointer b)
{
    const sight_t *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* per QP, what the capture showed so far */
typedef struct {
    int have_req;
    uint32_t hi;          /* one past the highest request PSN covered */
    int have_resp;
    uint32_t resp_hi;     /* highest READ response / atomic ACK PSN */
    int have_ack;
    uint32_t ack_psn, ack_msn;
    uint64_t last_req_us; /* timestamp of the last request sighting (not a copy) */
    int have_last_req;
    uint32_t last_req_psn; /* and its PSN */
    int last_req_resent;   /* whether it was a resend the capture shows */
    GArray *naks;         /* PSN sequence error NAKs captured since the last episode */
    int rnr_pending;      /* an RNR NAK captured, its retry not yet */
    GArray *resp_seen;    /* per READ packet: captured response indexes (first 64) */
    GArray *next_resp;    /* per READ packet: the next response index expected */
    int ring[2][64];      /* the last first sightings per direction (positions) */
    int nring[2];
} obs_t;

/* The frame's bytes, as a fingerprint: two transmissions with the same are
 * the same bytes on the wire. */
static uint32_t tx_fp(rs_t *s, tx_t *x)
{
    static uint8_t buf[MAX_FRAME];
    (void)s;
    size_t n = pkt_build(&x->p, buf);
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a (a CRC would not do: the frame ends in its own ICRC) */
    for (size_t i = 0; i < n; i++)
        h = (h ^ buf[i]) * 0x100000001b3ull;
    return (uint32_t)(h ^ h >> 32);
}

/* Would z, captured between two sightings of bytes like x's, make x's
 * sender send those bytes again (so that the second could be a resend as
 * well as a copy)?  Requests: a NAK or RNR NAK up to its PSN, a request
 * below it (a go-back shown), an answer reaching a READ's or atomic's
 * PSN; answers: a request up to its PSN (resent: answered again). */
static int resend_reason(const tx_t *x, const tx_t *z)
{
    if (z->qp != x->qp)
        return 0;
    if (x->dir == 0) {
        /* a READ or atomic is retried when a later PSN is answered (also
         * by a NAK) without its own answer */
        int ra = x->p.opcode == OP_READ_REQ || x->p.opcode == OP_CMP_SWAP ||
                 x->p.opcode == OP_FETCH_ADD;
        if (z->dir == 0)
            return psn_diff(z->psn, x->psn) < 0;
        if (z->kind == K_NAK || z->kind == K_RNR)
            return psn_diff(x->psn, z->psn) >= 0 || ra;
        return ra && psn_diff(z->psn, x->psn) >= 0;
    }
    return z->dir == 0 && psn_diff(z->psn, x->psn) <= 0;
}

static int reason_between(rs_t *s, GArray *sg, int from, int to, const tx_t *x)
{
    for (int j = from + 1; j < to; j++)
        if (resend_reason(x, TX(s, g_array_index(sg, sight_t, j).tx)))
            return 1;
    return 0;
}

/* The truth of every sighting, in capture order.  Returns 0, or 1 when the
 * capture shows something no capture-based analysis could decide (then the
 * seed is simulated again, see README). */
static int truth(rs_t *s, GArray *sg, GString *why)
{
    int nq = s->nqp, amb = 0;
    obs_t *ob = g_new0(obs_t, (gsize)nq);
    for (int i = 0; i < nq; i++) {
        ob[i].naks = g_array_new(FALSE, FALSE, sizeof(int));
        ob[i].resp_seen = g_array_new(FALSE, TRUE, sizeof(uint64_t));
        g_array_set_size(ob[i].resp_seen, QP(s, i)->pk->len);
        ob[i].next_resp = g_array_new(FALSE, TRUE, sizeof(uint32_t));
        g_array_set_size(ob[i].next_resp, QP(s, i)->pk->len);
    }
    int *first_pos = g_new(int, s->tx->len);
    uint32_t *fp = g_new0(uint32_t, s->tx->len);
    for (guint i = 0; i < s->tx->len; i++)
        first_pos[i] = -1;
    int same_bytes_resend = s->ipid_const || s->v6;
    for (guint i = 0; i < sg->len; i++) {
        sight_t *e = &g_array_index(sg, sight_t, i);
        tx_t *x = TX(s, e->tx);
        qp_t *q = QP(s, x->qp);
        obs_t *o = &ob[x->qp];
        unsigned fl = 0;
        uint32_t miss = 0;
        uint64_t us = e->t / 1000;
        if (first_pos[e->tx] >= 0) {
            /* a second sighting of one transmission: a capture copy */
            if (!amb && e->copy && same_bytes_resend && reason_between(s, sg, first_pos[e->tx], (int)i, x)) {
                g_string_append_printf(why, "a mirror copy after a resend reason (frame %u)", i + 1);
                amb = 1;
            }
            e->fl = F_DUP;
            continue;
        }
        first_pos[e->tx] = (int)i;
        fp[e->tx] = tx_fp(s, x);
        /* another transmission with the same bytes shortly before, and
         * nothing between that would make its sender send it again: a
         * copy or a resend, no capture can tell */
        for (int r = 0; r < o->nring[x->dir] && !amb; r++) {
            int pj = o->ring[x->dir][r];
            sight_t *y = &g_array_index(sg, sight_t, pj);
            if (y->tx != e->tx && fp[y->tx] == fp[e->tx] && e->t - y->t <= 60 * US &&
                !reason_between(s, sg, pj, (int)i, x)) {
                g_string_append_printf(why, "frames %d and %u: the same bytes, no resend reason between",
                                       pj + 1, i + 1);
                amb = 1;
            }
        }
        if (o->nring[x->dir] == 64)
            memmove(o->ring[x->dir], o->ring[x->dir] + 1, sizeof(int) * 63), o->nring[x->dir]--;
        o->ring[x->dir][o->nring[x->dir]++] = (int)i;

        if (x->dir == 0) {
            rpk_t *k = PK(q, x->pki);
            uint32_t end = psn_add(k->psn, (int32_t)k->span); /* one past */
            int visible_old = o->have_req && psn_diff(x->psn, o->hi) < 0;
            int filler = visible_old && !k->cap_seen;
            int64_t silence = o->have_last_req ? (int64_t)(us - o->last_req_us) : 0;
            if (!o->have_req) {
                o->have_req = 1;
                o->hi = end;
            } else if (!visible_old) {
                int32_t skip = psn_diff(x->psn, o->hi);
                if (skip > 0)
                    miss = (uint32_t)skip;
                o->hi = end;
            }
            /* a resend can only be seen as one below the highest PSN the
             * capture saw: above it, it is the capture's first sight */
            if (x->retrans && visible_old)
                fl |= F_RETRANS;
            /* A PSN the capture never saw, below others it saw, with no
             * sign of a go-back before it (no NAK or RNR NAK captured since
             * the last episode, no silence, not a later packet of a go-back
             * seen already): a resend or the network's reordering.  The
             * request after it tells when it resends a PSN above it that
             * the capture saw before; else no capture can (README). */
            if (filler && !(x->gb >= 0 && GB(s, x->gb)->seen) && !o->naks->len && !o->rnr_pending &&
                silence < 500) {
                int ok = 0;
                for (guint j = i + 1; j < sg->len; j++) {
                    sight_t *n = &g_array_index(sg, sight_t, j);
                    tx_t *y = TX(s, n->tx);
                    if (y->qp != x->qp || y->dir || first_pos[n->tx] >= 0 || n->copy)
                        continue;
                    ok = psn_diff(y->psn, x->psn) > 0 && PK(q, y->pki)->cap_seen;
                    break;
                }
                if (!ok && !amb) {
                    g_string_append_printf(why, "frame %u: a gap filled with no sign of a resend", i + 1);
                    amb = 1;
                }
            }
            k->cap_seen = 1;
            /* the message, counted at its first captured counting packet */
            if (k->last) {
                if (!k->counted) {
                    k->counted = 1;
                    if (fl & F_RETRANS)
                        fl |= F_COUNTMSG;
                } else if (!(fl & F_RETRANS)) {
                    fl |= F_NOMSG;
                }
            }
            /* a READ retry (README: re-issued inside the READ's range, or
             * at its own PSN when later responses of it were captured
             * but not its first) */
            if (k->opcode == OP_READ_REQ && (fl & F_RETRANS)) {
                uint64_t seen = g_array_index(o->resp_seen, uint64_t, x->pki);
                if (x->roff > 0 || ((seen & ~1ull) && !(seen & 1)))
                    fl |= F_RREISSUE;
            }
            /* the first captured packet of a sender's go-back */
            if (x->gb >= 0 && !GB(s, x->gb)->seen) {
                gb_t *g = GB(s, x->gb);
                g->seen = 1;
                if (g->cause == CA_RNR)
                    o->rnr_pending = 0;
                if ((fl & F_RETRANS) && g->cause != CA_RNR) {
                    int start = g->first_tx == e->tx;
                    int nak_here = 0;
                    for (guint n = 0; n < o->naks->len; n++)
                        if (TX(s, g_array_index(o->naks, int, n))->psn == x->psn)
                            nak_here = 1;
                    fl |= F_GBN;
                    if (!start) {
                        /* its first resends were lost before the capture
                         * point: why it went back cannot be seen ("?").
                         * A timer's go-back seen first at the PSN after
                         * the last request captured, a resend it shows, after a
                         * silence: the go-back under way going on after a
                         * sender's stall shows the same frames (rxe on 6.1
                         * and 6.12 stalls 0.5-3.6 ms inside a go-back with
                         * no timer: tools/bench/README.md, random-seeds,
                         * session 20): no capture can tell (README) */
                        if (g->cause == CA_TMO && silence >= 500 && o->have_last_req &&
                            o->last_req_resent && psn_diff(x->psn, o->last_req_psn) == 1 && !amb) {
                            g_string_append_printf(why, "frame %u: a go-back going on at its next PSN "
                                                   "after a silence (a timer's or a stall)", i + 1);
                            amb = 1;
                        }
                    } else if (g->cause == CA_NAK) {
                        /* its NAK captured: "nak"; missed by the capture
                         * (and no other NAK pending): "resend" */
                        if (g->nak_tx >= 0 && first_pos[g->nak_tx] >= 0)
                            fl |= F_TNAK;
                        else if (!o->naks->len && silence < 500)
                            fl |= F_TRS;
                    } else if (g->cause == CA_TMO) {
                        if (silence >= 500 && !nak_here)
                            fl |= F_TMO;
                    } else if (g->cause == CA_READ) {
                        if ((fl & F_RREISSUE) && silence < 500 && !nak_here)
                            fl |= F_TRR;
                    }
                    g_array_set_size(o->naks, 0);
                }
            }
            o->last_req_us = us;
            o->have_last_req = 1;
            o->last_req_psn = x->psn;
            o->last_req_resent = (fl & F_RETRANS) != 0;
        } else {
            if (x->kind == K_ACK) {
                if (o->have_ack && o->ack_psn == x->psn && o->ack_msn == x->p.aeth_msn)
                    fl |= F_DUPACK;
                o->have_ack = 1;
                o->ack_psn = x->psn;
                o->ack_msn = x->p.aeth_msn;
            } else if (x->kind == K_NAK) {
                g_array_append_val(o->naks, e->tx);
            } else if (x->kind == K_RNR) {
                o->rnr_pending = 1;
            } else if (x->kind == K_RESP || x->kind == K_ATACK) {
                int visible_old = o->have_resp && psn_diff(x->psn, o->resp_hi) <= 0;
                if (x->retrans && visible_old)
                    fl |= F_RETRANS;
                if (!visible_old) {
                    o->have_resp = 1;
                    o->resp_hi = x->psn;
                    if (x->kind == K_RESP) {
                        uint32_t *nx = &g_array_index(o->next_resp, uint32_t, x->pki);
                        if (x->roff > *nx)
                            miss = x->roff - *nx;
                        *nx = x->roff + 1;
                    }
                }
                if (x->kind == K_RESP && x->roff < 64)
                    g_array_index(o->resp_seen, uint64_t, x->pki) |= 1ull << x->roff;
            }
        }
        e->fl = fl;
        e->miss = miss;
    }
    for (int i = 0; i < nq; i++) {
        g_array_free(ob[i].naks, TRUE);
        g_array_free(ob[i].resp_seen, TRUE);
        g_array_free(ob[i].next_resp, TRUE);
    }
    g_free(ob);
    g_free(first_pos);
    g_free(fp);
    return amb;
}

static void rs_free(rs_t *s)
{
    if (s->qps)
        g_ptr_array_free(s->qps, TRUE);
    if (s->tx)
        g_array_free(s->tx, TRUE);
    if (s->gb)
        g_array_free(s->gb, TRUE);
    g_free(s->h);
    if (s->rng)
        g_rand_free(s->rng);
    memset(s, 0, sizeof *s);
}

/* One attempt at a seed: 0 written, 1 ambiguous (nothing written: try the
 * next attempt), -1 the simulation did not finish. */
static int rand_run(ctx_t *c, guint32 seed, int timing, guint32 attempt, GString *desc)
{
    rs_t S, *s = &S;
    memset(s, 0, sizeof *s);
    s->rng = g_rand_new_with_seed(seed * 2654435761u + (guint32)timing * 0x9E3779B9u + attempt * 40503u);
    s->timing = timing;
    s->tap = (int)rint_(s, 0, 3);
    s->ipid_const = chance(s, 0.5);
    s->v6 = chance(s, 0.2);
    if (s->tap == TAP_AB) {
        /* merged captures: a resend with the bytes of its original could
         * not be told from the other capture point's copy (README) */
        s->ipid_const = 0;
        s->v6 = 0;
    }
    s->vlan = chance(s, 0.25);
    s->snap = chance(s, 0.2) ? 128 : 0;
    s->mirror_pct = chance(s, 0.3) ? (int)rint_(s, 1, 4) : 0;
    s->capdrop = chance(s, 0.3) ? rint_(s, 5, 20) / 1000.0 : 0;
    if (s->tap == TAP_AB)
        s->capdrop = 0; /* a frame one point missed shows up late at the other: README */
    s->nqp = (int)rint_(s, 1, 8);
    s->wrap_qp = chance(s, 0.3) ? (int)rint_(s, 0, (uint32_t)s->nqp - 1) : -1;
    static const double loss[] = { 0.0, 0.01, 0.03, 0.06, 0.1 };
    s->loss = loss[rint_(s, 0, 4)];
    uint32_t mtu = 256u << rint_(s, 0, 4);
    memset(&s->path, 0, sizeof s->path);
    s->path.link = LT_ETH;
    s->path.net = s->v6 ? NET_IP6 : NET_IP4;
    s->path.dscp = 26;
    s->path.ecn = 2;
    if (s->vlan) {
        s->path.nvlan = 1;
        s->path.vid[0] = (uint16_t)rint_(s, 1, 4094);
    }
    uint64_t oneway = s->timing == TM_HW ? rns(s, 1 * US, 5 * US) : rns(s, 5 * US, 30 * US);
    s->d_as = oneway * rint_(s, 2, 8) / 10;
    s->d_sb = oneway - s->d_as;
    for (int h = 0; h < 16; h++)
        s->ipid[h] = (uint16_t)rint_(s, 1, 0xFFFF);
    s->qps = g_ptr_array_new_with_free_func(qp_free);
    s->tx = g_array_new(FALSE, TRUE, sizeof(tx_t));
    s->gb = g_array_new(FALSE, TRUE, sizeof(gb_t));
    for (int i = 0; i < s->nqp; i++)
        qp_setup(s, i, mtu);
    simulate(s);
    if (s->stuck) {
        rs_free(s);
        return -1;
    }

    /* sightings at the capture point(s), and a mirror's copies */
    GArray *sg = g_array_new(FALSE, TRUE, sizeof(sight_t));
    uint64_t sq = 0;
    for (guint i = 0; i < s->tx->len; i++) {
        tx_t *x = TX(s, (int)i);
        for (int pt = 0; pt < 3; pt++) {
            int want = s->tap == TAP_AB ? pt != 1 : pt == s->tap;
            if (!want || !tx_seen(x, pt))
                continue;
            /* the capture missed it (not the first request of a QP: the
             * capture sees each sequence begin; not an RNR NAK or a READ
             * request, see README) */
            if (s->capdrop > 0 && !(x->dir == 0 && x->psn == QP(s, x->qp)->spsn && !x->retrans) &&
                x->kind != K_RNR && !(x->kind == K_REQ && x->p.opcode == OP_READ_REQ) &&
                chance(s, s->capdrop))
                continue;
            sight_t e = { x->t_tap[pt], sq++, (int)i, 0, 0, 0 };
            g_array_append_val(sg, e);
        }
    }
    g_array_sort(sg, sight_cmp);
    if (s->mirror_pct) {
        guint n = sg->len;
        for (guint i = 0; i < n; i++) {
            if (!chance(s, s->mirror_pct / 100.0))
                continue;
            sight_t e = g_array_index(sg, sight_t, i);
            e.t += rns(s, 100, 1000);
            e.seq = sq++;
            e.copy = 1;
            g_array_append_val(sg, e);
        }
        g_array_sort(sg, sight_cmp);
    }
    GString *why = g_string_new("");
    if (truth(s, sg, why) && !getenv("QPSCEN_KEEP_AMBIGUOUS")) {
        g_string_printf(desc, "%s", why->str);
        g_string_free(why, TRUE);
        g_array_free(sg, TRUE);
        rs_free(s);
        return 1;
    }
    g_string_free(why, TRUE);

    for (int i = 0; i < s->nqp; i++) {
        qp_t *q = QP(s, i);
        q->cv = conv_new(c, "RC", "traffic", &q->A, &q->B);
        q->cv->extra = 1;
        q->cv->rnd = 1;
    }
    for (guint i = 0; i < sg->len; i++) {
        sight_t *e = &g_array_index(sg, sight_t, i);
        tx_t *x = TX(s, e->tx);
        pkt_t p = x->p;
        c->x_missing = e->miss;
        emit(c, e->t, &p, QP(s, x->qp)->cv, x->dir, e->fl, (uint32_t)s->snap);
    }
    g_string_printf(desc, "random %s seed%s: capture point %s, %d QP%s, MTU %u, loss %.0f %%, "
                    "IP ID %s%s%s, mirror copies %d %%, capture drops %.1f %%, one way %" G_GUINT64_FORMAT " ns; "
                    "%u transmissions, %u go-backs",
                    timing == TM_HW ? "hw" : "rxe", attempt ? " (simulated again)" : "",
                    tap_names[s->tap], s->nqp, s->nqp > 1 ? "s" : "", mtu, s->loss * 100,
                    s->v6 ? "none (IPv6)" : s->ipid_const ? "0" : "incrementing",
                    s->vlan ? ", VLAN" : "", s->snap ? ", snaplen 128" : "",
                    s->mirror_pct, s->capdrop * 100, s->d_as + s->d_sb, s->tx->len, s->gb->len);
    g_array_free(sg, TRUE);
    rs_free(s);
    return 0;
}

int rand_scenario(const char *dir, guint32 seed, int timing)
{
    const char *tn = timing == TM_HW ? "hw" : "rxe";
    char *name = g_strdup_printf("random-%s-%u", tn, seed);
    char *pc = g_strdup_printf("%s/%s.pcap", dir, name);
    char *js = g_strdup_printf("%s/%s.json", dir, name);
    int rc = 1, r = 1;
    ctx_t *c = ctx_new(name, LT_ETH, pc, seed);
    if (c) {
        GString *desc = g_string_new("");
        c->keep_ipid = 1;
        for (guint32 attempt = 0; attempt < 64 && r == 1; attempt++) {
            r = rand_run(c, seed, timing, attempt, desc);
            if (getenv("QPSCEN_DEBUG") && r == 1)
                fprintf(stderr, "qpscen random: seed %u (%s) attempt %u: %s\n", seed, tn, attempt, desc->str);
        }
        rc = ctx_finish(c, js, desc->str, seed) || r ? 1 : 0;
        if (r)
            fprintf(stderr, "qpscen random: seed %u (%s): %s\n", seed, tn,
                    r < 0 ? "the simulation did not finish" : "no attempt without an ambiguity");
        g_string_free(desc, TRUE);
    }
    g_free(name);
    g_free(pc);
    g_free(js);
    return rc;
}
