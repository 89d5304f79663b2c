/* test_cold.c - a cold half or conversation (analyzer/qpt_flow_cold.c)
 * gives back every bit of what it was made of.
 *
 * The half is filled with random bytes (its pointers made valid), made
 * cold and decoded twice: into memory of all zero bits and into memory of
 * all one bits.  Every bit the decoder writes is then the same in both and
 * equal to the original's; the bits it does not write are only the ones
 * named below (the pointers it leaves to its caller, padding, the sweep's
 * two bits).  So a field added to struct half that the encoding forgets
 * fails here, whatever its name.  The windows' slots and the seen ring are
 * compared field by field (their structs have unused bits).  Times and
 * frames take edge values too (0, 1, the extremes of 64 bits).  A
 * conversation (without the rare counters, ECN state or CM exchange the
 * sweep never makes cold) is checked the same way: struct qpt_conv and
 * its directions bit for bit, their per-operation counts and ACK RTT
 * histograms by content.
 */
#include <string.h>

#include "qpt_flow_int.h"

static uint64_t edge_or_random(GRand *r)
{
	static const uint64_t edge[] = { 0, 1, 2, UINT64_MAX, UINT64_MAX - 1,
					 (uint64_t)INT64_MAX, (uint64_t)INT64_MIN, 0x8000000000000001ull };
	uint64_t v = (uint64_t)g_rand_int(r) << 32 | g_rand_int(r);

	if (g_rand_int_range(r, 0, 4) == 0)
		return edge[g_rand_int_range(r, 0, G_N_ELEMENTS(edge))];
	return v >> g_rand_int_range(r, 0, 64); /* short and long values */
}

static void random_bytes(GRand *r, void *p, size_t n)
{
	uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)g_rand_int(r);
}

static void random_slot(GRand *r, struct slot *s)
{
	if (g_rand_int_range(r, 0, 3) == 0) {
		memset(s, 0, sizeof(*s)); /* an unused one */
		return;
	}
	s->frame = edge_or_random(r);
	s->ns = (int64_t)edge_or_random(r);
	s->fp = g_rand_int(r);
	s->psn = g_rand_int(r) & 0xffffff;
	s->used = g_rand_boolean(r);
	s->ackreq = g_rand_boolean(r);
	s->resent = g_rand_boolean(r);
	s->acked = g_rand_boolean(r);
	s->bound = g_rand_int_range(r, 0, 4);
}

static void check_slot(const struct slot *a, const struct slot *b)
{
	g_assert_cmpuint(a->frame, ==, b->frame);
	g_assert_cmpint(a->ns, ==, b->ns);
	g_assert_cmpuint(a->fp, ==, b->fp);
	g_assert_cmpuint(a->psn, ==, b->psn);
	g_assert_cmpuint(a->used, ==, b->used);
	g_assert_cmpuint(a->ackreq, ==, b->ackreq);
	g_assert_cmpuint(a->resent, ==, b->resent);
	g_assert_cmpuint(a->acked, ==, b->acked);
	g_assert_cmpuint(a->bound, ==, b->bound);
}

static void check_seen(const struct seen *a, const struct seen *b)
{
	g_assert_cmpuint(a->frame, ==, b->frame);
	g_assert_cmpint(a->ns, ==, b->ns);
	g_assert_cmpuint(a->fp, ==, b->fp);
	g_assert_cmpuint(a->psn, ==, b->psn);
	g_assert_cmpuint(a->tap, ==, b->tap);
}

/* A random half: random bytes, then the pointers and sizes made valid. */
static struct half *random_half(GRand *r, struct qpt_conv *conv)
{
	struct half *h = g_new(struct half, 1);

