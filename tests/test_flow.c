/* test_flow.c - the flow engine's PSN window logic, fed with records built
 * by hand (no bytes): across the 24-bit wrap, past the window, and the
 * verdict rules (retransmission, gap, out-of-order, duplicate, ACK RTT). */
#include <glib.h>
#include <string.h>

#include "qpt_flow_int.h" /* (the storage: what a direction costs) */

#define A_QP 0x11
#define B_QP 0x12

static struct qpt_pkt mk(bool from_a, uint8_t opcode, uint32_t psn)
{
	struct qpt_pkt p;

	memset(&p, 0, sizeof(p));
	p.transport = QPT_TR_ROCEV2;
	p.flags = QPT_HAS_IPV4 | QPT_HAS_UDP | QPT_HAS_BTH | QPT_HAS_ICRC;
	p.ip_version = 4;
	p.ip_src[15] = from_a ? 1 : 2;
	p.ip_dst[15] = from_a ? 2 : 1;
	p.bth.opcode = opcode;
	p.bth.dqpn = from_a ? B_QP : A_QP;
	p.bth.psn = psn & QPT_PSN_MASK;
	p.bth.ackreq = from_a;
	p.icrc = psn * 2654435761u; /* stands for the bytes */
	p.wirelen = 100;
	if (opcode == 0x0a) { /* RC WRITE Only */
		p.flags |= QPT_H_RETH;
		p.reth.dmalen = 64;
		p.payload_len = 64;
	}
	if (opcode == 0x11) { /* RC ACK */
		p.flags |= QPT_H_AETH;
		p.aeth.kind = QPT_AETH_ACK;
		p.aeth.syndrome = 0x1f;
	}
	return p;
}

struct feed {
	struct qpt_flow *fl;
	uint64_t frame;
	int64_t ns;
	struct qpt_verdict v;
};

static const struct qpt_verdict *feed(struct feed *f, bool from_a, uint8_t op,
				      uint32_t psn, int64_t dt_ns)
{
	struct qpt_pkt p = mk(from_a, op, psn);

	f->ns += dt_ns;
	qpt_flow_packet(f->fl, ++f->frame, f->ns, &p, &f->v);
	return &f->v;
}

static void setup(struct feed *f)
{
	memset(f, 0, sizeof(*f));
	f->fl = qpt_flow_new(NULL);
	f->ns = 1000000000;
}

static const struct qpt_dir_stats *dir0(struct feed *f)
{
	static struct qpt_conv_stats conv;
	GPtrArray *c = qpt_flow_conversations(f->fl);

	g_assert_cmpuint(c->len, ==, 1);
	conv = *(const struct qpt_conv_stats *)g_ptr_array_index(c, 0);
	g_ptr_array_free(c, TRUE);
	return &conv.dir[0];
}

/* A CM MAD on QP1 from a or b. */
static struct qpt_pkt mk_cm(bool from_a, uint16_t msg, uint32_t local_id, uint32_t remote_id)
{
	struct qpt_pkt p = mk(from_a, 0x64, 0); /* UD SEND Only */

	p.bth.dqpn = 1;
	p.flags |= QPT_H_DETH | QPT_HAS_CM;
	p.deth.sqpn = 1;
	p.cm.msg = msg;
	p.cm.local_comm_id = local_id;
	p.cm.remote_comm_id = remote_id;
	p.cm.local_qpn = from_a ? 0x21 : 0x22;
	p.cm.service_id = 0x1061c06;
	return p;
}

/* Keeps the CM_REJECT events of a verdict. */
static void keep_rej(const struct qpt_verdict *v, GPtrArray *evs)
{
	const struct qpt_event *ev = qpt_verdict_event(v, QPT_VB_CM_REJECT);

	if (ev)
		g_ptr_array_add(evs, g_memdup2(ev, sizeof(*ev)));
}

/* CM requests that made no connection: one rejected (after an MRA), one
 * never answered; one answered with a REP and then rejected by its sender
 * (REJ of the REP), which is a conversation, not a failed request; and one
 * whose REP the capture missed but whose RTU it has: not failed either. */
/* 70,000 CM REQs, one of them answered: 69,999 failed attempts, none
 * dropped (the QP limit is not the CM's). */
static void test_cm_many_requests(void)
{
	struct qpt_flow *fl = qpt_flow_new(NULL);
	struct qpt_verdict v;
	struct qpt_pkt p;
	GPtrArray *att;
	uint64_t frame = 0;

	for (uint32_t i = 0; i < 70000; i++) {
		p = mk_cm(true, QPT_CM_REQ, 0x10000 + i, 0);
		p.cm.local_qpn = 0x100 + i;
		frame++;
		qpt_flow_packet(fl, frame, 1000 * (int64_t)frame, &p, &v);
	}
	p = mk_cm(false, QPT_CM_REP, 0x900000, 0x10000 + 69999);
	frame++;
	qpt_flow_packet(fl, frame, 1000 * (int64_t)frame, &p, &v);
	g_assert_cmpuint(v.flags & QPT_V(CM_UNKNOWN), ==, 0);
	att = qpt_flow_cm_attempts(fl);
	g_assert_cmpuint(att->len, ==, 69999);
	g_ptr_array_free(att, TRUE);
	qpt_flow_free(fl);
}

