/* qpscen: pcap writing, per-conversation ground truth, manifest JSON. */
#include "qpscen.h"

#include <stdio.h>
#include <string.h>
#include <stdarg.h>

#define BASE_SEC 1704067200u /* 2024-01-01 00:00:00 UTC */

static const char *op_names[M_NOPS] = {
    "SEND", "SEND_IMM", "SEND_INV", "WRITE", "WRITE_IMM", "READ",
    "CMP_SWAP", "FETCH_ADD", "ATOMIC_WRITE", "FLUSH"
};
static const char *nak_names[NK_N] = {
    "PSN_SEQ_ERR", "INVALID_REQ", "REMOTE_ACCESS", "REMOTE_OP", "INVALID_RD"
};

ctx_t *ctx_new(const char *name, int linktype, const char *out, guint32 seed)
{
    ctx_t *c = g_new0(ctx_t, 1);
    c->name = g_strdup(name);
    c->linktype = linktype;
    /* libpcap wants a DLT_ value; it maps DLT_RAW to LINKTYPE_RAW (101) in the file */
    int dlt = linktype == LT_RAW ? DLT_RAW : linktype;
    c->pd = pcap_open_dead_with_tstamp_precision(dlt, 65535, PCAP_TSTAMP_PRECISION_MICRO);
    if (!c->pd) {
        fprintf(stderr, "qpscen: pcap_open_dead failed\n");
        g_free(c->name);
        g_free(c);
        return NULL;
    }
    /* own FILE with a large buffer: far fewer write(2) calls for big captures */
    FILE *fp = fopen(out, "wb");
    if (!fp) {
        perror(out);
        pcap_close(c->pd);
        g_free(c->name);
        g_free(c);
        return NULL;
    }
    setvbuf(fp, NULL, _IOFBF, 1 << 20);
    c->dump = pcap_dump_fopen(c->pd, fp);
    if (!c->dump) {
        fprintf(stderr, "qpscen: %s: %s\n", out, pcap_geterr(c->pd));
        fclose(fp);
        pcap_close(c->pd);
        g_free(c->name);
        g_free(c);
        return NULL;
    }
    c->rng = g_rand_new_with_seed(seed);
    c->convs = g_ptr_array_new();
    c->note_frames = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    c->note_text = g_ptr_array_new_with_free_func(g_free);
    c->t = 1000; /* 1 us after base */
    return c;
}

static void ds_init(dirstats_t *d)
{
    memset(d, 0, sizeof *d);
    d->f_retrans = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    d->f_naks = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    d->f_rnr = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    d->f_dups = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    d->f_cnps = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    d->f_ce = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    d->f_gbn = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    d->trig = g_string_new("");
}

static void ds_free(dirstats_t *d)
{
    g_array_free(d->f_retrans, TRUE);
    g_array_free(d->f_naks, TRUE);
    g_array_free(d->f_rnr, TRUE);
    g_array_free(d->f_dups, TRUE);
    g_array_free(d->f_cnps, TRUE);
    g_array_free(d->f_ce, TRUE);
    g_array_free(d->f_gbn, TRUE);
    g_string_free(d->trig, TRUE);
}

conv_t *conv_new(ctx_t *c, const char *transport, const char *pairing,
                 const ep_t *a, const ep_t *b)
{
    conv_t *cv = g_new0(conv_t, 1);
    cv->id = (int)c->convs->len;
    cv->transport = transport;
    cv->pairing = pairing;
    cv->a = *a;
    cv->b = *b;
    cv->link = c->linktype;
    ds_init(&cv->d[0]);
    ds_init(&cv->d[1]);
    cv->cm_frames = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    cv->cm_names = g_ptr_array_new();
    g_ptr_array_add(c->convs, cv);
    return cv;
}

void cm_note(conv_t *cv, uint32_t frame, const char *name)
{
    g_array_append_val(cv->cm_frames, frame);
    g_ptr_array_add(cv->cm_names, (gpointer)name);
}

uint64_t jit(ctx_t *c, uint64_t base_ns, uint64_t spread_ns)
{
    if (!spread_ns)
        return base_ns;
    return base_ns + (uint64_t)g_rand_int_range(c->rng, 0, (gint32)spread_ns);
}

