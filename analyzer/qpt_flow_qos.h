/* qpt_flow_qos.h - qpt_flow_qos.c's state and functions for the other flow
 * files (included by qpt_flow_int.h; not part of the engine's interface)
 */
#ifndef QPT_FLOW_QOS_H
#define QPT_FLOW_QOS_H

/* A direction's QoS record (struct qpt_dir.qos, NULL until needed: read
 * qpt_dir_qos()) and the ECN-CE marks it waits to see answered. */
struct qpt_ecn_mark {
	int64_t ns;
	uint64_t frame;
	uint32_t psn;
	bool covered; /* a CNP preceded it within the window */
};
struct qpt_dir_qos {
	GArray *counts; /* struct qpt_qos_count, in the order first seen */
	/* the entry of counts each class data or ACK x PCP or DSCP (cls * 2
	 * + dscp) counted last: the next packet's, most likely */
	guint last[4];
	union { /* (read as the read model's struct qpt_qos_stats.res) */
		struct {
			QPT_QOS_RESULTS
		};
		struct qpt_qos_results res;
	};
	/* (the MTU evidence is in struct qpt_qos_inline; the results above
	 * are read as struct qpt_qos_stats, qpt_flow_read.c) */
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

/* qpt_flow_qos.c's: a data packet in a direction's CNP rate window history */
struct hist_ent {
	int64_t ns;
	uint64_t sent; /* bytes sent up to and with this packet */
};

/* qpt_flow_qos.c's: a direction's rate window history once it is not inline
 * (qpt_qos_inline.nhist == QPT_QOS_HIST_HEAP): a ring of cap entries (a
 * power of two; it doubles when full), the n from ents[head] on in the
 * window, oldest first (no call a packet: a data packet is one entry
 * written and, once the window is full, one dropped). */
struct qpt_qos_hist {
	struct hist_ent *ents;
	uint32_t head, n, cap;
	uint64_t sent, base; /* bytes sent since the first kept; up to the last
			      * dropped (sent - base: in the window) */
};

/* The i-th entry of the window (0: the oldest), i < hh->n. */
static inline struct hist_ent *fl_hist_at(const struct qpt_qos_hist *hh, uint32_t i)
{
	return &hh->ents[(hh->head + i) & (hh->cap - 1)];
}

/* Room for one more: the ring doubled (rare; inline: the cold file's
 * decoding makes rings too). */
static inline void fl_hist_grow(struct qpt_qos_hist *hh)
{
	uint32_t cap = hh->cap ? 2 * hh->cap : 4;
	struct hist_ent *e = g_new(struct hist_ent, cap);

	for (uint32_t i = 0; i < hh->n; i++)
		e[i] = *fl_hist_at(hh, i);
	g_free(hh->ents);
	hh->ents = e;
	hh->cap = cap;
	hh->head = 0;
}

/* An entry after the newest. */
static inline void fl_hist_push(struct qpt_qos_hist *hh, int64_t ns, uint64_t sent)
{
	if (hh->n == hh->cap)
		fl_hist_grow(hh);
	*fl_hist_at(hh, hh->n) = (struct hist_ent){ ns, sent };
	hh->n++;
}

/* qpt_flow_qos.c: priorities, ECN marks and CNPs (struct qpt_dir_qos) */
void fl_qos_defaults(struct qpt_flow_opts *o);
void fl_qos_packet(struct qpt_flow *fl, struct half *h, const struct qpt_pkt *p,
		   uint64_t frame, int64_t ns, bool ce, struct qpt_verdict *v);
/* the end (qpt_flow_end): every event of an ECN-CE mark whose window
 * ended with the capture, appended to out (struct qpt_event) */
void fl_qos_drain(struct qpt_flow *fl, GArray *out);
void fl_qos_finish(struct qpt_flow *fl);
void fl_qos_merge(struct qpt_dir *d, const struct qpt_dir *s);
void fl_qos_fold(struct qpt_flow *fl, struct qpt_conv *c); /* after a fold into c */
void fl_qos_free(struct qpt_dir *d);

#endif
