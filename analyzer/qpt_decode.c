/* qpt_decode.c - link layer to IBA transport headers
 *
 * RoCEv2: IBA annex A17 (UDP destination port 4791, the source port is
 * flow entropy).  RoCEv1: annex A16 (ethertype 0x8915, GRH first).  Native
 * InfiniBand: IBA vol 1 chapter 5/7 (LRH first, LINKTYPE_INFINIBAND 247, or
 * an ERF record of type InfiniBand).  This file reads the link layer, IP,
 * UDP and the tunnels down to the first IBA header; qpt_decode_iba.c the
 * IBA headers (LRH, GRH, BTH, extended headers) and the ICRC.
 *
 * Mirrors and overlays deliver these inside tunnels, decoded here and then
 * the inner frame as if captured directly (its offsets, its ICRC):
 *
 *   GRE (RFC 2784/2890, IP proto 47) | C K S rsv Ver:3 | Protocol:16 | [csum] [key] [seq] |
 *     0x6558 transparent Ethernet bridging: Ethernet frame
 *     0x88BE ERSPAN type II (type I without the S bit: no ERSPAN header)
 *            | Ver:4=1 VLAN:12 | COS:3 En:2 T:1 SessionID:10 | rsv:12 Index:20 | Ethernet
 *     0x22EB ERSPAN type III
 *            | Ver:4=2 VLAN:12 | COS:3 BSO:2 T:1 SessionID:10 | Timestamp:32 |
 *            | SGT:16 | P:1 FT:5 HWID:6 D:1 Gra:2 O:1 | [platform subheader (8) if O] | Ethernet
 *     0x0800, 0x86DD, 0x8847: IP, MPLS
 *   VXLAN (RFC 7348, UDP 4789) | Flags:8 (I=0x08) rsv:24 | VNI:24 rsv:8 | Ethernet
 *   MPLS (RFC 3032, ethertype 0x8847/0x8848) | Label:20 TC:3 S:1 TTL:8 |... then IPv4/IPv6
 */
#include <stddef.h>
#include <string.h>

#include "qpt_attr.h"
#include "qpt_decode_int.h"
#include "qpt_verdict.h"

#define ROCEV2_PORT 4791
#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_IPV6 0x86dd
#define ETHERTYPE_ROCEV1 0x8915
#define ETHERTYPE_VLAN 0x8100
#define ETHERTYPE_QINQ 0x88a8
#define ETHERTYPE_QINQ_OLD 0x9100
#define ETHERTYPE_MACC 0x8808
#define ETHERTYPE_MPLS 0x8847
#define ETHERTYPE_MPLS_MC 0x8848
#define GRE_PROTO_TEB 0x6558
#define GRE_PROTO_ERSPAN2 0x88be
#define GRE_PROTO_ERSPAN3 0x22eb
#define IP_PROTO_UDP 17
#define IP_PROTO_GRE 47
#define VXLAN_PORT 4789
#define MAX_TUNNELS 4	 /* tunnels inside tunnels, at most */
#define MAX_MPLS_LABELS 16 /* labels on one stack, at most */
#define ERF_TYPE_INFINIBAND 21
#define ERF_TYPE_INFINIBAND_LINK 25

static const char *const error_msgs[QPT_E_COUNT] = {
#define QPT_E_MSG(name, msg) [QPT_E_##name] = msg,
	QPT_ERRORS(QPT_E_MSG)
#undef QPT_E_MSG
};

const char *qpt_strerror(enum qpt_error e)
{
	return (unsigned)e < QPT_E_COUNT ? error_msgs[e] : "unknown error";
}

const char *qpt_transport_name(enum qpt_transport t)
{
	return qpt_name_of(qpt_transport_names, t, "none");
}

const char *qpt_tunnel_name(enum qpt_tunnel_kind k)
{
	static const char *const names[] = {
		[QPT_TUN_NONE] = "none",	 [QPT_TUN_GRE] = "GRE",
		[QPT_TUN_GRE_TEB] = "GRE-TEB",	 [QPT_TUN_ERSPAN1] = "ERSPAN-I",
		[QPT_TUN_ERSPAN2] = "ERSPAN-II", [QPT_TUN_ERSPAN3] = "ERSPAN-III",
		[QPT_TUN_VXLAN] = "VXLAN",
	};

	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "unknown";
}