	random_bytes(r, h, sizeof(*h));
	h->twin = NULL;
	h->x = NULL; /* only halves without rare state are made cold */
	h->conv = g_rand_boolean(r) ? conv : NULL;
	h->dir = (int8_t)g_rand_int_range(r, 0, 2);
	h->msg.first_frame = edge_or_random(r);
	h->msg.open = g_rand_boolean(r); /* bools: 0 or 1 */
	h->msg.from_first = g_rand_boolean(r);
	h->last_frame = edge_or_random(r);
	h->last_ns = (int64_t)edge_or_random(r);
	h->ans_frame = edge_or_random(r);
	for (int k = 0; k < 2; k++) {
		h->win_size[k] = (uint16_t)(1u << g_rand_int_range(r, 0, 9)); /* 1 .. WIN_SIZE */
		h->win[k] = g_new(struct slot, h->win_size[k]);
		for (unsigned i = 0; i < h->win_size[k]; i++)
			random_slot(r, &h->win[k][i]);
	}
	h->seen_size = (uint8_t)g_rand_int_range(r, 1, SEEN_RING + 1);
	h->seen = g_new(struct seen, h->seen_size);
	for (unsigned i = 0; i < h->seen_size; i++) {
		struct slot s;

		random_slot(r, &s);
		h->seen[i] = (struct seen){ .ns = s.ns, .frame = s.frame, .fp = s.fp,
					    .psn = s.psn, .tap = g_rand_int(r) & 0xff };
	}
	return h;
}

/* The bits of x a decode into a all zero and b all one wrote: equal. */
static unsigned unwritten_bits(const struct half *a, const struct half *b)
{
	const uint8_t *p = (const uint8_t *)a, *q = (const uint8_t *)b;
	unsigned n = 0;

	for (size_t i = 0; i < sizeof(*a); i++)
		n += (unsigned)__builtin_popcount(p[i] ^ q[i]);
	return n;
}

static void test_roundtrip(void)
{
	GRand *r = g_rand_new_with_seed(17);
	struct qpt_flow *fl = qpt_flow_new(NULL);
	struct half owner = { .family = 4 };
	struct qpt_conv *conv = fl_conv_new(fl, &owner);
	/* what the decoder leaves: twin and x (its caller's: NULL), struct
	 * msg's padding byte, touched and freezing, the padding between
	 * ack_synd and last_ipid, and after the 17 one-bit flags that follow
	 * last_ipid */
	const unsigned leaves = 64 + 64 + 8 + 2 +
		8 * (unsigned)(offsetof(struct half, last_ipid) - (offsetof(struct half, ack_synd) + 1)) +
		(8 * (unsigned)(sizeof(struct half) - (offsetof(struct half, last_ipid) + 2)) - 17);

	for (int iter = 0; iter < 2000; iter++) {
		struct half *h = random_half(r, conv);
		/* its address pair: the key's src and dst (the cold half names it) */
		struct addr_halves a = { .n = 0 };
		struct cold_half *c;
		struct half_key key;
		struct half *z = g_new0(struct half, 1), *o = g_new(struct half, 1);
		uint8_t *zb = (uint8_t *)z, *hb = (uint8_t *)h, *ob = (uint8_t *)o;

		memcpy(a.key, h->key.src, 16);
		memcpy(a.key + 16, h->key.dst, 16);
		c = fl_cold_encode(fl, h, &a);
		memset(o, 0xff, sizeof(*o));
		g_assert_true(fl_cold_addr(c) == &a);
		g_assert_true(!memcmp(fl_cold_key(c, &key), &h->key, sizeof(h->key)));
		fl_cold_decode(fl, c, z, false);
		fl_cold_decode(fl, c, o, false);
		/* the windows and ring are the decoder's, one per decode */
		for (int k = 0; k < 2; k++) {
			for (unsigned i = 0; i < h->win_size[k]; i++) {
				check_slot(&h->win[k][i], &z->win[k][i]);
				check_slot(&h->win[k][i], &o->win[k][i]);
			}
			g_free(o->win[k]);
			o->win[k] = z->win[k];
		}
		for (unsigned i = 0; i < h->seen_size; i++) {
			check_seen(&h->seen[i], &z->seen[i]);
			check_seen(&h->seen[i], &o->seen[i]);
		}
		g_free(o->seen);
		o->seen = z->seen;
		g_assert_cmpuint(unwritten_bits(z, o), ==, leaves);
		/* every written bit is the original's (pointers aside) */
		for (size_t i = 0; i < sizeof(*h); i++) {
			uint8_t written = (uint8_t)~(zb[i] ^ ob[i]);

			if (i >= offsetof(struct half, win) && i < offsetof(struct half, win) + sizeof(h->win))
				continue;
			if (i >= offsetof(struct half, seen) && i < offsetof(struct half, seen) + sizeof(h->seen))
				continue;
			if ((hb[i] & written) != (zb[i] & written))
				g_error("iteration %d: byte %zu of struct half: %02x, decoded %02x (bits %02x)",
					iter, i, hb[i], zb[i], written);
		}
		g_assert_true(z->conv == h->conv);
		fl_half_free_parts(z);
		fl_half_free_parts(h);
		g_free(z);
		g_free(o);
		g_free(h);
		fl_cold_free(fl, c);
	}
	qpt_flow_free(fl);
	g_rand_free(r);
}

