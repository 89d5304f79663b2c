/* qpt_flow_cm.c - CM connection tracking: REQ/REP pair two halves by
 * their QPNs, REJ and unanswered REQs are failed attempts */
#include <string.h>

#include "qpt_flow_int.h"

static bool addr_is(const struct qpt_endpoint *e, uint8_t fam, const uint8_t a[16])
{
	return e->family == fam && !memcmp(e->addr, a, 16);
}

/* The connection a CM message belongs to: by a comm ID of it that the
 * connection's REQ or REP gave, and only when the message goes between the
 * connection's two addresses the way that ID says (the REQ sender's own ID
 * comes from the REQ sender): a stranger whose comm ID happens to equal
 * one of ours is not ours. */
static struct cm_rec *cm_find(struct qpt_flow *fl, const struct qpt_cm *cm, uint8_t fam,
			      const uint8_t src[16], const uint8_t dst[16])
{
	const struct {
		GHashTable *t;
		uint32_t id;
		bool by_req_sender;
	} ways[] = {
		{ fl->cm, cm->remote_comm_id, false },	 /* answers the REQ sender */
		{ fl->cm, cm->local_comm_id, true },	 /* the REQ sender again */
		{ fl->cm_rep, cm->local_comm_id, false }, /* the REP sender again */
		{ fl->cm_rep, cm->remote_comm_id, true }, /* answers the REP sender */
	};

	for (size_t i = 0; i < G_N_ELEMENTS(ways); i++) {
		struct cm_rec *r = g_hash_table_lookup(ways[i].t, GUINT_TO_POINTER(ways[i].id));
		const struct qpt_endpoint *s, *d;

		if (!r)
			continue;
		s = ways[i].by_req_sender ? &r->att.from : &r->att.to;
		d = ways[i].by_req_sender ? &r->att.to : &r->att.from;
		if (addr_is(s, fam, src) && addr_is(d, fam, dst))
			return r;
	}
	return NULL;
}

/* h belongs to a conversation that carried packets and that this CM
 * exchange did not set up: the QPN is reused by a new connection. */
static bool conv_is_older(const struct half *h, const struct cm_rec *r)
{
	const struct qpt_conv *c = h->conv;

	return c && (c->dir[0]->packets || c->dir[1]->packets) &&
	       (!c->has_cm || c->cm->req_frame != r->att.info.req_frame);
}

