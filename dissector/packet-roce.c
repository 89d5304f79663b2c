/* packet-roce.c - RoCEv2 / RoCEv1 / InfiniBand transport, decoded by qptrace
 *
 * This dissector never parses IBA bytes itself.  Every frame is handed to
 * the qptrace engine (qpt_decode(), the same code as `qptrace packets`), and
 * the decoded record (struct qpt_pkt: values plus the offsets off_iba,
 * off_bth, off_payload, ...) is mapped to tree items at those offsets.  The
 * sequence analysis is the engine's too: on the first pass every RoCE/IB
 * packet is fed, in frame order, to one qpt_flow instance per file; its
 * per-packet verdict and events are stored per frame and shown on every
 * pass, so `roce.stream` numbers and `roce.analysis.*` flags are those of
 * `qptrace summary` / `qptrace events`.
 *
 * What the engine is given:
 *   RoCEv2  the IP packet (LINKTYPE_RAW) that carries the UDP datagram.  The
 *           IP header is found in the tvb's data source just before the UDP
 *           header and checked against pinfo's addresses and ports, so
 *           VLANs, SLL, tunnels (VXLAN, GRE, ...) and any link type work
 *           and the ICRC (which covers IP and UDP fields) is computed on
 *           the real header.  The UDP destination port is passed as a RoCE
 *           port, so Decode As / the port range preference work.
 *   RoCEv1  the GRH onwards, behind a synthetic 14-byte Ethernet header of
 *           ethertype 0x8915 (the engine's RoCEv1 entry point; the ICRC of
 *           RoCEv1 does not cover the Ethernet header).
 *   IB      the LRH onwards (LINKTYPE_INFINIBAND), for WTAP_ENCAP_INFINIBAND
 *           and ERF records of type InfiniBand.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define WS_BUILD_DLL
#include <wireshark.h>

#include <epan/conversation.h>
#include <epan/conversation_filter.h>
#include <epan/exceptions.h>
#include <epan/expert.h>
#include <epan/packet.h>
#include <epan/prefs.h>
#include <epan/proto_data.h>
#include <epan/stat_tap_ui.h>
#include <epan/tap.h>
#include <epan/dissectors/packet-infiniband.h>
#include <wiretap/wtap.h>

#include <wsutil/bits_ctz.h>

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "qpt_decode.h"
#include "qpt_flow.h"
#include "qpt_mad.h"
#include "qpt_opcode.h"
#include "ws_compat.h"

void proto_register_roce(void);
void proto_reg_handoff_roce(void);

#define ROCE_UDP_PORT_RANGE "4791"
#define ETHERTYPE_ROCE 0x8915
#define ERF_TYPE_INFINIBAND 21

static int proto_roce = -1;
static int roce_tap = -1;

static dissector_handle_t roce_udp_handle, roce_eth_handle, roce_ib_handle;
static dissector_handle_t data_handle, ipv6_handle, udp_handle;
static dissector_table_t udp_port_table;
static heur_dissector_list_t ib_payload_heur;

/* Preferences. */
static qpt_ws_bool pref_check_icrc = TRUE;
static qpt_ws_bool pref_analyze = TRUE;
static qpt_ws_bool pref_udp_guard = TRUE;

/* ---- fields -------------------------------------------------------------- */

static int hf_transport = -1;
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
static int hf_icrc = -1, hf_icrc_computed = -1, hf_icrc_status = -1, hf_icrc_bad = -1;
static int hf_vcrc = -1, hf_vcrc_computed = -1, hf_vcrc_status = -1, hf_vcrc_bad = -1;
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
/* analysis */
static int hf_stream = -1, hf_dir = -1;
static int hf_an = -1, hf_an_retrans = -1, hf_an_retrans_frame = -1,
	   hf_an_psn_gap = -1, hf_an_psn_gap_first = -1, hf_an_duplicate = -1,
	   hf_an_duplicate_frame = -1, hf_an_ooo = -1, hf_an_nak = -1,
	   hf_an_rnr_nak = -1, hf_an_rnr_retry = -1, hf_an_gbn = -1,
	   hf_an_gbn_trigger = -1, hf_an_timeout_resend = -1, hf_an_read_retry = -1,
	   hf_an_dup_ack = -1, hf_an_coalesced_ack = -1, hf_an_cnp = -1,
	   hf_an_ecn_ce = -1, hf_an_cm_unknown = -1, hf_an_cm_reject = -1, hf_an_ack_rtt = -1,
	   hf_an_acks_frame = -1, hf_an_acked_by = -1, hf_an_read_response_to = -1,
	   hf_msg_length = -1, hf_msg_packets = -1, hf_msg_first_frame = -1,
	   hf_msg_op = -1;

static gint ett_roce = -1, ett_lrh = -1, ett_grh = -1, ett_bth = -1, ett_ext = -1,
	    ett_payload = -1, ett_icrc = -1, ett_mad = -1, ett_cm = -1, ett_an = -1;

static expert_field ei_malformed = EI_INIT;
static expert_field ei_truncated = EI_INIT;
static expert_field ei_icrc_bad = EI_INIT;
static expert_field ei_vcrc_bad = EI_INIT;
static expert_field ei_no_ip = EI_INIT;
static expert_field ei_payload_heur = EI_INIT;
static expert_field ei_retrans = EI_INIT;
static expert_field ei_psn_gap = EI_INIT;
static expert_field ei_duplicate = EI_INIT;
static expert_field ei_ooo = EI_INIT;
static expert_field ei_nak = EI_INIT;
static expert_field ei_rnr_nak = EI_INIT;
static expert_field ei_rnr_retry = EI_INIT;
static expert_field ei_gbn = EI_INIT;
static expert_field ei_timeout = EI_INIT;
static expert_field ei_read_retry = EI_INIT;
static expert_field ei_dup_ack = EI_INIT;
static expert_field ei_cnp = EI_INIT;
static expert_field ei_ecn_ce = EI_INIT;
static expert_field ei_cm_unknown = EI_INIT;
static expert_field ei_cm_reject = EI_INIT;

/* ---- value strings --------------------------------------------------------- */

static value_string opcode_vals[257];

static const value_string transport_vals[] = {
	{ QPT_TR_NONE, "none" },
	{ QPT_TR_ROCEV2, "RoCEv2" },
	{ QPT_TR_ROCEV1, "RoCEv1" },
	{ QPT_TR_IB, "InfiniBand" },
	{ 0, NULL },
};

static const value_string lnh_vals[] = {
	{ 0, "Raw" },
	{ 1, "IP non-IBA transport" },
	{ 2, "IBA local (BTH)" },
	{ 3, "IBA global (GRH)" },
	{ 0, NULL },
};

static const value_string aeth_kind_vals[] = {
	{ QPT_AETH_ACK, "ACK" },
	{ QPT_AETH_RNR, "RNR NAK" },
	{ QPT_AETH_RESERVED, "Reserved" },
	{ QPT_AETH_NAK, "NAK" },
	{ 0, NULL },
};

static const value_string nak_vals[] = {
	{ QPT_NAK_PSN_SEQ_ERR, "PSN Sequence Error" },
	{ QPT_NAK_INVALID_REQ, "Invalid Request" },
	{ QPT_NAK_REMOTE_ACCESS, "Remote Access Error" },
	{ QPT_NAK_REMOTE_OP, "Remote Operational Error" },
	{ QPT_NAK_INVALID_RD, "Invalid RD Request" },
	{ 0, NULL },
};

static const value_string icrc_status_vals[] = {
	{ 0, "Bad" },
	{ 1, "Good" },
	{ 2, "Unverified" },
	{ 0, NULL },
};

static const value_string mad_class_vals[] = {
	{ QPT_MAD_CLASS_SUBN_LID, "Subnet Management (LID routed)" },
	{ QPT_MAD_CLASS_SUBN_ADM, "Subnet Administration" },
	{ QPT_MAD_CLASS_PERF, "Performance Management" },
	{ 0x05, "Baseboard Management" },
	{ 0x06, "Device Management" },
	{ QPT_MAD_CLASS_CM, "Communication Management" },
	{ 0x08, "SNMP Tunneling" },
	{ QPT_MAD_CLASS_SUBN_DR, "Subnet Management (directed route)" },
	{ 0, NULL },
};

static const value_string mad_method_vals[] = {
	{ 0x01, "Get" }, { 0x02, "Set" }, { 0x03, "Send" }, { 0x05, "Trap" },
	{ 0x06, "Report" }, { 0x07, "TrapRepress" }, { 0x12, "GetTable" },
	{ 0x13, "GetTraceTable" }, { 0x14, "GetMulti" }, { 0x15, "Delete" },
	{ 0x81, "GetResp" }, { 0x86, "ReportResp" }, { 0x92, "GetTableResp" },
	{ 0x94, "GetMultiResp" }, { 0x95, "DeleteResp" },
	{ 0, NULL },
};

static const value_string cm_msg_vals[] = {
	{ QPT_CM_CLASSPORTINFO, "ClassPortInfo" },
	{ QPT_CM_REQ, "REQ" },
	{ QPT_CM_MRA, "MRA" },
	{ QPT_CM_REJ, "REJ" },
	{ QPT_CM_REP, "REP" },
	{ QPT_CM_RTU, "RTU" },
	{ QPT_CM_DREQ, "DREQ" },
	{ QPT_CM_DREP, "DREP" },
	{ QPT_CM_SIDR_REQ, "SIDR_REQ" },
	{ QPT_CM_SIDR_REP, "SIDR_REP" },
	{ QPT_CM_LAP, "LAP" },
	{ QPT_CM_APR, "APR" },
	{ 0, NULL },
};