const char *qpt_nak_name(unsigned code)
{
	return qpt_name_of(qpt_nak_names, code, "RESERVED");
}

const char *qpt_aeth_kind_name(enum qpt_aeth_kind k)
{
	return qpt_name_of(qpt_aeth_kind_names, k, "RESERVED");
}

double qpt_rnr_timer_us(unsigned timer)
{
	/* IBA table 45, in milliseconds; 0 means 655.36 ms. */
	static const double ms[32] = {
		655.36, 0.01, 0.02, 0.03, 0.04, 0.06, 0.08, 0.12,
		0.16,	0.24, 0.32, 0.48, 0.64, 0.96, 1.28, 1.92,
		2.56,	3.84, 5.12, 7.68, 10.24, 15.36, 20.48, 30.72,
		40.96,	61.44, 81.92, 122.88, 163.84, 245.76, 327.68, 491.52,
	};

	return ms[timer & 31] * 1000.0;
}

unsigned qpt_mtu_bytes(unsigned code)
{
	return code >= 1 && code <= 5 ? 128u << code : 0;
}

bool qpt_linktype_supported(uint32_t lt)
{
	switch (lt) {
	case QPT_LINKTYPE_NULL:
	case QPT_LINKTYPE_ETHERNET:
	case QPT_LINKTYPE_RAW:
	case QPT_DLT_RAW_BSD:
	case QPT_DLT_RAW_OPENBSD:
	case QPT_LINKTYPE_LINUX_SLL:
	case QPT_LINKTYPE_LINUX_SLL2:
	case QPT_LINKTYPE_ERF:
	case QPT_LINKTYPE_IPV4:
	case QPT_LINKTYPE_IPV6:
	case QPT_LINKTYPE_INFINIBAND:
		return true;
	default:
		return false;
	}
}

/* Record the first problem; later ones do not overwrite it. */
enum qpt_error qpt_decode_fail(struct qpt_pkt *pkt, enum qpt_error e)
{
	if (pkt->error == QPT_E_OK)
		pkt->error = e;
	return pkt->error;
}

/* ---- tunnels: mirrors (ERSPAN, GRE) and overlays (VXLAN, MPLS) ---- */

static enum qpt_error decode_ethertype(struct qpt_pkt *pkt,
				       const struct qpt_buf *b, uint32_t off,
				       uint16_t type, uint32_t wire_end,
				       const struct qpt_decode_opts *opts);
static enum qpt_error decode_ipv4(struct qpt_pkt *pkt, const struct qpt_buf *b,
				  uint32_t off, uint32_t wire_end,
				  const struct qpt_decode_opts *opts);
static enum qpt_error decode_ipv6(struct qpt_pkt *pkt, const struct qpt_buf *b,
				  uint32_t off, uint32_t wire_end,
				  const struct qpt_decode_opts *opts);
static enum qpt_error decode_ip(struct qpt_pkt *pkt, const struct qpt_buf *b,
				uint32_t off, uint32_t wire_end,
				const struct qpt_decode_opts *opts);

/* Into a tunnel: the first one is recorded (t, with the outer IP addresses
 * decoded so far), and the outer IP/UDP layers are forgotten so that the
 * inner frame decodes as if captured directly (its addresses key the
 * conversations).  False past MAX_TUNNELS. */
static bool tunnel_enter(struct qpt_pkt *pkt, struct qpt_tunnel *t)
{
	uint8_t depth = pkt->tunnel.depth;

	if (depth >= MAX_TUNNELS)
		return false;
	if (!depth) {
		t->ip_version = pkt->ip_version;
		memcpy(t->src, pkt->ip_src, 16);
		memcpy(t->dst, pkt->ip_dst, 16);
		pkt->tunnel = *t;
		pkt->flags |= QPT_HAS_TUNNEL;
	}
	pkt->tunnel.depth = depth + 1;
	pkt->flags &= ~(uint32_t)(QPT_HAS_IPV4 | QPT_HAS_IPV6 | QPT_HAS_UDP);
	memset(pkt->ip_src, 0, 16);
	memset(pkt->ip_dst, 0, 16);
	pkt->ip_version = 0;
	pkt->ip_dscp = pkt->ip_ecn = pkt->ip_ttl = 0;
	pkt->ip_id = 0;
	pkt->ip_flowlabel = 0;
	pkt->ip6_ext_len = 0;
	pkt->off_l3 = 0;
	pkt->udp_sport = pkt->udp_dport = pkt->udp_len = 0;
	return true;
}

