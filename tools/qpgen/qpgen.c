/* qpgen: drive a scripted RC workload between two local RDMA endpoints
 * (typically rxe0 and rxe1 of tools/rxe-vm) connected through RDMA CM, and
 * write a JSON manifest of what was posted and how it completed, so that a
 * capture of the traffic can be checked against it.
 *
 *   qpgen [-s SERVER_ADDR] [-c CLIENT_ADDR] [-p PORT] [-o MANIFEST] OP...
 *
 * OP is [client:|server:]NAME[:SIZE][xCOUNT]; the prefix names the side
 * that posts (default client).  NAME is one of
 *   SEND SEND_IMM WRITE WRITE_IMM READ CMP_SWAP FETCH_ADD
 *   RNR_SEND         a SEND posted before the peer has a receive: the
 *                    responder answers RNR NAK until the receive is posted
 *                    (after -r MS milliseconds, default 100)
 *   BAD_RKEY_WRITE   an RDMA WRITE with a wrong rkey: NAK remote access
 *   BAD_RKEY_READ    an RDMA READ with a wrong rkey; both move the QPs to
 *                    the error state, so they must come last.
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
              OP_CMP_SWAP, OP_FETCH_ADD, OP_RNR_SEND, OP_BAD_WRITE, OP_BAD_READ };

static const struct {
    const char *name;
    enum opkind kind;
} op_names[] = {
    { "SEND", OP_SEND }, { "SEND_IMM", OP_SEND_IMM }, { "WRITE", OP_WRITE },
    { "WRITE_IMM", OP_WRITE_IMM }, { "READ", OP_READ }, { "CMP_SWAP", OP_CMP_SWAP },
    { "FETCH_ADD", OP_FETCH_ADD }, { "RNR_SEND", OP_RNR_SEND },
    { "BAD_RKEY_WRITE", OP_BAD_WRITE }, { "BAD_RKEY_READ", OP_BAD_READ },
};

struct opspec {
    enum opkind kind;
    int from;           /* 0 client, 1 server */
    size_t size;
    unsigned count;
};

struct side {
    const char *role;
    struct rdma_cm_id *id;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_mr *mr;
    char *buf;
    size_t buflen;
    uint32_t start_psn, rq_psn, dest_qpn;
    union ibv_gid gid;
    int gid_index;
    enum ibv_mtu mtu;
};

struct result {
    const char *op;
    const char *from;
    size_t size;
    unsigned seq;
    uint32_t imm;
    const char *status;
    const char *peer_status;
    int rnr_delay_ms;
    double t_post, t_done;
};

static struct side sides[2] = { { .role = "client" }, { .role = "server" } };
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

static void setup_side(struct side *s, struct rdma_cm_id *id, size_t buflen)
{
    s->id = id;
    s->pd = ibv_alloc_pd(id->verbs);
    if (!s->pd)
        die("ibv_alloc_pd (%s)", s->role);
    s->cq = ibv_create_cq(id->verbs, 64, NULL, NULL, 0);
    if (!s->cq)
        die("ibv_create_cq (%s)", s->role);
    s->buflen = buflen;
    if (posix_memalign((void **)&s->buf, 4096, buflen))
        die("out of memory");
    memset(s->buf, s == &sides[0] ? 'c' : 's', buflen);
    s->mr = ibv_reg_mr(s->pd, s->buf, buflen,
                       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
    if (!s->mr)
        die("ibv_reg_mr (%s): %s", s->role, strerror(errno));
    struct ibv_qp_init_attr qa = {
        .send_cq = s->cq, .recv_cq = s->cq, .qp_type = IBV_QPT_RC,
        .cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1 },
        .sq_sig_all = 1,
    };
    if (rdma_create_qp(id, s->pd, &qa))
        die("rdma_create_qp (%s): %s", s->role, strerror(errno));
}

