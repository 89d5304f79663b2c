/* qpt_decode_iba.c - the IBA headers: LRH, GRH, BTH, extended headers, ICRC
 *
 * IBA vol 1 chapter 5/7 (LRH, GRH, BTH; the extended headers per opcode,
 * QPT_EXT_HEADERS); the ICRC and VCRC 7.8; MADs (UD SEND to QP0/QP1) go to
 * qpt_mad.c.  Reached from qpt_decode.c, which decodes the link layer,
 * IP/UDP and tunnels down to the first IBA header.
 *
 *   LRH (8)       | VL:4 LVer:4 | SL:4 rsv:2 LNH:2 | DLID:16 | rsv:5 PktLen:11 | SLID:16 |
 *   GRH (40)      | IPVer:4 TClass:8 FlowLabel:20 | PayLen:16 NxtHdr:8 HopLmt:8 | SGID:128 | DGID:128 |
 *   BTH (12)      | OpCode:8 | SE:1 M:1 Pad:2 TVer:4 | P_Key:16 | FECN:1 BECN:1 rsv:6 | DestQP:24 | A:1 rsv:7 | PSN:24 |
 *   ext. headers  | per opcode, see qpt_opcode.c |
 *   payload, pad  |
 *   ICRC (4), VCRC (2, native IB only)
 */
#include "qpt_attr.h"
#include "qpt_crc.h"
#include "qpt_decode_int.h"
#include "qpt_mad.h"

#define GRH_NXTHDR_IBA 0x1b
#define IB_LNH_RAW 0
#define IB_LNH_IP 1
#define IB_LNH_BTH 2
#define IB_LNH_GRH 3

/* ---- extended headers: one decode function each (QPT_EXT_HEADERS) ---- */

static bool dec_RDETH(struct qpt_pkt *pkt, const struct qpt_buf *b, uint32_t off)
{
	if (!qpt_be32(b, off, &pkt->rdeth_eecnxt))
		return false;
	pkt->rdeth_eecnxt &= 0xffffff;
	return true;
}

static bool dec_DETH(struct qpt_pkt *pkt, const struct qpt_buf *b, uint32_t off)
{
	return qpt_be32(b, off, &pkt->deth.qkey) && qpt_be24(b, off + 5, &pkt->deth.sqpn);
}

static bool dec_XRCETH(struct qpt_pkt *pkt, const struct qpt_buf *b, uint32_t off)
{
	if (!qpt_be32(b, off, &pkt->xrceth_srq))
		return false;
	pkt->xrceth_srq &= 0xffffff;
	return true;
}

static bool dec_FETH(struct qpt_pkt *pkt, const struct qpt_buf *b, uint32_t off)
{
	if (!qpt_be32(b, off, &pkt->feth))
		return false;
	/* IBA 1.5 FETH: Selectivity Level bits 5:4, Placement Type 3:0 of the
	 * last byte. */
	pkt->feth_sel_level = (pkt->feth >> 4) & 3;
	pkt->feth_placement = pkt->feth & 0xf;
	return true;
}

static bool dec_RETH(struct qpt_pkt *pkt, const struct qpt_buf *b, uint32_t off)
{
	return qpt_be64(b, off, &pkt->reth.va) && qpt_be32(b, off + 8, &pkt->reth.rkey) &&
	       qpt_be32(b, off + 12, &pkt->reth.dmalen);
}

static bool dec_ATOMICETH(struct qpt_pkt *pkt, const struct qpt_buf *b, uint32_t off)
{
	struct qpt_atomiceth *a = &pkt->atomiceth;

	return qpt_be64(b, off, &a->va) && qpt_be32(b, off + 8, &a->rkey) &&
	       qpt_be64(b, off + 12, &a->swap) && qpt_be64(b, off + 20, &a->compare);
}

static bool dec_AETH(struct qpt_pkt *pkt, const struct qpt_buf *b, uint32_t off)
{
	static const enum qpt_aeth_kind kinds[4] = { QPT_AETH_ACK, QPT_AETH_RNR,
						     QPT_AETH_RESERVED, QPT_AETH_NAK };
	uint8_t u8;

	if (!qpt_u8(b, off, &u8) || !qpt_be24(b, off + 1, &pkt->aeth.msn))
		return false;
	pkt->aeth.syndrome = u8;
	pkt->aeth.value = u8 & 0x1f;
	pkt->aeth.kind = kinds[(u8 >> 5) & 3];
	return true;
}

