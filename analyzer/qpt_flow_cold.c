/* qpt_flow_cold.c - idle halves and conversations kept compact
 *
 * A capture at an aggregation point has a million QPs, most of them idle
 * at any moment.  Every cold_every frames (qpt_flow_opts.cold_every) the
 * sweep encodes each half that no frame or lookup touched since the sweep
 * before, and that needs none of the rare state (struct half_rare), into a
 * struct cold_half: its key, its conversation's id and direction, and the
 * rest (every scalar, the used slots of its PSN windows, its seen ring) as
 * varints, relative where that makes them short.  The half itself, its
 * windows and ring are freed.  It is decoded again (thawed) when a frame
 * or a lookup needs it; the encoding is lossless, so the analysis is the
 * same as if it had stayed (tests/cold_sweep.py: a sweep on every frame
 * changes no output of any capture; tests/test_cold.c: every bit back).
 *
 * A cold half is where the half was: in the halves table and in its
 * address pair's lists, as a pointer with its low bit set (fl_is_cold).
 * Both keep their key first, so the table hashes and compares either.  A
 * thawed one stays there until the next sweep as a forwarder to its live
 * half (fl->thawed), which the sweep then puts back in its place.  The
 * recent-halves cache and the twin pointers hold only live halves: the
 * sweep clears the ones of the halves it makes cold.  The sweep visits
 * the live halves (fl->live) and the lists of the address pairs where one
 * froze or thawed, not every half.
 *
 * A conversation whose halves are all cold, and that has nothing but
 * plain counters (no rare counters, ECN state, CM exchange; not a fold's
 * target), is made cold too: fl->convs holds its encoding (low bit set),
 * which the conversation's first half to thaw, or a reader
 * (qpt_flow_conv_stats(), qpt_flow_conversations()), thaws again; the
 * walk (qpt_flow_read.c) decodes it without thawing.  The pairing
 * scans and the end-of-capture time read cold ones without thawing them
 * (fl_peek, fl_conv_peek).  qpt_flow_forget_halves() frees the halves
 * before the results thaw every conversation.
 */
#include <string.h>

#include "qpt_flow_int.h"
#include "qpt_flow_varint.h"

void fl_cold_free(struct qpt_flow *fl, struct cold_half *c)
{
	fl_slab_free(&fl->half_slab, c, sizeof(*c) + c->len);
}

/* A cold conversation's length (a varint first), *body: what follows it. */
static size_t blob_len(const uint8_t *blob, const uint8_t **body)
{
	struct cold_r r = { .p = blob, .end = blob + 10 };
	size_t len = (size_t)get_u(&r);

	*body = r.p;
	return len;
}

void fl_cold_conv_free(struct qpt_flow *fl, uint8_t *blob)
{
	const uint8_t *body;
	size_t len = blob_len(blob, &body);

	fl_slab_free(&fl->conv_slab, blob, (size_t)(body - blob) + len);
}

/* ---- a half, its windows and its ring ---------------------------------- */

/* struct half's one-bit flags, in one word */
#define HALF_FLAGS(X)                                                              \
	X(req_started) X(any_acked) X(msg_end_valid) X(last_valid) X(ans_valid)     \
	X(resend_valid) X(went_back) X(ipid_varies) X(fill_pending) X(rnr_resend) X(nak_pending)    \
	X(rnr_pending) X(in_episode) X(resp_started) X(ack_valid)

static uint32_t flags_of(const struct half *h)
{
	uint32_t f = 0, bit = 1;

#define X(name)              \
	if (h->name)         \
		f |= bit;    \
	bit <<= 1;
	HALF_FLAGS(X)
#undef X
	return f;
}

static void flags_set(struct half *h, uint32_t f)
{
	uint32_t bit = 1;

#define X(name)                      \
	h->name = (f & bit) != 0;    \
	bit <<= 1;
	HALF_FLAGS(X)
#undef X
}

/* The scalars after expected, in one order both ways: PSNs (relative to
 * expected), then the others. */
#define HALF_PSN(X)                                                              \
	X(msg.first_psn) X(acked) X(msg_end_psn) X(ans_hi) X(resp_max) X(ack_psn) \
	X(ack_msn)