/* An Ethernet frame inside a tunnel, ending at end; its VLAN tags are its
 * own (the outer ones were the mirror's transport). */
static enum qpt_error decode_inner_eth(struct qpt_pkt *pkt, const struct qpt_buf *b,
				       uint32_t off, uint32_t end,
				       const struct qpt_decode_opts *opts)
{
	uint16_t type;

	if (!qpt_bytes(b, off, pkt->eth_dst, 6) || !qpt_bytes(b, off + 6, pkt->eth_src, 6) ||
	    !qpt_be16(b, off + 12, &type))
		return QPT_E_NOT_IBA;
	pkt->flags |= QPT_HAS_ETH;
	pkt->vlan_count = 0;
	return decode_ethertype(pkt, b, off + 14, type, end, opts);
}

/* An MPLS label stack, then IPv4 or IPv6 (told by its version nibble). */
static enum qpt_error decode_mpls(struct qpt_pkt *pkt, const struct qpt_buf *b,
				  uint32_t off, uint32_t end,
				  const struct qpt_decode_opts *opts)
{
	uint32_t e;

	for (int n = 0;; n++) {
		if (n == MAX_MPLS_LABELS || !qpt_be32(b, off, &e))
			return QPT_E_NOT_IBA;
		if (pkt->mpls_count < QPT_MPLS_MAX)
			pkt->mpls_label[pkt->mpls_count++] = e >> 12;
		if (pkt->mpls_depth < 255)
			pkt->mpls_depth++;
		off += 4;
		if (e & 0x100) /* bottom of stack */
			break;
	}
	return decode_ip(pkt, b, off, end, opts);
}

/* GRE at off inside an IP packet whose payload ends at end. */
static enum qpt_error decode_gre(struct qpt_pkt *pkt, const struct qpt_buf *b,
				 uint32_t off, uint32_t end,
				 const struct qpt_decode_opts *opts)
{
	struct qpt_tunnel t = { .kind = QPT_TUN_GRE };
	uint16_t fl, w;
	uint32_t o = off + 4, w32;

	if (!qpt_be16(b, off, &fl) || !qpt_be16(b, off + 2, &t.gre_proto))
		return QPT_E_NOT_IBA;
	if (fl & 0x4007) /* RFC 1701 routing, or not version 0 (PPTP is 1) */
		return QPT_E_NOT_IBA;
	if (fl & 0x8000) /* checksum and reserved */
		o += 4;
	if (fl & 0x2000) {
		if (!qpt_be32(b, o, &t.gre_key))
			return QPT_E_NOT_IBA;
		t.has_key = true;
		o += 4;
	}
	if (fl & 0x1000) {
		if (!qpt_be32(b, o, &t.gre_seq))
			return QPT_E_NOT_IBA;
		t.has_seq = true;
		o += 4;
	}
	switch (t.gre_proto) {
	case GRE_PROTO_TEB:
		t.kind = QPT_TUN_GRE_TEB;
		break;
	case GRE_PROTO_ERSPAN2:
		if (!t.has_seq) { /* type I: the mirrored frame right away */
			t.kind = QPT_TUN_ERSPAN1;
			break;
		}
		if (!qpt_be16(b, o, &w) || !qpt_be16(b, o + 2, &fl) || (w >> 12) != 1 ||
		    !qpt_be32(b, o + 4, &w32))
			return QPT_E_NOT_IBA;
		t.kind = QPT_TUN_ERSPAN2;
		t.erspan_vlan = w & 0xfff;
		t.erspan_truncated = (fl >> 10) & 1;
		t.session_id = fl & 0x3ff;
		o += 8;
		break;
	case GRE_PROTO_ERSPAN3:
		if (!qpt_be16(b, o, &w) || !qpt_be16(b, o + 2, &fl) || (w >> 12) != 2 ||
		    !qpt_be32(b, o + 4, &w32) || !qpt_be16(b, o + 10, &w))
			return QPT_E_NOT_IBA;
		t.kind = QPT_TUN_ERSPAN3;
		t.erspan_vlan = 0;
		t.erspan_truncated = (fl >> 10) & 1;
		t.session_id = fl & 0x3ff;
		if ((w >> 10) & 0x1f) /* frame type: only Ethernet (0) */
			return QPT_E_NOT_IBA;
		o += 12;
		if (w & 1) { /* O: the 8-byte platform specific subheader */
			t.erspan_subheader = true;
			o += 8;
		}
		break;
	case ETHERTYPE_IPV4:
	case ETHERTYPE_IPV6:
	case ETHERTYPE_MPLS:
	case ETHERTYPE_MPLS_MC:
		break;
	default:
		return QPT_E_NOT_IBA;
	}
	if (!tunnel_enter(pkt, &t))
		return QPT_E_NOT_IBA;
	/* ERSPAN's T bit: the mirror cut the frame to fit (its outer lengths
	 * are those of the cut frame).  The inner lengths are then the truth,
	 * and what is missing was cut, as by a snap length. */
	if (t.erspan_truncated)
		end = UINT32_MAX;
	switch (t.gre_proto) {
	case ETHERTYPE_IPV4:
		return decode_ipv4(pkt, b, o, end, opts);
	case ETHERTYPE_IPV6:
		return decode_ipv6(pkt, b, o, end, opts);
	case ETHERTYPE_MPLS:
	case ETHERTYPE_MPLS_MC:
		return decode_mpls(pkt, b, o, end, opts);
	default:
		return decode_inner_eth(pkt, b, o, end, opts);
	}
}

