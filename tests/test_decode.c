/* test_decode.c - the frame decoder on hand-built byte arrays
 *
 * Frames are assembled field by field here (link header, IP/UDP or LRH/GRH,
 * BTH, extended headers, payload, pad, ICRC, VCRC) and the decoded record is
 * checked against the literal values written.  ICRC/VCRC are filled in with
 * the engine's CRC functions so that good frames are good; their
 * correctness against real traffic is test_icrc.c's business.
 */
#include <glib.h>
#include <string.h>

/* Mark the test failed with a message and stop it; the other tests run. */
#define FAILF(...)                                                             \
	do {                                                                   \
		g_test_fail_printf(__VA_ARGS__);                                \
		return;                                                        \
	} while (0)

#include "qpt_crc.h"
#include "qpt_decode.h"
#include "qpt_mad.h"

/* ---- frame builder ----------------------------------------------------- */

struct fb {
	uint8_t d[2048];
	uint32_t n;
};

static void p8(struct fb *f, unsigned v) { f->d[f->n++] = (uint8_t)v; }
static void p16(struct fb *f, unsigned v) { p8(f, v >> 8); p8(f, v); }
static void p24(struct fb *f, uint32_t v) { p8(f, v >> 16); p16(f, v & 0xffff); }
static void p32(struct fb *f, uint32_t v) { p16(f, v >> 16); p16(f, v & 0xffff); }
static void p64(struct fb *f, uint64_t v) { p32(f, (uint32_t)(v >> 32)); p32(f, (uint32_t)v); }
static void pmem(struct fb *f, const void *p, uint32_t n) { memcpy(f->d + f->n, p, n); f->n += n; }
static void pfill(struct fb *f, unsigned v, uint32_t n) { memset(f->d + f->n, (int)v, n); f->n += n; }
static void set16(struct fb *f, uint32_t off, unsigned v)
{
	f->d[off] = (uint8_t)(v >> 8);
	f->d[off + 1] = (uint8_t)v;
}

/* The BTH fields. */
struct bth {
	uint8_t opcode;
	bool se, m, fecn, becn, a;
	uint8_t pad, tver;
	uint16_t pkey;
	uint32_t dqpn, psn;
	uint8_t resv8a, resv7;
};

static void put_bth(struct fb *f, const struct bth *b)
{
	p8(f, b->opcode);
	p8(f, (unsigned)b->se << 7 | (unsigned)b->m << 6 | (unsigned)(b->pad & 3) << 4 |
		       (b->tver & 0xf));
	p16(f, b->pkey);
	p8(f, (unsigned)b->fecn << 7 | (unsigned)b->becn << 6 | (b->resv8a & 0x3f));
	p24(f, b->dqpn);
	p8(f, (unsigned)b->a << 7 | (b->resv7 & 0x7f));
	p24(f, b->psn);
}

/* Transport part: BTH + extended headers + payload + pad, no ICRC. */
static struct fb tp_simple(uint8_t opcode, uint32_t dqpn, uint32_t psn,
			   uint32_t paylen, uint8_t pad)
{
	struct fb t = { .n = 0 };
	struct bth b = { .opcode = opcode, .pad = pad, .pkey = 0xffff,
			 .dqpn = dqpn, .psn = psn };

	put_bth(&t, &b);
	for (uint32_t i = 0; i < paylen; i++)
		p8(&t, 0x30 + (i & 0x3f));
	pfill(&t, 0, pad);
	return t;
}

enum link {
	L_ETH, L_VLAN, L_QINQ, L_SLL, L_SLL2, L_RAW, L_RAW12, L_RAW14, L_IPLT,
	L_NULL,
};

static const uint8_t MAC_DST[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x61 };
static const uint8_t MAC_SRC[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x62 };
static const uint8_t IP4_SRC[4] = { 10, 1, 16, 62 };
static const uint8_t IP4_DST[4] = { 10, 1, 16, 61 };
static const uint8_t IP6_SRC[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
				     0x02, 0, 0, 0xff, 0xfe, 0, 0, 0x62 };
static const uint8_t IP6_DST[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0,
				     0, 0, 0, 0, 0, 0, 0, 0x61 };

/* Writes the link header; returns the link type. */
static uint32_t put_link(struct fb *f, enum link l, uint16_t ethertype, int ipver)
{
	switch (l) {
	case L_ETH:
	case L_VLAN:
	case L_QINQ:
		pmem(f, MAC_DST, 6);
		pmem(f, MAC_SRC, 6);
		if (l == L_VLAN) {
			p16(f, 0x8100);
			p16(f, 0x2064);
		} else if (l == L_QINQ) {
			p16(f, 0x88a8);
			p16(f, 0x0123);
			p16(f, 0x8100);
			p16(f, 0x0456);
		}
		p16(f, ethertype);
		return QPT_LINKTYPE_ETHERNET;
	case L_SLL:
		p16(f, 0);	/* packet type: to us */
		p16(f, 1);	/* ARPHRD_ETHER */
		p16(f, 6);	/* address length */
		pmem(f, MAC_SRC, 6);
		p16(f, 0);
		p16(f, ethertype);
		return QPT_LINKTYPE_LINUX_SLL;
	case L_SLL2:
		p16(f, ethertype);
		p16(f, 0);	/* reserved */
		p32(f, 3);	/* ifindex */
		p16(f, 1);	/* ARPHRD_ETHER */
		p8(f, 0);	/* packet type */
		p8(f, 6);	/* address length */
		pmem(f, MAC_SRC, 6);
		p16(f, 0);
		return QPT_LINKTYPE_LINUX_SLL2;
	case L_RAW:
		return QPT_LINKTYPE_RAW;
	case L_RAW12:
		return QPT_DLT_RAW_BSD;
	case L_RAW14:
		return QPT_DLT_RAW_OPENBSD;
	case L_IPLT:
		return ipver == 4 ? QPT_LINKTYPE_IPV4 : QPT_LINKTYPE_IPV6;
	case L_NULL:
		/* AF_INET = 2 / AF_INET6 = 24, little-endian host. */
		p8(f, ipver == 4 ? 2 : 24);
		p8(f, 0);
		p8(f, 0);
		p8(f, 0);
		return QPT_LINKTYPE_NULL;
	}
	return 0;
}

struct frame {
	struct fb f;
	uint32_t linktype;
	uint32_t off_ip, off_udp, off_bth; /* where the builder put them */
};

#define TOS_DEFAULT 0x6b /* DSCP 26, ECN CE */

/* RoCEv2 over IPv4 or IPv6, with dport (4791 unless testing ports). */
static struct frame rocev2(enum link l, int ipver, const struct fb *t, uint16_t dport)
{
	struct frame fr = { .f.n = 0 };
	struct fb *f = &fr.f;
	uint32_t udp_len = 8 + t->n + 4;

	fr.linktype = put_link(f, l, ipver == 4 ? 0x0800 : 0x86dd, ipver);
	fr.off_ip = f->n;
	if (ipver == 4) {
		p8(f, 0x45);
		p8(f, TOS_DEFAULT);
		p16(f, 20 + udp_len);
		p16(f, 0x1234);	/* id */
		p16(f, 0x4000);	/* DF */
		p8(f, 64);	/* TTL */
		p8(f, 17);
		p16(f, 0xbeef); /* checksum: not checked */
		pmem(f, IP4_SRC, 4);
		pmem(f, IP4_DST, 4);
	} else {
		p32(f, 6u << 28 | (uint32_t)TOS_DEFAULT << 20 | 0xabcde);
		p16(f, udp_len);
		p8(f, 17);
		p8(f, 63);
		pmem(f, IP6_SRC, 16);
		pmem(f, IP6_DST, 16);
	}
	fr.off_udp = f->n;
	p16(f, 0xc0de);
	p16(f, dport);
	p16(f, udp_len);
	p16(f, 0);
	fr.off_bth = f->n;
	pmem(f, t->d, t->n);
	/* The CRC functions need a whole BTH; shorter "transport parts" are
	 * for the SHORT_PAYLOAD tests and get a zero ICRC. */
	p32(f, t->n < 12 ? 0 :
		qpt_icrc_rocev2(f->d + fr.off_ip, ipver == 4 ? 20 : 40, (unsigned)ipver,
				f->d + fr.off_bth, t->n));
	return fr;
}

static const uint8_t GID_S[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
				   0x00, 0x02, 0xc9, 0x03, 0x00, 0x0a, 0x0b, 0x0c };
static const uint8_t GID_D[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0,
				   0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };

static void put_grh(struct fb *f, uint16_t paylen, uint8_t nxthdr)
{
	p32(f, 6u << 28 | 0x5au << 20 | 0x12345); /* IPVer, TClass, FlowLabel */
	p16(f, paylen);
	p8(f, nxthdr);
	p8(f, 0x40); /* hop limit */
	pmem(f, GID_S, 16);
	pmem(f, GID_D, 16);
}

/* RoCEv1: Ethernet (optionally VLAN), ethertype 0x8915, GRH, BTH... */
static struct frame rocev1(enum link l, const struct fb *t)
{
	struct frame fr = { .f.n = 0 };
	struct fb *f = &fr.f;
	uint32_t grh;

	fr.linktype = put_link(f, l, 0x8915, 0);
	grh = f->n;
	fr.off_ip = grh;
	put_grh(f, (uint16_t)(t->n + 4), 0x1b);
	fr.off_bth = f->n;
	pmem(f, t->d, t->n);
	g_assert_cmpuint(t->n, >=, 12);
	p32(f, qpt_icrc_grh(NULL, f->d + grh, f->d + fr.off_bth, t->n));
	return fr;
}

/* Native IB: optionally inside an ERF record, optionally with a GRH. */
static struct frame native_ib(bool erf, bool grh, const struct fb *t)
{
	struct frame fr = { .f.n = 0 };
	struct fb *f = &fr.f;
	uint32_t lrh, g = 0, words = (8 + (grh ? 40 : 0) + t->n + 4) / 4;

	g_assert_cmpuint(t->n % 4, ==, 0);
	g_assert_cmpuint(t->n, >=, 12);
	if (erf) {
		p64(f, 0x1122334455667788ull); /* timestamp */
		p8(f, 21);		       /* ERF_TYPE_INFINIBAND */
		p8(f, 0x04);		       /* flags: varying length */
		p16(f, 16 + words * 4 + 2);    /* rlen */
		p16(f, 0);		       /* lctr */
		p16(f, words * 4 + 2);	       /* wlen: IB packet with VCRC */
		fr.linktype = QPT_LINKTYPE_ERF;
	} else {
		fr.linktype = QPT_LINKTYPE_INFINIBAND;
	}
	lrh = f->n;
	fr.off_ip = lrh;
	p8(f, 0x30 | 0x0);		 /* VL 3, LVer 0 */
	p8(f, 0x50 | (grh ? 3 : 2));	 /* SL 5, LNH */
	p16(f, 0x0004);			 /* DLID */
	p16(f, words);			 /* PktLen */
	p16(f, 0x0001);			 /* SLID */
	if (grh) {
		g = f->n;
		put_grh(f, (uint16_t)(t->n + 4), 0x1b);
	}
	fr.off_bth = f->n;
	pmem(f, t->d, t->n);
	p32(f, qpt_icrc_grh(f->d + lrh, grh ? f->d + g : NULL, f->d + fr.off_bth, t->n));
	p16(f, qpt_vcrc(f->d + lrh, words * 4));
	return fr;
}