static void test_cm_failed(void)
{
	GPtrArray *evs = g_ptr_array_new_with_free_func(g_free), *att;
	struct qpt_flow *fl;
	struct qpt_verdict v;
	const struct qpt_cm_attempt *a;
	const struct qpt_event *ev;
	const struct qpt_conv_stats *c;
	GPtrArray *convs;
	struct qpt_pkt p;
	uint64_t frame = 0;

	fl = qpt_flow_new(NULL);
#define CM(FROM_A, MSG, LOCAL, REMOTE, WHY)                                \
	do {                                                              \
		p = mk_cm(FROM_A, MSG, LOCAL, REMOTE);                    \
		p.cm.reason = WHY;                                        \
		frame++;                                                  \
		qpt_flow_packet(fl, frame, 1000 * (int64_t)frame, &p, &v); \
		keep_rej(&v, evs);                                        \
	} while (0)
	CM(true, QPT_CM_REQ, 0x100, 0, 0);	/* 1: rejected */
	CM(false, QPT_CM_MRA, 0x200, 0x100, 0); /* 2 */
	CM(false, QPT_CM_REJ, 0x200, 0x100, 27);	/* 3 */
	g_assert_true(v.flags & QPT_V(CM_REJECT));
	CM(true, QPT_CM_REQ, 0x101, 0, 0);	/* 4: no answer */
	CM(true, QPT_CM_REQ, 0x102, 0, 0);	/* 5: REP, then REJ */
	CM(false, QPT_CM_REP, 0x202, 0x102, 0); /* 6 */
	CM(true, QPT_CM_REJ, 0x102, 0x202, 99);	/* 7: a reason with no name */
	CM(true, QPT_CM_REQ, 0x103, 0, 0);	/* 8: its REP not captured, */
	CM(true, QPT_CM_RTU, 0x103, 0x203, 0);	/* 9: but the RTU was */
#undef CM
	att = qpt_flow_cm_attempts(fl);
	g_assert_cmpuint(att->len, ==, 2);
	a = g_ptr_array_index(att, 0);
	g_assert_cmpuint(a->info.req_frame, ==, 1);
	g_assert_cmpuint(a->info.mra_frame, ==, 2);
	g_assert_cmpuint(a->info.rej_frame, ==, 3);
	g_assert_cmpuint(a->info.rej_reason, ==, 27);
	g_assert_cmpuint(a->from.qpn, ==, 0x21);
	g_assert_cmpuint(a->from.addr[15], ==, 1);
	g_assert_cmpuint(a->to.addr[15], ==, 2);
	a = g_ptr_array_index(att, 1);
	g_assert_cmpuint(a->info.req_frame, ==, 4);
	g_assert_cmpuint(a->info.rej_frame, ==, 0);
	g_ptr_array_free(att, TRUE);

	convs = qpt_flow_conversations(fl);
	g_assert_cmpuint(convs->len, ==, 1);
	c = g_ptr_array_index(convs, 0);
	g_assert_cmpuint(c->cm->rej_frame, ==, 7);
	g_assert_cmpuint(c->cm->rej_reason, ==, 99);

	g_assert_cmpuint(evs->len, ==, 2);
	ev = g_ptr_array_index(evs, 0);
	g_assert_cmpuint(ev->frame, ==, 3);
	g_assert_cmpint(ev->conv, ==, -1);
	g_assert_cmpuint(ev->code, ==, 27);
	g_assert_cmpuint(ev->original_frame, ==, 1);
	g_assert_cmpstr(ev->detail, ==, "insufficient responder resources");
	ev = g_ptr_array_index(evs, 1);
	g_assert_cmpuint(ev->frame, ==, 7);
	g_assert_cmpint(ev->conv, ==, c->id);
	g_assert_cmpstr(ev->detail, ==, "unknown reason");
	g_assert_cmpstr(qpt_cm_rej_reason_name(28), ==, "consumer defined");
	g_assert_null(qpt_cm_rej_reason_name(34));
	g_ptr_array_free(convs, TRUE);
	g_ptr_array_free(evs, TRUE);
	qpt_flow_free(fl);
}

static void test_wrap_in_order(void)
{
	struct feed f;
	const struct qpt_verdict *v;

	setup(&f);
	for (uint32_t i = 0; i < 6; i++) {
		v = feed(&f, true, 0x0a, 0xfffffd + i, 5000);
		g_assert_cmpuint(v->flags & (QPT_V(RETRANSMISSION) | QPT_V(PSN_GAP)), ==, 0);
	}
	g_assert_cmpuint(dir0(&f)->first_psn, ==, 0xfffffd);
	g_assert_cmpuint(dir0(&f)->last_psn, ==, 2);
	g_assert_cmpuint(qpt_dir_op(dir0(&f), QPT_OP_WRITE)->count, ==, 6);
	/* PSN 0xFFFFFF again (frame 3): a retransmission naming frame 3
	 * (60 us on: the same bytes sooner, with nothing between, would be
	 * a capture copy). */
	v = feed(&f, true, 0x0a, 0xffffff, 60000);
	g_assert_true(v->flags & QPT_V(RETRANSMISSION));
	g_assert_cmpuint(v->original_frame, ==, 3);
	/* PSN 0 again (frame 4). */
	v = feed(&f, true, 0x0a, 0, 5000);
	g_assert_true(v->flags & QPT_V(RETRANSMISSION));
	g_assert_cmpuint(v->original_frame, ==, 4);
	g_assert_cmpuint(dir0(&f)->retransmitted_packets, ==, 2);
	g_assert_cmpuint(qpt_dir_op(dir0(&f), QPT_OP_WRITE)->count, ==, 6); /* counted once */
	qpt_flow_free(f.fl);
}

static void test_gap_across_wrap(void)
{
	struct feed f;
	const struct qpt_verdict *v;

	setup(&f);
	feed(&f, true, 0x0a, 0xfffffe, 1000);
	v = feed(&f, true, 0x0a, 1, 1000); /* 0xFFFFFF and 0 missing */
	g_assert_true(v->flags & QPT_V(PSN_GAP));
	g_assert_cmpuint(v->gap_psns, ==, 2);
	g_assert_cmpuint(v->gap_first_psn, ==, 0xffffff);
	/* 0 arrives 1 us later with no NAK: not a resend; out of order, as
	 * the next request shows (it does not resend what followed 0). */
	v = feed(&f, true, 0x0a, 0, 1000);
	g_assert_false(v->flags & (QPT_V(RETRANSMISSION) | QPT_V(OUT_OF_ORDER)));
	/* 0xFFFFFF after a long silence: a retransmission, original unseen;
	 * its verdict carries frame 3's out-of-order event. */
	v = feed(&f, true, 0x0a, 0xffffff, 5000000);
	g_assert_nonnull(qpt_verdict_event(v, QPT_VB_OUT_OF_ORDER));
	g_assert_cmpuint(qpt_verdict_event(v, QPT_VB_OUT_OF_ORDER)->frame, ==, 3);
	g_assert_false(v->flags & QPT_V(OUT_OF_ORDER)); /* not frame 4's */
	g_assert_true(v->flags & QPT_V(RETRANSMISSION));
	g_assert_true(v->flags & QPT_V(TIMEOUT_RESEND));
	g_assert_cmpuint(v->original_frame, ==, 0);
	g_assert_cmpuint(dir0(&f)->missing_psns, ==, 2);
	g_assert_cmpuint(qpt_dir_op(dir0(&f), QPT_OP_WRITE)->count, ==, 4);
	qpt_flow_free(f.fl);
}