static const value_string cm_transport_vals[] = {
	{ 0, "RC" }, { 1, "UC" }, { 2, "RD" }, { 3, "XRC" }, { 0, NULL },
};

static const value_string mtu_vals[] = {
	{ 1, "256" }, { 2, "512" }, { 3, "1024" }, { 4, "2048" }, { 5, "4096" },
	{ 0, NULL },
};

static const value_string op_vals[] = {
	{ QPT_OP_SEND, "SEND" }, { QPT_OP_SEND_IMM, "SEND_IMM" },
	{ QPT_OP_SEND_INV, "SEND_INV" }, { QPT_OP_WRITE, "WRITE" },
	{ QPT_OP_WRITE_IMM, "WRITE_IMM" }, { QPT_OP_READ, "READ" },
	{ QPT_OP_CMP_SWAP, "CMP_SWAP" }, { QPT_OP_FETCH_ADD, "FETCH_ADD" },
	{ QPT_OP_ATOMIC_WRITE, "ATOMIC_WRITE" }, { QPT_OP_FLUSH, "FLUSH" },
	{ 0, NULL },
};

/* ---- per-file engine state --------------------------------------------------- */

/* What the engine said about one frame (first pass), kept for every pass. */
typedef struct {
	struct qpt_verdict v;
	guint32 events;	  /* QPT_V() bits of the events emitted for this frame */
	guint32 acked_by; /* a later ACK/response that answers this request */
	guint32 key;	  /* index into stream_keys: the half this packet is on */
} roce_frame_t;

static struct qpt_flow *flow;
static gboolean flow_finished;
static wmem_map_t *frame_map;  /* frame number -> roce_frame_t */
static void roce_init(void)
{
	if (flow)
		qpt_flow_free(flow);
	flow = qpt_flow_new(NULL);
	flow_finished = FALSE;
	frame_map = wmem_map_new(wmem_file_scope(), g_direct_hash, g_direct_equal);
}

static void roce_cleanup(void)
{
	/* The flow instance is kept until the next file (or exit) so that
	 * statistics drawn after the last packet can still read it. */
	frame_map = NULL;
}

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

static proto_item *add_gen(proto_tree *t, int hf, tvbuff_t *tvb, guint64 v)
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

static const char *opcode_name(uint8_t op)
{
	return opcode_vals[op].strptr;
}

/* ---- analysis: feed the engine on the first pass --------------------------------- */

static roce_frame_t *analyse(packet_info *pinfo, const struct qpt_pkt *pkt)
{
	roce_frame_t *fi;

	if (!frame_map || !flow)
		return NULL;
	fi = (roce_frame_t *)wmem_map_lookup(frame_map, GUINT_TO_POINTER(pinfo->num));
	if (fi || pinfo->fd->visited || !pref_analyze || pinfo->flags.in_error_pkt)
		return fi;
	fi = wmem_new0(wmem_file_scope(), roce_frame_t);
	qpt_flow_packet(flow, pinfo->num,
			(int64_t)pinfo->abs_ts.secs * 1000000000 + pinfo->abs_ts.nsecs,
			pkt, &fi->v);
	fi->events = fi->v.flags;
	if (fi->v.acks_frame) {
		roce_frame_t *req = (roce_frame_t *)wmem_map_lookup(
			frame_map, GUINT_TO_POINTER((guint)fi->v.acks_frame));

		if (req && !req->acked_by)
			req->acked_by = pinfo->num;
	}
	wmem_map_insert(frame_map, GUINT_TO_POINTER(pinfo->num), fi);
	return fi;
}

#define HAS_V(fi, name) (((fi)->events | (fi)->v.flags) & QPT_V(name))

static void show_analysis(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree,
			  proto_item *top, const roce_frame_t *fi, guint32 psn,
			  guint rej_reason)
{
	const struct qpt_verdict *v = &fi->v;
	proto_tree *at;
	proto_item *it;

	if (v->conv >= 0) {
		add_gen(tree, hf_stream, tvb,
			(guint64)(flow ? qpt_flow_conv_id(flow, v->conv) : v->conv));
		add_gen(tree, hf_dir, tvb, (guint64)v->dir);
	}
	if (!fi->events && !(v->flags & QPT_V(COALESCED_ACK)) && !v->acks_frame &&
	    !fi->acked_by && !v->read_request_frame && !v->msg_first_frame)
		return;
	at = proto_tree_add_subtree(tree, tvb, 0, 0, ett_an, &it, "Sequence analysis (qptrace)");
	proto_item_set_generated(it);

	if (fi->events & QPT_V(RETRANSMISSION)) {
		it = add_gen(at, hf_an_retrans, tvb, 1);
		if (v->original_frame) {
			expert_add_info_format(pinfo, it, &ei_retrans,
					       "Retransmission of PSN %u (first sent in frame %" PRIu64 ")",
					       psn, v->original_frame);
			add_gen(at, hf_an_retrans_frame, tvb, v->original_frame);
		} else {
			expert_add_info_format(pinfo, it, &ei_retrans,
					       "Retransmission of PSN %u", psn);
		}
		col_append_str(pinfo->cinfo, COL_INFO, " [Retransmission]");
		proto_item_append_text(top, " [Retransmission]");
	}
	if (fi->events & QPT_V(DUPLICATE)) {
		it = add_gen(at, hf_an_duplicate, tvb, 1);
		expert_add_info(pinfo, it, &ei_duplicate);
		if (v->original_frame)
			add_gen(at, hf_an_duplicate_frame, tvb, v->original_frame);
		col_append_str(pinfo->cinfo, COL_INFO, " [Duplicate]");
	}
	if (fi->events & QPT_V(PSN_GAP)) {
		it = add_gen(at, hf_an_psn_gap, tvb, v->gap_psns);
		expert_add_info_format(pinfo, it, &ei_psn_gap,
				       "PSN gap: %u PSN(s) missing from %u", v->gap_psns,
				       v->gap_first_psn);
		add_gen(at, hf_an_psn_gap_first, tvb, v->gap_first_psn);
		col_append_str(pinfo->cinfo, COL_INFO, " [PSN gap]");
	}
	if (fi->events & QPT_V(OUT_OF_ORDER)) {
		it = add_gen(at, hf_an_ooo, tvb, 1);
		expert_add_info(pinfo, it, &ei_ooo);
		col_append_str(pinfo->cinfo, COL_INFO, " [Out-of-order]");
	}
	if (fi->events & QPT_V(NAK)) {
		it = add_gen(at, hf_an_nak, tvb, 1);
		expert_add_info(pinfo, it, &ei_nak);
		col_append_str(pinfo->cinfo, COL_INFO, " [NAK]");
	}
	if (fi->events & QPT_V(RNR_NAK)) {
		it = add_gen(at, hf_an_rnr_nak, tvb, 1);
		expert_add_info(pinfo, it, &ei_rnr_nak);
		col_append_str(pinfo->cinfo, COL_INFO, " [RNR NAK]");
	}
	if (fi->events & QPT_V(RNR_RETRY)) {
		it = add_gen(at, hf_an_rnr_retry, tvb, 1);
		expert_add_info(pinfo, it, &ei_rnr_retry);
	}
	if (fi->events & QPT_V(GBN_START)) {
		it = add_gen(at, hf_an_gbn, tvb, v->episode);
		expert_add_info_format(pinfo, it, &ei_gbn,
				       "Go-back-N episode %u starts (resend after %s)",
				       v->episode,
				       HAS_V(fi, TIMEOUT_RESEND) ? "a timeout" : "a NAK");
		if (v->nak_frame)
			add_gen(at, hf_an_gbn_trigger, tvb, v->nak_frame);
		col_append_str(pinfo->cinfo, COL_INFO, " [Go-back-N]");
	}
	if (fi->events & QPT_V(TIMEOUT_RESEND)) {
		it = add_gen(at, hf_an_timeout_resend, tvb, 1);
		expert_add_info(pinfo, it, &ei_timeout);
	}
	if (fi->events & QPT_V(READ_RETRY)) {
		it = add_gen(at, hf_an_read_retry, tvb, 1);
		expert_add_info(pinfo, it, &ei_read_retry);
	}
	if (fi->events & QPT_V(DUP_ACK)) {
		it = add_gen(at, hf_an_dup_ack, tvb, 1);
		expert_add_info(pinfo, it, &ei_dup_ack);
		col_append_str(pinfo->cinfo, COL_INFO, " [Dup ACK]");
	}
	if (HAS_V(fi, COALESCED_ACK))
		add_gen(at, hf_an_coalesced_ack, tvb, 1);
	if (fi->events & QPT_V(CNP)) {
		it = add_gen(at, hf_an_cnp, tvb, 1);
		expert_add_info(pinfo, it, &ei_cnp);
	}
	if (fi->events & QPT_V(ECN_CE)) {
		it = add_gen(at, hf_an_ecn_ce, tvb, 1);
		expert_add_info(pinfo, it, &ei_ecn_ce);
	}
	if (fi->events & QPT_V(CM_UNKNOWN)) {
		it = add_gen(at, hf_an_cm_unknown, tvb, 1);
		expert_add_info(pinfo, it, &ei_cm_unknown);
	}
	if (fi->events & QPT_V(CM_REJECT)) {
		it = add_gen(at, hf_an_cm_reject, tvb, rej_reason);
		expert_add_info_format(pinfo, it, &ei_cm_reject,
				       "CM connection request rejected: reason %u (%s)",
				       rej_reason, qpt_cm_rej_reason_text(rej_reason));
	}
	if (v->acks_frame) {
		add_gen(at, hf_an_acks_frame, tvb, v->acks_frame);
		if (v->ack_rtt_ns >= 0) {
			nstime_t rtt;

			rtt.secs = (time_t)(v->ack_rtt_ns / 1000000000);
			rtt.nsecs = (int)(v->ack_rtt_ns % 1000000000);
			it = proto_tree_add_time(at, hf_an_ack_rtt, tvb, 0, 0, &rtt);
			proto_item_set_generated(it);
		}
	}
	if (fi->acked_by)
		add_gen(at, hf_an_acked_by, tvb, fi->acked_by);
	if (v->read_request_frame)
		add_gen(at, hf_an_read_response_to, tvb, v->read_request_frame);
	if (v->msg_first_frame) {
		add_gen(at, hf_msg_op, tvb, v->msg_op);
		add_gen(at, hf_msg_length, tvb, v->msg_len);
		add_gen(at, hf_msg_packets, tvb, v->msg_packets);
		add_gen(at, hf_msg_first_frame, tvb, v->msg_first_frame);
	}
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
					   val_to_str_const(cm->msg, cm_msg_vals, "?"));
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
			add_gen(rt, hf_cma_dst_port, tvb, c->dst_port);
			add_gen(rt, hf_cma_port_space, tvb, c->port_space);
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

