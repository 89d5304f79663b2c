/* qpt_flow_varint.h - the varints of cold records (qpt_flow_cold.c):
 * unsigned, relative to a reference (frames, times, PSNs) and zigzag.
 * The flow files' own. */
#ifndef QPT_FLOW_VARINT_H
#define QPT_FLOW_VARINT_H

#include "qpt_flow_int.h"

/* ---- varints ----------------------------------------------------------- */

struct cold_w {
	GByteArray *b;
	uint64_t ref_frame;
	int64_t ref_ns, base_ns;
	uint32_t ref_psn;
};

/* v as a varint in t: its length. */
static inline unsigned varint(uint8_t t[10], uint64_t v)
{
	unsigned n = 0;

	while (v >= 0x80) {
		t[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	t[n++] = (uint8_t)v;
	return n;
}

static inline void put_u(struct cold_w *w, uint64_t v)
{
	uint8_t t[10];

	g_byte_array_append(w->b, t, varint(t, v));
}

/* v relative to ref: 0 as 0 (most unset times and frames), else the
 * zigzag of the difference, 2 up (1: v itself follows, for the one
 * difference the zigzag cannot shift up). */
static inline void put_rel(struct cold_w *w, uint64_t v, uint64_t ref)
{
	int64_t d = (int64_t)(v - ref);
	uint64_t z = ((uint64_t)d << 1) ^ (uint64_t)(d >> 63);

	if (!v) {
		put_u(w, 0);
	} else if (z <= UINT64_MAX - 2) {
		put_u(w, z + 2);
	} else {
		put_u(w, 1);
		put_u(w, v);
	}
}

/* A PSN (or any 32-bit value near ref_psn): 0 as 0, else the zigzag of
 * the 32-bit difference, 1 up. */
static inline void put_psn(struct cold_w *w, uint32_t v)
{
	int32_t d = (int32_t)(v - w->ref_psn);

	put_u(w, v ? (uint64_t)(((uint32_t)d << 1) ^ (uint32_t)(d >> 31)) + 1 : 0);
}

/* A fingerprint (a hash: 4 bytes as they are). */
static inline void put_fp(struct cold_w *w, uint32_t v)
{
	g_byte_array_append(w->b, (const uint8_t *)&v, 4);
}

struct cold_r {
	const uint8_t *p, *end;
	uint64_t ref_frame;
	int64_t ref_ns, base_ns;
	uint32_t ref_psn;
};

static inline uint64_t get_u(struct cold_r *r)
{
	uint64_t v = 0;

	for (unsigned s = 0; s < 64; s += 7) {
		uint8_t b;

		g_assert(r->p < r->end); /* the engine's own encoding */
		b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80))
			return v;
	}
	g_assert_not_reached();
}

static inline uint32_t get_psn(struct cold_r *r)
{
	uint64_t z = get_u(r);
	uint32_t y;

	if (!z)
		return 0;
	y = (uint32_t)(z - 1);
	return r->ref_psn + ((y >> 1) ^ (uint32_t)-(int32_t)(y & 1));
}

static inline uint32_t get_fp(struct cold_r *r)
{
	uint32_t v;

	g_assert(r->end - r->p >= 4);
	memcpy(&v, r->p, 4);
	r->p += 4;
	return v;
}

static inline uint64_t get_rel(struct cold_r *r, uint64_t ref)
{
	uint64_t z = get_u(r), d;

	if (z == 0)
		return 0;
	if (z == 1)
		return get_u(r);
	z -= 2;
	d = (z >> 1) ^ (uint64_t)-(int64_t)(z & 1);
	return ref + d;
}

#endif