static enum qpt_error dec(struct qpt_pkt *pkt, const struct frame *fr)
{
	return qpt_decode(pkt, fr->linktype, fr->f.d, fr->f.n, fr->f.n, NULL);
}

static void assert_good(const struct qpt_pkt *pkt, const struct frame *fr)
{
	g_assert_cmpstr(qpt_strerror(pkt->error), ==, qpt_strerror(QPT_E_OK));
	g_assert_true(pkt->flags & QPT_HAS_BTH);
	g_assert_cmpuint(pkt->off_bth, ==, fr->off_bth);
	g_assert_true(pkt->icrc_checked);
	g_assert_true(pkt->icrc_ok);
}

/* ---- BTH ---------------------------------------------------------------- */

static void test_bth_fields(void)
{
	struct fb t = { .n = 0 };
	struct bth b = { .opcode = 0x04, .se = true, .m = true, .pad = 2,
			 .tver = 0, .pkey = 0x8001, .fecn = true, .becn = true,
			 .dqpn = 0xabcdef, .a = true, .psn = 0xfedcba,
			 .resv8a = 0x15, .resv7 = 0x2a };
	struct frame fr;
	struct qpt_pkt pkt;

	put_bth(&t, &b);
	pmem(&t, "0123456789", 10);
	pfill(&t, 0, 2);
	fr = rocev2(L_ETH, 4, &t, 4791);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_OK);
	assert_good(&pkt, &fr);
	g_assert_cmpint(pkt.transport, ==, QPT_TR_ROCEV2);
	g_assert_cmphex(pkt.bth.opcode, ==, 0x04);
	g_assert_true(pkt.bth.se);
	g_assert_true(pkt.bth.m);
	g_assert_cmpuint(pkt.bth.pad, ==, 2);
	g_assert_cmpuint(pkt.bth.tver, ==, 0);
	g_assert_cmphex(pkt.bth.pkey, ==, 0x8001);
	g_assert_true(pkt.bth.fecn);
	g_assert_true(pkt.bth.becn);
	g_assert_cmphex(pkt.bth.resv8a, ==, 0x15);
	g_assert_cmphex(pkt.bth.dqpn, ==, 0xabcdef);
	g_assert_true(pkt.bth.ackreq);
	g_assert_cmphex(pkt.bth.resv7, ==, 0x2a);
	g_assert_cmphex(pkt.bth.psn, ==, 0xfedcba);
	g_assert_cmpuint(pkt.off_payload, ==, 42 + 12);
	g_assert_cmpuint(pkt.payload_len, ==, 10);
	g_assert_cmpuint(pkt.iba_len, ==, 12 + 12 + 4);
	g_assert_cmpuint(pkt.off_iba, ==, 42);
	g_assert_cmpuint(pkt.off_l3, ==, 14);
	/* Layers below. */
	g_assert_true(pkt.flags & QPT_HAS_ETH);
	g_assert_true(pkt.flags & QPT_HAS_IPV4);
	g_assert_true(pkt.flags & QPT_HAS_UDP);
	g_assert_cmpmem(pkt.eth_dst, 6, MAC_DST, 6);
	g_assert_cmpmem(pkt.eth_src, 6, MAC_SRC, 6);
	g_assert_cmphex(pkt.ethertype, ==, 0x0800);
	g_assert_cmpuint(pkt.ip_version, ==, 4);
	g_assert_cmpmem(pkt.ip_src + 12, 4, IP4_SRC, 4);
	g_assert_cmpmem(pkt.ip_dst + 12, 4, IP4_DST, 4);
	g_assert_cmpuint(pkt.ip_dscp, ==, 26);
	g_assert_cmpuint(pkt.ip_ecn, ==, 3);
	g_assert_cmpuint(pkt.ip_ttl, ==, 64);
	g_assert_cmphex(pkt.ip_id, ==, 0x1234); /* the frame's identification */
	g_assert_cmphex(pkt.udp_sport, ==, 0xc0de);
	g_assert_cmpuint(pkt.udp_dport, ==, 4791);
	g_assert_cmpuint(pkt.udp_len, ==, 8 + 24 + 4);
	g_assert_cmpuint(pkt.vlan_count, ==, 0);

	/* The same with every flag clear. */
	memset(&b, 0, sizeof(b));
	b.opcode = 0x04;
	b.pkey = 0xffff;
	t.n = 0;
	put_bth(&t, &b);
	pmem(&t, "abcd", 4);
	fr = rocev2(L_ETH, 4, &t, 4791);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_OK);
	g_assert_false(pkt.bth.se || pkt.bth.m || pkt.bth.fecn || pkt.bth.becn ||
		       pkt.bth.ackreq);
	g_assert_cmpuint(pkt.bth.pad, ==, 0);
	g_assert_cmpuint(pkt.payload_len, ==, 4);
}

static void test_bth_tver(void)
{
	struct fb t = { .n = 0 };
	struct bth b = { .opcode = 0x04, .tver = 1, .pkey = 0xffff, .dqpn = 17, .psn = 5 };
	struct frame fr;
	struct qpt_pkt pkt;

	put_bth(&t, &b);
	pmem(&t, "abcd", 4);
	fr = rocev2(L_ETH, 4, &t, 4791);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_BAD_TVER);
	g_assert_cmpint(pkt.transport, ==, QPT_TR_ROCEV2);
	g_assert_cmpuint(pkt.bth.tver, ==, 1);
	g_assert_cmpuint(pkt.bth.dqpn, ==, 17);
	g_assert_cmpuint(pkt.bth.psn, ==, 5);
}

static void test_bad_opcode(void)
{
	static const uint8_t ops[] = { 0x15, 0x1e, 0x2c, 0x60, 0x80, 0x82, 0xb5 };

	for (size_t i = 0; i < sizeof(ops); i++) {
		struct fb t = tp_simple(ops[i], 0x11, 1, 8, 0);
		struct frame fr = rocev2(L_ETH, 4, &t, 4791);
		struct qpt_pkt pkt;

		g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_BAD_OPCODE);
		g_assert_cmpint(pkt.transport, ==, QPT_TR_ROCEV2);
		g_assert_cmphex(pkt.bth.opcode, ==, ops[i]);
	}
}

static void test_manufacturer_opcode(void)
{
	struct fb t = tp_simple(0xc5, 0x11, 1, 8, 0);
	struct frame fr = rocev2(L_ETH, 4, &t, 4791);
	struct qpt_pkt pkt;

	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_OK);
	g_assert_cmphex(pkt.bth.opcode, ==, 0xc5);
	g_assert_cmpuint(pkt.off_payload, ==, 42 + 12);
	g_assert_cmpuint(pkt.payload_len, ==, 8);
}

/* ---- extended headers --------------------------------------------------- */

static struct fb tp_hdr(uint8_t opcode, uint32_t dqpn)
{
	struct fb t = { .n = 0 };
	struct bth b = { .opcode = opcode, .pkey = 0xffff, .dqpn = dqpn, .psn = 0x000100 };

	put_bth(&t, &b);
	return t;
}

static void decode_ok(const struct fb *t, struct qpt_pkt *pkt)
{
	struct frame fr = rocev2(L_ETH, 4, t, 4791);

	g_assert_cmpint(dec(pkt, &fr), ==, QPT_E_OK);
	assert_good(pkt, &fr);
}

static void test_reth(void)
{
	struct fb t = tp_hdr(0x0a, 0x2c); /* RC RDMA WRITE Only */
	struct qpt_pkt pkt;

	p64(&t, 0x0123456789abcdefull);
	p32(&t, 0xdeadbeef);
	p32(&t, 0x00001000);
	pfill(&t, 0xee, 16);
	decode_ok(&t, &pkt);
	g_assert_true(pkt.flags & QPT_H_RETH);
	g_assert_cmphex(pkt.reth.va, ==, 0x0123456789abcdefull);
	g_assert_cmphex(pkt.reth.rkey, ==, 0xdeadbeef);
	g_assert_cmpuint(pkt.reth.dmalen, ==, 0x1000);
	g_assert_cmpuint(pkt.off_payload, ==, 42 + 12 + 16);
	g_assert_cmpuint(pkt.payload_len, ==, 16);
	g_assert_false(pkt.flags & (QPT_H_AETH | QPT_H_DETH | QPT_H_IMMDT));
}

static void test_aeth(void)
{
	static const struct {
		uint8_t syndrome;
		enum qpt_aeth_kind kind;
		uint8_t value;
		const char *name;
	} t[] = {
		{ 0x1f, QPT_AETH_ACK, 31, "ACK" },
		{ 0x00, QPT_AETH_ACK, 0, "ACK" },
		{ 0x2e, QPT_AETH_RNR, 14, "RNR" },
		{ 0x20, QPT_AETH_RNR, 0, "RNR" },
		{ 0x40, QPT_AETH_RESERVED, 0, "RESERVED" },
		{ 0x60, QPT_AETH_NAK, QPT_NAK_PSN_SEQ_ERR, "NAK" },
		{ 0x61, QPT_AETH_NAK, QPT_NAK_INVALID_REQ, "NAK" },
		{ 0x62, QPT_AETH_NAK, QPT_NAK_REMOTE_ACCESS, "NAK" },
		{ 0x63, QPT_AETH_NAK, QPT_NAK_REMOTE_OP, "NAK" },
		{ 0x64, QPT_AETH_NAK, QPT_NAK_INVALID_RD, "NAK" },
		{ 0x9f, QPT_AETH_ACK, 31, "ACK" }, /* bit 7 reserved: ignored */
	};

	for (size_t i = 0; i < G_N_ELEMENTS(t); i++) {
		struct fb f = tp_hdr(0x11, 0x2c); /* RC Acknowledge */
		struct qpt_pkt pkt;

		p8(&f, t[i].syndrome);
		p24(&f, 0x123456);
		decode_ok(&f, &pkt);
		g_assert_true(pkt.flags & QPT_H_AETH);
		g_assert_cmphex(pkt.aeth.syndrome, ==, t[i].syndrome);
		g_assert_cmpint(pkt.aeth.kind, ==, t[i].kind);
		g_assert_cmpuint(pkt.aeth.value, ==, t[i].value);
		g_assert_cmphex(pkt.aeth.msn, ==, 0x123456);
		g_assert_cmpstr(qpt_aeth_kind_name(pkt.aeth.kind), ==, t[i].name);
		g_assert_cmpuint(pkt.payload_len, ==, 0);
	}
	g_assert_cmpstr(qpt_nak_name(0), ==, "PSN_SEQ_ERR");
	g_assert_cmpstr(qpt_nak_name(2), ==, "REMOTE_ACCESS");
	g_assert_cmpstr(qpt_nak_name(4), ==, "INVALID_RD");
	g_assert_cmpstr(qpt_nak_name(5), ==, "RESERVED");
	/* IBA table 45. */
	g_assert_cmpfloat_with_epsilon(qpt_rnr_timer_us(0), 655360.0, 1e-6);
	g_assert_cmpfloat_with_epsilon(qpt_rnr_timer_us(1), 10.0, 1e-6);
	g_assert_cmpfloat_with_epsilon(qpt_rnr_timer_us(14), 1280.0, 1e-6);
	g_assert_cmpfloat_with_epsilon(qpt_rnr_timer_us(31), 491520.0, 1e-6);
}