static void show_mad(proto_tree *t, tvbuff_t *tvb, int mo, packet_info *pinfo,
		     const struct qpt_pkt *pkt)
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
		show_cm(mt, tvb, mo + MAD_HDR, pkt);
		col_add_fstr(pinfo->cinfo, COL_INFO, "CM %s",
			     val_to_str_const(pkt->cm.msg, cm_msg_vals, "?"));
		switch (pkt->cm.msg) {
		case QPT_CM_REQ:
			col_append_fstr(pinfo->cinfo, COL_INFO,
					" comm=0x%08x QPN=0x%06x PSN=%u", pkt->cm.local_comm_id,
					pkt->cm.local_qpn, pkt->cm.starting_psn);
			break;
		case QPT_CM_REP:
			col_append_fstr(pinfo->cinfo, COL_INFO,
					" comm=0x%08x remote=0x%08x QPN=0x%06x PSN=%u",
					pkt->cm.local_comm_id, pkt->cm.remote_comm_id,
					pkt->cm.local_qpn, pkt->cm.starting_psn);
			break;
		default:
			col_append_fstr(pinfo->cinfo, COL_INFO, " comm=0x%08x remote=0x%08x",
					pkt->cm.local_comm_id, pkt->cm.remote_comm_id);
			break;
		}
	} else {
		col_add_fstr(pinfo->cinfo, COL_INFO, "MAD %s %s attr=0x%04x",
			     qpt_mad_class_name(m->mgmt_class),
			     qpt_mad_method_name(m->method), m->attr_id);
	}
}

static void show_payload(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree,
			 proto_tree *rt, int off, const struct qpt_pkt *pkt)
{
	tvbuff_t *next;
	heur_dtbl_entry_t *hde;
	struct infinibandinfo info;
	proto_item *pi;
	proto_tree *pt;

	if (!pkt->payload_len)
		return;
	pi = proto_tree_add_item(rt, hf_payload, tvb, off, (int)pkt->payload_len, ENC_NA);
	pt = proto_item_add_subtree(pi, ett_payload);
	next = tvb_new_subset_length_caplen(tvb, off,
					    MIN((int)pkt->payload_len,
						tvb_captured_length_remaining(tvb, off)),
					    (int)pkt->payload_len);
	memset(&info, 0, sizeof(info));
	info.payload_tree = pt;
	info.opCode = pkt->bth.opcode;
	info.pad_count = pkt->bth.pad;
	info.packet_seq_num = pkt->bth.psn;
	if (pkt->flags & QPT_H_RETH) {
		info.reth_remote_key = pkt->reth.rkey;
		info.reth_remote_address = pkt->reth.va;
		info.reth_dma_length = pkt->reth.dmalen;
	}
	if (ib_payload_heur) {
		volatile gboolean found = FALSE;

		/* A heuristic that claims a payload and then throws (RPCoRDMA on a
		 * 4-byte SEND, say) guessed wrong: the RoCE packet is not malformed,
		 * so say so and show the bytes as data. */
		TRY {
			found = dissector_try_heuristic(ib_payload_heur, next, pinfo, tree, &hde, &info);
		}
		CATCH_NONFATAL_ERRORS {
			expert_add_info_format(pinfo, pi, &ei_payload_heur,
					       "A payload heuristic claimed this payload and failed (%s); shown as data",
					       GET_MESSAGE ? GET_MESSAGE :
					       EXCEPT_CODE == ReportedBoundsError ? "past the end of the payload" :
					       EXCEPT_CODE == BoundsError ? "past the captured bytes" : "exception");
			found = FALSE;
		}
		ENDTRY;
		if (found)
			return;
	}
	call_dissector(data_handle, next, pinfo, tree);
}

static void set_ib_addresses(packet_info *pinfo, const struct qpt_pkt *pkt)
{
	if (pkt->flags & QPT_HAS_GRH) {
		alloc_address_wmem(pinfo->pool, &pinfo->src, AT_IB, 16, pkt->grh.sgid);
		alloc_address_wmem(pinfo->pool, &pinfo->dst, AT_IB, 16, pkt->grh.dgid);
	} else if (pkt->flags & QPT_HAS_LRH) {
		guint16 s = pkt->lrh.slid, d = pkt->lrh.dlid;

		alloc_address_wmem(pinfo->pool, &pinfo->src, AT_IB, 2, &s);
		alloc_address_wmem(pinfo->pool, &pinfo->dst, AT_IB, 2, &d);
	}
}

/* Shows a decoded record.  tvb starts at the IBA packet (record offset
 * pkt->off_iba). */