static bool dec_ATOMICACKETH(struct qpt_pkt *pkt, const struct qpt_buf *b, uint32_t off)
{
	return qpt_be64(b, off, &pkt->atomicacketh_orig);
}

static bool dec_IMMDT(struct qpt_pkt *pkt, const struct qpt_buf *b, uint32_t off)
{
	return qpt_be32(b, off, &pkt->immdt);
}

static bool dec_IETH(struct qpt_pkt *pkt, const struct qpt_buf *b, uint32_t off)
{
	return qpt_be32(b, off, &pkt->ieth);
}

static bool (*const ext_decode[QPT_H_COUNT])(struct qpt_pkt *, const struct qpt_buf *,
					     uint32_t) = {
#define EXT_DEC_ROW(a, id, name, len) [QPT_HI_##id] = dec_##id,
	QPT_EXT_HEADERS(EXT_DEC_ROW, 0)
#undef EXT_DEC_ROW
};

/* Decode the extended headers of pkt->bth.opcode starting at off, in wire
 * order; each one decoded sets its QPT_H_* flag. */
static bool decode_ext(struct qpt_pkt *pkt, const struct qpt_buf *b, uint32_t off)
{
	const struct qpt_opcode_info *oi = &qpt_opcodes[pkt->bth.opcode];

	/* the headers present, in order (the lowest bit first) */
	for (unsigned m = oi->hdrs & ((1u << QPT_H_COUNT) - 1); m; m &= m - 1) {
		unsigned i = (unsigned)__builtin_ctz(m);

		if (!ext_decode[i](pkt, b, off))
			return false;
		pkt->flags |= 1u << i;
		off += qpt_hdr_len(1u << i);
	}
	return true;
}

/* The BTH and what follows.  b covers the captured frame; the IBA packet's
 * BTH starts at off and its ICRC ends at end (wire offsets in the frame). */
QPT_HOT enum qpt_error qpt_decode_bth(struct qpt_pkt *pkt, const struct qpt_buf *b,
				      uint32_t off, uint32_t end)
{
	struct qpt_bth *h = &pkt->bth;
	const struct qpt_opcode_info *oi;
	uint8_t f;
	uint32_t qp, psn, pay, icrc_off;

	if (end < off + 12 + 4)
		return qpt_decode_fail(pkt, end > b->len ? QPT_E_TRUNCATED : QPT_E_SHORT_PAYLOAD);
	if (!qpt_u8(b, off, &h->opcode) || !qpt_u8(b, off + 1, &f) ||
	    !qpt_be16(b, off + 2, &h->pkey) || !qpt_be32(b, off + 4, &qp) ||
	    !qpt_be32(b, off + 8, &psn))
		return qpt_decode_fail(pkt, QPT_E_TRUNCATED);
	h->se = f >> 7;
	h->m = (f >> 6) & 1;
	h->pad = (f >> 4) & 3;
	h->tver = f & 0xf;
	h->fecn = qp >> 31;
	h->becn = (qp >> 30) & 1;
	h->resv8a = (qp >> 24) & 0x3f;
	h->dqpn = qp & 0xffffff;
	h->ackreq = psn >> 31;
	h->resv7 = (psn >> 24) & 0x7f;
	h->psn = psn & 0xffffff;
	pkt->flags |= QPT_HAS_BTH;
	pkt->off_bth = off;

	oi = &qpt_opcodes[h->opcode];
	if ((h->opcode & 0xe0) == QPT_SVC_MANUF) {
		/* Manufacturer specific: the BTH is all the spec defines. */
		pkt->off_payload = off + 12;
		pkt->payload_len = end - 4 - (off + 12);
		return pkt->error;
	}
	if (!(oi->flags & QPT_O_VALID))
		qpt_decode_fail(pkt, QPT_E_BAD_OPCODE);
	if (h->tver != 0)
		qpt_decode_fail(pkt, QPT_E_BAD_TVER);
	if (!(oi->flags & QPT_O_VALID))
		return pkt->error;

	icrc_off = end - 4;
	pkt->off_icrc = icrc_off;
	pkt->off_payload = off + 12 + oi->ext_len;
	if (pkt->off_payload > icrc_off)
		return qpt_decode_fail(pkt, end > b->len ? QPT_E_TRUNCATED : QPT_E_SHORT_PAYLOAD);
	/* The payload length follows from the lengths alone, so it is known
	 * even when the capture cut the headers. */
	pay = icrc_off - pkt->off_payload;
	if (h->pad > pay) {
		pkt->payload_len = 0;
		qpt_decode_fail(pkt, QPT_E_BAD_PAD);
	} else {
		pkt->payload_len = pay - h->pad;
		if (pkt->payload_len < oi->fixed_payload)
			qpt_decode_fail(pkt, QPT_E_SHORT_PAYLOAD);
	}
	if (!decode_ext(pkt, b, off + 12)) {
		pkt->error = QPT_E_OK;
		return qpt_decode_fail(pkt, QPT_E_TRUNCATED);
	}
	if (icrc_off + 4 <= b->len) {
		qpt_be32(b, icrc_off, &pkt->icrc);
		pkt->flags |= QPT_HAS_ICRC;
	} else {
		/* Every header is there and the lengths fit the wire length
		 * (end <= wire_end was checked by the caller): the capture's
		 * snap length cut the payload or the ICRC, not the packet.
		 * Analysed as is, its ICRC not checked (tcpdump and Wireshark
		 * keep "cut by the capture" apart from "invalid" too). */
		pkt->cut_by_snaplen = true;
	}

	/* Management datagrams: UD SEND to QP0 (SMI) or QP1 (GSI).  The MAD
	 * (the CM message) is a header to the analysis: cut, it is
	 * truncated, as a cut BTH is. */
	if ((h->dqpn == 0 || h->dqpn == 1) &&
	    (h->opcode == (QPT_SVC_UD | 0x04) || h->opcode == (QPT_SVC_UD | 0x05))) {
		struct qpt_buf mad;

		if (pkt->payload_len < 24)
			qpt_decode_fail(pkt, QPT_E_BAD_MAD);
		else if (qpt_sub(b, pkt->off_payload, pkt->payload_len, &mad))
			qpt_decode_mad(pkt, &mad);
		else
			qpt_decode_fail(pkt, QPT_E_TRUNCATED);
	}
	if (pkt->error != QPT_E_OK)
		pkt->cut_by_snaplen = false;
	return pkt->error;
}