static void test_deth(void)
{
	struct fb t = tp_hdr(0x64, 0x000123); /* UD SEND Only */
	struct qpt_pkt pkt;

	p32(&t, 0x11223344);
	p8(&t, 0xff); /* reserved */
	p24(&t, 0xa1b2c3);
	pmem(&t, "data", 4);
	decode_ok(&t, &pkt);
	g_assert_true(pkt.flags & QPT_H_DETH);
	g_assert_cmphex(pkt.deth.qkey, ==, 0x11223344);
	g_assert_cmphex(pkt.deth.sqpn, ==, 0xa1b2c3);
	g_assert_cmpuint(pkt.payload_len, ==, 4);
	g_assert_false(pkt.flags & QPT_HAS_MAD); /* not QP0/QP1 */
}

static void test_immdt(void)
{
	struct fb t = tp_hdr(0x05, 0x2c); /* RC SEND Only with Immediate */
	struct qpt_pkt pkt;

	p32(&t, 0xcafebabe);
	pmem(&t, "abcdefgh", 8);
	decode_ok(&t, &pkt);
	g_assert_true(pkt.flags & QPT_H_IMMDT);
	g_assert_cmphex(pkt.immdt, ==, 0xcafebabe);
	g_assert_cmpuint(pkt.payload_len, ==, 8);

	t = tp_hdr(0x65, 0x77); /* UD SEND Only with Immediate: DETH then ImmDt */
	p32(&t, 0x80010000);
	p32(&t, 0x00000042);
	p32(&t, 0x01020304);
	decode_ok(&t, &pkt);
	g_assert_cmphex(pkt.deth.qkey, ==, 0x80010000);
	g_assert_cmphex(pkt.deth.sqpn, ==, 0x42);
	g_assert_cmphex(pkt.immdt, ==, 0x01020304);
	g_assert_cmpuint(pkt.payload_len, ==, 0);

	t = tp_hdr(0x0b, 0x2c); /* RC WRITE Only with Immediate: RETH then ImmDt */
	p64(&t, 0x1000);
	p32(&t, 0x55);
	p32(&t, 4);
	p32(&t, 0x0badf00d);
	pmem(&t, "wxyz", 4);
	decode_ok(&t, &pkt);
	g_assert_cmphex(pkt.reth.va, ==, 0x1000);
	g_assert_cmphex(pkt.reth.rkey, ==, 0x55);
	g_assert_cmpuint(pkt.reth.dmalen, ==, 4);
	g_assert_cmphex(pkt.immdt, ==, 0x0badf00d);
	g_assert_cmpuint(pkt.payload_len, ==, 4);
}

static void test_ieth(void)
{
	struct fb t = tp_hdr(0x17, 0x2c); /* RC SEND Only with Invalidate */
	struct qpt_pkt pkt;

	p32(&t, 0x87654321);
	pmem(&t, "abcd", 4);
	decode_ok(&t, &pkt);
	g_assert_true(pkt.flags & QPT_H_IETH);
	g_assert_cmphex(pkt.ieth, ==, 0x87654321);
	g_assert_cmpuint(pkt.payload_len, ==, 4);
}

static void test_atomiceth(void)
{
	struct fb t = tp_hdr(0x13, 0x2c); /* RC CmpSwap */
	struct qpt_pkt pkt;

	p64(&t, 0x00007f0012345678ull);
	p32(&t, 0x00abcdef);
	p64(&t, 0x1111111122222222ull);
	p64(&t, 0x3333333344444444ull);
	decode_ok(&t, &pkt);
	g_assert_true(pkt.flags & QPT_H_ATOMICETH);
	g_assert_cmphex(pkt.atomiceth.va, ==, 0x00007f0012345678ull);
	g_assert_cmphex(pkt.atomiceth.rkey, ==, 0x00abcdef);
	g_assert_cmphex(pkt.atomiceth.swap, ==, 0x1111111122222222ull);
	g_assert_cmphex(pkt.atomiceth.compare, ==, 0x3333333344444444ull);
	g_assert_cmpuint(pkt.payload_len, ==, 0);
}

static void test_atomicacketh(void)
{
	struct fb t = tp_hdr(0x12, 0x2c); /* RC ATOMIC Acknowledge */
	struct qpt_pkt pkt;

	p8(&t, 0x1f);
	p24(&t, 7);
	p64(&t, 0x0102030405060708ull);
	decode_ok(&t, &pkt);
	g_assert_true(pkt.flags & QPT_H_AETH);
	g_assert_true(pkt.flags & QPT_H_ATOMICACKETH);
	g_assert_cmpuint(pkt.aeth.msn, ==, 7);
	g_assert_cmphex(pkt.atomicacketh_orig, ==, 0x0102030405060708ull);
}

static void test_xrceth(void)
{
	struct fb t = tp_hdr(0xa4, 0x2c); /* XRC SEND Only */
	struct qpt_pkt pkt;

	p8(&t, 0xff); /* reserved */
	p24(&t, 0x00abcd);
	pmem(&t, "abcdefgh", 8);
	decode_ok(&t, &pkt);
	g_assert_true(pkt.flags & QPT_H_XRCETH);
	g_assert_cmphex(pkt.xrceth_srq, ==, 0x00abcd);
	g_assert_cmpuint(pkt.payload_len, ==, 8);

	t = tp_hdr(0xb4, 0x2c); /* XRC FetchAdd: XRCETH then AtomicETH */
	p32(&t, 0x000042);
	p64(&t, 0x2000);
	p32(&t, 0x99);
	p64(&t, 1);
	p64(&t, 0);
	decode_ok(&t, &pkt);
	g_assert_cmphex(pkt.xrceth_srq, ==, 0x42);
	g_assert_cmphex(pkt.atomiceth.va, ==, 0x2000);
	g_assert_cmphex(pkt.atomiceth.rkey, ==, 0x99);
	g_assert_cmphex(pkt.atomiceth.swap, ==, 1);
}

static void test_rdeth(void)
{
	struct fb t = tp_hdr(0x44, 0x2c); /* RD SEND Only: RDETH, DETH */
	struct qpt_pkt pkt;

	p8(&t, 0xff); /* reserved */
	p24(&t, 0x123456);
	p32(&t, 0x0000abcd);
	p32(&t, 0x00000099);
	pmem(&t, "abcd", 4);
	decode_ok(&t, &pkt);
	g_assert_true(pkt.flags & QPT_H_RDETH);
	g_assert_true(pkt.flags & QPT_H_DETH);
	g_assert_cmphex(pkt.rdeth_eecnxt, ==, 0x123456);
	g_assert_cmphex(pkt.deth.qkey, ==, 0xabcd);
	g_assert_cmphex(pkt.deth.sqpn, ==, 0x99);
	g_assert_cmpuint(pkt.payload_len, ==, 4);

	t = tp_hdr(0x4d, 0x2c); /* RD READ Response First: RDETH, AETH */
	p32(&t, 0x000777);
	p8(&t, 0x1f);
	p24(&t, 3);
	pmem(&t, "abcdefgh", 8);
	decode_ok(&t, &pkt);
	g_assert_cmphex(pkt.rdeth_eecnxt, ==, 0x777);
	g_assert_false(pkt.flags & QPT_H_DETH);
	g_assert_cmpuint(pkt.aeth.msn, ==, 3);
	g_assert_cmpuint(pkt.payload_len, ==, 8);
}

static void test_flush(void)
{
	struct fb t = tp_hdr(0x1c, 0x2c); /* RC FLUSH: FETH, RETH */
	struct qpt_pkt pkt;

	p32(&t, 0x00000025); /* selectivity 2, placement 5 */
	p64(&t, 0xabc000);
	p32(&t, 0x1234);
	p32(&t, 0x40);
	decode_ok(&t, &pkt);
	g_assert_true(pkt.flags & QPT_H_FETH);
	g_assert_true(pkt.flags & QPT_H_RETH);
	g_assert_cmphex(pkt.feth, ==, 0x25);
	g_assert_cmpuint(pkt.feth_sel_level, ==, 2);
	g_assert_cmpuint(pkt.feth_placement, ==, 5);
	g_assert_cmphex(pkt.reth.va, ==, 0xabc000);
	g_assert_cmphex(pkt.reth.rkey, ==, 0x1234);
	g_assert_cmpuint(pkt.reth.dmalen, ==, 0x40);
	g_assert_cmpuint(pkt.payload_len, ==, 0);
}

static void test_atomic_write(void)
{
	struct fb t = tp_hdr(0x1d, 0x2c); /* RC ATOMIC WRITE: RETH + 8 bytes */
	struct qpt_pkt pkt;
	struct frame fr;

	p64(&t, 0x5000);
	p32(&t, 0x77);
	p32(&t, 8);
	p64(&t, 0xfeedfacecafebeefull);
	decode_ok(&t, &pkt);
	g_assert_cmphex(pkt.reth.va, ==, 0x5000);
	g_assert_cmpuint(pkt.payload_len, ==, 8);
	g_assert_cmpuint(pkt.off_payload, ==, 42 + 12 + 16);

	/* Only 4 payload bytes: too short for the opcode. */
	t = tp_hdr(0x1d, 0x2c);
	p64(&t, 0x5000);
	p32(&t, 0x77);
	p32(&t, 8);
	p32(&t, 0xfeedface);
	fr = rocev2(L_ETH, 4, &t, 4791);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_SHORT_PAYLOAD);
	g_assert_cmpuint(pkt.payload_len, ==, 4);
}

