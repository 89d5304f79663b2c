/* packet-roce.c - the qptrace engine's analysis over Wireshark's InfiniBand dissector
 *
 * Decoding is the built-in InfiniBand dissector's: it keeps UDP 4791, the
 * RoCE ethertype, the IB link type and ERF, its infiniband.* fields, its
 * payload heuristics (infiniband.payload, infiniband.mad.cm.private) and
 * the IBQP conversations NVMe-oF, iSER, SDP, SMB Direct, RPC-over-RDMA
 * find their connection through.  This plugin is a post-dissector (as
 * Wireshark's TRANSUM): after every other dissector ran, it finds the IBA
 * packet the built-in one decoded (the data source and offset of its
 * protocol item), hands those bytes to the engine (qpt_decode(), the same
 * code as `qptrace packets`, and the flow analysis, roce-analysis.c), and
 * adds the roce tree (roce-tree.c): the header fields as the engine reads
 * them, the CNP name, ICRC/VCRC verification, FECN/BECN, the verdicts.
 * roce-stats.c has -z roce,qp; roce-int.h says what the files share.
 *
 * What the engine is given:
 *   RoCEv2  the IP packet (LINKTYPE_RAW) that carries the UDP datagram: the
 *           IP header just before the UDP header in the data source (any
 *           link type, VLANs, tunnels), so the ICRC is computed on the real
 *           header; for IPv4 fragments Wireshark reassembled, a synthetic
 *           IP header (ICRC then unverified).  The UDP destination port is
 *           passed as a RoCE port.
 *   RoCEv1  the GRH onwards, behind a synthetic 14-byte Ethernet header of
 *           ethertype 0x8915 (the ICRC of RoCEv1 does not cover it).
 *   IB      the LRH onwards (LINKTYPE_INFINIBAND).
 *
 * It also keeps a RoCEv2 packet whose UDP source port another dissector
 * claims on the built-in dissector (the UDP guard below), and "roce" stays
 * a dissector name for Decode As (it calls the built-in one).
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

#include <dlfcn.h>
#include <string.h>

#include "qpt_attr.h"
#include "qpt_decode.h"
#include "roce-int.h"

void proto_register_roce(void);
void proto_reg_handoff_roce(void);

#define ROCE_UDP_PORT 4791
#define ETHERTYPE_ROCE 0x8915
#define ERF_TYPE_INFINIBAND 21

int proto_roce = -1;
/* roce's protocol and its registrar entry, found once (asked every frame) */
static protocol_t *roce_protocol;
static header_field_info *roce_hfinfo;
int roce_tap = -1;

static dissector_handle_t roce_udp_handle, roce_post_handle;
static dissector_handle_t data_handle, udp_handle;
static dissector_table_t udp_port_table;
static int proto_infiniband = -1, proto_udp = -1, proto_icmp = -1, proto_icmpv6 = -1,
	   proto_macc = -1, proto_vlan = -1, proto_8021ad = -1;

/* Preferences. */
qpt_ws_bool roce_pref_check_icrc = TRUE;
qpt_ws_bool roce_pref_analyze = TRUE;
static qpt_ws_bool pref_udp_guard = TRUE;
static range_t *pref_udp_ports;

/* ---- the built-in dissector's handles ------------------------------------------ */

/* The InfiniBand dissector's RoCEv2 handle (anonymous: found on the UDP
 * port table where it registers it first, 4791, at our handoff; it stays
 * valid when the built-in dissector's preference moves it elsewhere). */
static dissector_handle_t ib_rroce_handle;

static dissector_handle_t ib_rroce(void)
{
	dissector_handle_t h = ib_rroce_handle;

	if (h || proto_infiniband < 0 || !udp_port_table)
		return h;
	h = dissector_get_default_uint_handle("udp.port", ROCE_UDP_PORT);
	if (!h || dissector_handle_get_protocol_index(h) != proto_infiniband)
		h = dissector_get_uint_handle(udp_port_table, ROCE_UDP_PORT);
	if (h && dissector_handle_get_protocol_index(h) != proto_infiniband)
		h = NULL;
	return ib_rroce_handle = h;
}

