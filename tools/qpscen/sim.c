/* qpscen: small discrete-event model of an RC requester/responder pair.
 * Everything that is emitted goes through emit(), which does the counting,
 * so the manifest reflects exactly what ended up in the capture. */
#include "qpscen.h"

#include <string.h>

typedef struct {
    uint32_t psn;
    uint32_t span;      /* PSNs consumed (READ: number of response packets) */
    uint8_t opcode;
    uint8_t ackreq;
    uint8_t reissued;
    uint8_t captured;   /* some copy of this request packet is in the capture */
    uint32_t msg;
    uint32_t off;       /* byte offset within the message */
    uint32_t paylen;
    uint32_t rx_k;      /* READ: next expected response index at the requester */
    uint32_t resp_hi;   /* READ: response packets ever sent by the responder */
} rpkt_t;

typedef struct {
    int op;
    uint32_t len;
    uint64_t va;
} msg_t;

struct rc {
    ctx_t *ctx;
    conv_t *cv;
    path_t path;
    ep_t A, B;
    uint32_t mtu, next_psn;
    GArray *msgs, *pk;
    GArray *drop_req, *drop_resp, *ce, *dup;
    GArray *lose_ack; /* ACK PSNs captured but lost after the capture point, once */
    int rnr_msg, rnr_done, ack_every, window, use_timeout;
    uint64_t timeout_ns, rnr_ns;
    /* requester */
    uint32_t idx, sent_hi, acked, last_ack_psn;
    uint32_t cap_hi; /* one past the highest packet index captured */
    int have_ack_psn, gbn_pending, tmo_pending, tx_sched;
    uint64_t paused_until, a_free, a_arr;
    uint32_t tmo_gen;
    /* responder */
    uint32_t exp, msn;
    int nak_sent, since_ack, have_cnp;
    uint64_t last_cnp, b_free, b_arr;
    uint16_t resp_sport;
};

enum { EV_EMIT, EV_REQ_TX, EV_B_RX, EV_B_REREAD, EV_A_ACK, EV_A_RESP, EV_TMO };

typedef struct {
    uint64_t t, seq;
    int type;
    rc_t *r;
    uint32_t a, b;
    pkt_t *pkt;
    conv_t *cv;
    int dir;
    unsigned flags;
} ev_t;

static GArray *evq;
static uint64_t evseq;

static void sched(uint64_t t, int type, rc_t *r, uint32_t a, uint32_t b)
{
    if (!evq)
        evq = g_array_new(FALSE, TRUE, sizeof(ev_t));
    ev_t e;
    memset(&e, 0, sizeof e);
    e.t = t;
    e.seq = evseq++;
    e.type = type;
    e.r = r;
    e.a = a;
    e.b = b;
    g_array_append_val(evq, e);
}

static void sched_emit(uint64_t t, const pkt_t *p, conv_t *cv, int dir, unsigned flags)
{
    sched(t, EV_EMIT, NULL, 0, 0);
    ev_t *e = &g_array_index(evq, ev_t, evq->len - 1);
    e->pkt = g_memdup2(p, sizeof *p);
    e->cv = cv;
    e->dir = dir;
    e->flags = flags;
}

static int in_list(GArray *a, uint32_t psn)
{
    for (guint i = 0; i < a->len; i++)
        if (g_array_index(a, uint32_t, i) == psn)
            return 1;
    return 0;
}

rc_t *rc_new(ctx_t *c, conv_t *cv, const path_t *path, const ep_t *a, const ep_t *b,
             uint32_t start_psn, uint32_t mtu)
{
    rc_t *r = g_new0(rc_t, 1);
    r->ctx = c;
    r->cv = cv;
    r->path = *path;
    r->A = *a;
    r->B = *b;
    r->mtu = mtu;
    r->next_psn = start_psn & PSN_MASK;
    r->exp = r->next_psn;
    r->msgs = g_array_new(FALSE, TRUE, sizeof(msg_t));
    r->pk = g_array_new(FALSE, TRUE, sizeof(rpkt_t));
    r->drop_req = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    r->drop_resp = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    r->ce = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    r->dup = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    r->lose_ack = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    r->rnr_msg = -1;
    r->ack_every = 1;
    r->timeout_ns = 4000000;   /* 4 ms */
    r->rnr_ns = 1280000;       /* RNR timer 0x0e = 1.28 ms */
    return r;
}

