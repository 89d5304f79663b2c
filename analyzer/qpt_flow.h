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
 * the engine's ACK RTT (struct qpt_dir ack_rtt, summary's "RTT"): that of
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
 * the CNPs that the receiver sent back for them (qpt_ecn.c); allocated with
 * the direction's first packet, apart from struct qpt_dir.
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
 * A mark neither is without CNP (struct qpt_dir_rare.ce_without_cnp); a mark
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
struct qpt_ecn_mark {
	int64_t ns;
	uint64_t frame;
	uint32_t psn;
	bool covered; /* a CNP preceded it within the window */
};
struct qpt_dir_qos {
	GArray *counts; /* struct qpt_qos_count, in the order first seen */
	/* this direction's ECN-CE marks, answered by the other's CNPs */
	struct qpt_lat reaction; /* CNP time - first unanswered mark's time, us */
	uint64_t ce_answered, ce_covered, ce_undecided;
	uint64_t cnps_without_ce; /* CNPs back with no unanswered mark here */
	uint64_t no_cnp_frames[QPT_QOS_FRAMES]; /* the first marks without CNP */
	/* the first CNPs it carries on another DSCP/PCP than expected */
	uint64_t cnp_unexpected_frames[QPT_QOS_FRAMES];
	/* the sender's data rate (bytes of its IBA packets, BTH to ICRC for
	 * RoCEv2) in the rate window before and after each CNP it received,
	 * summed over the CNPs */
	uint64_t rate_windows, bytes_before, bytes_after;
	uint64_t rate_windows_cut; /* the capture ended inside the after window */
	double rate_before_bps, rate_after_bps; /* their means (at the end) */
	/* (the MTU evidence is in struct qpt_qos_inline) */
	/* matching state */
	GArray *pending; /* struct qpt_ecn_mark not yet answered, oldest first */
	guint pending_head;
	bool cnp_seen;
	int64_t last_cnp_ns;
	GArray *open;	 /* CNP rate windows whose after part is not over */
	guint open_head;
	/* CNPs this direction carried before its conversation had the other
	 * direction (a traffic-paired QP: before its first ACK), matched to
	 * the marks when the two are folded together (QPT_QOS_ORPHANS kept:
	 * more are counted in cnps_without_ce) */
#define QPT_QOS_ORPHANS 8
	int64_t orphan_cnp_ns[QPT_QOS_ORPHANS];
	unsigned n_orphans;
};

/* What a direction counts only once something out of the ordinary happened
 * (a loss, a resend, a NAK, a CNP, a READ or atomic): struct qpt_dir.r
 * points to qpt_dir_rare_none (all zero, never written) until the engine
 * writes one of these, then to the direction's own (issue 17: a million
 * healthy or one-packet QPs do not pay for them). */
struct qpt_dir_rare {
	uint64_t dup_acks;
	uint64_t retransmitted_packets, psn_gaps, missing_psns, duplicates,
		out_of_order, rnr_naks, rnr_retries, read_retries, timeouts;
	uint64_t naks[QPT_NAK_KINDS];
	uint64_t cnps, ecn_ce, fecn, becn, malformed;
	uint64_t ce_without_cnp; /* ECN-CE marks no CNP answered (qpt_ecn.c) */
	uint64_t cnp_unexpected; /* CNPs on another DSCP/PCP than expected */
	uint64_t response_gaps, missing_responses; /* READ responses skipped */
	uint64_t new_sequences;  /* a QPN's PSNs started again far away */
	uint64_t time_backwards; /* frames stamped before the previous frame */
	/* never NULL: qpt_lat_none until the first sample */
	const struct qpt_lat *read_lat, *atomic_lat;
	GArray *episodes; /* struct qpt_episode, bounded (QPT_MAX_EPISODES) */
	uint64_t gbn_episodes;
};
extern const struct qpt_dir_rare qpt_dir_rare_none;

