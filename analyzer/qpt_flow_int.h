/* qpt_flow_int.h - the flow engine's own state, shared by its files
 *
 *   qpt_flow.c       entry point and lifecycle: new/free, a packet to its
 *                    half, totals, events
 *   qpt_flow_pair.c  halves and conversations: lookup, pairing, folding
 *   qpt_flow_seq.c   sequence analysis: requests, episodes
 *   qpt_flow_resp.c  sequence analysis: responses (ACKs, NAKs, READ responses)
 *   qpt_flow_cm.c    CM connection tracking
 *   qpt_flow_lat.c   latency histograms
 *   qpt_flow_qos.c   QoS of each direction: PCP/DSCP, ECN-CE and CNPs, rate
 *                    (qpt_flow_qos.h: its state and functions for the others)
 *   qpt_flow_cold.c  idle halves and conversations kept compact
 *   qpt_flow_read.c  the read model (qpt_flow.h) filled: the walk
 *   qpt_flow_slab.c  cold records' memory (qpt_flow_varint.h: their varints)
 *
 * Not part of the engine's interface (qpt_flow.h).
 */
#ifndef QPT_FLOW_INT_H
#define QPT_FLOW_INT_H

#include <stddef.h>
#include <string.h>

#include "qpt_attr.h"
#include "qpt_flow.h"
#include "qpt_pfc.h"

/* ---- the storage of conversations and directions -------------------------
 * What the engine keeps per conversation and direction, in the layout that
 * makes a million of them small (issue 17).  Front ends read the read model
 * (struct qpt_conv_stats, qpt_flow.h) that qpt_flow_read.c fills from
 * these; nothing outside the flow files reads them. */

/* What a direction counts only once something out of the ordinary happened
 * (a loss, a resend, a NAK, a CNP, a READ or atomic): struct qpt_dir.r
 * points to qpt_dir_rare_none (all zero, never written) until the engine
 * writes one of these, then to the direction's own (issue 17: a million
 * healthy or one-packet QPs do not pay for them). */
struct qpt_dir_rare {
	union { /* (read as the read model's struct qpt_dir_stats.rare) */
		struct {
			QPT_RARE_COUNTS
		};
		struct qpt_rare_counts c;
	};
	/* never NULL: qpt_lat_none until the first sample */
	const struct qpt_lat *read_lat, *atomic_lat;
	GArray *episodes; /* struct qpt_episode, bounded (QPT_MAX_EPISODES) */
	uint64_t gbn_episodes;
};
extern const struct qpt_dir_rare qpt_dir_rare_none;

/* What a direction keeps of its priorities and MTU in struct qpt_dir
 * itself (qpt_flow_qos.c): 64 bytes, enough for most directions, whose data
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
struct qpt_qos_hist; /* qpt_flow_qos.c's */
struct qpt_qos_inline {
	/* MTU evidence (always here): the largest payload; the payload of
	 * FIRST/MIDDLE packets (one MTU each), the largest and whether they
	 * differed, and where (the first frame) */
	uint64_t max_payload_frame, seg_frame;
	/* the rest: qpt_flow_qos.c's own.  The rate window's history: the data
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

/* The messages of operation op in d (all zero when none): the storage's,
 * qpt_dir_op() reads the read model's. */
const struct qpt_opstat *fl_dir_op_r(const struct qpt_dir *d, unsigned op);
/* Its priority counts (the i-th, NULL past the last; it may be *tmp,
 * filled), as qpt_qos_count_at() reads the read model's (qpt_flow_qos.c). */
const struct qpt_qos_count *fl_qos_count_at(const struct qpt_dir *d, unsigned i,
					    struct qpt_qos_count *tmp);
/* Where each counter of qpt_counters[] is in the storage: in struct
 * qpt_dir at offset, or with rare in struct qpt_dir_rare (qpt_flow_read.c). */
struct fl_counter_loc {
	size_t offset;
	bool rare;
};
extern const struct fl_counter_loc fl_counter_locs[QPT_C_COUNT];
static inline uint64_t fl_counter(const struct qpt_dir *d, unsigned c)
{
	uint64_t v;

	memcpy(&v, (fl_counter_locs[c].rare ? (const char *)d->r : (const char *)d) +
			   fl_counter_locs[c].offset, sizeof(v));
	return v;
}

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

#define WIN_SIZE 256u /* PSNs remembered per half: original frames, RTT */
#define WIN_MIN 16u   /* a window doubles always up to this, then while a
		       * recent PSN would be evicted, up to WIN_SIZE */
#define MAX_GAPS 8    /* open PSN gaps remembered per half */
#define MAX_READS 128 /* outstanding READ requests remembered per half (rxe's
			* max_rd_atomic; allocated with the first READ) */
#define MAX_ASKS 8     /* READs and atomics an episode's resends remember */
#define QPT_MAX_EPISODES 1024 /* episodes kept per direction (all counted) */
#define HALF_CACHE 4096u
#define SEEN_RING 32  /* recent packets per half, for capture copies */
#define TAP_RING 256  /* ... with several capture points: every sighting */
/* A request PSN this far from the next one expected, after this long a
 * silence, starts a new sequence (a QPN reused without a CM exchange seen). */
