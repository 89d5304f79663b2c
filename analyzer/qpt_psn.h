/* qpt_psn.h - 24-bit packet sequence number arithmetic (IBA 9.7.1)
 *
 * One place for PSN comparisons, as rxe's psn_compare(): shift the 24-bit
 * difference into the top of a 32-bit signed integer so that the sign tells
 * which is newer across the 0xFFFFFF -> 0 wrap.
 */
#ifndef QPT_PSN_H
#define QPT_PSN_H

#include <stdint.h>

#define QPT_PSN_MASK 0xffffffu

/* <0 when a is older than b, 0 when equal, >0 when a is newer. */
static inline int32_t qpt_psn_cmp(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8);
}

/* Signed distance from b to a, in PSNs (-2^23 .. 2^23-1). */
static inline int32_t qpt_psn_diff(uint32_t a, uint32_t b)
{
	return qpt_psn_cmp(a, b) >> 8;
}

static inline uint32_t qpt_psn_add(uint32_t psn, int32_t n)
{
	return (psn + (uint32_t)n) & QPT_PSN_MASK;
}

#endif