/* What a direction keeps of its priorities and MTU in struct qpt_dir
 * itself (qpt_ecn.c): 64 bytes, enough for most directions, whose data
 * and ACK packets carry one PCP and one DSCP each.  struct qpt_dir_qos is
 * allocated once one needs more: a second PCP or DSCP of a class, more than
 * 65,535 packets of one, a CNP, an ECN-CE mark; what is kept here of
 * counts moves into it then.  The CNP rate window's history of the data
 * packets is here while QPT_QOS_INLINE_HIST of them are in the window, on
 * the heap (its own struct, not struct qpt_dir_qos: a healthy direction
 * sending a burst does not need that) once more are, or a CNP came.  Read
 * the counts with qpt_qos_count_at() and the rest with qpt_dir_qos(). */
#define QPT_QOS_INLINE_HIST 2
#define QPT_QOS_HIST_HEAP 0xff /* qpt_qos_inline.nhist: history on the heap */
struct qpt_qos_hist; /* qpt_ecn.c's */
struct qpt_qos_inline {
	/* MTU evidence (always here): the largest payload; the payload of
	 * FIRST/MIDDLE packets (one MTU each), the largest and whether they
	 * differed, and where (the first frame) */
	uint64_t max_payload_frame, seg_frame;
	/* the rest: qpt_ecn.c's own.  The rate window's history: the data
	 * packets of the last window (nhist of them), or where it went */
	union {
		struct {
			int64_t ns[QPT_QOS_INLINE_HIST];
			uint32_t len[QPT_QOS_INLINE_HIST];
		} in;			   /* nhist <= QPT_QOS_INLINE_HIST */
		struct qpt_qos_hist *heap; /* nhist == QPT_QOS_HIST_HEAP */
	} hist;
	uint32_t max_payload, seg_payload;
	/* while struct qpt_dir.qos is NULL: packets per slot (class data or
	 * ACK x PCP or DSCP: cls * 2 + dscp), 0: none; its value; the slots in
	 * the order first seen, 2 bits each */
	uint16_t n[4];
	int8_t value[4];
	uint8_t order;
	uint8_t nhist;
	bool seen; /* a packet or a CNP about it: qpt_dir_qos() not NULL */
	bool seg_varies;
};
G_STATIC_ASSERT(sizeof(struct qpt_qos_inline) == 64);

/* One direction of a conversation (tcptrace's a2b / b2a). */
struct qpt_dir {
	/* (fields ordered so that none leaves a hole: two per conversation) */
	uint8_t from, to; /* indexes into conv->ep */
	/* messages by operation: qpt_dir_op(); only the operations seen are
	 * stored (op_mask), in operation order */
	uint16_t op_mask;
	uint32_t first_psn; /* request PSN range: first_psn .. last_psn */
	struct qpt_opstat *opv;
	uint64_t packets, payload_bytes, bytes;
	uint64_t req_packets, resp_packets, acks, coalesced_acks;
	/* packets whose ICRC was wrong: a counter of its own, not a rare
	 * one (a capture path that zeroes every ICRC makes every direction
	 * have them: a rare struct each cost 5x the memory of --no-crc) */
	uint64_t bad_icrc;
	struct qpt_dir_qos *qos; /* NULL until needed: read qpt_dir_qos() */
	struct qpt_qos_inline qos_in;
	/* never NULL in a conversation the engine made: its rare counters, or
	 * qpt_dir_rare_none */
	const struct qpt_dir_rare *r;
	int64_t first_ns, last_ns;
	uint32_t last_psn;
	bool psn_seen;
	uint64_t psn_span; /* distinct PSNs advanced, with wrap */
	/* never NULL in a conversation the engine made: the RTT of the ACKs
	 * the other direction sent for this one's requests, or qpt_lat_none
	 * before the first (a direction nothing ACKed does not pay for it) */
	const struct qpt_lat *ack_rtt;
};

/* A direction with nothing counted: dir[d] of a conversation until the
 * engine counts something for it (from = d, to = 1 - d). */
extern const struct qpt_dir qpt_dir_none[2];