#define NEW_SEQ_DISTANCE 65536
#define NEW_SEQ_IDLE_NS 100000000 /* 100 ms */

struct half_key {
	uint8_t src[16], dst[16];
	uint32_t qpn;
	uint32_t sqpn; /* UD: source QP from the DETH; else ~0 */
};

/* Field order in these structs: widest first, so that none has holes
 * (a million halves are tracked at once in a big capture). */
struct slot {
	uint64_t frame;
	int64_t ns;
	uint32_t fp;
	uint32_t psn : 24; /* a PSN has 24 bits (BTH) */
	bool used : 1, ackreq : 1, resent : 1, acked : 1;
	uint8_t bound : 2; /* SLOT_FIRST / SLOT_LAST: a message starts / ends here */
	bool asks : 1; /* a READ or atomic request: answered with data */
};
G_STATIC_ASSERT(sizeof(struct slot) == 24); /* a window of 256: 6 KiB */

/* A half's two PSN -> slot windows (struct half.win[]): the requests it
 * carried and the responses.  Each is direct-mapped; it starts with one
 * slot and doubles while a recent PSN would be evicted (always while below
 * WIN_MIN slots: the same slots as a table of WIN_MIN from the start, see
 * fl_slot_of). */
enum { WIN_REQ, WIN_RESP };

struct read_req {
	uint64_t va;
	uint64_t frame;
	int64_t ns;
	uint32_t psn, len, span; /* span 0: not yet known */
	uint32_t rkey;
	uint32_t next_resp; /* the response PSN expected next (PSN gaps) */
	bool answered;	 /* its first response seen (latency taken) */
	bool resp_seen;	 /* any response of its range seen */
	bool next_valid;
};

/* A packet a half carried, to know a capture copy of it: 24 bytes (a ring
 * of them per half). */
struct seen {
	int64_t ns;
	uint64_t frame;
	uint32_t fp;
	uint32_t psn : 24; /* a PSN has 24 bits (BTH) */
	uint32_t tap : 8;  /* the capture point (qpt_flow.tap, as uint8_t) */
};
G_STATIC_ASSERT(sizeof(struct seen) == 24);

/* A sighting by one of several capture points (struct half_rare.taps). */
struct tap_seen {
	struct seen s;
	bool paired; /* with a sighting of it by another capture point */
};

/* A message being reassembled from FIRST/MIDDLE/LAST packets. */
struct msg {
	uint64_t first_frame;
	uint32_t first_psn; /* of the packet that opened it */
	uint32_t len, pkts;
	bool open;
	bool from_first; /* opened by its FIRST (or ONLY) packet */
	uint8_t op;
};

#define SLOT_FIRST 1
#define SLOT_LAST 2
#define MAX_PEND_MSGS 4 /* messages whose start is not yet known, per half */

/* A message whose LAST was seen but not its FIRST (lost before the capture
 * point): counted once its start is known, from the PSN boundaries the
 * resends show (every packet but the last carries one MTU). */
struct pend_msg {
	uint64_t first_frame;
	uint32_t first_seen, last_psn, last_len;
	bool used;
	uint8_t op;
};

struct gap {
	int64_t ns;
	struct msg msg; /* the message the gap interrupted, completed by the fill */
	uint32_t first, count;
};

/* Of struct half_rare below, what only a gap or a message whose start was
 * lost needs: its own allocation (fl_loss), as a half seen by two capture
 * points or one carrying READs needs a struct half_rare but none of this. */
struct half_loss {
	struct gap gaps[MAX_GAPS];	  /* ngaps of them */
	struct pend_msg pend[MAX_PEND_MSGS]; /* each: used */
};

/* Of struct half_rare below, what only resends, NAKs and RNR NAKs (and a
 * gap filler) need: its own allocation (fl_rec), as a half seen by two
 * capture points needs none of it.  Each field is read only under a flag
 * of struct half that its write set. */