static void test_ack_across_wrap(void)
{
	struct feed f;
	const struct qpt_verdict *v;

	setup(&f);
	feed(&f, true, 0x0a, 0xffffff, 1000); /* frame 1 */
	feed(&f, true, 0x0a, 0, 1000);	      /* frame 2 */
	v = feed(&f, false, 0x11, 0, 20000);  /* ACK PSN 0 covers both */
	g_assert_cmpint(v->conv, ==, 0);
	g_assert_cmpint(v->dir, ==, 1);
	g_assert_cmpuint(v->acks_frame, ==, 2);
	g_assert_cmpint(v->ack_rtt_ns, ==, 20000);
	g_assert_true(v->flags & QPT_V(COALESCED_ACK)); /* two A-bit requests */
	/* The same ACK 1 us later with nothing between: a capture copy, not
	 * a second ACK. */
	v = feed(&f, false, 0x11, 0, 1000);
	g_assert_true(v->flags & QPT_V(DUPLICATE));
	g_assert_false(v->flags & QPT_V(DUP_ACK));
	/* PSN 0's bytes again 10 us after its ACK: a capture copy (a mirror
	 * delays its copies past the answer; a WRITE answered is sent again
	 * only by the requester's timer, 4.096 us << 14 by default, far
	 * longer than the copy window).  Then PSN 0 resent after a silence
	 * (its ACK lost after the capture point), and the responder's ACK
	 * for it again: a duplicate ACK, not a copy. */
	v = feed(&f, true, 0x0a, 0, 10000);
	g_assert_true(v->flags & QPT_V(DUPLICATE));
	v = feed(&f, true, 0x0a, 0, 700000);
	g_assert_true(v->flags & QPT_V(RETRANSMISSION));
	v = feed(&f, false, 0x11, 0, 1000);
	g_assert_true(v->flags & QPT_V(DUP_ACK));
	g_assert_false(v->flags & QPT_V(DUPLICATE));
	qpt_flow_free(f.fl);
}

/* Captures of both hosts merged: each copy comes a few us after its
 * original, after the next packets; a NAK between makes a resend. */
static void test_copy_interleaved(void)
{
	struct feed f;
	const struct qpt_verdict *v;

	setup(&f);
	feed(&f, true, 0x0a, 5, 1000);	   /* frame 1 */
	feed(&f, true, 0x0a, 6, 1000);	   /* frame 2 */
	feed(&f, true, 0x0a, 7, 1000);	   /* frame 3 */
	v = feed(&f, true, 0x0a, 5, 3000); /* the copy of frame 1 */
	g_assert_true(v->flags & QPT_V(DUPLICATE));
	g_assert_cmpuint(v->original_frame, ==, 1);
	v = feed(&f, true, 0x0a, 6, 1000);
	g_assert_true(v->flags & QPT_V(DUPLICATE));
	g_assert_cmpuint(v->original_frame, ==, 2);
	g_assert_cmpuint(dir0(&f)->retransmitted_packets, ==, 0);
	g_assert_cmpuint(dir0(&f)->gbn_episodes, ==, 0);
	feed(&f, true, 0x0a, 8, 1000); /* frame 6, new */
	{ /* a NAK (sequence error at 7), then 7 and 8 again: resends */
		struct qpt_pkt n = mk(false, 0x11, 7);

		n.aeth.kind = QPT_AETH_NAK;
		n.aeth.syndrome = 0x60;
		n.aeth.value = 0;
		f.ns += 1000;
		qpt_flow_packet(f.fl, ++f.frame, f.ns, &n, &f.v);
	}
	v = feed(&f, true, 0x0a, 7, 1000);
	g_assert_true(v->flags & QPT_V(RETRANSMISSION));
	g_assert_false(v->flags & QPT_V(DUPLICATE));
	v = feed(&f, true, 0x0a, 8, 1000);
	g_assert_true(v->flags & QPT_V(RETRANSMISSION));
	g_assert_false(v->flags & QPT_V(DUPLICATE));
	/* a clock that steps back: a finding, never a copy */
	v = feed(&f, true, 0x0a, 8, -2000000000);
	g_assert_true(v->flags & QPT_V(TIME_BACKWARDS));
	g_assert_false(v->flags & QPT_V(DUPLICATE));
	g_assert_true(v->flags & QPT_V(RETRANSMISSION));
	g_assert_cmpuint(qpt_flow_totals(f.fl)->time_backwards, ==, 1);
	qpt_flow_free(f.fl);
}

static void test_window_limit(void)
{
	struct feed f;
	const struct qpt_verdict *v;

	setup(&f);
	/* 300 PSNs from 0xFFFF00 (crossing the wrap), then resend the first:
	 * still a retransmission, but its original left the 256-PSN window. */
	for (uint32_t i = 0; i < 300; i++)
		feed(&f, true, 0x0a, 0xffff00 + i, 1000);
	v = feed(&f, true, 0x0a, 0xffff00, 1000);
	g_assert_true(v->flags & QPT_V(RETRANSMISSION));
	g_assert_cmpuint(v->original_frame, ==, 0);
	/* one still inside the window keeps its original */
	v = feed(&f, true, 0x0a, 0xffff00 + 299, 1000);
	g_assert_cmpuint(v->original_frame, ==, 300);
	qpt_flow_free(f.fl);
}

static void test_duplicate(void)
{
	struct feed f;
	const struct qpt_verdict *v;

	setup(&f);
	feed(&f, true, 0x0a, 5, 1000);
	v = feed(&f, true, 0x0a, 5, 1000); /* same bytes 1 us later */
	g_assert_true(v->flags & QPT_V(DUPLICATE));
	g_assert_false(v->flags & QPT_V(RETRANSMISSION));
	g_assert_cmpuint(v->original_frame, ==, 1);
	v = feed(&f, true, 0x0a, 5, 10000000); /* 10 ms later: resent */
	g_assert_true(v->flags & QPT_V(RETRANSMISSION));
	qpt_flow_free(f.fl);
}

static void test_bounded_halves(void)
{
	struct qpt_flow_opts o = { .max_halves = 100 };
	struct qpt_flow *fl = qpt_flow_new(&o);
	struct qpt_verdict v;

	for (uint32_t q = 0; q < 1000; q++) {
		struct qpt_pkt p = mk(true, 0x0a, 1);

		p.bth.dqpn = 0x100 + q;
		qpt_flow_packet(fl, q + 1, 1000 * q, &p, &v);
	}
	g_assert_cmpuint(qpt_flow_totals(fl)->tracked, ==, 100);
	g_assert_cmpuint(qpt_flow_totals(fl)->untracked, ==, 900);
	/* the totals say that a limit was asked for and reached */
	g_assert_cmpuint(qpt_flow_totals(fl)->max_halves, ==, 100);
	g_assert_true(qpt_flow_totals(fl)->limit_reached);
	g_assert_cmpuint(qpt_flow_totals(fl)->conversations, ==, 100);
	/* a QP tracked before the limit is still analysed after it */
	{
		struct qpt_pkt p = mk(true, 0x0a, 2);

		p.bth.dqpn = 0x100;
		qpt_flow_packet(fl, 1001, 1000000, &p, &v);
		g_assert_cmpint(v.conv, ==, 0);
		g_assert_cmpuint(qpt_flow_totals(fl)->tracked, ==, 101);
		g_assert_cmpuint(qpt_flow_totals(fl)->untracked, ==, 900);
	}
	qpt_flow_free(fl);
}