G_STATIC_ASSERT(QPT_OP_COUNT <= 16);
/* The messages of operation op (enum qpt_op) in d: all zero when none. */
const struct qpt_opstat *qpt_dir_op(const struct qpt_dir *d, unsigned op);

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

struct qpt_conv {
	/* (fields ordered so that none leaves a hole: a million of them) */
	int32_t id;
	char transport[4]; /* "RC", "UC", "UD", "XRC", "RD" */
	enum qpt_paired_by paired_by;
	uint32_t mtu; /* learned or from CM, 0 unknown */
	const char *pair_evidence; /* human words: "CM REQ/REP", "ACK PSN ..." */
	/* the CM exchange that set it up (the engine's, not a copy); never
	 * NULL: all zero without one (has_cm false) */
	const struct qpt_cm_info *cm;
	struct qpt_endpoint ep[2];
	/* its two directions, never NULL: a direction nothing was counted for
	 * yet (no packet went that way) is the shared all-zero
	 * &qpt_dir_none[d], not a copy (issue 17: a QP seen one way does not
	 * pay for the other) */
	const struct qpt_dir *dir[2];
	int32_t merged_into; /* that conversation's id, -1 when not merged */
	bool merged;  /* folded into another conversation: skip */
	bool has_cm;
	uint8_t cold_mark; /* the engine's own (qpt_flow_cold.c) */
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
	/* ECN and CNPs (qpt_ecn.c): the DSCP and 802.1Q priority CNPs are
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
/* Conversations in id order (merged ones skipped), thawed if cold.  The
 * array is the caller's (g_ptr_array_free(a, TRUE)); the conversations in
 * it stay the engine's, valid until the next qpt_flow_packet() (whose
 * sweep may make them cold again, qpt_flow_cold.c) or qpt_flow_free(). */
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
unsigned qpt_qos_values(const struct qpt_dir *d, unsigned cls, bool dscp, int *top);
/* The direction's priority counts in the order first seen: the i-th, NULL
 * past the last (it may be *tmp, filled). */
const struct qpt_qos_count *qpt_qos_count_at(const struct qpt_dir *d, unsigned i,
					     struct qpt_qos_count *tmp);
/* Its ECN and rate state (all zero when none was needed), NULL before its
 * first packet; its priority counts are read with qpt_qos_count_at(). */
const struct qpt_dir_qos *qpt_dir_qos(const struct qpt_dir *d);
/* The id a conversation has now: ids handed out before two halves were
 * paired late point to the conversation they were folded into. */
int32_t qpt_flow_conv_id(struct qpt_flow *fl, int32_t id);
/* The conversation with that id now (following folds), NULL when none;
 * valid as qpt_flow_conversations()' are. */
const struct qpt_conv *qpt_flow_conv(struct qpt_flow *fl, int32_t id);

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
 * with a filter keep, only those keep(c, data) accepts), without thawing
 * any: a cold one (qpt_flow_cold.c) is decoded into the walk's own space,
 * valid until the next qpt_conv_walk_next() or qpt_conv_walk_end(); a live
 * one is the engine's (as for qpt_flow_conversations()).  What a report of
 * a million conversations reads, once or a few times each, in the memory
 * of one.  No frame may be fed to fl during a walk. */
typedef bool (*qpt_conv_filter)(const struct qpt_conv *c, void *data);
struct qpt_conv_walk {
	struct qpt_flow *fl;
	qpt_conv_filter keep; /* NULL: every one */
	void *data;
	guint next;
	void *view; /* the engine's */
};
void qpt_conv_walk_start(struct qpt_conv_walk *w, struct qpt_flow *fl, qpt_conv_filter keep,
			 void *data);
const struct qpt_conv *qpt_conv_walk_next(struct qpt_conv_walk *w);
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
 * qpt_flow_conv() as the one engine would; part keeps only its halves
 * (free it).  The ids of all parts together must be 0..n-1. */
void qpt_flow_absorb(struct qpt_flow *fl, struct qpt_flow *part, const int32_t *ids);

#endif
