/* roce-tree.c - the protocol tree of a record the engine decoded
 *
 * The dissector never parses IBA bytes itself: the engine's qpt_decode()
 * gives a record (struct qpt_pkt: values plus the offsets off_iba,
 * off_bth, off_payload, ...) and every field here is that record's value at
 * that offset.  Names of opcodes, NAK codes, AETH kinds, CM messages, REJ
 * reasons, MAD classes and methods, transports and message operations are
 * the engine's own tables (qpt_verdict.h), used as value_strings.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define WS_BUILD_DLL
#include <wireshark.h>

#include <epan/exceptions.h>
#include <epan/expert.h>
#include <epan/packet.h>
#include <epan/tap.h>
#include <epan/dissectors/packet-infiniband.h>

#include <wsutil/bits_ctz.h>

#include <string.h>

#include "qpt_attr.h"
#include "qpt_decode.h"
#include "qpt_flow.h"
#include "qpt_mad.h"
#include "qpt_opcode.h"
#include "qpt_ulp.h"
#include "roce-int.h"


/* ---- fields -------------------------------------------------------------- */

static int hf_transport = -1;
int hf_roce_ulp = -1;
static int hf_error = -1;
static int hf_lrh = -1, hf_lrh_vl = -1, hf_lrh_lver = -1, hf_lrh_sl = -1,
	   hf_lrh_lnh = -1, hf_lrh_dlid = -1, hf_lrh_pktlen = -1, hf_lrh_slid = -1;
static int hf_grh = -1, hf_grh_ipver = -1, hf_grh_tclass = -1, hf_grh_flowlabel = -1,
	   hf_grh_paylen = -1, hf_grh_nxthdr = -1, hf_grh_hoplmt = -1, hf_grh_sgid = -1,
	   hf_grh_dgid = -1;
static int hf_bth = -1, hf_bth_opcode = -1, hf_bth_se = -1, hf_bth_m = -1,
	   hf_bth_padcnt = -1, hf_bth_tver = -1, hf_bth_pkey = -1, hf_bth_fecn = -1,
	   hf_bth_becn = -1, hf_bth_resv6a = -1, hf_bth_dqpn = -1, hf_bth_ackreq = -1,
	   hf_bth_resv7 = -1, hf_bth_psn = -1;
static int hf_rdeth_eecnxt = -1;
static int hf_deth_qkey = -1, hf_deth_sqpn = -1;
static int hf_xrceth_srq = -1;
static int hf_feth = -1, hf_feth_sel = -1, hf_feth_placement = -1;
static int hf_reth_va = -1, hf_reth_rkey = -1, hf_reth_dmalen = -1;
static int hf_atomiceth_va = -1, hf_atomiceth_rkey = -1, hf_atomiceth_swap = -1,
	   hf_atomiceth_compare = -1;
static int hf_aeth_syndrome = -1, hf_aeth_kind = -1, hf_aeth_credits = -1,
	   hf_aeth_rnr_timer = -1, hf_aeth_nak_code = -1, hf_aeth_msn = -1;
static int hf_atomicacketh_orig = -1;
static int hf_immdt = -1, hf_ieth = -1;
static int hf_payload = -1, hf_payload_len = -1, hf_pad = -1;
static int hf_icrc = -1, hf_icrc_computed = -1, hf_icrc_status = -1;
static int hf_vcrc = -1, hf_vcrc_computed = -1, hf_vcrc_status = -1;
static int hf_mad = -1, hf_mad_base_version = -1, hf_mad_mgmt_class = -1,
	   hf_mad_class_version = -1, hf_mad_method = -1, hf_mad_status = -1,
	   hf_mad_class_specific = -1, hf_mad_tid = -1, hf_mad_attr_id = -1,
	   hf_mad_attr_mod = -1;
static int hf_cm_msg = -1, hf_cm_local_comm_id = -1, hf_cm_remote_comm_id = -1,
	   hf_cm_service_id = -1, hf_cm_local_ca_guid = -1, hf_cm_local_qkey = -1,
	   hf_cm_local_qpn = -1, hf_cm_remote_qpn = -1, hf_cm_starting_psn = -1,
	   hf_cm_transport = -1, hf_cm_path_mtu = -1, hf_cm_pkey = -1,
	   hf_cm_responder_resources = -1, hf_cm_initiator_depth = -1,
	   hf_cm_retry_count = -1, hf_cm_rnr_retry_count = -1, hf_cm_reason = -1,
	   hf_cm_msg_rejected = -1, hf_cm_status = -1, hf_cm_primary_lid_local = -1,
	   hf_cm_primary_lid_remote = -1, hf_cm_primary_gid_local = -1,
	   hf_cm_primary_gid_remote = -1;
static int hf_cma_version = -1, hf_cma_ip_version = -1, hf_cma_src_port = -1,
	   hf_cma_src_ip = -1, hf_cma_dst_ip = -1, hf_cma_src_ip6 = -1,
	   hf_cma_dst_ip6 = -1, hf_cma_dst_port = -1, hf_cma_port_space = -1;

static int hf_delivery_tunnel = -1, hf_delivery_cut = -1;
static gint ett_delivery = -1;
static gint ett_roce = -1, ett_lrh = -1, ett_grh = -1, ett_bth = -1, ett_ext = -1,
	    ett_payload = -1, ett_icrc = -1, ett_mad = -1, ett_cm = -1;

static expert_field ei_malformed = EI_INIT;
static expert_field ei_truncated = EI_INIT;
static expert_field ei_icrc_bad = EI_INIT;
static expert_field ei_vcrc_bad = EI_INIT;

/* ---- value strings --------------------------------------------------------- */

/* Opcode names from the engine's one opcode table (filled at registration);
 * the other names are the engine's tables (QPT_VALS), these few are the
 * plugin's own: the LRH's next header, the CRC status, the CM REQ's
 * transport and MTU encodings. */
static value_string opcode_vals[257];

static const value_string lnh_vals[] = {
	{ 0, "Raw" },
	{ 1, "IP non-IBA transport" },
	{ 2, "IBA local (BTH)" },
	{ 3, "IBA global (GRH)" },
	{ 0, NULL },
};

static const value_string icrc_status_vals[] = {
	{ 0, "Bad" },
	{ 1, "Good" },
	{ 2, "Unverified" },
	{ 0, NULL },
};

static const value_string cm_transport_vals[] = {
	{ 0, "RC" }, { 1, "UC" }, { 2, "RD" }, { 3, "XRC" }, { 0, NULL },
};

static const value_string mtu_vals[] = {
	{ 1, "256" }, { 2, "512" }, { 3, "1024" }, { 4, "2048" }, { 5, "4096" },
	{ 0, NULL },
};

/* ---- small helpers ------------------------------------------------------------ */

static guint64 in_place(int hf, guint64 v)
{
	header_field_info *hfi = proto_registrar_get_nth(hf);

	if (hfi->bitmask)
		v = (v << ws_ctz(hfi->bitmask)) & hfi->bitmask;
	return v;
}

/* Adds a field whose value comes from the engine record at a tvb offset. */
static proto_item *add_val(proto_tree *t, int hf, tvbuff_t *tvb, int off, int len,
			   guint64 v)
{
	header_field_info *hfi = proto_registrar_get_nth(hf);

	switch (hfi->type) {
	case FT_BOOLEAN:
		return proto_tree_add_boolean(t, hf, tvb, off, len, (guint32)in_place(hf, v ? 1 : 0));
	case FT_UINT64:
		return proto_tree_add_uint64(t, hf, tvb, off, len, in_place(hf, v));
	default:
		return proto_tree_add_uint(t, hf, tvb, off, len, (guint32)in_place(hf, v));
	}
}