/* A limit not reached is not reported as reached. */
static void test_bounded_halves_not_reached(void)
{
	struct qpt_flow *fl = qpt_flow_new(&(struct qpt_flow_opts){ .max_halves = 1000 });
	struct qpt_verdict v;

	for (uint32_t q = 0; q < 1000; q++) {
		struct qpt_pkt p = mk(true, 0x0a, 1);

		p.bth.dqpn = 0x100 + q;
		qpt_flow_packet(fl, q + 1, 1000 * q, &p, &v);
	}
	g_assert_cmpuint(qpt_flow_totals(fl)->untracked, ==, 0);
	g_assert_false(qpt_flow_totals(fl)->limit_reached);
	qpt_flow_free(fl);
}

/* No limit by default: 150,000 distinct QPNs (more than the 65,536 the
 * engine used to stop at), each packet tracked, each QP its conversation,
 * and a second packet of the first QP still finds its conversation. */
static void test_unbounded_halves(void)
{
	struct qpt_flow *fl = qpt_flow_new(NULL);
	struct qpt_verdict v;
	const uint32_t n = 150000;

	for (uint32_t q = 0; q < n; q++) {
		struct qpt_pkt p = mk(true, 0x0a, 1);

		p.bth.dqpn = 0x100 + q;
		qpt_flow_packet(fl, q + 1, 1000 * (int64_t)q, &p, &v);
		g_assert_cmpint(v.conv, ==, (int32_t)q);
	}
	{
		struct qpt_pkt p = mk(true, 0x0a, 1); /* the same PSN again */

		p.bth.dqpn = 0x100;
		qpt_flow_packet(fl, n + 1, 1000 * (int64_t)n, &p, &v);
		g_assert_cmpint(v.conv, ==, 0);
		g_assert_true(v.flags & QPT_V(RETRANSMISSION));
	}
	g_assert_cmpuint(qpt_flow_totals(fl)->tracked, ==, n + 1);
	g_assert_cmpuint(qpt_flow_totals(fl)->untracked, ==, 0);
	g_assert_cmpuint(qpt_flow_totals(fl)->conversations, ==, n);
	g_assert_cmpuint(qpt_flow_totals(fl)->max_halves, ==, 0);
	g_assert_false(qpt_flow_totals(fl)->limit_reached);
	qpt_flow_free(fl);
}

/* Pairing by traffic among many QPs between the same two hosts (no CM):
 * QP i is host 1's QPN 0x100 + i with host 2's QPN 0x4000 + i, the truth
 * the conversations must show.  Its requests start at PSN 1000 * i (so
 * an ACK is within reach of the later QPs' requests too, and only the
 * nearest is its own), and the ACKs come in another order than the
 * requests, with more requests and ACKs of paired QPs in between.  Then
 * QPs whose ACKs the capture saw before their requests (starting
 * mid-connection): each request continues one ACKed PSN.  Then two ACKs
 * both within reach of one request: not paired (not a guess).  Then a
 * half that answered before it sent requests. */
#define PAIR_N 60

static void send_pkt(struct qpt_flow *fl, uint64_t *frame, bool from_1, uint32_t dqpn,
		     uint8_t op, uint32_t psn)
{
	struct qpt_pkt p = mk(from_1, op, psn);
	struct qpt_verdict v;

	p.bth.dqpn = dqpn;
	++*frame;
	qpt_flow_packet(fl, *frame, 1000 * (int64_t)*frame, &p, &v);
}

/* A conversation of the pairing tests: -1 when unpaired, else its host 1
 * endpoint's index, once it is checked to be paired by traffic between
 * the two hosts with both QPNs known. */
static int paired_host1(const struct qpt_conv_stats *c)
{
	int e1 = c->ep[0].addr[15] == 1 ? 0 : 1;

	if (c->paired_by == QPT_PAIR_NONE)
		return -1;
	g_assert_cmpint(c->paired_by, ==, QPT_PAIR_TRAFFIC);
	g_assert_cmpuint(c->ep[e1].addr[15], ==, 1);
	g_assert_cmpuint(c->ep[1 - e1].addr[15], ==, 2);
	g_assert_true(c->ep[0].qpn_known && c->ep[1].qpn_known);
	return e1;
}