void rc_free(rc_t *r)
{
    g_array_free(r->msgs, TRUE);
    g_array_free(r->pk, TRUE);
    g_array_free(r->drop_req, TRUE);
    g_array_free(r->drop_resp, TRUE);
    g_array_free(r->ce, TRUE);
    g_array_free(r->dup, TRUE);
    g_array_free(r->lose_ack, TRUE);
    g_free(r);
}

uint32_t rc_next_psn(rc_t *r) { return r->next_psn; }
void rc_drop_req(rc_t *r, uint32_t psn) { psn &= PSN_MASK; g_array_append_val(r->drop_req, psn); }
void rc_drop_resp(rc_t *r, uint32_t psn) { psn &= PSN_MASK; g_array_append_val(r->drop_resp, psn); }
void rc_ce(rc_t *r, uint32_t psn) { psn &= PSN_MASK; g_array_append_val(r->ce, psn); }
void rc_dup(rc_t *r, uint32_t psn) { psn &= PSN_MASK; g_array_append_val(r->dup, psn); }
void rc_lose_ack(rc_t *r, uint32_t psn) { psn &= PSN_MASK; g_array_append_val(r->lose_ack, psn); }
void rc_rnr(rc_t *r, int msg_index) { r->rnr_msg = msg_index; }
void rc_opts(rc_t *r, int ack_every, int window_msgs, int use_timeout)
{
    r->ack_every = ack_every > 0 ? ack_every : 1;
    r->window = window_msgs;
    r->use_timeout = use_timeout;
}

void rc_msg(rc_t *r, int op, uint32_t len)
{
    msg_t m;
    m.op = op;
    m.len = len;
    m.va = 0x7f0000000000ull + (uint64_t)r->msgs->len * 0x10000ull;
    uint32_t mi = r->msgs->len;
    g_array_append_val(r->msgs, m);
    rpkt_t k;
    memset(&k, 0, sizeof k);
    k.msg = mi;
    k.span = 1;
    if (op == MO_READ || op == MO_CMP_SWAP || op == MO_FETCH_ADD) {
        k.psn = r->next_psn;
        k.ackreq = 1;
        k.opcode = op == MO_READ ? OP_READ_REQ : op == MO_CMP_SWAP ? OP_CMP_SWAP : OP_FETCH_ADD;
        if (op == MO_READ)
            k.span = len ? (len + r->mtu - 1) / r->mtu : 1;
        r->next_psn = psn_add(r->next_psn, (int32_t)k.span);
        g_array_append_val(r->pk, k);
        return;
    }
    uint32_t n = len ? (len + r->mtu - 1) / r->mtu : 1;
    int wr = op == MO_WRITE || op == MO_WRITE_IMM;
    for (uint32_t i = 0; i < n; i++) {
        k.psn = r->next_psn;
        r->next_psn = psn_add(r->next_psn, 1);
        k.off = i * r->mtu;
        k.paylen = len - k.off < r->mtu ? len - k.off : r->mtu;
        k.ackreq = i == n - 1;
        uint8_t o;
        if (n == 1) {
            switch (op) {
            case MO_WRITE: o = OP_WRITE_ONLY; break;
            case MO_WRITE_IMM: o = OP_WRITE_ONLY_IMM; break;
            case MO_SEND_IMM: o = OP_SEND_ONLY_IMM; break;
            case MO_SEND_INV: o = OP_SEND_ONLY_INV; break;
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
            case MO_SEND_INV: o = OP_SEND_LAST_INV; break;
            default: o = OP_SEND_LAST; break;
            }
        }
        k.opcode = o;
        g_array_append_val(r->pk, k);
    }
}