static bool is_vxlan_port(uint16_t port, const struct qpt_decode_opts *opts)
{
	if (port == VXLAN_PORT)
		return true;
	for (unsigned i = 0; opts && i < opts->n_vxlan_ports; i++)
		if (opts->vxlan_ports[i] == port)
			return true;
	return false;
}

/* VXLAN after the UDP header at off; the UDP datagram ends at end. */
static enum qpt_error decode_vxlan(struct qpt_pkt *pkt, const struct qpt_buf *b,
				   uint32_t off, uint32_t end,
				   const struct qpt_decode_opts *opts)
{
	struct qpt_tunnel t = { .kind = QPT_TUN_VXLAN };
	uint8_t flags;
	uint32_t w;

	if (!qpt_u8(b, off + 8, &flags) || !qpt_be32(b, off + 12, &w) || !(flags & 0x08))
		return QPT_E_NOT_IBA;
	t.vni = w >> 8;
	t.udp_sport = pkt->udp_sport;
	t.udp_dport = pkt->udp_dport;
	if (!tunnel_enter(pkt, &t))
		return QPT_E_NOT_IBA;
	return decode_inner_eth(pkt, b, off + 16, end, opts);
}

static bool is_roce_port(uint16_t port, const struct qpt_decode_opts *opts)
{
	if (port == ROCEV2_PORT)
		return true;
	for (unsigned i = 0; opts && i < opts->n_udp_ports; i++)
		if (opts->udp_ports[i] == port)
			return true;
	return false;
}

/* UDP at off inside an IP packet whose payload ends at ip_end. */
static QPT_HOT enum qpt_error decode_udp(struct qpt_pkt *pkt, const struct qpt_buf *b,
					 uint32_t off, uint32_t ip_end,
					 const struct qpt_decode_opts *opts)
{
	uint32_t end;

	if (!qpt_be16(b, off, &pkt->udp_sport) ||
	    !qpt_be16(b, off + 2, &pkt->udp_dport) ||
	    !qpt_be16(b, off + 4, &pkt->udp_len))
		return QPT_E_NOT_IBA; /* cannot tell: not counted as RoCE */
	if (!is_roce_port(pkt->udp_dport, opts)) {
		uint8_t bth[5];

		if (is_vxlan_port(pkt->udp_dport, opts) && pkt->udp_len >= 16)
			return decode_vxlan(pkt, b, off, MIN(off + pkt->udp_len, ip_end), opts);
		if (pkt->udp_len >= 8 + 12 + 4 &&
		    qpt_bytes(b, off + 8, bth, sizeof(bth)) && qpt_opcodes[bth[0]].name &&
		    !(bth[1] & 0x0f) && (bth[2] & 0x7f) == 0x7f && bth[3] == 0xff && !bth[4])
			pkt->roce_like = true;
		return QPT_E_NOT_IBA;
	}
	pkt->flags |= QPT_HAS_UDP;
	pkt->transport = QPT_TR_ROCEV2;
	pkt->off_iba = off + 8;
	end = off + pkt->udp_len;
	if (pkt->udp_len < 8 || end > ip_end) {
		/* Invalid, but the headers are there: decode up to the IP end. */
		qpt_decode_fail(pkt, QPT_E_BAD_UDP_LENGTH);
		end = ip_end;
		if (end < off + 8)
			return pkt->error;
	}
	pkt->iba_len = end - pkt->off_iba;
	qpt_decode_bth(pkt, b, off + 8, end);
	return pkt->error;
}

