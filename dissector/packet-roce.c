/* packet-roce.c - RoCEv2 / RoCEv1 / InfiniBand transport, decoded by qptrace
 *
 * This dissector never parses IBA bytes itself.  Every frame is handed to
 * the qptrace engine (qpt_decode(), the same code as `qptrace packets`), and
 * the decoded record is shown by roce-tree.c; the engine's flow analysis
 * (roce-analysis.c) and the statistics (roce-stats.c) are in files of their
 * own (roce-int.h says what they share).  This file registers the protocol
 * and its preferences, and holds the entry points and the UDP guard.
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
#include <epan/expert.h>
#include <epan/packet.h>
#include <epan/prefs.h>
#include <epan/tap.h>
#include <wiretap/wtap.h>

#include <string.h>

#include "qpt_decode.h"
#include "roce-int.h"

void proto_register_roce(void);
void proto_reg_handoff_roce(void);

#define ROCE_UDP_PORT_RANGE "4791"
#define ETHERTYPE_ROCE 0x8915
#define ERF_TYPE_INFINIBAND 21

int proto_roce = -1;
int roce_tap = -1;

static dissector_handle_t roce_udp_handle, roce_eth_handle, roce_ib_handle;
static dissector_handle_t data_handle, udp_handle;
static dissector_table_t udp_port_table;

static expert_field ei_no_ip = EI_INIT;

/* Preferences. */
qpt_ws_bool roce_pref_check_icrc = TRUE;
qpt_ws_bool roce_pref_analyze = TRUE;
static qpt_ws_bool pref_udp_guard = TRUE;

/* ---- entry points --------------------------------------------------------------- */

static void decode_opts(struct qpt_decode_opts *o, uint16_t *port, guint32 dport)
{
	memset(o, 0, sizeof(*o));
	o->no_crc = !roce_pref_check_icrc;
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
	} else {
		/* the IPv6 header, then extension headers of 8-byte units */
		for (gint ext = 0; ext <= 88 && udp - 40 - ext >= 0 && n < 12; ext += 8)
			if ((tvb_get_uint8(ds, udp - 40 - ext) >> 4) == 6)
				cand[n++] = udp - 40 - ext;
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
	return roce_show(tvb, pinfo, tree, pkt);
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
	return roce_show(tvb, pinfo, tree, pkt);
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
	return roce_show(tvb, pinfo, tree, pkt);
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

/* ---- registration --------------------------------------------------------------- */

void proto_register_roce(void)
{
	static ei_register_info ei[] = {
		{ &ei_no_ip, { "roce.no_ip_header", PI_UNDECODED, PI_WARN, "Cannot locate the IP header of this RoCEv2 packet (fragmented or reassembled?)", EXPFILL } },
	};
	module_t *m;
	expert_module_t *em;

	proto_roce = proto_register_protocol("RDMA over Converged Ethernet / InfiniBand transport (qptrace)",
					     "RoCE", "roce");
	roce_tree_register();
	roce_analysis_register();
	em = expert_register_protocol(proto_roce);
	expert_register_field_array(em, ei, array_length(ei));

	m = prefs_register_protocol(proto_roce, NULL);
	prefs_register_bool_preference(m, "check_icrc", "Verify the ICRC/VCRC",
				       "Compute the invariant (and variant) CRC of every packet", &roce_pref_check_icrc);
	prefs_register_bool_preference(m, "analyze", "Analyse PSN/ACK sequences",
				       "Feed every packet to the qptrace flow engine (retransmissions, gaps, NAKs, RTT, ...)",
				       &roce_pref_analyze);
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
	register_init_routine(roce_analysis_init);
	register_cleanup_routine(roce_analysis_cleanup);
	roce_stats_register();
}

void proto_reg_handoff_roce(void)
{
	dissector_handle_t guard;

	data_handle = find_dissector("data");
	udp_handle = find_dissector("udp");
	udp_port_table = find_dissector_table("udp.port");
	roce_tree_handoff();


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
