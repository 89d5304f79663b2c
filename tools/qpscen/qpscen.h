/* qpscen: deterministic RoCE/IB scenario and capture generator.
 * Independent frame encoder (deliberately shares no code with analyzer/). */
#ifndef QPSCEN_H
#define QPSCEN_H

#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE 1 /* u_int etc. for pcap.h under -std=c11 */
#endif

#include <stdint.h>
#include <stddef.h>
#include <glib.h>
#include <pcap/pcap.h>

/* ---- link / network kinds ---- */
enum { LT_ETH = 1, LT_RAW = 101, LT_SLL = 113, LT_IB = 247, LT_SLL2 = 276 };
enum { NET_IP4, NET_IP6, NET_GRH, NET_NONE };

#define MAX_FRAME 16384

/* ---- opcodes (low 5 bits) ---- */
enum {
    OP_SEND_FIRST = 0x00, OP_SEND_MIDDLE = 0x01, OP_SEND_LAST = 0x02,
    OP_SEND_LAST_IMM = 0x03, OP_SEND_ONLY = 0x04, OP_SEND_ONLY_IMM = 0x05,
    OP_WRITE_FIRST = 0x06, OP_WRITE_MIDDLE = 0x07, OP_WRITE_LAST = 0x08,
    OP_WRITE_LAST_IMM = 0x09, OP_WRITE_ONLY = 0x0A, OP_WRITE_ONLY_IMM = 0x0B,
    OP_READ_REQ = 0x0C, OP_READ_RESP_FIRST = 0x0D, OP_READ_RESP_MIDDLE = 0x0E,
    OP_READ_RESP_LAST = 0x0F, OP_READ_RESP_ONLY = 0x10, OP_ACK = 0x11,
    OP_ATOMIC_ACK = 0x12, OP_CMP_SWAP = 0x13, OP_FETCH_ADD = 0x14,
    OP_SEND_LAST_INV = 0x16, OP_SEND_ONLY_INV = 0x17, OP_FLUSH = 0x1C,
    OP_ATOMIC_WRITE = 0x1D
};
enum { TR_RC = 0x00, TR_UC = 0x20, TR_RD = 0x40, TR_UD = 0x60, TR_XRC = 0xA0 };
#define OPC_CNP 0x81

/* extended header presence bits */
enum {
    X_RDETH = 1 << 0, X_DETH = 1 << 1, X_XRCETH = 1 << 2, X_FETH = 1 << 3,
    X_RETH = 1 << 4, X_ATOMIC = 1 << 5, X_AETH = 1 << 6, X_ATACK = 1 << 7,
    X_IMM = 1 << 8, X_IETH = 1 << 9, X_CNP = 1 << 10
};

typedef struct {
    /* link */
    int link, net;
    int nvlan;              /* 0, 1 (802.1Q) or 2 (QinQ) */
    uint16_t vid[2];        /* vid[0] = outer */
    uint8_t pcp;
    uint8_t smac[6], dmac[6];
    uint16_t sll_pkttype;
    uint16_t slid, dlid;
    uint8_t sl, vl;
    /* network */
    uint8_t src[16], dst[16]; /* IPv4: bytes 12..15 (IPv4-mapped) */
    uint8_t tclass;           /* DSCP << 2 | ECN */
    uint32_t flow;
    uint8_t ttl;
    uint16_t ipid;
    uint16_t sport, dport;
    /* BTH */
    uint8_t opcode, se, mig, fecn, becn, ackreq;
    uint16_t pkey;
    uint32_t dqp, psn;
    /* extended headers */
    uint32_t rdeth_eec, deth_qkey, deth_srcqp, xrc_srq, feth;
    uint64_t reth_va;
    uint32_t reth_rkey, reth_len;
    uint64_t at_va, at_swap, at_cmp;
    uint32_t at_rkey;
    uint8_t aeth_syn;
    uint32_t aeth_msn;
    uint64_t atack_orig;
    uint32_t imm, ieth_rkey;
    /* payload (NULL -> deterministic pattern derived from payseed) */
    const uint8_t *payload;
    uint32_t paylen, payseed;
    /* deliberate defects */
    int pad_override;   /* -1: computed; else PadCnt field value, no pad bytes written */
    int ip_len_delta;   /* added to IPv4 total length / IPv6 payload length */
    int udp_len_delta;  /* added to UDP length */
    int bad_icrc;       /* xor the ICRC */
    int no_icrc;        /* leave out ICRC (and VCRC) entirely */
    int v6_ext;         /* IPv6: a Hop-by-Hop and a Destination Options header (8 bytes each) */
    int ip4_frag;       /* IPv4: written as two fragments (the first 512 bytes of IP payload, the rest) */
} pkt_t;