static QPT_HOT enum qpt_error decode_ipv4(struct qpt_pkt *pkt, const struct qpt_buf *b,
					  uint32_t off, uint32_t wire_end,
					  const struct qpt_decode_opts *opts)
{
	uint8_t vihl, tos, ttl, proto;
	uint16_t tot, id, frag;
	uint32_t hl;

	if (!qpt_u8(b, off, &vihl) || !qpt_u8(b, off + 1, &tos) || !qpt_be16(b, off + 4, &id) ||
	    !qpt_be16(b, off + 2, &tot) || !qpt_be16(b, off + 6, &frag) ||
	    !qpt_u8(b, off + 8, &ttl) || !qpt_u8(b, off + 9, &proto) ||
	    !qpt_bytes(b, off + 12, pkt->ip_src + 12, 4) ||
	    !qpt_bytes(b, off + 16, pkt->ip_dst + 12, 4))
		return QPT_E_NOT_IBA;
	hl = (vihl & 0xfu) * 4;
	if ((vihl >> 4) != 4 || hl < 20 || (proto != IP_PROTO_UDP && proto != IP_PROTO_GRE))
		return QPT_E_NOT_IBA;
	if (frag & 0x3fff && proto == IP_PROTO_GRE)
		return QPT_E_NOT_IBA; /* not reassembled */
	if (frag & 0x3fff) {
		/* Fragments are not reassembled (the decoder keeps no state);
		 * they are named: RoCE sets DF, so a fragment of it says an IP
		 * MTU is smaller than the RoCE MTU. */
		uint16_t dport;

		if (frag & 0x1fff)
			pkt->ip_fragment = QPT_FRAG_UDP_LATER;
		else if (qpt_be16(b, off + hl + 2, &dport) && is_roce_port(dport, opts))
			pkt->ip_fragment = QPT_FRAG_ROCE_FIRST;
		return QPT_E_NOT_IBA;
	}
	pkt->ip_version = 4;
	pkt->ip_id = id;
	pkt->ip_dscp = tos >> 2;
	pkt->ip_ecn = tos & 3;
	pkt->ip_ttl = ttl;
	pkt->off_l3 = off;
	pkt->flags |= QPT_HAS_IPV4;
	if (proto == IP_PROTO_GRE)
		return tot < hl ? QPT_E_NOT_IBA :
				  decode_gre(pkt, b, off + hl, MIN(off + tot, wire_end), opts);
	if (tot < hl + 8 || off + tot > wire_end) {
		/* A lying length: keep decoding up to the end of the frame, and
		 * call it RoCE only when the UDP port says so. */
		uint16_t dport;

		if (!qpt_be16(b, off + hl + 2, &dport) || !is_roce_port(dport, opts))
			return QPT_E_NOT_IBA;
		qpt_decode_fail(pkt, QPT_E_BAD_IP_LENGTH);
		tot = (uint16_t)MIN(wire_end - off, 0xffffu);
	}
	return decode_udp(pkt, b, off + hl, off + tot, opts);
}