/* ---- conversations ---- */

static const char *const evidences[] = { "", "ACK PSN answers requests", "UD datagrams both ways" };

static struct qpt_lat *random_lat(GRand *r)
{
	struct qpt_lat *l = g_new0(struct qpt_lat, 1);

	l->n = (uint64_t)(g_rand_int_range(r, 0, 3) ? g_rand_int_range(r, 1, QPT_LAT_FEW + 1) :
						       g_rand_int_range(r, QPT_LAT_FEW + 1, 100000));
	random_bytes(r, &l->min_us, sizeof(l->min_us));
	random_bytes(r, &l->max_us, sizeof(l->max_us));
	random_bytes(r, &l->sum_us, sizeof(l->sum_us));
	if (l->n <= QPT_LAT_FEW) {
		l->bins = g_new0(uint32_t, QPT_LAT_FEW);
		for (unsigned i = 0; i < l->n; i++)
			l->bins[i] = (uint32_t)g_rand_int_range(r, 0, FL_LAT_NBINS);
	} else {
		l->bins = g_new0(uint32_t, FL_LAT_NBINS);
		for (int k = g_rand_int_range(r, 1, 40); k > 0; k--)
			l->bins[g_rand_int_range(r, 0, FL_LAT_NBINS)] = g_rand_int(r) >> g_rand_int_range(r, 0, 32);
	}
	return l;
}

/* A random direction without rare counters or ECN state (what the sweep
 * makes cold). */
static void random_dir(GRand *r, struct qpt_dir *d, int which)
{
	unsigned nops;

	random_bytes(r, d, sizeof(*d));
	d->from = (uint8_t)which;
	d->to = (uint8_t)(1 - which);
	d->op_mask = (uint16_t)(g_rand_int(r) & ((1u << QPT_OP_COUNT) - 1));
	nops = (unsigned)__builtin_popcount(d->op_mask);
	d->opv = nops ? g_new(struct qpt_opstat, nops) : NULL;
	for (unsigned i = 0; i < nops; i++) {
		d->opv[i].count = edge_or_random(r);
		d->opv[i].bytes = edge_or_random(r);
		d->opv[i].packets = edge_or_random(r);
		d->opv[i].min_size = g_rand_int(r);
		d->opv[i].max_size = g_rand_int(r);
	}
	d->packets = edge_or_random(r);
	d->payload_bytes = edge_or_random(r);
	d->first_ns = (int64_t)edge_or_random(r);
	d->last_ns = (int64_t)edge_or_random(r);
	d->qos = NULL;
	d->qos_in.nhist = (uint8_t)g_rand_int_range(r, 0, QPT_QOS_INLINE_HIST + 1);
	if (g_rand_boolean(r)) { /* a burst's history on the heap */
		struct qpt_qos_hist *hh = g_new0(struct qpt_qos_hist, 1);
		guint n = (guint)g_rand_int_range(r, 0, 40);

		d->qos_in.nhist = QPT_QOS_HIST_HEAP;
		/* a ring turned anywhere (the window's oldest entry at head) */
		hh->cap = 64;
		hh->ents = g_new(struct hist_ent, hh->cap);
		hh->head = (uint32_t)g_rand_int_range(r, 0, (gint32)hh->cap);
		for (guint i = 0; i < n; i++)
			fl_hist_push(hh, (int64_t)edge_or_random(r), edge_or_random(r));
		hh->sent = edge_or_random(r);
		hh->base = edge_or_random(r);
		d->qos_in.hist.heap = hh;
	}
	d->qos_in.seen = g_rand_boolean(r);
	d->qos_in.seg_varies = g_rand_boolean(r);
	if (d->qos_in.nhist != QPT_QOS_HIST_HEAP)
		d->qos_in.hist.in.ns[0] = (int64_t)edge_or_random(r);
	d->r = &qpt_dir_rare_none;
	d->psn_seen = g_rand_boolean(r);
	d->ack_rtt = g_rand_boolean(r) ? &qpt_lat_none : random_lat(r);
}