static int show(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree,
		const struct qpt_pkt *pkt)
{
	const int base = (int)pkt->off_iba;
	const struct qpt_opcode_info *oi = &qpt_opcodes[pkt->bth.opcode];
	roce_frame_t *fi;
	proto_item *ti, *it;
	proto_tree *rt, *st;
	int len = (int)pkt->iba_len, bth, icrc_off = -1, payload_off = -1;

	fi = analyse(pinfo, pkt);

	col_set_str(pinfo->cinfo, COL_PROTOCOL,
		    pkt->transport == QPT_TR_IB ? "InfiniBand" :
						  qpt_transport_name(pkt->transport));
	col_clear(pinfo->cinfo, COL_INFO);
	if (pkt->transport != QPT_TR_ROCEV2)
		set_ib_addresses(pinfo, pkt);

	if (len <= 0 || len > (int)tvb_reported_length(tvb))
		len = -1;
	ti = proto_tree_add_protocol_format(tree, proto_roce, tvb, 0, len,
					    "%s (qptrace)",
					    val_to_str_const(pkt->transport, transport_vals, "?"));
	rt = proto_item_add_subtree(ti, ett_roce);
	it = add_gen(rt, hf_transport, tvb, pkt->transport);

	if (pkt->flags & QPT_HAS_LRH) {
		const struct qpt_lrh *l = &pkt->lrh;
		int o = 0;

		it = proto_tree_add_item(rt, hf_lrh, tvb, o, 8, ENC_NA);
		st = proto_item_add_subtree(it, ett_lrh);
		add_val(st, hf_lrh_vl, tvb, o, 1, l->vl);
		add_val(st, hf_lrh_lver, tvb, o, 1, l->lver);
		add_val(st, hf_lrh_sl, tvb, o + 1, 1, l->sl);
		add_val(st, hf_lrh_lnh, tvb, o + 1, 1, l->lnh);
		add_val(st, hf_lrh_dlid, tvb, o + 2, 2, l->dlid);
		add_val(st, hf_lrh_pktlen, tvb, o + 4, 2, l->pktlen);
		add_val(st, hf_lrh_slid, tvb, o + 6, 2, l->slid);
	}
	if (pkt->flags & QPT_HAS_GRH) {
		const struct qpt_grh *g = &pkt->grh;
		int o = pkt->flags & QPT_HAS_LRH ? 8 : 0;

		it = proto_tree_add_item(rt, hf_grh, tvb, o, 40, ENC_NA);
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
		it = proto_tree_add_item(rt, hf_bth, tvb, bth, 12, ENC_NA);
		proto_item_append_text(it, ", %s", opcode_name(h->opcode));
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

		col_add_fstr(pinfo->cinfo, COL_INFO, "%s QP=0x%06x PSN=%u",
			     opcode_name(h->opcode), h->dqpn, h->psn);
		proto_item_append_text(ti, ", %s QP=0x%06x PSN=%u", opcode_name(h->opcode),
				       h->dqpn, h->psn);

		/* Extended transport headers, at the offsets the opcode table gives. */
#define EXT(bit) (bth + 12 + qpt_hdr_offset(h->opcode, (bit)))
		if (pkt->flags & QPT_H_RDETH) {
			st = proto_tree_add_subtree(rt, tvb, EXT(QPT_H_RDETH), 4, ett_ext, NULL, "RDETH");
			add_val(st, hf_rdeth_eecnxt, tvb, EXT(QPT_H_RDETH) + 1, 3, pkt->rdeth_eecnxt);
		}
		if (pkt->flags & QPT_H_DETH) {
			int o = EXT(QPT_H_DETH);

			st = proto_tree_add_subtree(rt, tvb, o, 8, ett_ext, NULL, "DETH");
			add_val(st, hf_deth_qkey, tvb, o, 4, pkt->deth.qkey);
			add_val(st, hf_deth_sqpn, tvb, o + 5, 3, pkt->deth.sqpn);
		}
		if (pkt->flags & QPT_H_XRCETH) {
			int o = EXT(QPT_H_XRCETH);

			st = proto_tree_add_subtree(rt, tvb, o, 4, ett_ext, NULL, "XRCETH");
			add_val(st, hf_xrceth_srq, tvb, o + 1, 3, pkt->xrceth_srq);
		}
		if (pkt->flags & QPT_H_FETH) {
			int o = EXT(QPT_H_FETH);

			st = proto_tree_add_subtree(rt, tvb, o, 4, ett_ext, NULL, "FETH");
			add_val(st, hf_feth, tvb, o, 4, pkt->feth);
			add_val(st, hf_feth_sel, tvb, o + 3, 1, pkt->feth_sel_level);
			add_val(st, hf_feth_placement, tvb, o + 3, 1, pkt->feth_placement);
		}
		if (pkt->flags & QPT_H_RETH) {
			int o = EXT(QPT_H_RETH);

			st = proto_tree_add_subtree(rt, tvb, o, 16, ett_ext, NULL, "RETH");
			add_val(st, hf_reth_va, tvb, o, 8, pkt->reth.va);
			add_val(st, hf_reth_rkey, tvb, o + 8, 4, pkt->reth.rkey);
			add_val(st, hf_reth_dmalen, tvb, o + 12, 4, pkt->reth.dmalen);
		}
		if (pkt->flags & QPT_H_ATOMICETH) {
			int o = EXT(QPT_H_ATOMICETH);

			st = proto_tree_add_subtree(rt, tvb, o, 28, ett_ext, NULL, "AtomicETH");
			add_val(st, hf_atomiceth_va, tvb, o, 8, pkt->atomiceth.va);
			add_val(st, hf_atomiceth_rkey, tvb, o + 8, 4, pkt->atomiceth.rkey);
			add_val(st, hf_atomiceth_swap, tvb, o + 12, 8, pkt->atomiceth.swap);
			add_val(st, hf_atomiceth_compare, tvb, o + 20, 8, pkt->atomiceth.compare);
		}
		if (pkt->flags & QPT_H_AETH) {
			const struct qpt_aeth *a = &pkt->aeth;
			int o = EXT(QPT_H_AETH);

			st = proto_tree_add_subtree_format(rt, tvb, o, 4, ett_ext, NULL, "AETH, %s",
							   val_to_str_const(a->kind, aeth_kind_vals, "?"));
			add_val(st, hf_aeth_syndrome, tvb, o, 1, a->syndrome);
			add_val(st, hf_aeth_kind, tvb, o, 1, a->kind);
			if (a->kind == QPT_AETH_ACK)
				add_val(st, hf_aeth_credits, tvb, o, 1, a->value);
			else if (a->kind == QPT_AETH_RNR)
				add_val(st, hf_aeth_rnr_timer, tvb, o, 1, a->value);
			else if (a->kind == QPT_AETH_NAK)
				add_val(st, hf_aeth_nak_code, tvb, o, 1, a->value);
			add_val(st, hf_aeth_msn, tvb, o + 1, 3, a->msn);
			if (a->kind == QPT_AETH_NAK)
				col_append_fstr(pinfo->cinfo, COL_INFO, " NAK %s",
						qpt_nak_name(a->value));
			else if (a->kind == QPT_AETH_RNR)
				col_append_fstr(pinfo->cinfo, COL_INFO, " RNR-NAK timer=%u", a->value);
			col_append_fstr(pinfo->cinfo, COL_INFO, " MSN=%u", a->msn);
		}
		if (pkt->flags & QPT_H_ATOMICACKETH) {
			int o = EXT(QPT_H_ATOMICACKETH);

			st = proto_tree_add_subtree(rt, tvb, o, 8, ett_ext, NULL, "AtomicAckETH");
			add_val(st, hf_atomicacketh_orig, tvb, o, 8, pkt->atomicacketh_orig);
		}
		if (pkt->flags & QPT_H_IMMDT)
			add_val(rt, hf_immdt, tvb, EXT(QPT_H_IMMDT), 4, pkt->immdt);
		if (pkt->flags & QPT_H_IETH)
			add_val(rt, hf_ieth, tvb, EXT(QPT_H_IETH), 4, pkt->ieth);
#undef EXT
		add_gen(rt, hf_payload_len, tvb, pkt->payload_len);
		if (pkt->flags & QPT_HAS_ICRC) {
			int po = (int)pkt->off_payload - base;

			if (pkt->flags & QPT_HAS_MAD)
				show_mad(rt, tvb, po, pinfo, pkt);
			else if ((oi->flags & QPT_O_VALID) || (h->opcode & 0xe0) == QPT_SVC_MANUF)
				payload_off = po; /* handed on last, below */
			if (h->pad)
				proto_tree_add_item(rt, hf_pad, tvb, po + (int)pkt->payload_len,
						    h->pad, ENC_NA);
			icrc_off = po + (int)pkt->payload_len + h->pad;
		}
	} else if (pkt->flags & QPT_HAS_LRH && pkt->error == QPT_E_OK) {
		/* Raw or IPv6 datagram on the IB link: no transport headers. */
		int o = 8, end = pkt->lrh.pktlen * 4;
		tvbuff_t *next = tvb_new_subset_length(tvb, o, end - o);

		col_add_fstr(pinfo->cinfo, COL_INFO, "LRH %s",
			     val_to_str_const(pkt->lrh.lnh, lnh_vals, "?"));
		if (pkt->lrh.lnh == 1 && ipv6_handle)
			call_dissector(ipv6_handle, next, pinfo, tree);
		else
			call_dissector(data_handle, next, pinfo, tree);
		if (pkt->flags & QPT_HAS_VCRC)
			icrc_off = end - 4; /* no ICRC: VCRC right after */
	}

	if (pkt->flags & QPT_HAS_ICRC && icrc_off >= 0) {
		it = add_val(rt, hf_icrc, tvb, icrc_off, 4, pkt->icrc);
		st = proto_item_add_subtree(it, ett_icrc);
		if (pkt->icrc_checked) {
			proto_item *b;

			proto_item_append_text(it, pkt->icrc_ok ? " [correct]" : " [incorrect, should be 0x%08x]",
					       pkt->icrc_computed);
			add_gen(st, hf_icrc_computed, tvb, pkt->icrc_computed);
			add_gen(st, hf_icrc_status, tvb, pkt->icrc_ok ? 1 : 0);
			if (!pkt->icrc_ok) {
				b = add_gen(st, hf_icrc_bad, tvb, 1);
				expert_add_info_format(pinfo, b, &ei_icrc_bad,
						       "Bad ICRC 0x%08x, expected 0x%08x",
						       pkt->icrc, pkt->icrc_computed);
				col_append_str(pinfo->cinfo, COL_INFO, " [bad ICRC]");
			}
		} else {
			proto_item_append_text(it, " [unverified]");
			add_gen(st, hf_icrc_status, tvb, 2);
		}
	}
	if (pkt->flags & QPT_HAS_VCRC && icrc_off >= 0) {
		int vo = icrc_off + (pkt->flags & QPT_HAS_ICRC ? 4 : 0);

		it = add_val(rt, hf_vcrc, tvb, vo, 2, pkt->vcrc);
		st = proto_item_add_subtree(it, ett_icrc);
		if (pkt->icrc_checked || !(pkt->flags & QPT_HAS_ICRC)) {
			add_gen(st, hf_vcrc_computed, tvb, pkt->vcrc_computed);
			add_gen(st, hf_vcrc_status, tvb, pkt->vcrc_ok ? 1 : 0);
			if (!pkt->vcrc_ok && pref_check_icrc) {
				proto_item *b = add_gen(st, hf_vcrc_bad, tvb, 1);

				expert_add_info_format(pinfo, b, &ei_vcrc_bad,
						       "Bad VCRC 0x%04x, expected 0x%04x",
						       pkt->vcrc, pkt->vcrc_computed);
			}
		}
	}

	if (pkt->error != QPT_E_OK) {
		it = proto_tree_add_uint(rt, hf_error, tvb, 0, 0, pkt->error);
		proto_item_set_generated(it);
		expert_add_info_format(pinfo, it,
				       pkt->error == QPT_E_TRUNCATED ? &ei_truncated : &ei_malformed,
				       "%s", qpt_strerror(pkt->error));
		col_append_fstr(pinfo->cinfo, COL_INFO, " [malformed: %s]", qpt_strerror(pkt->error));
	}
	if (fi) {
		show_analysis(tvb, pinfo, rt, ti, fi, pkt->bth.psn,
			      pkt->flags & QPT_HAS_CM ? pkt->cm.reason : 0);
		tap_queue_packet(roce_tap, pinfo, fi);
	}
	/* Last: the payload goes to the InfiniBand payload heuristics (or
	 * data), which may throw; every RoCE item is in the tree by now. */
	if (payload_off >= 0)
		show_payload(tvb, pinfo, tree, rt, payload_off, pkt);
	return tvb_captured_length(tvb);
}

/* ---- entry points --------------------------------------------------------------- */

static void decode_opts(struct qpt_decode_opts *o, uint16_t *port, guint32 dport)
{
	memset(o, 0, sizeof(*o));
	o->no_crc = !pref_check_icrc;
	if (dport) {
		*port = (uint16_t)dport;
		o->udp_ports = port;
		o->n_udp_ports = 1;
	}
}

/* The IP header just before the UDP header of tvb (the UDP payload), in the
 * data source that backs tvb; checked by the engine's own decode. */