static void test_cnp(void)
{
	struct fb t = { .n = 0 };
	struct bth b = { .opcode = 0x81, .becn = true, .pkey = 0xffff, .dqpn = 0x0000d2 };
	struct qpt_pkt pkt;
	struct frame fr;

	put_bth(&t, &b);
	pfill(&t, 0, 16);
	fr = rocev2(L_ETH, 4, &t, 4791);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_OK);
	assert_good(&pkt, &fr);
	g_assert_cmphex(pkt.bth.opcode, ==, 0x81);
	g_assert_true(pkt.bth.becn);
	g_assert_false(pkt.bth.fecn);
	g_assert_cmphex(pkt.bth.dqpn, ==, 0xd2);
	g_assert_cmpuint(pkt.payload_len, ==, 16);
	g_assert_cmpuint(fr.f.n, ==, 14 + 20 + 8 + 12 + 16 + 4);

	/* A CNP without its 16 reserved bytes. */
	t.n = 0;
	put_bth(&t, &b);
	fr = rocev2(L_ETH, 4, &t, 4791);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_SHORT_PAYLOAD);
	g_assert_cmphex(pkt.bth.opcode, ==, 0x81);
}

/* ---- link types --------------------------------------------------------- */

struct link_case {
	const char *name;
	enum link l;
	int ipver;
	uint32_t linktype, off_bth;
	unsigned vlans;
};

static const struct link_case link_cases[] = {
	{ "ethernet-v4", L_ETH, 4, 1, 42, 0 },
	{ "ethernet-v6", L_ETH, 6, 1, 62, 0 },
	{ "vlan-v4", L_VLAN, 4, 1, 46, 1 },
	{ "vlan-v6", L_VLAN, 6, 1, 66, 1 },
	{ "qinq-v4", L_QINQ, 4, 1, 50, 2 },
	{ "sll-v4", L_SLL, 4, 113, 44, 0 },
	{ "sll-v6", L_SLL, 6, 113, 64, 0 },
	{ "sll2-v4", L_SLL2, 4, 276, 48, 0 },
	{ "sll2-v6", L_SLL2, 6, 276, 68, 0 },
	{ "raw-v4", L_RAW, 4, 101, 28, 0 },
	{ "raw-v6", L_RAW, 6, 101, 48, 0 },
	{ "raw12-v4", L_RAW12, 4, 12, 28, 0 },
	{ "raw14-v6", L_RAW14, 6, 14, 48, 0 },
	{ "ipv4-linktype", L_IPLT, 4, 228, 28, 0 },
	{ "ipv6-linktype", L_IPLT, 6, 229, 48, 0 },
	{ "null-v4", L_NULL, 4, 0, 32, 0 },
	{ "null-v6", L_NULL, 6, 0, 52, 0 },
};

static void test_link(gconstpointer p)
{
	const struct link_case *c = p;
	struct fb t = tp_simple(0x04, 0x00002b, 0xfebd3d, 16, 0);
	struct frame fr = rocev2(c->l, c->ipver, &t, 4791);
	struct qpt_pkt pkt;

	g_assert_cmpuint(fr.linktype, ==, c->linktype);
	g_assert_true(qpt_linktype_supported(c->linktype));
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_OK);
	assert_good(&pkt, &fr);
	g_assert_cmpuint(pkt.off_bth, ==, c->off_bth);
	g_assert_cmpint(pkt.transport, ==, QPT_TR_ROCEV2);
	g_assert_cmpuint(pkt.linktype, ==, c->linktype);
	g_assert_cmpuint(pkt.ip_version, ==, (unsigned)c->ipver);
	g_assert_cmpuint(pkt.off_l3, ==, fr.off_ip);
	g_assert_cmphex(pkt.bth.dqpn, ==, 0x2b);
	g_assert_cmphex(pkt.bth.psn, ==, 0xfebd3d);
	g_assert_cmpuint(pkt.payload_len, ==, 16);
	g_assert_cmpuint(pkt.vlan_count, ==, c->vlans);
	if (c->ipver == 4) {
		g_assert_cmpmem(pkt.ip_src + 12, 4, IP4_SRC, 4);
		g_assert_cmpmem(pkt.ip_dst + 12, 4, IP4_DST, 4);
		g_assert_cmpuint(pkt.ip_ttl, ==, 64);
	} else {
		g_assert_true(pkt.flags & QPT_HAS_IPV6);
		g_assert_cmpmem(pkt.ip_src, 16, IP6_SRC, 16);
		g_assert_cmpmem(pkt.ip_dst, 16, IP6_DST, 16);
		g_assert_cmphex(pkt.ip_flowlabel, ==, 0xabcde);
		g_assert_cmpuint(pkt.ip_ttl, ==, 63);
	}
	g_assert_cmpuint(pkt.ip_dscp, ==, 26);
	g_assert_cmpuint(pkt.ip_ecn, ==, 3);
	g_assert_cmpuint(pkt.dscp, ==, 26);
	if (c->l == L_VLAN)
		g_assert_cmphex(pkt.vlan_tci[0], ==, 0x2064);
	if (c->l == L_QINQ) {
		g_assert_cmphex(pkt.vlan_tci[0], ==, 0x0123);
		g_assert_cmphex(pkt.vlan_tci[1], ==, 0x0456);
	}
	/* the priority of the outer tag (TCI 0x2064: PCP 1; QinQ 0x0123: 0) */
	g_assert_cmpint(pkt.vlan_pcp, ==, c->l == L_VLAN ? 1 : c->l == L_QINQ ? 0 : -1);
	if (c->l == L_SLL || c->l == L_SLL2)
		g_assert_true(pkt.flags & QPT_HAS_SLL);
	if (c->l <= L_QINQ)
		g_assert_true(pkt.flags & QPT_HAS_ETH);
}

static void test_rocev1(void)
{
	struct fb t = tp_simple(0x04, 0x000045, 77, 20, 0);
	struct qpt_pkt pkt;

	for (int vlan = 0; vlan < 2; vlan++) {
		struct frame fr = rocev1(vlan ? L_VLAN : L_ETH, &t);

		g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_OK);
		assert_good(&pkt, &fr);
		g_assert_cmpint(pkt.transport, ==, QPT_TR_ROCEV1);
		g_assert_cmphex(pkt.ethertype, ==, 0x8915);
		g_assert_cmpuint(pkt.off_bth, ==, vlan ? 58u : 54u);
		g_assert_cmpuint(pkt.off_iba, ==, vlan ? 18u : 14u);
		g_assert_true(pkt.flags & QPT_HAS_GRH);
		g_assert_false(pkt.flags & (QPT_HAS_LRH | QPT_HAS_IPV4 | QPT_HAS_UDP));
		g_assert_cmpuint(pkt.grh.ipver, ==, 6);
		g_assert_cmphex(pkt.grh.tclass, ==, 0x5a);
		g_assert_cmphex(pkt.grh.flowlabel, ==, 0x12345);
		g_assert_cmpuint(pkt.grh.paylen, ==, 12 + 20 + 4);
		g_assert_cmphex(pkt.grh.nxthdr, ==, 0x1b);
		g_assert_cmpuint(pkt.grh.hoplmt, ==, 0x40);
		g_assert_cmpmem(pkt.grh.sgid, 16, GID_S, 16);
		g_assert_cmpmem(pkt.grh.dgid, 16, GID_D, 16);
		g_assert_cmphex(pkt.bth.dqpn, ==, 0x45);
		g_assert_cmpuint(pkt.payload_len, ==, 20);
	}
}

static void test_native_ib(gconstpointer p)
{
	unsigned v = GPOINTER_TO_UINT(p);
	bool erf = v & 1, grh = v & 2;
	struct fb t = tp_simple(0x04, 0xfc0407, 13896277, 88, 0);
	struct frame fr = native_ib(erf, grh, &t);
	uint32_t base = erf ? 16 : 0;
	struct qpt_pkt pkt;

	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_OK);
	assert_good(&pkt, &fr);
	g_assert_cmpint(pkt.transport, ==, QPT_TR_IB);
	g_assert_cmpuint(pkt.off_iba, ==, base);
	g_assert_cmpuint(pkt.off_bth, ==, base + 8 + (grh ? 40 : 0));
	g_assert_true(pkt.flags & QPT_HAS_LRH);
	g_assert_cmpuint(pkt.lrh.vl, ==, 3);
	g_assert_cmpuint(pkt.lrh.lver, ==, 0);
	g_assert_cmpuint(pkt.lrh.sl, ==, 5);
	g_assert_cmpuint(pkt.lrh.lnh, ==, grh ? 3 : 2);
	g_assert_cmphex(pkt.lrh.dlid, ==, 4);
	g_assert_cmphex(pkt.lrh.slid, ==, 1);
	g_assert_cmpuint(pkt.lrh.pktlen, ==, (8 + (grh ? 40 : 0) + 12 + 88 + 4) / 4);
	g_assert_cmpuint(pkt.iba_len, ==, pkt.lrh.pktlen * 4u + 2);
	g_assert_true(pkt.flags & QPT_HAS_VCRC);
	g_assert_true(pkt.vcrc_ok);
	g_assert_cmpuint(!!(pkt.flags & QPT_HAS_GRH), ==, grh);
	if (grh) {
		g_assert_cmpmem(pkt.grh.sgid, 16, GID_S, 16);
		g_assert_cmpmem(pkt.grh.dgid, 16, GID_D, 16);
		g_assert_cmpuint(pkt.grh.hoplmt, ==, 0x40);
	}
	g_assert_cmpuint(!!(pkt.flags & QPT_HAS_ERF), ==, erf);
	if (erf)
		g_assert_cmpuint(pkt.erf_type, ==, 21);
	g_assert_cmphex(pkt.bth.dqpn, ==, 0xfc0407);
	g_assert_cmpuint(pkt.bth.psn, ==, 13896277);
	g_assert_cmpuint(pkt.payload_len, ==, 88);

	/* A flipped VCRC byte: VCRC bad, ICRC still good. */
	fr.f.d[fr.f.n - 1] ^= 1;
	dec(&pkt, &fr);
	g_assert_false(pkt.vcrc_ok);
	g_assert_true(pkt.icrc_ok);
}

static void test_erf_other_type(void)
{
	struct fb t = tp_simple(0x04, 1, 1, 8, 0);
	struct frame fr = native_ib(true, false, &t);
	struct qpt_pkt pkt;

	fr.f.d[8] = 2; /* ERF_TYPE_ETH */
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_NOT_IBA);
	g_assert_cmpint(pkt.transport, ==, QPT_TR_NONE);
	/* Record length shorter than its own header. */
	fr = native_ib(true, false, &t);
	set16(&fr.f, 10, 8);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_BAD_ERF);
	g_assert_cmpint(pkt.transport, ==, QPT_TR_IB);
}

