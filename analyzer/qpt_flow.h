/* qpt_flow.h - QP conversations and PSN/ACK sequence analysis
 *
 * Feed decoded packets in capture order; the engine pairs the two
 * directions of each connection (from CM, else from traffic), keeps
 * tcptrace-style counters per direction, and classifies each packet as
 * Wireshark's TCP analysis does, using the IBA requester/responder rules
 * (rxe_comp.c / rxe_resp.c).  State is per QP and per bounded PSN window,
 * never per packet.
 */
#ifndef QPT_FLOW_H
#define QPT_FLOW_H

#include <glib.h>

#include "qpt_decode.h"
#include "qpt_verdict.h"

/* Log histogram for latencies: exact min/max/mean, p50/p99 within about 1 %. */
#define QPT_LAT_BINS_PER_DECADE 100
#define QPT_LAT_DECADES 9 /* 0.01 us .. 10 s */
#define QPT_LAT_FEW 4 /* up to this many samples: their bins only */
struct qpt_lat {
	uint64_t n;
	double min_us, max_us, sum_us;
	/* allocated on the first sample; with n <= QPT_LAT_FEW the bin
	 * numbers of the samples, in order, else a count per bin (most
	 * conversations have a few samples: 16 bytes, not 3.6 KB): read them
	 * with qpt_lat_bin() */
	uint32_t *bins;
};
double qpt_lat_percentile(const struct qpt_lat *l, double p);
extern const struct qpt_lat qpt_lat_none; /* no sample, never written */
/* The samples in bin i (0 .. QPT_LAT_BINS_PER_DECADE * QPT_LAT_DECADES - 1). */
uint32_t qpt_lat_bin(const struct qpt_lat *l, unsigned i);
/* Whether the RTT of verdict v (v->ack_rtt_ns) of packet p is a sample of
 * the engine's ACK RTT (struct qpt_dir_stats ack_rtt, summary's "RTT"): that of
 * a plain ACK.  A NAK's, a READ response's or an atomic ACK's ack_rtt_ns
 * times the answer only; it is no sample (the plugin's roce.analysis.ack_rtt
 * is on the samples alone). */
bool qpt_rtt_sample(const struct qpt_verdict *v, const struct qpt_pkt *p);

struct qpt_opstat {
	uint64_t count, bytes, packets;
	uint32_t min_size, max_size;
};

struct qpt_episode {
	uint64_t trigger_frame; /* the NAK, or the last packet before the silence */
	uint64_t first_resent_frame;
	uint64_t end_frame;	/* where recovery shows: the answer to the last PSN
				 * outstanding (or resent, when all before the
				 * episode was answered), or a new PSN past them;
				 * 0 if never */
	int64_t start_ns, end_ns;
	uint32_t resent_packets;
	uint32_t from_psn;
	bool timeout; /* trigger == QPT_TRIGGER_TIMEOUT */
	uint8_t trigger; /* enum qpt_trigger */
};

/* What started a go-back-N episode. */
enum qpt_trigger {
	QPT_TRIGGER_NAK,	/* a PSN sequence error NAK */
	QPT_TRIGGER_TIMEOUT,	/* a silence of timeout_gap_ns or more, then a resend */
	QPT_TRIGGER_READ_RETRY, /* a READ re-issued after a gap in its responses */
	QPT_TRIGGER_RESEND,	/* a resend with neither: its NAK was not captured */
};
const char *qpt_trigger_name(unsigned trigger); /* "nak", "timeout", ... */

/* The priorities of one direction's packets, the ECN-CE marks on them and
 * the CNPs that the receiver sent back for them (qpt_flow_qos.c);
 * allocated with the direction's first packet.
 *
 * Packets are counted in the direction that carries them, by class: data
 * (requests, READ responses, atomic ACKs), ACK (an Acknowledge packet:
 * ACK or NAK) and CNP.  So the CNPs a direction's sender receives are the
 * other direction's CNP class: every number of a direction is what one
 * NIC sent.
 *
 * A mark is answered by the first CNP of the other direction (the
 * receiver's CNP to the sender's QP) within the ECN window after it: one
 * CNP answers every mark before it that no earlier CNP answered (NICs send
 * at most one CNP per QP per interval: mlx5's min_time_between_cnps,
 * DCQCN's 50 us).  A mark no CNP follows within the window, but that a CNP
 * preceded by less than the window, was covered by the NIC's CNP timer.
 * A mark neither is without CNP (struct qpt_dir_stats.ce_without_cnp); a mark
 * less than a window before the end of the capture is undecided. */