static void test_pair_many_same_hosts(void)
{
	struct qpt_flow *fl = qpt_flow_new(NULL);
	uint64_t frame = 0;
	GPtrArray *cs;
	bool seen[PAIR_N + 12] = { false };
	unsigned unpaired = 0;

	for (uint32_t i = 0; i < PAIR_N; i++) /* WRITE Only to host 2's QP */
		send_pkt(fl, &frame, true, 0x4000 + i, 0x0a, 1000 * i);
	for (uint32_t k = 0; k < PAIR_N; k++) {
		uint32_t i = (k * 37 + 11) % PAIR_N; /* 37 is prime to 60: each i once */

		send_pkt(fl, &frame, false, 0x100 + i, 0x11, 1000 * i); /* its ACK */
		/* a paired QP again, and the next of its ACKs */
		send_pkt(fl, &frame, true, 0x4000 + i, 0x0a, 1000 * i + 1);
		send_pkt(fl, &frame, false, 0x100 + i, 0x11, 1000 * i + 1);
	}
	/* QPs PAIR_N .. PAIR_N + 7: ACKs first, then their requests */
	for (uint32_t i = PAIR_N; i < PAIR_N + 8; i++)
		send_pkt(fl, &frame, false, 0x100 + i, 0x11, 5000000 + 1000 * i);
	for (uint32_t i = PAIR_N + 7; i >= PAIR_N; i--) {
		send_pkt(fl, &frame, true, 0x4000 + i, 0x0a, 5000000 + 1000 * i + 1);
		send_pkt(fl, &frame, false, 0x100 + i, 0x11, 5000000 + 1000 * i + 1);
	}
	/* QPs PAIR_N + 8 and + 9 ACK PSNs 9,000,000 and 9,000,010; a request
	 * PSN 9,000,011 to QP PAIR_N + 8 continues either */
	send_pkt(fl, &frame, false, 0x100 + PAIR_N + 8, 0x11, 9000000);
	send_pkt(fl, &frame, false, 0x100 + PAIR_N + 9, 0x11, 9000010);
	send_pkt(fl, &frame, true, 0x4000 + PAIR_N + 8, 0x0a, 9000011);
	/* QP PAIR_N + 10: host 2's half carries an ACK, is passed over by a
	 * lookup for an unrelated ACK (QPN 0x4000 + PAIR_N + 11) while it sent
	 * no request, then sends a request that host 1 ACKs: paired then */
	send_pkt(fl, &frame, false, 0x100 + PAIR_N + 10, 0x11, 12000000);
	send_pkt(fl, &frame, true, 0x4000 + PAIR_N + 11, 0x11, 14000000);
	send_pkt(fl, &frame, false, 0x100 + PAIR_N + 10, 0x0a, 13000000);
	send_pkt(fl, &frame, true, 0x4000 + PAIR_N + 10, 0x11, 13000000);

	cs = qpt_flow_conversations(fl);
	for (guint k = 0; k < cs->len; k++) {
		const struct qpt_conv_stats *c = g_ptr_array_index(cs, k);
		int e1 = paired_host1(c);
		uint32_t i;

		if (e1 < 0) {
			unpaired++;
			continue;
		}
		i = c->ep[e1].qpn - 0x100;
		g_assert_true(i < PAIR_N + 8 || i == PAIR_N + 10);
		g_assert_cmpuint(c->ep[1 - e1].qpn, ==, 0x4000 + i);
		g_assert_false(seen[i]);
		seen[i] = true;
		/* every packet of QP i in it: its requests, its ACKs */
		g_assert_cmpuint(c->dir[e1].packets, ==, i < PAIR_N ? 2 : 1);
		g_assert_cmpuint(c->dir[1 - e1].packets, ==, 2);
	}
	g_assert_true(seen[PAIR_N + 10]);
	/* two ACK halves and one request half, apart; the unrelated ACK */
	g_assert_cmpuint(unpaired, ==, 4);
	g_assert_cmpuint(cs->len, ==, PAIR_N + 9 + 4);
	g_assert_cmpuint(qpt_flow_totals(fl)->conversations, ==, PAIR_N + 9 + 4);
	g_ptr_array_free(cs, TRUE);
	qpt_flow_free(fl);
}

/* The same rules with few QPs between two hosts (0 to 7 and the tail
 * cases: the halves per direction cross the few an address pair keeps
 * before it needs arrays), with a UD QP pair between the same hosts,
 which is never a candidate (its next PSN, 2000, is the nearest for QP
 * 2's ACK): UD datagrams first, then QP i's WRITE Only at PSN 1000 * i,
 * and the ACKs in another order (each ACK within reach of its own and the
 * later QPs' requests: its own is the nearest), then an ACK to a QP that
 * sent nothing, PSN 0 (QP 0's request, paired, is no candidate), then the
 * UD answer, then two QPs whose ACKs came first, then two ACKs both
 * within reach of one request (not paired).  Only the endpoints and how
 * they were paired are read: the truth is the QPNs sent. */
static void ud_pkt(struct qpt_flow *fl, uint64_t *frame, bool from_1, uint32_t dqpn,
		   uint32_t sqpn, uint32_t psn)
{
	struct qpt_pkt p = mk(from_1, 0x64, psn); /* UD SEND Only */

	p.flags |= QPT_H_DETH;
	p.deth.qkey = 0x11111111;
	p.deth.sqpn = sqpn;
	p.bth.dqpn = dqpn;
	p.bth.ackreq = false;
	p.payload_len = 32;
	++*frame;
	qpt_flow_packet(fl, *frame, 1000 * (int64_t)*frame, &p, &(struct qpt_verdict){ 0 });
}

static void pair_few(uint32_t n)
{
	struct qpt_flow *fl = qpt_flow_new(NULL);
	uint64_t frame = 0;
	GPtrArray *cs;
	bool seen[7 + 2] = { false }, ud_seen = false;
	unsigned unpaired = 0;

	ud_pkt(fl, &frame, true, 0x9002, 0x9001, 1999);
	for (uint32_t i = 0; i < n; i++)
		send_pkt(fl, &frame, true, 0x4000 + i, 0x0a, 1000 * i);
	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = (k * 5 + 3) % n; /* 5 is prime to 1..7 but 5 */

		if (n == 5)
			i = (k * 3 + 1) % n;
		send_pkt(fl, &frame, false, 0x100 + i, 0x11, 1000 * i);
	}
	send_pkt(fl, &frame, false, 0x100 + n + 4, 0x11, 0);
	ud_pkt(fl, &frame, false, 0x9001, 0x9002, 77);
	for (uint32_t i = n; i < n + 2; i++) /* ACKs first */
		send_pkt(fl, &frame, false, 0x100 + i, 0x11, 5000000 + 1000 * i);
	for (uint32_t i = n + 2; i-- > n;)
		send_pkt(fl, &frame, true, 0x4000 + i, 0x0a, 5000000 + 1000 * i + 1);
	send_pkt(fl, &frame, false, 0x100 + n + 2, 0x11, 9000000);
	send_pkt(fl, &frame, false, 0x100 + n + 3, 0x11, 9000010);
	send_pkt(fl, &frame, true, 0x4000 + n + 2, 0x0a, 9000011);

	cs = qpt_flow_conversations(fl);
	for (guint k = 0; k < cs->len; k++) {
		const struct qpt_conv_stats *c = g_ptr_array_index(cs, k);
		int e1 = paired_host1(c);
		uint32_t i;

		if (e1 < 0) {
			unpaired++;
			continue;
		}
		if (c->ep[e1].qpn == 0x9001) {
			g_assert_cmpuint(c->ep[1 - e1].qpn, ==, 0x9002);
			g_assert_false(ud_seen);
			ud_seen = true;
			continue;
		}
		i = c->ep[e1].qpn - 0x100;
		g_assert_cmpuint(i, <, n + 2);
		g_assert_cmpuint(c->ep[1 - e1].qpn, ==, 0x4000 + i);
		g_assert_false(seen[i]);
		seen[i] = true;
	}
	for (uint32_t i = 0; i < n + 2; i++)
		g_assert_true(seen[i]);
	g_assert_true(ud_seen);
	g_assert_cmpuint(unpaired, ==, 4);
	g_assert_cmpuint(cs->len, ==, n + 2 + 1 + 4);
	g_ptr_array_free(cs, TRUE);
	qpt_flow_free(fl);
}