static gboolean decode_rocev2(tvbuff_t *tvb, packet_info *pinfo, struct qpt_pkt *pkt)
{
	tvbuff_t *ds = tvb_get_ds_tvb(tvb);
	gint raw = tvb_raw_offset(tvb), udp = raw - 8;
	struct qpt_decode_opts o;
	uint16_t port;
	gint cand[12], n = 0;

	if (!ds || udp < 20 || (pinfo->src.type != AT_IPv4 && pinfo->src.type != AT_IPv6))
		return FALSE;
	if (pinfo->src.type == AT_IPv4) {
		for (int ihl = 5; ihl <= 15 && udp - 4 * ihl >= 0; ihl++)
			if (tvb_get_uint8(ds, udp - 4 * ihl) == (0x40 | ihl))
				cand[n++] = udp - 4 * ihl;
	} else if (udp >= 40 && (tvb_get_uint8(ds, udp - 40) >> 4) == 6) {
		cand[n++] = udp - 40;
	}
	decode_opts(&o, &port, pinfo->destport);
	for (int i = 0; i < n; i++) {
		guint cap = tvb_captured_length_remaining(ds, cand[i]);
		guint rep = tvb_reported_length_remaining(ds, cand[i]);
		const uint8_t *p = tvb_get_ptr(ds, cand[i], cap);
		int alen = pinfo->src.type == AT_IPv4 ? 4 : 16;

		qpt_decode(pkt, QPT_LINKTYPE_RAW, p, cap, rep, &o);
		if (pkt->transport != QPT_TR_ROCEV2 || pkt->off_iba != (uint32_t)(raw - cand[i]))
			continue;
		if (memcmp(pkt->ip_src + (alen == 4 ? 12 : 0), pinfo->src.data, alen) ||
		    memcmp(pkt->ip_dst + (alen == 4 ? 12 : 0), pinfo->dst.data, alen))
			continue;
		/* Count the whole frame, as `qptrace` does. */
		pkt->wirelen = pinfo->fd->pkt_len;
		pkt->caplen = pinfo->fd->cap_len;
		return TRUE;
	}
	return FALSE;
}

static int dissect_roce_udp(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree,
			    void *data _U_)
{
	struct qpt_pkt *pkt = wmem_new(pinfo->pool, struct qpt_pkt);

	if (!decode_rocev2(tvb, pinfo, pkt)) {
		proto_item *ti;

		if (pinfo->flags.in_error_pkt ||
		    (pinfo->destport != 4791 && pinfo->srcport != 4791))
			return 0; /* quoted in an ICMP error, or a Decode As / range
				   * port that is not RoCE here */
		ti = proto_tree_add_item(tree, proto_roce, tvb, 0, -1, ENC_NA);
		expert_add_info(pinfo, ti, &ei_no_ip);
		call_dissector(data_handle, tvb, pinfo, tree);
		return tvb_captured_length(tvb);
	}
	return show(tvb, pinfo, tree, pkt);
}

static int dissect_roce_eth(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree,
			    void *data _U_)
{
	struct qpt_pkt *pkt = wmem_new(pinfo->pool, struct qpt_pkt);
	guint cap = tvb_captured_length(tvb), rep = tvb_reported_length(tvb);
	uint8_t *buf = (uint8_t *)wmem_alloc0(pinfo->pool, cap + 14);
	struct qpt_decode_opts o;
	uint16_t port;

	/* Synthetic Ethernet header: only its ethertype is read. */
	buf[12] = ETHERTYPE_ROCE >> 8;
	buf[13] = ETHERTYPE_ROCE & 0xff;
	tvb_memcpy(tvb, buf + 14, 0, cap);
	decode_opts(&o, &port, 0);
	qpt_decode(pkt, QPT_LINKTYPE_ETHERNET, buf, cap + 14, rep + 14, &o);
	if (pkt->transport != QPT_TR_ROCEV1)
		return 0;
	pkt->wirelen = pinfo->fd->pkt_len;
	pkt->caplen = pinfo->fd->cap_len;
	return show(tvb, pinfo, tree, pkt);
}

static int dissect_roce_ib(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree,
			   void *data _U_)
{
	struct qpt_pkt *pkt = wmem_new(pinfo->pool, struct qpt_pkt);
	guint cap = tvb_captured_length(tvb), rep = tvb_reported_length(tvb);
	struct qpt_decode_opts o;
	uint16_t port;

	decode_opts(&o, &port, 0);
	qpt_decode(pkt, QPT_LINKTYPE_INFINIBAND, tvb_get_ptr(tvb, 0, cap), cap, rep, &o);
	if (pkt->transport != QPT_TR_IB)
		return 0;
	pkt->wirelen = pinfo->fd->pkt_len;
	pkt->caplen = pinfo->fd->cap_len;
	return show(tvb, pinfo, tree, pkt);
}

/* Two ways a RoCEv2 packet can miss this dissector in Wireshark's UDP:
 *  1. UDP tries the lower port's dissector first, so a packet from a
 *     well-known source port (say 69, TFTP) to 4791 goes to that port's
 *     dissector (RoCE uses the source port as flow entropy);
 *  2. the built-in infiniband dissector re-registers itself on UDP 4791
 *     (or deletes the entry) whenever one of its preferences is applied.
 * UDP does look up a conversation dissector before its port tables.  This
 * guard sits in front of UDP in "ip.proto" and, for those packets only,
 * gives the UDP flow a conversation whose dissector is roce before UDP
 * runs.  A Decode As choice for the port (the table's current handle
 * differs from its registered one) is respected.  Everything else goes
 * straight to UDP. */
static gboolean roce_port_lost(guint32 sport, guint32 dport)
{
	dissector_handle_t cur = dissector_get_uint_handle(udp_port_table, dport);
	range_t *r;

	if (cur == roce_udp_handle) {
		dissector_handle_t low;

		if (!sport || sport >= dport)
			return FALSE;
		low = dissector_get_uint_handle(udp_port_table, sport);
		return low && low != roce_udp_handle;
	}
	r = prefs_get_range_value("roce", "udp.port");
	return r && value_is_in_range(r, dport) &&
	       cur == dissector_get_default_uint_handle("udp.port", dport);
}

static int dissect_udp_guard(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree,
			     void *data)
{
	if (pref_udp_guard && !pinfo->flags.in_error_pkt &&
	    (pinfo->src.type == AT_IPv4 || pinfo->src.type == AT_IPv6) &&
	    tvb_captured_length(tvb) >= 4 && proto_is_protocol_enabled(find_protocol_by_id(proto_roce))) {
		guint32 sport = tvb_get_ntohs(tvb, 0), dport = tvb_get_ntohs(tvb, 2);

		if (roce_port_lost(sport, dport)) {
			conversation_t *c = find_conversation(pinfo->num, &pinfo->src, &pinfo->dst,
							      CONVERSATION_UDP, sport, dport, 0);

			if (!c || conversation_get_dissector(c, pinfo->num) != roce_udp_handle) {
				c = conversation_new(pinfo->num, &pinfo->src, &pinfo->dst,
						     CONVERSATION_UDP, sport, dport, 0);
				conversation_set_dissector(c, roce_udp_handle);
			}
		}
	}
	return call_dissector_with_data(udp_handle, tvb, pinfo, tree, data);
}

/* ---- conversation filter ----------------------------------------------------------- */

static const roce_frame_t *frame_info(packet_info *pinfo)
{
	return frame_map ? (const roce_frame_t *)wmem_map_lookup(frame_map,
								 GUINT_TO_POINTER(pinfo->num)) :
			   NULL;
}

static qpt_ws_bool roce_conv_valid(packet_info *pinfo QPT_WS_CONV_FILTER_UDATA)
{
	const roce_frame_t *fi = frame_info(pinfo);

	return proto_is_frame_protocol(pinfo->layers, "roce") && fi && fi->v.conv >= 0;
}

static gchar *roce_conv_filter(packet_info *pinfo QPT_WS_CONV_FILTER_UDATA)
{
	const roce_frame_t *fi = frame_info(pinfo);

	if (!fi || fi->v.conv < 0)
		return NULL;
	return g_strdup_printf("roce.stream eq %d",
			       flow ? qpt_flow_conv_id(flow, fi->v.conv) : fi->v.conv);
}

/* ---- statistics: -z roce,qp (TShark) and Statistics → RoCE QP Conversations -------- */

/* Both views show the engine's own per-conversation counters (as `qptrace
 * summary`), for the whole file: the engine has seen every packet on the
 * first pass, so a filter does not change the numbers.  A filter (`-z
 * roce,qp,FILTER`, or the dialog's) chooses the rows: the conversations that
 * have a packet it lets through. */

/* The conversations of the packets a statistics tap was given. */
static void seen_add(GHashTable **seen, const void *data)
{
	const roce_frame_t *fi = (const roce_frame_t *)data;

	if (!*seen)
		*seen = g_hash_table_new(NULL, NULL);
	if (fi && fi->v.conv >= 0)
		g_hash_table_add(*seen, GINT_TO_POINTER(fi->v.conv + 1));
}

/* The engine's conversations, those in seen only; ids seen are resolved now
 * (a conversation may have been folded into another since). */
static GPtrArray *seen_conversations(GHashTable *seen)
{
	GPtrArray *all = qpt_flow_conversations(flow), *out = g_ptr_array_new();
	GHashTable *live = g_hash_table_new(NULL, NULL);
	GHashTableIter it;
	gpointer key;

	if (seen) {
		g_hash_table_iter_init(&it, seen);
		while (g_hash_table_iter_next(&it, &key, NULL)) {
			int32_t id = qpt_flow_conv_id(flow, GPOINTER_TO_INT(key) - 1);

			g_hash_table_add(live, GINT_TO_POINTER(id + 1));
		}
	}
	for (guint i = 0; i < all->len; i++) {
		const struct qpt_conv *c = (const struct qpt_conv *)g_ptr_array_index(all, i);

		if (g_hash_table_contains(live, GINT_TO_POINTER(c->id + 1)))
			g_ptr_array_add(out, (gpointer)c);
	}
	g_hash_table_destroy(live);
	g_ptr_array_free(all, TRUE);
	return out;
}

