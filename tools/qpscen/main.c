/* qpscen: command line and the large benchmark generator. */
#include "qpscen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gboolean opt_list;
static gchar *opt_out, *opt_manifest, *opt_dir;
static gint opt_seed = 1;
static gint64 opt_packets = 1000000;
static gint opt_qps = 16;
static gdouble opt_loss = 0.001, opt_cnp = 0.0;
static gint opt_msg = 4096, opt_mtu = 1024;
static gboolean opt_one_way, opt_same_hosts, opt_bad_icrc;
static gint opt_senders, opt_lossy = -1;
static gchar *opt_seeds, *opt_timing;

static GOptionEntry entries[] = {
    { "list", 'l', 0, G_OPTION_ARG_NONE, &opt_list, "List scenarios", NULL },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &opt_out, "Output pcap", "OUT.pcap" },
    { "manifest", 'm', 0, G_OPTION_ARG_FILENAME, &opt_manifest, "Manifest JSON", "MANIFEST.json" },
    { "dir", 'd', 0, G_OPTION_ARG_FILENAME, &opt_dir, "Output directory (for 'all')", "DIR" },
    { "seed", 's', 0, G_OPTION_ARG_INT, &opt_seed, "PRNG seed (default 1)", "N" },
    { "packets", 0, 0, G_OPTION_ARG_INT64, &opt_packets, "bench: number of packets", "N" },
    { "qps", 0, 0, G_OPTION_ARG_INT, &opt_qps, "bench: number of RC QP pairs", "Q" },
    { "loss", 0, 0, G_OPTION_ARG_DOUBLE, &opt_loss, "bench: request packet loss probability", "P" },
    { "cnp-rate", 0, 0, G_OPTION_ARG_DOUBLE, &opt_cnp, "bench: probability a data packet is CE-marked and answered by a CNP", "R" },
    { "msg-size", 0, 0, G_OPTION_ARG_INT, &opt_msg, "bench: WRITE message size (default 4096)", "BYTES" },
    { "mtu", 0, 0, G_OPTION_ARG_INT, &opt_mtu, "bench: path MTU (default 1024)", "BYTES" },
    { "one-way", 0, 0, G_OPTION_ARG_NONE, &opt_one_way, "bench: requests only (no ACKs, NAKs or CNPs): a capture of one direction; with --msg-size 0 and --packets = --qps, one packet per QPN", NULL },
    { "same-hosts", 0, 0, G_OPTION_ARG_NONE, &opt_same_hosts, "bench: every QP pair between the same two hosts (10.1.0.1 and 10.2.0.2; distinct QPNs), as in a cluster of two servers", NULL },
    { "senders", 0, 0, G_OPTION_ARG_INT, &opt_senders, "bench: the QPs' requesters are N hosts, 10.1.0.1 .. 10.1.0.N (QP i on host i mod N), their responders 10.2.0.1 .. 10.2.0.N", "N" },
    { "lossy", 0, 0, G_OPTION_ARG_INT, &opt_lossy, "bench with --senders: only the first K senders lose packets (--loss), the others none", "K" },
    { "bad-icrc", 0, 0, G_OPTION_ARG_NONE, &opt_bad_icrc, "bench: every packet with a wrong ICRC (a capture path that rewrites or zeroes it)", NULL },
    { "seeds", 0, 0, G_OPTION_ARG_STRING, &opt_seeds, "random: the seeds, A-B or N", "A-B" },
    { "timing", 0, 0, G_OPTION_ARG_STRING, &opt_timing, "random: hw (default: us, NIC speed) or rxe (ms, soft RoCE)", "hw|rxe" },
    { NULL, 0, 0, 0, NULL, NULL, NULL }
};

