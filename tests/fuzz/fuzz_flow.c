/* fuzz_flow.c - libFuzzer target for the flow engine (qpt_flow_*)
 *
 * The input is a sequence of frames, decoded with qpt_decode() and fed to
 * qpt_flow_packet() with non-decreasing timestamps, so that the conversation
 * and PSN state machine sees hostile PSN / AETH / CM sequences.  Most frames
 * are built from templates with valid framing and a correct ICRC, so that the
 * fuzzer spends its time in the state machine rather than in the decoder's
 * rejections; raw frames are possible too.
 *
 * Input layout:
 *   byte 0   engine options: bit0 max_halves = 4 (hit the state limit),
 *            bit1 no_crc, bit2 dup_window 1 ms, bit3 timeout_gap 1 us,
 *            bit4 corrupt the ICRC of every template frame
 *   records until the input runs out (a cut record is dropped):
 *     T      kind = T % 4 (below); bit7 of T: wire length 64 bytes longer
 *            than the captured frame (snap-length cut)
 *     DT     time step: DT & 0x80 ? (DT & 0x7f) ms : DT us
 *     kind 0 RoCEv2 (Ethernet/IPv4/UDP 4791/BTH):
 *     kind 3 RoCEv1 (Ethernet 0x8915/GRH/BTH):
 *            ADDR (low nibble: source, high nibble: destination, each mod 4
 *            picks 10.0.0.1..4 / a GID), OP (BTH opcode), FL (bit0 SE, bit1
 *            MigReq, bit2 AckReq, bit3 FECN, bit4 BECN, bit5 IP ECN CE,
 *            bits6-7 pad count), DQPN (3 bytes, big-endian), PSN (3 bytes,
 *            big-endian), L, then L bytes: the extended headers and payload
 *            after the BTH, as the opcode wants them (RETH, AETH, DETH, ...)
 *     kind 1 CM MAD on QP1 (RoCEv2, UD SEND Only, DETH, 256-byte MAD, class 7):
 *            ADDR, ATTR (attribute ID: REQ..APR, ClassPortInfo, or raw
 *            ATTR when >= 0xf0), METHOD, L, then L bytes of CM data (the 232
 *            bytes after the MAD header, zero filled past L)
 *     kind 2 raw: LT (link type index, as in fuzz_decode.c), LEN (2 bytes,
 *            little-endian), then LEN bytes of frame
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qpt_crc.h"
#include "qpt_decode.h"
#include "qpt_flow.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint32_t linktypes[] = {
	QPT_LINKTYPE_ETHERNET,	 QPT_LINKTYPE_NULL,	  QPT_LINKTYPE_RAW,
	QPT_DLT_RAW_BSD,	 QPT_DLT_RAW_OPENBSD,	  QPT_LINKTYPE_LINUX_SLL,
	QPT_LINKTYPE_LINUX_SLL2, QPT_LINKTYPE_ERF,	  QPT_LINKTYPE_IPV4,
	QPT_LINKTYPE_IPV6,	 QPT_LINKTYPE_INFINIBAND,
	105,
};

static const uint16_t cm_attrs[] = {
	QPT_CM_REQ,  QPT_CM_REP,      QPT_CM_RTU,      QPT_CM_DREQ,
	QPT_CM_DREP, QPT_CM_REJ,      QPT_CM_MRA,      QPT_CM_SIDR_REQ,
	QPT_CM_SIDR_REP, QPT_CM_LAP,  QPT_CM_APR,      QPT_CM_CLASSPORTINFO,
};

struct in {
	const uint8_t *p;
	size_t n;
};

static bool take(struct in *in, size_t n, const uint8_t **out)
{
	if (in->n < n)
		return false;
	*out = in->p;
	in->p += n;
	in->n -= n;
	return true;
}

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

static void eth(uint8_t *p, unsigned src, unsigned dst, unsigned ethertype)
{
	static const uint8_t mac[6] = { 0x02, 0, 0, 0, 0, 0 };

	memcpy(p, mac, 6);
	p[5] = (uint8_t)(1 + dst);
	memcpy(p + 6, mac, 6);
	p[11] = (uint8_t)(1 + src);
	put16(p + 12, ethertype);
}

static void gid(uint8_t *g, unsigned who)
{
	/* IPv4-mapped GID of 10.0.0.(1 + who), as RoCE uses. */
	memset(g, 0, 16);
	g[10] = g[11] = 0xff;
	g[12] = 10;
	g[15] = (uint8_t)(1 + who);
}

