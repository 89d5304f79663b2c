/* qpt_flow_qos.h - qpt_flow_qos.c's state and functions for the other flow
 * files (included by qpt_flow_int.h; not part of the engine's interface)
 */
#ifndef QPT_FLOW_QOS_H
#define QPT_FLOW_QOS_H

/* qpt_flow_qos.c's: a data packet in a direction's CNP rate window history */
struct hist_ent {
	int64_t ns;
	uint64_t sent; /* bytes sent up to and with this packet */
};

/* qpt_flow_qos.c's: a direction's rate window history once it is not inline
 * (qpt_qos_inline.nhist == QPT_QOS_HIST_HEAP). */
struct qpt_qos_hist {
	GArray *ents; /* struct hist_ent: the data packets of the last window */
	guint head;   /* the first in the window */
	uint64_t sent, base; /* bytes sent since the first kept; up to the last
			      * dropped (sent - base: in the window) */
};

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