void fl_cm_message(struct qpt_flow *fl, const struct qpt_pkt *p, uint64_t frame,
		       int64_t ns, struct qpt_verdict *v)
{
	const struct qpt_cm *cm = &p->cm;
	struct cm_rec *r;
	uint8_t src[16], dst[16];
	uint8_t fam = fl_pkt_addrs(p, src, dst);

	if (cm->msg == QPT_CM_REQ) {
		/* every REQ is kept (a few hundred bytes each, not the QP
		 * limit's: 70,000 REQs are 70,000 attempts) */
		r = g_hash_table_lookup(fl->cm, GUINT_TO_POINTER(cm->local_comm_id));
		if (r)
			return; /* a resent REQ */
		r = g_new0(struct cm_rec, 1);
		r->att.from.family = r->att.to.family = fam;
		memcpy(r->att.from.addr, src, 16);
		memcpy(r->att.to.addr, dst, 16);
		r->att.from.qpn = cm->local_qpn;
		r->att.from.qpn_known = true;
		r->att.info.req_frame = frame;
		r->att.info.req_ns = ns;
		r->att.info.req_comm_id = cm->local_comm_id;
		r->att.info.service_id = cm->service_id;
		r->att.info.path_mtu = qpt_mtu_bytes(cm->path_mtu);
		r->att.info.psn[0] = cm->starting_psn;
		if (p->flags & QPT_HAS_CMA_IP) {
			r->att.info.has_ip = true;
			r->att.info.ip = p->cma;
		}
		g_hash_table_insert(fl->cm, GUINT_TO_POINTER(cm->local_comm_id), r);
		return;
	}
	if (cm->msg == QPT_CM_SIDR_REQ || cm->msg == QPT_CM_SIDR_REP ||
	    cm->msg == QPT_CM_CLASSPORTINFO)
		return;
	r = cm_find(fl, cm, fam, src, dst);
	if (!r) {
		v->flags |= QPT_V(CM_UNKNOWN);
		fl->t.cm_unknown_comm_id++;
		fl_emit(v, NULL, &(struct qpt_event){ .frame = frame, .time_ns = ns,
				.kind = QPT_VB_CM_UNKNOWN, .code = cm->msg,
				.detail = qpt_cm_msg_name(cm->msg) });
		return;
	}
	switch (cm->msg) {
	case QPT_CM_REP: {
		struct half *ha, *hb;

		if (r->att.info.rep_frame)
			break;
		r->att.info.rep_frame = frame;
		r->att.info.rep_ns = ns;
		r->att.info.rep_comm_id = cm->local_comm_id;
		g_hash_table_insert(fl->cm_rep, GUINT_TO_POINTER(cm->local_comm_id), r);
		r->att.info.psn[1] = cm->starting_psn;
		r->att.to.qpn = cm->local_qpn;
		r->att.to.qpn_known = true;
		ha = fl_half_for(fl, r->att.from.family, r->att.from.addr, r->att.to.addr,
			      r->att.to.qpn);
		hb = fl_half_for(fl, r->att.from.family, r->att.to.addr, r->att.from.addr,
			      r->att.from.qpn);
		if (!ha || !hb)
			break;
		/* A new connection on QPNs used before: a new conversation,
		 * its sequences from the start. */
		if (conv_is_older(ha, r) || conv_is_older(hb, r)) {
			fl_half_restart(ha);
			fl_half_restart(hb);
		}
		r->conv = fl_pair(fl, ha, hb, QPT_PAIR_CM, "CM REQ/REP");
		r->conv->has_cm = true;
		if (r->att.info.path_mtu)
			r->conv->mtu = r->att.info.path_mtu;
		/* endpoint 0 is the REQ sender when the CM created the pair */
		break;
	}
	case QPT_CM_RTU: r->att.info.rtu_frame = frame; r->att.info.rtu_ns = ns; break;
	case QPT_CM_DREQ:
		if (!r->att.info.dreq_frame) {
			r->att.info.dreq_frame = frame;
			r->att.info.dreq_ns = ns;
		}
		break;
	case QPT_CM_DREP:
		if (!r->att.info.drep_frame) {
			r->att.info.drep_frame = frame;
			r->att.info.drep_ns = ns;
		}
		break;
	case QPT_CM_REJ: {
		struct qpt_event *ev;

		fl->t.cm_rejects++;
		ev = fl_emit(v, NULL, &(struct qpt_event){ .frame = frame, .time_ns = ns,
				.kind = QPT_VB_CM_REJECT, .psn = p->bth.psn,
				.original_frame = r->att.info.req_frame, .code = cm->reason,
				.detail = qpt_cm_rej_reason_text(cm->reason) });

		if (ev && r->conv)
			ev->conv = r->conv->id;
		r->att.info.rej_frame = frame;
		r->att.info.rej_reason = cm->reason;
		break;
	}
	case QPT_CM_MRA: r->att.info.mra_frame = frame; break;
	default: break;
	}
	if (r->conv) {
		r->conv->cm = &r->att.info; /* kept until qpt_flow_free() */
		v->conv = r->conv->id;
	}
}

static gint by_req_frame(gconstpointer a, gconstpointer b)
{
	const struct qpt_cm_attempt *x = *(const struct qpt_cm_attempt *const *)a;
	const struct qpt_cm_attempt *y = *(const struct qpt_cm_attempt *const *)b;

	return x->info.req_frame < y->info.req_frame ? -1 :
	       x->info.req_frame > y->info.req_frame;
}

GPtrArray *qpt_flow_cm_attempts(struct qpt_flow *fl)
{
	GPtrArray *out = g_ptr_array_new();
	GHashTableIter it;
	gpointer val;

	g_hash_table_iter_init(&it, fl->cm);
	while (g_hash_table_iter_next(&it, NULL, &val)) {
		struct cm_rec *r = val;

		/* an RTU means a REP came, whether captured or not */
		if (!r->conv && !r->att.info.rep_frame && !r->att.info.rtu_frame)
			g_ptr_array_add(out, &r->att);
	}
	g_ptr_array_sort(out, by_req_frame);
	return out;
}
