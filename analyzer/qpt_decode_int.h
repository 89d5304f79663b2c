/* qpt_decode_int.h - what the decoder's files share (qpt_decode.c the link
 * layer, IP/UDP and tunnels; qpt_decode_iba.c the IBA headers and the
 * ICRC).  Not part of the interface (qpt_decode.h). */
#ifndef QPT_DECODE_INT_H
#define QPT_DECODE_INT_H

#include "qpt_decode.h"
#include "qpt_read.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))

/* qpt_decode.c */
enum qpt_error qpt_decode_fail(struct qpt_pkt *pkt, enum qpt_error e);

/* qpt_decode_iba.c */
enum qpt_error qpt_decode_bth(struct qpt_pkt *pkt, const struct qpt_buf *b,
			      uint32_t off, uint32_t end);
void qpt_decode_check_crc(struct qpt_pkt *pkt, const uint8_t *data);
enum qpt_error qpt_decode_rocev1(struct qpt_pkt *pkt, const struct qpt_buf *b,
				 uint32_t off, uint32_t wire_end);
enum qpt_error qpt_decode_lrh(struct qpt_pkt *pkt, const struct qpt_buf *b,
			      uint32_t off, uint32_t wire_end);

#endif