struct half_rec {
	/* the latest resend this half carried (resend_valid), by frame
	 * number, and the latest go-back of its sender (went_back): a (RNR)
	 * NAK of it, a READ re-issue, a lower PSN sent again after higher
	 * ones.  A copy never has one between itself and its original: the
	 * frame order decides, not the timestamps (equal stamps are common
	 * at hardware speed) */
	uint32_t resend_psn, resend_ackreq_psn, resend_min_psn;
	/* (the last resend, the last one that asked for an ACK, the lowest
	 * since the responder's last ACK; resend_min_frame 0: none) */
	uint64_t resend_frame, resend_ackreq_frame, resend_min_frame, goback_frame;
	uint32_t goback_psn; /* where that go-back went back to */
	/* the latest answer below the highest one (ans_hi), a READ's responses
	 * sent again after a go-back; the latest answer seen, a copy too */
	uint64_t ans_low_frame, ans_seen_frame;
	uint32_t ans_low_psn, ans_seen_psn;
	uint64_t goback_prev_frame; /* the go-back before it */
	uint32_t goback_prev_psn;
	/* the go-back-N episode: the PSN after the last one it resent
	 * (in_episode); a resend below it is a new go-back (a nested
	 * episode).  episode_reopen: the episode just closed by an answer
	 * may go on (a resend at episode_next with no trigger of its own
	 * is the same go-back, e.g. the next outstanding READ resent after
	 * a READ re-issue whose responses came) */
	uint32_t episode_next;
	bool episode_reopen;
	/* responses: the last one resent (resp_resending), a restart of the
	 * stream is a resend not after it */
	bool resp_resending;
	uint32_t resp_last;
	/* the latest NAK or RNR NAK of this half (frame 0: none) and its
	 * PSN: a repeat up to that PSN after it is a sending */
	uint64_t nak_mark_frame;
	uint32_t nak_mark_psn;
	/* the longest delay between a capture copy of this half and its
	 * original (0: no copy seen) */
	int64_t copy_delay_max;
	/* a gap filler with no resend trigger (fill_pending) */
	uint32_t fill_psn;
	uint64_t fill_frame;
	int64_t fill_ns;
	/* an RNR retry resending a multi-packet message (rnr_resend) */
	uint32_t rnr_next;
	/* recovery: nak_pending, rnr_pending, in_episode (nak_last: a copy too) */
	uint64_t nak_frame, rnr_frame, nak_last_frame;
	int64_t nak_ns, rnr_ns, nak_last_ns;
	uint32_t nak_psn, rnr_psn, rnr_timer;
	bool nak_covered; /* the go-back under way resent nak_psn since */
	bool nak_below; /* a go-back from below nak_psn began since the NAK */
	bool rnr_covered; /* a go-back resent rnr_psn before the RNR timer */
	uint64_t ack_frame;	/* the last ACK at or beyond acked (in an episode) */
	int64_t ack_ns;		/* its time (its last sighting's) */
	/* the READs and atomics the episode resent (the first MAX_ASKS):
	 * PSNs, frame, and the frame of their last answer since (0: none) */
	struct { uint32_t psn, end; uint64_t frame, ans_frame; } asks[MAX_ASKS];
	unsigned nasks;
	/* the episode's first resend and the longest gap between two of
	 * its resends since (its pace, in_episode); of any episode (0: none) */
	int64_t episode_first_ns, episode_gap_max, gap_any;
	uint32_t episode_top; /* highest PSN sent before the episode */
	bool episode_resent_top; /* ... or, when all that was answered before it,
				  * the highest PSN it resends */
	struct qpt_episode cur;
	/* an RNR retry that may be a READ's go-back (rnr_doubt): its frame,
	 * time, PSN, RNR NAK, the READ, its first response not seen, the top
	 * PSN before it, its resends, the first new PSN after (goback.c) */
	struct { uint64_t frame, nak_frame, read_frame, end_frame;
		 int64_t ns, nak_ns, end_ns; uint32_t psn, miss, top, resent; } doubt;
};

/* What a half needs only once something out of the ordinary happened
 * (a gap, a NAK, a resend, a message whose start was lost, a READ, several
 * capture points): allocated then (fl_rare), freed with the half.  Each
 * field is read only under a flag of struct half that its write set. */
struct half_rare {
	struct half_loss *l; /* NULL until needed: fl_loss() */
	struct read_req *reads; /* MAX_READS of them, or NULL before any READ */
	/* with several capture points: their sightings, a ring that grows
	 * as the seen ring does (taps_size entries, up to TAP_RING) */
	struct tap_seen *taps;
	unsigned taps_pos, taps_size;
	/* with the MTU unknown: the largest packet size that READ requests'
	 * spacing allows (one READ after another takes len / MTU PSNs; a
	 * READ lost in between makes a step longer, never shorter) */
	uint32_t read_mtu_guess;
	struct half_rec *rc; /* NULL until needed: fl_rec() */
};

struct half {
	struct half_key key; /* first: the halves table is a set of halves */
	/* the last fl_twin_of() answer (live: a sweep clears it, see
	 * qpt_flow_cold.c; during a sweep, a freezing half's cold half) */
	struct half *twin;
	struct qpt_conv *conv;
	struct half_rare *x; /* NULL until needed */
	/* PSN windows (fl_slot_of): requests carried, responses carried;
	 * their sizes in win_size[] */
	struct slot *win[2];

	/* requests carried */
	struct msg msg;
	/* recent packets (requests and responses), for capture copies: grows
	 * up to SEEN_RING, packet k of the half at index k % SEEN_RING */
	struct seen *seen;
	/* last request, for silences */
	uint64_t last_frame;
	int64_t last_ns;
	uint64_t ans_frame; /* the frame of that answer */
	uint32_t expected; /* next new PSN */
	uint32_t acked;	   /* highest PSN acknowledged by the twin */
	/* the PSN of the last packet of the newest message completed: a
	 * message whose FIRST the capture missed starts after it */
	uint32_t msg_end_psn;
	/* the highest PSN of this half's requests the twin answered (ACK, NAK,
	 * response) and when */
	uint32_t ans_hi;

