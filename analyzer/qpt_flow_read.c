/* qpt_flow_read.c - the read model (qpt_flow.h): the engine's storage of a
 * conversation (qpt_flow_int.h) as the flat struct qpt_conv_stats that
 * front ends read, for live and cold conversations alike; the walk over
 * all of them, one at a time without thawing any. */
#include <string.h>

#include "qpt_flow_int.h"

const struct qpt_dir_rare qpt_dir_rare_none = { .read_lat = &qpt_lat_none,
						.atomic_lat = &qpt_lat_none };
const struct qpt_dir qpt_dir_none[2] = {
	{ .from = 0, .to = 1, .r = &qpt_dir_rare_none, .ack_rtt = &qpt_lat_none },
	{ .from = 1, .to = 0, .r = &qpt_dir_rare_none, .ack_rtt = &qpt_lat_none },
};

const struct fl_counter_loc fl_counter_locs[QPT_C_COUNT] = {
#define FL_C_OFF_dir(f) offsetof(struct qpt_dir, f)
#define FL_C_OFF_rare(f) offsetof(struct qpt_dir_rare, f)
#define FL_C_RARE_dir false
#define FL_C_RARE_rare true
#define FL_C_ROW(f, k, l, col, alw, w) \
	[QPT_C_##f] = { .offset = FL_C_OFF_##w(f), .rare = FL_C_RARE_##w },
	QPT_DIR_COUNTERS(FL_C_ROW)
#undef FL_C_ROW
};

/* ---- the fill ---------------------------------------------------------- */

static void ident_fill(const struct qpt_conv *c, struct qpt_conv_ident *s)
{
	s->id = c->id;
	memcpy(s->transport, c->transport, sizeof(s->transport));
	s->paired_by = c->paired_by;
	s->mtu = c->mtu;
	s->pair_evidence = c->pair_evidence;
	s->cm = c->cm;
	s->ep[0] = c->ep[0];
	s->ep[1] = c->ep[1];
	s->has_cm = c->has_cm;
}

/* A direction's QoS results into s; *full: s holds results of a struct
 * qpt_dir_qos (else they are zero), before and after. */
static void qos_fill(const struct qpt_dir *d, struct qpt_qos_stats *s, bool *full)
{
	const struct qpt_qos_inline *l = &d->qos_in;
	const struct qpt_dir_qos *q = d->qos;

	if (q) {
		s->res = q->res;
		s->counts = q->counts ? (const struct qpt_qos_count *)(const void *)q->counts->data : NULL;
		s->ncounts = q->counts ? q->counts->len : 0;
		*full = true;
	} else {
		if (*full) /* (a healthy direction after one with them: zero) */
			memset(&s->res, 0, sizeof(s->res));
		*full = false;
		s->counts = NULL;
		s->ncounts = 0;
		while (s->ncounts < G_N_ELEMENTS(s->counts_in) &&
		       fl_qos_count_at(d, s->ncounts, &s->counts_in[s->ncounts]))
			s->ncounts++;
	}
	s->max_payload_frame = l->max_payload_frame;
	s->seg_frame = l->seg_frame;
	s->max_payload = l->max_payload;
	s->seg_payload = l->seg_payload;
	s->seg_varies = l->seg_varies;
}

/* Direction d into s, which holds an earlier fill (or all zero, *qos_full
 * false): what a healthy direction does not have is written only when s
 * holds some of it (a walk over a million conversations fills mostly
 * healthy ones, in the same space). */
static void dir_fill(const struct qpt_dir *d, struct qpt_dir_stats *s, bool *qos_full)
{
	const struct qpt_dir_rare *r = d->r;

	s->from = d->from;
	s->to = d->to;
	s->psn_seen = d->psn_seen;
	s->ops_seen = d->op_mask;
	s->first_psn = d->first_psn;
	s->last_psn = d->last_psn;
	s->psn_span = d->psn_span;
	s->packets = d->packets;
	s->payload_bytes = d->payload_bytes;
	s->bytes = d->bytes;
	s->req_packets = d->req_packets;
	s->resp_packets = d->resp_packets;
	s->acks = d->acks;
	s->coalesced_acks = d->coalesced_acks;
	s->bad_icrc = d->bad_icrc;
	s->first_ns = d->first_ns;
	s->last_ns = d->last_ns;
	s->ack_rtt = d->ack_rtt;
	s->read_lat = r->read_lat;
	s->atomic_lat = r->atomic_lat;
	if (r != &qpt_dir_rare_none) {
		s->eventful = true;
		s->rare = r->c;
		s->gbn_episodes = r->gbn_episodes;
		s->episodes = r->episodes;
	} else if (s->eventful) { /* zero what the one before wrote */
		s->eventful = false;
		memset(&s->rare, 0, sizeof(s->rare));
		s->gbn_episodes = 0;
		s->episodes = NULL;
	}
	s->qos_seen = d->qos || d->qos_in.seen;
	qos_fill(d, &s->qos, qos_full);
	for (unsigned op = 0, i = 0; op < QPT_OP_COUNT; op++)
		if (d->op_mask & 1u << op)
			s->ops[op] = d->opv[i++];
}

/* c into s (of no earlier fill). */
static void conv_fill(const struct qpt_conv *c, struct qpt_conv_stats *s)
{
	bool qos_full = false;

	memset(s, 0, sizeof(*s));
	ident_fill(c, &s->ident);
	dir_fill(c->dir[0], &s->dir[0], &qos_full);
	qos_full = false;
	dir_fill(c->dir[1], &s->dir[1], &qos_full);
}

/* ---- the read model's accessors ---------------------------------------- */

const struct qpt_opstat *qpt_dir_op(const struct qpt_dir_stats *d, unsigned op)
{
	static const struct qpt_opstat none;

	if (op >= QPT_OP_COUNT || !(d->ops_seen & 1u << op))
		return &none;
	return &d->ops[op];
}

const struct qpt_qos_count *qpt_qos_count_at(const struct qpt_dir_stats *d, unsigned i)
{
	if (i >= d->qos.ncounts)
		return NULL;
	return d->qos.counts ? &d->qos.counts[i] : &d->qos.counts_in[i];
}

const struct qpt_qos_stats *qpt_dir_qos(const struct qpt_dir_stats *d)
{
	return d->qos_seen ? &d->qos : NULL;
}

unsigned qpt_qos_values(const struct qpt_dir_stats *d, unsigned cls, bool dscp, int *top)
{
	unsigned n = 0;
	uint64_t best = 0;
	const struct qpt_qos_count *e;

	for (unsigned i = 0; (e = qpt_qos_count_at(d, i)); i++) {
		if (e->cls != cls || e->dscp != dscp)
			continue;
		n++;
		if (e->packets > best) {
			best = e->packets;
			if (top)
				*top = e->value;
		}
	}
	return n;
}

/* ---- one conversation, or all of them ---------------------------------- */

GPtrArray *qpt_flow_conversations(struct qpt_flow *fl)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(g_free);

	for (guint i = 0; i < fl->convs->len; i++) {
		struct qpt_conv *c = fl_conv_live(fl, (int32_t)i);
		struct qpt_conv_stats *s;

		if (c->merged)
			continue;
		s = g_new(struct qpt_conv_stats, 1);
		conv_fill(c, s);
		g_ptr_array_add(out, s);
	}
	return out;
}