static gboolean is_ib_handle(dissector_handle_t h)
{
	return h && (h == roce_udp_handle ||
		     dissector_handle_get_protocol_index(h) == proto_infiniband);
}

/* "roce" in Decode As (and in old profiles): the built-in RoCEv2 decoding;
 * the analysis follows as a post-dissector, as for any RoCE frame. */
static int dissect_roce_udp(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
	dissector_handle_t h = ib_rroce();

	if (h)
		return call_dissector_only(h, tvb, pinfo, tree, data);
	call_dissector(data_handle, tvb, pinfo, tree);
	return tvb_captured_length(tvb);
}

/* ---- locating the IBA packet the built-in dissector decoded ------------------ */

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

static void count_frame(packet_info *pinfo, struct qpt_pkt *pkt)
{
	/* Count the whole frame, as `qptrace` does. */
	pkt->wirelen = pinfo->fd->pkt_len;
	pkt->caplen = pinfo->fd->cap_len;
}

/* RoCEv2: the IBA packet starts at off in ds, right after its UDP header.
 * The engine is given the IP packet (LINKTYPE_RAW): the IP header just
 * before the UDP header (the ICRC covers IP and UDP fields), found by
 * trying the header lengths IPv4 (options) and IPv6 (extension headers)
 * can have, closest first, and kept when the engine's own decode ends at
 * the same BTH.  When no IP header precedes it (IPv4 fragments Wireshark
 * reassembled: the data source starts with the UDP header), a synthetic
 * IP header with the packet's addresses is put in front, and the ICRC is
 * not verified (the header it covered is not in the capture as such). */
static gboolean decode_rocev2(tvbuff_t *ds, gint off, packet_info *pinfo, struct qpt_pkt *pkt)
{
	gint udp = off - 8, cand[24], n = 0;
	struct qpt_decode_opts o;
	uint16_t port;
	guint32 dport;

	if (udp < 0 || !tvb_bytes_exist(ds, udp, 8))
		return FALSE;
	dport = tvb_get_ntohs(ds, udp + 2);
	for (int ihl = 5; ihl <= 15 && udp - 4 * ihl >= 0; ihl++)
		if (tvb_get_uint8(ds, udp - 4 * ihl) == (0x40 | ihl))
			cand[n++] = udp - 4 * ihl;
	for (gint ext = 0; ext <= 88 && udp - 40 - ext >= 0; ext += 8)
		if ((tvb_get_uint8(ds, udp - 40 - ext) >> 4) == 6)
			cand[n++] = udp - 40 - ext;
	decode_opts(&o, &port, dport);
	for (int i = 0; i < n; i++) {
		guint cap = tvb_captured_length_remaining(ds, cand[i]);
		guint rep = tvb_reported_length_remaining(ds, cand[i]);

		qpt_decode(pkt, QPT_LINKTYPE_RAW, tvb_get_ptr(ds, cand[i], cap), cap, rep, &o);
		if (pkt->transport == QPT_TR_ROCEV2 && pkt->off_iba == (uint32_t)(off - cand[i])) {
			count_frame(pinfo, pkt);
			return TRUE;
		}
	}
	if (pinfo->net_src.type == AT_IPv4 || pinfo->net_src.type == AT_IPv6) {
		gboolean v4 = pinfo->net_src.type == AT_IPv4;
		guint hl = v4 ? 20 : 40;
		guint cap = tvb_captured_length_remaining(ds, udp);
		guint rep = tvb_reported_length_remaining(ds, udp);
		guint ulen = tvb_get_ntohs(ds, udp + 4);
		uint8_t *b = (uint8_t *)wmem_alloc0(pinfo->pool, hl + cap);

		if (pinfo->net_dst.type != pinfo->net_src.type)
			return FALSE;
		if (v4) {
			b[0] = 0x45;
			b[2] = (uint8_t)((20 + ulen) >> 8);
			b[3] = (uint8_t)(20 + ulen);
			b[8] = 64;
			b[9] = 17;
			memcpy(b + 12, pinfo->net_src.data, 4);
			memcpy(b + 16, pinfo->net_dst.data, 4);
		} else {
			b[0] = 0x60;
			b[4] = (uint8_t)(ulen >> 8);
			b[5] = (uint8_t)ulen;
			b[6] = 17;
			b[7] = 64;
			memcpy(b + 8, pinfo->net_src.data, 16);
			memcpy(b + 24, pinfo->net_dst.data, 16);
		}
		tvb_memcpy(ds, b + hl, udp, cap);
		o.no_crc = true;
		qpt_decode(pkt, QPT_LINKTYPE_RAW, b, hl + cap, hl + rep, &o);
		if (pkt->transport == QPT_TR_ROCEV2 && pkt->off_iba == hl + 8) {
			count_frame(pinfo, pkt);
			return TRUE;
		}
	}
	return FALSE;
}