	/* responses carried */
	uint32_t resp_max; /* highest READ response / atomic ACK PSN sent */
	uint32_t ack_psn, ack_msn;

	uint16_t win_size[2]; /* slots in win[] (up to WIN_SIZE), 0: none */
	uint8_t seen_size, seen_pos;
	uint8_t ngaps, nreads;
	uint8_t family;
	uint8_t service; /* opcode & 0xe0 of its first request/response */
	int8_t dir;
	uint8_t ack_synd;
	/* the IPv4 ID of its last packet, and whether two of its packets had
	 * different ones (ipid_varies): then the ID tells sendings apart, and
	 * a packet byte for byte as one just before (the ICRC covers the ID)
	 * is the same sending, whatever came between */
	uint16_t last_ipid;
	/* flags: one bit each (a million halves) */
	bool req_started : 1, any_acked : 1, msg_end_valid : 1, last_valid : 1;
	bool ans_valid : 1, resend_valid : 1, went_back : 1, ipid_varies : 1;
	/* a gap filler with no resend trigger: out of order, unless the next
	 * request shows it began a go-back-N (fl_fill_resolve) */
	bool fill_pending : 1;
	bool rnr_resend : 1; /* an RNR retry resending a multi-packet message */
	bool rnr_doubt : 1;  /* that retry may be a READ's go-back (rc->doubt) */
	bool nak_pending : 1, rnr_pending : 1, in_episode : 1;
	bool resp_started : 1, ack_valid : 1;
	/* qpt_flow_cold.c: a frame or lookup had it since the last sweep;
	 * the sweep is making it cold */
	bool touched : 1, freezing : 1;
	/* seen_hi_ok: every sighting in seen[] has a PSN at or before
	 * seen_hi (within 2^23, serial order), so a packet past seen_hi
	 * matches none and fl_capture_copy skips the scan.  Cleared (a cold
	 * half comes back without it) until fl_seen_bound() finds the ring
	 * within SEEN_SPAN again. */
	uint32_t seen_hi : 24;
	bool seen_hi_ok : 1;
};
G_STATIC_ASSERT(WIN_SIZE <= UINT16_MAX);
G_STATIC_ASSERT(sizeof(struct half) == 184); /* with malloc's 8: 192 */

/* A half that was idle, kept compact (qpt_flow_cold.c): where the half
 * was, as a pointer with its low bit set.  Its key names its address pair
 * (whose key is the half key's src and dst) instead of repeating the 32
 * bytes: fl_key_of() puts it together. */
struct addr_halves;
struct cold_half {
	/* the key's src, dst: a struct addr_halves * (fl_cold_addr), as
	 * bytes: the struct needs only 4-byte alignment (SLAB_UNIT) */
	uint8_t addr[sizeof(void *)];
	uint32_t qpn, sqpn; /* the rest of the key */
	int32_t conv; /* its conversation's id, -1: none */
	int8_t dir;
	bool thawed; /* a forwarder until the next sweep: fl->thawed has its half */
	uint16_t len;
	uint8_t buf[]; /* the rest, varints (qpt_flow_cold.c) */
};
G_STATIC_ASSERT(sizeof(struct cold_half) == 24 && G_ALIGNOF(struct cold_half) <= 4);

static inline struct addr_halves *fl_cold_addr(const struct cold_half *c)
{
	struct addr_halves *a;

	memcpy(&a, c->addr, sizeof(a));
	return a;
}

static inline bool fl_is_cold(const struct half *p)
{
	return (uintptr_t)p & 1;
}

static inline struct cold_half *fl_cold_of(const void *p)
{
	return (struct cold_half *)((uintptr_t)p & ~(uintptr_t)1);
}


struct cold_slab;
void *fl_slab_alloc(struct cold_slab *s, size_t n);
void fl_slab_free(struct cold_slab *s, void *p, size_t n);
void fl_slab_clear(struct cold_slab *s); /* every block (not the large records) */
/* A cold half's or a cold conversation's memory given back. */
void fl_cold_free(struct qpt_flow *fl, struct cold_half *c);
void fl_cold_conv_free(struct qpt_flow *fl, uint8_t *blob);
/* part's cold conversation id encoded again for fl (its times and
 * evidences are fl's), as fl->convs holds it (tagged); part's freed. */
gpointer fl_conv_recode(struct qpt_flow *fl, struct qpt_flow *part, int32_t id);

struct half *fl_thaw(struct qpt_flow *fl, struct half *p);
/* The live half of a pointer from the halves table or an address pair's
 * lists without thawing: itself, a forwarder's half, NULL while cold. */
struct half *fl_unforward(struct qpt_flow *fl, struct half *p);

/* The live half of a pointer from the halves table or an address pair's
 * lists (NULL: NULL), thawed if cold; marked as used. */
