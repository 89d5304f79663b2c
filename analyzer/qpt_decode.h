/* qpt_decode.h - one captured frame to one decoded record
 *
 * The decoder never prints and never allocates: qpt_decode() fills a
 * caller-owned struct qpt_pkt from (link type, bytes, captured length, wire
 * length).  Every read of packet bytes goes through the bounds-checked
 * reader in qpt_read.h.  A frame that is cut short by the snap length is
 * QPT_E_TRUNCATED; a frame whose field values are impossible is one of the
 * "invalid" codes; both keep every header decoded before the problem.
 */
#ifndef QPT_DECODE_H
#define QPT_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qpt_opcode.h"
#include "qpt_psn.h"

/* Link types, as numbered by libpcap's LINKTYPE_* (tcpdump.org/linktypes). */
enum {
	QPT_LINKTYPE_NULL = 0,
	QPT_LINKTYPE_ETHERNET = 1,
	QPT_LINKTYPE_RAW = 101,
	QPT_LINKTYPE_LINUX_SLL = 113,
	QPT_LINKTYPE_ERF = 197,
	QPT_LINKTYPE_IPV4 = 228,
	QPT_LINKTYPE_IPV6 = 229,
	QPT_LINKTYPE_INFINIBAND = 247,
	QPT_LINKTYPE_LINUX_SLL2 = 276,
	QPT_DLT_RAW_BSD = 12, /* DLT_RAW as some systems number it */
	QPT_DLT_RAW_OPENBSD = 14,
};

/* Result codes: an X-macro gives the enum and the message table. */
#define QPT_ERRORS(X)                                                          \
	X(OK, "ok")                                                            \
	X(NOT_IBA, "not RoCE/InfiniBand")                                      \
	X(UNSUPPORTED_LINKTYPE, "unsupported link type")                       \
	X(TRUNCATED, "truncated")                                              \
	X(BAD_IP_LENGTH, "IP length does not match the frame")                 \
	X(BAD_UDP_LENGTH, "UDP length does not match the frame")               \
	X(BAD_LRH_LENGTH, "LRH packet length does not match the frame")        \
	X(BAD_GRH, "GRH next header is not IBA transport")                     \
	X(BAD_LNH, "LRH next header is reserved")                              \
	X(BAD_OPCODE, "reserved BTH opcode")                                   \
	X(BAD_TVER, "BTH transport version is not 0")                          \
	X(BAD_PAD, "pad count larger than the payload")                        \
	X(SHORT_PAYLOAD, "payload shorter than the opcode requires")           \
	X(BAD_MAD, "MAD shorter than its class requires")                      \
	X(BAD_ERF, "ERF record header is invalid")                             \
	X(BAD_MACC, "MAC control frame shorter than its opcode's parameters")

enum qpt_error {
#define QPT_E_ENUM(name, msg) QPT_E_##name,
	QPT_ERRORS(QPT_E_ENUM)
#undef QPT_E_ENUM
	QPT_E_COUNT
};

const char *qpt_strerror(enum qpt_error e);

enum qpt_transport {
	QPT_TR_NONE = 0,
	QPT_TR_ROCEV2,
	QPT_TR_ROCEV1,
	QPT_TR_IB,
};
const char *qpt_transport_name(enum qpt_transport t); /* "RoCEv2", ... */

/* An IPv4 or IPv6 fragment of a UDP datagram: not reassembled, so not
 * decoded. */
enum qpt_ip_fragment {
	QPT_FRAG_NONE,
	QPT_FRAG_ROCE_FIRST, /* the first fragment, UDP to a RoCEv2 port */
	QPT_FRAG_UDP_LATER,  /* a later fragment of a UDP datagram */
};

/* Which headers a record holds (QPT_H_* bits are reused for the ETHs). */
enum {
	QPT_HAS_ETH = 1u << 16,
	QPT_HAS_IPV4 = 1u << 17,
	QPT_HAS_IPV6 = 1u << 18,
	QPT_HAS_UDP = 1u << 19,
	QPT_HAS_LRH = 1u << 20,
	QPT_HAS_GRH = 1u << 21,
	QPT_HAS_BTH = 1u << 22,
	QPT_HAS_ICRC = 1u << 23,
	QPT_HAS_VCRC = 1u << 24,
	QPT_HAS_MAD = 1u << 25,
	QPT_HAS_CM = 1u << 26,
	QPT_HAS_CMA_IP = 1u << 27, /* RDMA-CM IP private data in a CM REQ */
	QPT_HAS_SLL = 1u << 28,
	QPT_HAS_ERF = 1u << 29,
	QPT_HAS_TUNNEL = 1u << 30, /* the frame came inside a tunnel: pkt->tunnel */
	QPT_HAS_MACC = 1u << 31,   /* an 802.3 MAC control frame: pkt->macc */
};