#define HALF_U(X)                                                                \
	X(msg.len) X(msg.pkts) X(msg.open) X(msg.from_first) X(msg.op)            \
	X(win_size[0]) X(win_size[1]) X(seen_size) X(seen_pos) X(ngaps)           \
	X(nreads) X(family) X(service) X(ack_synd) X(last_ipid)

static void slot_put(struct cold_w *w, const struct slot *s)
{
	put_rel(w, s->frame, w->ref_frame);
	put_rel(w, (uint64_t)s->ns, (uint64_t)w->ref_ns);
	put_fp(w, s->fp);
	put_psn(w, s->psn);
	put_u(w, (uint64_t)s->used | (uint64_t)s->ackreq << 1 | (uint64_t)s->resent << 2 |
			 (uint64_t)s->acked << 3 | (uint64_t)s->bound << 4);
}

static void slot_get(struct cold_r *r, struct slot *s)
{
	uint64_t b;

	s->frame = get_rel(r, r->ref_frame);
	s->ns = (int64_t)get_rel(r, (uint64_t)r->ref_ns);
	s->fp = get_fp(r);
	s->psn = get_psn(r) & 0xffffff;
	b = get_u(r);
	s->used = b & 1;
	s->ackreq = b >> 1 & 1;
	s->resent = b >> 2 & 1;
	s->acked = b >> 3 & 1;
	s->bound = b >> 4 & 3;
}

static void seen_put(struct cold_w *w, const struct seen *s)
{
	put_rel(w, s->frame, w->ref_frame);
	put_rel(w, (uint64_t)s->ns, (uint64_t)w->ref_ns);
	put_fp(w, s->fp);
	put_psn(w, s->psn);
	put_u(w, s->tap);
}

static void seen_get(struct cold_r *r, struct seen *s)
{
	s->frame = get_rel(r, r->ref_frame);
	s->ns = (int64_t)get_rel(r, (uint64_t)r->ref_ns);
	s->fp = get_fp(r);
	s->psn = get_psn(r) & 0xffffff;
	s->tap = (uint32_t)get_u(r) & 0xff;
}

static const struct slot zero_slot;

struct cold_half *fl_cold_encode(struct qpt_flow *fl, const struct half *h,
				 struct addr_halves *a)
{
	struct cold_w w;
	struct cold_half *c;

	if (!fl->cold_buf)
		fl->cold_buf = g_byte_array_new();
	w = (struct cold_w){ .b = fl->cold_buf, .base_ns = fl->cold_base_ns };
	g_byte_array_set_size(w.b, 0);
	put_u(&w, h->last_frame);
	put_rel(&w, (uint64_t)h->last_ns, (uint64_t)w.base_ns);
	w.ref_frame = h->last_frame;
	w.ref_ns = h->last_ns;
	put_rel(&w, h->ans_frame, w.ref_frame);
	put_rel(&w, h->msg.first_frame, w.ref_frame);
	put_u(&w, h->expected);
	w.ref_psn = h->expected;
#define X(f) put_psn(&w, h->f);
	HALF_PSN(X)
#undef X
#define X(f) put_u(&w, (uint64_t)h->f);
	HALF_U(X)
#undef X
	put_u(&w, flags_of(h));
	for (int k = 0; k < 2; k++) {
		unsigned used = 0, prev = 0;

		for (unsigned i = 0; i < h->win_size[k]; i++)
			used += memcmp(&h->win[k][i], &zero_slot, sizeof(zero_slot)) != 0;
		put_u(&w, used);
		for (unsigned i = 0; i < h->win_size[k]; i++) {
			if (!memcmp(&h->win[k][i], &zero_slot, sizeof(zero_slot)))
				continue;
			put_u(&w, i - prev); /* index, from the previous one's */
			prev = i;
			slot_put(&w, &h->win[k][i]);
		}
	}
	for (unsigned i = 0; i < h->seen_size; i++)
		seen_put(&w, &h->seen[i]);
	g_assert(w.b->len <= UINT16_MAX);
	c = fl_slab_alloc(&fl->half_slab, sizeof(*c) + w.b->len);
	g_assert(!memcmp(a->key, h->key.src, 32));
	memcpy(c->addr, &a, sizeof(a));
	c->qpn = h->key.qpn;
	c->sqpn = h->key.sqpn;
	c->conv = h->conv ? h->conv->id : -1;
	c->dir = h->dir;
	c->thawed = false;
	c->len = (uint16_t)w.b->len;
	memcpy(c->buf, w.b->data, w.b->len);
	return c;
}