/* RoCEv1: the GRH onwards, behind a synthetic 14-byte Ethernet header of
 * ethertype 0x8915 (the ICRC of RoCEv1 does not cover the Ethernet header). */
static G_NO_INLINE gboolean decode_rocev1(tvbuff_t *ds, gint off, packet_info *pinfo, struct qpt_pkt *pkt)
{
	guint cap = tvb_captured_length_remaining(ds, off), rep = tvb_reported_length_remaining(ds, off);
	uint8_t *buf = (uint8_t *)wmem_alloc0(pinfo->pool, cap + 14);
	struct qpt_decode_opts o;
	uint16_t port;

	buf[12] = ETHERTYPE_ROCE >> 8;
	buf[13] = ETHERTYPE_ROCE & 0xff;
	tvb_memcpy(ds, buf + 14, off, cap);
	decode_opts(&o, &port, 0);
	qpt_decode(pkt, QPT_LINKTYPE_ETHERNET, buf, cap + 14, rep + 14, &o);
	if (pkt->transport != QPT_TR_ROCEV1)
		return FALSE;
	count_frame(pinfo, pkt);
	return TRUE;
}

/* Native InfiniBand: the LRH onwards (LINKTYPE_INFINIBAND).  (decode_rocev1,
 * decode_ib and frame_pcp not inlined: out of the RoCEv2 frame's code.) */
static G_NO_INLINE gboolean decode_ib(tvbuff_t *ds, gint off, packet_info *pinfo, struct qpt_pkt *pkt)
{
	guint cap = tvb_captured_length_remaining(ds, off), rep = tvb_reported_length_remaining(ds, off);
	struct qpt_decode_opts o;
	uint16_t port;

	decode_opts(&o, &port, 0);
	qpt_decode(pkt, QPT_LINKTYPE_INFINIBAND, tvb_get_ptr(ds, off, cap), cap, rep, &o);
	if (pkt->transport != QPT_TR_IB)
		return FALSE;
	count_frame(pinfo, pkt);
	return TRUE;
}

/* The 802.1Q priority of the frame (the engine's vlan_pcp): the IBA packet
 * was decoded from its IP header or GRH on, without the Ethernet header
 * before it.  When the frame is an Ethernet frame and the engine, given all
 * of it, reaches the same IBA packet, its VLAN tags are the packet's (in a
 * tunnel the inner frame's, as the CLI reads them). */
static int ds_index_of(packet_info *pinfo, tvbuff_t *ds);
static G_NO_INLINE void frame_pcp(tvbuff_t *ds, gint off, packet_info *pinfo, struct qpt_pkt *pkt)
{
	struct qpt_pkt *whole;
	struct qpt_decode_opts o;
	uint16_t port;
	guint cap, rep;

	if (!pinfo->rec || pinfo->rec->rec_type != REC_TYPE_PACKET ||
	    pinfo->rec->rec_header.packet_header.pkt_encap != WTAP_ENCAP_ETHERNET ||
	    ds_index_of(pinfo, ds) != 0)
		return;
	cap = tvb_captured_length(ds);
	rep = tvb_reported_length(ds);
	decode_opts(&o, &port, pkt->udp_dport);
	o.no_crc = true;
	whole = wmem_new(pinfo->pool, struct qpt_pkt);
	qpt_decode(whole, QPT_LINKTYPE_ETHERNET, tvb_get_ptr(ds, 0, cap), cap, rep, &o);
	if (whole->transport == pkt->transport && whole->off_iba == (uint32_t)off)
		pkt->vlan_pcp = whole->vlan_pcp;
}