proto_item *roce_add_gen(proto_tree *t, int hf, tvbuff_t *tvb, guint64 v)
{
	proto_item *it = add_val(t, hf, tvb, 0, 0, v);

	proto_item_set_generated(it);
	return it;
}

static proto_item *add_ipv6(proto_tree *t, int hf, tvbuff_t *tvb, int off,
			    const uint8_t *a)
{
	ws_in6_addr x;

	memcpy(&x, a, 16);
	return proto_tree_add_ipv6(t, hf, tvb, off, 16, &x);
}

/* Hidden: filterable, not printed (a field the built-in tree shows). */
static void hide_if(gboolean hide, proto_item *it)
{
	if (hide)
		proto_item_set_hidden(it);
}

static const char *opcode_name(uint8_t op)
{
	return opcode_vals[op].strptr;
}

/* ---- the tree ----------------------------------------------------------------- */

/* Offsets inside the CM data (IBA 12.6), as qpt_mad.c reads them. */
#define MAD_HDR 24

static void show_cm(proto_tree *t, tvbuff_t *tvb, int cmo, const struct qpt_pkt *pkt)
{
	const struct qpt_cm *cm = &pkt->cm;
	proto_tree *ct;

	ct = proto_tree_add_subtree_format(t, tvb, cmo, tvb_reported_length_remaining(tvb, cmo) > 232 ? 232 : -1,
					   ett_cm, NULL, "CM %s",
					   val_to_str_const(cm->msg, QPT_VALS(qpt_cm_msg_names), "?"));
	add_val(ct, hf_cm_msg, tvb, cmo - MAD_HDR + 16, 2, cm->msg);
	switch (cm->msg) {
	case QPT_CM_REQ:
		add_val(ct, hf_cm_local_comm_id, tvb, cmo + 0, 4, cm->local_comm_id);
		add_val(ct, hf_cm_service_id, tvb, cmo + 8, 8, cm->service_id);
		add_val(ct, hf_cm_local_ca_guid, tvb, cmo + 16, 8, cm->local_ca_guid);
		add_val(ct, hf_cm_local_qkey, tvb, cmo + 28, 4, cm->local_qkey);
		add_val(ct, hf_cm_local_qpn, tvb, cmo + 32, 3, cm->local_qpn);
		add_val(ct, hf_cm_responder_resources, tvb, cmo + 35, 1, cm->responder_resources);
		add_val(ct, hf_cm_initiator_depth, tvb, cmo + 39, 1, cm->initiator_depth);
		add_val(ct, hf_cm_transport, tvb, cmo + 43, 1, cm->transport);
		add_val(ct, hf_cm_starting_psn, tvb, cmo + 44, 3, cm->starting_psn);
		add_val(ct, hf_cm_retry_count, tvb, cmo + 47, 1, cm->retry_count);
		add_val(ct, hf_cm_pkey, tvb, cmo + 48, 2, cm->pkey);
		add_val(ct, hf_cm_path_mtu, tvb, cmo + 50, 1, cm->path_mtu);
		add_val(ct, hf_cm_rnr_retry_count, tvb, cmo + 50, 1, cm->rnr_retry_count);
		add_val(ct, hf_cm_primary_lid_local, tvb, cmo + 52, 2, cm->primary_lid_local);
		add_val(ct, hf_cm_primary_lid_remote, tvb, cmo + 54, 2, cm->primary_lid_remote);
		add_ipv6(ct, hf_cm_primary_gid_local, tvb, cmo + 56, cm->primary_gid_local);
		add_ipv6(ct, hf_cm_primary_gid_remote, tvb, cmo + 72, cm->primary_gid_remote);
		if (pkt->flags & QPT_HAS_CMA_IP) {
			const struct qpt_cma_ip *c = &pkt->cma;
			int p = cmo + 140;
			proto_tree *rt = proto_tree_add_subtree(ct, tvb, p, 36, ett_cm, NULL,
								"RDMA-CM IP private data");

			add_val(rt, hf_cma_version, tvb, p, 1, c->cma_version);
			add_val(rt, hf_cma_ip_version, tvb, p + 1, 1, c->ip_version);
			add_val(rt, hf_cma_src_port, tvb, p + 2, 2, c->port);
			if (c->ip_version == 4) {
				guint32 a, b;

				memcpy(&a, c->src + 12, 4);
				memcpy(&b, c->dst + 12, 4);
				proto_tree_add_ipv4(rt, hf_cma_src_ip, tvb, p + 16, 4, a);
				proto_tree_add_ipv4(rt, hf_cma_dst_ip, tvb, p + 32, 4, b);
			} else {
				add_ipv6(rt, hf_cma_src_ip6, tvb, p + 4, c->src);
				add_ipv6(rt, hf_cma_dst_ip6, tvb, p + 20, c->dst);
			}
			roce_add_gen(rt, hf_cma_dst_port, tvb, c->dst_port);
			roce_add_gen(rt, hf_cma_port_space, tvb, c->port_space);
		}
		break;
	case QPT_CM_REP:
		add_val(ct, hf_cm_local_comm_id, tvb, cmo + 0, 4, cm->local_comm_id);
		add_val(ct, hf_cm_remote_comm_id, tvb, cmo + 4, 4, cm->remote_comm_id);
		add_val(ct, hf_cm_local_qkey, tvb, cmo + 8, 4, cm->local_qkey);
		add_val(ct, hf_cm_local_qpn, tvb, cmo + 12, 3, cm->local_qpn);
		add_val(ct, hf_cm_starting_psn, tvb, cmo + 20, 3, cm->starting_psn);
		add_val(ct, hf_cm_responder_resources, tvb, cmo + 24, 1, cm->responder_resources);
		add_val(ct, hf_cm_initiator_depth, tvb, cmo + 25, 1, cm->initiator_depth);
		proto_tree_add_uint(ct, hf_cm_rnr_retry_count, tvb, cmo + 27, 1,
				    (guint32)cm->rnr_retry_count << 5);
		add_val(ct, hf_cm_local_ca_guid, tvb, cmo + 28, 8, cm->local_ca_guid);
		break;
	case QPT_CM_RTU:
	case QPT_CM_DREP:
		add_val(ct, hf_cm_local_comm_id, tvb, cmo + 0, 4, cm->local_comm_id);
		add_val(ct, hf_cm_remote_comm_id, tvb, cmo + 4, 4, cm->remote_comm_id);
		break;
	case QPT_CM_DREQ:
		add_val(ct, hf_cm_local_comm_id, tvb, cmo + 0, 4, cm->local_comm_id);
		add_val(ct, hf_cm_remote_comm_id, tvb, cmo + 4, 4, cm->remote_comm_id);
		add_val(ct, hf_cm_remote_qpn, tvb, cmo + 8, 3, cm->remote_qpn);
		break;
	case QPT_CM_REJ:
	case QPT_CM_MRA:
		add_val(ct, hf_cm_local_comm_id, tvb, cmo + 0, 4, cm->local_comm_id);
		add_val(ct, hf_cm_remote_comm_id, tvb, cmo + 4, 4, cm->remote_comm_id);
		add_val(ct, hf_cm_msg_rejected, tvb, cmo + 8, 1, cm->msg_rejected);
		if (cm->msg == QPT_CM_REJ)
			add_val(ct, hf_cm_reason, tvb, cmo + 10, 2, cm->reason);
		break;
	case QPT_CM_SIDR_REQ:
		add_val(ct, hf_cm_local_comm_id, tvb, cmo + 0, 4, cm->local_comm_id);
		add_val(ct, hf_cm_pkey, tvb, cmo + 4, 2, cm->pkey);
		add_val(ct, hf_cm_service_id, tvb, cmo + 8, 8, cm->service_id);
		break;
	case QPT_CM_SIDR_REP:
		add_val(ct, hf_cm_local_comm_id, tvb, cmo + 0, 4, cm->local_comm_id);
		add_val(ct, hf_cm_status, tvb, cmo + 4, 1, cm->status);
		add_val(ct, hf_cm_local_qpn, tvb, cmo + 8, 3, cm->local_qpn);
		add_val(ct, hf_cm_service_id, tvb, cmo + 12, 8, cm->service_id);
		add_val(ct, hf_cm_local_qkey, tvb, cmo + 20, 4, cm->local_qkey);
		break;
	case QPT_CM_LAP:
		add_val(ct, hf_cm_local_comm_id, tvb, cmo + 0, 4, cm->local_comm_id);
		add_val(ct, hf_cm_remote_comm_id, tvb, cmo + 4, 4, cm->remote_comm_id);
		add_val(ct, hf_cm_remote_qpn, tvb, cmo + 12, 3, cm->remote_qpn);
		break;
	case QPT_CM_APR:
		add_val(ct, hf_cm_local_comm_id, tvb, cmo + 0, 4, cm->local_comm_id);
		add_val(ct, hf_cm_remote_comm_id, tvb, cmo + 4, 4, cm->remote_comm_id);
		add_val(ct, hf_cm_status, tvb, cmo + 9, 1, cm->status);
		break;
	default:
		break;
	}
}

