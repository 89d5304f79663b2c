/* roce-pfc.c - PFC (802.1Qbb) and PAUSE (802.3x) frames as the engine sees them
 *
 * Wireshark's own MAC control dissector (macc) decodes these frames; the
 * plugin adds what it lacks, from the engine (qpt_pfc.h): the priorities a
 * frame pauses or resumes, the pause time it asks for at the link speed
 * (preference roce.link_speed), whether each paused priority has carried
 * RoCE data in the capture so far and how many RoCE conversation directions
 * on it sent in the millisecond before, and an expert info on a pause of a
 * priority that carries RoCE data.  The frame is handed whole to the
 * engine's decoder (qpt_decode, Ethernet) and to its flow analysis on the
 * first pass; what it said is kept per frame and shown on every pass.
 *
 * The RoCE packets' priorities: the post-dissector gives the engine the IBA
 * packet from its IP header on, so the frame's 802.1Q tags are taken from
 * the engine's decode of the whole Ethernet frame (frame_pcp in
 * packet-roce.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define WS_BUILD_DLL
#include <wireshark.h>

#include <epan/expert.h>
#include <epan/packet.h>
#include <epan/prefs.h>
#include <epan/proto.h>
#include <wiretap/wtap.h>

#include "qpt_pfc.h"
#include "roce-int.h"

#include <string.h>

static int hf_pfc = -1, hf_pfc_paused = -1, hf_pfc_resumed = -1, hf_pfc_priority = -1,
	   hf_pfc_pause_us = -1, hf_pfc_active = -1, hf_pfc_roce = -1;
static gint ett_pfc = -1, ett_pfc_prio = -1;
static expert_field ei_pfc_roce = EI_INIT;
static const char *pref_link_speed = "";
static wmem_map_t *pfc_map; /* frame number -> struct qpt_pfc_frame_info */
static struct qpt_flow *speed_set; /* the engine the link speed was given to */

static void pfc_init(void)
{
	pfc_map = wmem_map_new(wmem_file_scope(), g_direct_hash, g_direct_equal);
	speed_set = NULL;
}

/* The file's engine is made by an init routine that may run after ours:
 * it gets the link speed at the first MAC control frame. */
static void give_speed(void)
{
	double bps = 0;
	struct qpt_flow *fl = roce_flow();

	if (!fl || fl == speed_set)
		return;
	if (pref_link_speed && *pref_link_speed && !qpt_parse_bps(pref_link_speed, &bps))
		bps = 0; /* the preference's description says what it takes */
	qpt_pfc_set_link_speed(qpt_flow_pfc(fl), bps);
	speed_set = fl;
}

static void pfc_cleanup(void)
{
	pfc_map = NULL;
}

static gboolean is_ethernet(packet_info *pinfo)
{
	return pinfo->rec && pinfo->rec->rec_type == REC_TYPE_PACKET &&
	       pinfo->rec->rec_header.packet_header.pkt_encap == WTAP_ENCAP_ETHERNET;
}

/* The engine's decode of the whole frame (no CRC: only its layers). */
static gboolean decode_frame(tvbuff_t *tvb, packet_info *pinfo, struct qpt_pkt *pkt)
{
	struct qpt_decode_opts o = { .no_crc = true };
	guint cap = tvb_captured_length(tvb);

	if (!is_ethernet(pinfo) || !cap)
		return FALSE;
	qpt_decode(pkt, QPT_LINKTYPE_ETHERNET, tvb_get_ptr(tvb, 0, (gint)cap), cap,
		   pinfo->fd->pkt_len, &o);
	return TRUE;
}