/* enc.c */
void pkt_init(pkt_t *p);
unsigned ext_mask(uint8_t opcode);
size_t pkt_build(const pkt_t *p, uint8_t *buf);
uint16_t ib_vcrc(const uint8_t *buf, size_t len);
const uint8_t *pattern_bytes(uint32_t seed, uint32_t len);

/* ---- endpoints & paths ---- */
typedef struct {
    uint8_t addr[16];   /* IPv4 mapped or IPv6 / GID */
    int v6;
    uint8_t mac[6];
    uint16_t lid;
    uint32_t qpn;
} ep_t;

typedef struct {
    int link, net;
    int nvlan;
    uint16_t vid[2];
    uint8_t dscp;
    uint8_t ecn;        /* default ECN codepoint for data packets */
    uint8_t v6_ext;     /* as pkt_t.v6_ext */
    uint8_t ip4_frag;   /* as pkt_t.ip4_frag */
} path_t;

void ep_v4(ep_t *e, uint8_t a, uint8_t b, uint8_t c, uint8_t d, uint32_t qpn);
void ep_v6(ep_t *e, const char *txt, uint32_t qpn);
void ep_ib(ep_t *e, uint16_t lid, uint64_t guid, uint32_t qpn);
void ep_str(const ep_t *e, int link, char *out, size_t n);
void pkt_addr(pkt_t *p, const path_t *path, const ep_t *src, const ep_t *dst);

/* ---- manifest stats ---- */
enum { M_SEND, M_SEND_IMM, M_SEND_INV, M_WRITE, M_WRITE_IMM, M_READ,
       M_CMP_SWAP, M_FETCH_ADD, M_ATOMIC_WRITE, M_FLUSH, M_NOPS };
enum { NK_PSN_SEQ, NK_INVALID_REQ, NK_REMOTE_ACCESS, NK_REMOTE_OP, NK_INVALID_RD, NK_N };

typedef struct {
    uint64_t packets, payload_bytes, msgs[M_NOPS], retrans, naks[NK_N], rnr_naks,
             gbn, tmo, cnps, ecn_ce, dups, acks;
    /* printed only for a conversation marked `extra` (scen_messy.c) */
    uint64_t rr, gaps, missing, rgaps, rmissing, ooo, dupacks, newseq, tback;
    GString *trig;           /* episode triggers, in order, "nak,read_retry" */
    int have_psn;
    uint32_t first_psn;
    GArray *f_retrans, *f_naks, *f_rnr, *f_dups, *f_cnps, *f_ce;
    GArray *f_gbn;           /* episode starts, printed for a `rnd` conversation */
    /* printed only for a conversation marked `qos` (scen_ecn.c): packets
     * by class (0 data, 1 ACK/NAK, 2 CNP) and 802.1Q PCP (index 0:
     * untagged, else PCP + 1) / DSCP */
    uint64_t pcp[3][9], dscp[3][64];
} dirstats_t;

typedef struct {
    int id;
    const char *transport;   /* "RC" "UC" "UD" "RD" "XRC" */
    const char *pairing;     /* "cm" / "traffic" */
    const char *role;        /* optional, e.g. "cm_mad" */
    ep_t a, b;
    int link;
    dirstats_t d[2];         /* 0: a->b, 1: b->a */
    GArray *cm_frames;       /* uint32 frame numbers of the CM exchange */
    GPtrArray *cm_names;     /* message name per cm frame */
    int extra;               /* manifest: also read_retries, psn_gaps, triggers, ... */
    int qos;                 /* manifest: also the PCP/DSCP counts per class */
    int rnd;                 /* manifest: also frames.gbn_episodes (rand.c) */
    GString *lossless;       /* manifest: "lossless": {...} the scenario writes (or NULL) */
} conv_t;

/* emit flags */
enum { F_RETRANS = 1, F_DUP = 2, F_GBN = 4, F_COUNTMSG = 8, F_NOMSG = 16, F_TMO = 32,
       /* ground truth that only `extra` conversations print */
       F_RREISSUE = 64,  /* a READ re-issued (counted in read_retries) */
       F_TNAK = 128,     /* with F_GBN: the episode's trigger is a NAK ... */
       F_TRR = 256,      /* ... a READ re-issue ... */
       F_TRS = 512,      /* ... a resend after a NAK the capture missed */
       F_NEWSEQ = 1024,  /* first packet of a new PSN sequence on a reused QPN */
       F_DUPACK = 2048,  /* an ACK the responder sent again (same PSN and MSN) */
       F_OOO = 4096 };   /* a packet the network reordered */