static void test_pair_few_same_hosts(void)
{
	for (uint32_t n = 0; n <= 7; n++)
		pair_few(n);
}

static const struct qpt_verdict *feed_len(struct feed *f, bool from_a, uint8_t op,
					  uint32_t psn, uint32_t payload, uint32_t dmalen)
{
	struct qpt_pkt p = mk(from_a, op, psn);

	p.payload_len = payload;
	if (dmalen) {
		p.flags |= QPT_H_RETH;
		p.reth.dmalen = dmalen;
	}
	if (op == 0x0d || op == 0x0f || op == 0x10) { /* READ response with AETH */
		p.flags |= QPT_H_AETH;
		p.aeth.kind = QPT_AETH_ACK;
		p.aeth.syndrome = 0x1f;
	}
	f->ns += 1000;
	qpt_flow_packet(f->fl, ++f->frame, f->ns, &p, &f->v);
	return &f->v;
}

/* A READ whose third response is lost, answered around by a later ACK: the
 * requester re-issues the READ from the missing PSN.  The episode ends with
 * the response that completes the re-issued READ, not never (everything
 * before it was acknowledged already, so no later answer would close it). */
static void test_read_retry_episode_end(void)
{
	struct feed f;
	const struct qpt_verdict *v;
	const struct qpt_dir_stats *d;
	const struct qpt_episode *e;

	setup(&f);
	feed_len(&f, true, 0x06, 0, 1024, 2048); /* 1 WRITE First: MTU 1024 */
	feed_len(&f, true, 0x08, 1, 1024, 0);	 /* 2 WRITE Last */
	feed_len(&f, true, 0x0c, 2, 0, 4096);	 /* 3 READ, PSNs 2..5 */
	feed_len(&f, true, 0x0a, 6, 64, 64);	 /* 4 WRITE Only */
	feed_len(&f, false, 0x0d, 2, 1024, 0);	 /* 5 response First */
	feed_len(&f, false, 0x0e, 3, 1024, 0);	 /* 6 response Middle; PSN 4 lost */
	feed_len(&f, false, 0x0f, 5, 1024, 0);	 /* 7 response Last */
	feed_len(&f, false, 0x11, 6, 0, 0);	 /* 8 ACK of the WRITE */
	v = feed_len(&f, true, 0x0c, 4, 0, 2048); /* 9 READ re-issued from PSN 4 */
	g_assert_true(v->flags & QPT_V(READ_RETRY));
	g_assert_true(v->flags & QPT_V(GBN_START));
	feed_len(&f, false, 0x0d, 4, 1024, 0);	 /* 10 response First */
	feed_len(&f, false, 0x0f, 5, 1024, 0);	 /* 11 response Last: recovered */
	feed_len(&f, true, 0x0a, 7, 64, 64);	 /* 12 new WRITE */
	qpt_flow_end(f.fl, NULL, NULL);
	d = dir0(&f);
	g_assert_cmpuint(d->gbn_episodes, ==, 1);
	g_assert_nonnull(d->episodes);
	g_assert_cmpuint(d->episodes->len, ==, 1);
	e = &g_array_index(d->episodes, struct qpt_episode, 0);
	g_assert_cmpuint(e->trigger, ==, QPT_TRIGGER_READ_RETRY);
	g_assert_cmpuint(e->trigger_frame, ==, 9);
	g_assert_cmpuint(e->end_frame, ==, 11);
	g_assert_cmpint(e->end_ns - e->start_ns, ==, 2000);
	qpt_flow_free(f.fl);
}

/* ---- priorities and the CNP rate window (qpt_flow_qos.c) -------------- */

static void feed_qos(struct feed *f, bool from_a, uint8_t op, uint32_t psn, int pcp,
		     int dscp, uint32_t iba_len, int64_t at_ns)
{
	struct qpt_pkt p = mk(from_a, op, psn);

	p.vlan_pcp = pcp;
	p.dscp = (uint8_t)dscp;
	p.iba_len = iba_len;
	f->ns = at_ns;
	qpt_flow_packet(f->fl, ++f->frame, f->ns, &p, &f->v);
}

/* The i-th priority count of d, which must exist. */
static struct qpt_qos_count count_at(const struct qpt_dir_stats *d, unsigned i)
{
	const struct qpt_qos_count *e = qpt_qos_count_at(d, i);

	g_assert_nonnull(e);
	return *e;
}

/* Data on one PCP and DSCP costs no struct qpt_qos_stats; 70,000 packets of
 * one value (more than its inline count holds), then a second PCP, then
 * ACK-class packets from b: every count as fed, in the order first seen. */