/* The ICRC (and the VCRC of native IB) from the offsets decoding found.
 * A frame cut by the snap length has no ICRC to check; its icrc is then the
 * same CRC over the bytes captured (unchecked, not shown): the flow engine
 * tells a capture copy from a resend by it, and what a resend changes
 * (the IPv4 ID, the MSN, the headers) lies in the captured part. */
QPT_HOT void qpt_decode_check_crc(struct qpt_pkt *pkt, const uint8_t *data)
{
	bool cut = pkt->cut_by_snaplen && pkt->flags & QPT_HAS_BTH &&
		   pkt->off_icrc > pkt->off_bth && pkt->caplen > pkt->off_bth;

	if ((pkt->flags & QPT_HAS_ICRC || cut) && !pkt->ip6_ext_len) {
		uint32_t len = pkt->off_icrc - pkt->off_bth; /* BTH..pad */

		if (cut)
			len = MIN(len, pkt->caplen - pkt->off_bth);

		if (pkt->transport == QPT_TR_ROCEV2)
			/* the IP header is what lies before the 8 UDP bytes */
			pkt->icrc_computed = qpt_icrc_rocev2(
				data + pkt->off_l3, pkt->off_iba - 8 - pkt->off_l3,
				pkt->ip_version, data + pkt->off_bth, len);
		else if (pkt->transport == QPT_TR_IB)
			pkt->icrc_computed = qpt_icrc_grh(
				data + pkt->off_iba,
				pkt->flags & QPT_HAS_GRH ? data + pkt->off_iba + 8 : NULL,
				data + pkt->off_bth, len);
		else /* RoCEv1: the GRH first */
			pkt->icrc_computed = qpt_icrc_grh(NULL, data + pkt->off_iba,
							  data + pkt->off_bth, len);
		if (cut) { /* a fingerprint of the captured bytes, not checked */
			pkt->icrc = pkt->icrc_computed;
			return;
		}
		pkt->icrc_checked = true;
		pkt->icrc_ok = pkt->icrc_computed == pkt->icrc;
	}
	if (pkt->flags & QPT_HAS_VCRC) {
		/* The VCRC covers LRH..ICRC and follows it. */
		pkt->vcrc_computed = qpt_vcrc(data + pkt->off_iba, pkt->lrh.pktlen * 4u);
		pkt->vcrc_ok = pkt->vcrc == pkt->vcrc_computed;
	}
}

