/* qpt_read.h - bounds-checked big-endian reads of packet bytes
 *
 * As tcpdump's GET_BE_U_n, every read of a frame goes through these
 * helpers; but where tcpdump longjmps, these return false and leave the
 * output untouched so that the decoder can return QPT_E_TRUNCATED.
 */
#ifndef QPT_READ_H
#define QPT_READ_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

struct qpt_buf {
	const uint8_t *data;
	uint32_t len; /* bytes available (captured) */
};

static inline bool qpt_has(const struct qpt_buf *b, uint32_t off, uint32_t n)
{
	return off <= b->len && n <= b->len - off;
}

static inline bool qpt_u8(const struct qpt_buf *b, uint32_t off, uint8_t *v)
{
	if (!qpt_has(b, off, 1))
		return false;
	*v = b->data[off];
	return true;
}

static inline bool qpt_be16(const struct qpt_buf *b, uint32_t off, uint16_t *v)
{
	if (!qpt_has(b, off, 2))
		return false;
	*v = (uint16_t)(b->data[off] << 8 | b->data[off + 1]);
	return true;
}

static inline bool qpt_be24(const struct qpt_buf *b, uint32_t off, uint32_t *v)
{
	if (!qpt_has(b, off, 3))
		return false;
	*v = (uint32_t)b->data[off] << 16 | (uint32_t)b->data[off + 1] << 8 |
	     b->data[off + 2];
	return true;
}

static inline bool qpt_be32(const struct qpt_buf *b, uint32_t off, uint32_t *v)
{
	if (!qpt_has(b, off, 4))
		return false;
	*v = (uint32_t)b->data[off] << 24 | (uint32_t)b->data[off + 1] << 16 |
	     (uint32_t)b->data[off + 2] << 8 | b->data[off + 3];
	return true;
}

static inline bool qpt_be64(const struct qpt_buf *b, uint32_t off, uint64_t *v)
{
	uint32_t hi, lo;

	if (!qpt_be32(b, off, &hi) || !qpt_be32(b, off + 4, &lo))
		return false;
	*v = (uint64_t)hi << 32 | lo;
	return true;
}

static inline bool qpt_bytes(const struct qpt_buf *b, uint32_t off, void *dst,
			     uint32_t n)
{
	if (!qpt_has(b, off, n))
		return false;
	memcpy(dst, b->data + off, n);
	return true;
}

/* A sub-buffer of n bytes at off; false when it does not fit. */
static inline bool qpt_sub(const struct qpt_buf *b, uint32_t off, uint32_t n,
			   struct qpt_buf *out)
{
	if (!qpt_has(b, off, n))
		return false;
	out->data = b->data + off;
	out->len = n;
	return true;
}

#endif