static void show_mad(proto_tree *t, tvbuff_t *tvb, int mo, const struct qpt_pkt *pkt)
{
	const struct qpt_mad *m = &pkt->mad;
	proto_tree *mt;
	proto_item *mi;

	mi = proto_tree_add_item(t, hf_mad, tvb, mo, (int)pkt->payload_len, ENC_NA);
	mt = proto_item_add_subtree(mi, ett_mad);
	add_val(mt, hf_mad_base_version, tvb, mo + 0, 1, m->base_version);
	add_val(mt, hf_mad_mgmt_class, tvb, mo + 1, 1, m->mgmt_class);
	add_val(mt, hf_mad_class_version, tvb, mo + 2, 1, m->class_version);
	add_val(mt, hf_mad_method, tvb, mo + 3, 1, m->method);
	add_val(mt, hf_mad_status, tvb, mo + 4, 2, m->status);
	add_val(mt, hf_mad_class_specific, tvb, mo + 6, 2, m->class_specific);
	add_val(mt, hf_mad_tid, tvb, mo + 8, 8, m->tid);
	add_val(mt, hf_mad_attr_id, tvb, mo + 16, 2, m->attr_id);
	add_val(mt, hf_mad_attr_mod, tvb, mo + 20, 4, m->attr_mod);
	if (pkt->flags & QPT_HAS_CM) {
		const char *ulp;

		show_cm(mt, tvb, mo + MAD_HDR, pkt);
		if ((pkt->cm.msg == QPT_CM_REQ || pkt->cm.msg == QPT_CM_SIDR_REQ ||
		     pkt->cm.msg == QPT_CM_SIDR_REP) &&
		    (ulp = qpt_sid_ulp(pkt->cm.service_id)) != NULL)
			proto_item_set_generated(proto_tree_add_string(t, hf_roce_ulp, tvb, 0, 0, ulp));
	}
}

/* The payload as bytes: the built-in dissector handed it to the payload
 * heuristics (infiniband.payload) already, and an upper layer found there
 * has its own tree. */
static void show_payload(tvbuff_t *tvb, proto_tree *rt, int off, const struct qpt_pkt *pkt,
			 gboolean quiet)
{
	if (pkt->payload_len)
		hide_if(quiet, proto_tree_add_item(rt, hf_payload, tvb, off, (int)pkt->payload_len, ENC_NA));
}

/* How the frame was delivered: the tunnel a switch mirror or an overlay
 * wrapped it in (Wireshark decodes the outer layers and hands the inner
 * frame over: named from the frame's layers, or from the engine's record
 * when it decoded the whole frame), and a payload or ICRC cut by the
 * capture's snap length (not malformed: the analysis goes on). */
static const char *const tunnel_layers[][2] = {
	{ "mpls", "MPLS" }, { "gre", "GRE" }, { "erspan", "ERSPAN" }, { "vxlan", "VXLAN" },
};
static int tunnel_proto[G_N_ELEMENTS(tunnel_layers)]; /* their ids, at handoff */

static void show_delivery(proto_tree *rt, tvbuff_t *tvb, packet_info *pinfo,
			  const struct qpt_pkt *pkt)
{
	gboolean seen[G_N_ELEMENTS(tunnel_layers)] = { FALSE };
	gboolean any = FALSE;
	wmem_strbuf_t *sb;
	proto_item *it;
	proto_tree *st;

	/* the frame's layers walked once, by protocol id (this runs on
	 * every frame: no name lookups) */
	for (wmem_list_frame_t *f = wmem_list_head(pinfo->layers);
	     f && !(pkt->flags & QPT_HAS_TUNNEL); f = wmem_list_frame_next(f)) {
		int p = GPOINTER_TO_INT(wmem_list_frame_data(f));

		for (size_t i = 0; i < G_N_ELEMENTS(tunnel_layers); i++)
			if (p == tunnel_proto[i] && p > 0)
				any = seen[i] = TRUE;
	}
	if (QPT_LIKELY(!any && !(pkt->flags & QPT_HAS_TUNNEL) && !pkt->cut_by_snaplen))
		return;
	sb = wmem_strbuf_new(pinfo->pool, "");
	if (pkt->flags & QPT_HAS_TUNNEL)
		wmem_strbuf_append(sb, qpt_tunnel_name(pkt->tunnel.kind));
	for (size_t i = 0; i < G_N_ELEMENTS(tunnel_layers); i++)
		if (seen[i])
			wmem_strbuf_append_printf(sb, "%s%s", wmem_strbuf_get_len(sb) ? "/" : "",
						  tunnel_layers[i][1]);
	if (!wmem_strbuf_get_len(sb) && !pkt->cut_by_snaplen)
		return;
	st = proto_tree_add_subtree_format(rt, tvb, 0, 0, ett_delivery, &it, "Delivered%s%s%s",
					   wmem_strbuf_get_len(sb) ? " in " : "",
					   wmem_strbuf_get_str(sb),
					   pkt->cut_by_snaplen ? ", cut by the capture: ICRC not checked" : "");
	proto_item_set_generated(it);
	if (wmem_strbuf_get_len(sb))
		proto_item_set_generated(proto_tree_add_string(st, hf_delivery_tunnel, tvb, 0, 0,
							       wmem_strbuf_get_str(sb)));
	if (pkt->cut_by_snaplen)
		proto_item_set_generated(proto_tree_add_boolean(st, hf_delivery_cut, tvb, 0, 0, TRUE));
}