/* The conversation with that id now, live (thawed if cold), or NULL. */
static const struct qpt_conv *conv_now(struct qpt_flow *fl, int32_t id)
{
	id = qpt_flow_conv_id(fl, id);
	if (id < 0 || (guint)id >= fl->convs->len)
		return NULL;
	return fl_conv_live(fl, id);
}

const struct qpt_conv_stats *qpt_flow_conv_stats(struct qpt_flow *fl, int32_t id,
						 struct qpt_conv_stats *out)
{
	const struct qpt_conv *c = conv_now(fl, id);

	if (!c)
		return NULL;
	conv_fill(c, out);
	return out;
}

QPT_HOT const struct qpt_conv_ident *qpt_flow_conv_ident(struct qpt_flow *fl, int32_t id,
							 struct qpt_conv_ident *out)
{
	const struct qpt_conv *c = conv_now(fl, id);

	if (!c)
		return NULL;
	ident_fill(c, out);
	return out;
}

/* ---- reading every conversation without thawing ------------------------ */

/* A walk's space: its decoded cold conversation, whether it holds one
 * (whose counts and histograms are to be freed before the next), and the
 * conversation filled. */
struct walk_view {
	struct conv_view v;
	bool full;
	struct qpt_conv_stats s;
	bool qos_full[2]; /* dir_fill's, of s */
};

static void walk_clear(struct walk_view *wv)
{
	if (!wv || !wv->full)
		return;
	fl_conv_view_clear(&wv->v);
	wv->full = false;
}

void qpt_conv_walk_start(struct qpt_conv_walk *w, struct qpt_flow *fl, qpt_conv_filter keep,
			 void *data)
{
	*w = (struct qpt_conv_walk){ .fl = fl, .keep = keep, .data = data };
}

const struct qpt_conv_stats *qpt_conv_walk_next(struct qpt_conv_walk *w)
{
	struct qpt_flow *fl = w->fl;
	struct walk_view *wv = w->view;

	if (!wv)
		w->view = wv = g_new0(struct walk_view, 1);
	walk_clear(wv);
	while (w->next < fl->convs->len) {
		guint id = w->next++;
		void *p = g_ptr_array_index(fl->convs, id);
		const struct qpt_conv *c = p;

		if (fl_conv_is_cold(p)) { /* (a cold one is never merged) */
			memset(&wv->v, 0, sizeof(wv->v));
			fl_conv_decode(fl, fl_cold_conv_of(p), (int32_t)id, &wv->v.b, &wv->v.d1,
				       false);
			wv->full = true;
			c = &wv->v.b.c;
		} else if (c->merged) {
			continue;
		}
		ident_fill(c, &wv->s.ident);
		if (!w->keep || w->keep(&wv->s.ident, w->data)) {
			dir_fill(c->dir[0], &wv->s.dir[0], &wv->qos_full[0]);
			dir_fill(c->dir[1], &wv->s.dir[1], &wv->qos_full[1]);
			return &wv->s;
		}
		walk_clear(wv);
	}
	return NULL;
}

void qpt_conv_walk_end(struct qpt_conv_walk *w)
{
	walk_clear(w->view);
	g_free(w->view);
	w->view = NULL;
}