void fl_cold_decode(struct qpt_flow *fl, const struct cold_half *c, struct half *h,
		    bool scalars_only)
{
	struct cold_r r = { .p = c->buf, .end = c->buf + c->len, .base_ns = fl->cold_base_ns };

	fl_cold_key(c, &h->key);
	h->conv = c->conv >= 0 && !scalars_only ? fl_conv_live(fl, c->conv) : NULL;
	h->dir = c->dir;
	h->last_frame = get_u(&r);
	h->last_ns = (int64_t)get_rel(&r, (uint64_t)r.base_ns);
	r.ref_frame = h->last_frame;
	r.ref_ns = h->last_ns;
	h->ans_frame = get_rel(&r, r.ref_frame);
	h->msg.first_frame = get_rel(&r, r.ref_frame);
	h->expected = (uint32_t)get_u(&r);
	r.ref_psn = h->expected;
#define X(f) h->f = get_psn(&r);
	HALF_PSN(X)
#undef X
#define X(f) h->f = (__typeof__(h->f))get_u(&r);
	HALF_U(X)
#undef X
	flags_set(h, (uint32_t)get_u(&r));
	if (scalars_only)
		return;
	for (int k = 0; k < 2; k++) {
		unsigned used = (unsigned)get_u(&r), i = 0;

		if (h->win_size[k])
			h->win[k] = g_new0(struct slot, h->win_size[k]);
		while (used--) {
			i += (unsigned)get_u(&r);
			g_assert(i < h->win_size[k]);
			slot_get(&r, &h->win[k][i]);
		}
	}
	if (h->seen_size)
		h->seen = g_new0(struct seen, h->seen_size);
	for (unsigned i = 0; i < h->seen_size; i++)
		seen_get(&r, &h->seen[i]);
	g_assert(r.p == r.end);
}

/* ---- a conversation ---------------------------------------------------- */

static void put_raw(struct cold_w *w, const void *p, size_t n)
{
	g_byte_array_append(w->b, p, (guint)n);
}

static void get_raw(struct cold_r *r, void *p, size_t n)
{
	g_assert((size_t)(r->end - r->p) >= n);
	memcpy(p, r->p, n);
	r->p += n;
}

/* The index of a pairing evidence (a string of the engine's code, the
 * same pointer for every conversation paired that way). */
static unsigned evidence_index(struct qpt_flow *fl, const char *e)
{
	guint i;

	if (!fl->evidence)
		fl->evidence = g_ptr_array_new();
	for (i = 0; i < fl->evidence->len; i++)
		if (fl->evidence->pdata[i] == e)
			return i;
	g_ptr_array_add(fl->evidence, (gpointer)e);
	return i;
}

static void lat_put(struct cold_w *w, const struct qpt_lat *l)
{
	unsigned nz = 0, prev = 0;

	if (l == &qpt_lat_none) {
		put_u(w, 0);
		return;
	}
	put_u(w, 1 + (uint64_t)(l->bins != NULL));
	put_u(w, l->n);
	put_raw(w, &l->min_us, sizeof(l->min_us));
	put_raw(w, &l->max_us, sizeof(l->max_us));
	put_raw(w, &l->sum_us, sizeof(l->sum_us));
	if (!l->bins)
		return;
	if (l->n <= QPT_LAT_FEW) { /* the samples' bins */
		for (unsigned i = 0; i < QPT_LAT_FEW; i++)
			put_u(w, l->bins[i]);
		return;
	}
	for (unsigned i = 0; i < FL_LAT_NBINS; i++) /* counts per bin */
		nz += l->bins[i] != 0;
	put_u(w, nz);
	for (unsigned i = 0; i < FL_LAT_NBINS; i++) {
		if (!l->bins[i])
			continue;
		put_u(w, i - prev);
		prev = i;
		put_u(w, l->bins[i]);
	}
}

/* A histogram (into *l: qpt_lat_none or one allocated); a view
 * (scalars_only) gets qpt_lat_none. */