/* Whether the built-in InfiniBand dissector's tree (4.0 to 4.6) shows this
 * packet's headers (LRH, GRH, BTH and the extended transport headers) with
 * the values the engine read: tests/tshark_diff.py compares them field by
 * field on every capture, and the plugin test checks it on every frame it
 * prints compact.  Its exceptions are the opcodes it does not decode
 * alike (CNP and the other manufacturer opcodes; XRC, whose XRCETH it does
 * not read; RD, whose headers it reads 8 bytes late; FLUSH and ATOMIC
 * WRITE, unknown to 4.0; reserved ones), a malformed packet (the built-in
 * may stop elsewhere), and FECN/BECN, which it shows as a "Reserved" byte.
 * On such a packet the roce header fields are added hidden: still
 * filterable, not printed again (tshark -V, the packet details). */
static gboolean builtin_shows(const struct qpt_pkt *pkt)
{
	const guint8 op = pkt->bth.opcode;

	if (pkt->error != QPT_E_OK || !(pkt->flags & QPT_HAS_BTH) ||
	    pkt->bth.fecn || pkt->bth.becn)
		return FALSE;
	return op <= 0x14 || op == 0x16 || op == 0x17 ||	/* RC */
	       (op >= 0x20 && op <= 0x2b) ||			/* UC */
	       op == 0x64 || op == 0x65;			/* UD */
}

/* The BTH and the extended transport headers (hidden when quiet). */
static void show_bth(proto_tree *rt, tvbuff_t *tvb, const struct qpt_pkt *pkt, int bth,
		     gboolean quiet)
{
	const struct qpt_bth *h = &pkt->bth;
	proto_item *it;
	proto_tree *st;

	if (quiet) /* hidden: its name, not the opcode's too */
		proto_item_set_hidden(it = proto_tree_add_item(rt, hf_bth, tvb, bth, 12, ENC_NA));
	else
		it = proto_tree_add_none_format(rt, hf_bth, tvb, bth, 12,
						"Base Transport Header, %s",
						opcode_name(h->opcode));
	st = proto_item_add_subtree(it, ett_bth);
	add_val(st, hf_bth_opcode, tvb, bth, 1, h->opcode);
	add_val(st, hf_bth_se, tvb, bth + 1, 1, h->se);
	add_val(st, hf_bth_m, tvb, bth + 1, 1, h->m);
	add_val(st, hf_bth_padcnt, tvb, bth + 1, 1, h->pad);
	add_val(st, hf_bth_tver, tvb, bth + 1, 1, h->tver);
	add_val(st, hf_bth_pkey, tvb, bth + 2, 2, h->pkey);
	add_val(st, hf_bth_fecn, tvb, bth + 4, 1, h->fecn);
	add_val(st, hf_bth_becn, tvb, bth + 4, 1, h->becn);
	add_val(st, hf_bth_resv6a, tvb, bth + 4, 1, h->resv8a);
	add_val(st, hf_bth_dqpn, tvb, bth + 5, 3, h->dqpn);
	add_val(st, hf_bth_ackreq, tvb, bth + 8, 1, h->ackreq);
	add_val(st, hf_bth_resv7, tvb, bth + 8, 1, h->resv7);
	add_val(st, hf_bth_psn, tvb, bth + 9, 3, h->psn);

	/* Extended transport headers, at the offsets the opcode table gives. */
#define EXT(bit) (bth + 12 + qpt_hdr_offset(h->opcode, (bit)))
	if (pkt->flags & QPT_H_RDETH) {
		st = proto_tree_add_subtree(rt, tvb, EXT(QPT_H_RDETH), 4, ett_ext, &it, "RDETH");
		hide_if(quiet, it);
		add_val(st, hf_rdeth_eecnxt, tvb, EXT(QPT_H_RDETH) + 1, 3, pkt->rdeth_eecnxt);
	}
	if (pkt->flags & QPT_H_DETH) {
		int o = EXT(QPT_H_DETH);

		st = proto_tree_add_subtree(rt, tvb, o, 8, ett_ext, &it, "DETH");
		hide_if(quiet, it);
		add_val(st, hf_deth_qkey, tvb, o, 4, pkt->deth.qkey);
		add_val(st, hf_deth_sqpn, tvb, o + 5, 3, pkt->deth.sqpn);
	}
	if (pkt->flags & QPT_H_XRCETH) {
		int o = EXT(QPT_H_XRCETH);

		st = proto_tree_add_subtree(rt, tvb, o, 4, ett_ext, &it, "XRCETH");
		hide_if(quiet, it);
		add_val(st, hf_xrceth_srq, tvb, o + 1, 3, pkt->xrceth_srq);
	}
	if (pkt->flags & QPT_H_FETH) {
		int o = EXT(QPT_H_FETH);

		st = proto_tree_add_subtree(rt, tvb, o, 4, ett_ext, &it, "FETH");
		hide_if(quiet, it);
		add_val(st, hf_feth, tvb, o, 4, pkt->feth);
		add_val(st, hf_feth_sel, tvb, o + 3, 1, pkt->feth_sel_level);
		add_val(st, hf_feth_placement, tvb, o + 3, 1, pkt->feth_placement);
	}
	if (pkt->flags & QPT_H_RETH) {
		int o = EXT(QPT_H_RETH);

		st = proto_tree_add_subtree(rt, tvb, o, 16, ett_ext, &it, "RETH");
		hide_if(quiet, it);
		add_val(st, hf_reth_va, tvb, o, 8, pkt->reth.va);
		add_val(st, hf_reth_rkey, tvb, o + 8, 4, pkt->reth.rkey);
		add_val(st, hf_reth_dmalen, tvb, o + 12, 4, pkt->reth.dmalen);
	}
	if (pkt->flags & QPT_H_ATOMICETH) {
		int o = EXT(QPT_H_ATOMICETH);

		st = proto_tree_add_subtree(rt, tvb, o, 28, ett_ext, &it, "AtomicETH");
		hide_if(quiet, it);
		add_val(st, hf_atomiceth_va, tvb, o, 8, pkt->atomiceth.va);
		add_val(st, hf_atomiceth_rkey, tvb, o + 8, 4, pkt->atomiceth.rkey);
		add_val(st, hf_atomiceth_swap, tvb, o + 12, 8, pkt->atomiceth.swap);
		add_val(st, hf_atomiceth_compare, tvb, o + 20, 8, pkt->atomiceth.compare);
	}
	if (pkt->flags & QPT_H_AETH) {
		const struct qpt_aeth *a = &pkt->aeth;
		int o = EXT(QPT_H_AETH);

		st = proto_tree_add_subtree_format(rt, tvb, o, 4, ett_ext, &it, "AETH, %s",
						   val_to_str_const(a->kind, QPT_VALS(qpt_aeth_kind_descr), "?"));
		hide_if(quiet, it);
		add_val(st, hf_aeth_syndrome, tvb, o, 1, a->syndrome);
		add_val(st, hf_aeth_kind, tvb, o, 1, a->kind);
		if (a->kind == QPT_AETH_ACK)
			add_val(st, hf_aeth_credits, tvb, o, 1, a->value);
		else if (a->kind == QPT_AETH_RNR)
			add_val(st, hf_aeth_rnr_timer, tvb, o, 1, a->value);
		else if (a->kind == QPT_AETH_NAK)
			add_val(st, hf_aeth_nak_code, tvb, o, 1, a->value);
		add_val(st, hf_aeth_msn, tvb, o + 1, 3, a->msn);
	}
	if (pkt->flags & QPT_H_ATOMICACKETH) {
		int o = EXT(QPT_H_ATOMICACKETH);

		st = proto_tree_add_subtree(rt, tvb, o, 8, ett_ext, &it, "AtomicAckETH");
		hide_if(quiet, it);
		add_val(st, hf_atomicacketh_orig, tvb, o, 8, pkt->atomicacketh_orig);
	}
	if (pkt->flags & QPT_H_IMMDT)
		hide_if(quiet, add_val(rt, hf_immdt, tvb, EXT(QPT_H_IMMDT), 4, pkt->immdt));
	if (pkt->flags & QPT_H_IETH)
		hide_if(quiet, add_val(rt, hf_ieth, tvb, EXT(QPT_H_IETH), 4, pkt->ieth));
#undef EXT
}