enum {
	QP_COL_CONV, QP_COL_SVC, QP_COL_A, QP_COL_B, QP_COL_PACKETS, QP_COL_BYTES,
	QP_COL_MESSAGES, QP_COL_REXMIT, QP_COL_GAPS, QP_COL_NAKS, QP_COL_RNR,
	QP_COL_CNPS, QP_COL_ECN, QP_COL_RTT, QP_NCOLS
};

static void fmt_ep(const struct qpt_endpoint *e, char *buf, size_t len)
{
	if (e->family == 'L') {
		g_snprintf(buf, (gulong)len, "LID %u", e->addr[0] << 8 | e->addr[1]);
	} else if (e->family == 4) {
		inet_ntop(AF_INET, e->addr + 12, buf, (socklen_t)len);
	} else {
		inet_ntop(AF_INET6, e->addr, buf, (socklen_t)len);
	}
}

static guint64 dir_messages(const struct qpt_dir *d)
{
	guint64 n = 0;

	for (int op = 1; op < QPT_OP_COUNT; op++)
		n += d->ops[op].count;
	return n;
}

static guint64 dir_naks(const struct qpt_dir *d)
{
	guint64 n = 0;

	for (int i = 0; i < 5; i++)
		n += d->naks[i];
	return n;
}

static void fmt_rtt(const struct qpt_lat *l, char *buf, size_t len)
{
	if (l->n)
		g_snprintf(buf, (gulong)len, "%.3f", qpt_lat_percentile(l, 50));
	else
		g_strlcpy(buf, "-", len);
}

#define QP_CELL 96

/* The text of every column of one conversation ("a->b/b->a" pairs). */
static void qp_cells(const struct qpt_conv *c, char cell[QP_NCOLS][QP_CELL])
{
	const struct qpt_dir *a = &c->dir[0], *b = &c->dir[1];
	char e0[64], e1[64], r0[32], r1[32];

	fmt_ep(&c->ep[0], e0, sizeof(e0));
	fmt_ep(&c->ep[1], e1, sizeof(e1));
	g_snprintf(cell[QP_COL_CONV], QP_CELL, "%d", c->id);
	g_strlcpy(cell[QP_COL_SVC], c->transport[0] ? c->transport : "?", QP_CELL);
	if (c->ep[0].qpn_known)
		g_snprintf(cell[QP_COL_A], QP_CELL, "%s 0x%06x", e0, c->ep[0].qpn);
	else
		g_snprintf(cell[QP_COL_A], QP_CELL, "%s ?", e0);
	g_snprintf(cell[QP_COL_B], QP_CELL, "%s 0x%06x", e1, c->ep[1].qpn);
#define PAIR(col, x, y) \
	g_snprintf(cell[col], QP_CELL, "%" PRIu64 "/%" PRIu64, (guint64)(x), (guint64)(y))
	PAIR(QP_COL_PACKETS, a->packets, b->packets);
	PAIR(QP_COL_BYTES, a->payload_bytes, b->payload_bytes);
	PAIR(QP_COL_MESSAGES, dir_messages(a), dir_messages(b));
	PAIR(QP_COL_REXMIT, a->retransmitted_packets, b->retransmitted_packets);
	PAIR(QP_COL_GAPS, a->psn_gaps, b->psn_gaps);
	PAIR(QP_COL_NAKS, dir_naks(a), dir_naks(b));
	PAIR(QP_COL_RNR, a->rnr_naks, b->rnr_naks);
	PAIR(QP_COL_CNPS, a->cnps, b->cnps);
	PAIR(QP_COL_ECN, a->ecn_ce, b->ecn_ce);
#undef PAIR
	fmt_rtt(&a->ack_rtt, r0, sizeof(r0));
	fmt_rtt(&b->ack_rtt, r1, sizeof(r1));
	g_snprintf(cell[QP_COL_RTT], QP_CELL, "%s/%s", r0, r1);
}

/* Column titles and alignment, shared by the TShark text and the GUI table. */
static stat_tap_table_item qp_fields[QP_NCOLS] = {
	{ TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, "Conv", "%u" },
	{ TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "Svc", "%s" },
	{ TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "A (addr QP)", "%s" },
	{ TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "B (addr QP)", "%s" },
	{ TABLE_ITEM_STRING, TAP_ALIGN_RIGHT, "Packets", "%s" },
	{ TABLE_ITEM_STRING, TAP_ALIGN_RIGHT, "Payload bytes", "%s" },
	{ TABLE_ITEM_STRING, TAP_ALIGN_RIGHT, "Messages", "%s" },
	{ TABLE_ITEM_STRING, TAP_ALIGN_RIGHT, "Rexmit", "%s" },
	{ TABLE_ITEM_STRING, TAP_ALIGN_RIGHT, "Gaps", "%s" },
	{ TABLE_ITEM_STRING, TAP_ALIGN_RIGHT, "NAKs", "%s" },
	{ TABLE_ITEM_STRING, TAP_ALIGN_RIGHT, "RNR", "%s" },
	{ TABLE_ITEM_STRING, TAP_ALIGN_RIGHT, "CNPs", "%s" },
	{ TABLE_ITEM_STRING, TAP_ALIGN_RIGHT, "ECN-CE", "%s" },
	{ TABLE_ITEM_STRING, TAP_ALIGN_RIGHT, "ACK RTT us", "%s" },
};

/* TShark: its own text layout (one line per conversation, stable since the
 * first version of the plugin), printed once after the last packet. */

static GHashTable *qp_seen;	/* conversations of the packets tapped */
static char *qp_filter;		/* -z roce,qp,FILTER */

static tap_packet_status qp_packet(void *tapdata _U_, packet_info *pinfo _U_,
				   epan_dissect_t *edt _U_, const void *data,
				   tap_flags_t flags _U_)
{
	seen_add(&qp_seen, data);
	return TAP_PACKET_DONT_REDRAW;
}

static void qp_draw(void *tapdata _U_)
{
	static const int width[QP_NCOLS] = { 5, 4, 34, 34, 13, 17, 11, 9, 7, 7, 7, 7, 7, 0 };
	GPtrArray *convs;

	printf("==================================================================================\n");
	printf("RoCE QP conversations (qptrace engine)\n");
	printf("Values are a->b/b->a; RTT is the ACK RTT median in microseconds.\n");
	if (qp_filter)
		printf("Filter: %s (conversations with a packet it matches)\n", qp_filter);
	if (!flow) {
		printf("(no data)\n");
		printf("==================================================================================\n");
		return;
	}
	if (!flow_finished) {
		qpt_flow_finish(flow);
		flow_finished = TRUE;
	}
	convs = seen_conversations(qp_seen);
	for (int col = 0; col < QP_NCOLS; col++) {
		if (width[col])
			printf("%-*s ", width[col], qp_fields[col].column_name);
		else
			printf("%s\n", qp_fields[col].column_name);
	}
	for (guint i = 0; i < convs->len; i++) {
		char cell[QP_NCOLS][QP_CELL];

		qp_cells((const struct qpt_conv *)g_ptr_array_index(convs, i), cell);
		for (int col = 0; col < QP_NCOLS; col++) {
			if (width[col])
				printf("%-*s ", width[col], cell[col]);
			else
				printf("%s\n", cell[col]);
		}
	}
	printf("%u conversation(s)\n", convs->len);
	printf("==================================================================================\n");
	g_ptr_array_free(convs, TRUE);
}

static int qp_stats_dummy;

static qpt_ws_tap_init_ret qp_init(const char *opt_arg, void *userdata _U_)
{
	GString *err;

	if (opt_arg && g_str_has_prefix(opt_arg, "roce,qp,") && opt_arg[8]) {
		g_free(qp_filter);
		qp_filter = g_strdup(opt_arg + 8);
	}
	err = register_tap_listener("roce", &qp_stats_dummy, qp_filter, 0, NULL, qp_packet,
				    qp_draw, NULL);
	if (err) {
		fprintf(stderr, "tshark: couldn't register roce,qp tap: %s\n", err->str);
		g_string_free(err, TRUE);
		exit(1);
	}
	QPT_WS_TAP_INIT_OK;
}

/* Registered before the table below, so it owns "-z roce,qp" (the first
 * registration of a -z name wins): TShark keeps the text layout above. */
static stat_tap_ui qp_ui = {
	REGISTER_PACKET_STAT_GROUP_UNSORTED,
	"RoCE QP Conversations",
	"roce,qp",
	qp_init,
	0,
	NULL,
};

/* Wireshark: the same rows as a stat_tap_table, which the GUI lists under
 * Statistics (REGISTER_PACKET_STAT_GROUP_UNSORTED; Wireshark 4.0 puts GENERIC ones in
 * no menu) and shows in its sortable table
 * dialog.  The GUI has no "draw" hook for the dissector, so the rows are
 * (re)built from the engine on the first tapped packet after a reset, and
 * again only if the engine has seen more frames since (live capture). */

#define QP_TABLE_NAME "RoCE QP conversations (qptrace engine)"

static guint64 qp_table_frames = G_MAXUINT64; /* engine frames when last built */
static GHashTable *qp_table_seen;	       /* conversations of the packets tapped */
static guint qp_table_nseen;		       /* their number when last built */

static void qp_table_reset(stat_tap_table *table)
{
	for (guint row = 0; row < table->num_elements; row++) {
		stat_tap_table_item_type *f = table->elements[row];

		for (guint col = 0; col < table->num_fields; col++) {
			if (f[col].type == TABLE_ITEM_STRING) {
				g_free((char *)f[col].value.string_value);
				f[col].value.string_value = NULL;
			}
		}
		g_free(f);
		table->elements[row] = NULL;
	}
	table->num_elements = 0;
	qp_table_frames = G_MAXUINT64;
	if (qp_table_seen)
		g_hash_table_remove_all(qp_table_seen);
}