static inline struct half *fl_live(struct qpt_flow *fl, struct half *p)
{
	if (!p)
		return NULL;
	if (fl_is_cold(p))
		return fl_thaw(fl, p);
	p->touched = true;
	return p;
}

struct half_view;
/* The same to read only: a cold half's scalars decoded into *v (not its
 * windows or ring), its conversation's too if cold; nothing thawed,
 * nothing marked. */
const struct half *fl_peek(struct qpt_flow *fl, struct half *p, struct half_view *v);
QPT_COLD void fl_cold_sweep(struct qpt_flow *fl);
/* h (no rare state: h->x NULL) as a cold half, the caller's (fl_cold_free);
 * a: its address pair (the one of key src, dst). */
struct cold_half *fl_cold_encode(struct qpt_flow *fl, const struct half *h,
				 struct addr_halves *a);
/* c into h: every field but twin, x, touched and freezing (h all zero
 * before), and h->win[], h->seen allocated, unless scalars_only (a view:
 * the scalars alone). */
void fl_cold_decode(struct qpt_flow *fl, const struct cold_half *c, struct half *h,
		    bool scalars_only);

static inline struct half_rare *fl_rare(struct half *h)
{
	if (!h->x)
		h->x = g_new0(struct half_rare, 1);
	return h->x;
}

/* h's recovery state (allocated on the first use: all zero until then, as
 * it was inside struct half_rare). */
static inline struct half_rec *fl_rec(struct half *h)
{
	if (!fl_rare(h)->rc)
		h->x->rc = g_new0(struct half_rec, 1);
	return h->x->rc;
}

static inline struct half_loss *fl_loss(struct half *h)
{
	if (!fl_rare(h)->l)
		h->x->l = g_new0(struct half_loss, 1);
	return h->x->l;
}

/* A conversation as the engine allocates it: the first direction with it
 * (a conversation is made for a packet of that direction), the other on
 * its first write (fl_dirw). */
struct conv_block {
	struct qpt_conv c;
	struct qpt_dir d0;
};

/* A cold conversation read without thawing it (fl_conv_peek). */
struct conv_view {
	struct conv_block b;
	struct qpt_dir d1;
};
/* A cold half read without thawing it, and its conversation (fl_peek). */
struct half_view {
	struct half h;
	struct conv_view c;
};

/* Idle conversations kept compact (qpt_flow_cold.c): fl->convs holds a
 * cold one as its encoding with the pointer's low bit set, made by the
 * sweep once no live half has it; thawed by fl_conv_live(). */
#define FL_LAT_NBINS (QPT_LAT_BINS_PER_DECADE * QPT_LAT_DECADES)
extern const struct qpt_cm_info fl_no_cm; /* a conversation's cm without one */

static inline bool fl_conv_is_cold(const void *p)
{
	return (uintptr_t)p & 1;
}

static inline uint8_t *fl_cold_conv_of(const void *p)
{
	return (uint8_t *)((uintptr_t)p & ~(uintptr_t)1);
}

struct qpt_conv *fl_conv_thaw(struct qpt_flow *fl, int32_t id);
/* Conversation id (an index into fl->convs), live: thawed if cold. */
struct qpt_conv *fl_conv_live(struct qpt_flow *fl, int32_t id);
/* Conversation id to read only (a cold one decoded into *v, without its
 * per-operation counts and histogram bins). */
const struct qpt_conv *fl_conv_peek(struct qpt_flow *fl, int32_t id, struct conv_view *v);
/* c (conv_plain) encoded: the caller's (fl_cold_conv_free). */
uint8_t *fl_conv_encode(struct qpt_flow *fl, const struct qpt_conv *c);
/* blob into b (all zero before) as conversation id; its second direction,
 * if any, into *d1 (b->c.dir[1] = d1); scalars_only: without allocating
 * the per-operation counts and histograms (a view). */
void fl_conv_decode(struct qpt_flow *fl, const uint8_t *blob, int32_t id, struct conv_block *b,
		    struct qpt_dir *d1, bool scalars_only);
/* What a decoded conversation (fl_conv_decode, not scalars_only) has
 * allocated, freed. */
void fl_conv_view_clear(struct conv_view *v);
/* a conversation of fl->convs (a cold one's memory: the caller's,
 * fl_cold_conv_free) */
void fl_conv_free(struct qpt_conv *c);
/* What a direction has allocated (its counts, histograms, rare counters,
 * ECN state), not the direction itself. */
void fl_dir_free_parts(struct qpt_dir *x);

/* Direction d of c allocated (fl_dirw's first call; out of line) */
QPT_COLD void fl_dir_alloc(struct qpt_conv *c, int d);
/* Direction d of c for writing (allocated on the first). */
static inline struct qpt_dir *fl_dirw(struct qpt_conv *c, int d)
{
	if (c->dir[d] == &qpt_dir_none[d])
		fl_dir_alloc(c, d);
	return (struct qpt_dir *)(uintptr_t)c->dir[d];
}

/* h's direction of its conversation for writing, NULL before it has one
 * (inline: several calls a packet) */