/* Shows a decoded record.  tvb starts at the IBA packet (record offset
 * pkt->off_iba).  Compact (quiet) on a packet whose headers the built-in
 * tree shows (builtin_shows()): one line says what only the plugin knows
 * (the opcode's name, QP, PSN, the ICRC check, the verdicts' tags), then
 * the stream and the analysis when it has something to say; the header
 * fields are there hidden, every roce.* field stays filterable. */
QPT_HOT int roce_show(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree,
		      const struct qpt_pkt *pkt)
{
	const int base = (int)pkt->off_iba;
	const struct qpt_opcode_info *oi = &qpt_opcodes[pkt->bth.opcode];
	roce_frame_t *fi;
	proto_item *ti, *it;
	proto_tree *rt, *st;
	int len = (int)pkt->iba_len, bth, icrc_off = -1, payload_off = -1;
	const gboolean quiet = builtin_shows(pkt);
	/* hidden items left out when nothing would print or look them up */
	const gboolean lean = tree && roce_lean(), skip = quiet && lean;
	/* compact: a right ICRC (and VCRC) is said on the top line only */
	const gboolean icrc_good = quiet && (pkt->flags & QPT_HAS_ICRC) && pkt->icrc_checked &&
				   pkt->icrc_ok;
	const gboolean vcrc_good = icrc_good && (pkt->flags & QPT_HAS_VCRC) && pkt->vcrc_ok;
	const char *tr = val_to_str_const(pkt->transport, QPT_VALS(qpt_transport_names), "?");

	fi = roce_analyse(pinfo, pkt);

	if (len <= 0 || len > (int)tvb_reported_length(tvb))
		len = -1;
	/* the top line, "%s (qptrace), %s QP=0x%06x PSN=%u[, ICRC correct][,
	 * VCRC correct]", written without printf (the verdicts' tags are
	 * appended later); at most 120 characters */
	ti = proto_tree_add_item(tree, proto_roce, tvb, 0, len, ENC_NA);
	{
		char *p = roce_label(ti);

		if (p) {
			p = roce_put_str(roce_put_str(p, tr), " (qptrace)");
			if (pkt->flags & QPT_HAS_BTH) {
				p = roce_put_str(roce_put_str(p, ", "), opcode_name(pkt->bth.opcode));
				p = roce_put_hex6(roce_put_str(p, " QP=0x"), pkt->bth.dqpn & 0xffffff);
				p = roce_put_dec(roce_put_str(p, " PSN="), pkt->bth.psn);
				if (icrc_good)
					p = roce_put_str(p, ", ICRC correct");
				if (vcrc_good)
					p = roce_put_str(p, ", VCRC correct");
			}
		}
	}
	rt = proto_item_add_subtree(ti, ett_roce);
	/* the top line names it */
	if (!lean)
		proto_item_set_hidden(roce_add_gen(rt, hf_transport, tvb, pkt->transport));

	if (QPT_UNLIKELY(pkt->flags & QPT_HAS_LRH && !skip)) { /* (RoCE the most common) */
		const struct qpt_lrh *l = &pkt->lrh;
		int o = 0;

		it = proto_tree_add_item(rt, hf_lrh, tvb, o, 8, ENC_NA);
		hide_if(quiet, it);
		st = proto_item_add_subtree(it, ett_lrh);
		add_val(st, hf_lrh_vl, tvb, o, 1, l->vl);
		add_val(st, hf_lrh_lver, tvb, o, 1, l->lver);
		add_val(st, hf_lrh_sl, tvb, o + 1, 1, l->sl);
		add_val(st, hf_lrh_lnh, tvb, o + 1, 1, l->lnh);
		add_val(st, hf_lrh_dlid, tvb, o + 2, 2, l->dlid);
		add_val(st, hf_lrh_pktlen, tvb, o + 4, 2, l->pktlen);
		add_val(st, hf_lrh_slid, tvb, o + 6, 2, l->slid);
	}
	if (QPT_UNLIKELY(pkt->flags & QPT_HAS_GRH && !skip)) {
		const struct qpt_grh *g = &pkt->grh;
		int o = pkt->flags & QPT_HAS_LRH ? 8 : 0;

		it = proto_tree_add_item(rt, hf_grh, tvb, o, 40, ENC_NA);
		hide_if(quiet, it);
		st = proto_item_add_subtree(it, ett_grh);
		add_val(st, hf_grh_ipver, tvb, o, 4, g->ipver);
		add_val(st, hf_grh_tclass, tvb, o, 4, g->tclass);
		add_val(st, hf_grh_flowlabel, tvb, o, 4, g->flowlabel);
		add_val(st, hf_grh_paylen, tvb, o + 4, 2, g->paylen);
		add_val(st, hf_grh_nxthdr, tvb, o + 6, 1, g->nxthdr);
		add_val(st, hf_grh_hoplmt, tvb, o + 7, 1, g->hoplmt);
		add_ipv6(st, hf_grh_sgid, tvb, o + 8, g->sgid);
		add_ipv6(st, hf_grh_dgid, tvb, o + 24, g->dgid);
	}
	if (pkt->flags & QPT_HAS_BTH) {
		const struct qpt_bth *h = &pkt->bth;

		bth = (int)pkt->off_bth - base;
		if (!skip)
			show_bth(rt, tvb, pkt, bth, quiet);

		/* The built-in dissector has no name for a CNP ("Unknown OpCode"). */
		if (QPT_UNLIKELY(oi->flags & QPT_O_CNP))
			col_append_str(pinfo->cinfo, COL_INFO, " [CNP]");
		/* the built-in's data or upper layer has it */
		if (!skip)
			hide_if(quiet, roce_add_gen(rt, hf_payload_len, tvb, pkt->payload_len));
		if (pkt->flags & QPT_HAS_ICRC) {
			int po = (int)pkt->off_payload - base;

			if (QPT_UNLIKELY(pkt->flags & QPT_HAS_MAD))
				show_mad(rt, tvb, po, pkt);
			else if ((oi->flags & QPT_O_VALID) || (h->opcode & 0xe0) == QPT_SVC_MANUF)
				payload_off = po; /* handed on last, below */
			if (h->pad && !skip)
				hide_if(quiet, proto_tree_add_item(rt, hf_pad, tvb, po + (int)pkt->payload_len,
								   h->pad, ENC_NA));
			icrc_off = po + (int)pkt->payload_len + h->pad;
		}
	} else if (pkt->flags & QPT_HAS_LRH && pkt->error == QPT_E_OK) {
		/* Raw or IPv6 datagram on the IB link: no transport headers
		 * (the built-in dissector decoded what it carries). */
		int end = pkt->lrh.pktlen * 4;

		if (pkt->flags & QPT_HAS_VCRC)
			icrc_off = end - 4; /* no ICRC: VCRC right after */
	}

	/* a right ICRC (VCRC) is hidden: its status says it */
	if (pkt->flags & QPT_HAS_ICRC && icrc_off >= 0 && !(icrc_good && lean)) {
		it = add_val(rt, hf_icrc, tvb, icrc_off, 4, pkt->icrc);
		st = proto_item_add_subtree(it, ett_icrc);
		if (pkt->icrc_checked) {
			proto_item *b;

			if (!icrc_good) /* else hidden: its status says it */
				proto_item_append_text(it, pkt->icrc_ok ? " [correct]" :
							   " [incorrect, should be 0x%08x]",
						       pkt->icrc_computed);
			roce_add_gen(st, hf_icrc_computed, tvb, pkt->icrc_computed);
			b = roce_add_gen(st, hf_icrc_status, tvb, pkt->icrc_ok ? 1 : 0);
			if (QPT_UNLIKELY(!pkt->icrc_ok)) {
				expert_add_info(pinfo, b, &ei_icrc_bad);
				col_append_str(pinfo->cinfo, COL_INFO, " [bad ICRC]");
			} else if (icrc_good) {
				/* the built-in shows the value; the top line says it is right */
				proto_item_set_hidden(it);
			}
		} else {
			proto_item_append_text(it, " [unverified]");
			roce_add_gen(st, hf_icrc_status, tvb, 2);
		}
	}
	if (QPT_UNLIKELY(pkt->flags & QPT_HAS_VCRC && icrc_off >= 0 && !(vcrc_good && lean))) {
		int vo = icrc_off + (pkt->flags & QPT_HAS_ICRC ? 4 : 0);

		it = add_val(rt, hf_vcrc, tvb, vo, 2, pkt->vcrc);
		st = proto_item_add_subtree(it, ett_icrc);
		if (pkt->icrc_checked || !(pkt->flags & QPT_HAS_ICRC)) {
			proto_item *b;

			roce_add_gen(st, hf_vcrc_computed, tvb, pkt->vcrc_computed);
			b = roce_add_gen(st, hf_vcrc_status, tvb, pkt->vcrc_ok ? 1 : 0);
			if (!pkt->vcrc_ok && roce_pref_check_icrc)
				expert_add_info_format(pinfo, b, &ei_vcrc_bad,
						       "Bad VCRC 0x%04x, expected 0x%04x",
						       pkt->vcrc, pkt->vcrc_computed);
			else if (vcrc_good)
				proto_item_set_hidden(it);
		}
	}

	if (QPT_UNLIKELY(pkt->error != QPT_E_OK)) {
		it = proto_tree_add_uint(rt, hf_error, tvb, 0, 0, pkt->error);
		proto_item_set_generated(it);
		expert_add_info_format(pinfo, it,
				       pkt->error == QPT_E_TRUNCATED ? &ei_truncated : &ei_malformed,
				       "%s", qpt_strerror(pkt->error));
		col_append_fstr(pinfo->cinfo, COL_INFO, " [malformed: %s]", qpt_strerror(pkt->error));
	}
	show_delivery(rt, tvb, pinfo, pkt);
	if (fi) {
		roce_show_analysis(tvb, pinfo, rt, ti, fi, lean);
		roce_show_findings(tvb, pinfo, rt);
		tap_queue_packet(roce_tap, pinfo, fi);
	}
	/* Last: the payload goes to the InfiniBand payload heuristics (or
	 * data), which may throw; every RoCE item is in the tree by now. */
	if (payload_off >= 0 && !skip)
		show_payload(tvb, rt, payload_off, pkt, quiet);
	return tvb_captured_length(tvb);
}