static void qp_table_free_item(stat_tap_table *table _U_, guint row _U_, guint col _U_,
			       stat_tap_table_item_type *field)
{
	if (field->type == TABLE_ITEM_STRING) {
		g_free((char *)field->value.string_value);
		field->value.string_value = NULL;
	}
}

static void qp_table_init(stat_tap_table_ui *ui)
{
	stat_tap_table *table = stat_tap_find_table(ui, QP_TABLE_NAME);

	if (table) {
		qp_table_reset(table);
		return;
	}
	table = stat_tap_init_table(QP_TABLE_NAME, QP_NCOLS, 0, NULL);
	stat_tap_add_table(ui, table);
	qp_table_frames = G_MAXUINT64;
}

static void qp_table_build(stat_tap_table *table)
{
	GPtrArray *convs = seen_conversations(qp_table_seen);
	guint row;

	for (row = 0; row < convs->len || row < table->num_elements; row++) {
		stat_tap_table_item_type items[QP_NCOLS];
		char cell[QP_NCOLS][QP_CELL];
		const struct qpt_conv *c = row < convs->len ?
			(const struct qpt_conv *)g_ptr_array_index(convs, row) : NULL;

		if (c)
			qp_cells(c, cell);
		memset(items, 0, sizeof(items));
		for (int col = 0; col < QP_NCOLS; col++) {
			items[col].type = qp_fields[col].type;
			if (col == QP_COL_CONV)
				items[col].value.uint_value = c ? (guint)c->id : 0;
			else
				items[col].value.string_value = g_strdup(c ? cell[col] : "");
		}
		/* Rows already shown by the GUI keep their storage: free the old
		 * strings and overwrite the values in place. */
		if (row < table->num_elements) {
			for (guint col = 0; col < QP_NCOLS; col++)
				qp_table_free_item(table, row, col, &table->elements[row][col]);
		}
		stat_tap_init_table_row(table, row, QP_NCOLS, items);
	}
	g_ptr_array_free(convs, TRUE);
}

static tap_packet_status qp_table_packet(void *tapdata, packet_info *pinfo _U_,
					 epan_dissect_t *edt _U_, const void *data,
					 tap_flags_t flags _U_)
{
	stat_data_t *sd = (stat_data_t *)tapdata;
	stat_tap_table *table;
	guint64 frames;

	if (!flow || !sd->stat_tap_data->tables || sd->stat_tap_data->tables->len == 0)
		return TAP_PACKET_DONT_REDRAW;
	seen_add(&qp_table_seen, data);
	frames = qpt_flow_totals(flow)->frames;
	if (frames == qp_table_frames && g_hash_table_size(qp_table_seen) == qp_table_nseen)
		return TAP_PACKET_DONT_REDRAW;
	table = g_array_index(sd->stat_tap_data->tables, stat_tap_table *, 0);
	qp_table_build(table);
	qp_table_frames = frames;
	qp_table_nseen = g_hash_table_size(qp_table_seen);
	return TAP_PACKET_REDRAW;
}

static tap_param qp_table_params[] = {
	{ PARAM_FILTER, "filter", "Filter", NULL, TRUE },
};

static stat_tap_table_ui qp_table_ui = {
	REGISTER_PACKET_STAT_GROUP_UNSORTED,
	"RoCE QP Conversations",
	"roce",
	"roce,qp",
	qp_table_init,
	qp_table_packet,
	qp_table_reset,
	qp_table_free_item,
	NULL,
	QP_NCOLS, qp_fields,
	array_length(qp_table_params), qp_table_params,
	NULL,
	0,
};

/* ---- registration --------------------------------------------------------------- */