static void test_unsupported_linktype(void)
{
	struct fb t = tp_simple(0x04, 1, 1, 8, 0);
	struct frame fr = rocev2(L_ETH, 4, &t, 4791);
	struct qpt_pkt pkt;

	g_assert_cmpint(qpt_decode(&pkt, 105, fr.f.d, fr.f.n, fr.f.n, NULL), ==,
			QPT_E_UNSUPPORTED_LINKTYPE);
	g_assert_cmpint(pkt.transport, ==, QPT_TR_NONE);
	g_assert_false(qpt_linktype_supported(105));
	g_assert_false(qpt_linktype_supported(9));
	g_assert_true(qpt_linktype_supported(247));
	g_assert_true(qpt_linktype_supported(197));
}

/* ---- truncation: every captured length shorter than the frame ----------- */

struct trunc_case {
	const char *name;
	int kind; /* 0 RoCEv2, 1 RoCEv1, 2 IB, 3 ERF, 4 IB+GRH, 5 ERF+GRH */
	enum link l;
	int ipver;
	uint8_t opcode;
};

static const struct trunc_case trunc_cases[] = {
	{ "rocev2-eth-v4-write-only", 0, L_ETH, 4, 0x0a },
	{ "rocev2-eth-v4-ack", 0, L_ETH, 4, 0x11 },
	{ "rocev2-eth-v4-atomic", 0, L_ETH, 4, 0x13 },
	{ "rocev2-eth-v4-ud-imm", 0, L_ETH, 4, 0x65 },
	{ "rocev2-vlan-v6-send", 0, L_VLAN, 6, 0x04 },
	{ "rocev2-qinq-v4-send", 0, L_QINQ, 4, 0x04 },
	{ "rocev2-sll-v4-send", 0, L_SLL, 4, 0x04 },
	{ "rocev2-sll2-v6-send", 0, L_SLL2, 6, 0x04 },
	{ "rocev2-raw-v4-send", 0, L_RAW, 4, 0x04 },
	{ "rocev2-null-v6-send", 0, L_NULL, 6, 0x04 },
	{ "rocev1-eth-send", 1, L_ETH, 0, 0x04 },
	{ "ib-send", 2, L_ETH, 0, 0x04 },
	{ "erf-send", 3, L_ETH, 0, 0x04 },
	{ "ib-grh-ud", 4, L_ETH, 0, 0x64 },
	{ "erf-grh-ud", 5, L_ETH, 0, 0x64 },
};

static struct frame build_trunc(const struct trunc_case *c, uint32_t *threshold)
{
	/* Headers sized by the opcode table, filled with a pattern. */
	struct fb t = tp_simple(c->opcode, 0x33, 0x100, 0, 0);
	struct frame fr;

	for (unsigned i = 0; i < qpt_opcodes[c->opcode].ext_len; i++)
		p8(&t, 0x80 + i);
	if (qpt_opcodes[c->opcode].flags & QPT_O_PAYLOAD)
		pmem(&t, "payload!", 8);
	switch (c->kind) {
	case 0:
		fr = rocev2(c->l, c->ipver, &t, 4791);
		/* Below this the UDP ports are not there: "cannot tell". */
		*threshold = fr.off_udp + 6;
		break;
	case 1:
		fr = rocev1(c->l, &t);
		*threshold = fr.off_ip; /* the ethertype says RoCEv1 */
		break;
	default:
		fr = native_ib(c->kind == 3 || c->kind == 5, c->kind >= 4, &t);
		*threshold = (c->kind == 3 || c->kind == 5) ? 16 : 0;
		break;
	}
	return fr;
}

static void test_truncation(gconstpointer p)
{
	const struct trunc_case *c = p;
	uint32_t threshold;
	struct frame fr = build_trunc(c, &threshold);
	struct qpt_pkt pkt;

	uint32_t hdr_end;

	/* The good frame first. */
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_OK);
	g_assert_true(pkt.icrc_ok);
	/* Cut at or after the end of the headers (a MAD is a header: all of
	 * it), the snap length cut the payload or the ICRC, not the packet. */
	hdr_end = pkt.off_payload + (pkt.flags & QPT_HAS_MAD ? pkt.payload_len : 0);
	for (uint32_t cap = 0; cap < fr.f.n; cap++) {
		/* An exact-size heap copy, so that a sanitizer sees overreads. */
		uint8_t *copy = g_malloc(cap ? cap : 1);
		enum qpt_error r;

		memcpy(copy, fr.f.d, cap);
		r = qpt_decode(&pkt, fr.linktype, copy, cap, fr.f.n, NULL);
		g_free(copy);
		if (cap >= hdr_end && cap >= threshold) {
			if (r != QPT_E_OK || !pkt.cut_by_snaplen || pkt.icrc_checked)
				FAILF("%s: caplen %u of %u (headers end at %u): '%s' cut %d, expected "
				      "ok and cut by the capture", c->name, cap, fr.f.n, hdr_end,
				      qpt_strerror(r), pkt.cut_by_snaplen);
			continue;
		}
		if (r == QPT_E_OK)
			FAILF("%s: caplen %u of %u decoded as OK", c->name, cap, fr.f.n);
		if (pkt.cut_by_snaplen)
			FAILF("%s: caplen %u of %u: cut inside a header, said cut by the capture",
			      c->name, cap, fr.f.n);
		if (cap < threshold) {
			if (r != QPT_E_NOT_IBA || pkt.transport != QPT_TR_NONE)
				FAILF("%s: caplen %u (< %u): %s transport %d, expected not RoCE/IB",
				      c->name, cap, threshold, qpt_strerror(r), pkt.transport);
		} else if (r != QPT_E_TRUNCATED || pkt.transport == QPT_TR_NONE) {
			FAILF("%s: caplen %u of %u: '%s' (transport %d), expected 'truncated'",
			      c->name, cap, fr.f.n, qpt_strerror(r), pkt.transport);
		}
		/* Only a native IB frame cut inside its VCRC keeps a whole ICRC. */
		if (cap + 2 < fr.f.n || !(pkt.flags & QPT_HAS_LRH))
			g_assert_false(pkt.icrc_ok);
	}
}

/* ---- lying lengths: frame complete, a length field claims otherwise ----- */

static void test_bad_ip_length(void)
{
	struct fb t = tp_simple(0x04, 0x2b, 1, 16, 0);
	struct frame fr = rocev2(L_ETH, 4, &t, 4791);
	struct qpt_pkt pkt;

	set16(&fr.f, fr.off_ip + 2, 20 + 8 + t.n + 4 + 4); /* 4 more than there is */
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_BAD_IP_LENGTH);
	g_assert_cmpint(pkt.transport, ==, QPT_TR_ROCEV2);
	g_assert_cmpuint(pkt.udp_dport, ==, 4791);
	g_assert_cmphex(pkt.udp_sport, ==, 0xc0de);
	set16(&fr.f, fr.off_ip + 2, 20 + 7); /* less than IP + UDP */
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_BAD_IP_LENGTH);

	fr = rocev2(L_ETH, 6, &t, 4791);
	set16(&fr.f, fr.off_ip + 4, 8 + t.n + 4 + 1);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_BAD_IP_LENGTH);
	g_assert_cmpint(pkt.transport, ==, QPT_TR_ROCEV2);

	/* RoCEv1: GRH PayLen beyond the frame. */
	fr = rocev1(L_ETH, &t);
	set16(&fr.f, fr.off_ip + 4, t.n + 4 + 8);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_BAD_IP_LENGTH);
	g_assert_cmpint(pkt.transport, ==, QPT_TR_ROCEV1);

	/* Not RoCE (UDP port 53): a bad IP length is not our business. */
	fr = rocev2(L_ETH, 4, &t, 53);
	set16(&fr.f, fr.off_ip + 2, 1500);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_NOT_IBA);
	g_assert_cmpint(pkt.transport, ==, QPT_TR_NONE);
}

static void test_bad_udp_length(void)
{
	struct fb t = tp_simple(0x04, 0x2b, 1, 16, 0);
	struct frame fr = rocev2(L_ETH, 4, &t, 4791);
	struct qpt_pkt pkt;

	set16(&fr.f, fr.off_udp + 4, 8 + t.n + 4 + 4);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_BAD_UDP_LENGTH);
	g_assert_cmpint(pkt.transport, ==, QPT_TR_ROCEV2);
	set16(&fr.f, fr.off_udp + 4, 7);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_BAD_UDP_LENGTH);
	fr = rocev2(L_ETH, 6, &t, 4791);
	set16(&fr.f, fr.off_udp + 4, 8 + t.n + 4 + 1);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_BAD_UDP_LENGTH);
}

static void test_bad_pad(void)
{
	struct fb t = tp_hdr(0x11, 0x2c); /* ACK: no payload, pad 3 */
	struct frame fr;
	struct qpt_pkt pkt;

	t.d[1] |= 3 << 4;
	p8(&t, 0x1f);
	p24(&t, 1);
	fr = rocev2(L_ETH, 4, &t, 4791);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_BAD_PAD);
	g_assert_cmpuint(pkt.bth.pad, ==, 3);
	g_assert_cmpuint(pkt.payload_len, ==, 0);
	g_assert_true(pkt.flags & QPT_H_AETH); /* still decoded */

	/* Pad 3 with 2 bytes after the headers: still too big. */
	t = tp_simple(0x04, 0x2b, 1, 2, 0);
	t.d[1] |= 3 << 4;
	fr = rocev2(L_ETH, 4, &t, 4791);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_BAD_PAD);
	/* Pad 2 with 2 bytes: fine, payload 0. */
	t = tp_simple(0x04, 0x2b, 1, 0, 2);
	fr = rocev2(L_ETH, 4, &t, 4791);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_OK);
	g_assert_cmpuint(pkt.payload_len, ==, 0);
}

static void test_short_payload(void)
{
	/* WRITE Only without room for its RETH, lengths consistent. */
	struct fb t = tp_simple(0x0a, 0x2b, 1, 8, 0);
	struct frame fr = rocev2(L_ETH, 4, &t, 4791);
	struct qpt_pkt pkt;

	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_SHORT_PAYLOAD);
	g_assert_cmpint(pkt.transport, ==, QPT_TR_ROCEV2);
	g_assert_true(pkt.flags & QPT_HAS_BTH);
	g_assert_false(pkt.flags & QPT_H_RETH);

	/* A UDP datagram too short for BTH + ICRC. */
	t.n = 8;
	fr = rocev2(L_ETH, 4, &t, 4791);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_SHORT_PAYLOAD);
	g_assert_cmpint(pkt.transport, ==, QPT_TR_ROCEV2);
}

static void test_bad_lrh_length(void)
{
	struct fb t = tp_simple(0x04, 0x2b, 1, 16, 0);
	struct frame fr = native_ib(false, false, &t);
	struct qpt_pkt pkt;

	set16(&fr.f, 4, (fr.f.n - 2) / 4 + 1); /* one word more than there is */
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_BAD_LRH_LENGTH);
	g_assert_cmpint(pkt.transport, ==, QPT_TR_IB);
	g_assert_cmphex(pkt.lrh.dlid, ==, 4);
	set16(&fr.f, 4, 1); /* less than the LRH itself */
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_BAD_LRH_LENGTH);
	/* The same inside ERF. */
	fr = native_ib(true, false, &t);
	set16(&fr.f, 16 + 4, 0x7ff);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_BAD_LRH_LENGTH);
}