enum qpt_qos_class { QPT_QOS_DATA, QPT_QOS_ACK, QPT_QOS_CNP, QPT_QOS_CLASSES };
const char *qpt_qos_class_name(unsigned cls); /* "data", "ack", "cnp" */
struct qpt_qos_count {
	uint8_t cls;	/* enum qpt_qos_class */
	bool dscp;	/* the DSCP; false: the 802.1Q PCP */
	int16_t value;	/* -1: untagged (PCP) */
	uint64_t packets;
};
#define QPT_QOS_FRAMES 4

/* ---- the read model ------------------------------------------------------
 * What front ends read of a conversation: struct qpt_conv_stats, its
 * identity (struct qpt_conv_ident) and its two directions' stats (struct
 * qpt_dir_stats), every counter a plain field.  The walk
 * (qpt_conv_walk_next) and qpt_flow_conv_stats() fill them from the
 * engine's storage (qpt_flow_int.h, which no front end reads), for live and
 * cold conversations alike.  The pointers in them (latencies, episodes, the
 * CM exchange, priority counts) are the engine's, valid as the fill's
 * result is. */

/* Field lists the read model and the engine's storage (qpt_flow_int.h)
 * share, each as fields of their own and as a whole (a struct of that list
 * in an anonymous union, as Linux's struct_group()): one list, filled with
 * one copy. */

/* A direction's ECN and CNP results (qpt_flow_qos.c): its ECN-CE marks,
 * answered by the other's CNPs (reaction: CNP time - first unanswered
 * mark's time, us; cnps_without_ce: CNPs back with no unanswered mark
 * here); the first marks without CNP; the first CNPs it carries on another
 * DSCP/PCP than expected; the sender's data rate (bytes of its IBA
 * packets, BTH to ICRC for RoCEv2) in the rate window before and after
 * each CNP it received, summed over the CNPs (rate_windows_cut: the
 * capture ended inside the after window), and their means (at the end). */
#define QPT_QOS_RESULTS                                               \
	struct qpt_lat reaction;                                      \
	uint64_t ce_answered, ce_covered, ce_undecided;               \
	uint64_t cnps_without_ce;                                     \
	uint64_t no_cnp_frames[QPT_QOS_FRAMES];                       \
	uint64_t cnp_unexpected_frames[QPT_QOS_FRAMES];               \
	uint64_t rate_windows, bytes_before, bytes_after;             \
	uint64_t rate_windows_cut;                                    \
	double rate_before_bps, rate_after_bps;
struct qpt_qos_results {
	QPT_QOS_RESULTS
};

/* What a direction counts only once something out of the ordinary
 * happened: ce_without_cnp, ECN-CE marks no CNP answered (qpt_flow_qos.c);
 * cnp_unexpected, CNPs on another DSCP/PCP than expected; response_gaps,
 * missing_responses, READ responses skipped; new_sequences, a QPN's PSNs
 * started again far away; time_backwards, frames stamped before the
 * previous frame. */
#define QPT_RARE_COUNTS                                                   \
	uint64_t dup_acks;                                                \
	uint64_t retransmitted_packets, psn_gaps, missing_psns, duplicates, \
		out_of_order, rnr_naks, rnr_retries, read_retries, timeouts; \
	uint64_t naks[QPT_NAK_KINDS];                                     \
	uint64_t cnps, ecn_ce, fecn, becn, malformed;                     \
	uint64_t ce_without_cnp, cnp_unexpected;                          \
	uint64_t response_gaps, missing_responses;                        \
	uint64_t new_sequences, time_backwards;
struct qpt_rare_counts {
	QPT_RARE_COUNTS
};

/* A direction's priorities, ECN marks and CNPs, and MTU evidence
 * (qpt_flow_qos.c): the results, not the matching state. */
struct qpt_qos_stats {
	union {
		struct {
			QPT_QOS_RESULTS
		};
		struct qpt_qos_results res;
	};
	/* MTU evidence: the largest payload; the payload of FIRST/MIDDLE
	 * packets (one MTU each), the largest and whether they differed, and
	 * where (the first frame) */
	uint64_t max_payload_frame, seg_frame;
	uint32_t max_payload, seg_payload;
	bool seg_varies;
	/* the priority counts, read with qpt_qos_count_at(): ncounts of them,
	 * in counts (the engine's) or, when that is NULL, in counts_in */
	unsigned ncounts;
	const struct qpt_qos_count *counts;
	struct qpt_qos_count counts_in[4];
};