static void lat_get(struct cold_r *r, const struct qpt_lat **lp, bool scalars_only)
{
	uint64_t kind = get_u(r);
	struct qpt_lat tmp = { 0 }, *l;

	*lp = &qpt_lat_none;
	if (!kind)
		return;
	l = scalars_only ? &tmp : g_new0(struct qpt_lat, 1);
	l->n = get_u(r);
	get_raw(r, &l->min_us, sizeof(l->min_us));
	get_raw(r, &l->max_us, sizeof(l->max_us));
	get_raw(r, &l->sum_us, sizeof(l->sum_us));
	if (kind == 2) {
		bool few = l->n <= QPT_LAT_FEW;
		uint32_t *b = scalars_only ? NULL : g_new0(uint32_t, few ? QPT_LAT_FEW : FL_LAT_NBINS);

		if (few) {
			for (unsigned i = 0; i < QPT_LAT_FEW; i++) {
				uint32_t v = (uint32_t)get_u(r);

				if (b)
					b[i] = v;
			}
		} else {
			unsigned nz = (unsigned)get_u(r), i = 0;

			while (nz--) {
				uint32_t v;

				i += (unsigned)get_u(r);
				g_assert(i < FL_LAT_NBINS);
				v = (uint32_t)get_u(r);
				if (b)
					b[i] = v;
			}
		}
		l->bins = b;
	}
	if (!scalars_only)
		*lp = l;
}

/* A direction's fields, in one order both ways. */
#define DIR_U(X)                                                                \
	X(from) X(to) X(op_mask) X(packets) X(payload_bytes) X(bytes)             \
	X(req_packets) X(resp_packets) X(acks) X(coalesced_acks) X(psn_seen)      \
	X(bad_icrc)                                                               \
	X(psn_span) X(qos_in.max_payload_frame) X(qos_in.seg_frame)               \
	X(qos_in.hist.in.len[0]) X(qos_in.hist.in.len[1]) X(qos_in.max_payload)   \
	X(qos_in.seg_payload) X(qos_in.n[0]) X(qos_in.n[1]) X(qos_in.n[2])        \
	X(qos_in.n[3]) X(qos_in.order) X(qos_in.nhist) X(qos_in.seen)             \
	X(qos_in.seg_varies)

static void dir_put(struct cold_w *w, const struct qpt_dir *d)
{
	unsigned nops = (unsigned)__builtin_popcount(d->op_mask);

#define X(f) put_u(w, (uint64_t)d->f);
	DIR_U(X)
#undef X
	put_raw(w, d->qos_in.value, sizeof(d->qos_in.value));
	put_rel(w, (uint64_t)d->first_ns, (uint64_t)w->base_ns);
	w->ref_ns = d->first_ns;
	put_rel(w, (uint64_t)d->last_ns, (uint64_t)w->ref_ns);
	/* the rate window history: inline (its first time is where the
	 * pointer to it on the heap is) or on the heap */
	if (d->qos_in.nhist != QPT_QOS_HIST_HEAP)
		put_rel(w, (uint64_t)d->qos_in.hist.in.ns[0], (uint64_t)w->ref_ns);
	put_rel(w, (uint64_t)d->qos_in.hist.in.ns[1], (uint64_t)w->ref_ns);
	if (d->qos_in.nhist == QPT_QOS_HIST_HEAP) {
		const struct qpt_qos_hist *hh = d->qos_in.hist.heap;
		int64_t ns = w->ref_ns;
		uint64_t sent = hh->base;

		put_u(w, hh->base);
		put_u(w, hh->sent - hh->base);
		put_u(w, hh->n);
		for (uint32_t i = 0; i < hh->n; i++) {
			const struct hist_ent *e = fl_hist_at(hh, i);

			put_rel(w, (uint64_t)e->ns, (uint64_t)ns);
			put_rel(w, e->sent, sent);
			ns = e->ns;
			sent = e->sent;
		}
	}
	put_u(w, d->first_psn);
	w->ref_psn = d->first_psn;
	put_psn(w, d->last_psn);
	for (unsigned i = 0; i < nops; i++) {
		const struct qpt_opstat *o = &d->opv[i];

		put_u(w, o->count);
		put_u(w, o->bytes);
		put_u(w, o->packets);
		put_u(w, o->min_size);
		put_u(w, o->max_size);
	}
	lat_put(w, d->ack_rtt);
}