typedef struct {
    char *name;
    int linktype;
    pcap_t *pd;
    pcap_dumper_t *dump;
    uint64_t t;          /* ns since base */
    uint64_t last_t;
    uint32_t nframes;
    GRand *rng;
    GPtrArray *convs;
    GArray *note_frames;  /* uint32 */
    GPtrArray *note_text; /* char* */
    uint8_t buf[MAX_FRAME];
    uint16_t ipid;
    uint32_t x_missing;   /* the next emit() follows this many PSNs lost before the tap */
    int raw_time;         /* emit() keeps a timestamp older than the last one */
    GString *extra_json;  /* more top-level manifest members ("\"pfc\": ..."), or NULL */
    GArray *queue;        /* packets queued by emit_queue(), or NULL */
    uint64_t queue_seq;
    int keep_ipid;        /* emit() leaves an IPv4 ID of 0 as it is (DF, as NICs send) */
} ctx_t;

ctx_t *ctx_new(const char *name, int linktype, const char *out, guint32 seed);
int ctx_finish(ctx_t *c, const char *manifest, const char *desc, guint32 seed);
conv_t *conv_new(ctx_t *c, const char *transport, const char *pairing,
                 const ep_t *a, const ep_t *b);
uint32_t emit(ctx_t *c, uint64_t t, pkt_t *p, conv_t *cv, int dir, unsigned flags,
              uint32_t snaplen);