/* One direction of a conversation (tcptrace's a2b / b2a).  A direction
 * no packet went is all zero (from = d, to = 1 - d, latencies
 * qpt_lat_none). */
struct qpt_dir_stats {
	uint8_t from, to; /* indexes into the conversation's ep */
	bool psn_seen;
	/* bit op: ops[op] holds the messages of operation op (enum qpt_op);
	 * read them with qpt_dir_op() */
	uint16_t ops_seen;
	uint32_t first_psn, last_psn; /* request PSN range */
	uint64_t psn_span; /* distinct PSNs advanced, with wrap */
	uint64_t packets, payload_bytes, bytes;
	uint64_t req_packets, resp_packets, acks, coalesced_acks;
	uint64_t bad_icrc; /* packets whose ICRC was wrong */
	int64_t first_ns, last_ns;
	/* something out of the ordinary was counted (a loss, a resend, a NAK,
	 * a CNP, a READ or atomic); false: the rare counts, gbn_episodes and
	 * episodes are zero (and read_lat, atomic_lat qpt_lat_none) */
	bool eventful;
	union {
		struct {
			QPT_RARE_COUNTS
		};
		struct qpt_rare_counts rare;
	};
	uint64_t gbn_episodes;
	/* never NULL: qpt_lat_none without a sample.  ack_rtt: the RTT of the
	 * ACKs the other direction sent for this one's requests */
	const struct qpt_lat *ack_rtt, *read_lat, *atomic_lat;
	/* struct qpt_episode, the first QPT_MAX_EPISODES (all counted in
	 * gbn_episodes); NULL: none */
	const GArray *episodes;
	/* priorities, ECN, MTU evidence: read qpt_dir_qos() (NULL before the
	 * direction's first packet) */
	bool qos_seen;
	struct qpt_qos_stats qos;
	struct qpt_opstat ops[QPT_OP_COUNT]; /* those of ops_seen only */
};

G_STATIC_ASSERT(QPT_OP_COUNT <= 16);
/* The messages of operation op (enum qpt_op) in d: all zero when none. */
const struct qpt_opstat *qpt_dir_op(const struct qpt_dir_stats *d, unsigned op);

enum qpt_paired_by { QPT_PAIR_NONE, QPT_PAIR_CM, QPT_PAIR_TRAFFIC };
const char *qpt_paired_by_name(enum qpt_paired_by p);

struct qpt_cm_info {
	uint64_t req_frame, rep_frame, rtu_frame, dreq_frame, drep_frame,
		rej_frame, mra_frame;
	int64_t req_ns, rep_ns, rtu_ns, dreq_ns, drep_ns;
	uint32_t req_comm_id, rep_comm_id;
	uint64_t service_id;
	uint32_t path_mtu; /* bytes */
	uint32_t psn[2];   /* starting PSN of ep[0] and ep[1] */
	uint16_t rej_reason;
	bool has_ip;
	struct qpt_cma_ip ip;
};

/* A conversation's identity: what a per-packet lookup needs
 * (qpt_flow_conv_ident()), without its stats. */
#define QPT_CONV_IDENT_FIELDS                                                       \
	int32_t id;                                                                 \
	char transport[4]; /* "RC", "UC", "UD", "XRC", "RD" */                      \
	enum qpt_paired_by paired_by;                                               \
	uint32_t mtu; /* learned or from CM, 0 unknown */                           \
	const char *pair_evidence; /* human words: "CM REQ/REP", "ACK PSN ..." */  \
	/* the CM exchange that set it up (the engine's); never NULL: all zero \
	 * without one (has_cm false) */                                            \
	const struct qpt_cm_info *cm;                                               \
	struct qpt_endpoint ep[2];                                                  \
	bool has_cm;
struct qpt_conv_ident {
	QPT_CONV_IDENT_FIELDS
};

/* A conversation: its identity, as fields of its own and as a whole
 * (ident, for what takes a struct qpt_conv_ident: the same bytes), and its
 * two directions. */