void rc_start(rc_t *r, uint64_t t)
{
    r->a_free = t;
    r->tx_sched = 1;
    sched(t, EV_REQ_TX, r, 0, 0);
}

/* ---- helpers ---- */
static rpkt_t *PK(rc_t *r, uint32_t i) { return &g_array_index(r->pk, rpkt_t, i); }
static msg_t *MSG(rc_t *r, uint32_t i) { return &g_array_index(r->msgs, msg_t, i); }

static uint64_t b_next(rc_t *r, uint64_t t, uint64_t gap)
{
    uint64_t tt = t + jit(r->ctx, 400, 800);
    if (tt < r->b_free)
        tt = r->b_free;
    r->b_free = tt + gap;
    return tt;
}

/* Arrival at one end (last: that end's previous arrival, kept in order). */
static uint64_t arrive(rc_t *r, uint64_t t, uint64_t *last)
{
    uint64_t tt = t + jit(r->ctx, 5000, 3000);
    if (tt <= *last)
        tt = *last + 10;
    *last = tt;
    return tt;
}

static uint64_t pkt_gap(rc_t *r, uint32_t paylen)
{
    return jit(r->ctx, 900 + paylen, 600);
}

static void build_req(rc_t *r, const rpkt_t *k, pkt_t *p)
{
    msg_t *m = MSG(r, k->msg);
    pkt_init(p);
    pkt_addr(p, &r->path, &r->A, &r->B);
    p->opcode = k->opcode;
    p->dqp = r->B.qpn;
    p->psn = k->psn;
    p->ackreq = k->ackreq;
    p->paylen = k->paylen;
    p->payseed = k->psn;
    p->reth_va = m->va;
    p->reth_rkey = 0x00001234;
    p->reth_len = m->len;
    p->imm = 0xC0DE0000u | k->msg;
    p->ieth_rkey = 0x00004321;
    p->at_va = m->va;
    p->at_rkey = 0x00001234;
    p->at_swap = k->opcode == OP_CMP_SWAP ? 0x1111111111111111ull * (k->msg + 1) : 1;
    p->at_cmp = k->opcode == OP_CMP_SWAP ? 0 : 0;
    if (k->opcode == OP_WRITE_ONLY || k->opcode == OP_WRITE_ONLY_IMM || k->opcode == OP_SEND_ONLY ||
        k->opcode == OP_SEND_ONLY_IMM || k->opcode == OP_SEND_LAST || k->opcode == OP_SEND_LAST_IMM)
        p->se = 0;
}

static void resp_pkt(rc_t *r, pkt_t *p, uint8_t opcode, uint32_t psn)
{
    pkt_init(p);
    pkt_addr(p, &r->path, &r->B, &r->A);
    p->opcode = opcode;
    p->dqp = r->A.qpn;
    p->psn = psn;
    if (r->resp_sport)
        p->sport = r->resp_sport;
}

void rc_resp_sport(rc_t *r, uint16_t sport) { r->resp_sport = sport; }

static void kick(rc_t *r, uint64_t t)
{
    if (!r->tx_sched && r->idx < r->pk->len) {
        r->tx_sched = 1;
        sched(t, EV_REQ_TX, r, 0, 0);
    }
}

static void arm_timeout(rc_t *r, uint64_t t)
{
    if (!r->use_timeout)
        return;
    r->tmo_gen++;
    if (r->acked < r->sent_hi)
        sched(t + r->timeout_ns, EV_TMO, r, r->tmo_gen, 0);
}