static void dir_get(struct cold_r *r, struct qpt_dir *d, bool scalars_only)
{
	unsigned nops;

#define X(f) d->f = (__typeof__(d->f))get_u(r);
	DIR_U(X)
#undef X
	get_raw(r, d->qos_in.value, sizeof(d->qos_in.value));
	d->first_ns = (int64_t)get_rel(r, (uint64_t)r->base_ns);
	r->ref_ns = d->first_ns;
	d->last_ns = (int64_t)get_rel(r, (uint64_t)r->ref_ns);
	if (d->qos_in.nhist != QPT_QOS_HIST_HEAP)
		d->qos_in.hist.in.ns[0] = (int64_t)get_rel(r, (uint64_t)r->ref_ns);
	d->qos_in.hist.in.ns[1] = (int64_t)get_rel(r, (uint64_t)r->ref_ns);
	if (d->qos_in.nhist == QPT_QOS_HIST_HEAP) {
		struct qpt_qos_hist tmp, *hh = scalars_only ? &tmp : g_new0(struct qpt_qos_hist, 1);
		int64_t ns = r->ref_ns;
		uint64_t sent;
		uint32_t n;

		*hh = (struct qpt_qos_hist){ 0 };
		hh->base = get_u(r);
		hh->sent = hh->base + get_u(r);
		n = (uint32_t)get_u(r);
		sent = hh->base;
		for (uint32_t i = 0; i < n; i++) {
			struct hist_ent e;

			e.ns = (int64_t)get_rel(r, (uint64_t)ns);
			e.sent = get_rel(r, sent);
			ns = e.ns;
			sent = e.sent;
			if (!scalars_only)
				fl_hist_push(hh, e.ns, e.sent);
		}
		/* a view: the heap history is not read (the ECN state only) */
		d->qos_in.hist.heap = scalars_only ? NULL : hh;
	}
	d->first_psn = (uint32_t)get_u(r);
	r->ref_psn = d->first_psn;
	d->last_psn = get_psn(r);
	nops = (unsigned)__builtin_popcount(d->op_mask);
	d->opv = scalars_only || !nops ? NULL : g_new(struct qpt_opstat, nops);
	for (unsigned i = 0; i < nops; i++) {
		struct qpt_opstat o;

		o.count = get_u(r);
		o.bytes = get_u(r);
		o.packets = get_u(r);
		o.min_size = (uint32_t)get_u(r);
		o.max_size = (uint32_t)get_u(r);
		if (d->opv)
			d->opv[i] = o;
	}
	lat_get(r, &d->ack_rtt, scalars_only);
	d->qos = NULL;
	d->r = &qpt_dir_rare_none;
}

/* Whether the sweep can make c cold: nothing of it but plain counters (no
 * rare counters, no ECN state, no CM exchange, not a fold's target) and a
 * burst's rate window history. */
static bool conv_plain(struct qpt_flow *fl, const struct qpt_conv *c)
{
	if (c->merged || c->has_cm || c->cm != &fl_no_cm || c->dir[0] == &qpt_dir_none[0])
		return false;
	if (fl->folded && g_hash_table_contains(fl->folded, c))
		return false;
	for (int d = 0; d < 2; d++) {
		const struct qpt_dir *x = c->dir[d];

		if (x == &qpt_dir_none[d])
			continue;
		if (x->r != &qpt_dir_rare_none || x->qos)
			return false;
	}
	return true;
}