/* qpscen random --seeds A-B [--timing hw|rxe] -d DIR */
static int run_random(void)
{
    guint64 a, b;
    char *end = NULL;
    if (!opt_dir || !opt_seeds) {
        fprintf(stderr, "qpscen random: --seeds A-B and -d DIR are required\n");
        return 2;
    }
    a = g_ascii_strtoull(opt_seeds, &end, 10);
    if (end == opt_seeds || a > G_MAXUINT32) {
        fprintf(stderr, "qpscen random: bad --seeds '%s'\n", opt_seeds);
        return 2;
    }
    b = a;
    if (*end == '-') {
        const char *e2 = end + 1;
        b = g_ascii_strtoull(e2, &end, 10);
        if (end == e2)
            b = G_MAXUINT64;
    }
    if (*end || b < a || b > G_MAXUINT32) {
        fprintf(stderr, "qpscen random: bad --seeds '%s'\n", opt_seeds);
        return 2;
    }
    int timing = RT_HW;
    if (opt_timing && !strcmp(opt_timing, "rxe"))
        timing = RT_RXE;
    else if (opt_timing && strcmp(opt_timing, "hw")) {
        fprintf(stderr, "qpscen random: --timing hw or rxe\n");
        return 2;
    }
    g_mkdir_with_parents(opt_dir, 0755);
    int rc = 0;
    for (guint64 s = a; s <= b; s++)
        rc |= rand_scenario(opt_dir, (guint32)s, timing);
    return rc;
}

static const scen_t *find_scen(const char *name)
{
    for (size_t i = 0; i < n_scenarios; i++)
        if (!strcmp(scenarios[i].name, name))
            return &scenarios[i];
    return NULL;
}

static int run_scen(const scen_t *s, const char *out, const char *manifest, guint32 seed)
{
    ctx_t *c = ctx_new(s->name, s->linktype, out, seed);
    if (!c)
        return 1;
    s->fn(c);
    return ctx_finish(c, manifest, s->desc, seed) ? 1 : 0;
}

/* ---- bench: Q interleaved RC WRITE streams, loss -> NAK + go-back-N ---- */
typedef struct {
    ep_t a, b;
    conv_t *cv;
    uint32_t psn, msn;
} bqp_t;

static void bench_ack(ctx_t *c, bqp_t *q, const path_t *path, uint64_t *t, uint8_t syn, uint32_t psn)
{
    pkt_t p;
    if (opt_one_way)
        return;
    pkt_init(&p);
    pkt_addr(&p, path, &q->b, &q->a);
    p.opcode = OP_ACK;
    p.dqp = q->a.qpn;
    p.psn = psn;
    p.aeth_syn = syn;
    p.aeth_msn = q->msn & PSN_MASK;
    p.ipid = (uint16_t)(c->nframes + 1);
    p.bad_icrc = opt_bad_icrc;
    *t += 300;
    emit(c, *t, &p, q->cv, 1, 0, 0);
}

static void bench_data(ctx_t *c, bqp_t *q, const path_t *path, uint64_t *t, uint32_t msgpsn,
                       uint32_t k, uint32_t n, uint32_t len, uint32_t mtu, unsigned flags, int ce)
{
    pkt_t p;
    pkt_init(&p);
    pkt_addr(&p, path, &q->a, &q->b);
    p.opcode = n == 1 ? OP_WRITE_ONLY : k == 0 ? OP_WRITE_FIRST : k == n - 1 ? OP_WRITE_LAST : OP_WRITE_MIDDLE;
    p.dqp = q->b.qpn;
    p.psn = psn_add(msgpsn, (int32_t)k);
    p.ackreq = k == n - 1;
    uint32_t off = k * mtu;
    p.paylen = len - off < mtu ? len - off : mtu;
    p.payseed = p.psn;
    p.reth_va = 0x7f0000000000ull;
    p.reth_rkey = 0x1234;
    p.reth_len = len;
    p.ipid = (uint16_t)(c->nframes + 1);
    p.bad_icrc = opt_bad_icrc;
    if (ce)
        p.tclass = (uint8_t)(path->dscp << 2 | 3);
    *t += 100 + p.paylen / 4;
    emit(c, *t, &p, q->cv, 0, flags, 0);
    if (ce && !opt_one_way) {
        pkt_t n2;
        pkt_init(&n2);
        pkt_addr(&n2, path, &q->b, &q->a);
        n2.opcode = OPC_CNP;
        n2.dqp = q->a.qpn;
        n2.becn = 1;
        n2.tclass = 48 << 2;
        n2.ipid = (uint16_t)(c->nframes + 1);
        n2.bad_icrc = opt_bad_icrc;
        *t += 200;
        emit(c, *t, &n2, q->cv, 1, 0, 0);
    }
}