/* Encapsulations a mirror or an overlay delivers frames in.  The inner
 * frame is decoded as if captured directly; the outer one is recorded. */
enum qpt_tunnel_kind {
	QPT_TUN_NONE = 0,
	QPT_TUN_GRE,	  /* plain GRE (IP or MPLS inside) */
	QPT_TUN_GRE_TEB,  /* GRE transparent Ethernet bridging, 0x6558 */
	QPT_TUN_ERSPAN1,  /* GRE 0x88BE without sequence number: no ERSPAN header */
	QPT_TUN_ERSPAN2,  /* GRE 0x88BE, ERSPAN type II header */
	QPT_TUN_ERSPAN3,  /* GRE 0x22EB, ERSPAN type III header */
	QPT_TUN_VXLAN,	  /* UDP 4789 (or opts->vxlan_ports) */
};
const char *qpt_tunnel_name(enum qpt_tunnel_kind k); /* "ERSPAN-II", ... */

/* The outermost tunnel (nested ones are decoded, only the first is kept). */
struct qpt_tunnel {
	uint8_t kind;	    /* enum qpt_tunnel_kind */
	uint8_t depth;	    /* tunnels crossed to reach the IBA packet */
	uint8_t ip_version; /* outer IP: 4 or 6 */
	uint8_t src[16], dst[16]; /* IPv4 in the last four bytes */
	uint16_t gre_proto;
	bool has_key, has_seq;
	uint32_t gre_key, gre_seq;
	uint16_t session_id; /* ERSPAN II/III, 10 bits */
	uint16_t erspan_vlan;
	bool erspan_truncated; /* ERSPAN T bit: the mirror cut the frame */
	bool erspan_subheader; /* ERSPAN III platform specific subheader */
	uint32_t vni;	       /* VXLAN */
	uint16_t udp_sport, udp_dport;
};

#define QPT_MPLS_MAX 4 /* labels recorded; deeper stacks are skipped */


struct qpt_lrh {
	uint8_t vl, lver, sl, lnh;
	uint16_t dlid, slid;
	uint16_t pktlen; /* in 4-byte words, as on the wire */
};

struct qpt_grh {
	uint8_t ipver, nxthdr, hoplmt;
	uint8_t tclass;
	uint32_t flowlabel;
	uint16_t paylen;
	uint8_t sgid[16], dgid[16];
};

struct qpt_bth {
	uint8_t opcode;
	bool se, m, fecn, becn, ackreq;
	uint8_t pad, tver;
	uint16_t pkey;
	uint32_t dqpn, psn;
	uint8_t resv8a, resv7; /* reserved bits, kept for the verbose view */
};

enum qpt_aeth_kind { QPT_AETH_ACK, QPT_AETH_RNR, QPT_AETH_RESERVED, QPT_AETH_NAK };

/* NAK codes (AETH syndrome low five bits when the type is 3). */
enum qpt_nak_code {
	QPT_NAK_PSN_SEQ_ERR = 0,
	QPT_NAK_INVALID_REQ = 1,
	QPT_NAK_REMOTE_ACCESS = 2,
	QPT_NAK_REMOTE_OP = 3,
	QPT_NAK_INVALID_RD = 4,
};
const char *qpt_nak_name(unsigned code); /* "PSN_SEQ_ERR", ... */
const char *qpt_aeth_kind_name(enum qpt_aeth_kind k); /* "ACK", "RNR", "NAK" */
/* RNR NAK timer field to microseconds (IBA table 45). */
double qpt_rnr_timer_us(unsigned timer);

struct qpt_aeth {
	uint8_t syndrome;
	uint32_t msn;
	enum qpt_aeth_kind kind;
	uint8_t value; /* credits, RNR timer or NAK code: the low five bits */
};

struct qpt_reth {
	uint64_t va;
	uint32_t rkey, dmalen;
};

struct qpt_atomiceth {
	uint64_t va;
	uint32_t rkey;
	uint64_t swap, compare;
};

struct qpt_deth {
	uint32_t qkey, sqpn;
};

/* The common MAD header (IBA 13.4.3). */
struct qpt_mad {
	uint8_t base_version, mgmt_class, class_version, method;
	uint16_t status, class_specific, attr_id;
	uint64_t tid;
	uint32_t attr_mod;
};