uint8_t *fl_conv_encode(struct qpt_flow *fl, const struct qpt_conv *c)
{
	struct cold_w w;
	uint8_t *blob;

	if (!fl->cold_buf)
		fl->cold_buf = g_byte_array_new();
	w = (struct cold_w){ .b = fl->cold_buf, .base_ns = fl->cold_base_ns };
	g_byte_array_set_size(w.b, 0);
	put_raw(&w, c->transport, sizeof(c->transport));
	put_u(&w, c->paired_by);
	put_u(&w, c->mtu);
	put_u(&w, evidence_index(fl, c->pair_evidence));
	for (int e = 0; e < 2; e++) {
		const struct qpt_endpoint *ep = &c->ep[e];
		/* an IPv4 address is 12 zero bytes and 4 (fl_pkt_addrs) */
		bool v4 = !memcmp(ep->addr, (const uint8_t[12]){ 0 }, 12);

		put_u(&w, (uint64_t)ep->family << 2 | (uint64_t)ep->qpn_known << 1 | v4);
		put_raw(&w, v4 ? ep->addr + 12 : ep->addr, v4 ? 4 : 16);
		put_u(&w, ep->qpn);
	}
	put_u(&w, c->dir[1] != &qpt_dir_none[1]);
	for (int d = 0; d < 2; d++)
		if (c->dir[d] != &qpt_dir_none[d])
			dir_put(&w, c->dir[d]);
	{ /* its length first, a varint */
		uint8_t pre[10];
		unsigned n = varint(pre, w.b->len);

		blob = fl_slab_alloc(&fl->conv_slab, n + w.b->len);
		memcpy(blob, pre, n);
		memcpy(blob + n, w.b->data, w.b->len);
	}
	return blob;
}

void fl_conv_decode(struct qpt_flow *fl, const uint8_t *blob, int32_t id, struct conv_block *b,
		    struct qpt_dir *d1, bool scalars_only)
{
	const uint8_t *body;
	size_t len = blob_len(blob, &body);
	struct cold_r r = { .p = body, .end = body + len, .base_ns = fl->cold_base_ns };
	struct qpt_conv *c = &b->c;

	c->id = id;
	get_raw(&r, c->transport, sizeof(c->transport));
	c->paired_by = (enum qpt_paired_by)get_u(&r);
	c->mtu = (uint32_t)get_u(&r);
	c->pair_evidence = g_ptr_array_index(fl->evidence, (guint)get_u(&r));
	c->cm = &fl_no_cm;
	for (int e = 0; e < 2; e++) {
		struct qpt_endpoint *ep = &c->ep[e];
		uint64_t f = get_u(&r);

		ep->family = (uint8_t)(f >> 2);
		ep->qpn_known = f >> 1 & 1;
		memset(ep->addr, 0, sizeof(ep->addr));
		get_raw(&r, f & 1 ? ep->addr + 12 : ep->addr, f & 1 ? 4 : 16);
		ep->qpn = (uint32_t)get_u(&r);
	}
	c->dir[1] = get_u(&r) ? d1 : &qpt_dir_none[1];
	c->dir[0] = &b->d0;
	dir_get(&r, &b->d0, scalars_only);
	if (c->dir[1] == d1)
		dir_get(&r, d1, scalars_only);
	c->merged_into = -1;
	c->merged = false;
	c->has_cm = false;
	c->cold_mark = 0;
	g_assert(r.p == r.end);
}

struct qpt_conv *fl_conv_thaw(struct qpt_flow *fl, int32_t id)
{
	uint8_t *blob = fl_cold_conv_of(g_ptr_array_index(fl->convs, id));
	struct conv_block *b = g_new0(struct conv_block, 1);
	struct qpt_dir d1;

	fl_conv_decode(fl, blob, id, b, &d1, false);
	if (b->c.dir[1] == &d1) {
		struct qpt_dir *x = g_new(struct qpt_dir, 1);

		*x = d1;
		b->c.dir[1] = x;
	}
	fl_cold_conv_free(fl, blob);
	fl->convs->pdata[id] = &b->c;
	return &b->c;
}

QPT_HOT struct qpt_conv *fl_conv_live(struct qpt_flow *fl, int32_t id)
{
	void *p = g_ptr_array_index(fl->convs, id);

	return fl_conv_is_cold(p) ? fl_conv_thaw(fl, id) : p;
}

const struct qpt_conv *fl_conv_peek(struct qpt_flow *fl, int32_t id, struct conv_view *v)
{
	void *p = g_ptr_array_index(fl->convs, id);

	if (!fl_conv_is_cold(p))
		return p;
	memset(v, 0, sizeof(*v));
	fl_conv_decode(fl, fl_cold_conv_of(p), id, &v->b, &v->d1, true);
	return &v->b.c;
}