static int run_bench(const char *out, const char *manifest, guint32 seed)
{
    /* QPNs 0x10000 + i stay within 24 bits */
    if (opt_qps < 1 || opt_qps > 0xff0000 || opt_mtu < 256 || opt_mtu > 4096 || opt_msg < 0 ||
        opt_msg > 1 << 24 || opt_packets < 1 || opt_senders < 0 || opt_senders > 254 ||
        (opt_lossy >= 0 && !opt_senders) || opt_lossy > opt_senders) {
        fprintf(stderr, "qpscen bench: bad parameters\n");
        return 2;
    }
    ctx_t *c = ctx_new("bench", LT_ETH, out, seed);
    if (!c)
        return 1;
    path_t path = { LT_ETH, NET_IP4, 0, { 0, 0 }, 26, 2 };
    bqp_t *qs = g_new0(bqp_t, (gsize)opt_qps);
    for (int i = 0; i < opt_qps; i++) {
        if (opt_senders) {
            int h = i % opt_senders;
            ep_v4(&qs[i].a, 10, 1, 0, (uint8_t)(1 + h), 0x000100u + (uint32_t)i);
            ep_v4(&qs[i].b, 10, 2, 0, (uint8_t)(1 + h), 0x010000u + (uint32_t)i);
        } else if (opt_same_hosts) {
            ep_v4(&qs[i].a, 10, 1, 0, 1, 0x000100u + (uint32_t)i);
            ep_v4(&qs[i].b, 10, 2, 0, 2, 0x010000u + (uint32_t)i);
        } else {
            ep_v4(&qs[i].a, 10, 1, (uint8_t)(i >> 8), 1, 0x000100u + (uint32_t)i);
            ep_v4(&qs[i].b, 10, 2, (uint8_t)(i >> 8), (uint8_t)(2 + i % 200), 0x010000u + (uint32_t)i);
        }
        /* the manifest's per-conversation counts only when one is
         * written (a million QPs' counts take gigabytes) */
        qs[i].cv = manifest ? conv_new(c, "RC", "traffic", &qs[i].a, &qs[i].b) : NULL;
        qs[i].psn = (uint32_t)g_rand_int_range(c->rng, 0, 0x1000000);
    }
    uint32_t mtu = (uint32_t)opt_mtu, len = (uint32_t)opt_msg;
    uint32_t n = len ? (len + mtu - 1) / mtu : 1;
    uint64_t t = 1000;
    uint64_t target = (uint64_t)opt_packets;
    for (uint64_t m = 0; c->nframes < target; m++) {
        bqp_t *q = &qs[m % (uint64_t)opt_qps];
        uint32_t mp = q->psn;
        int lost = -1;
        /* --lossy K: the QPs of the other senders lose nothing (the
         * draws are made all the same: the lossy ones lose what they
         * would without it) */
        int may_lose = !opt_senders || opt_lossy < 0 ||
                       (int)((m % (uint64_t)opt_qps) % (uint64_t)opt_senders) < opt_lossy;
        for (uint32_t k = 0; k < n; k++) {
            if (lost < 0 && opt_loss > 0 && g_rand_double(c->rng) < opt_loss && may_lose) {
                lost = (int)k;       /* lost before the capture point */
                t += 100 + mtu / 4;
                continue;
            }
            int ce = opt_cnp > 0 && g_rand_double(c->rng) < opt_cnp;
            bench_data(c, q, &path, &t, mp, k, n, len, mtu, 0, ce);
        }
        if (lost >= 0) {
            unsigned fl = F_RETRANS | F_GBN;
            if ((uint32_t)lost < n - 1) {
                bench_ack(c, q, &path, &t, 0x60, psn_add(mp, lost));
            } else {
                t += 4000000;       /* tail loss: requester timeout */
                fl |= F_TMO;
            }
            for (uint32_t k = (uint32_t)lost; k < n; k++) {
                unsigned f = fl | (k == n - 1 ? F_COUNTMSG : 0);
                bench_data(c, q, &path, &t, mp, k, n, len, mtu, f, 0);
                fl = F_RETRANS;
            }
        }
        q->msn++;
        q->psn = psn_add(mp, (int32_t)n);
        bench_ack(c, q, &path, &t, 0x1F, psn_add(mp, (int32_t)n - 1));
    }
    g_free(qs);
    char desc[256];
    char senders[64] = "";
    if (opt_senders)
        g_snprintf(senders, sizeof senders, ", %d senders (%d lossy)", opt_senders,
                   opt_lossy < 0 ? opt_senders : opt_lossy);
    g_snprintf(desc, sizeof desc, "bench: %d RC QPs, WRITE %u B, MTU %u, loss %g, cnp-rate %g%s%s%s%s",
               opt_qps, len, mtu, opt_loss, opt_cnp, opt_one_way ? ", requests only" : "",
               opt_same_hosts ? ", all between two hosts" : "", senders,
               opt_bad_icrc ? ", every ICRC wrong" : "");
    return ctx_finish(c, manifest, desc, seed) ? 1 : 0;
}