/* The protocol the frame had just before proto (-1: none, or proto absent);
 * *quoted: an ICMP layer came before it (proto is inside an ICMP error). */
static gboolean has_layer(packet_info *pinfo, int proto)
{
	for (wmem_list_frame_t *f = wmem_list_head(pinfo->layers); f; f = wmem_list_frame_next(f))
		if (GPOINTER_TO_INT(wmem_list_frame_data(f)) == proto)
			return TRUE;
	return FALSE;
}

static int layer_before(packet_info *pinfo, int proto, gboolean *quoted)
{
	int prev = -1;

	*quoted = FALSE;
	for (wmem_list_frame_t *f = wmem_list_head(pinfo->layers); f; f = wmem_list_frame_next(f)) {
		int p = GPOINTER_TO_INT(wmem_list_frame_data(f));

		if (p == proto)
			return prev;
		if (p == proto_icmp || p == proto_icmpv6)
			*quoted = TRUE;
		prev = p;
	}
	return -1;
}

/* Where a frame's IBA packet is, found on the first pass: the data source
 * (its index in the frame's list: reassembled packets have their own) and
 * the offset the built-in dissector's protocol item starts at.  Later passes
 * (tshark -2, the GUI) find it in the frame's slot (roce_loc_put, in
 * roce-analysis.c): their tree need not have that item. */
static int ds_index_of(packet_info *pinfo, tvbuff_t *ds)
{
	int i = 0;

	for (GSList *s = pinfo->data_src; s; s = s->next, i++)
		if (get_data_source_tvb((struct data_source *)s->data) == ds)
			return i;
	return -1;
}

/* The frame's IBA packet: from the built-in dissector's first protocol item
 * in the tree, else from what the first pass stored. */
static gboolean locate(packet_info *pinfo, proto_tree *tree, tvbuff_t **ds, gint *off)
{
	GPtrArray *items = tree ? proto_get_finfo_ptr_array(tree, proto_infiniband) : NULL;
	guint ds_index;
	gint32 loc_off;

	if (items && items->len) {
		field_info *fi = (field_info *)g_ptr_array_index(items, 0);
		int i = fi->ds_tvb ? ds_index_of(pinfo, fi->ds_tvb) : -1;

		if (i < 0 || fi->start < 0)
			return FALSE;
		*ds = fi->ds_tvb;
		*off = fi->start;
		roce_loc_put(pinfo->num, (guint)i, fi->start);
		return TRUE;
	}
	if (roce_loc_get(pinfo->num, &ds_index, &loc_off) &&
	    proto_is_frame_protocol(pinfo->layers, "infiniband")) {
		GSList *s = g_slist_nth(pinfo->data_src, ds_index);

		if (!s)
			return FALSE;
		*ds = get_data_source_tvb((struct data_source *)s->data);
		*off = loc_off;
		return *ds != NULL;
	}
	return FALSE;
}

/* The post-dissector: after every other dissector (the built-in InfiniBand
 * one decoded the packet, its upper layers ran), the IBA packet is found
 * through the built-in's protocol item (its data source and offset), given
 * to the engine, and shown with its verdicts. */