void proto_register_roce(void)
{
	static hf_register_info hf[] = {
		{ &hf_transport, { "Transport", "roce.transport", FT_UINT8, BASE_DEC, VALS(transport_vals), 0, NULL, HFILL } },
		{ &hf_error, { "Decode error", "roce.error", FT_UINT8, BASE_DEC, NULL, 0, "qptrace decoder result code", HFILL } },
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
		{ &hf_aeth_kind, { "Kind", "roce.aeth.kind", FT_UINT8, BASE_DEC, VALS(aeth_kind_vals), 0x60, NULL, HFILL } },
		{ &hf_aeth_credits, { "Credit Count", "roce.aeth.credits", FT_UINT8, BASE_DEC, NULL, 0x1f, NULL, HFILL } },
		{ &hf_aeth_rnr_timer, { "RNR Timer", "roce.aeth.rnr_timer", FT_UINT8, BASE_DEC, NULL, 0x1f, NULL, HFILL } },
		{ &hf_aeth_nak_code, { "NAK Code", "roce.aeth.nak_code", FT_UINT8, BASE_DEC, VALS(nak_vals), 0x1f, NULL, HFILL } },
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
		{ &hf_icrc_bad, { "Bad ICRC", "roce.icrc.bad", FT_BOOLEAN, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_vcrc, { "Variant CRC", "roce.vcrc", FT_UINT16, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_vcrc_computed, { "Calculated VCRC", "roce.vcrc.computed", FT_UINT16, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_vcrc_status, { "VCRC Status", "roce.vcrc.status", FT_UINT8, BASE_NONE, VALS(icrc_status_vals), 0, NULL, HFILL } },
		{ &hf_vcrc_bad, { "Bad VCRC", "roce.vcrc.bad", FT_BOOLEAN, BASE_NONE, NULL, 0, NULL, HFILL } },
		/* MAD */
		{ &hf_mad, { "Management Datagram", "roce.mad", FT_NONE, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_mad_base_version, { "Base Version", "roce.mad.base_version", FT_UINT8, BASE_DEC, NULL, 0, NULL, HFILL } },
		{ &hf_mad_mgmt_class, { "Management Class", "roce.mad.mgmt_class", FT_UINT8, BASE_HEX, VALS(mad_class_vals), 0, NULL, HFILL } },
		{ &hf_mad_class_version, { "Class Version", "roce.mad.class_version", FT_UINT8, BASE_DEC, NULL, 0, NULL, HFILL } },
		{ &hf_mad_method, { "Method", "roce.mad.method", FT_UINT8, BASE_HEX, VALS(mad_method_vals), 0, NULL, HFILL } },
		{ &hf_mad_status, { "Status", "roce.mad.status", FT_UINT16, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_mad_class_specific, { "Class Specific", "roce.mad.class_specific", FT_UINT16, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_mad_tid, { "Transaction ID", "roce.mad.tid", FT_UINT64, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_mad_attr_id, { "Attribute ID", "roce.mad.attr_id", FT_UINT16, BASE_HEX, NULL, 0, NULL, HFILL } },
		{ &hf_mad_attr_mod, { "Attribute Modifier", "roce.mad.attr_mod", FT_UINT32, BASE_HEX, NULL, 0, NULL, HFILL } },
		/* CM */
		{ &hf_cm_msg, { "CM Message", "roce.cm.msg", FT_UINT16, BASE_HEX, VALS(cm_msg_vals), 0, NULL, HFILL } },
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
		{ &hf_cm_reason, { "Reject Reason", "roce.cm.reason", FT_UINT16, BASE_DEC, NULL, 0, NULL, HFILL } },
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
		/* analysis */
		{ &hf_stream, { "Stream index", "roce.stream", FT_UINT32, BASE_DEC, NULL, 0, "qptrace conversation id (as in `qptrace summary`)", HFILL } },
		{ &hf_dir, { "Direction", "roce.direction", FT_UINT8, BASE_DEC, NULL, 0, "0: a->b, 1: b->a (as in `qptrace summary`)", HFILL } },
		{ &hf_an, { "Sequence analysis", "roce.analysis", FT_NONE, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_an_retrans, { "Retransmission", "roce.analysis.retransmission", FT_BOOLEAN, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_an_retrans_frame, { "Retransmitted frame", "roce.analysis.retransmitted_frame", FT_FRAMENUM, BASE_NONE, FRAMENUM_TYPE(FT_FRAMENUM_RETRANS_PREV), 0, "First transmission of this PSN", HFILL } },
		{ &hf_an_psn_gap, { "PSN gap (missing PSNs)", "roce.analysis.psn_gap", FT_UINT32, BASE_DEC, NULL, 0, NULL, HFILL } },
		{ &hf_an_psn_gap_first, { "First missing PSN", "roce.analysis.psn_gap.first", FT_UINT24, BASE_DEC, NULL, 0, NULL, HFILL } },
		{ &hf_an_duplicate, { "Duplicate (capture)", "roce.analysis.duplicate", FT_BOOLEAN, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_an_duplicate_frame, { "Duplicate of frame", "roce.analysis.duplicate_of", FT_FRAMENUM, BASE_NONE, FRAMENUM_TYPE(FT_FRAMENUM_RETRANS_PREV), 0, NULL, HFILL } },
		{ &hf_an_ooo, { "Out of order", "roce.analysis.out_of_order", FT_BOOLEAN, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_an_nak, { "NAK", "roce.analysis.nak", FT_BOOLEAN, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_an_rnr_nak, { "RNR NAK", "roce.analysis.rnr_nak", FT_BOOLEAN, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_an_rnr_retry, { "Resend after RNR NAK", "roce.analysis.rnr_retry", FT_BOOLEAN, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_an_gbn, { "Go-back-N episode", "roce.analysis.gbn_episode", FT_UINT32, BASE_DEC, NULL, 0, "1-based episode number of this direction", HFILL } },
		{ &hf_an_gbn_trigger, { "Triggered by frame", "roce.analysis.gbn_trigger_frame", FT_FRAMENUM, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_an_timeout_resend, { "Resend after a timeout", "roce.analysis.timeout_resend", FT_BOOLEAN, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_an_read_retry, { "READ retry", "roce.analysis.read_retry", FT_BOOLEAN, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_an_dup_ack, { "Duplicate ACK", "roce.analysis.duplicate_ack", FT_BOOLEAN, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_an_coalesced_ack, { "Coalesced ACK", "roce.analysis.coalesced_ack", FT_BOOLEAN, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_an_cnp, { "Congestion notification", "roce.analysis.cnp", FT_BOOLEAN, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_an_ecn_ce, { "ECN Congestion Experienced", "roce.analysis.ecn_ce", FT_BOOLEAN, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_an_cm_unknown, { "CM message for an unknown communication ID", "roce.analysis.cm_unknown", FT_BOOLEAN, BASE_NONE, NULL, 0, NULL, HFILL } },
		{ &hf_an_cm_reject, { "CM connection request rejected (reason)", "roce.analysis.cm_reject", FT_UINT16, BASE_DEC, NULL, 0, "REJ reason of a rejected CM connection request", HFILL } },
		{ &hf_an_ack_rtt, { "ACK RTT", "roce.analysis.ack_rtt", FT_RELATIVE_TIME, BASE_NONE, NULL, 0, "Time since the request this ACK/response answers", HFILL } },
		{ &hf_an_acks_frame, { "This is an ACK/response to frame", "roce.analysis.acks_frame", FT_FRAMENUM, BASE_NONE, FRAMENUM_TYPE(FT_FRAMENUM_ACK), 0, NULL, HFILL } },
		{ &hf_an_acked_by, { "Acknowledged by frame", "roce.analysis.acked_by", FT_FRAMENUM, BASE_NONE, FRAMENUM_TYPE(FT_FRAMENUM_RESPONSE), 0, NULL, HFILL } },
		{ &hf_an_read_response_to, { "READ response to frame", "roce.analysis.read_response_to", FT_FRAMENUM, BASE_NONE, FRAMENUM_TYPE(FT_FRAMENUM_REQUEST), 0, NULL, HFILL } },
		{ &hf_msg_op, { "Message operation", "roce.message.op", FT_UINT8, BASE_DEC, VALS(op_vals), 0, NULL, HFILL } },
		{ &hf_msg_length, { "Message length", "roce.message.length", FT_UINT32, BASE_DEC, NULL, 0, "Bytes of the message this packet completes", HFILL } },
		{ &hf_msg_packets, { "Message packets", "roce.message.packets", FT_UINT32, BASE_DEC, NULL, 0, NULL, HFILL } },
		{ &hf_msg_first_frame, { "Message first frame", "roce.message.first_frame", FT_FRAMENUM, BASE_NONE, NULL, 0, NULL, HFILL } },
	};
	static gint *ett[] = {
		&ett_roce, &ett_lrh, &ett_grh, &ett_bth, &ett_ext, &ett_payload,
		&ett_icrc, &ett_mad, &ett_cm, &ett_an,
	};
	static ei_register_info ei[] = {
		{ &ei_malformed, { "roce.malformed", PI_MALFORMED, PI_ERROR, "Malformed RoCE/IB packet", EXPFILL } },
		{ &ei_truncated, { "roce.truncated", PI_MALFORMED, PI_WARN, "Truncated RoCE/IB packet", EXPFILL } },
		{ &ei_icrc_bad, { "roce.icrc.bad.expert", PI_CHECKSUM, PI_ERROR, "Bad ICRC", EXPFILL } },
		{ &ei_vcrc_bad, { "roce.vcrc.bad.expert", PI_CHECKSUM, PI_ERROR, "Bad VCRC", EXPFILL } },
		{ &ei_no_ip, { "roce.no_ip_header", PI_UNDECODED, PI_WARN, "Cannot locate the IP header of this RoCEv2 packet (fragmented or reassembled?)", EXPFILL } },
		{ &ei_payload_heur, { "roce.payload.heuristic_failed", PI_UNDECODED, PI_NOTE, "Payload heuristic failed", EXPFILL } },
		{ &ei_retrans, { "roce.analysis.retransmission.expert", PI_SEQUENCE, PI_NOTE, "Retransmission", EXPFILL } },
		{ &ei_psn_gap, { "roce.analysis.psn_gap.expert", PI_SEQUENCE, PI_WARN, "PSN gap", EXPFILL } },
		{ &ei_duplicate, { "roce.analysis.duplicate.expert", PI_SEQUENCE, PI_NOTE, "Duplicate packet (same PSN and contents, seen twice by the capture)", EXPFILL } },
		{ &ei_ooo, { "roce.analysis.out_of_order.expert", PI_SEQUENCE, PI_WARN, "Out-of-order packet", EXPFILL } },
		{ &ei_nak, { "roce.analysis.nak.expert", PI_SEQUENCE, PI_WARN, "NAK", EXPFILL } },
		{ &ei_rnr_nak, { "roce.analysis.rnr_nak.expert", PI_SEQUENCE, PI_WARN, "RNR NAK (receiver not ready)", EXPFILL } },
		{ &ei_rnr_retry, { "roce.analysis.rnr_retry.expert", PI_SEQUENCE, PI_NOTE, "Resend after an RNR NAK", EXPFILL } },
		{ &ei_gbn, { "roce.analysis.gbn_episode.expert", PI_SEQUENCE, PI_WARN, "Go-back-N episode starts", EXPFILL } },
		{ &ei_timeout, { "roce.analysis.timeout_resend.expert", PI_SEQUENCE, PI_WARN, "Resend after a silence (local ACK timeout)", EXPFILL } },
		{ &ei_read_retry, { "roce.analysis.read_retry.expert", PI_SEQUENCE, PI_NOTE, "READ request retried", EXPFILL } },
		{ &ei_dup_ack, { "roce.analysis.duplicate_ack.expert", PI_SEQUENCE, PI_NOTE, "Duplicate ACK", EXPFILL } },
		{ &ei_cnp, { "roce.analysis.cnp.expert", PI_SEQUENCE, PI_NOTE, "Congestion Notification Packet", EXPFILL } },
		{ &ei_ecn_ce, { "roce.analysis.ecn_ce.expert", PI_SEQUENCE, PI_NOTE, "ECN Congestion Experienced", EXPFILL } },
		{ &ei_cm_unknown, { "roce.analysis.cm_unknown.expert", PI_SEQUENCE, PI_NOTE, "CM message for an unknown communication ID", EXPFILL } },
		{ &ei_cm_reject, { "roce.analysis.cm_reject.expert", PI_RESPONSE_CODE, PI_WARN, "CM connection request rejected", EXPFILL } },
	};
	module_t *m;
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

	proto_roce = proto_register_protocol("RDMA over Converged Ethernet / InfiniBand transport (qptrace)",
					     "RoCE", "roce");
	proto_register_field_array(proto_roce, hf, array_length(hf));
	proto_register_subtree_array(ett, array_length(ett));
	em = expert_register_protocol(proto_roce);
	expert_register_field_array(em, ei, array_length(ei));

	m = prefs_register_protocol(proto_roce, NULL);
	prefs_register_bool_preference(m, "check_icrc", "Verify the ICRC/VCRC",
				       "Compute the invariant (and variant) CRC of every packet", &pref_check_icrc);
	prefs_register_bool_preference(m, "analyze", "Analyse PSN/ACK sequences",
				       "Feed every packet to the qptrace flow engine (retransmissions, gaps, NAKs, RTT, ...)",
				       &pref_analyze);
	prefs_register_bool_preference(m, "udp_guard", "Keep RoCEv2 packets on RoCE",
				       "Decode UDP packets to the RoCE port(s) as RoCE even when their source port "
				       "is a well-known port with its own dissector (UDP tries the lower port first), "
				       "or when the built-in InfiniBand dissector has re-registered the port "
				       "(it does so whenever one of its preferences is applied); "
				       "a Decode As choice for the port is always respected",
				       &pref_udp_guard);

	roce_udp_handle = register_dissector("roce", dissect_roce_udp, proto_roce);
	roce_eth_handle = register_dissector("roce.eth", dissect_roce_eth, proto_roce);
	roce_ib_handle = register_dissector("roce.ib", dissect_roce_ib, proto_roce);

	roce_tap = register_tap("roce");
	register_init_routine(roce_init);
	register_cleanup_routine(roce_cleanup);
	qpt_register_conversation_filter("roce", "RoCE QP", roce_conv_valid, roce_conv_filter);
	register_stat_tap_ui(&qp_ui, NULL);
	register_stat_tap_table_ui(&qp_table_ui);
}

void proto_reg_handoff_roce(void)
{
	dissector_handle_t guard;

	data_handle = find_dissector("data");
	ipv6_handle = find_dissector("ipv6");
	udp_handle = find_dissector("udp");
	udp_port_table = find_dissector_table("udp.port");
	ib_payload_heur = find_heur_dissector_list("infiniband.payload");

	dissector_add_uint_range_with_preference("udp.port", ROCE_UDP_PORT_RANGE, roce_udp_handle);
	dissector_add_uint("ethertype", ETHERTYPE_ROCE, roce_eth_handle);
	dissector_add_uint("wtap_encap", WTAP_ENCAP_INFINIBAND, roce_ib_handle);
	dissector_add_uint("erf.types.type", ERF_TYPE_INFINIBAND, roce_ib_handle);

	if (udp_handle) {
		guard = create_dissector_handle_with_name_and_description(
			dissect_udp_guard, -1, "roce_udp_guard", "UDP (RoCE source-port guard)");
		dissector_add_uint("ip.proto", 17, guard);
	}
}