static void test_qos_counts(void)
{
	struct feed f;
	const struct qpt_dir_stats *a, *b;
	struct qpt_qos_count e;
	GPtrArray *cs;
	const struct qpt_conv_stats *c;
	int top = -2;

	setup(&f);
	for (uint32_t i = 0; i < 10; i++)
		feed_qos(&f, true, 0x0a, i, 3, 26, 100, f.ns + 200000);
	feed_qos(&f, false, 0x11, 9, 3, 26, 20, f.ns + 1000);
	cs = qpt_flow_conversations(f.fl);
	g_assert_cmpuint(cs->len, ==, 1);
	c = g_ptr_array_index(cs, 0);
	a = &c->dir[0];
	b = &c->dir[1];
	/* the memory asked for: none allocated */
	g_assert_null(fl_conv_live(f.fl, 0)->dir[0]->qos);
	g_assert_null(fl_conv_live(f.fl, 0)->dir[1]->qos);
	g_assert_nonnull(qpt_dir_qos(a));
	g_assert_cmpuint(qpt_qos_values(a, QPT_QOS_DATA, false, &top), ==, 1);
	g_assert_cmpint(top, ==, 3);
	e = count_at(a, 0);
	g_assert_cmpuint(e.cls, ==, QPT_QOS_DATA);
	g_assert_false(e.dscp);
	g_assert_cmpint(e.value, ==, 3);
	g_assert_cmpuint(e.packets, ==, 10);
	e = count_at(a, 1);
	g_assert_true(e.dscp);
	g_assert_cmpint(e.value, ==, 26);
	g_assert_cmpuint(e.packets, ==, 10);
	g_assert_null(qpt_qos_count_at(a, 2));
	for (uint32_t i = 10; i < 70000; i++)
		feed_qos(&f, true, 0x0a, i, 3, 26, 100, f.ns + 200000);
	feed_qos(&f, true, 0x0a, 70000, 5, 26, 100, f.ns + 200000);
	feed_qos(&f, false, 0x11, 70000, -1, 10, 20, f.ns + 1000);
	feed_qos(&f, false, 0x11, 70000, -1, 12, 20, f.ns + 1000);
	qpt_flow_end(f.fl, NULL, NULL);
	g_ptr_array_free(cs, TRUE); /* (the read model is filled when asked) */
	cs = qpt_flow_conversations(f.fl);
	c = g_ptr_array_index(cs, 0);
	a = &c->dir[0];
	b = &c->dir[1];
	g_assert_cmpuint(qpt_qos_values(a, QPT_QOS_DATA, false, &top), ==, 2);
	g_assert_cmpint(top, ==, 3);
	g_assert_cmpuint(qpt_qos_values(a, QPT_QOS_DATA, true, &top), ==, 1);
	g_assert_cmpint(top, ==, 26);
	g_assert_cmpuint(count_at(a, 0).packets, ==, 70000);
	g_assert_cmpint(count_at(a, 1).value, ==, 26);
	g_assert_cmpuint(count_at(a, 1).packets, ==, 70001);
	g_assert_cmpint(count_at(a, 2).value, ==, 5);
	g_assert_cmpuint(count_at(a, 2).packets, ==, 1);
	g_assert_null(qpt_qos_count_at(a, 3));
	/* b: PCP 3 then untagged; DSCP 26, 10, 12 */
	g_assert_cmpuint(qpt_qos_values(b, QPT_QOS_ACK, false, NULL), ==, 2);
	g_assert_cmpuint(qpt_qos_values(b, QPT_QOS_ACK, true, NULL), ==, 3);
	e = count_at(b, 2);
	g_assert_false(e.dscp);
	g_assert_cmpint(e.value, ==, -1);
	g_assert_cmpuint(e.packets, ==, 2);
	g_assert_cmpint(count_at(b, 3).value, ==, 10);
	g_assert_cmpint(count_at(b, 4).value, ==, 12);
	g_assert_null(qpt_qos_count_at(b, 5));
	g_assert_cmpuint(qpt_qos_values(b, QPT_QOS_DATA, false, NULL), ==, 0);
	g_ptr_array_free(cs, TRUE);
	qpt_flow_free(f.fl);
}

/* The sender's bytes in the 100 us before and after a CNP (the default
 * window): packets at the times given (us after t0) with their IBA
 * lengths, a CNP back at cnp_us; the sums worked out by hand. */
static void rate_case(const int64_t *at_us, const uint32_t *len, unsigned n, int64_t cnp_us,
		      uint64_t before, uint64_t after)
{
	struct feed f;
	const struct qpt_dir_stats *a;
	const struct qpt_qos_stats *q;
	const int64_t t0 = 2000000000;
	bool cnp_sent = false;

	setup(&f);
	feed_qos(&f, true, 0x0a, 0, 3, 26, 100, t0 - 1000000000);
	feed_qos(&f, false, 0x11, 0, 3, 26, 20, t0 - 999000000);
	for (unsigned i = 0; i < n; i++) {
		if (!cnp_sent && at_us[i] > cnp_us) {
			feed_qos(&f, false, 0x81, 0, 6, 48, 60, t0 + cnp_us * 1000);
			cnp_sent = true;
		}
		feed_qos(&f, true, 0x0a, 1 + i, 3, 26, len[i], t0 + at_us[i] * 1000);
	}
	g_assert_true(cnp_sent);
	qpt_flow_end(f.fl, NULL, NULL);
	a = dir0(&f);
	q = qpt_dir_qos(a);
	g_assert_nonnull(q);
	g_assert_cmpuint(q->rate_windows, ==, 1);
	g_assert_cmpuint(q->bytes_before, ==, before);
	g_assert_cmpuint(q->bytes_after, ==, after);
	g_assert_cmpfloat(q->rate_before_bps, ==, (double)before * 8 / 100e-6);
	qpt_flow_free(f.fl);
}

static void test_qos_rate_window(void)
{
	/* two packets in the window before (one older); the after window
	 * [130, 230) has 800, the packet at 240 closes it */
	static const int64_t t1[] = { 0, 50, 120, 150, 240 };
	static const uint32_t l1[] = { 100, 200, 400, 800, 1600 };
	/* four in the window: more than a direction keeps inline */
	static const int64_t t2[] = { 5, 10, 20, 30, 35, 100, 300 };
	static const uint32_t l2[] = { 50, 100, 200, 400, 1000, 3000, 7 };
	/* the history before the window, with a frame stamped earlier in
	 * between (times back): kept in the order fed, the older entries go
	 * only from the front */
	static const int64_t t3[] = { 10, 300, 20, 310, 320, 400, 500 };
	static const uint32_t l3[] = { 1, 2, 4, 8, 16, 32, 64 };

	rate_case(t1, l1, G_N_ELEMENTS(t1), 130, 600, 800);
	rate_case(t2, l2, G_N_ELEMENTS(t2), 40, 1750, 3000);
	rate_case(t3, l3, G_N_ELEMENTS(t3), 330, 30, 32);
}

/* The rate window when the direction's struct qpt_qos_stats came first (a
 * second PCP) and its history was still inline, and when a CNP finds the
 * history inline: the same sums.  Packets (us after t0, IBA bytes): 0
 * (100, PCP 5), 50 (200), CNP back at 60, 100 (400), 150 (800), 200 (1600,
 * after the window [60, 160): closes it).  Before: 0 and 50 = 300; after:
 * 100 and 150 = 1,200.  Then a direction seen one way: its other direction
 * is the shared empty one until a packet goes that way. */