static enum qpt_error decode_ipv6(struct qpt_pkt *pkt, const struct qpt_buf *b,
				  uint32_t off, uint32_t wire_end,
				  const struct qpt_decode_opts *opts)
{
	uint32_t w, ext = 0;
	uint16_t plen;
	uint8_t nh, hlim;
	bool first_fragment = false; /* offset 0, more fragments: not reassembled */

	if (!qpt_be32(b, off, &w) || !qpt_be16(b, off + 4, &plen) ||
	    !qpt_u8(b, off + 6, &nh) || !qpt_u8(b, off + 7, &hlim) ||
	    !qpt_bytes(b, off + 8, pkt->ip_src, 16) ||
	    !qpt_bytes(b, off + 24, pkt->ip_dst, 16))
		return QPT_E_NOT_IBA;
	if ((w >> 28) != 6)
		return QPT_E_NOT_IBA;
	/* Extension headers (RFC 8200 4.1): Hop-by-Hop, Routing, Destination
	 * Options are followed; an atomic Fragment header too (offset 0, no
	 * more fragments); at most 8, within the payload length. */
	for (int n = 0; nh != IP_PROTO_UDP && nh != IP_PROTO_GRE; n++) {
		uint8_t next, len;
		uint16_t fo;

		if (n == 8 || !qpt_u8(b, off + 40 + ext, &next) ||
		    !qpt_u8(b, off + 40 + ext + 1, &len))
			return QPT_E_NOT_IBA;
		if (nh == 0 || nh == 43 || nh == 60) {
			ext += (len + 1u) * 8;
		} else if (nh == 44) {
			if (!qpt_be16(b, off + 40 + ext + 2, &fo))
				return QPT_E_NOT_IBA;
			if (fo & 0xfff8) {
				/* a later fragment (offset > 0): named as IPv4's when it
				 * carries UDP, not reassembled */
				if (next == IP_PROTO_UDP)
					pkt->ip_fragment = QPT_FRAG_UDP_LATER;
				return QPT_E_NOT_IBA;
			}
			/* offset 0 with M: the first fragment, its headers up to
			 * UDP are all in it (RFC 7112), read on to the port */
			first_fragment |= (fo & 1) != 0;
			ext += 8;
		} else {
			return QPT_E_NOT_IBA;
		}
		nh = next;
		if (ext + 8 > plen)
			return QPT_E_NOT_IBA;
	}
	if (first_fragment) {
		/* Fragments are not reassembled (the decoder keeps no state);
		 * they are named as IPv4's: RoCE does not fragment, so a fragment
		 * of it says an IP MTU is smaller than the RoCE MTU. */
		uint16_t dport;

		if (nh == IP_PROTO_UDP && qpt_be16(b, off + 40 + ext + 2, &dport) &&
		    is_roce_port(dport, opts))
			pkt->ip_fragment = QPT_FRAG_ROCE_FIRST;
		return QPT_E_NOT_IBA;
	}
	pkt->ip_version = 6;
	pkt->ip_dscp = (w >> 22) & 0x3f;
	pkt->ip_ecn = (w >> 20) & 3;
	pkt->ip_flowlabel = w & 0xfffff;
	pkt->ip_ttl = hlim;
	pkt->off_l3 = off;
	pkt->flags |= QPT_HAS_IPV6;
	pkt->ip6_ext_len = (uint16_t)ext;
	if (nh == IP_PROTO_GRE)
		return decode_gre(pkt, b, off + 40 + ext, MIN(off + 40u + plen, wire_end), opts);
	if (off + 40u + plen > wire_end) {
		uint16_t dport;

		if (!qpt_be16(b, off + 40 + ext + 2, &dport) || !is_roce_port(dport, opts))
			return QPT_E_NOT_IBA;
		qpt_decode_fail(pkt, QPT_E_BAD_IP_LENGTH);
		plen = (uint16_t)MIN(wire_end - off - 40, 0xffffu);
		if (plen < ext + 8)
			return pkt->error;
	}
	return decode_udp(pkt, b, off + 40 + ext, off + 40 + plen, opts);
}

/* MAC control (see struct qpt_macc): PAUSE and PFC decoded, other opcodes
 * (EPON MPCP, ...) only named.  Never RoCE: returns QPT_E_NOT_IBA, the
 * frame's own problem in pkt->macc.error. */