int main(int argc, char **argv)
{
    GError *err = NULL;
    GOptionContext *oc = g_option_context_new("NAME | all | bench - RoCE/IB scenario capture generator");
    g_option_context_add_main_entries(oc, entries, NULL);
    g_option_context_set_description(oc,
        "  qpscen --list\n"
        "  qpscen NAME -o OUT.pcap [-m MANIFEST.json] [--seed N]\n"
        "  qpscen all -d DIR\n"
        "  qpscen random --seeds A-B [--timing hw|rxe] -d DIR\n"
        "  qpscen bench -o OUT.pcap --packets N --qps Q --loss P [--cnp-rate R] [--one-way] [--same-hosts]\n"
        "               [--senders N [--lossy K]] [--bad-icrc]\n");
    if (!g_option_context_parse(oc, &argc, &argv, &err)) {
        fprintf(stderr, "qpscen: %s\n", err->message);
        g_error_free(err);
        g_option_context_free(oc);
        return 2;
    }
    int rc = 0;
    guint32 seed = (guint32)opt_seed;
    if (opt_list) {
        for (size_t i = 0; i < n_scenarios; i++)
            printf("%-16s %s\n", scenarios[i].name, scenarios[i].desc);
        printf("%-16s %s\n", "bench", "large benchmark capture (see --packets/--qps/--loss/--cnp-rate)");
        goto out;
    }
    if (argc != 2) {
        char *h = g_option_context_get_help(oc, TRUE, NULL);
        fputs(h, stderr);
        g_free(h);
        rc = 2;
        goto out;
    }
    if (!strcmp(argv[1], "random")) {
        rc = run_random();
        goto out;
    }
    if (!strcmp(argv[1], "all")) {
        if (!opt_dir) {
            fprintf(stderr, "qpscen all: -d DIR is required\n");
            rc = 2;
            goto out;
        }
        g_mkdir_with_parents(opt_dir, 0755);
        for (size_t i = 0; i < n_scenarios; i++) {
            char *pc = g_strdup_printf("%s/%s.pcap", opt_dir, scenarios[i].name);
            char *js = g_strdup_printf("%s/%s.json", opt_dir, scenarios[i].name);
            rc |= run_scen(&scenarios[i], pc, js, seed);
            g_free(pc);
            g_free(js);
        }
        goto out;
    }
    if (!opt_out) {
        fprintf(stderr, "qpscen: -o OUT.pcap is required\n");
        rc = 2;
        goto out;
    }
    if (!strcmp(argv[1], "bench")) {
        rc = run_bench(opt_out, opt_manifest, seed);
        goto out;
    }
    const scen_t *s = find_scen(argv[1]);
    if (!s) {
        fprintf(stderr, "qpscen: unknown scenario '%s' (see --list)\n", argv[1]);
        rc = 2;
        goto out;
    }
    rc = run_scen(s, opt_out, opt_manifest, seed);
out:
    g_option_context_free(oc);
    g_free(opt_out);
    g_free(opt_manifest);
    g_free(opt_dir);
    g_free(opt_seeds);
    g_free(opt_timing);
    return rc;
}