static bool decode_grh(struct qpt_pkt *pkt, const struct qpt_buf *b, uint32_t off)
{
	struct qpt_grh *g = &pkt->grh;
	uint32_t w;

	if (!qpt_be32(b, off, &w) || !qpt_be16(b, off + 4, &g->paylen) ||
	    !qpt_u8(b, off + 6, &g->nxthdr) || !qpt_u8(b, off + 7, &g->hoplmt) ||
	    !qpt_bytes(b, off + 8, g->sgid, 16) ||
	    !qpt_bytes(b, off + 24, g->dgid, 16))
		return false;
	g->ipver = w >> 28;
	g->tclass = (w >> 20) & 0xff;
	g->flowlabel = w & 0xfffff;
	pkt->flags |= QPT_HAS_GRH;
	return true;
}

/* RoCEv1: GRH then BTH; the Ethernet frame may carry padding after it. */
enum qpt_error qpt_decode_rocev1(struct qpt_pkt *pkt, const struct qpt_buf *b,
				 uint32_t off, uint32_t wire_end)
{
	uint32_t end;

	pkt->transport = QPT_TR_ROCEV1;
	pkt->off_iba = off;
	if (!decode_grh(pkt, b, off))
		return qpt_decode_fail(pkt, QPT_E_TRUNCATED);
	if (pkt->grh.nxthdr != GRH_NXTHDR_IBA)
		return qpt_decode_fail(pkt, QPT_E_BAD_GRH);
	end = off + 40 + pkt->grh.paylen;
	if (end > wire_end)
		return qpt_decode_fail(pkt, QPT_E_BAD_IP_LENGTH);
	pkt->iba_len = end - off;
	qpt_decode_bth(pkt, b, off + 40, end);
	return pkt->error;
}

/* Native IB from the LRH; end is where the captured-or-wire frame ends. */
enum qpt_error qpt_decode_lrh(struct qpt_pkt *pkt, const struct qpt_buf *b,
			      uint32_t off, uint32_t wire_end)
{
	struct qpt_lrh *l = &pkt->lrh;
	uint8_t b0, b1;
	uint16_t len;
	uint32_t end, bth = off + 8;

	pkt->transport = QPT_TR_IB;
	pkt->off_iba = off;
	if (!qpt_u8(b, off, &b0) || !qpt_u8(b, off + 1, &b1) ||
	    !qpt_be16(b, off + 2, &l->dlid) || !qpt_be16(b, off + 4, &len) ||
	    !qpt_be16(b, off + 6, &l->slid))
		return qpt_decode_fail(pkt, QPT_E_TRUNCATED);
	l->vl = b0 >> 4;
	l->lver = b0 & 0xf;
	l->sl = b1 >> 4;
	l->lnh = b1 & 3;
	l->pktlen = len & 0x7ff;
	pkt->flags |= QPT_HAS_LRH;
	end = off + l->pktlen * 4u;
	if (l->pktlen * 4u < 8 || end > wire_end)
		return qpt_decode_fail(pkt, QPT_E_BAD_LRH_LENGTH);
	pkt->iba_len = end + 2 - off;
	if (l->lnh == IB_LNH_RAW || l->lnh == IB_LNH_IP)
		return pkt->error; /* raw datagram: no IBA transport headers */
	if (l->lnh == IB_LNH_GRH) {
		if (!decode_grh(pkt, b, bth))
			return qpt_decode_fail(pkt, QPT_E_TRUNCATED);
		if (pkt->grh.nxthdr != GRH_NXTHDR_IBA)
			return qpt_decode_fail(pkt, QPT_E_BAD_GRH);
		bth += 40;
	}
	qpt_decode_bth(pkt, b, bth, end);
	if (end + 2 <= wire_end && !qpt_has(b, end, 2)) {
		/* the VCRC was cut: by the snap length when no header was */
		if (pkt->error == QPT_E_OK && pkt->flags & QPT_HAS_BTH) {
			pkt->cut_by_snaplen = true;
			return pkt->error;
		}
		return qpt_decode_fail(pkt, QPT_E_TRUNCATED);
	}
	if (qpt_be16(b, end, &pkt->vcrc))
		pkt->flags |= QPT_HAS_VCRC;
	return pkt->error;
}