void fl_conv_view_clear(struct conv_view *v)
{
	for (int d = 0; d < 2; d++) {
		struct qpt_dir *x = (struct qpt_dir *)(uintptr_t)v->b.c.dir[d];

		if (x != &qpt_dir_none[d])
			fl_dir_free_parts(x);
	}
}

gpointer fl_conv_recode(struct qpt_flow *fl, struct qpt_flow *part, int32_t id)
{
	uint8_t *blob = fl_cold_conv_of(g_ptr_array_index(part->convs, id)), *out;
	struct conv_view v = { 0 };

	fl_conv_decode(part, blob, id, &v.b, &v.d1, false);
	if (!fl->cold_buf) /* fl's first cold record: part's times as the base */
		fl->cold_base_ns = part->cold_base_ns;
	out = fl_conv_encode(fl, &v.b.c);
	fl_conv_view_clear(&v);
	fl_cold_conv_free(part, blob);
	part->convs->pdata[id] = NULL;
	return (gpointer)((uintptr_t)out | 1);
}

/* Conversations made cold: those of the halves frozen now (freeze), but
 * for one a live half still has (marked). */
static void sweep_convs(struct qpt_flow *fl, GPtrArray *freeze)
{
	uint8_t mark = (uint8_t)++fl->sweeps;

	for (guint i = 0; i < fl->live->len; i++) {
		struct half *h = fl->live->pdata[i];

		if (h->conv)
			h->conv->cold_mark = mark;
	}
	for (guint i = 0; i < freeze->len; i++) {
		/* its cold half's id: the half's pointer may be to one frozen
		 * here already (both halves froze) */
		int32_t id = fl_cold_of(((struct half *)freeze->pdata[i])->twin)->conv;
		struct qpt_conv *c;

		if (id < 0 || fl_conv_is_cold(g_ptr_array_index(fl->convs, id)))
			continue;
		c = g_ptr_array_index(fl->convs, id);
		/* (a mark of 256 sweeps ago keeps one live: wrongly, never
		 * unsafely) */
		if (c->cold_mark == mark || !conv_plain(fl, c))
			continue;
		c->cold_mark = mark; /* once, if both halves froze */
		fl->convs->pdata[c->id] = (gpointer)((uintptr_t)fl_conv_encode(fl, c) | 1);
		fl_conv_free(c);
	}
}

/* ---- thawing, and the sweep -------------------------------------------- */

struct half *fl_thaw(struct qpt_flow *fl, struct half *p)
{
	struct cold_half *c = fl_cold_of(p);
	struct half *h;

	if (c->thawed)
		h = g_hash_table_lookup(fl->thawed, c);
	else {
		h = g_new0(struct half, 1);
		fl_cold_decode(fl, c, h, false);
		c->thawed = true;
		if (!fl->thawed)
			fl->thawed = g_hash_table_new(g_direct_hash, g_direct_equal);
		g_hash_table_insert(fl->thawed, c, h);
		g_ptr_array_add(fl->live, h);
	}
	h->touched = true;
	return h;
}

struct half *fl_unforward(struct qpt_flow *fl, struct half *p)
{
	if (!fl_is_cold(p))
		return p;
	if (fl_cold_of(p)->thawed)
		return g_hash_table_lookup(fl->thawed, fl_cold_of(p));
	return NULL;
}

const struct half *fl_peek(struct qpt_flow *fl, struct half *p, struct half_view *v)
{
	struct half *live = fl_unforward(fl, p);
	struct cold_half *c;

	if (live)
		return live;
	c = fl_cold_of(p);
	memset(&v->h, 0, sizeof(v->h));
	fl_cold_decode(fl, c, &v->h, true);
	if (c->conv >= 0) /* its conversation, cold or not: read only */
		v->h.conv = (struct qpt_conv *)(uintptr_t)fl_conv_peek(fl, c->conv, &v->c);
	return &v->h;
}

/* An address pair whose lists hold a half made cold or thawed: to sweep. */
static void mark_dirty(struct addr_halves *a, GPtrArray *dirty)
{
	if (!a->dirty) {
		a->dirty = true;
		g_ptr_array_add(dirty, a);
	}
}

/* Every pointer to a half in an address pair's lists: frozen ones to
 * their cold halves, forwarders to their live halves. */