static void query_side(struct side *s)
{
    struct ibv_qp_attr a;
    struct ibv_qp_init_attr ia;
    if (ibv_query_qp(s->id->qp, &a, IBV_QP_SQ_PSN | IBV_QP_RQ_PSN | IBV_QP_DEST_QPN |
                     IBV_QP_PATH_MTU | IBV_QP_AV, &ia))
        die("ibv_query_qp (%s)", s->role);
    s->start_psn = a.sq_psn;
    s->rq_psn = a.rq_psn;
    s->dest_qpn = a.dest_qp_num;
    s->mtu = a.path_mtu;
    s->gid_index = a.ah_attr.grh.sgid_index;
    ibv_query_gid(s->id->verbs, s->id->port_num, s->gid_index, &s->gid);
}

static void post_recv(struct side *s, uint64_t wr_id)
{
    struct ibv_sge sge = { .addr = (uintptr_t)s->buf, .length = (uint32_t)s->buflen, .lkey = s->mr->lkey };
    struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;
    if (ibv_post_recv(s->id->qp, &wr, &bad))
        die("ibv_post_recv (%s)", s->role);
}

/* wait for one completion on s; returns its status */
static enum ibv_wc_status wait_wc(struct side *s, double timeout, bool *got)
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
            return wc.status;
        }
        usleep(50);
    }
    return IBV_WC_GENERAL_ERR;
}

static void add_result(struct result *r)
{
    results = realloc(results, (nresults + 1) * sizeof *results);
    if (!results)
        die("out of memory");
    results[nresults++] = *r;
}