static QPT_HOT int dissect_roce_post(tvbuff_t *tvb _U_, packet_info *pinfo, proto_tree *tree,
				     void *data _U_)
{
	struct qpt_pkt *pkt;
	tvbuff_t *ds;
	gint off;
	int prev;
	gboolean ok, quoted;

	if (!proto_is_protocol_enabled(roce_protocol))
		return 0;
	/* the frame's layers by id (this runs on every frame: no name lookups) */
	if (proto_macc > 0 && has_layer(pinfo, proto_macc))
		return roce_pfc_show(tvb, pinfo, tree); /* PFC, PAUSE (roce-pfc.c) */
	if (proto_infiniband < 0 || !has_layer(pinfo, proto_infiniband))
		return 0;
	prev = layer_before(pinfo, proto_infiniband, &quoted);
	/* A RoCE packet quoted in an ICMP error is not a transmission. */
	if (quoted || !locate(pinfo, tree, &ds, &off) || !tvb_bytes_exist(ds, off, 1))
		return 0;
	pkt = wmem_new(pinfo->pool, struct qpt_pkt);
	if (prev == proto_udp || prev == proto_roce) /* roce: Decode As "roce" */
		ok = decode_rocev2(ds, off, pinfo, pkt);
	else if (off >= 2 && tvb_get_ntohs(ds, off - 2) == ETHERTYPE_ROCE)
		ok = decode_rocev1(ds, off, pinfo, pkt);
	else
		ok = decode_ib(ds, off, pinfo, pkt);
	if (!ok)
		return 0;
	/* its 802.1Q priority (the PFC and the ECN/CNP analyses): only a frame
	 * with a tag has one (Wireshark's vlan or ieee8021ad layer) */
	if (pkt->transport != QPT_TR_IB &&
	    (proto_vlan < 0 || proto_8021ad < 0 || has_layer(pinfo, proto_vlan) ||
	     has_layer(pinfo, proto_8021ad)))
		frame_pcp(ds, off, pinfo, pkt);
	return roce_show(tvb_new_subset_remaining(ds, off), pinfo, tree, pkt);
}

/* A RoCEv2 packet that Wireshark's UDP would not give to the InfiniBand
 * dissector:
 *  1. UDP tries the lower port's dissector first, so a packet from a
 *     well-known source port (say 69, TFTP) to 4791 goes to that port's
 *     dissector (RoCE uses the source port as flow entropy);
 *  2. a port of the RoCE port range (preference roce.udp.port) that no
 *     dissector holds (the built-in one is on infiniband.rroce.port).
 * UDP does look up a conversation dissector before its port tables.  This
 * guard sits in front of UDP in "ip.proto" and, for those packets only,
 * gives the UDP flow a conversation whose dissector is the built-in RoCEv2
 * one before UDP runs.  A Decode As choice of another dissector for the
 * port is respected.  Everything else goes straight to UDP. */
static gboolean roce_port_lost(guint32 sport, guint32 dport)
{
	dissector_handle_t cur = dissector_get_uint_handle(udp_port_table, dport), low;
	range_t *r;

	if (!cur) {
		r = prefs_get_range_value("roce", "udp.port");
		return r && value_is_in_range(r, dport);
	}
	if (!is_ib_handle(cur) || !sport || sport >= dport)
		return FALSE;
	low = dissector_get_uint_handle(udp_port_table, sport);
	return low && !is_ib_handle(low);
}

static QPT_HOT int dissect_udp_guard(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree,
				     void *data)
{
	if (pref_udp_guard && !pinfo->flags.in_error_pkt &&
	    (pinfo->src.type == AT_IPv4 || pinfo->src.type == AT_IPv6) &&
	    tvb_captured_length(tvb) >= 4 && proto_is_protocol_enabled(roce_protocol)) {
		guint32 sport = tvb_get_ntohs(tvb, 0), dport = tvb_get_ntohs(tvb, 2);
		dissector_handle_t ib;

		if (roce_port_lost(sport, dport) && (ib = ib_rroce()) != NULL) {
			conversation_t *c = find_conversation(pinfo->num, &pinfo->src, &pinfo->dst,
							      CONVERSATION_UDP, sport, dport, 0);

			if (!c || conversation_get_dissector(c, pinfo->num) != ib) {
				c = conversation_new(pinfo->num, &pinfo->src, &pinfo->dst,
						     CONVERSATION_UDP, sport, dport, 0);
				conversation_set_dissector(c, ib);
			}
		}
	}
	return call_dissector_with_data(udp_handle, tvb, pinfo, tree, data);
}