static enum qpt_error decode_macc(struct qpt_pkt *pkt, const struct qpt_buf *b,
				  uint32_t off, uint32_t wire_end)
{
	struct qpt_macc *m = &pkt->macc;
	uint32_t need;

	pkt->flags |= QPT_HAS_MACC;
	if (!qpt_be16(b, off, &m->opcode)) {
		m->error = off + 2 > wire_end ? QPT_E_BAD_MACC : QPT_E_TRUNCATED;
		return QPT_E_NOT_IBA;
	}
	switch (m->opcode) {
	case QPT_MACC_PAUSE:
		need = 2;
		break;
	case QPT_MACC_PFC:
		need = 2 + 8 * 2;
		break;
	default:
		return QPT_E_NOT_IBA;
	}
	if (off + 2 + need > wire_end) {
		m->error = QPT_E_BAD_MACC;
	} else if (m->opcode == QPT_MACC_PAUSE) {
		if (!qpt_be16(b, off + 2, &m->quanta[0]))
			m->error = QPT_E_TRUNCATED;
	} else {
		bool ok = qpt_be16(b, off + 2, &m->cev);

		for (unsigned i = 0; ok && i < 8; i++)
			ok = qpt_be16(b, off + 4 + 2 * i, &m->quanta[i]);
		if (!ok)
			m->error = QPT_E_TRUNCATED;
	}
	return QPT_E_NOT_IBA; /* what was read is kept, the rest stays 0 */
}

static enum qpt_error decode_ethertype(struct qpt_pkt *pkt,
				       const struct qpt_buf *b, uint32_t off,
				       uint16_t type, uint32_t wire_end,
				       const struct qpt_decode_opts *opts)
{
	/* 802.1Q / QinQ tags: up to two are recorded, more are skipped. */
	for (int tags = 0; type == ETHERTYPE_VLAN || type == ETHERTYPE_QINQ ||
			   type == ETHERTYPE_QINQ_OLD;
	     tags++) {
		uint16_t tci;

		if (tags >= 8 || !qpt_be16(b, off, &tci) ||
		    !qpt_be16(b, off + 2, &type))
			return QPT_E_NOT_IBA;
		if (pkt->vlan_count < 2)
			pkt->vlan_tci[pkt->vlan_count++] = tci;
		off += 4;
	}
	pkt->ethertype = type;
	switch (type) {
	case ETHERTYPE_IPV4:
		return decode_ipv4(pkt, b, off, wire_end, opts);
	case ETHERTYPE_IPV6:
		return decode_ipv6(pkt, b, off, wire_end, opts);
	case ETHERTYPE_ROCEV1:
		return qpt_decode_rocev1(pkt, b, off, wire_end);
	case ETHERTYPE_MACC:
		return decode_macc(pkt, b, off, wire_end);
	case ETHERTYPE_MPLS:
	case ETHERTYPE_MPLS_MC:
		return decode_mpls(pkt, b, off, wire_end, opts);
	default:
		return QPT_E_NOT_IBA;
	}
}

static QPT_HOT enum qpt_error decode_ip(struct qpt_pkt *pkt, const struct qpt_buf *b,
					uint32_t off, uint32_t wire_end,
					const struct qpt_decode_opts *opts)
{
	uint8_t v;

	if (!qpt_u8(b, off, &v))
		return QPT_E_NOT_IBA;
	if ((v >> 4) == 4)
		return decode_ipv4(pkt, b, off, wire_end, opts);
	if ((v >> 4) == 6)
		return decode_ipv6(pkt, b, off, wire_end, opts);
	return QPT_E_NOT_IBA;
}

/* ERF record (Endace): 16-byte header, optional extension headers, then for
 * the InfiniBand types the frame from the LRH. */
static enum qpt_error decode_erf(struct qpt_pkt *pkt, const struct qpt_buf *b,
				 uint32_t wire_end)
{
	uint8_t type, ext;
	uint16_t rlen, wlen;
	uint32_t off = 16;

	if (!qpt_u8(b, 8, &type) || !qpt_be16(b, 10, &rlen) ||
	    !qpt_be16(b, 14, &wlen))
		return QPT_E_NOT_IBA;
	pkt->flags |= QPT_HAS_ERF;
	pkt->erf_type = type & 0x7f;
	for (ext = type; ext & 0x80; off += 8) /* extension header chain */
		if (!qpt_u8(b, off, &ext))
			return QPT_E_NOT_IBA;
	if (pkt->erf_type != ERF_TYPE_INFINIBAND &&
	    pkt->erf_type != ERF_TYPE_INFINIBAND_LINK)
		return QPT_E_NOT_IBA;
	if (rlen < off) {
		pkt->transport = QPT_TR_IB;
		return qpt_decode_fail(pkt, QPT_E_BAD_ERF);
	}
	/* wlen counts the IB packet with its VCRC; rlen may pad the record. */
	return qpt_decode_lrh(pkt, b, off, off + wlen > wire_end ? wire_end : off + wlen);
}