static void ack_upto(rc_t *r, uint32_t psn)
{
    r->last_ack_psn = psn;
    r->have_ack_psn = 1;
    while (r->acked < r->sent_hi) {
        rpkt_t *k = PK(r, r->acked);
        uint32_t last = psn_add(k->psn, (int32_t)k->span - 1);
        if (psn_diff(psn, last) < 0)
            break;
        if (k->opcode == OP_READ_REQ && k->rx_k < k->span)
            break;
        r->acked++;
    }
}

static void rewind_to(rc_t *r, uint32_t psn)
{
    for (uint32_t j = r->acked; j < r->pk->len; j++) {
        rpkt_t *k = PK(r, j);
        int32_t d = psn_diff(psn, k->psn);
        if (d >= 0 && d < (int32_t)k->span) {
            r->idx = j;
            return;
        }
    }
    r->idx = r->acked;
}

/* ---- requester transmit ---- */
static void req_tx(rc_t *r, uint64_t t)
{
    r->tx_sched = 0;
    if (t < r->paused_until) {
        r->tx_sched = 1;
        sched(r->paused_until, EV_REQ_TX, r, 0, 0);
        return;
    }
    if (r->idx >= r->pk->len)
        return;
    rpkt_t *k = PK(r, r->idx);
    uint32_t acked_msg = r->acked < r->pk->len ? PK(r, r->acked)->msg : r->msgs->len;
    if (r->window && k->msg >= acked_msg + (uint32_t)r->window)
        return; /* resumed by kick() when an ACK arrives */
    int first = r->idx >= r->sent_hi;
    unsigned fl = first ? 0 : F_RETRANS;
    if (!first && r->gbn_pending) {
        fl |= F_GBN;
        if (r->tmo_pending)
            fl |= F_TMO;
    }
    if (!first) {
        r->gbn_pending = 0;
        r->tmo_pending = 0;
    }
    pkt_t p;
    build_req(r, k, &p);
    int ce = in_list(r->ce, k->psn);
    if (ce)
        p.tclass = (uint8_t)(r->path.dscp << 2 | 3);
    int lost = first && in_list(r->drop_req, k->psn);
    if (!lost) {
        if (!first && !k->captured)
            fl |= F_COUNTMSG; /* original was lost: this is the first captured copy */
        k->captured = 1;
        /* Only a resend whose PSN is not newer than one already captured
         * can be seen as a retransmission in the capture. */
        if (!first && r->idx >= r->cap_hi)
            fl &= ~(unsigned)F_RETRANS;
        if (r->idx + 1 > r->cap_hi)
            r->cap_hi = r->idx + 1;
        emit(r->ctx, t, &p, r->cv, 0, fl, 0);
        if (first && in_list(r->dup, k->psn))
            sched_emit(t + 1000, &p, r->cv, 0, F_DUP);
        sched(arrive(r, t, &r->b_arr), EV_B_RX, r, r->idx, (uint32_t)ce);
    }
    r->idx++;
    if (r->idx > r->sent_hi)
        r->sent_hi = r->idx;
    arm_timeout(r, t);
    if (r->idx < r->pk->len) {
        r->tx_sched = 1;
        sched(t + pkt_gap(r, k->paylen), EV_REQ_TX, r, 0, 0);
    }
}

/* ---- responder ---- */
static void send_ack(rc_t *r, uint64_t t, uint8_t syn, uint32_t psn, uint8_t opcode, uint64_t orig)
{
    pkt_t p;
    resp_pkt(r, &p, opcode, psn);
    p.aeth_syn = syn;
    p.aeth_msn = r->msn & PSN_MASK;
    p.atack_orig = orig;
    uint64_t tt = b_next(r, t, 300);
    sched_emit(tt, &p, r->cv, 1, 0);
    for (guint i = 0; i < r->lose_ack->len; i++)
        if (g_array_index(r->lose_ack, uint32_t, i) == psn) {
            g_array_remove_index(r->lose_ack, i); /* captured, never arrives */
            return;
        }
    sched(arrive(r, tt, &r->a_arr), EV_A_ACK, r, syn, psn);
}