void note(ctx_t *c, uint32_t frame, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_array_append_val(c->note_frames, frame);
    g_ptr_array_add(c->note_text, s);
}

static int msg_kind(uint8_t opc)
{
    if (opc == OPC_CNP)
        return -1;
    switch (opc & 0x1F) {
    case OP_SEND_LAST: case OP_SEND_ONLY: return M_SEND;
    case OP_SEND_LAST_IMM: case OP_SEND_ONLY_IMM: return M_SEND_IMM;
    case OP_SEND_LAST_INV: case OP_SEND_ONLY_INV: return M_SEND_INV;
    case OP_WRITE_LAST: case OP_WRITE_ONLY: return M_WRITE;
    case OP_WRITE_LAST_IMM: case OP_WRITE_ONLY_IMM: return M_WRITE_IMM;
    case OP_READ_REQ: return M_READ;
    case OP_CMP_SWAP: return M_CMP_SWAP;
    case OP_FETCH_ADD: return M_FETCH_ADD;
    case OP_ATOMIC_WRITE: return M_ATOMIC_WRITE;
    case OP_FLUSH: return M_FLUSH;
    default: return -1;
    }
}

uint32_t emit(ctx_t *c, uint64_t t, pkt_t *p, conv_t *cv, int dir, unsigned flags,
              uint32_t snaplen)
{
    int back = t < c->last_t;
    if (back && !c->raw_time)
        t = c->last_t, back = 0; /* never go backwards */
    c->last_t = t;
    if (c->t < t)
        c->t = t;
    if (p->net == NET_IP4 && !p->ipid && !c->keep_ipid)
        p->ipid = ++c->ipid;
    size_t len = pkt_build(p, c->buf);
    struct pcap_pkthdr h;
    memset(&h, 0, sizeof h);
    uint64_t us = t / 1000;
    h.ts.tv_sec = (time_t)(BASE_SEC + us / 1000000u);
    h.ts.tv_usec = (suseconds_t)(us % 1000000u);
    h.len = (bpf_u_int32)len;
    h.caplen = (bpf_u_int32)((snaplen && snaplen < len) ? snaplen : len);
    if (p->ip4_frag && p->net == NET_IP4 && p->link == LT_ETH && !p->nvlan &&
        len > 14 + 20 + 512) {
        /* RFC 791 fragments: the first 512 bytes of IP payload with MF,
         * then the rest at offset 64 (x 8 bytes); the RoCE packet is not
         * counted in any conversation (a reader would have to reassemble) */
        static uint8_t f[2][2048];
        size_t first = 14 + 20 + 512;
        memcpy(f[0], c->buf, first);
        memcpy(f[1], c->buf, 14 + 20);
        memcpy(f[1] + 14 + 20, c->buf + first, len - first);
        for (int i = 0; i < 2; i++) {
            uint8_t *ip = f[i] + 14;
            size_t n = i ? len - first + 20 : 20 + 512;
            ip[2] = (uint8_t)(n >> 8);
            ip[3] = (uint8_t)n;
            ip[6] = i ? 0x00 : 0x20; /* MF on the first; DF off */
            ip[7] = i ? 512 / 8 : 0;
            ip[10] = ip[11] = 0;
            uint32_t sum = 0;
            for (int k = 0; k < 20; k += 2)
                sum += (uint32_t)(ip[k] << 8 | ip[k + 1]);
            while (sum >> 16)
                sum = (sum & 0xffff) + (sum >> 16);
            ip[10] = (uint8_t)(~sum >> 8);
            ip[11] = (uint8_t)~sum;
            h.len = h.caplen = (bpf_u_int32)(14 + n);
            pcap_dump((u_char *)c->dump, &h, f[i]);
            ++c->nframes;
        }
        return c->nframes - 1;
    }
    pcap_dump((u_char *)c->dump, &h, c->buf);
    uint32_t fno = ++c->nframes;

    uint32_t missing = c->x_missing;
    c->x_missing = 0;
    if (!cv)
        return fno;
    dirstats_t *d = &cv->d[dir];
    if (back)
        d->tback++;
    if (missing && dir == 1) { /* B->A: READ responses */
        d->rgaps++;
        d->rmissing += missing;
    } else if (missing) {
        d->gaps++;
        d->missing += missing;
    }
    d->packets++;
    if (p->opcode != OPC_CNP)
        d->payload_bytes += p->paylen;
    /* a `qos` conversation's first PSN is its first request's (both sides
     * may send requests, and the first packet of a side can be an ACK) */
    int resp = (p->opcode & 0x1F) >= OP_READ_RESP_FIRST && (p->opcode & 0x1F) <= OP_ATOMIC_ACK;
    if (!d->have_psn && (!cv->qos || (p->opcode != OPC_CNP && !resp))) {
        d->have_psn = 1;
        d->first_psn = p->psn;
    }
    int mk = msg_kind(p->opcode);
    if (mk >= 0 && !(flags & F_NOMSG) && (!(flags & (F_RETRANS | F_DUP)) || (flags & F_COUNTMSG)))
        d->msgs[mk]++;
    unsigned xm = ext_mask(p->opcode);
    if ((p->opcode & 0x1F) == OP_ACK && (xm & X_AETH)) {
        unsigned ty = p->aeth_syn >> 5 & 7, code = p->aeth_syn & 0x1F;
        if (ty == 0 && !(flags & F_DUP)) { /* a capture copy is not another ACK */
            d->acks++;
        } else if (flags & F_DUP) {
            /* a capture copy of a NAK is no other NAK */
        } else if (ty == 1) {
            d->rnr_naks++;
            g_array_append_val(d->f_rnr, fno);
        } else if (ty == 3 && code < NK_N) {
            d->naks[code]++;
            g_array_append_val(d->f_naks, fno);
        }
    }
    {
        int cls = p->opcode == OPC_CNP ? 2 : (p->opcode & 0x1F) == OP_ACK && p->opcode < 0x80 ? 1
                : (p->opcode & 0xE0) == TR_XRC && (p->opcode & 0x1F) == OP_ACK ? 1 : 0;
        d->pcp[cls][p->link == LT_ETH && p->nvlan ? (p->pcp & 7) + 1 : 0]++;
        if (p->net == NET_IP4 || p->net == NET_IP6 || p->net == NET_GRH)
            d->dscp[cls][p->tclass >> 2]++;
    }
    if (p->opcode == OPC_CNP) {
        d->cnps++;
        g_array_append_val(d->f_cnps, fno);
    }
    if ((p->net == NET_IP4 || p->net == NET_IP6) && (p->tclass & 3) == 3) {
        d->ecn_ce++;
        g_array_append_val(d->f_ce, fno);
    }
    if (flags & F_RETRANS) {
        d->retrans++;
        g_array_append_val(d->f_retrans, fno);
    }
    if (flags & F_DUP) {
        d->dups++;
        g_array_append_val(d->f_dups, fno);
    }
    if (flags & F_GBN) {
        d->gbn++;
        g_array_append_val(d->f_gbn, fno);
        g_string_append_printf(d->trig, "%s\"%s\"", d->trig->len ? ", " : "",
                               flags & F_TMO ? "timeout" : flags & F_TNAK ? "nak"
                               : flags & F_TRR ? "read_retry" : flags & F_TRS ? "resend" : "?");
    }
    if (flags & F_RREISSUE)
        d->rr++;
    if (flags & F_NEWSEQ)
        d->newseq++;
    if (flags & F_DUPACK)
        d->dupacks++;
    if (flags & F_OOO)
        d->ooo++;
    if (flags & F_TMO)
        d->tmo++;
    return fno;
}