static void check_lat(const struct qpt_lat *a, const struct qpt_lat *b)
{
	if (a == &qpt_lat_none) {
		g_assert_true(b == &qpt_lat_none);
		return;
	}
	g_assert_true(b != &qpt_lat_none && b != a);
	g_assert_cmpuint(a->n, ==, b->n);
	g_assert_true(!memcmp(&a->min_us, &b->min_us, 3 * sizeof(double)));
	g_assert_true(!memcmp(a->bins, b->bins, (a->n <= QPT_LAT_FEW ? QPT_LAT_FEW : FL_LAT_NBINS) *
						     sizeof(uint32_t)));
}

/* The pointers of two decodes of direction a checked, their memory freed,
 * and then made a's (for the bit comparison). */
static void check_dir_ptrs(const struct qpt_dir *a, struct qpt_dir *z, struct qpt_dir *o)
{
	unsigned nops = (unsigned)__builtin_popcount(a->op_mask);

	g_assert_true(!nops || !memcmp(a->opv, z->opv, nops * sizeof(*a->opv)));
	g_assert_true(!nops || !memcmp(a->opv, o->opv, nops * sizeof(*a->opv)));
	check_lat(a->ack_rtt, z->ack_rtt);
	check_lat(a->ack_rtt, o->ack_rtt);
	if (a->qos_in.nhist == QPT_QOS_HIST_HEAP) {
		const struct qpt_qos_hist *ah = a->qos_in.hist.heap;

		for (int k = 0; k < 2; k++) {
			struct qpt_dir *x = k ? o : z;
			struct qpt_qos_hist *xh = x->qos_in.hist.heap;

			g_assert_true(xh != ah);
			g_assert_cmpuint(xh->sent, ==, ah->sent);
			g_assert_cmpuint(xh->base, ==, ah->base);
			g_assert_cmpuint(xh->n, ==, ah->n);
			for (uint32_t i = 0; i < ah->n; i++)
				g_assert_true(!memcmp(fl_hist_at(xh, i), fl_hist_at(ah, i),
						      sizeof(struct hist_ent)));
			g_free(xh->ents);
			g_free(xh);
			x->qos_in.hist.heap = a->qos_in.hist.heap;
		}
	}
	g_free(o->opv);
	fl_lat_free(o->ack_rtt);
	g_free(z->opv);
	fl_lat_free(z->ack_rtt);
	o->opv = z->opv = a->opv;
	o->ack_rtt = z->ack_rtt = a->ack_rtt;
}

static void free_dir_parts(struct qpt_dir *d)
{
	g_free(d->opv);
	fl_lat_free(d->ack_rtt);
	fl_qos_free(d); /* the heap history */
}

/* Bits written differently by two decodes, and written bits unlike a's. */
static unsigned compare_bits(const void *a, const void *z, const void *o, size_t n, const char *what)
{
	const uint8_t *ab = a, *zb = z, *ob = o;
	unsigned un = 0;

	for (size_t i = 0; i < n; i++) {
		uint8_t written = (uint8_t)~(zb[i] ^ ob[i]);

		un += (unsigned)__builtin_popcount(zb[i] ^ ob[i]);
		if ((ab[i] & written) != (zb[i] & written))
			g_error("byte %zu of %s: %02x, decoded %02x (bits %02x)", i, what, ab[i],
				zb[i], written);
	}
	return un;
}