static void send_cnp(rc_t *r, uint64_t t)
{
    if (r->have_cnp && t - r->last_cnp < 4000) /* min time between CNPs: 4 us (mlx5 default) */
        return;
    r->have_cnp = 1;
    r->last_cnp = t;
    pkt_t p;
    resp_pkt(r, &p, OPC_CNP, 0);
    p.becn = 1;
    p.tclass = 48 << 2;
    sched_emit(b_next(r, t, 200), &p, r->cv, 1, 0);
}

static void send_read_resp(rc_t *r, uint64_t t, uint32_t i, uint32_t k0)
{
    rpkt_t *rd = PK(r, i);
    msg_t *m = MSG(r, rd->msg);
    uint32_t n = rd->span, cnt = n - k0;
    for (uint32_t k = k0; k < n; k++) {
        uint32_t j = k - k0;
        uint8_t o = cnt == 1 ? OP_READ_RESP_ONLY : j == 0 ? OP_READ_RESP_FIRST
                  : j == cnt - 1 ? OP_READ_RESP_LAST : OP_READ_RESP_MIDDLE;
        pkt_t p;
        resp_pkt(r, &p, o, psn_add(rd->psn, (int32_t)k));
        uint32_t off = k * r->mtu;
        p.paylen = m->len > off ? (m->len - off < r->mtu ? m->len - off : r->mtu) : 0;
        p.payseed = p.psn ^ 0x55;
        p.aeth_syn = 0x1F;
        p.aeth_msn = r->msn & PSN_MASK;
        int first = k >= rd->resp_hi;
        if (first)
            rd->resp_hi = k + 1;
        uint64_t tt = b_next(r, t, jit(r->ctx, 900 + p.paylen, 600));
        if (first && in_list(r->drop_resp, p.psn))
            continue;
        sched_emit(tt, &p, r->cv, 1, first ? 0 : F_RETRANS);
        sched(arrive(r, tt, &r->a_arr), EV_A_RESP, r, i, k);
    }
}

static void b_rx(rc_t *r, uint64_t t, uint32_t i, int ce)
{
    rpkt_t *k = PK(r, i);
    int32_t d = psn_diff(k->psn, r->exp);
    if (ce)
        send_cnp(r, t);
    if (d == 0) {
        msg_t *m = MSG(r, k->msg);
        int first_of_msg = i == 0 || PK(r, i - 1)->msg != k->msg;
        if ((int)k->msg == r->rnr_msg && !r->rnr_done && first_of_msg) {
            r->rnr_done = 1;
            r->nak_sent = 1;
            send_ack(r, t, 0x20 | 0x0E, k->psn, OP_ACK, 0);
            return;
        }
        r->nak_sent = 0;
        if (k->opcode == OP_READ_REQ) {
            r->exp = psn_add(r->exp, (int32_t)k->span);
            r->msn++;
            r->since_ack = 0;
            send_read_resp(r, t, i, 0);
            return;
        }
        if (k->opcode == OP_CMP_SWAP || k->opcode == OP_FETCH_ADD) {
            r->exp = psn_add(r->exp, 1);
            r->msn++;
            r->since_ack = 0;
            send_ack(r, t, 0x1F, k->psn, OP_ATOMIC_ACK, 0x100 + (uint64_t)m->va % 977);
            return;
        }
        r->exp = psn_add(r->exp, 1);
        if (k->ackreq)
            r->msn++;
        r->since_ack++;
        if (k->ackreq && (r->since_ack >= r->ack_every || i == r->pk->len - 1)) {
            r->since_ack = 0;
            send_ack(r, t, 0x1F, k->psn, OP_ACK, 0);
        }
    } else if (d < 0) {
        if (k->opcode == OP_READ_REQ)
            send_read_resp(r, t, i, 0);
        else if (k->opcode == OP_CMP_SWAP || k->opcode == OP_FETCH_ADD)
            send_ack(r, t, 0x1F, k->psn, OP_ATOMIC_ACK, 0x100);
        else if (k->ackreq)
            send_ack(r, t, 0x1F, psn_add(r->exp, -1), OP_ACK, 0);
    } else if (!r->nak_sent) {
        r->nak_sent = 1;
        send_ack(r, t, 0x60, r->exp, OP_ACK, 0);
    }
}