/* ---- what the tree is for --------------------------------------------------------- */

/* Whether this process is tshark printing its trees as text (-V: hidden
 * items are not printed) or not at all, read once from its command line
 * (/proc/self/cmdline; Linux): the program is tshark; no -T but text, tabs,
 * ps, psml (pdml, json, jsonraw and ek print hidden items; fields looks
 * its -e up in the whole tree, which it makes visible, unreferenced); no -j,
 * -J; no -X (Lua scripts); no -z but roce's; no long option (--color,
 * --no-duplicate-keys, ...: none is known not to matter); no Lua plugin
 * loaded.  Every argument that starts with '-' is read as options (a value
 * that looks like one only makes the answer FALSE).  Anything else, or any
 * doubt (Wireshark, sharkd, another OS): FALSE. */
static const char tshark_arg_opts[] = "abBcfisydKNtuMCeEFGHjJoOrRSTUwWXYz";

static gboolean tshark_opt_ok(char c, const char *v)
{
	switch (c) {
	case 'T':
		return !strcmp(v, "text") || !strcmp(v, "tabs") || !strcmp(v, "ps") ||
		       !strcmp(v, "psml");
	case 'z':
		return g_str_has_prefix(v, "roce,");
	case 'j':
	case 'J':
	case 'X':
		return FALSE;
	default:
		return TRUE;
	}
}

static gboolean tshark_prints_text(void)
{
	gchar *buf = NULL;
	gsize n = 0;
	const char *a, *end, *base;
	gboolean ok = FALSE;
	void *self;

	if (!g_file_get_contents("/proc/self/cmdline", &buf, &n, NULL))
		return FALSE;
	if (n == 0 || buf[n - 1] != '\0')
		goto out;
	end = buf + n;
	base = strrchr(buf, '/');
	if (strcmp(base ? base + 1 : buf, "tshark") != 0)
		goto out;
	ok = TRUE;
	for (a = buf + strlen(buf) + 1; ok && a < end; a += strlen(a) + 1) {
		if (a[0] != '-' || a[1] == '\0' || !strcmp(a, "--"))
			continue;
		if (a[1] == '-') { /* a long option: none is known not to matter */
			ok = FALSE;
			break;
		}
		for (const char *c = a + 1; *c; c++) {
			const char *next = a + strlen(a) + 1;

			if (!strchr(tshark_arg_opts, *c))
				continue;
			ok = tshark_opt_ok(*c, c[1] ? c + 1 : next < end ? next : "");
			break;
		}
	}
	/* a Lua plugin may read every field (all_field_infos()) */
	if (ok && (self = dlopen(NULL, RTLD_LAZY)) != NULL) {
		int (*lua_count)(void) = (int (*)(void))dlsym(self, "wslua_count_plugins");

		if (lua_count && lua_count() > 0)
			ok = FALSE;
		dlclose(self);
	}
out:
	g_free(buf);
	return ok;
}

/* Whether items that would be hidden can be left out of this frame's tree:
 * tshark prints text (above), Display hidden protocol items is off, no
 * roce field is referenced (a display or read filter, a custom column,
 * -T fields -e, a tap's filter: Wireshark marks the field and, indirectly,
 * roce itself), and no tap reads the whole tree.  Nothing would print
 * them or look them up. */
QPT_HOT gboolean roce_lean(void)
{
	static int text = -1;

	if (text < 0)
		text = tshark_prints_text();
	return text && !prefs.display_hidden_proto_items &&
	       roce_hfinfo->ref_type == HF_REF_TYPE_NONE &&
	       !(union_of_tap_listener_flags() & TL_REQUIRES_PROTO_TREE);
}

/* ---- registration --------------------------------------------------------------- */