static inline struct qpt_dir *fl_dir_of(struct half *h)
{
	return h->conv ? fl_dirw(h->conv, h->dir) : NULL;
}

/* A latency histogram for writing (allocated with the first sample: *l
 * is qpt_lat_none until then). */
static inline struct qpt_lat *fl_lat_w(const struct qpt_lat **l)
{
	if (*l == &qpt_lat_none)
		*l = g_new0(struct qpt_lat, 1);
	return (struct qpt_lat *)(uintptr_t)*l;
}

/* The direction's ACK RTT for writing. */
static inline struct qpt_lat *fl_rtt(struct qpt_dir *d)
{
	return fl_lat_w(&d->ack_rtt);
}

/* d's rare counters allocated (fl_dr's first call; out of line) */
QPT_COLD void fl_dr_alloc(struct qpt_dir *d);
/* The direction's rare counters for writing (allocated on the first). */
static inline struct qpt_dir_rare *fl_dr(struct qpt_dir *d)
{
	if (d->r == &qpt_dir_rare_none)
		fl_dr_alloc(d);
	return (struct qpt_dir_rare *)(uintptr_t)d->r;
}

/* A histogram's memory, unless it is the shared empty one. */
static inline void fl_lat_free(const struct qpt_lat *l)
{
	if (l != &qpt_lat_none) {
		g_free(l->bins);
		g_free((gpointer)(uintptr_t)l);
	}
}

/* The halves from one address to another (src,dst), for pairing by
 * traffic: every one in order of creation, and the two lists the pairing
 * lookups scan, in the same order: all but those found unable ever to be
 * an answer again (a half paired, or that sent requests, drops out as the
 * scans meet it), so a lookup among thousands of QPs between two hosts
 * meets the few unpaired ones, not all.
 *
 * Compact, as there is one per address pair (tens of thousands in a big
 * capture, most with one or a few halves): up to ADDR_INLINE halves are
 * kept in the struct itself, the two lookup lists then being bit masks
 * over them (both lists are in order of creation, so a subset of the
 * halves says all); past that, the halves go to GPtrArrays.  glib has no
 * array with storage inside its owner (a GPtrArray is a header and a
 * pointer array, two allocations, even for one element), hence the
 * inline part by hand. */
#define ADDR_INLINE 4
#define ADDR_SPILLED 0xff /* n: the halves are in u.v */
struct addr_halves {
	uint8_t key[32]; /* src, dst: first, the by_addr set's key */
	uint8_t n;	 /* halves in u.in, or ADDR_SPILLED */
	uint8_t req;	 /* while inline: bit i, u.in[i] may be a requester */
	uint8_t resp;	 /* the same for a responder */
	bool stale;	 /* a fold moved halves: req and resp are made from all */
	bool dirty;	 /* a half of it froze or thawed: the sweep's to visit */
	bool ipid_varies; /* a half of it showed IPv4 IDs that change */
	union {
		struct half *in[ADDR_INLINE];
		struct {
			GPtrArray *all;
			/* may be an unpaired requester (fl_find_requester),
			 * responder (fl_join_responder); NULL: the same as all
			 * (none dropped, no UD half, which is neither) */
			GPtrArray *req, *resp;
		} v;
	} u;
};

/* Cold records' memory (qpt_flow_slab.c): blocks carved in steps of
 * SLAB_UNIT bytes, without malloc's header and rounding on each record (a
 * million of them: about 14 bytes each); a freed record goes to a free
 * list of its size, for the next record of that size.  Records larger
 * than SLAB_CLASSES units are malloc's. */
#define SLAB_UNIT 4u	  /* (a cold half's alignment) */
#define SLAB_CLASSES 128u /* up to 512 bytes */
#define SLAB_BLOCK (256u * 1024u)
struct cold_slab {
	GPtrArray *blocks;
	uint8_t *cur; /* the rest of the newest block */
	size_t left;
	void *free[SLAB_CLASSES + 1]; /* by size in units: a list through each
				       * record's first 8 bytes */
};

/* A cold half's key, put together in *k. */
static inline const struct half_key *fl_cold_key(const struct cold_half *c, struct half_key *k)
{
	G_STATIC_ASSERT(offsetof(struct half_key, dst) == 16);
	memcpy(k->src, fl_cold_addr(c)->key, 32);
	k->qpn = c->qpn;
	k->sqpn = c->sqpn;
	return k;
}

/* The key of a half or of a cold half (a pointer from the halves table or
 * an address pair's lists; or a bare struct half_key to look up): a live
 * one's own, a cold one's put together in *tmp. */
static inline const struct half_key *fl_key_of(const void *p, struct half_key *tmp)
{
	if (!fl_is_cold(p))
		return p; /* (struct half: the key first) */
	return fl_cold_key(fl_cold_of(p), tmp);
}