/* ---- requester receive ---- */
static void a_ack(rc_t *r, uint64_t t, uint8_t syn, uint32_t psn)
{
    unsigned ty = syn >> 5;
    if (ty == 0) {
        ack_upto(r, psn);
        arm_timeout(r, t);
        kick(r, t + 200);
        return;
    }
    ack_upto(r, psn_add(psn, -1));
    rewind_to(r, psn);
    if (ty == 1) {
        r->paused_until = t + r->rnr_ns;
    } else {
        r->gbn_pending = 1;
    }
    arm_timeout(r, t);
    kick(r, t + 500);
}

static void a_resp(rc_t *r, uint64_t t, uint32_t i, uint32_t k)
{
    rpkt_t *rd = PK(r, i);
    if (k == rd->rx_k) {
        rd->rx_k++;
        if (rd->rx_k == rd->span) {
            if (r->acked < i + 1)
                r->acked = i + 1;
            if (r->have_ack_psn)
                ack_upto(r, r->last_ack_psn);
            arm_timeout(r, t);
            kick(r, t + 200);
        }
    } else if (k > rd->rx_k && !rd->reissued) {
        /* gap in the response stream: re-issue READ for the remainder */
        rd->reissued = 1;
        pkt_t p;
        build_req(r, rd, &p);
        uint32_t off = rd->rx_k * r->mtu;
        p.psn = psn_add(rd->psn, (int32_t)rd->rx_k);
        p.reth_va += off;
        p.reth_len -= off;
        uint64_t tt = t + 300;
        sched_emit(tt, &p, r->cv, 0, F_RETRANS | F_GBN); /* going back to the missing response PSN */
        sched(arrive(r, tt, &r->b_arr), EV_B_REREAD, r, i, rd->rx_k);
    }
}

static void a_tmo(rc_t *r, uint64_t t, uint32_t gen)
{
    if (gen != r->tmo_gen || r->acked >= r->sent_hi)
        return;
    r->idx = r->acked;
    r->gbn_pending = 1;
    r->tmo_pending = 1;
    kick(r, t);
}

void sim_run(ctx_t *c)
{
    (void)c;
    while (evq && evq->len) {
        guint best = 0;
        for (guint i = 1; i < evq->len; i++) {
            ev_t *a = &g_array_index(evq, ev_t, i), *b = &g_array_index(evq, ev_t, best);
            if (a->t < b->t || (a->t == b->t && a->seq < b->seq))
                best = i;
        }
        ev_t e = g_array_index(evq, ev_t, best);
        g_array_remove_index_fast(evq, best);
        switch (e.type) {
        case EV_EMIT:
            emit(c, e.t, e.pkt, e.cv, e.dir, e.flags, 0);
            g_free(e.pkt);
            break;
        case EV_REQ_TX: req_tx(e.r, e.t); break;
        case EV_B_RX: b_rx(e.r, e.t, e.a, (int)e.b); break;
        case EV_B_REREAD: send_read_resp(e.r, e.t, e.a, e.b); break;
        case EV_A_ACK: a_ack(e.r, e.t, (uint8_t)e.a, e.b); break;
        case EV_A_RESP: a_resp(e.r, e.t, e.a, e.b); break;
        case EV_TMO: a_tmo(e.r, e.t, e.a); break;
        }
    }
    if (evq) {
        g_array_free(evq, TRUE);
        evq = NULL;
    }
}
