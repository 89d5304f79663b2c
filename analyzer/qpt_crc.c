/* qpt_crc.c - invariant CRC (ICRC) and variant CRC (VCRC), IBA 7.8
 *
 * ICRC: CRC-32 (the Ethernet polynomial, zlib's crc32) over the packet from
 * the LRH to the end of the pad, with the variant fields set to ones, sent
 * least significant byte first.  For RoCEv2 (IBA annex A17.3.3, as the Linux
 * rxe driver computes it in rxe_icrc.c) the LRH is eight bytes of ones and
 * the IP and UDP headers take the GRH's place with TOS/TTL/checksum (IPv4)
 * or traffic class/flow label/hop limit (IPv6) and the UDP checksum masked.
 * Natively, LRH.VL is masked, and the whole LRH is when a GRH follows (the
 * LIDs are rewritten by routers): checked against the Wireshark wiki's
 * native IB capture.
 *
 * VCRC: CRC-16, polynomial 0x100B, initial value 0xFFFF, reflected, final
 * inversion, over LRH..ICRC, sent least significant byte first.
 */
#ifdef QPT_HAVE_LIBDEFLATE
#include <libdeflate.h>
#else
#include <zlib.h>
#endif

#include "qpt_attr.h"
#include "qpt_crc.h"

/* The CRC-32 of RFC 1952, continued from crc (0 to start).  libdeflate's
 * folding implementation is several times faster than zlib's, with the
 * same results; zlib is the fallback where libdeflate is not installed. */
static uint32_t crc32_update(uint32_t crc, const uint8_t *p, size_t len)
{
#ifdef QPT_HAVE_LIBDEFLATE
	return libdeflate_crc32(crc, p, len);
#else
	return (uint32_t)crc32_z(crc, p, len);
#endif
}

static uint32_t bswap32(uint32_t v)
{
	return (v >> 24) | ((v >> 8) & 0xff00) | ((v << 8) & 0xff0000) | (v << 24);
}

static void mask_bth(uint8_t *bth)
{
	bth[4] = 0xff; /* FECN, BECN and resv6a */
}

static void mask_grh(uint8_t *grh)
{
	grh[0] |= 0x0f; /* traffic class, high nibble */
	grh[1] = grh[2] = grh[3] = 0xff;
	grh[7] = 0xff; /* hop limit */
}

/* CRC over the masked pseudo header, then the rest, byte-swapped so that it
 * compares with a big-endian read of the wire bytes. */
static uint32_t finish(const uint8_t *hdr, size_t hdr_len, const uint8_t *rest,
		       size_t rest_len)
{
	uint32_t c = crc32_update(0, hdr, hdr_len);

	c = crc32_update(c, rest, rest_len);
	return bswap32(c);
}

QPT_HOT uint32_t qpt_icrc_rocev2(const uint8_t *l3, unsigned l3_len, unsigned ip_version,
				 const uint8_t *bth, size_t len)
{
	uint8_t ph[8 + 60 + 8 + 12];
	unsigned n = 8;

	if (len < 12 || l3_len > 60)
		return 0; /* callers pass at least a BTH */
	memset(ph, 0xff, 8);
	memcpy(ph + n, l3, l3_len);
	if (ip_version == 4) {
		ph[n + 1] = 0xff;		   /* TOS */
		ph[n + 8] = 0xff;		   /* TTL */
		ph[n + 10] = ph[n + 11] = 0xff; /* header checksum */
	} else {
		mask_grh(ph + n);
	}
	n += l3_len;
	memcpy(ph + n, l3 + l3_len, 8); /* UDP header follows the IP header */
	ph[n + 6] = ph[n + 7] = 0xff;
	n += 8;
	memcpy(ph + n, bth, 12);
	mask_bth(ph + n);
	n += 12;
	return finish(ph, n, bth + 12, len - 12);
}

uint32_t qpt_icrc_grh(const uint8_t *lrh, const uint8_t *grh, const uint8_t *bth,
		      size_t len)
{
	uint8_t ph[8 + 40 + 12];
	unsigned n = 0;

	if (len < 12)
		return 0; /* callers pass at least a BTH */
	if (lrh && !grh) {
		memcpy(ph, lrh, 8);
		ph[0] |= 0xf0; /* VL */
	} else {
		memset(ph, 0xff, 8);
	}
	n = 8;
	if (grh) {
		memcpy(ph + n, grh, 40);
		mask_grh(ph + n);
		n += 40;
	}
	memcpy(ph + n, bth, 12);
	mask_bth(ph + n);
	n += 12;
	return finish(ph, n, bth + 12, len - 12);
}

uint16_t qpt_vcrc(const uint8_t *p, size_t len)
{
	uint16_t c = 0xffff;

	for (size_t i = 0; i < len; i++) {
		c ^= p[i];
		for (int b = 0; b < 8; b++)
			c = (c & 1) ? (uint16_t)((c >> 1) ^ 0xd008) : (uint16_t)(c >> 1);
	}
	c ^= 0xffff;
	return (uint16_t)(c >> 8 | c << 8);
}
