/* test_cold.c - a cold half (analyzer/qpt_flow_cold.c) gives back every
 * bit of the half it was made of.
 *
 * The half is filled with random bytes (its pointers made valid), made
 * cold and decoded twice: into memory of all zero bits and into memory of
 * all one bits.  Every bit the decoder writes is then the same in both and
 * equal to the original's; the bits it does not write are only the ones
 * named below (the pointers it leaves to its caller, padding, the sweep's
 * two bits).  So a field added to struct half that the encoding forgets
 * fails here, whatever its name.  The windows' slots and the seen ring are
 * compared field by field (their structs have unused bits).  Times and
 * frames take edge values too (0, 1, the extremes of 64 bits).
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
	h->ans_ns = (int64_t)edge_or_random(r);
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
	 * msg's padding byte, touched and freezing, the padding after them */
	const unsigned leaves = 64 + 64 + 8 + 2 +
		8 * (unsigned)(sizeof(struct half) - (offsetof(struct half, ack_synd) + 1 + 2));

	for (int iter = 0; iter < 2000; iter++) {
		struct half *h = random_half(r, conv);
		struct cold_half *c = fl_cold_encode(fl, h);
		struct half *z = g_new0(struct half, 1), *o = g_new(struct half, 1);
		uint8_t *zb = (uint8_t *)z, *hb = (uint8_t *)h, *ob = (uint8_t *)o;

		memset(o, 0xff, sizeof(*o));
		g_assert_true(!memcmp(&c->key, &h->key, sizeof(h->key)));
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
		g_free(c);
	}
	qpt_flow_free(fl);
	g_rand_free(r);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/cold/roundtrip", test_roundtrip);
	return g_test_run();
}