/* Communication Manager message (IBA 12.6), the fields that matter. */
enum qpt_cm_msg {
	QPT_CM_NONE = 0,
	QPT_CM_CLASSPORTINFO = 0x0001,
	QPT_CM_REQ = 0x0010,
	QPT_CM_MRA = 0x0011,
	QPT_CM_REJ = 0x0012,
	QPT_CM_REP = 0x0013,
	QPT_CM_RTU = 0x0014,
	QPT_CM_DREQ = 0x0015,
	QPT_CM_DREP = 0x0016,
	QPT_CM_SIDR_REQ = 0x0017,
	QPT_CM_SIDR_REP = 0x0018,
	QPT_CM_LAP = 0x0019,
	QPT_CM_APR = 0x001a,
};
const char *qpt_cm_msg_name(unsigned attr_id); /* "REQ", ... or NULL */
/* A CM REJ reason's name (IBA 12.6.7.2 Table 112, as the Linux CM words
 * them: "consumer defined", ...) or NULL. */
const char *qpt_cm_rej_reason_name(unsigned reason);
/* The same, "unknown reason" for a code without a name. */
const char *qpt_cm_rej_reason_text(unsigned reason);

struct qpt_cm {
	uint16_t msg; /* enum qpt_cm_msg (the attribute ID) */
	uint32_t local_comm_id, remote_comm_id;
	uint64_t service_id;
	uint64_t local_ca_guid;
	uint32_t local_qkey;
	uint32_t local_qpn;    /* REQ, REP; SIDR_REP: QPN */
	uint32_t remote_qpn;   /* DREQ, LAP: remote QPN/EECN */
	uint32_t starting_psn; /* REQ, REP */
	uint8_t transport;     /* REQ: transport service type 0 RC, 1 UC, 3 XRC (ext) */
	uint8_t path_mtu;      /* REQ: IBA MTU code 1..5 */
	uint16_t pkey;	       /* REQ, SIDR_REQ */
	uint8_t responder_resources, initiator_depth, retry_count, rnr_retry_count;
	uint16_t reason;       /* REJ reason */
	uint8_t msg_rejected;  /* REJ: 0 REQ, 1 REP, 2 other */
	uint8_t status;	       /* SIDR_REP status, APR status */
	uint16_t primary_lid_local, primary_lid_remote;
	uint8_t primary_gid_local[16], primary_gid_remote[16];
};

/* RDMA-CM private data carried in a REQ for the IP port spaces. */
struct qpt_cma_ip {
	uint8_t cma_version, ip_version; /* 4 or 6 */
	uint16_t port;			 /* source port */
	uint8_t src[16], dst[16];	 /* IPv4 in the last four bytes */
	uint8_t port_space;		 /* from the service ID: 0x06 TCP, 0x11 UDP, ... */
	uint16_t dst_port;		 /* from the service ID */
};

/* IEEE 802.3 MAC control frames (ethertype 0x8808, destination normally
 * 01:80:c2:00:00:01), after any VLAN tags:
 *
 *   PAUSE (802.3 annex 31B)  | Opcode:16 = 0x0001 | pause_time:16 (quanta) | pad |
 *   PFC (802.1Qbb, 802.3 annex 31D)
 *                            | Opcode:16 = 0x0101 | rsv:8 class-enable vector:8 |
 *                            | time[0]:16 ... time[7]:16 (quanta, priority 0 first) | pad |
 *
 * One quantum is 512 bit times at the link's speed.  Bit i of the class-enable
 * vector enables time[i] for priority i; a time of 0 for an enabled priority
 * is an XON (resume).  As Wireshark (macc.cbfc.enbv, macc.cbfc.pause_time.cN,
 * macc.pause_time).  Not RoCE: pkt->transport stays QPT_TR_NONE and
 * pkt->error QPT_E_NOT_IBA; a cut or short MAC control frame says so in
 * macc.error. */
#define QPT_MACC_PAUSE 0x0001
#define QPT_MACC_PFC 0x0101
struct qpt_macc {
	uint16_t opcode;
	uint16_t cev;	    /* PFC: class-enable vector as on the wire (16 bits) */
	uint16_t quanta[8]; /* PFC: per priority; PAUSE: quanta[0] */
	uint8_t error;	    /* enum qpt_error: OK, TRUNCATED (cut by the capture)
			     * or BAD_MACC (the frame itself is too short) */
};

struct qpt_pkt {
	/* What was decoded.  flags: QPT_HAS_* and QPT_H_* bits. */
	uint32_t flags;
	enum qpt_error error;	      /* QPT_E_OK, or why decoding stopped */
	enum qpt_transport transport; /* QPT_TR_NONE when not RoCE/IB */
	uint32_t linktype;
	uint32_t caplen, wirelen;