/* Ethernet + IPv4 + UDP around bth[0..len) then the ICRC; returns frame length. */
static size_t rocev2(uint8_t *f, unsigned src, unsigned dst, bool ce,
		     const uint8_t *iba, size_t len, bool bad_icrc)
{
	uint8_t *ip = f + 14, *udp = ip + 20, *bth = udp + 8;
	unsigned sum = 0;
	uint32_t icrc;

	eth(f, src, dst, 0x0800);
	memset(ip, 0, 20);
	ip[0] = 0x45;
	ip[1] = ce ? 3 : 2; /* ECT(0), or CE */
	put16(ip + 2, (unsigned)(20 + 8 + len + 4));
	put16(ip + 6, 0x4000);
	ip[8] = 64;
	ip[9] = 17;
	ip[12] = 10;
	ip[15] = (uint8_t)(1 + src);
	ip[16] = 10;
	ip[19] = (uint8_t)(1 + dst);
	for (int i = 0; i < 20; i += 2)
		sum += (unsigned)(ip[i] << 8 | ip[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	put16(ip + 10, ~sum & 0xffff);
	put16(udp, 0xc000 | src << 4 | dst);
	put16(udp + 2, 4791);
	put16(udp + 4, (unsigned)(8 + len + 4));
	put16(udp + 6, 0);
	memcpy(bth, iba, len);
	icrc = qpt_icrc_rocev2(ip, 20, 4, bth, len);
	put32(bth + len, bad_icrc ? ~icrc : icrc);
	return 14 + 20 + 8 + len + 4;
}

static size_t rocev1(uint8_t *f, unsigned src, unsigned dst, const uint8_t *iba,
		     size_t len, bool bad_icrc)
{
	uint8_t *grh = f + 14, *bth = grh + 40;
	uint32_t icrc;

	eth(f, src, dst, 0x8915);
	memset(grh, 0, 40);
	grh[0] = 0x60;
	put16(grh + 4, (unsigned)(len + 4));
	grh[6] = 0x1b;
	grh[7] = 64;
	gid(grh + 8, src);
	gid(grh + 24, dst);
	memcpy(bth, iba, len);
	icrc = qpt_icrc_grh(NULL, grh, bth, len);
	put32(bth + len, bad_icrc ? ~icrc : icrc);
	return 14 + 40 + len + 4;
}

static void bth(uint8_t *b, unsigned op, unsigned fl, uint32_t dqpn, uint32_t psn)
{
	b[0] = (uint8_t)op;
	b[1] = (uint8_t)((fl & 1) << 7 | (fl >> 1 & 1) << 6 | (fl >> 6 & 3) << 4);
	put16(b + 2, 0xffff);
	b[4] = (uint8_t)((fl >> 3 & 1) << 7 | (fl >> 4 & 1) << 6);
	put24(b + 5, dqpn & 0xffffff);
	b[8] = (uint8_t)((fl >> 2 & 1) << 7);
	put24(b + 9, psn & 0xffffff);
}

struct ctx {
	uint64_t events;
};

/* Every event the verdict carries is well formed, of this frame or an
 * earlier one, and the frame's own events have their flags set. */
static void check_events(const struct qpt_verdict *v, uint64_t frame, struct ctx *c)
{
	uint32_t flags = 0;

	if (v->nevents > QPT_MAX_EVENTS)
		abort();
	for (unsigned i = 0; i < v->nevents; i++) {
		const struct qpt_event *ev = &v->ev[i];

		c->events++;
		/* an event is this frame's or revises an earlier one's */
		if (ev->kind >= QPT_VB_COUNT || !ev->frame || ev->frame > frame)
			abort();
		if (ev->detail && strlen(ev->detail) > 4096)
			abort();
		if (ev->frame == frame)
			flags |= 1u << ev->kind; /* only the frame's own are flagged */
	}
	if ((flags & v->flags) != flags)
		abort();
}

static void walk(struct qpt_flow *fl)
{
	GPtrArray *convs = qpt_flow_conversations(fl);
	const struct qpt_totals *tot = qpt_flow_totals(fl);

	if (tot->tracked + tot->untracked > tot->frames)
		abort();
	for (guint i = 0; i < convs->len; i++) {
		const struct qpt_conv_stats *cv = g_ptr_array_index(convs, i);

		qpt_paired_by_name(cv->paired_by);
		for (int d = 0; d < 2; d++) {
			const struct qpt_dir_stats *di = &cv->dir[d];

			qpt_lat_percentile(di->ack_rtt, 50);
			qpt_lat_percentile(di->ack_rtt, 99);
			qpt_lat_percentile(di->read_lat, 50);
			qpt_lat_percentile(di->atomic_lat, 99);
			if (di->episodes && di->episodes->len > 100000)
				abort();
		}
	}
	g_ptr_array_free(convs, TRUE); /* the array is the caller's */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t frame[65536 + 1024], iba[1024];
	struct in in = { data, size };
	struct qpt_decode_opts dopts = { 0 };
	struct qpt_flow_opts fopts = { 0 };
	struct ctx c = { 0 };
	struct qpt_flow *fl;
	const uint8_t *h;
	uint64_t number = 0;
	int64_t t = 1700000000LL * 1000000000LL;
	bool debug = getenv("FUZZ_FLOW_DEBUG") != NULL;
	bool bad_icrc;

	if (!take(&in, 1, &h))
		return 0;
	if (h[0] & 1)
		fopts.max_halves = 4;
	dopts.no_crc = h[0] >> 1 & 1;
	if (h[0] & 4)
		fopts.dup_window_ns = 1000000;
	if (h[0] & 8)
		fopts.timeout_gap_ns = 1000;
	bad_icrc = h[0] >> 4 & 1;
	/* bits 5-7: idle halves made cold every 1 to 7 frames (0: the
	 * default, 65,536), to fuzz the sweep and the thawing too */
	fopts.cold_every = h[0] >> 5;

	fl = qpt_flow_new(&fopts);
	for (;;) {
		const uint8_t *tp, *r, *body;
		size_t flen, l;
		uint32_t lt = QPT_LINKTYPE_ETHERNET, wire_extra;
		struct qpt_pkt pkt;
		struct qpt_verdict v;
		uint8_t *copy;

		if (!take(&in, 2, &tp))
			break;
		t += (tp[1] & 0x80) ? (int64_t)(tp[1] & 0x7f) * 1000000 :
				      (int64_t)tp[1] * 1000;
		wire_extra = (tp[0] & 0x80) ? 64 : 0;
		switch (tp[0] & 3) {
		case 0:
		case 3:
			if (!take(&in, 10, &r))
				goto done;
			l = r[9];
			if (!take(&in, l, &body))
				goto done;
			bth(iba, r[1], r[2], (uint32_t)(r[3] << 16 | r[4] << 8 | r[5]),
			    (uint32_t)(r[6] << 16 | r[7] << 8 | r[8]));
			memcpy(iba + 12, body, l);
			if ((tp[0] & 3) == 0)
				flen = rocev2(frame, r[0] & 3, r[0] >> 4 & 3, r[2] >> 5 & 1,
					      iba, 12 + l, bad_icrc);
			else
				flen = rocev1(frame, r[0] & 3, r[0] >> 4 & 3, iba, 12 + l,
					      bad_icrc);
			break;
		case 1: {
			uint8_t *mad = iba + 12 + 8;
			uint16_t attr;

			if (!take(&in, 4, &r))
				goto done;
			l = r[3] > 232 ? 232 : r[3];
			if (!take(&in, r[3], &body))
				goto done;
			attr = r[1] >= 0xf0 ? r[1] :
					      cm_attrs[r[1] % (sizeof cm_attrs / sizeof cm_attrs[0])];
			bth(iba, 0x64, 0, 1, (uint32_t)number & 0xffffff);
			put32(iba + 12, 0x80010000u);
			put32(iba + 16, 1);
			memset(mad, 0, 256);
			mad[0] = 1;
			mad[1] = 7; /* CM */
			mad[2] = 2;
			mad[3] = r[2];
			put32(mad + 8, 0x1234);
			put32(mad + 12, (uint32_t)number);
			put16(mad + 16, attr);
			memcpy(mad + 24, body, l);
			flen = rocev2(frame, r[0] & 3, r[0] >> 4 & 3, false, iba,
				      12 + 8 + 256, bad_icrc);
			break;
		}
		default: /* 2: raw */
			if (!take(&in, 3, &r))
				goto done;
			lt = linktypes[r[0] % (sizeof linktypes / sizeof linktypes[0])];
			l = (size_t)(r[1] | r[2] << 8);
			if (!take(&in, l, &body))
				goto done;
			memcpy(frame, body, l);
			flen = l;
			break;
		}
		copy = malloc(flen ? flen : 1); /* exact size: ASan sees overreads */
		if (!copy)
			break;
		memcpy(copy, frame, flen);
		qpt_decode(&pkt, lt, copy, (uint32_t)flen, (uint32_t)(flen + wire_extra),
			   &dopts);
		memset(&v, 0x5a, sizeof v);
		qpt_flow_packet(fl, ++number, t, &pkt, &v);
		check_events(&v, number, &c);
		if (debug)
			fprintf(stderr, "frame %llu kind %d len %zu: %s transport %s icrc %d/%d"
				" op 0x%02x qpn %u psn %u flags 0x%x conv %d\n",
				(unsigned long long)number, tp[0] & 3, flen,
				qpt_strerror(pkt.error), qpt_transport_name(pkt.transport),
				pkt.icrc_checked, pkt.icrc_ok, pkt.bth.opcode, pkt.bth.dqpn,
				pkt.bth.psn, v.flags, v.conv);
		free(copy);
	}
done:
	qpt_flow_end(fl, NULL, NULL);
	walk(fl);
	if (debug)
		fprintf(stderr, "%llu frames, %llu events\n", (unsigned long long)number,
			(unsigned long long)c.events);
	qpt_flow_free(fl);
	return 0;
}