int roce_pfc_show(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree)
{
	struct qpt_pfc_frame_info *fi;
	proto_item *top, *pi;
	proto_tree *t, *pt;

	if (!pfc_map)
		return 0;
	fi = (struct qpt_pfc_frame_info *)wmem_map_lookup(pfc_map, GUINT_TO_POINTER(pinfo->num));
	if (!fi && !pinfo->fd->visited && roce_flow()) {
		struct qpt_pkt *pkt = wmem_new(pinfo->pool, struct qpt_pkt);

		if (!decode_frame(tvb, pinfo, pkt) || !(pkt->flags & QPT_HAS_MACC))
			return 0;
		give_speed();
		if (!roce_analyse(pinfo, pkt))
			return 0;
		fi = (struct qpt_pfc_frame_info *)wmem_memdup(
			wmem_file_scope(), qpt_pfc_last(qpt_flow_pfc(roce_flow())), sizeof(*fi));
		wmem_map_insert(pfc_map, GUINT_TO_POINTER(pinfo->num), fi);
	}
	if (!fi || !(fi->pfc || fi->pause))
		return 0; /* malformed, or another opcode: macc says it all */
	top = proto_tree_add_item(tree, proto_roce, tvb, 0, 0, ENC_NA);
	proto_item_set_generated(top);
	proto_item_append_text(top, ", %s analysis", fi->pfc ? "PFC" : "PAUSE");
	t = proto_item_add_subtree(top, ett_pfc);
	pi = proto_tree_add_item(t, hf_pfc, tvb, 0, 0, ENC_NA);
	proto_item_set_generated(pi);
	t = proto_item_add_subtree(pi, ett_pfc);
	proto_item_set_generated(proto_tree_add_uint(t, hf_pfc_paused, tvb, 0, 0, fi->xoff));
	proto_item_set_generated(proto_tree_add_uint(t, hf_pfc_resumed, tvb, 0, 0, fi->xon));
	for (unsigned p = 0; p < QPT_PFC_PRIOS; p++) {
		gboolean roce = (fi->roce >> p) & 1;

		if (!((fi->xoff | fi->xon) >> p & 1))
			continue;
		pi = proto_tree_add_uint(t, hf_pfc_priority, tvb, 0, 0, p);
		proto_item_set_generated(pi);
		proto_item_append_text(pi, (fi->xoff >> p) & 1 ? " (XOFF)" : " (XON)");
		pt = proto_item_add_subtree(pi, ett_pfc_prio);
		if (fi->pause_us[p] >= 0)
			proto_item_set_generated(
				proto_tree_add_double(pt, hf_pfc_pause_us, tvb, 0, 0, fi->pause_us[p]));
		proto_item_set_generated(proto_tree_add_boolean(pt, hf_pfc_roce, tvb, 0, 0, roce));
		proto_item_set_generated(proto_tree_add_uint(pt, hf_pfc_active, tvb, 0, 0, fi->active[p]));
		if (roce && (fi->xoff >> p) & 1)
			expert_add_info(pinfo, pi, &ei_pfc_roce);
	}
	roce_show_findings(tvb, pinfo, proto_item_get_subtree(top));
	return 1;
}

void roce_pfc_register(module_t *m)
{
	static hf_register_info hf[] = {
		{ &hf_pfc, { "PFC/PAUSE analysis", "roce.pfc", FT_NONE, BASE_NONE, NULL, 0x0,
			     "What the qptrace engine makes of this MAC control frame", HFILL } },
		{ &hf_pfc_paused, { "Priorities paused", "roce.pfc.paused", FT_UINT8, BASE_HEX, NULL, 0x0,
				    "Bit p: priority p asked to pause (XOFF, a time > 0); an 802.3x PAUSE pauses all", HFILL } },
		{ &hf_pfc_resumed, { "Priorities resumed", "roce.pfc.resumed", FT_UINT8, BASE_HEX, NULL, 0x0,
				     "Bit p: priority p enabled with a time of 0 (XON)", HFILL } },
		{ &hf_pfc_priority, { "Priority", "roce.pfc.priority", FT_UINT8, BASE_DEC, NULL, 0x0,
				      "A priority this frame pauses or resumes", HFILL } },
		{ &hf_pfc_pause_us, { "Pause time (us)", "roce.pfc.pause_us", FT_DOUBLE, BASE_NONE, NULL, 0x0,
				      "The time asked for: quanta x 512 bit times at the link speed (preference roce.link_speed)", HFILL } },
		{ &hf_pfc_roce, { "RoCE priority", "roce.pfc.roce_priority", FT_BOOLEAN, BASE_NONE, NULL, 0x0,
				  "RoCE data (802.1Q PCP; untagged: 0) was seen on this priority before this frame", HFILL } },
		{ &hf_pfc_active, { "RoCE conversation directions sending", "roce.pfc.roce_conversations",
				    FT_UINT32, BASE_DEC, NULL, 0x0,
				    "RoCE conversation directions on this priority that sent in the millisecond before", HFILL } },
	};
	static gint *ett[] = { &ett_pfc, &ett_pfc_prio };
	static ei_register_info ei[] = {
		{ &ei_pfc_roce, { "roce.pfc.pause_roce", PI_SEQUENCE, PI_NOTE,
				  "Pause (XOFF) of a priority that carries RoCE data", EXPFILL } },
	};
	expert_module_t *em;

	proto_register_field_array(proto_roce, hf, array_length(hf));
	proto_register_subtree_array(ett, array_length(ett));
	em = expert_register_protocol(proto_roce);
	expert_register_field_array(em, ei, array_length(ei));
	prefs_register_string_preference(m, "link_speed", "Link speed",
					 "The speed of the captured link in bits per second, with an optional "
					 "k, M, G or T (100G, 25G, 400Gb/s): PFC/PAUSE quanta become pause "
					 "times.  Empty: quanta only",
					 &pref_link_speed);
	register_init_routine(pfc_init);
	register_cleanup_routine(pfc_cleanup);
}
