/* qpt_mad.c - MAD common header (IBA 13.4.3) and CM messages (IBA 12.6)
 *
 *   MAD header (24) | BaseVer | MgmtClass | ClassVer | R:1 Method:7 | Status:16 |
 *                   | ClassSpecific:16 | TransactionID:64 | AttributeID:16 |
 *                   | rsv:16 | AttributeModifier:32 |
 *   CM data (232)   | per attribute ID, offsets below are from its start |
 *
 * RDMA-CM (librdmacm, kernel cma.c) puts its IP addressing in the REQ
 * private data when the service ID is in the IP port spaces
 * 0x00000000_01PP_pppp (PP the port space, pppp the destination port).
 */
#include <string.h>

#include "qpt_mad.h"
#include "qpt_verdict.h"

#define CM_DATA 24	  /* CM data starts after the MAD header */
#define CM_REQ_PRIVATE 140 /* REQ private data, from the CM data start */

const char *qpt_cm_msg_name(unsigned attr_id)
{
	return qpt_name_of(qpt_cm_msg_names, attr_id, NULL);
}

const char *qpt_cm_rej_reason_name(unsigned reason)
{
	return qpt_name_of(qpt_cm_rej_reasons, reason, NULL);
}

const char *qpt_cm_rej_reason_text(unsigned reason)
{
	const char *n = qpt_cm_rej_reason_name(reason);

	return n ? n : "unknown reason";
}

const char *qpt_mad_class_name(unsigned c)
{
	return qpt_name_of(qpt_mad_class_names, c, "MAD");
}

const char *qpt_mad_method_name(unsigned m)
{
	return qpt_name_of(qpt_mad_method_names, m, "?");
}

/* Reads of CM fields; any failure sets *ok false. */
struct cm_reader {
	struct qpt_buf b;
	bool ok;
};

static uint32_t r32(struct cm_reader *r, uint32_t off)
{
	uint32_t v = 0;

	if (!qpt_be32(&r->b, CM_DATA + off, &v))
		r->ok = false;
	return v;
}

static uint32_t r24(struct cm_reader *r, uint32_t off)
{
	uint32_t v = 0;

	if (!qpt_be24(&r->b, CM_DATA + off, &v))
		r->ok = false;
	return v;
}

static uint16_t r16(struct cm_reader *r, uint32_t off)
{
	uint16_t v = 0;

	if (!qpt_be16(&r->b, CM_DATA + off, &v))
		r->ok = false;
	return v;
}

static uint8_t r8(struct cm_reader *r, uint32_t off)
{
	uint8_t v = 0;

	if (!qpt_u8(&r->b, CM_DATA + off, &v))
		r->ok = false;
	return v;
}

static uint64_t r64(struct cm_reader *r, uint32_t off)
{
	uint64_t v = 0;

	if (!qpt_be64(&r->b, CM_DATA + off, &v))
		r->ok = false;
	return v;
}

static void rgid(struct cm_reader *r, uint32_t off, uint8_t *gid)
{
	if (!qpt_bytes(&r->b, CM_DATA + off, gid, 16))
		r->ok = false;
}

static void decode_cma_ip(struct qpt_pkt *pkt, struct cm_reader *r)
{
	struct qpt_cma_ip *c = &pkt->cma;
	uint64_t sid = pkt->cm.service_id;

	if ((sid & 0xffffffffff000000ull) != 0x0000000001000000ull)
		return;
	c->port_space = (sid >> 16) & 0xff;
	c->dst_port = sid & 0xffff;
	c->cma_version = r8(r, CM_REQ_PRIVATE);
	c->ip_version = r8(r, CM_REQ_PRIVATE + 1) >> 4;
	c->port = r16(r, CM_REQ_PRIVATE + 2);
	rgid(r, CM_REQ_PRIVATE + 4, c->src);
	rgid(r, CM_REQ_PRIVATE + 20, c->dst);
	if (r->ok && (c->ip_version == 4 || c->ip_version == 6))
		pkt->flags |= QPT_HAS_CMA_IP;
}