static void test_qos_rate_qos_first(void)
{
	static const int64_t at[] = { 0, 50, 100, 150, 200 };
	static const uint32_t len[] = { 100, 200, 400, 800, 1600 };
	struct feed f;
	const struct qpt_qos_stats *q;
	const struct qpt_conv_stats *c;
	const struct qpt_conv *st;
	GPtrArray *all;
	const int64_t t0 = 2000000000;

	setup(&f);
	feed_qos(&f, true, 0x0a, 0, 3, 26, 100, t0 - 1000000000);
	feed_qos(&f, false, 0x11, 0, 3, 26, 20, t0 - 999000000);
	for (unsigned i = 0; i < G_N_ELEMENTS(at); i++) {
		if (at[i] == 100)
			feed_qos(&f, false, 0x81, 0, 6, 48, 60, t0 + 60000);
		feed_qos(&f, true, 0x0a, 1 + i, i == 0 ? 5 : 3, 26, len[i], t0 + at[i] * 1000);
	}
	qpt_flow_end(f.fl, NULL, NULL);
	q = qpt_dir_qos(dir0(&f));
	g_assert_nonnull(q);
	g_assert_cmpuint(q->rate_windows, ==, 1);
	g_assert_cmpuint(q->bytes_before, ==, 300);
	g_assert_cmpuint(q->bytes_after, ==, 1200);
	qpt_flow_free(f.fl);

	setup(&f);
	feed(&f, true, 0x0a, 7, 0);
	all = qpt_flow_conversations(f.fl);
	g_assert_cmpuint(all->len, ==, 1);
	c = g_ptr_array_index(all, 0);
	g_assert_cmpuint(c->dir[0].packets, ==, 1);
	g_assert_cmpuint(c->dir[1].packets, ==, 0);
	g_assert_cmpuint(c->dir[1].from, ==, 1);
	g_assert_cmpuint(c->dir[1].to, ==, 0);
	g_assert_false(c->dir[1].eventful);
	g_ptr_array_free(all, TRUE);
	/* the storage: the other direction is the shared sentinel until
	 * written */
	st = fl_conv_live(f.fl, 0);
	g_assert_true(st->dir[1] == &qpt_dir_none[1]);
	g_assert_true(st->dir[1]->r == &qpt_dir_rare_none);
	feed(&f, false, 0x11, 7, 1000);
	g_assert_true(st->dir[1] != &qpt_dir_none[1]);
	g_assert_cmpuint(st->dir[1]->packets, ==, 1);
	g_assert_cmpuint(qpt_dir_none[1].packets, ==, 0); /* not written */
	qpt_flow_free(f.fl);
}

/* The end of the input (qpt_flow_end): every event it decides, however
 * many, in frame order, in verdicts of up to QPT_MAX_EVENTS.  12 QPs
 * (A 0x100+i -> B 0x200+i) each end with a gap filler nothing follows
 * (out of order), and a 13th QP's 10 ECN-CE marks get no CNP and no
 * packet after them: the end decides them too (ecn_no_cnp). */
struct end_seen {
	unsigned calls, n;
	uint64_t last_frame;
	unsigned kinds[QPT_VB_COUNT];
	bool sorted, of_no_frame;
};

static void end_count(void *data, const struct qpt_verdict *v)
{
	struct end_seen *e = data;

	e->calls++;
	e->of_no_frame &= v->frame == UINT64_MAX && v->conv == -1 && v->nevents > 0 &&
			  v->nevents <= QPT_MAX_EVENTS;
	for (unsigned i = 0; i < v->nevents; i++) {
		e->sorted &= v->ev[i].frame >= e->last_frame;
		e->last_frame = v->ev[i].frame;
		e->kinds[v->ev[i].kind]++;
		e->n++;
	}
}

static struct qpt_pkt mk_qp(bool from_a, uint8_t opcode, uint32_t psn, uint32_t i)
{
	struct qpt_pkt p = mk(from_a, opcode, psn);

	p.bth.dqpn = from_a ? 0x200 + i : 0x100 + i;
	return p;
}

static void test_end_every_event(void)
{
	struct qpt_flow *fl = qpt_flow_new(NULL);
	struct end_seen e = { .sorted = true, .of_no_frame = true };
	struct qpt_verdict v;
	struct qpt_pkt p;
	uint64_t frame = 0;
	int64_t ns = 1000000000;
	const uint32_t step[4] = { 0, 0, 2, 1 }; /* WRITE P, ACK P, P+2, P+1 */

	for (unsigned k = 0; k < 4; k++)
		for (uint32_t i = 0; i < 12; i++) {
			uint32_t P = 0x1000 * (i + 1);

			p = k == 1 ? mk_qp(false, 0x11, P, i) : mk_qp(true, 0x0a, P + step[k], i);
			qpt_flow_packet(fl, ++frame, ns += 1000, &p, &v);
		}
	g_assert_cmpuint(v.nevents, ==, 0); /* the last filler: undecided */
	for (uint32_t j = 0; j < 10; j++) { /* marked, never answered */
		p = mk_qp(true, 0x0a, 0x50000 + j, 12);
		p.ip_ecn = 3;
		qpt_flow_packet(fl, ++frame, ns += 1000, &p, &v);
	}
	/* a packet of another QP 200 us later: the marks' window ends */
	p = mk_qp(true, 0x0a, 0x60000, 13);
	qpt_flow_packet(fl, ++frame, ns += 200000, &p, &v);
	qpt_flow_end(fl, end_count, &e);
	g_assert_cmpuint(e.kinds[QPT_VB_OUT_OF_ORDER], ==, 12);
	g_assert_cmpuint(e.kinds[QPT_VB_ECN_NO_CNP], ==, 10);
	g_assert_cmpuint(e.n, ==, 22);
	g_assert_cmpuint(e.calls, ==, 3); /* 8 + 8 + 6 */
	g_assert_true(e.sorted);
	g_assert_true(e.of_no_frame);
	qpt_flow_end(fl, end_count, &e); /* once */
	g_assert_cmpuint(e.n, ==, 22);
	qpt_flow_free(fl);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/flow/cm_many_requests", test_cm_many_requests);
	g_test_add_func("/flow/read_retry_episode_end", test_read_retry_episode_end);
	g_test_add_func("/flow/wrap_in_order", test_wrap_in_order);
	g_test_add_func("/flow/gap_across_wrap", test_gap_across_wrap);
	g_test_add_func("/flow/ack_across_wrap", test_ack_across_wrap);
	g_test_add_func("/flow/window_limit", test_window_limit);
	g_test_add_func("/flow/duplicate", test_duplicate);
	g_test_add_func("/flow/copy_interleaved", test_copy_interleaved);
	g_test_add_func("/flow/bounded_halves", test_bounded_halves);
	g_test_add_func("/flow/bounded_halves_not_reached", test_bounded_halves_not_reached);
	g_test_add_func("/flow/unbounded_halves", test_unbounded_halves);
	g_test_add_func("/flow/cm_failed", test_cm_failed);
	g_test_add_func("/flow/qos_counts", test_qos_counts);
	g_test_add_func("/flow/qos_rate_window", test_qos_rate_window);
	g_test_add_func("/flow/qos_rate_qos_first", test_qos_rate_qos_first);
	g_test_add_func("/flow/pair_many_same_hosts", test_pair_many_same_hosts);
	g_test_add_func("/flow/pair_few_same_hosts", test_pair_few_same_hosts);
	g_test_add_func("/flow/end_every_event", test_end_every_event);
	return g_test_run();
}