static void test_bad_grh(void)
{
	struct fb t = tp_simple(0x04, 0x2b, 1, 16, 0);
	struct frame fr = rocev1(L_ETH, &t);
	struct qpt_pkt pkt;

	fr.f.d[fr.off_ip + 6] = 0x11; /* next header UDP, not IBA */
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_BAD_GRH);
	g_assert_cmpint(pkt.transport, ==, QPT_TR_ROCEV1);
	fr = native_ib(false, true, &t);
	fr.f.d[8 + 6] = 0x3b;
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_BAD_GRH);
	g_assert_cmpint(pkt.transport, ==, QPT_TR_IB);
}

static void test_ethernet_padding(void)
{
	/* Ethernet pads short frames; the IP length says where RoCE ends. */
	struct fb t = tp_hdr(0x11, 0x2c);
	struct frame fr;
	struct qpt_pkt pkt;

	p8(&t, 0x1f);
	p24(&t, 1);
	fr = rocev2(L_ETH, 4, &t, 4791);
	pfill(&fr.f, 0, 6);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_OK);
	g_assert_true(pkt.icrc_ok);
	g_assert_cmpuint(pkt.payload_len, ==, 0);
}

/* ---- UDP ports ---------------------------------------------------------- */

static void test_udp_ports(void)
{
	struct fb t = tp_simple(0x04, 0x2b, 1, 16, 0);
	struct frame fr = rocev2(L_ETH, 4, &t, 4792);
	struct qpt_pkt pkt;
	const uint16_t ports[] = { 1000, 4792 };
	struct qpt_decode_opts o = { .udp_ports = ports, .n_udp_ports = 2 };

	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_NOT_IBA);
	g_assert_cmpint(pkt.transport, ==, QPT_TR_NONE);
	g_assert_false(pkt.flags & QPT_HAS_BTH);
	g_assert_cmpint(qpt_decode(&pkt, fr.linktype, fr.f.d, fr.f.n, fr.f.n, &o), ==,
			QPT_E_OK);
	g_assert_cmpint(pkt.transport, ==, QPT_TR_ROCEV2);
	g_assert_cmpuint(pkt.udp_dport, ==, 4792);
	g_assert_true(pkt.icrc_ok);
	/* 4791 keeps working with extra ports. */
	fr = rocev2(L_ETH, 6, &t, 4791);
	g_assert_cmpint(qpt_decode(&pkt, fr.linktype, fr.f.d, fr.f.n, fr.f.n, &o), ==,
			QPT_E_OK);
	/* Only the destination port counts: source 4791, destination 53. */
	fr = rocev2(L_ETH, 4, &t, 53);
	set16(&fr.f, fr.off_udp, 4791);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_NOT_IBA);
	/* TCP is not RoCE. */
	fr = rocev2(L_ETH, 4, &t, 4791);
	fr.f.d[fr.off_ip + 9] = 6;
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_NOT_IBA);
	/* IPv4 fragments are not reassembled. */
	fr = rocev2(L_ETH, 4, &t, 4791);
	set16(&fr.f, fr.off_ip + 6, 0x2000); /* MF */
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_NOT_IBA);
	/* Other ethertypes. */
	fr = rocev2(L_ETH, 4, &t, 4791);
	set16(&fr.f, 12, 0x0806);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_NOT_IBA);
}

/* ---- IP fragments ------------------------------------------------------- */

/* n bytes inserted at off (the frame grows). */
static void insert(struct fb *f, uint32_t off, const uint8_t *b, uint32_t n)
{
	memmove(f->d + off + n, f->d + off, f->n - off);
	memcpy(f->d + off, b, n);
	f->n += n;
}

/* RoCEv2 over IPv6 with a Fragment header (RFC 8200 4.5: next header, 0,
 * offset << 3 | M, identification) before UDP; with dest_opts, a
 * Destination Options header after it (the fragmentable part's first). */
static struct frame ip6_fragment(const struct fb *t, uint16_t dport, uint16_t fo, bool dest_opts)
{
	struct frame fr = rocev2(L_ETH, 6, t, dport);
	const uint8_t frag[8] = { dest_opts ? 60 : 17, 0, (uint8_t)(fo >> 8), (uint8_t)fo,
				  0x12, 0x34, 0x56, 0x78 };
	const uint8_t dopt[8] = { 17, 0, 1, 4, 0, 0, 0, 0 }; /* PadN */
	uint32_t added = dest_opts ? 16 : 8;

	if (dest_opts)
		insert(&fr.f, fr.off_udp, dopt, 8);
	insert(&fr.f, fr.off_udp, frag, 8);
	fr.f.d[fr.off_ip + 6] = 44;
	set16(&fr.f, fr.off_ip + 4, (unsigned)(fr.f.n - fr.off_ip - 40));
	fr.off_udp += added;
	fr.off_bth += added;
	return fr;
}

static void test_ip_fragments(void)
{
	struct fb t = tp_simple(0x04, 0x2b, 1, 16, 0);
	struct frame fr;
	struct qpt_pkt pkt;

	/* IPv4: the first fragment of a RoCEv2 datagram named, a later one
	 * named as a UDP fragment */
	fr = rocev2(L_ETH, 4, &t, 4791);
	set16(&fr.f, fr.off_ip + 6, 0x2000); /* MF, offset 0 */
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_NOT_IBA);
	g_assert_cmpint(pkt.ip_fragment, ==, QPT_FRAG_ROCE_FIRST);
	g_assert_cmpint(pkt.transport, ==, QPT_TR_NONE);
	set16(&fr.f, fr.off_ip + 6, 64); /* offset 512, the last */
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_NOT_IBA);
	g_assert_cmpint(pkt.ip_fragment, ==, QPT_FRAG_UDP_LATER);

	/* IPv6 alike: offset 0 with M, UDP to 4791 */
	fr = ip6_fragment(&t, 4791, 0x0001, false);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_NOT_IBA);
	g_assert_cmpint(pkt.ip_fragment, ==, QPT_FRAG_ROCE_FIRST);
	g_assert_cmpint(pkt.transport, ==, QPT_TR_NONE);
	g_assert_false(pkt.flags & QPT_HAS_BTH);
	/* reserved bits set too */
	fr = ip6_fragment(&t, 4791, 0x0007, false);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_NOT_IBA);
	g_assert_cmpint(pkt.ip_fragment, ==, QPT_FRAG_ROCE_FIRST);
	/* a Destination Options header between the Fragment header and UDP */
	fr = ip6_fragment(&t, 4791, 0x0001, true);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_NOT_IBA);
	g_assert_cmpint(pkt.ip_fragment, ==, QPT_FRAG_ROCE_FIRST);
	/* a first fragment to another port: not RoCE, not named */
	fr = ip6_fragment(&t, 53, 0x0001, false);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_NOT_IBA);
	g_assert_cmpint(pkt.ip_fragment, ==, QPT_FRAG_NONE);
	/* later fragments (offset 64 x 8 bytes, with M or the last): UDP
	 * fragments, whatever their bytes look like */
	fr = ip6_fragment(&t, 4791, 64 << 3 | 1, false);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_NOT_IBA);
	g_assert_cmpint(pkt.ip_fragment, ==, QPT_FRAG_UDP_LATER);
	fr = ip6_fragment(&t, 4791, 64 << 3, false);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_NOT_IBA);
	g_assert_cmpint(pkt.ip_fragment, ==, QPT_FRAG_UDP_LATER);
	/* an atomic fragment (offset 0, no M) is the whole datagram: decoded */
	fr = ip6_fragment(&t, 4791, 0x0000, false);
	dec(&pkt, &fr);
	g_assert_cmpint(pkt.ip_fragment, ==, QPT_FRAG_NONE);
	g_assert_cmpint(pkt.transport, ==, QPT_TR_ROCEV2);
	g_assert_true(pkt.flags & QPT_HAS_BTH);
	/* cut inside the Fragment header, inside the UDP header: nothing read
	 * past the end, nothing named */
	fr = ip6_fragment(&t, 4791, 0x0001, false);
	for (uint32_t n = fr.off_ip + 40; n < fr.off_udp + 4; n++) {
		g_assert_cmpint(qpt_decode(&pkt, fr.linktype, fr.f.d, n, fr.f.n, NULL), ==,
				QPT_E_NOT_IBA);
		g_assert_cmpint(pkt.ip_fragment, ==, QPT_FRAG_NONE);
	}
}

/* ---- MADs and CM -------------------------------------------------------- */

/* UD SEND Only to QP1 carrying a 256-byte MAD; data[] is the CM data (232). */
static struct frame cm_frame(uint16_t attr_id, const uint8_t *data, uint32_t mad_len,
			     uint8_t mgmt_class)
{
	struct fb t = tp_hdr(0x64, 1);
	struct fb m = { .n = 0 };

	p32(&t, 0x80010000);
	p32(&t, 0x00000001);
	p8(&m, 1);	     /* base version */
	p8(&m, mgmt_class);
	p8(&m, 2);	     /* class version */
	p8(&m, 0x03);	     /* method Send */
	p16(&m, 0);	     /* status */
	p16(&m, 0);	     /* class specific */
	p64(&m, 0x0000000112345678ull);
	p16(&m, attr_id);
	p16(&m, 0);
	p32(&m, 0);
	pmem(&m, data, 232);
	pmem(&t, m.d, mad_len);
	return rocev2(L_ETH, 4, &t, 4791);
}

static void w8(uint8_t *d, unsigned off, unsigned v) { d[off] = (uint8_t)v; }
static void w16(uint8_t *d, unsigned off, unsigned v) { w8(d, off, v >> 8); w8(d, off + 1, v); }
static void w24(uint8_t *d, unsigned off, uint32_t v) { w8(d, off, v >> 16); w16(d, off + 1, v & 0xffff); }
static void w32(uint8_t *d, unsigned off, uint32_t v) { w16(d, off, v >> 16); w16(d, off + 2, v & 0xffff); }
static void w64(uint8_t *d, unsigned off, uint64_t v) { w32(d, off, (uint32_t)(v >> 32)); w32(d, off + 4, (uint32_t)v); }