static void sweep_entry(struct qpt_flow *fl, struct half **e)
{
	struct half *p = *e;

	if (fl_is_cold(p)) {
		if (fl_cold_of(p)->thawed)
			*e = fl_unforward(fl, p);
	} else if (p->freezing) {
		*e = p->twin; /* its cold half (tagged), for the sweep */
	}
}

static void sweep_lists(struct qpt_flow *fl, struct addr_halves *a)
{
	GPtrArray *l[3];

	a->dirty = false;
	if (a->n != ADDR_SPILLED) {
		for (unsigned i = 0; i < a->n; i++)
			sweep_entry(fl, &a->u.in[i]);
		return;
	}
	l[0] = a->u.v.all;
	l[1] = a->u.v.req;
	l[2] = a->u.v.resp;
	for (int k = 0; k < 3; k++)
		for (guint i = 0; l[k] && i < l[k]->len; i++)
			sweep_entry(fl, (struct half **)&l[k]->pdata[i]);
}

void fl_cold_sweep(struct qpt_flow *fl)
{
	GPtrArray *freeze = g_ptr_array_new(), *fwd = g_ptr_array_new(),
		  *dirty = g_ptr_array_new();
	guint n = 0;

	if (!fl->cold_buf)
		fl->cold_base_ns = fl->last_ns; /* the first sweep */
	/* the live halves (the thawed ones among them): an untouched one
	 * freezes, the others stay */
	for (guint i = 0; i < fl->live->len; i++) {
		struct half *h = fl->live->pdata[i];

		if (!h->touched && !h->x) {
			/* h->key.src, dst: the 32 bytes of an address pair's key */
			struct addr_halves *a = g_hash_table_lookup(fl->by_addr, h->key.src);

			h->twin = (struct half *)((uintptr_t)fl_cold_encode(fl, h, a) | 1);
			h->freezing = true;
			g_ptr_array_add(freeze, h);
			mark_dirty(a, dirty);
			continue;
		}
		h->touched = false;
		fl->live->pdata[n++] = h;
	}
	g_ptr_array_set_size(fl->live, n);
	/* the twins and the recent cache forget the halves made cold (the
	 * others stay: a frame of a busy QP finds its half and twin as before
	 * the sweep, not in the table) */
	for (guint i = 0; i < n; i++) {
		struct half *h = fl->live->pdata[i];

		if (h->twin && h->twin->freezing)
			h->twin = NULL;
	}
	for (guint i = 0; i < freeze->len; i++) {
		struct half *h = freeze->pdata[i];
		unsigned slot = fl_recent_slot(&h->key);

		for (unsigned w = 0; w < 2; w++) /* (its two ways) */
			if (fl->recent[slot ^ w] == h)
				fl->recent[slot ^ w] = NULL;
	}
	sweep_convs(fl, freeze);
	if (fl->thawed) {
		GHashTableIter it;
		gpointer c;

		g_hash_table_iter_init(&it, fl->thawed);
		while (g_hash_table_iter_next(&it, &c, NULL)) {
			g_ptr_array_add(fwd, c);
			mark_dirty(fl_cold_addr(c), dirty);
		}
	}
	for (guint i = 0; i < dirty->len; i++)
		sweep_lists(fl, dirty->pdata[i]);
	/* Each in its own place in the table (an equal key replaces the
	 * pointer there, and is freed here):
	 * the table's order, which the drain's follows, stays. */
	for (guint i = 0; i < freeze->len; i++) {
		struct half *h = freeze->pdata[i];

		g_hash_table_add(fl->halves, h->twin);
		fl_half_free(fl, h);
	}
	for (guint i = 0; i < fwd->len; i++) {
		struct cold_half *c = fwd->pdata[i];
		struct half *h = g_hash_table_lookup(fl->thawed, c);

		c->thawed = false; /* c alone */
		g_hash_table_add(fl->halves, h);
		fl_cold_free(fl, c);
	}
	if (fl->thawed)
		g_hash_table_remove_all(fl->thawed);
	g_ptr_array_free(freeze, TRUE);
	g_ptr_array_free(fwd, TRUE);
	g_ptr_array_free(dirty, TRUE);
}