struct qpt_flow {
	struct qpt_flow_opts o;
	GHashTable *halves;  /* half_key -> struct half */
	GHashTable *by_addr; /* a set of struct addr_halves, by "src,dst" */
	/* conversations a fold went into (NULL before the first): as a fold
	 * gives all the halves it moves one direction, a later pairing in one
	 * can unpair a half, so it makes the pairing lookups' lists stale */
	GHashTable *folded;
	GHashTable *cm;	     /* REQ local comm ID -> struct cm_rec */
	GHashTable *cm_rep;  /* REP local comm ID -> the same struct cm_rec */
	GPtrArray *convs;
	/* Halves by a hash of the key, two-way (fl_recent_slot) in front of
	 * the table: most frames find theirs here without hashing the 40-byte
	 * key.  A sweep forgets the halves it makes cold, no other. */
	struct half *recent[HALF_CACHE];
	struct qpt_totals t;
	uint64_t nhalves;
	bool have_ns;
	int64_t last_ns; /* the previous frame's time */
	unsigned tap, ntaps; /* the current frame's capture point; how many */
	bool conv_end_set; /* qpt_flow_set_conv_end() */
	int64_t conv_end_ns;
	struct qpt_pfc *pfc; /* PFC/PAUSE per priority (qpt_pfc.c) */
	bool absorbed; /* has conversations of other engines, ended there
			* (qpt_flow_absorb): the ECN finish skips them */
	/* idle halves kept compact (qpt_flow_cold.c): frames until the next
	 * sweep; cold halves thawed since the last one (cold -> live half) */
	uint32_t to_sweep;
	GPtrArray *live; /* the halves not cold (thawed ones too), unordered */
	GHashTable *thawed;
	GByteArray *cold_buf; /* the sweep's encoding buffer */
	int64_t cold_base_ns; /* times are encoded relative to this */
	uint64_t sweeps; /* (their marks on live conversations) */
	GPtrArray *evidence; /* the pairing evidences cold conversations name */
	/* cold halves' and cold conversations' memory (the halves' goes
	 * with them: qpt_flow_forget_halves()) */
	struct cold_slab half_slab, conv_slab;
	bool halves_gone; /* qpt_flow_forget_halves() */
	bool ended;	  /* qpt_flow_end() */
	struct fl_tunnels *tun; /* NULL until a frame came in a tunnel */
};

/* qpt_flow_tunnel.c's: the frame's tunnel (or none) noted for its
 * conversation; a fold's and an absorbed engine's carried over. */
void fl_tunnel_note_slow(struct qpt_flow *fl, int32_t conv, const struct qpt_pkt *p);
static inline void fl_tunnel_note(struct qpt_flow *fl, int32_t conv, const struct qpt_pkt *p)
{ /* (a call once a frame came in a tunnel: before, every conversation is direct) */
	if (conv >= 0 && (fl->tun || (p->flags & QPT_HAS_TUNNEL)))
		fl_tunnel_note_slow(fl, conv, p);
}
void fl_tunnel_fold(struct qpt_flow *fl, int32_t into, int32_t from);
void fl_tunnel_absorb(struct qpt_flow *fl, struct qpt_flow *part, const int32_t *ids);
void fl_tunnel_free(struct qpt_flow *fl);

/* A CM connection by its REQ: att.from is the REQ's sender, att.to its
 * receiver (with the REP's QPN once one came). */
struct cm_rec {
	struct qpt_cm_attempt att;
	struct qpt_conv *conv;
};

struct qpt_opstat *fl_dir_op(struct qpt_dir *d, unsigned op);
void fl_lat_add(struct qpt_lat *l, double us);
void fl_lat_merge(struct qpt_lat *d, const struct qpt_lat *s);
uint8_t fl_pkt_addrs(const struct qpt_pkt *p, uint8_t src[16], uint8_t dst[16]);
/* qpt_flow_emit.c and this, the bottom of the pipeline. */
G_STATIC_ASSERT(offsetof(struct qpt_verdict, original_frame) ==
		offsetof(struct qpt_verdict, ev) + sizeof(((struct qpt_verdict *)0)->ev));
/* v as frame's verdict, no event yet: the header and the links cleared,
 * not the events past nevents, which are never read (fl_emit writes each
 * one whole; inline: every packet) */
static inline void fl_verdict_reset(struct qpt_verdict *v, uint64_t frame)
{
	memset(v, 0, offsetof(struct qpt_verdict, ev));
	memset(&v->original_frame, 0, sizeof(*v) - offsetof(struct qpt_verdict, original_frame));
	v->frame = frame;
	v->conv = -1;
	v->dir = -1;
	v->ack_rtt_ns = -1;
}
/* v as the verdict of no frame (the end's: its events are of earlier ones) */
void fl_end_verdict(struct qpt_verdict *v);
/* Adds event e (its frame, time_ns, kind, psn, original_frame, count,
 * code, duration_ns, detail; conv and dir are h's, -1 without h) to v, and
 * its kind to v's flags when it is v's frame's; NULL when v is full. */
QPT_COLD struct qpt_event *fl_emit(struct qpt_verdict *v, const struct half *h, const struct qpt_event *e);
QPT_COLD struct qpt_conv *fl_conv_new(struct qpt_flow *fl, struct half *h);
struct half *fl_half_get(struct qpt_flow *fl, const struct qpt_pkt *p,
			     bool create);