void note(ctx_t *c, uint32_t frame, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
/* A frame that is not a RoCE/IB packet (MAC control ...), len bytes on the
 * wire, caplen of them captured (0: all); counted in no conversation. */
uint32_t emit_raw(ctx_t *c, uint64_t t, const uint8_t *frame, uint32_t len, uint32_t caplen);
/* Packets queued in any order and emitted in time order (equal times: in
 * the order queued) by emit_flush(), each at base + its t; c->x_missing is
 * miss for each.  Without sort they are emitted as queued. */
void emit_queue(ctx_t *c, uint64_t t, const pkt_t *p, conv_t *cv, int dir, unsigned flags,
                uint32_t miss);
void emit_flush(ctx_t *c, uint64_t base, int sort);
uint64_t jit(ctx_t *c, uint64_t base_ns, uint64_t spread_ns);
void cm_note(conv_t *cv, uint32_t frame, const char *name);

/* ---- RC engine (sim.c) ---- */
enum { MO_WRITE, MO_WRITE_IMM, MO_SEND, MO_SEND_IMM, MO_SEND_INV, MO_READ,
       MO_CMP_SWAP, MO_FETCH_ADD };

typedef struct rc rc_t;
rc_t *rc_new(ctx_t *c, conv_t *cv, const path_t *path, const ep_t *a, const ep_t *b,
             uint32_t start_psn, uint32_t mtu);
void rc_msg(rc_t *r, int op, uint32_t len);
void rc_drop_req(rc_t *r, uint32_t psn);   /* lost before capture, first transmission */
void rc_drop_resp(rc_t *r, uint32_t psn);
void rc_ce(rc_t *r, uint32_t psn);         /* mark ECN-CE on request with this PSN */
void rc_rnr(rc_t *r, int msg_index);
void rc_opts(rc_t *r, int ack_every, int window_msgs, int use_timeout);
void rc_dup(rc_t *r, uint32_t psn);        /* capture this request twice */
void rc_lose_ack(rc_t *r, uint32_t psn);   /* this ACK captured, lost after the tap */
void rc_start(rc_t *r, uint64_t t);
void rc_resp_sport(rc_t *r, uint16_t sport);
void sim_run(ctx_t *c);
uint32_t rc_next_psn(rc_t *r);
void rc_free(rc_t *r);

/* scen.c: CM MADs on QP1 */
enum { CM_REQ = 0x10, CM_MRA, CM_REJ, CM_REP, CM_RTU, CM_DREQ, CM_DREP, CM_SIDR_REQ,
       CM_SIDR_REP, CM_LAP, CM_APR };
typedef struct {
    conv_t *mad;      /* QP1 <-> QP1 UD conversation */
    path_t path;
    ep_t q1a, q1b;    /* QP1 endpoints */
    uint32_t psn[2];
} madctx_t;
void mad_init(ctx_t *c, madctx_t *m, const path_t *path, const ep_t *a, const ep_t *b);
uint32_t mad_send(ctx_t *c, madctx_t *m, int dir, uint16_t attr, uint64_t tid,
                  const uint8_t *cm, conv_t *note_cv);
void cm_req(uint8_t *d, uint32_t lcid, uint16_t port, uint64_t guid, const ep_t *a,
            const ep_t *b, uint32_t spsn);
void cm_rep(uint8_t *d, uint32_t lcid, uint32_t rcid, uint64_t guid, const ep_t *b, uint32_t spsn);
void cm_ids(uint8_t *d, uint32_t lcid, uint32_t rcid);

/* scen.c */
typedef struct {
    const char *name;
    const char *desc;
    int linktype;
    void (*fn)(ctx_t *c);
} scen_t;
extern const scen_t scenarios[];

/* scen_messy.c */
void s_merged_hosts(ctx_t *c);
void s_read_fill_reissue(ctx_t *c);
void s_read_reissue_mtu(ctx_t *c);
void s_read_reissue_fast(ctx_t *c);
void s_read_resp_lost(ctx_t *c);
void s_rnr_multi(ctx_t *c);
void s_nak_lost_after_tap(ctx_t *c);
void s_time_backwards(ctx_t *c);
void s_fill_gbn(ctx_t *c);
void s_fill_end_many(ctx_t *c);
void s_late_revision(ctx_t *c);
void s_cm_stranger(ctx_t *c);
void s_qpn_reuse(ctx_t *c);

/* scen_hw.c: go-back-N at hardware timing (issue 29) */
void s_hw_write_first_lost(ctx_t *c);
void s_hw_send_inv(ctx_t *c);
void s_hw_vlan(ctx_t *c);
void s_hw_ipv6(ctx_t *c);
void s_hw_snaplen(ctx_t *c);
void s_hw_psn_wrap(ctx_t *c);
void s_hw_coalesced(ctx_t *c);
void s_hw_nak_same_us(ctx_t *c);
void s_hw_mid_resend(ctx_t *c);
void s_hw_read_reissue_resp(ctx_t *c);
void s_hw_nested_nak(ctx_t *c);
void s_hw_nested_timeout(ctx_t *c);
void s_hw_nested_read(ctx_t *c);
void s_hw_rnr_continue(ctx_t *c);
void s_hw_rnr_continue_req(ctx_t *c);
void s_hw_read_middle_next(ctx_t *c);
void s_hw_fill_resend(ctx_t *c);
void s_hw_copy_in_gbn(ctx_t *c);
void s_hw_merged_nak(ctx_t *c);

/* scen_pfc.c */
void s_pfc_stall(ctx_t *c);
void s_pfc_mismatch(ctx_t *c);
void s_pause_8023x(ctx_t *c);

/* scen_ecn.c: lossless-network scenarios (issue 18) */
void s_lossless_ok(ctx_t *c);
void s_ecn_no_cnp(ctx_t *c);
void s_cnp_priority_bad(ctx_t *c);
void s_mtu_mismatch(ctx_t *c);
void s_capture_incomplete(ctx_t *c);
extern const size_t n_scenarios;

/* rand.c: `qpscen random` (DIR/random-<hw|rxe>-<seed>.pcap and .json) */
enum { RT_HW, RT_RXE };
int rand_scenario(const char *dir, guint32 seed, int timing);

/* bench (main.c) */

/* byte helpers */
static inline uint8_t *put8(uint8_t *p, uint8_t v) { p[0] = v; return p + 1; }
static inline uint8_t *put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; return p + 2; }
static inline uint8_t *put24(uint8_t *p, uint32_t v) { p[0] = (uint8_t)(v >> 16); p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)v; return p + 3; }
static inline uint8_t *put32(uint8_t *p, uint32_t v) { p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v; return p + 4; }
static inline uint8_t *put64(uint8_t *p, uint64_t v) { put32(p, (uint32_t)(v >> 32)); return put32(p + 4, (uint32_t)v); }

#define PSN_MASK 0xFFFFFFu
static inline uint32_t psn_add(uint32_t a, int32_t d) { return (uint32_t)((int64_t)a + d) & PSN_MASK; }
/* signed distance b - a in 24-bit space */
static inline int32_t psn_diff(uint32_t b, uint32_t a) {
    int32_t d = (int32_t)((b - a) & PSN_MASK);
    if (d & 0x800000) d -= 0x1000000;
    return d;
}

#endif