	/* Layers below the IBA packet. */
	uint8_t vlan_count;
	uint16_t vlan_tci[2];
	uint16_t ethertype;
	uint8_t eth_src[6], eth_dst[6];
	uint8_t ip_version; /* 4 or 6 */
	uint8_t ip_src[16], ip_dst[16];
	uint8_t ip_dscp, ip_ecn, ip_ttl;
	uint16_t ip_id; /* IPv4's identification, 0 for IPv6 */
	uint32_t ip_flowlabel;
	/* The priorities a switch queues the packet by: the 802.1Q PCP of
	 * the frame's first (outer) VLAN tag, -1 when untagged (the tags of
	 * the frame that carries the IBA packet: inside a tunnel, the inner
	 * frame's); the DSCP of the IP header (RoCEv2), or of the GRH's
	 * traffic class (RoCEv1, IB with a GRH), 0 when neither. */
	int vlan_pcp;
	uint8_t dscp;
	uint16_t udp_sport, udp_dport, udp_len;
	/* a UDP datagram to a port not decoded as RoCEv2 whose payload reads
	 * as a BTH (a known opcode, TVer 0, the reserved byte 0, a P_Key with
	 * its low 15 bits set) and is long enough for one and an ICRC: RoCEv2
	 * on another port, perhaps (the front ends count them by port) */
	bool roce_like;
	uint8_t erf_type;
	struct qpt_tunnel tunnel; /* valid with QPT_HAS_TUNNEL */
	uint8_t mpls_count;	  /* labels recorded */
	uint8_t mpls_depth;	  /* labels on the stack (0: no MPLS) */
	uint32_t mpls_label[QPT_MPLS_MAX]; /* 20-bit labels, outermost first */
	/* The capture's snap length cut the payload or the ICRC, but no
	 * header: the frame is analysed, its ICRC not checked. */
	bool cut_by_snaplen;

	/* IBA headers. */
	struct qpt_lrh lrh;
	struct qpt_grh grh;
	struct qpt_bth bth;
	uint32_t rdeth_eecnxt;
	struct qpt_deth deth;
	uint32_t xrceth_srq;
	uint32_t feth;
	uint8_t feth_sel_level, feth_placement;
	struct qpt_reth reth;
	struct qpt_atomiceth atomiceth;
	struct qpt_aeth aeth;
	uint64_t atomicacketh_orig;
	uint32_t immdt; /* as on the wire, big-endian read */
	uint32_t ieth;	/* R_Key to invalidate */

	/* Offsets into the frame (valid when the matching flag is set). */
	uint32_t off_iba;     /* LRH (IB) / GRH (RoCEv1) / BTH (RoCEv2) */
	uint32_t off_l3;      /* IP header (RoCEv2) */
	uint16_t ip6_ext_len; /* bytes of IPv6 extension headers before UDP */
	uint8_t ip_fragment;  /* enum qpt_ip_fragment (then transport is NONE) */
	uint32_t off_bth;
	uint32_t off_payload; /* after the extended headers */
	uint32_t payload_len; /* bytes of payload, pad excluded */
	uint32_t off_icrc;    /* the ICRC (valid with QPT_HAS_ICRC) */
	uint32_t iba_len;     /* bytes from off_iba to the end of the ICRC (or VCRC) */

	/* Checks. */
	uint32_t icrc;		/* as on the wire, big-endian read (as Wireshark shows it) */
	uint32_t icrc_computed; /* same byte order */
	bool icrc_ok;
	bool icrc_checked; /* false when the frame was cut before the ICRC, or
			    * with IPv6 extension headers (which of their
			    * bytes RoCEv2's ICRC covers is not specified) */
	uint16_t vcrc, vcrc_computed;
	bool vcrc_ok;

	/* MAC control (PAUSE, PFC): valid with QPT_HAS_MACC. */
	struct qpt_macc macc;

	/* Management datagram on QP0/QP1: valid only with QPT_HAS_MAD, QPT_HAS_CM
	 * and QPT_HAS_CMA_IP respectively (not cleared for other frames). */
	struct qpt_mad mad;
	struct qpt_cm cm;
	struct qpt_cma_ip cma;
};

struct qpt_decode_opts {
	/* Extra UDP destination ports that carry RoCEv2 (4791 always does). */
	const uint16_t *udp_ports;
	unsigned n_udp_ports;
	/* Skip ICRC/VCRC verification (speed); the stored value is still read. */
	bool no_crc;
	/* Extra UDP destination ports that carry VXLAN (4789 always does). */
	const uint16_t *vxlan_ports;
	unsigned n_vxlan_ports;
};

/* Decode one frame.  Returns pkt->error.  pkt->transport is QPT_TR_NONE when
 * the frame is not RoCE/IB; frames that are RoCE/IB but malformed keep their
 * transport and every header decoded before the problem. */
enum qpt_error qpt_decode(struct qpt_pkt *pkt, uint32_t linktype,
			  const uint8_t *data, uint32_t caplen, uint32_t wirelen,
			  const struct qpt_decode_opts *opts);

/* True when linktype is one qpt_decode() understands. */
bool qpt_linktype_supported(uint32_t linktype);

/* IBA MTU code (1..5) to bytes, 0 when reserved. */
unsigned qpt_mtu_bytes(unsigned code);

#endif