struct qpt_conv_stats {
	union {
		struct {
			QPT_CONV_IDENT_FIELDS
		};
		struct qpt_conv_ident ident;
	};
	struct qpt_dir_stats dir[2];
};

struct qpt_flow_opts {
	uint32_t max_halves;	 /* 0 (default): no limit; else at most this many
				  * halves (QPs, see qpt_flow.c) are tracked, the
				  * packets of the others are untracked and the
				  * totals say so (max_halves, untracked) */
	/* frames between two sweeps that make idle halves compact
	 * (qpt_flow_cold.c; 0: 8,192; the analysis is the same whatever it
	 * is, 1 sweeps before every frame) */
	uint32_t cold_every;
	int64_t dup_window_ns;	 /* identical packet within this = capture duplicate (50 us) */
	int64_t tap_window_ns;	 /* ... seen first by another capture point (1 s) */
	int64_t timeout_gap_ns;	 /* silence before a resend that makes it a timeout (500 us) */
	/* ECN and CNPs (qpt_flow_qos.c): the DSCP and 802.1Q priority CNPs are
	 * expected on (-1: any), used when cnp_qos_set, else 48 and 6 */
	bool cnp_qos_set;
	int cnp_dscp, cnp_pcp;
	int64_t ecn_window_ns;	    /* a CNP answers a mark within this (100 us) */
	int64_t cnp_rate_window_ns; /* rate before/after a CNP over this (100 us) */
};

struct qpt_totals {
	uint64_t frames, iba_packets, tracked, untracked, management, malformed,
		bad_icrc, conversations;
	uint64_t cm_unknown_comm_id, cm_rejects; /* CM messages of no known
						  * connection; REJs */
	uint64_t fragmented_roce_packets; /* first IPv4 fragments to a RoCE port */
	uint64_t time_backwards; /* frames stamped before the previous frame */
	/* RoCE/IB frames whose payload or ICRC the capture's snap length cut
	 * (headers whole: analysed, ICRC not checked), and the snap length:
	 * the largest captured length among them. */
	uint64_t cut_by_snaplen;
	uint32_t snaplen;
	/* pcapng Interface Statistics (isb_ifdrop, isb_osdrop) of the inputs
	 * (qpt_flow_add_capture_drops): packets the capture itself lost */
	bool drops_known;
	uint64_t interface_drops, os_drops;
	/* the limit on tracked halves asked for (qpt_flow_opts.max_halves, 0:
	 * none); limit_reached: a packet of a new half came with the limit
	 * reached (its packets are the untracked ones) */
	uint32_t max_halves;
	bool limit_reached;
	uint64_t halves; /* halves tracked */
};

struct qpt_flow;
struct qpt_flow *qpt_flow_new(const struct qpt_flow_opts *opts);
void qpt_flow_free(struct qpt_flow *fl);
/* Analyse one frame (decoded or not, so frames are counted); *v is the
 * engine's whole answer for it, its events included. */
void qpt_flow_packet(struct qpt_flow *fl, uint64_t frame, int64_t time_ns,
		     const struct qpt_pkt *pkt, struct qpt_verdict *v);
/* The capture point of the frames that follow (0 by default): with
 * captures taken at several points and merged (both hosts, a switch), the
 * same packet seen by two points is a capture copy however far apart the
 * two saw it; one point seeing it twice is a resend. */
void qpt_flow_set_tap(struct qpt_flow *fl, unsigned tap);
/* The end of the input, once per engine, for every front end: first the
 * events still undecided, all of earlier frames (a gap filler nothing
 * followed: out of order; an ECN-CE mark whose window ended with the
 * capture and no CNP answered), every one of them, ordered as
 * qpt_event_cmp(), given to fn(data, v) in verdicts of up to
 * QPT_MAX_EVENTS events (v->frame UINT64_MAX, v->conv and v->dir -1: of
 * no frame; valid during the call); then it closes open episodes,
 * messages whose start never showed, the PFC and ECN analyses.  fn may be
 * NULL (the counters have those events all the same).  A second call
 * does nothing.  The results (qpt_flow_conversations(), qpt_conv_walk,
 * totals) are final after it. */
typedef void (*qpt_end_fn)(void *data, const struct qpt_verdict *v);
void qpt_flow_end(struct qpt_flow *fl, qpt_end_fn fn, void *data);
/* The order of the end's events: by frame, then kind, conversation id
 * (as the events carry it), direction. */