static void decode_cm(struct qpt_pkt *pkt, struct cm_reader *r)
{
	struct qpt_cm *cm = &pkt->cm;
	uint8_t u;

	cm->msg = pkt->mad.attr_id;
	switch (cm->msg) {
	case QPT_CM_REQ:
		cm->local_comm_id = r32(r, 0);
		cm->service_id = r64(r, 8);
		cm->local_ca_guid = r64(r, 16);
		cm->local_qkey = r32(r, 28);
		cm->local_qpn = r24(r, 32);
		cm->responder_resources = r8(r, 35);
		cm->initiator_depth = r8(r, 39);
		cm->transport = (r8(r, 43) >> 1) & 3;
		cm->starting_psn = r24(r, 44);
		cm->retry_count = r8(r, 47) & 7;
		cm->pkey = r16(r, 48);
		u = r8(r, 50);
		cm->path_mtu = u >> 4;
		cm->rnr_retry_count = u & 7;
		/* transport 3 is "see the extended transport type" (byte 51,
		 * low bits; 1 = XRC), kept as 3 */
		cm->primary_lid_local = r16(r, 52);
		cm->primary_lid_remote = r16(r, 54);
		rgid(r, 56, cm->primary_gid_local);
		rgid(r, 72, cm->primary_gid_remote);
		if (r->ok)
			decode_cma_ip(pkt, r);
		break;
	case QPT_CM_REP:
		cm->local_comm_id = r32(r, 0);
		cm->remote_comm_id = r32(r, 4);
		cm->local_qkey = r32(r, 8);
		cm->local_qpn = r24(r, 12);
		cm->starting_psn = r24(r, 20);
		cm->responder_resources = r8(r, 24);
		cm->initiator_depth = r8(r, 25);
		cm->rnr_retry_count = r8(r, 27) >> 5;
		cm->local_ca_guid = r64(r, 28);
		break;
	case QPT_CM_RTU:
	case QPT_CM_DREP:
		cm->local_comm_id = r32(r, 0);
		cm->remote_comm_id = r32(r, 4);
		break;
	case QPT_CM_DREQ:
		cm->local_comm_id = r32(r, 0);
		cm->remote_comm_id = r32(r, 4);
		cm->remote_qpn = r24(r, 8);
		break;
	case QPT_CM_REJ:
		cm->local_comm_id = r32(r, 0);
		cm->remote_comm_id = r32(r, 4);
		cm->msg_rejected = r8(r, 8) >> 6;
		cm->reason = r16(r, 10);
		break;
	case QPT_CM_MRA:
		cm->local_comm_id = r32(r, 0);
		cm->remote_comm_id = r32(r, 4);
		cm->msg_rejected = r8(r, 8) >> 6; /* message MRAed */
		break;
	case QPT_CM_SIDR_REQ:
		cm->local_comm_id = r32(r, 0); /* request ID */
		cm->pkey = r16(r, 4);
		cm->service_id = r64(r, 8);
		break;
	case QPT_CM_SIDR_REP:
		cm->local_comm_id = r32(r, 0); /* request ID */
		cm->status = r8(r, 4);
		cm->local_qpn = r24(r, 8);
		cm->service_id = r64(r, 12);
		cm->local_qkey = r32(r, 20);
		break;
	case QPT_CM_LAP:
		cm->local_comm_id = r32(r, 0);
		cm->remote_comm_id = r32(r, 4);
		cm->remote_qpn = r24(r, 12);
		break;
	case QPT_CM_APR:
		cm->local_comm_id = r32(r, 0);
		cm->remote_comm_id = r32(r, 4);
		cm->status = r8(r, 9);
		break;
	default:
		return; /* ClassPortInfo and unknown attributes: header only */
	}
	if (r->ok)
		pkt->flags |= QPT_HAS_CM;
}

void qpt_decode_mad(struct qpt_pkt *pkt, const struct qpt_buf *mad)
{
	struct qpt_mad *m = &pkt->mad;
	struct cm_reader r = { .b = *mad, .ok = true };
	uint8_t method;

	/* qpt_decode() leaves these to us (they are most of struct qpt_pkt). */
	memset(&pkt->mad, 0, sizeof(pkt->mad));
	memset(&pkt->cm, 0, sizeof(pkt->cm));
	memset(&pkt->cma, 0, sizeof(pkt->cma));
	if (!qpt_u8(mad, 0, &m->base_version) || !qpt_u8(mad, 1, &m->mgmt_class) ||
	    !qpt_u8(mad, 2, &m->class_version) || !qpt_u8(mad, 3, &method) ||
	    !qpt_be16(mad, 4, &m->status) ||
	    !qpt_be16(mad, 6, &m->class_specific) || !qpt_be64(mad, 8, &m->tid) ||
	    !qpt_be16(mad, 16, &m->attr_id) || !qpt_be32(mad, 20, &m->attr_mod)) {
		if (pkt->error == QPT_E_OK)
			pkt->error = QPT_E_BAD_MAD;
		return;
	}
	m->method = method;
	pkt->flags |= QPT_HAS_MAD;
	if (m->mgmt_class != QPT_MAD_CLASS_CM)
		return;
	decode_cm(pkt, &r);
	if (!r.ok && pkt->error == QPT_E_OK)
		pkt->error = QPT_E_BAD_MAD;
}