QPT_HOT enum qpt_error qpt_decode(struct qpt_pkt *pkt, uint32_t linktype,
				  const uint8_t *data, uint32_t caplen, uint32_t wirelen,
				  const struct qpt_decode_opts *opts)
{
	struct qpt_buf b = { .data = data, .len = caplen };
	uint32_t wire_end = wirelen < caplen ? caplen : wirelen;
	uint16_t type;
	enum qpt_error r;

	/* The MAD part (most of the struct) is cleared only for MADs: clearing
	 * all of it per frame was a tenth of the decode time. */
	memset(pkt, 0, offsetof(struct qpt_pkt, mad));
	pkt->linktype = linktype;
	pkt->caplen = caplen;
	pkt->wirelen = wirelen;
	pkt->vlan_pcp = -1;

	switch (linktype) {
	case QPT_LINKTYPE_ETHERNET:
		if (!qpt_bytes(&b, 0, pkt->eth_dst, 6) ||
		    !qpt_bytes(&b, 6, pkt->eth_src, 6) || !qpt_be16(&b, 12, &type))
			return pkt->error = QPT_E_NOT_IBA;
		pkt->flags |= QPT_HAS_ETH;
		r = decode_ethertype(pkt, &b, 14, type, wire_end, opts);
		break;
	case QPT_LINKTYPE_LINUX_SLL:
		if (!qpt_be16(&b, 14, &type))
			return pkt->error = QPT_E_NOT_IBA;
		pkt->flags |= QPT_HAS_SLL;
		r = decode_ethertype(pkt, &b, 16, type, wire_end, opts);
		break;
	case QPT_LINKTYPE_LINUX_SLL2:
		if (!qpt_be16(&b, 0, &type))
			return pkt->error = QPT_E_NOT_IBA;
		pkt->flags |= QPT_HAS_SLL;
		r = decode_ethertype(pkt, &b, 20, type, wire_end, opts);
		break;
	case QPT_LINKTYPE_RAW:
	case QPT_DLT_RAW_BSD:
	case QPT_DLT_RAW_OPENBSD:
		r = decode_ip(pkt, &b, 0, wire_end, opts);
		break;
	case QPT_LINKTYPE_IPV4:
		r = decode_ipv4(pkt, &b, 0, wire_end, opts);
		break;
	case QPT_LINKTYPE_IPV6:
		r = decode_ipv6(pkt, &b, 0, wire_end, opts);
		break;
	case QPT_LINKTYPE_NULL:
		/* 4-byte address family in the capturing host's order. */
		if (!qpt_has(&b, 0, 4))
			return pkt->error = QPT_E_NOT_IBA;
		r = decode_ip(pkt, &b, 4, wire_end, opts);
		break;
	case QPT_LINKTYPE_INFINIBAND:
		r = qpt_decode_lrh(pkt, &b, 0, wire_end);
		break;
	case QPT_LINKTYPE_ERF:
		r = decode_erf(pkt, &b, wire_end);
		break;
	default:
		return pkt->error = QPT_E_UNSUPPORTED_LINKTYPE;
	}
	pkt->vlan_pcp = pkt->vlan_count ? pkt->vlan_tci[0] >> 13 : -1;
	if (pkt->ip_version)
		pkt->dscp = pkt->ip_dscp;
	else if (pkt->flags & QPT_HAS_GRH)
		pkt->dscp = pkt->grh.tclass >> 2;
	if (pkt->transport == QPT_TR_NONE)
		return pkt->error = QPT_E_NOT_IBA;
	if (!(opts && opts->no_crc))
		qpt_decode_check_crc(pkt, data);
	return pkt->error = r;
}