static void decode_cm(uint16_t attr, const uint8_t *data, struct qpt_pkt *pkt)
{
	struct frame fr = cm_frame(attr, data, 256, 0x07);

	g_assert_cmpint(dec(pkt, &fr), ==, QPT_E_OK);
	g_assert_true(pkt->icrc_ok);
	g_assert_true(pkt->flags & QPT_HAS_MAD);
	g_assert_cmpuint(pkt->mad.base_version, ==, 1);
	g_assert_cmphex(pkt->mad.mgmt_class, ==, 0x07);
	g_assert_cmpuint(pkt->mad.class_version, ==, 2);
	g_assert_cmphex(pkt->mad.method, ==, 0x03);
	g_assert_cmphex(pkt->mad.tid, ==, 0x0000000112345678ull);
	g_assert_cmphex(pkt->mad.attr_id, ==, attr);
	g_assert_true(pkt->flags & QPT_HAS_CM);
	g_assert_cmphex(pkt->cm.msg, ==, attr);
	g_assert_cmpuint(pkt->payload_len, ==, 256);
}

/* IBA 12.6.5 table 99 offsets (from the start of the CM data). */
static void fill_req(uint8_t *d, uint64_t sid)
{
	static const uint8_t lg[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 2, 0xc9, 3, 0, 0xa, 0xb, 0xc };
	static const uint8_t rg[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 1, 16, 61 };

	memset(d, 0, 232);
	w32(d, 0, 0x6ec0c56d);		/* local comm ID */
	w64(d, 8, sid);			/* service ID */
	w64(d, 16, 0x0002c90300a1b2c3ull); /* local CA GUID */
	w32(d, 28, 0x00000000);		/* local Q_Key */
	w24(d, 32, 0x00002c);		/* local QPN */
	w8(d, 35, 4);			/* responder resources */
	w24(d, 36, 0x000777);		/* local EECN */
	w8(d, 39, 3);			/* initiator depth */
	w8(d, 43, 0x17 << 3 | 1 << 1 | 1); /* remote CM timeout, UC, E2E flow control */
	w24(d, 44, 0x003da6);		/* starting PSN */
	w8(d, 47, 0x12 << 3 | 6);	/* local CM timeout, retry count 6 */
	w16(d, 48, 0xffff);		/* P_Key */
	w8(d, 50, 3 << 4 | 1 << 3 | 5); /* MTU 1024, RDC exists, RNR retry 5 */
	w8(d, 51, 15 << 4);		/* max CM retries */
	w16(d, 52, 0x0011);		/* primary local LID */
	w16(d, 54, 0x0022);		/* primary remote LID */
	memcpy(d + 56, lg, 16);
	memcpy(d + 72, rg, 16);
}

static void test_cm_req(void)
{
	uint8_t d[232];
	struct qpt_pkt pkt;
	static const uint8_t src4[4] = { 10, 1, 16, 62 }, dst4[4] = { 10, 1, 16, 61 };

	fill_req(d, 0x0000000001061c06ull);
	/* RDMA-CM private data at 140: version 0, IPv4, port, src, dst. */
	w8(d, 140, 0);
	w8(d, 141, 4 << 4);
	w16(d, 142, 0xa5f1);
	memcpy(d + 140 + 4 + 12, src4, 4);
	memcpy(d + 140 + 20 + 12, dst4, 4);
	decode_cm(0x0010, d, &pkt);
	g_assert_cmpstr(qpt_cm_msg_name(pkt.cm.msg), ==, "REQ");
	g_assert_cmphex(pkt.cm.local_comm_id, ==, 0x6ec0c56d);
	g_assert_cmphex(pkt.cm.service_id, ==, 0x0000000001061c06ull);
	g_assert_cmphex(pkt.cm.local_ca_guid, ==, 0x0002c90300a1b2c3ull);
	g_assert_cmphex(pkt.cm.local_qkey, ==, 0);
	g_assert_cmphex(pkt.cm.local_qpn, ==, 0x2c);
	g_assert_cmpuint(pkt.cm.responder_resources, ==, 4);
	g_assert_cmpuint(pkt.cm.initiator_depth, ==, 3);
	g_assert_cmpuint(pkt.cm.transport, ==, 1);
	g_assert_cmphex(pkt.cm.starting_psn, ==, 0x3da6);
	g_assert_cmpuint(pkt.cm.retry_count, ==, 6);
	g_assert_cmphex(pkt.cm.pkey, ==, 0xffff);
	g_assert_cmpuint(pkt.cm.path_mtu, ==, 3);
	g_assert_cmpuint(qpt_mtu_bytes(pkt.cm.path_mtu), ==, 1024);
	g_assert_cmpuint(pkt.cm.rnr_retry_count, ==, 5);
	g_assert_cmphex(pkt.cm.primary_lid_local, ==, 0x11);
	g_assert_cmphex(pkt.cm.primary_lid_remote, ==, 0x22);
	g_assert_cmpmem(pkt.cm.primary_gid_local, 16, d + 56, 16);
	g_assert_cmpmem(pkt.cm.primary_gid_remote, 16, d + 72, 16);
	g_assert_true(pkt.flags & QPT_HAS_CMA_IP);
	g_assert_cmpuint(pkt.cma.cma_version, ==, 0);
	g_assert_cmpuint(pkt.cma.ip_version, ==, 4);
	g_assert_cmphex(pkt.cma.port, ==, 0xa5f1);
	g_assert_cmpmem(pkt.cma.src + 12, 4, src4, 4);
	g_assert_cmpmem(pkt.cma.dst + 12, 4, dst4, 4);
	g_assert_cmphex(pkt.cma.port_space, ==, 0x06);
	g_assert_cmpuint(pkt.cma.dst_port, ==, 7174);

	/* IPv6 private data, UDP port space. */
	fill_req(d, 0x0000000001114e20ull);
	w8(d, 141, 6 << 4);
	w16(d, 142, 0x1234);
	memcpy(d + 144, IP6_SRC, 16);
	memcpy(d + 160, IP6_DST, 16);
	decode_cm(0x0010, d, &pkt);
	g_assert_true(pkt.flags & QPT_HAS_CMA_IP);
	g_assert_cmpuint(pkt.cma.ip_version, ==, 6);
	g_assert_cmpmem(pkt.cma.src, 16, IP6_SRC, 16);
	g_assert_cmpmem(pkt.cma.dst, 16, IP6_DST, 16);
	g_assert_cmphex(pkt.cma.port_space, ==, 0x11);
	g_assert_cmpuint(pkt.cma.dst_port, ==, 20000);

	/* Service ID outside the IP space (native IB, as the ERF capture). */
	fill_req(d, 0x1000000000000404ull);
	w8(d, 141, 4 << 4);
	decode_cm(0x0010, d, &pkt);
	g_assert_false(pkt.flags & QPT_HAS_CMA_IP);
	g_assert_cmphex(pkt.cm.service_id, ==, 0x1000000000000404ull);

	/* IP space but a nonsense IP version: no CMA record. */
	fill_req(d, 0x0000000001061c06ull);
	w8(d, 141, 9 << 4);
	decode_cm(0x0010, d, &pkt);
	g_assert_false(pkt.flags & QPT_HAS_CMA_IP);

	/* RC transport (0) and XRC (3) decode. */
	fill_req(d, 1);
	w8(d, 43, 0x17 << 3 | 0 << 1);
	decode_cm(0x0010, d, &pkt);
	g_assert_cmpuint(pkt.cm.transport, ==, 0);
	w8(d, 43, 0x17 << 3 | 3 << 1);
	w8(d, 51, 1);
	decode_cm(0x0010, d, &pkt);
	g_assert_cmpuint(pkt.cm.transport, ==, 3);
}

static void test_cm_rep(void)
{
	uint8_t d[232] = { 0 };
	struct qpt_pkt pkt;

	/* IBA table 104. */
	w32(d, 0, 0x9d88f456);
	w32(d, 4, 0x6ec0c56d);
	w32(d, 8, 0x11112222);
	w24(d, 12, 0x00002b);
	w24(d, 16, 0x000999); /* local EECN */
	w24(d, 20, 0xfebd3d);
	w8(d, 24, 2);
	w8(d, 25, 5);
	w8(d, 26, 0x1f << 3 | 1 << 1 | 1);
	w8(d, 27, 7 << 5 | 1 << 4); /* RNR retry 7, SRQ */
	w64(d, 28, 0x0002c90300ddeeffull);
	decode_cm(0x0013, d, &pkt);
	g_assert_cmpstr(qpt_cm_msg_name(pkt.cm.msg), ==, "REP");
	g_assert_cmphex(pkt.cm.local_comm_id, ==, 0x9d88f456);
	g_assert_cmphex(pkt.cm.remote_comm_id, ==, 0x6ec0c56d);
	g_assert_cmphex(pkt.cm.local_qkey, ==, 0x11112222);
	g_assert_cmphex(pkt.cm.local_qpn, ==, 0x2b);
	g_assert_cmphex(pkt.cm.starting_psn, ==, 0xfebd3d);
	g_assert_cmpuint(pkt.cm.responder_resources, ==, 2);
	g_assert_cmpuint(pkt.cm.initiator_depth, ==, 5);
	g_assert_cmpuint(pkt.cm.rnr_retry_count, ==, 7);
	g_assert_cmphex(pkt.cm.local_ca_guid, ==, 0x0002c90300ddeeffull);
}