void proto_register_roce(void)
{
	module_t *m;

	proto_roce = proto_register_protocol("RDMA over Converged Ethernet / InfiniBand transport (qptrace)",
					     "RoCE", "roce");
	roce_protocol = find_protocol_by_id(proto_roce);
	roce_hfinfo = proto_registrar_get_nth(proto_roce);
	roce_tree_register();
	roce_analysis_register();

	range_convert_str(wmem_epan_scope(), &pref_udp_ports, G_STRINGIFY(ROCE_UDP_PORT), 65535);
	m = prefs_register_protocol(proto_roce, NULL);
	prefs_register_bool_preference(m, "check_icrc", "Verify the ICRC/VCRC",
				       "Compute the invariant (and variant) CRC of every packet", &roce_pref_check_icrc);
	prefs_register_bool_preference(m, "analyze", "Analyse PSN/ACK sequences",
				       "Feed every packet to the qptrace flow engine (retransmissions, gaps, NAKs, RTT, ...)",
				       &roce_pref_analyze);
	prefs_register_bool_preference(m, "udp_guard", "Keep RoCEv2 packets on RoCE",
				       "Give UDP packets to the RoCE port(s) to the InfiniBand dissector even when their "
				       "source port is a well-known port with its own dissector (UDP tries the lower port "
				       "first), or when no dissector holds a port of the RoCE port range; "
				       "a Decode As choice of another dissector for the port is always respected",
				       &pref_udp_guard);
	prefs_register_range_preference(m, "udp.port", "UDP port(s)",
					"UDP destination ports that carry RoCEv2 besides the InfiniBand dissector's "
					"own (infiniband.rroce.port, 4791); also the ports the engine treats as RoCEv2",
					&pref_udp_ports, 65535);

	/* "roce" stays a dissector name (Decode As, profiles): it decodes with
	 * the built-in InfiniBand dissector. */
	roce_udp_handle = register_dissector("roce", dissect_roce_udp, proto_roce);
	roce_post_handle = create_dissector_handle_with_name_and_description(
		dissect_roce_post, proto_roce, "roce_analysis", "RoCE analysis (qptrace)");
	register_postdissector(roce_post_handle);

	roce_tap = register_tap("roce");
	register_init_routine(roce_analysis_init);
	roce_pfc_register(m); /* after roce_analysis_init: it sets the new file's engine */
	register_cleanup_routine(roce_analysis_cleanup);
	roce_stats_register();
	roce_findings_register();
}

void proto_reg_handoff_roce(void)
{
	dissector_handle_t guard;
	GArray *wanted;

	data_handle = find_dissector("data");
	udp_handle = find_dissector("udp");
	udp_port_table = find_dissector_table("udp.port");
	proto_infiniband = proto_get_id_by_filter_name("infiniband");
	proto_udp = proto_get_id_by_filter_name("udp");
	proto_icmp = proto_get_id_by_filter_name("icmp");
	proto_icmpv6 = proto_get_id_by_filter_name("icmpv6");
	proto_macc = proto_get_id_by_filter_name("macc");
	proto_vlan = proto_get_id_by_filter_name("vlan");
	proto_8021ad = proto_get_id_by_filter_name("ieee8021ad");
	roce_tree_handoff();
	/* Before any preference moves it: the built-in handoffs ran, ours is
	 * a plugin's, and preferences are applied after both. */
	(void)ib_rroce();

	dissector_add_for_decode_as("udp.port", roce_udp_handle);

	/* The post-dissector reads the built-in dissector's protocol item
	 * (where the IBA packet is): it must be in the tree. */
	if (proto_infiniband >= 0) {
		wanted = g_array_new(FALSE, FALSE, (guint)sizeof(int));
		g_array_append_val(wanted, proto_infiniband);
		set_postdissector_wanted_hfids(roce_post_handle, wanted);
	}

	if (udp_handle) {
		guard = create_dissector_handle_with_name_and_description(
			dissect_udp_guard, -1, "roce_udp_guard", "UDP (RoCE source-port guard)");
		dissector_add_uint("ip.proto", 17, guard);
	}
}
