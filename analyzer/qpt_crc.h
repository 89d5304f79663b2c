/* qpt_crc.h - ICRC and VCRC.  Results are in the byte order of a big-endian
 * read of the wire bytes, as Wireshark displays them. */
#ifndef QPT_CRC_H
#define QPT_CRC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* RoCEv2.  l3: the IPv4 (20-byte, no options) or IPv6 header, followed in
 * memory by the UDP header; bth: the BTH, len bytes from the BTH up to (not
 * including) the ICRC; len must be at least 12 (else 0 is returned). */
uint32_t qpt_icrc_rocev2(const uint8_t *l3, unsigned l3_len, unsigned ip_version,
			 const uint8_t *bth, size_t len);

/* RoCEv1 (lrh NULL, grh set) and native IB (lrh set, grh optional). */
uint32_t qpt_icrc_grh(const uint8_t *lrh, const uint8_t *grh, const uint8_t *bth,
		      size_t len);

/* VCRC over len bytes from the LRH through the ICRC. */
uint16_t qpt_vcrc(const uint8_t *p, size_t len);

#endif