static void test_cm_small(void)
{
	uint8_t d[232];
	struct qpt_pkt pkt;

	/* RTU, DREP: comm IDs only. */
	static const uint16_t two_ids[] = { 0x0014, 0x0016 };

	for (size_t i = 0; i < G_N_ELEMENTS(two_ids); i++) {
		memset(d, 0xa5, sizeof(d));
		w32(d, 0, 0x01020304);
		w32(d, 4, 0x05060708);
		decode_cm(two_ids[i], d, &pkt);
		g_assert_cmphex(pkt.cm.local_comm_id, ==, 0x01020304);
		g_assert_cmphex(pkt.cm.remote_comm_id, ==, 0x05060708);
	}
	g_assert_cmpstr(qpt_cm_msg_name(0x0014), ==, "RTU");
	g_assert_cmpstr(qpt_cm_msg_name(0x0016), ==, "DREP");

	/* DREQ (table 106): + remote QPN/EECN at 8. */
	memset(d, 0, sizeof(d));
	w32(d, 0, 0xaaaa0001);
	w32(d, 4, 0xbbbb0002);
	w24(d, 8, 0x00abcd);
	w8(d, 11, 0xff); /* reserved */
	decode_cm(0x0015, d, &pkt);
	g_assert_cmpstr(qpt_cm_msg_name(pkt.cm.msg), ==, "DREQ");
	g_assert_cmphex(pkt.cm.local_comm_id, ==, 0xaaaa0001);
	g_assert_cmphex(pkt.cm.remote_comm_id, ==, 0xbbbb0002);
	g_assert_cmphex(pkt.cm.remote_qpn, ==, 0xabcd);

	/* REJ (table 103): message rejected at 8 (top 2 bits), reason at 10. */
	memset(d, 0, sizeof(d));
	w32(d, 0, 0);
	w32(d, 4, 0x6ec0c56d);
	w8(d, 8, 1 << 6);
	w8(d, 9, 0x3f << 1);
	w16(d, 10, 28); /* consumer reject */
	decode_cm(0x0012, d, &pkt);
	g_assert_cmpstr(qpt_cm_msg_name(pkt.cm.msg), ==, "REJ");
	g_assert_cmphex(pkt.cm.remote_comm_id, ==, 0x6ec0c56d);
	g_assert_cmpuint(pkt.cm.msg_rejected, ==, 1);
	g_assert_cmpuint(pkt.cm.reason, ==, 28);

	/* MRA (table 102): message MRAed at 8 (top 2 bits). */
	memset(d, 0, sizeof(d));
	w32(d, 0, 0x11);
	w32(d, 4, 0x22);
	w8(d, 8, 2 << 6);
	w8(d, 9, 0x1f << 3);
	decode_cm(0x0011, d, &pkt);
	g_assert_cmpstr(qpt_cm_msg_name(pkt.cm.msg), ==, "MRA");
	g_assert_cmphex(pkt.cm.local_comm_id, ==, 0x11);
	g_assert_cmphex(pkt.cm.remote_comm_id, ==, 0x22);
	g_assert_cmpuint(pkt.cm.msg_rejected, ==, 2);

	/* SIDR_REQ (table 108): request ID, P_Key at 4, service ID at 8. */
	memset(d, 0, sizeof(d));
	w32(d, 0, 0x5151);
	w16(d, 4, 0x8001);
	w64(d, 8, 0x0000000001114e20ull);
	decode_cm(0x0017, d, &pkt);
	g_assert_cmpstr(qpt_cm_msg_name(pkt.cm.msg), ==, "SIDR_REQ");
	g_assert_cmphex(pkt.cm.local_comm_id, ==, 0x5151);
	g_assert_cmphex(pkt.cm.pkey, ==, 0x8001);
	g_assert_cmphex(pkt.cm.service_id, ==, 0x0000000001114e20ull);
	g_assert_false(pkt.flags & QPT_HAS_CMA_IP); /* only REQ carries it */

	/* SIDR_REP (table 109): status at 4, QPN at 8, SID at 12, Q_Key at 20. */
	memset(d, 0, sizeof(d));
	w32(d, 0, 0x5151);
	w8(d, 4, 1);
	w24(d, 8, 0x000123);
	w64(d, 12, 0x0000000001114e20ull);
	w32(d, 20, 0x0badcafe);
	decode_cm(0x0018, d, &pkt);
	g_assert_cmpstr(qpt_cm_msg_name(pkt.cm.msg), ==, "SIDR_REP");
	g_assert_cmphex(pkt.cm.local_comm_id, ==, 0x5151);
	g_assert_cmpuint(pkt.cm.status, ==, 1);
	g_assert_cmphex(pkt.cm.local_qpn, ==, 0x123);
	g_assert_cmphex(pkt.cm.service_id, ==, 0x0000000001114e20ull);
	g_assert_cmphex(pkt.cm.local_qkey, ==, 0x0badcafe);

	/* LAP (table 110): remote QPN/EECN at 12. */
	memset(d, 0, sizeof(d));
	w32(d, 0, 0x31);
	w32(d, 4, 0x32);
	w32(d, 8, 0xffffffff); /* reserved */
	w24(d, 12, 0x00beef);
	decode_cm(0x0019, d, &pkt);
	g_assert_cmpstr(qpt_cm_msg_name(pkt.cm.msg), ==, "LAP");
	g_assert_cmphex(pkt.cm.local_comm_id, ==, 0x31);
	g_assert_cmphex(pkt.cm.remote_comm_id, ==, 0x32);
	g_assert_cmphex(pkt.cm.remote_qpn, ==, 0xbeef);

	/* APR (table 111): AP status at 9. */
	memset(d, 0, sizeof(d));
	w32(d, 0, 0x41);
	w32(d, 4, 0x42);
	w8(d, 8, 0);
	w8(d, 9, 3);
	decode_cm(0x001a, d, &pkt);
	g_assert_cmpstr(qpt_cm_msg_name(pkt.cm.msg), ==, "APR");
	g_assert_cmphex(pkt.cm.local_comm_id, ==, 0x41);
	g_assert_cmphex(pkt.cm.remote_comm_id, ==, 0x42);
	g_assert_cmpuint(pkt.cm.status, ==, 3);
}

static void test_mad_other(void)
{
	uint8_t d[232] = { 0 };
	struct qpt_pkt pkt;
	struct frame fr;

	/* ClassPortInfo: MAD header, no CM record. */
	fr = cm_frame(0x0001, d, 256, 0x07);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_OK);
	g_assert_true(pkt.flags & QPT_HAS_MAD);
	g_assert_false(pkt.flags & QPT_HAS_CM);
	g_assert_cmpstr(qpt_cm_msg_name(0x0001), ==, "ClassPortInfo");
	g_assert_null(qpt_cm_msg_name(0x0099));

	/* Subnet administration PathRecord: header only. */
	fr = cm_frame(0x0035, d, 256, 0x03);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_OK);
	g_assert_true(pkt.flags & QPT_HAS_MAD);
	g_assert_false(pkt.flags & QPT_HAS_CM);
	g_assert_cmphex(pkt.mad.mgmt_class, ==, 0x03);
	g_assert_cmphex(pkt.mad.attr_id, ==, 0x0035);

	/* A MAD shorter than the MAD header: BAD_MAD. */
	fr = cm_frame(0x0010, d, 20, 0x07);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_BAD_MAD);
	g_assert_false(pkt.flags & QPT_HAS_MAD);
	/* A CM REQ cut inside its fields (MAD header + 40 bytes): BAD_MAD. */
	fr = cm_frame(0x0010, d, 24 + 40, 0x07);
	g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_BAD_MAD);
	g_assert_true(pkt.flags & QPT_HAS_MAD);
	g_assert_false(pkt.flags & QPT_HAS_CM);

	/* Not QP0/QP1: no MAD decoding at all. */
	{
		struct fb t = tp_hdr(0x64, 2);

		p32(&t, 0x80010000);
		p32(&t, 1);
		pfill(&t, 0, 8);
		fr = rocev2(L_ETH, 4, &t, 4791);
		g_assert_cmpint(dec(&pkt, &fr), ==, QPT_E_OK);
		g_assert_false(pkt.flags & QPT_HAS_MAD);
	}
	g_assert_cmpstr(qpt_mad_class_name(0x07), ==, "CM");
}

static void test_strings(void)
{
	g_assert_cmpstr(qpt_strerror(QPT_E_OK), ==, "ok");
	g_assert_cmpstr(qpt_strerror(QPT_E_TRUNCATED), ==, "truncated");
	g_assert_cmpstr(qpt_strerror(QPT_E_COUNT), ==, "unknown error");
	g_assert_cmpstr(qpt_transport_name(QPT_TR_ROCEV2), ==, "RoCEv2");
	g_assert_cmpstr(qpt_transport_name(QPT_TR_ROCEV1), ==, "RoCEv1");
	g_assert_cmpstr(qpt_transport_name(QPT_TR_IB), ==, "IB");
	g_assert_cmpuint(qpt_mtu_bytes(1), ==, 256);
	g_assert_cmpuint(qpt_mtu_bytes(5), ==, 4096);
	g_assert_cmpuint(qpt_mtu_bytes(0), ==, 0);
	g_assert_cmpuint(qpt_mtu_bytes(6), ==, 0);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_set_nonfatal_assertions();
	g_test_add_func("/decode/bth/fields", test_bth_fields);
	g_test_add_func("/decode/bth/tver", test_bth_tver);
	g_test_add_func("/decode/bth/reserved-opcodes", test_bad_opcode);
	g_test_add_func("/decode/bth/manufacturer-opcode", test_manufacturer_opcode);
	g_test_add_func("/decode/eth/reth", test_reth);
	g_test_add_func("/decode/eth/aeth", test_aeth);
	g_test_add_func("/decode/eth/deth", test_deth);
	g_test_add_func("/decode/eth/immdt", test_immdt);
	g_test_add_func("/decode/eth/ieth", test_ieth);
	g_test_add_func("/decode/eth/atomiceth", test_atomiceth);
	g_test_add_func("/decode/eth/atomicacketh", test_atomicacketh);
	g_test_add_func("/decode/eth/xrceth", test_xrceth);
	g_test_add_func("/decode/eth/rdeth", test_rdeth);
	g_test_add_func("/decode/eth/flush-feth", test_flush);
	g_test_add_func("/decode/eth/atomic-write", test_atomic_write);
	g_test_add_func("/decode/eth/cnp", test_cnp);
	for (size_t i = 0; i < G_N_ELEMENTS(link_cases); i++) {
		char *path = g_strdup_printf("/decode/link/%s", link_cases[i].name);

		g_test_add_data_func(path, &link_cases[i], test_link);
		g_free(path);
	}
	g_test_add_func("/decode/link/rocev1", test_rocev1);
	g_test_add_data_func("/decode/link/infiniband-247", GUINT_TO_POINTER(0), test_native_ib);
	g_test_add_data_func("/decode/link/erf-21", GUINT_TO_POINTER(1), test_native_ib);
	g_test_add_data_func("/decode/link/infiniband-247-grh", GUINT_TO_POINTER(2), test_native_ib);
	g_test_add_data_func("/decode/link/erf-21-grh", GUINT_TO_POINTER(3), test_native_ib);
	g_test_add_func("/decode/link/erf-other", test_erf_other_type);
	g_test_add_func("/decode/link/unsupported", test_unsupported_linktype);
	for (size_t i = 0; i < G_N_ELEMENTS(trunc_cases); i++) {
		char *path = g_strdup_printf("/decode/truncated/%s", trunc_cases[i].name);

		g_test_add_data_func(path, &trunc_cases[i], test_truncation);
		g_free(path);
	}
	g_test_add_func("/decode/invalid/bad-ip-length", test_bad_ip_length);
	g_test_add_func("/decode/invalid/bad-udp-length", test_bad_udp_length);
	g_test_add_func("/decode/invalid/bad-pad", test_bad_pad);
	g_test_add_func("/decode/invalid/short-payload", test_short_payload);
	g_test_add_func("/decode/invalid/bad-lrh-length", test_bad_lrh_length);
	g_test_add_func("/decode/invalid/bad-grh", test_bad_grh);
	g_test_add_func("/decode/ethernet-padding", test_ethernet_padding);
	g_test_add_func("/decode/udp-ports", test_udp_ports);
	g_test_add_func("/decode/ip-fragments", test_ip_fragments);
	g_test_add_func("/decode/cm/req", test_cm_req);
	g_test_add_func("/decode/cm/rep", test_cm_rep);
	g_test_add_func("/decode/cm/others", test_cm_small);
	g_test_add_func("/decode/mad/other", test_mad_other);
	g_test_add_func("/decode/strings", test_strings);
	return g_test_run();
}