/* Where fl->recent may hold the half of key k: there or at its pair
 * (that index ^ 1). */
static inline unsigned fl_recent_slot(const struct half_key *k)
{
	uint32_t a, b;

	memcpy(&a, k->src + 12, 4); /* IPv4 addresses and the ends of IPv6/GIDs */
	memcpy(&b, k->dst + 12, 4);
	return ((k->qpn ^ k->sqpn ^ a ^ (b << 7)) * 0x9e3779b1u) >> 20 & (HALF_CACHE - 1);
}
/* The twin half (NULL: none known); fl_twin_of() answers from h->twin
 * while it holds (its QPN the one h's conversation names), else
 * fl_twin_find() looks it up (qpt_flow_pair.c) */
struct half *fl_twin_find(struct qpt_flow *fl, struct half *h);
static inline struct half *fl_twin_of(struct qpt_flow *fl, struct half *h)
{
	if (h->twin && h->conv && h->key.sqpn == ~0u && h->conv->ep[h->dir].qpn_known &&
	    h->twin->key.qpn == h->conv->ep[h->dir].qpn) {
		h->twin->touched = true; /* (as fl_live: the sweep keeps it) */
		return h->twin;
	}
	return fl_twin_find(fl, h);
}
struct qpt_conv *fl_pair(struct qpt_flow *fl, struct half *req,
			     struct half *resp, enum qpt_paired_by by,
			     const char *evidence);
struct half *fl_find_requester(struct qpt_flow *fl, struct half *h,
				   uint32_t psn);
void fl_episode_close(struct half *h, uint64_t frame, int64_t ns);
void fl_set_transport_slow(struct half *h, uint8_t opcode);
/* The MTU from a First or Middle request's payload (IBA's 256 .. 4096);
 * inline, as fl_set_transport()'s test that nearly every packet fails. */
static inline void fl_learn_mtu(struct half *h, const struct qpt_pkt *p)
{
	unsigned f = qpt_opcodes[p->bth.opcode].flags;
	unsigned len = p->payload_len;

	if ((f & (QPT_O_FIRST | QPT_O_MIDDLE)) && !(f & QPT_O_LAST) && h->conv && len >= 256 &&
	    len <= 4096 && !(len & (len - 1)))
		h->conv->mtu = len;
}
static inline void fl_set_transport(struct half *h, uint8_t opcode)
{
	if (h->service == 0xff || (h->conv && !h->conv->transport[0]))
		fl_set_transport_slow(h, opcode);
}
void fl_request(struct qpt_flow *fl, struct half *h, const struct qpt_pkt *p,
		    uint64_t frame, int64_t ns, struct qpt_verdict *v);
void fl_response(struct qpt_flow *fl, struct half *h, const struct qpt_pkt *p,
		     uint64_t frame, int64_t ns, struct qpt_verdict *v);
/* qpt_flow_seq.c's, for the responses (qpt_flow_resp.c) */
struct read_req *fl_read_find(struct half *h, uint32_t psn);
void fl_gap_before_start(struct half *t, uint32_t psn, uint64_t frame, int64_t ns,
			 struct qpt_verdict *v);
void fl_went_back(struct half *h, uint64_t frame, uint32_t psn);
void fl_half_restart(struct half *h);
void fl_half_free_parts(struct half *h);
/* A half of the halves table, live or cold (the table frees none). */
void fl_half_free(struct qpt_flow *fl, struct half *h);
void fl_pend_flush(struct half *h);
void fl_pend_resolve(struct half *h, struct qpt_verdict *v);
struct slot *fl_slot_of(struct half *h, int w, uint32_t psn, bool create);
uint8_t fl_slot_bound(const struct qpt_opcode_info *oi);
void fl_message_add(struct half *h, struct msg *m, struct qpt_dir *d,
		    const struct qpt_pkt *p, uint64_t frame, struct qpt_verdict *v);
void fl_fill_resolve(struct qpt_flow *fl, struct half *h, const struct qpt_pkt *p,
		     struct qpt_verdict *v);
bool fl_capture_copy(struct qpt_flow *fl, struct half *h, const struct qpt_pkt *p,
		     uint64_t frame, int64_t ns, struct qpt_verdict *v, bool request);
struct half *fl_half_for(struct qpt_flow *fl, uint8_t fam, const uint8_t *src,
			     const uint8_t *dst, uint32_t qpn);
void fl_cm_message(struct qpt_flow *fl, const struct qpt_pkt *p, uint64_t frame,
		       int64_t ns, struct qpt_verdict *v);
bool fl_join_responder(struct qpt_flow *fl, struct half *h, uint32_t psn);
void fl_ud_pair_or_new(struct qpt_flow *fl, struct half *h);

#include "qpt_flow_qos.h" /* qpt_flow_qos.c's, for the other flow files */
#include "qpt_flow_goback.h" /* qpt_flow_goback.c's, for qpt_flow_seq.c */

#endif