/* ---- registration --------------------------------------------------------------- */

void roce_tree_register(void)
{
	static hf_register_info hf[] = {
		{ &hf_transport, { "Transport", "roce.transport", FT_UINT8, BASE_DEC, QPT_VALS(qpt_transport_names), 0, NULL, HFILL } },
		{ &hf_roce_ulp, { "Upper layer (from the CM service ID)", "roce.ulp", FT_STRING, BASE_NONE, NULL, 0, "The protocol the connection's RDMA-CM service ID (TCP port space) names: NVMe-oF 4420, iSER 3260, NFS/RDMA 20049, SMB Direct 445/5445", HFILL } },
		{ &hf_error, { "Decode error", "roce.error", FT_UINT8, BASE_DEC, NULL, 0, "qptrace decoder result code", HFILL } },
		{ &hf_delivery_tunnel, { "Tunnel", "roce.delivery.tunnel", FT_STRING, BASE_NONE, NULL, 0, "The encapsulation a mirror or overlay delivered the frame in", HFILL } },
		{ &hf_delivery_cut, { "Cut by the capture", "roce.delivery.cut_by_capture", FT_BOOLEAN, BASE_NONE, NULL, 0, "The snap length cut the payload or the ICRC: ICRC not checked", HFILL } },
		/* LRH */
		{ &hf_lrh, { "Local Route Header", "roce.lrh", FT_NONE, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_lrh_vl, { "Virtual Lane", "roce.lrh.vl", FT_UINT8, BASE_DEC, NULL, 0xf0, NULL, HFILL } },
		{ &hf_lrh_lver, { "Link Version", "roce.lrh.lver", FT_UINT8, BASE_DEC, NULL, 0x0f, NULL, HFILL } },
		{ &hf_lrh_sl, { "Service Level", "roce.lrh.sl", FT_UINT8, BASE_DEC, NULL, 0xf0, NULL, HFILL } },
		{ &hf_lrh_lnh, { "Link Next Header", "roce.lrh.lnh", FT_UINT8, BASE_DEC, VALS(lnh_vals), 0x03, NULL, HFILL } },
		{ &hf_lrh_dlid, { "Destination LID", "roce.lrh.dlid", FT_UINT16, BASE_DEC, NULL, 0, NULL, HFILL } },
		{ &hf_lrh_pktlen, { "Packet Length (words)", "roce.lrh.pktlen", FT_UINT16, BASE_DEC, NULL, 0x07ff, NULL, HFILL } },
		{ &hf_lrh_slid, { "Source LID", "roce.lrh.slid", FT_UINT16, BASE_DEC, NULL, 0, NULL, HFILL } },
		/* GRH */
		{ &hf_grh, { "Global Route Header", "roce.grh", FT_NONE, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_grh_ipver, { "IP Version", "roce.grh.ipver", FT_UINT32, BASE_DEC, NULL, 0xf0000000, NULL, HFILL } },
		{ &hf_grh_tclass, { "Traffic Class", "roce.grh.tclass", FT_UINT32, BASE_HEX, NULL, 0x0ff00000, NULL, HFILL } },
		{ &hf_grh_flowlabel, { "Flow Label", "roce.grh.flowlabel", FT_UINT32, BASE_HEX, NULL, 0x000fffff, NULL, HFILL } },
		{ &hf_grh_paylen, { "Payload Length", "roce.grh.paylen", FT_UINT16, BASE_DEC, NULL, 0, NULL, HFILL } },
		{ &hf_grh_nxthdr, { "Next Header", "roce.grh.nxthdr", FT_UINT8, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_grh_hoplmt, { "Hop Limit", "roce.grh.hoplmt", FT_UINT8, BASE_DEC, NULL, 0, NULL, HFILL } },
		{ &hf_grh_sgid, { "Source GID", "roce.grh.sgid", FT_IPv6, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_grh_dgid, { "Destination GID", "roce.grh.dgid", FT_IPv6, BASE_NONE, NULL, 0, NULL, HFILL } },
		/* BTH */
		{ &hf_bth, { "Base Transport Header", "roce.bth", FT_NONE, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_bth_opcode, { "Opcode", "roce.bth.opcode", FT_UINT8, BASE_DEC, VALS(opcode_vals), 0, NULL, HFILL } },
		{ &hf_bth_se, { "Solicited Event", "roce.bth.se", FT_BOOLEAN, 8, NULL, 0x80, NULL, HFILL } },
		{ &hf_bth_m, { "MigReq", "roce.bth.m", FT_BOOLEAN, 8, NULL, 0x40, NULL, HFILL } },
		{ &hf_bth_padcnt, { "Pad Count", "roce.bth.padcnt", FT_UINT8, BASE_DEC, NULL, 0x30, NULL, HFILL } },
		{ &hf_bth_tver, { "Header Version", "roce.bth.tver", FT_UINT8, BASE_DEC, NULL, 0x0f, NULL, HFILL } },
		{ &hf_bth_pkey, { "Partition Key", "roce.bth.pkey", FT_UINT16, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_bth_fecn, { "FECN", "roce.bth.fecn", FT_BOOLEAN, 8, NULL, 0x80, NULL, HFILL } },
		{ &hf_bth_becn, { "BECN", "roce.bth.becn", FT_BOOLEAN, 8, NULL, 0x40, NULL, HFILL } },
		{ &hf_bth_resv6a, { "Reserved", "roce.bth.resv6a", FT_UINT8, BASE_HEX, NULL, 0x3f, NULL, HFILL } },
		{ &hf_bth_dqpn, { "Destination Queue Pair", "roce.bth.dqpn", FT_UINT24, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_bth_ackreq, { "Acknowledge Request", "roce.bth.ackreq", FT_BOOLEAN, 8, NULL, 0x80, NULL, HFILL } },
		{ &hf_bth_resv7, { "Reserved", "roce.bth.resv7", FT_UINT8, BASE_HEX, NULL, 0x7f, NULL, HFILL } },
		{ &hf_bth_psn, { "Packet Sequence Number", "roce.bth.psn", FT_UINT24, BASE_DEC, NULL, 0, NULL, HFILL } },
		/* extended headers */
		{ &hf_rdeth_eecnxt, { "EE Context", "roce.rdeth.eecnxt", FT_UINT24, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_deth_qkey, { "Queue Key", "roce.deth.qkey", FT_UINT32, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_deth_sqpn, { "Source Queue Pair", "roce.deth.sqpn", FT_UINT24, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_xrceth_srq, { "XRC SRQ", "roce.xrceth.srq", FT_UINT24, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_feth, { "FLUSH Extended Transport Header", "roce.feth", FT_UINT32, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_feth_sel, { "Selectivity Level", "roce.feth.sel_level", FT_UINT8, BASE_DEC, NULL, 0x30, NULL, HFILL } },
		{ &hf_feth_placement, { "Placement Type", "roce.feth.placement", FT_UINT8, BASE_DEC, NULL, 0x0f, NULL, HFILL } },
		{ &hf_reth_va, { "Virtual Address", "roce.reth.va", FT_UINT64, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_reth_rkey, { "Remote Key", "roce.reth.rkey", FT_UINT32, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_reth_dmalen, { "DMA Length", "roce.reth.dmalen", FT_UINT32, BASE_DEC, NULL, 0, NULL, HFILL } },
		{ &hf_atomiceth_va, { "Virtual Address", "roce.atomiceth.va", FT_UINT64, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_atomiceth_rkey, { "Remote Key", "roce.atomiceth.rkey", FT_UINT32, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_atomiceth_swap, { "Swap (or Add) Data", "roce.atomiceth.swap", FT_UINT64, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_atomiceth_compare, { "Compare Data", "roce.atomiceth.compare", FT_UINT64, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_aeth_syndrome, { "Syndrome", "roce.aeth.syndrome", FT_UINT8, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_aeth_kind, { "Kind", "roce.aeth.kind", FT_UINT8, BASE_DEC, QPT_VALS(qpt_aeth_kind_descr), 0x60, NULL, HFILL } },
		{ &hf_aeth_credits, { "Credit Count", "roce.aeth.credits", FT_UINT8, BASE_DEC, NULL, 0x1f, NULL, HFILL } },
		{ &hf_aeth_rnr_timer, { "RNR Timer", "roce.aeth.rnr_timer", FT_UINT8, BASE_DEC, NULL, 0x1f, NULL, HFILL } },
		{ &hf_aeth_nak_code, { "NAK Code", "roce.aeth.nak_code", FT_UINT8, BASE_DEC, QPT_VALS(qpt_nak_descr), 0x1f, NULL, HFILL } },
		{ &hf_aeth_msn, { "Message Sequence Number", "roce.aeth.msn", FT_UINT24, BASE_DEC, NULL, 0, NULL, HFILL } },
		{ &hf_atomicacketh_orig, { "Original Remote Data", "roce.atomicacketh.orig", FT_UINT64, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_immdt, { "Immediate Data", "roce.immdt", FT_UINT32, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_ieth, { "Invalidate R_Key", "roce.ieth", FT_UINT32, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_payload, { "Payload", "roce.payload", FT_BYTES, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_payload_len, { "Payload Length", "roce.payload_len", FT_UINT32, BASE_DEC, NULL, 0, "Bytes of payload, pad excluded", HFILL } },
		{ &hf_pad, { "Pad", "roce.pad", FT_BYTES, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_icrc, { "Invariant CRC", "roce.icrc", FT_UINT32, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_icrc_computed, { "Calculated ICRC", "roce.icrc.computed", FT_UINT32, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_icrc_status, { "ICRC Status", "roce.icrc.status", FT_UINT8, BASE_NONE, VALS(icrc_status_vals), 0, NULL, HFILL } },
		{ &hf_vcrc, { "Variant CRC", "roce.vcrc", FT_UINT16, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_vcrc_computed, { "Calculated VCRC", "roce.vcrc.computed", FT_UINT16, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_vcrc_status, { "VCRC Status", "roce.vcrc.status", FT_UINT8, BASE_NONE, VALS(icrc_status_vals), 0, NULL, HFILL } },
		/* MAD */
		{ &hf_mad, { "Management Datagram", "roce.mad", FT_NONE, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_mad_base_version, { "Base Version", "roce.mad.base_version", FT_UINT8, BASE_DEC, NULL, 0, NULL, HFILL } },
		{ &hf_mad_mgmt_class, { "Management Class", "roce.mad.mgmt_class", FT_UINT8, BASE_HEX, QPT_VALS(qpt_mad_class_descr), 0, NULL, HFILL } },
		{ &hf_mad_class_version, { "Class Version", "roce.mad.class_version", FT_UINT8, BASE_DEC, NULL, 0, NULL, HFILL } },
		{ &hf_mad_method, { "Method", "roce.mad.method", FT_UINT8, BASE_HEX, QPT_VALS(qpt_mad_method_names), 0, NULL, HFILL } },
		{ &hf_mad_status, { "Status", "roce.mad.status", FT_UINT16, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_mad_class_specific, { "Class Specific", "roce.mad.class_specific", FT_UINT16, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_mad_tid, { "Transaction ID", "roce.mad.tid", FT_UINT64, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_mad_attr_id, { "Attribute ID", "roce.mad.attr_id", FT_UINT16, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_mad_attr_mod, { "Attribute Modifier", "roce.mad.attr_mod", FT_UINT32, BASE_HEX, NULL, 0, NULL, HFILL } },
		/* CM */
		{ &hf_cm_msg, { "CM Message", "roce.cm.msg", FT_UINT16, BASE_HEX, QPT_VALS(qpt_cm_msg_names), 0, NULL, HFILL } },
		{ &hf_cm_local_comm_id, { "Local Communication ID", "roce.cm.local_comm_id", FT_UINT32, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_cm_remote_comm_id, { "Remote Communication ID", "roce.cm.remote_comm_id", FT_UINT32, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_cm_service_id, { "Service ID", "roce.cm.service_id", FT_UINT64, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_cm_local_ca_guid, { "Local CA GUID", "roce.cm.local_ca_guid", FT_UINT64, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_cm_local_qkey, { "Local Q_Key", "roce.cm.local_qkey", FT_UINT32, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_cm_local_qpn, { "Local QPN", "roce.cm.local_qpn", FT_UINT24, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_cm_remote_qpn, { "Remote QPN", "roce.cm.remote_qpn", FT_UINT24, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_cm_starting_psn, { "Starting PSN", "roce.cm.starting_psn", FT_UINT24, BASE_DEC, NULL, 0, NULL, HFILL } },
		{ &hf_cm_transport, { "Transport Service Type", "roce.cm.transport", FT_UINT8, BASE_DEC, VALS(cm_transport_vals), 0x06, NULL, HFILL } },
		{ &hf_cm_path_mtu, { "Path MTU", "roce.cm.path_mtu", FT_UINT8, BASE_DEC, VALS(mtu_vals), 0xf0, NULL, HFILL } },
		{ &hf_cm_pkey, { "Partition Key", "roce.cm.pkey", FT_UINT16, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_cm_responder_resources, { "Responder Resources", "roce.cm.responder_resources", FT_UINT8, BASE_DEC, NULL, 0, NULL, HFILL } },
		{ &hf_cm_initiator_depth, { "Initiator Depth", "roce.cm.initiator_depth", FT_UINT8, BASE_DEC, NULL, 0, NULL, HFILL } },
		{ &hf_cm_retry_count, { "Retry Count", "roce.cm.retry_count", FT_UINT8, BASE_DEC, NULL, 0x07, NULL, HFILL } },
		{ &hf_cm_rnr_retry_count, { "RNR Retry Count", "roce.cm.rnr_retry_count", FT_UINT8, BASE_DEC, NULL, 0, NULL, HFILL } },
		{ &hf_cm_reason, { "Reject Reason", "roce.cm.reason", FT_UINT16, BASE_DEC, QPT_VALS(qpt_cm_rej_reasons), 0, NULL, HFILL } },
		{ &hf_cm_msg_rejected, { "Message Rejected/MRAed", "roce.cm.msg_rejected", FT_UINT8, BASE_DEC, NULL, 0xc0, NULL, HFILL } },
		{ &hf_cm_status, { "Status", "roce.cm.status", FT_UINT8, BASE_DEC, NULL, 0, NULL, HFILL } },
		{ &hf_cm_primary_lid_local, { "Primary Local LID", "roce.cm.primary_lid_local", FT_UINT16, BASE_DEC, NULL, 0, NULL, HFILL } },
		{ &hf_cm_primary_lid_remote, { "Primary Remote LID", "roce.cm.primary_lid_remote", FT_UINT16, BASE_DEC, NULL, 0, NULL, HFILL } },
		{ &hf_cm_primary_gid_local, { "Primary Local GID", "roce.cm.primary_gid_local", FT_IPv6, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_cm_primary_gid_remote, { "Primary Remote GID", "roce.cm.primary_gid_remote", FT_IPv6, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_cma_version, { "RDMA-CM Version", "roce.cm.rdma_cm.version", FT_UINT8, BASE_DEC, NULL, 0, NULL, HFILL } },
		{ &hf_cma_ip_version, { "IP Version", "roce.cm.rdma_cm.ip_version", FT_UINT8, BASE_DEC, NULL, 0xf0, NULL, HFILL } },
		{ &hf_cma_src_port, { "Source Port", "roce.cm.rdma_cm.src_port", FT_UINT16, BASE_DEC, NULL, 0, NULL, HFILL } },
		{ &hf_cma_src_ip, { "Source IP", "roce.cm.rdma_cm.src_ip", FT_IPv4, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_cma_dst_ip, { "Destination IP", "roce.cm.rdma_cm.dst_ip", FT_IPv4, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_cma_src_ip6, { "Source IPv6", "roce.cm.rdma_cm.src_ipv6", FT_IPv6, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_cma_dst_ip6, { "Destination IPv6", "roce.cm.rdma_cm.dst_ipv6", FT_IPv6, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_cma_dst_port, { "Destination Port (from Service ID)", "roce.cm.rdma_cm.dst_port", FT_UINT16, BASE_DEC, NULL, 0, NULL, HFILL } },
		{ &hf_cma_port_space, { "Port Space (from Service ID)", "roce.cm.rdma_cm.port_space", FT_UINT8, BASE_HEX, NULL, 0, NULL, HFILL } },
	};
	static gint *ett[] = {
		&ett_roce, &ett_lrh, &ett_grh, &ett_bth, &ett_ext, &ett_payload,
		&ett_icrc, &ett_mad, &ett_cm, &ett_delivery,
	};
	static ei_register_info ei[] = {
		/* named as TCP's tcp.checksum.bad: the expert info is the filter
		 * (the value is roce.icrc.status); first: its group, severity
		 * and text are set from the verdict table below */
		{ &ei_icrc_bad, { "roce.icrc.bad", PI_CHECKSUM, PI_ERROR, "Bad ICRC", EXPFILL } },
		{ &ei_malformed, { "roce.malformed", PI_MALFORMED, PI_ERROR, "Malformed RoCE/IB packet", EXPFILL } },
		{ &ei_truncated, { "roce.truncated", PI_MALFORMED, PI_WARN, "Truncated RoCE/IB packet", EXPFILL } },
		{ &ei_vcrc_bad, { "roce.vcrc.bad", PI_CHECKSUM, PI_ERROR, "Bad VCRC", EXPFILL } },
	};
	expert_module_t *em;

	/* Opcode names from the engine's one opcode table. */
	for (int i = 0; i < 256; i++) {
		const char *n = qpt_opcodes[i].name;

		opcode_vals[i].value = (guint32)i;
		opcode_vals[i].strptr = n ? n :
				       (i & 0xe0) == QPT_SVC_MANUF ? "Manufacturer specific" :
								    "Reserved";
	}
	opcode_vals[256].value = 0;
	opcode_vals[256].strptr = NULL;


	/* A bad ICRC's expert info is the verdict table's (constant text:
	 * the values are in the ICRC items). */
	roce_expert_of_verdict(&ei[0].eiinfo, QPT_VB_BAD_ICRC);

	proto_register_field_array(proto_roce, hf, array_length(hf));
	proto_register_subtree_array(ett, array_length(ett));
	em = expert_register_protocol(proto_roce);
	expert_register_field_array(em, ei, array_length(ei));
}

void roce_tree_handoff(void)
{
	for (size_t i = 0; i < G_N_ELEMENTS(tunnel_layers); i++)
		tunnel_proto[i] = proto_get_id_by_filter_name(tunnel_layers[i][0]);
}