static void run_op(const struct opspec *o, unsigned seq, int rnr_delay_ms)
{
    struct side *me = &sides[o->from], *peer = &sides[!o->from];
    struct ibv_sge sge = { .addr = (uintptr_t)me->buf, .length = (uint32_t)o->size, .lkey = me->mr->lkey };
    struct ibv_send_wr wr = { .wr_id = seq, .sg_list = &sge, .num_sge = 1,
                              .send_flags = IBV_SEND_SIGNALED }, *bad;
    bool needs_recv = false;
    struct result r = { .op = kind_name(o->kind), .from = me->role, .size = o->size, .seq = seq,
                        .peer_status = NULL };
    uint32_t rkey = peer->mr->rkey;
    uint64_t raddr = (uintptr_t)peer->buf;

    switch (o->kind) {
    case OP_SEND: case OP_RNR_SEND:
        wr.opcode = IBV_WR_SEND; needs_recv = true; break;
    case OP_SEND_IMM:
        wr.opcode = IBV_WR_SEND_WITH_IMM; needs_recv = true; break;
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
    if (needs_recv && o->kind != OP_RNR_SEND)
        post_recv(peer, 1000 + seq);
    r.t_post = now_s();
    if (ibv_post_send(me->id->qp, &wr, &bad))
        die("ibv_post_send %s (%s): %s", r.op, me->role, strerror(errno));
    if (o->kind == OP_RNR_SEND) {
        usleep((useconds_t)rnr_delay_ms * 1000);
        r.rnr_delay_ms = rnr_delay_ms;
        post_recv(peer, 1000 + seq);
    }
    bool got;
    enum ibv_wc_status st = wait_wc(me, 30.0, &got);
    r.t_done = now_s();
    r.status = got ? ibv_wc_status_str(st) : "timeout";
    if (needs_recv) {
        enum ibv_wc_status pst = wait_wc(peer, got && st == IBV_WC_SUCCESS ? 10.0 : 0.5, &got);
        r.peer_status = got ? ibv_wc_status_str(pst) : "none";
    }
    add_result(&r);
    fprintf(stderr, "qpgen: %s %s size %zu: %s%s%s\n", me->role, r.op, o->size, r.status,
            r.peer_status ? ", peer receive " : "", r.peer_status ? r.peer_status : "");
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

static void write_manifest(FILE *f, int argc, char **argv, const char *saddr, const char *caddr, int port)
{
    fprintf(f, "{\n  \"generator\": \"qpgen\",\n  \"command\": [");
    for (int i = 0; i < argc; i++) {
        if (i)
            fputs(", ", f);
        json_str(f, argv[i]);
    }
    fprintf(f, "],\n  \"transport\": \"RC\",\n  \"cm_port\": %d,\n  \"path_mtu\": %s,\n",
            port, mtu_str(sides[0].mtu));
    fprintf(f, "  \"endpoints\": {\n");
    for (int i = 0; i < 2; i++) {
        struct side *s = &sides[i];
        char gid[INET6_ADDRSTRLEN];
        inet_ntop(AF_INET6, s->gid.raw, gid, sizeof gid);
        fprintf(f, "    \"%s\": {\"device\": ", s->role);
        json_str(f, ibv_get_device_name(s->id->verbs->device));
        fprintf(f, ", \"addr\": ");
        json_str(f, i == 0 ? caddr : saddr);
        fprintf(f, ", \"gid_index\": %d, \"gid\": \"%s\", \"qpn\": %u, \"dest_qpn\": %u, "
                "\"starting_psn\": %u, \"expected_rq_psn\": %u, \"rkey\": %u, \"buffer_bytes\": %zu}%s\n",
                s->gid_index, gid, s->id->qp->qp_num, s->dest_qpn, s->start_psn, s->rq_psn,
                s->mr->rkey, s->buflen, i == 0 ? "," : "");
    }
    fprintf(f, "  },\n  \"ops\": [\n");
    for (size_t i = 0; i < nresults; i++) {
        struct result *r = &results[i];
        fprintf(f, "    {\"seq\": %u, \"op\": \"%s\", \"from\": \"%s\", \"size\": %zu, \"status\": ",
                r->seq, r->op, r->from, r->size);
        json_str(f, r->status);
        if (r->peer_status) {
            fprintf(f, ", \"peer_receive_status\": ");
            json_str(f, r->peer_status);
        }
        if (r->imm)
            fprintf(f, ", \"imm\": %u", r->imm);
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
            "usage: qpgen [-s SERVER_ADDR] [-c CLIENT_ADDR] [-p PORT] [-o MANIFEST] [-r RNR_DELAY_MS] OP...\n"
            "  OP: [client:|server:]NAME[:SIZE][xCOUNT], NAME one of SEND SEND_IMM WRITE WRITE_IMM\n"
            "      READ CMP_SWAP FETCH_ADD RNR_SEND BAD_RKEY_WRITE BAD_RKEY_READ\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *saddr = "10.0.0.1", *caddr = "10.0.0.2", *manifest = NULL;
    int port = 7471, rnr_delay = 100, c;
    clock_gettime(CLOCK_MONOTONIC, &t_zero);
    while ((c = getopt(argc, argv, "s:c:p:o:r:h")) != -1) {
        switch (c) {
        case 's': saddr = optarg; break;
        case 'c': caddr = optarg; break;
        case 'p': port = atoi(optarg); break;
        case 'o': manifest = optarg; break;
        case 'r': rnr_delay = atoi(optarg); break;
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
    }
    size_t buflen = (maxsize + 4095) & ~(size_t)4095;

    struct rdma_event_channel *ec = rdma_create_event_channel();
    if (!ec)
        die("rdma_create_event_channel: %s", strerror(errno));
    struct rdma_cm_id *listen_id, *cli_id;
    if (rdma_create_id(ec, &listen_id, NULL, RDMA_PS_TCP) || rdma_create_id(ec, &cli_id, NULL, RDMA_PS_TCP))
        die("rdma_create_id: %s", strerror(errno));
    struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    struct sockaddr_in cin = { .sin_family = AF_INET };
    if (inet_pton(AF_INET, saddr, &sin.sin_addr) != 1 || inet_pton(AF_INET, caddr, &cin.sin_addr) != 1)
        die("addresses must be IPv4");
    if (rdma_bind_addr(listen_id, (struct sockaddr *)&sin))
        die("rdma_bind_addr %s: %s", saddr, strerror(errno));
    if (rdma_listen(listen_id, 1))
        die("rdma_listen: %s", strerror(errno));
    if (rdma_resolve_addr(cli_id, (struct sockaddr *)&cin, (struct sockaddr *)&sin, 5000))
        die("rdma_resolve_addr: %s", strerror(errno));
    struct rdma_cm_event *ev = expect_event(ec, RDMA_CM_EVENT_ADDR_RESOLVED);
    rdma_ack_cm_event(ev);
    if (rdma_resolve_route(cli_id, 5000))
        die("rdma_resolve_route: %s", strerror(errno));
    ev = expect_event(ec, RDMA_CM_EVENT_ROUTE_RESOLVED);
    rdma_ack_cm_event(ev);
    setup_side(&sides[0], cli_id, buflen);
    struct rdma_conn_param cp = { .responder_resources = 4, .initiator_depth = 4,
                                  .retry_count = 7, .rnr_retry_count = 7 };
    if (rdma_connect(cli_id, &cp))
        die("rdma_connect: %s", strerror(errno));
    ev = expect_event(ec, RDMA_CM_EVENT_CONNECT_REQUEST);
    struct rdma_cm_id *srv_id = ev->id;
    rdma_ack_cm_event(ev);
    setup_side(&sides[1], srv_id, buflen);
    if (rdma_accept(srv_id, &cp))
        die("rdma_accept: %s", strerror(errno));
    for (int established = 0; established < 2;) {
        ev = expect_event(ec, RDMA_CM_EVENT_ESTABLISHED);
        rdma_ack_cm_event(ev);
        established++;
    }
    /* RNR NAK timer ~41 ms (encoding 24) on both responders, so an RNR_SEND
     * gives a few RNR NAKs before the delayed receive is posted */
    for (int i = 0; i < 2; i++) {
        struct ibv_qp_attr a = { .min_rnr_timer = 24 };
        if (ibv_modify_qp(sides[i].id->qp, &a, IBV_QP_MIN_RNR_TIMER))
            fprintf(stderr, "qpgen: warning: cannot set min_rnr_timer on %s\n", sides[i].role);
    }
    query_side(&sides[0]);
    query_side(&sides[1]);
    fprintf(stderr, "qpgen: connected %s qpn %u psn %u <-> %s qpn %u psn %u, mtu %s\n",
            ibv_get_device_name(cli_id->verbs->device), cli_id->qp->qp_num, sides[0].start_psn,
            ibv_get_device_name(srv_id->verbs->device), srv_id->qp->qp_num, sides[1].start_psn,
            mtu_str(sides[0].mtu));

    unsigned seq = 0;
    int failed = 0;
    for (int i = 0; i < nops; i++) {
        for (unsigned k = 0; k < ops[i].count; k++) {
            run_op(&ops[i], seq++, rnr_delay);
            const char *st = results[nresults - 1].status;
            bool expected_error = ops[i].kind == OP_BAD_WRITE || ops[i].kind == OP_BAD_READ;
            if (strcmp(st, "success") != 0 && !expected_error)
                failed++;
            if (expected_error)
                goto done; /* QPs are in the error state now */
        }
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
    /* DREQ from the client; the server answers with DREP when it sees the
     * disconnect, so the capture has a clean CM teardown */
    rdma_disconnect(cli_id);
    for (int disconnected = 0; disconnected < 2;) {
        struct pollfd pfd = { .fd = ec->fd, .events = POLLIN };
        if (poll(&pfd, 1, 5000) <= 0)
            break;
        if (rdma_get_cm_event(ec, &ev))
            break;
        if (ev->event == RDMA_CM_EVENT_DISCONNECTED) {
            if (ev->id == srv_id)
                rdma_disconnect(srv_id);
            disconnected++;
        }
        rdma_ack_cm_event(ev);
    }
    return failed ? 1 : 0;
}