static void test_conv_roundtrip(void)
{
	GRand *r = g_rand_new_with_seed(23);
	struct qpt_flow *fl = qpt_flow_new(NULL);
	/* the padding the decoder leaves: 2 bytes after each endpoint and 1
	 * at the end of struct qpt_conv; 3 after psn_seen in struct qpt_dir */
	const unsigned conv_pad = 8 * (2 * 2 + 1), dir_pad = 8 * 3;

	G_STATIC_ASSERT(sizeof(struct qpt_endpoint) == 24);
	for (int iter = 0; iter < 2000; iter++) {
		struct conv_block *a = g_new(struct conv_block, 1), *z = g_new0(struct conv_block, 1),
				  *o = g_new(struct conv_block, 1);
		struct qpt_dir a1, z1, o1;
		bool two = g_rand_boolean(r);
		uint8_t *blob;
		unsigned un;

		memset(&z1, 0, sizeof(z1));
		memset(o, 0xff, sizeof(*o));
		memset(&o1, 0xff, sizeof(o1));
		random_bytes(r, a, sizeof(*a));
		a->c.id = g_rand_int_range(r, 0, 1000000);
		a->c.paired_by = (enum qpt_paired_by)g_rand_int_range(r, 0, 3);
		a->c.pair_evidence = evidences[g_rand_int_range(r, 0, G_N_ELEMENTS(evidences))];
		a->c.cm = &fl_no_cm;
		for (int e = 0; e < 2; e++) {
			struct qpt_endpoint *ep = &a->c.ep[e];

			memset((uint8_t *)ep + offsetof(struct qpt_endpoint, qpn_known) + 1, 0, 2);
			if (g_rand_boolean(r)) /* IPv4: 12 zero bytes first */
				memset(ep->addr, 0, 12);
			ep->qpn_known = g_rand_boolean(r);
		}
		random_dir(r, &a->d0, 0);
		a->c.dir[0] = &a->d0;
		random_dir(r, &a1, 1);
		a->c.dir[1] = two ? &a1 : &qpt_dir_none[1];
		a->c.merged_into = -1;
		a->c.merged = a->c.has_cm = false;
		a->c.cold_mark = 0;
		memset((uint8_t *)&a->c + sizeof(a->c) - 1, 0, 1);
		blob = fl_conv_encode(fl, &a->c);
		fl_conv_decode(fl, blob, a->c.id, z, &z1, false);
		fl_conv_decode(fl, blob, a->c.id, o, &o1, false);
		g_assert_true(z->c.dir[0] == &z->d0 && o->c.dir[0] == &o->d0);
		g_assert_true(two ? z->c.dir[1] == &z1 && o->c.dir[1] == &o1 :
				    z->c.dir[1] == &qpt_dir_none[1] && o->c.dir[1] == &qpt_dir_none[1]);
		check_dir_ptrs(&a->d0, &z->d0, &o->d0);
		if (two)
			check_dir_ptrs(&a1, &z1, &o1);
		/* where each was decoded: the same for the bit comparison */
		o->c.dir[0] = z->c.dir[0] = a->c.dir[0];
		o->c.dir[1] = z->c.dir[1] = a->c.dir[1];
		un = compare_bits(&a->c, &z->c, &o->c, sizeof(a->c), "struct qpt_conv");
		g_assert_cmpuint(un, ==, conv_pad);
		un = compare_bits(&a->d0, &z->d0, &o->d0, sizeof(a->d0), "its first direction");
		g_assert_cmpuint(un, ==, dir_pad);
		if (two) {
			un = compare_bits(&a1, &z1, &o1, sizeof(a1), "its second direction");
			g_assert_cmpuint(un, ==, dir_pad);
		}
		free_dir_parts(&a->d0);
		free_dir_parts(&a1);
		fl_cold_conv_free(fl, blob);
		g_free(a);
		g_free(z);
		g_free(o);
	}
	qpt_flow_free(fl);
	g_rand_free(r);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/cold/roundtrip", test_roundtrip);
	g_test_add_func("/cold/conv-roundtrip", test_conv_roundtrip);
	return g_test_run();
}