int qpt_event_cmp(const struct qpt_event *a, const struct qpt_event *b);
/* After qpt_flow_end(), when no frame will follow: frees what only
 * frames need (the QP halves, their PSN windows, the lookup tables).  The
 * conversations (cold ones stay cold: qpt_conv_walk reads them), totals,
 * CM requests and PFC results stay; qpt_flow_packet() must not be called
 * again. */
void qpt_flow_forget_halves(struct qpt_flow *fl);
/* Conversations in id order (merged ones skipped), thawed if cold, each
 * filled (struct qpt_conv_stats *): the array and the stats are the
 * caller's (g_ptr_array_free(a, TRUE)), the pointers in them the engine's,
 * valid until the next qpt_flow_packet() (whose sweep may make them cold
 * again, qpt_flow_cold.c) or qpt_flow_free().  For a few conversations (a
 * million: qpt_conv_walk). */
GPtrArray *qpt_flow_conversations(struct qpt_flow *fl);
/* A CM connection request that made no conversation: no REP came (a REJ
 * instead, or nothing in the capture; an RTU shows a REP that the capture
 * missed, and then the request is not listed). */
struct qpt_cm_attempt {
	struct qpt_endpoint from, to; /* the REQ's sender (its QP) and receiver */
	struct qpt_cm_info info;
};
/* Those, by REQ frame; the array is the caller's, the attempts the
 * engine's (as for qpt_flow_conversations). */
GPtrArray *qpt_flow_cm_attempts(struct qpt_flow *fl);
const struct qpt_totals *qpt_flow_totals(struct qpt_flow *fl);
/* PFC and PAUSE frames per priority and the conversations they stalled
 * (qpt_pfc.h); the engine's, valid until qpt_flow_free(). */
struct qpt_pfc;
struct qpt_pfc *qpt_flow_pfc(struct qpt_flow *fl);
/* The conversations pauses on priority prio stalled, by their ids now
 * (folds followed), each once, ascending: int32_t, the caller's. */
GArray *qpt_flow_pfc_stalled(struct qpt_flow *fl, unsigned prio);
/* The options in force (defaults filled in). */
const struct qpt_flow_opts *qpt_flow_options(const struct qpt_flow *fl);
/* How many distinct values of that class and kind the direction saw; the
 * value with the most packets in *top (may be NULL). */
unsigned qpt_qos_values(const struct qpt_dir_stats *d, unsigned cls, bool dscp, int *top);
/* The direction's priority counts in the order first seen: the i-th, NULL
 * past the last. */
const struct qpt_qos_count *qpt_qos_count_at(const struct qpt_dir_stats *d, unsigned i);
/* Its ECN and rate results and MTU evidence (all zero when none was
 * needed), NULL before its first packet; its priority counts are read with
 * qpt_qos_count_at(). */
const struct qpt_qos_stats *qpt_dir_qos(const struct qpt_dir_stats *d);
/* The id a conversation has now: ids handed out before two halves were
 * paired late point to the conversation they were folded into. */
int32_t qpt_flow_conv_id(struct qpt_flow *fl, int32_t id);
/* The conversation with that id now (following folds) filled into *out
 * (thawed if cold), NULL when none; the pointers in it valid as
 * qpt_flow_conversations()' are. */
const struct qpt_conv_stats *qpt_flow_conv_stats(struct qpt_flow *fl, int32_t id,
						 struct qpt_conv_stats *out);
/* Its identity alone into *out, for a lookup per packet (nothing counted
 * is read); NULL when none. */
const struct qpt_conv_ident *qpt_flow_conv_ident(struct qpt_flow *fl, int32_t id,
						 struct qpt_conv_ident *out);

/* The mirror or tunnel session a conversation's frames came in (ERSPAN,
 * GRE, VXLAN: the outermost one; qpt_flow_tunnel.c), set by its first
 * frame in one. */
struct qpt_tunnel_id {
	uint8_t kind;	    /* enum qpt_tunnel_kind */
	uint8_t ip_version; /* outer IP: 4 or 6 */
	bool has_key;
	uint32_t key;	    /* ERSPAN II/III session id, VXLAN VNI, GRE key */
	uint8_t src[16], dst[16]; /* outer addresses, IPv4 in the last four bytes */
};
/* The session of conversation id (folds followed), NULL when its frames
 * came in none; *several (may be NULL): its frames came under more than
 * one (the first is returned), or some in one and some in none.  Final
 * after qpt_flow_end(); valid until the next frame or qpt_flow_free(). */