uint32_t emit_raw(ctx_t *c, uint64_t t, const uint8_t *frame, uint32_t len, uint32_t caplen)
{
    struct pcap_pkthdr h;
    if (t < c->last_t)
        t = c->last_t; /* never go backwards */
    c->last_t = t;
    if (c->t < t)
        c->t = t;
    memset(&h, 0, sizeof h);
    uint64_t us = t / 1000;
    h.ts.tv_sec = (time_t)(BASE_SEC + us / 1000000u);
    h.ts.tv_usec = (suseconds_t)(us % 1000000u);
    h.len = len;
    h.caplen = caplen && caplen < len ? caplen : len;
    pcap_dump((u_char *)c->dump, &h, frame);
    c->x_missing = 0;
    return ++c->nframes;
}

/* ---- manifest ---- */
static void j_frames(GString *s, const char *key, GArray *a, int last)
{
    g_string_append_printf(s, "          \"%s\": [", key);
    for (guint i = 0; i < a->len; i++)
        g_string_append_printf(s, "%s%u", i ? ", " : "", g_array_index(a, uint32_t, i));
    g_string_append_printf(s, "]%s\n", last ? "" : ",");
}

static void j_dir(GString *s, const char *key, const dirstats_t *d, int last, int extra, int qos,
                  int rnd)
{
    g_string_append_printf(s, "      \"%s\": {\n", key);
    if (extra) {
        g_string_append_printf(s, "        \"read_retries\": %" G_GUINT64_FORMAT ",\n", d->rr);
        g_string_append_printf(s, "        \"psn_gaps\": %" G_GUINT64_FORMAT ",\n", d->gaps);
        g_string_append_printf(s, "        \"missing_psns\": %" G_GUINT64_FORMAT ",\n", d->missing);
        g_string_append_printf(s, "        \"response_gaps\": %" G_GUINT64_FORMAT ",\n", d->rgaps);
        g_string_append_printf(s, "        \"missing_responses\": %" G_GUINT64_FORMAT ",\n", d->rmissing);
        g_string_append_printf(s, "        \"out_of_order\": %" G_GUINT64_FORMAT ",\n", d->ooo);
        g_string_append_printf(s, "        \"dup_acks\": %" G_GUINT64_FORMAT ",\n", d->dupacks);
        g_string_append_printf(s, "        \"new_sequences\": %" G_GUINT64_FORMAT ",\n", d->newseq);
        g_string_append_printf(s, "        \"time_backwards\": %" G_GUINT64_FORMAT ",\n", d->tback);
        g_string_append_printf(s, "        \"episode_triggers\": [%s],\n", d->trig->str);
    }
    if (qos) {
        static const char *const cls[3] = { "", "ack_", "cnp_" };
        for (int k = 0; k < 3; k++) {
            int first = 1;
            g_string_append_printf(s, "        \"%spcp\": {", cls[k]);
            for (int v = 0; v < 9; v++)
                if (d->pcp[k][v]) {
                    if (v)
                        g_string_append_printf(s, "%s\"%d\": %" G_GUINT64_FORMAT, first ? "" : ", ", v - 1, d->pcp[k][v]);
                    else
                        g_string_append_printf(s, "%s\"untagged\": %" G_GUINT64_FORMAT, first ? "" : ", ", d->pcp[k][v]);
                    first = 0;
                }
            g_string_append_printf(s, "},\n        \"%sdscp\": {", cls[k]);
            first = 1;
            for (int v = 0; v < 64; v++)
                if (d->dscp[k][v]) {
                    g_string_append_printf(s, "%s\"%d\": %" G_GUINT64_FORMAT, first ? "" : ", ", v, d->dscp[k][v]);
                    first = 0;
                }
            g_string_append(s, "},\n");
        }
    }
    g_string_append_printf(s, "        \"packets\": %" G_GUINT64_FORMAT ",\n", d->packets);
    g_string_append_printf(s, "        \"payload_bytes\": %" G_GUINT64_FORMAT ",\n", d->payload_bytes);
    if (d->have_psn)
        g_string_append_printf(s, "        \"first_psn\": %u,\n", d->first_psn);
    else
        g_string_append(s, "        \"first_psn\": null,\n");
    g_string_append(s, "        \"messages\": {");
    for (int i = 0; i < M_NOPS; i++)
        g_string_append_printf(s, "%s\"%s\": %" G_GUINT64_FORMAT, i ? ", " : "", op_names[i], d->msgs[i]);
    g_string_append(s, "},\n");
    g_string_append_printf(s, "        \"acks\": %" G_GUINT64_FORMAT ",\n", d->acks);
    g_string_append_printf(s, "        \"retransmitted_packets\": %" G_GUINT64_FORMAT ",\n", d->retrans);
    g_string_append(s, "        \"naks\": {");
    for (int i = 0; i < NK_N; i++)
        g_string_append_printf(s, "%s\"%s\": %" G_GUINT64_FORMAT, i ? ", " : "", nak_names[i], d->naks[i]);
    g_string_append(s, "},\n");
    g_string_append_printf(s, "        \"rnr_naks\": %" G_GUINT64_FORMAT ",\n", d->rnr_naks);
    g_string_append_printf(s, "        \"gbn_episodes\": %" G_GUINT64_FORMAT ",\n", d->gbn);
    g_string_append_printf(s, "        \"timeout_episodes\": %" G_GUINT64_FORMAT ",\n", d->tmo);
    g_string_append_printf(s, "        \"cnps\": %" G_GUINT64_FORMAT ",\n", d->cnps);
    g_string_append_printf(s, "        \"ecn_ce\": %" G_GUINT64_FORMAT ",\n", d->ecn_ce);
    g_string_append_printf(s, "        \"duplicates\": %" G_GUINT64_FORMAT ",\n", d->dups);
    g_string_append(s, "        \"frames\": {\n");
    j_frames(s, "retransmissions", d->f_retrans, 0);
    j_frames(s, "naks", d->f_naks, 0);
    j_frames(s, "rnr_naks", d->f_rnr, 0);
    j_frames(s, "duplicates", d->f_dups, 0);
    j_frames(s, "cnps", d->f_cnps, 0);
    if (rnd)
        j_frames(s, "gbn_episodes", d->f_gbn, 0);
    j_frames(s, "ecn_ce", d->f_ce, 1);
    g_string_append(s, "        }\n");
    g_string_append_printf(s, "      }%s\n", last ? "" : ",");
}

