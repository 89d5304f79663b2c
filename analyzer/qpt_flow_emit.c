/* qpt_flow_emit.c - a packet's verdict: reset, events added (see qpt_flow_int.h)
 *
 * The bottom of the engine's pipeline (entry, qpt_flow.c -> pairing,
 * qpt_flow_pair.c -> sequence, messages, CM, QoS -> emit): every analysis
 * file adds its events here, and this file calls none of them. */
#include <string.h>

#include "qpt_flow_int.h"

/* A verdict of no frame: its events are all of earlier frames. */
void fl_end_verdict(struct qpt_verdict *v)
{
	memset(v, 0, sizeof(*v));
	v->frame = UINT64_MAX;
	v->conv = -1;
	v->dir = -1;
	v->ack_rtt_ns = -1;
}

struct qpt_event *fl_emit(struct qpt_verdict *v, const struct half *h, const struct qpt_event *e)
{
	struct qpt_event *ev;

	/* the flags are the packet's own: an event of an earlier frame (a
	 * revision of its verdict) is carried, not flagged */
	if (e->frame == v->frame)
		v->flags |= 1u << e->kind;
	if (v->nevents == QPT_MAX_EVENTS)
		return NULL; /* cannot happen: fewer kinds apply to one packet */
	ev = &v->ev[v->nevents++];
	*ev = *e;
	ev->conv = h && h->conv ? h->conv->id : -1;
	ev->dir = h && h->conv ? (int8_t)h->dir : -1;
	return ev;
}