const struct qpt_tunnel_id *qpt_flow_conv_tunnel(struct qpt_flow *fl, int32_t id, bool *several);
/* "ERSPAN-II session 42, 198.51.100.1 > 198.51.100.2", "VXLAN VNI 4242, ...",
 * "GRE-TEB key 7, ...", "GRE-TEB, ..." (no key); returns buf. */
#define QPT_TUNNEL_STRLEN 128
/* Its outer source (dst false) or destination address in buf
 * (INET6_ADDRSTRLEN bytes); returns buf. */
char *qpt_tunnel_outer_addr(const struct qpt_tunnel_id *t, bool dst, char *buf);
char *qpt_format_tunnel(const struct qpt_tunnel_id *t, char *buf, size_t len);

/* The conversations one at a time, in id order (merged ones skipped;
 * with a filter keep, only those keep(c, data) accepts: it sees the
 * identity, the stats are filled for those it keeps), without thawing
 * any: each filled into the walk's own space, valid until the next
 * qpt_conv_walk_next() or qpt_conv_walk_end() (a cold one, qpt_flow_cold.c,
 * decoded there too).  What a report of a million conversations reads,
 * once or a few times each, in the memory of one (qpt_flow_read.c).  No
 * frame may be fed to fl during a walk. */
typedef bool (*qpt_conv_filter)(const struct qpt_conv_ident *c, void *data);
struct qpt_conv_walk {
	struct qpt_flow *fl;
	qpt_conv_filter keep; /* NULL: every one */
	void *data;
	guint next;
	void *view; /* the engine's */
};
void qpt_conv_walk_start(struct qpt_conv_walk *w, struct qpt_flow *fl, qpt_conv_filter keep,
			 void *data);
const struct qpt_conv_stats *qpt_conv_walk_next(struct qpt_conv_walk *w);
void qpt_conv_walk_end(struct qpt_conv_walk *w);


/* ---- sharded analysis (qptrace -j N, analyzer/cli/shard.c) --------------
 * Several engines, each fed the frames of its own address pairs in frame
 * order, give what one engine fed every frame gives, with these: */
/* Conversation ids handed out so far (the next new one's id). */
int32_t qpt_flow_conv_count(struct qpt_flow *fl);
/* The time of the frame before the next one fed to fl, when that frame
 * went to another engine: time_backwards compares with it. */
void qpt_flow_set_previous_time(struct qpt_flow *fl, int64_t ns);
/* What the PFC analysis (qpt_flow_pfc()) takes of a frame and its verdict:
 * PFC/PAUSE frames, and RoCE data of a conversation direction.
 * qpt_flow_packet() calls it; the merge of several engines (-j N) calls it
 * on the engine that absorbs them, in frame order, with the verdict's
 * conversation id as that engine numbers it. */
/* The time of the last packet of any conversation: the end of the capture
 * for the ECN/CNP analysis at qpt_flow_end().  With several engines
 * (-j N) the caller sets each one's to the latest of all before ending
 * them, so that they judge as one engine would. */
int64_t qpt_flow_conv_end(struct qpt_flow *fl);
/* Packets a capture file's interface statistics say it dropped (the
 * reader's pcapng ISB counters: the engine sees no bytes of them). */
void qpt_flow_add_capture_drops(struct qpt_flow *fl, uint64_t interface_drops, uint64_t os_drops);
void qpt_flow_set_conv_end(struct qpt_flow *fl, int64_t ns);
void qpt_flow_pfc_feed(struct qpt_flow *fl, uint64_t frame, int64_t ns,
		       const struct qpt_pkt *p, const struct qpt_verdict *v);
/* Moves the conversations and CM requests of part (ended: qpt_flow_end())
 * into fl, which was fed no frame: part's conversation i becomes fl's
 * conversation ids[i] (ids of merges follow), totals are added.  Once
 * every part is moved, fl answers qpt_flow_conversations(),
 * qpt_flow_cm_attempts(), qpt_flow_totals(), qpt_flow_conv_id() and
 * qpt_flow_conv_stats() as the one engine would; part keeps only its halves
 * (free it).  The ids of all parts together must be 0..n-1. */
void qpt_flow_absorb(struct qpt_flow *fl, struct qpt_flow *part, const int32_t *ids);

#endif