static void j_str(GString *s, const char *v)
{
    g_string_append_c(s, '"');
    for (const char *p = v; *p; p++) {
        if (*p == '"' || *p == '\\')
            g_string_append_c(s, '\\');
        g_string_append_c(s, *p);
    }
    g_string_append_c(s, '"');
}

static const char *lt_name(int lt)
{
    switch (lt) {
    case LT_ETH: return "EN10MB";
    case LT_RAW: return "RAW";
    case LT_SLL: return "LINUX_SLL";
    case LT_SLL2: return "LINUX_SLL2";
    case LT_IB: return "INFINIBAND";
    default: return "?";
    }
}

typedef struct {
    uint64_t t, seq;
    pkt_t p;
    conv_t *cv;
    int dir;
    unsigned flags;
    uint32_t miss;
} queued_t;

void emit_queue(ctx_t *c, uint64_t t, const pkt_t *p, conv_t *cv, int dir, unsigned flags,
                uint32_t miss)
{
    if (!c->queue)
        c->queue = g_array_new(FALSE, TRUE, sizeof(queued_t));
    queued_t e = { t, c->queue_seq++, *p, cv, dir, flags, miss };
    g_array_append_val(c->queue, e);
}

static gint queued_cmp(gconstpointer a, gconstpointer b)
{
    const queued_t *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void emit_flush(ctx_t *c, uint64_t base, int sort)
{
    if (!c->queue)
        return;
    if (sort)
        g_array_sort(c->queue, queued_cmp);
    for (guint i = 0; i < c->queue->len; i++) {
        queued_t *e = &g_array_index(c->queue, queued_t, i);
        c->x_missing = e->miss;
        emit(c, base + e->t, &e->p, e->cv, e->dir, e->flags, 0);
    }
    g_array_free(c->queue, TRUE);
    c->queue = NULL;
}

int ctx_finish(ctx_t *c, const char *manifest, const char *desc, guint32 seed)
{
    int rc = 0;
    pcap_dump_close(c->dump);
    pcap_close(c->pd);
    if (manifest) {
        GString *s = g_string_new("{\n");
        g_string_append(s, "  \"scenario\": ");
        j_str(s, c->name);
        g_string_append(s, ",\n  \"description\": ");
        j_str(s, desc ? desc : "");
        g_string_append_printf(s, ",\n  \"generator\": \"qpscen\",\n  \"manifest_version\": 1,\n"
                               "  \"seed\": %u,\n  \"linktype\": %d,\n  \"linktype_name\": \"%s\",\n"
                               "  \"frames\": %u,\n", seed, c->linktype, lt_name(c->linktype), c->nframes);
        g_string_append(s, "  \"conversations\": [\n");
        for (guint i = 0; i < c->convs->len; i++) {
            conv_t *cv = g_ptr_array_index(c->convs, i);
            char aa[64], bb[64];
            ep_str(&cv->a, cv->link, aa, sizeof aa);
            ep_str(&cv->b, cv->link, bb, sizeof bb);
            g_string_append_printf(s, "    {\n      \"id\": %d,\n      \"transport\": \"%s\",\n"
                                   "      \"pairing\": \"%s\",\n", cv->id, cv->transport, cv->pairing);
            if (cv->role)
                g_string_append_printf(s, "      \"role\": \"%s\",\n", cv->role);
            g_string_append_printf(s, "      \"a\": {\"addr\": \"%s\", \"qpn\": %u, \"start_psn\": %s%u},\n",
                                   aa, cv->a.qpn, "", cv->d[0].have_psn ? cv->d[0].first_psn : 0);
            g_string_append_printf(s, "      \"b\": {\"addr\": \"%s\", \"qpn\": %u, \"start_psn\": %u},\n",
                                   bb, cv->b.qpn, cv->d[1].have_psn ? cv->d[1].first_psn : 0);
            g_string_append(s, "      \"cm\": [");
            for (guint k = 0; k < cv->cm_frames->len; k++)
                g_string_append_printf(s, "%s{\"frame\": %u, \"msg\": \"%s\"}", k ? ", " : "",
                                       g_array_index(cv->cm_frames, uint32_t, k),
                                       (const char *)g_ptr_array_index(cv->cm_names, k));
            g_string_append(s, "],\n");
            if (cv->lossless)
                g_string_append_printf(s, "      \"lossless\": %s,\n", cv->lossless->str);
            j_dir(s, "a_to_b", &cv->d[0], 0, cv->extra, cv->qos, cv->rnd);
            j_dir(s, "b_to_a", &cv->d[1], 1, cv->extra, cv->qos, cv->rnd);
            g_string_append_printf(s, "    }%s\n", i + 1 < c->convs->len ? "," : "");
        }
        g_string_append(s, "  ],\n  \"frame_notes\": [\n");
        for (guint i = 0; i < c->note_frames->len; i++) {
            g_string_append_printf(s, "    {\"frame\": %u, \"note\": ", g_array_index(c->note_frames, uint32_t, i));
            j_str(s, g_ptr_array_index(c->note_text, i));
            g_string_append_printf(s, "}%s\n", i + 1 < c->note_frames->len ? "," : "");
        }
        g_string_append(s, "  ]");
        if (c->extra_json)
            g_string_append_printf(s, ",\n%s", c->extra_json->str);
        g_string_append(s, "\n}\n");
        GError *err = NULL;
        if (!g_file_set_contents(manifest, s->str, (gssize)s->len, &err)) {
            fprintf(stderr, "qpscen: %s\n", err->message);
            g_error_free(err);
            rc = -1;
        }
        g_string_free(s, TRUE);
    }
    for (guint i = 0; i < c->convs->len; i++) {
        conv_t *cv = g_ptr_array_index(c->convs, i);
        ds_free(&cv->d[0]);
        ds_free(&cv->d[1]);
        g_array_free(cv->cm_frames, TRUE);
        g_ptr_array_free(cv->cm_names, TRUE);
        if (cv->lossless)
            g_string_free(cv->lossless, TRUE);
        g_free(cv);
    }
    g_ptr_array_free(c->convs, TRUE);
    g_array_free(c->note_frames, TRUE);
    g_ptr_array_free(c->note_text, TRUE);
    if (c->extra_json)
        g_string_free(c->extra_json, TRUE);
    g_rand_free(c->rng);
    g_free(c->name);
    g_free(c);
    return rc;
}
