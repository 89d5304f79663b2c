/* test_pfc.c - MAC control decoding (802.3x PAUSE, 802.1Qbb PFC) and the
 * PFC engine's counting and stall correlation (qpt_pfc.h).
 *
 * Frames are written byte by byte from the layouts of IEEE 802.3 annex 31B
 * (PAUSE: opcode 0x0001, one pause_time) and 802.1Qbb / 802.3 annex 31D
 * (PFC: opcode 0x0101, a 16-bit class-enable vector whose low byte enables
 * priorities 0-7, then eight 16-bit times, priority 0 first), as Wireshark's
 * packet-maccontrol.c reads them. */
#include <glib.h>
#include <string.h>

#include "qpt_decode.h"
#include "qpt_pfc.h"

static const uint8_t DST[6] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x01 };
static const uint8_t SRC[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0xfe };

/* An Ethernet MAC control frame: tags (TPID, TCI pairs), opcode, params. */
static uint32_t frame(uint8_t *f, const uint16_t *tags, unsigned ntags, uint16_t opcode,
		      const uint16_t *params, unsigned nparams)
{
	uint32_t n = 0;

	memset(f, 0, 64);
	memcpy(f, DST, 6);
	memcpy(f + 6, SRC, 6);
	n = 12;
	for (unsigned i = 0; i < 2 * ntags; i++) {
		f[n++] = (uint8_t)(tags[i] >> 8);
		f[n++] = (uint8_t)tags[i];
	}
	f[n++] = 0x88;
	f[n++] = 0x08;
	f[n++] = (uint8_t)(opcode >> 8);
	f[n++] = (uint8_t)opcode;
	for (unsigned i = 0; i < nparams; i++) {
		f[n++] = (uint8_t)(params[i] >> 8);
		f[n++] = (uint8_t)params[i];
	}
	return n < 60 ? 60 : n; /* padded to the minimum frame (no FCS) */
}

static void test_pfc(void)
{
	uint8_t f[64];
	const uint16_t p[9] = { 0x0088, 0, 0, 0, 0x1234, 0, 0, 0, 0 };
	uint32_t len = frame(f, NULL, 0, 0x0101, p, 9);
	struct qpt_pkt pkt;

	g_assert_cmpint(qpt_decode(&pkt, QPT_LINKTYPE_ETHERNET, f, len, len, NULL), ==,
			QPT_E_NOT_IBA);
	g_assert_true(pkt.flags & QPT_HAS_MACC);
	g_assert_cmpint(pkt.transport, ==, QPT_TR_NONE);
	g_assert_cmpuint(pkt.macc.opcode, ==, QPT_MACC_PFC);
	g_assert_cmpuint(pkt.macc.cev, ==, 0x0088);
	g_assert_cmpuint(pkt.macc.quanta[3], ==, 0x1234);
	g_assert_cmpuint(pkt.macc.quanta[7], ==, 0);
	g_assert_cmpint(pkt.macc.error, ==, QPT_E_OK);
	g_assert_cmpuint(pkt.ethertype, ==, 0x8808);
}

static void test_pfc_qinq(void)
{
	uint8_t f[64];
	const uint16_t tags[4] = { 0x88a8, 0xa000 | 200, 0x8100, 0x6000 | 300 };
	const uint16_t p[9] = { 0x0001, 7, 0, 0, 0, 0, 0, 0, 0 };
	uint32_t len = frame(f, tags, 2, 0x0101, p, 9);
	struct qpt_pkt pkt;

	qpt_decode(&pkt, QPT_LINKTYPE_ETHERNET, f, len, len, NULL);
	g_assert_true(pkt.flags & QPT_HAS_MACC);
	g_assert_cmpuint(pkt.vlan_count, ==, 2);
	g_assert_cmpint(pkt.vlan_pcp, ==, 5);
	g_assert_cmpuint(pkt.macc.cev, ==, 1);
	g_assert_cmpuint(pkt.macc.quanta[0], ==, 7);
}

static void test_pause(void)
{
	uint8_t f[64];
	const uint16_t p[1] = { 0xffff };
	uint32_t len = frame(f, NULL, 0, 0x0001, p, 1);
	struct qpt_pkt pkt;

	qpt_decode(&pkt, QPT_LINKTYPE_ETHERNET, f, len, len, NULL);
	g_assert_true(pkt.flags & QPT_HAS_MACC);
	g_assert_cmpuint(pkt.macc.opcode, ==, QPT_MACC_PAUSE);
	g_assert_cmpuint(pkt.macc.quanta[0], ==, 0xffff);
	g_assert_cmpint(pkt.macc.error, ==, QPT_E_OK);
}

/* Cut by the capture: truncated; a frame that ends early: BAD_MACC;
 * every captured length decodes without reading past it. */
static void test_short(void)
{
	uint8_t f[64];
	const uint16_t p[9] = { 0x0008, 0, 0, 0, 0xffff, 0, 0, 0, 0 };
	uint32_t len = frame(f, NULL, 0, 0x0101, p, 9);
	struct qpt_pkt pkt;

	qpt_decode(&pkt, QPT_LINKTYPE_ETHERNET, f, 20, len, NULL);
	g_assert_true(pkt.flags & QPT_HAS_MACC);
	g_assert_cmpint(pkt.macc.error, ==, QPT_E_TRUNCATED);
	qpt_decode(&pkt, QPT_LINKTYPE_ETHERNET, f, 16, 16, NULL);
	g_assert_cmpint(pkt.macc.error, ==, QPT_E_BAD_MACC);
	qpt_decode(&pkt, QPT_LINKTYPE_ETHERNET, f, 33, 33, NULL); /* 14 + 2 + 17 */
	g_assert_cmpint(pkt.macc.error, ==, QPT_E_BAD_MACC);
	qpt_decode(&pkt, QPT_LINKTYPE_ETHERNET, f, 34, 34, NULL); /* exactly the parameters */
	g_assert_cmpint(pkt.macc.error, ==, QPT_E_OK);
	for (uint32_t cap = 0; cap <= len; cap++) {
		uint8_t *copy = g_memdup2(f, cap ? cap : 1); /* ASan: no read past cap */

		qpt_decode(&pkt, QPT_LINKTYPE_ETHERNET, copy, cap, len, NULL);
		g_assert_cmpint(pkt.transport, ==, QPT_TR_NONE);
		if (cap < 14)
			g_assert_false(pkt.flags & QPT_HAS_MACC);
		else
			g_assert_cmpint(pkt.macc.error, ==, cap >= 34 ? QPT_E_OK : QPT_E_TRUNCATED);
		g_free(copy);
	}
}

/* Another opcode (EPON GATE 0x0002): named, nothing else. */
static void test_other_opcode(void)
{
	uint8_t f[64];
	const uint16_t p[2] = { 0x1111, 0x2222 };
	uint32_t len = frame(f, NULL, 0, 0x0002, p, 2);
	struct qpt_pkt pkt;
	struct qpt_pfc *pf = qpt_pfc_new();

	qpt_decode(&pkt, QPT_LINKTYPE_ETHERNET, f, len, len, NULL);
	g_assert_cmpuint(pkt.macc.opcode, ==, 2);
	g_assert_cmpint(pkt.macc.error, ==, QPT_E_OK);
	qpt_pfc_frame(pf, 1, 0, &pkt);
	g_assert_false(qpt_pfc_any(pf));
	qpt_pfc_free(pf);
}

static void pfc_at(struct qpt_pfc *pf, uint64_t frame_no, int64_t ns, uint16_t cev,
		   unsigned prio, uint16_t q)
{
	uint8_t f[64];
	uint16_t p[9] = { cev, 0, 0, 0, 0, 0, 0, 0, 0 };
	struct qpt_pkt pkt;
	uint32_t len;

	p[1 + prio] = q;
	len = frame(f, NULL, 0, 0x0101, p, 9);
	qpt_decode(&pkt, QPT_LINKTYPE_ETHERNET, f, len, len, NULL);
	qpt_pfc_frame(pf, frame_no, ns, &pkt);
}

/* Counting: XOFF/XON per enabled priority, quanta, pause time at the link
 * speed (100 Gbit/s: a quantum is 5.12 ns). */
static void test_counts(void)
{
	struct qpt_pfc *pf = qpt_pfc_new();
	const struct qpt_pfc_prio *p3;

	qpt_pfc_set_link_speed(pf, 100e9);
	pfc_at(pf, 1, 1000, 0x0008, 3, 1000);
	pfc_at(pf, 2, 2000, 0x0008, 3, 0);
	pfc_at(pf, 3, 3000, 0x0100, 0, 0); /* reserved bit only: no priority */
	p3 = qpt_pfc_prio(pf, 3);
	g_assert_cmpuint(p3->pause_frames, ==, 2);
	g_assert_cmpuint(p3->xoff_frames, ==, 1);
	g_assert_cmpuint(p3->xon_frames, ==, 1);
	g_assert_cmpuint(p3->quanta_total, ==, 1000);
	g_assert_cmpfloat_with_epsilon(qpt_pfc_quanta_us(pf, p3->quanta_total), 5.12, 1e-9);
	for (unsigned p = 0; p < 8; p++)
		if (p != 3)
			g_assert_cmpuint(qpt_pfc_prio(pf, p)->pause_frames, ==, 0);
	qpt_pfc_free(pf);
}

/* Stall correlation with the speed known: 65535 quanta at 100 Gbit/s is
 * 335.5 us.  Conversation 1 (priority 3) sends 1 us before the XOFF and
 * again 400 us after it: stalled.  Conversation 2 (priority 3) sends 100 us
 * into the pause: not stalled.  Conversation 3 is on priority 1. */
static void test_stall_speed(void)
{
	struct qpt_pfc *pf = qpt_pfc_new();
	const struct qpt_pfc_prio *p3;

	qpt_pfc_set_link_speed(pf, 100e9);
	qpt_pfc_data(pf, 9000, 3, 1, 0);
	qpt_pfc_data(pf, 9500, 3, 2, 0);
	qpt_pfc_data(pf, 9600, 1, 3, 0);
	pfc_at(pf, 10, 10000, 0x0008, 3, 0xffff);
	qpt_pfc_data(pf, 110000, 3, 2, 0);
	qpt_pfc_data(pf, 200000, 1, 3, 0);
	qpt_pfc_data(pf, 410000, 3, 1, 0);
	qpt_pfc_finish(pf, 410000);
	p3 = qpt_pfc_prio(pf, 3);
	g_assert_cmpuint(p3->windows, ==, 1);
	g_assert_cmpuint(p3->stalled->len, ==, 1);
	g_assert_cmpint(g_array_index(p3->stalled, int32_t, 0), ==, 1);
	g_assert_cmpuint(p3->first_stall_frame, ==, 10);
	g_assert_cmpuint(qpt_pfc_prio(pf, 1)->stalled->len, ==, 0);
	g_assert_cmpuint(p3->data_packets, ==, 4);
	qpt_pfc_free(pf);
}

/* Without the speed a pause lasts until its XON; the gap must still be at
 * least QPT_PFC_STALL_GAP_NS.  A conversation idle for more than
 * QPT_PFC_ACTIVE_NS before the XOFF was not sending: not a candidate.  An
 * XON 2 us after the XOFF and a packet 5 us after it: within the 10 us
 * minimum, not stalled. */
static void test_stall_xon(void)
{
	struct qpt_pfc *pf = qpt_pfc_new();
	const struct qpt_pfc_prio *p0;

	qpt_pfc_data(pf, 0, -1, 7, 0);	      /* untagged: priority 0; idle 2 ms before */
	qpt_pfc_data(pf, 1990000, -1, 8, 1); /* sending just before */
	qpt_pfc_data(pf, 1995000, -1, 9, 0);
	pfc_at(pf, 20, 2000000, 0x0001, 0, 100);
	pfc_at(pf, 21, 2002000, 0x0001, 0, 0); /* XON 2 us later */
	qpt_pfc_data(pf, 2005000, -1, 9, 0);   /* 5 us after the XOFF: no stall */
	qpt_pfc_data(pf, 2500000, -1, 8, 1);   /* 500 us: stalled */
	qpt_pfc_data(pf, 2600000, -1, 7, 0);
	qpt_pfc_finish(pf, 2600000);
	p0 = qpt_pfc_prio(pf, 0);
	g_assert_cmpuint(p0->stalled->len, ==, 1);
	g_assert_cmpint(g_array_index(p0->stalled, int32_t, 0), ==, 8);
	g_assert_cmpuint(p0->stalls, ==, 1);
	qpt_pfc_free(pf);
}

/* No XON and no speed: the pause lasts to the end of the capture; a
 * conversation silent until then is stalled, one that spoke is not. */
static void test_stall_no_end(void)
{
	struct qpt_pfc *pf = qpt_pfc_new();

	qpt_pfc_data(pf, 1000, 2, 1, 0);
	qpt_pfc_data(pf, 1000, 2, 2, 0);
	pfc_at(pf, 5, 2000, 0x0004, 2, 0xffff);
	qpt_pfc_data(pf, 50000, 2, 2, 0); /* during the open pause */
	qpt_pfc_finish(pf, 90000);
	g_assert_cmpuint(qpt_pfc_prio(pf, 2)->stalled->len, ==, 1);
	g_assert_cmpint(g_array_index(qpt_pfc_prio(pf, 2)->stalled, int32_t, 0), ==, 1);
	qpt_pfc_free(pf);
}

/* Many directions gone quiet, then pauses, one of them stamped earlier than
 * the frames before it.  All on priority 3 unless said.
 *   conversations 0-999, direction 0: one packet each at 1000 * c ns
 *   conversations 1000-1009, direction 0: one packet each at 10 ms + 1000 * i
 *   frame 100, XOFF at 10.5 ms: sending in the 1 ms before are 1000-1009
 *     only (active 10; 0-999 went quiet more than 9 ms before)
 *   1000-1004 send again at 10.6 ms + i (in the window: not stalled)
 *   frame 101, XON at 10.7 ms: active are 1000-1009 again (10)
 *   1000 sends at 10.8 ms: the window (10.5 to 10.7 ms, over 10 us) is
 *     over, 1005-1009 are stalled
 *   conversation 2000, direction 1: a packet at 400 us (time went back)
 *   frame 200, XOFF at 500.5 us (back again): sending from -499.5 to 500.5
 *     us are 0-500 (1000 * c <= 500500) and 2000: active 502, the window's
 *     candidates; 1000-1009 sent after it, not before
 *   0-99 send at 520 us (in the window); 500 sends on priority 4 at 510 us
 *     (moved: no longer waiting on 3)
 *   no XON, no speed: that window lasts to the end, 600 us
 * Stalled on 3: 1005-1009 (first window), then 100-499 and 2000 (second),
 * in the order of their conversation ids within a window: 5 + 400 + 1. */
static void test_quiet_then_pause(void)
{
	struct qpt_pfc *pf = qpt_pfc_new();
	const struct qpt_pfc_prio *p3;
	GArray *st;

	for (int32_t c = 0; c < 1000; c++)
		qpt_pfc_data(pf, 1000 * (int64_t)c, 3, c, 0);
	for (int32_t i = 0; i < 10; i++)
		qpt_pfc_data(pf, 10000000 + 1000 * (int64_t)i, 3, 1000 + i, 0);
	pfc_at(pf, 100, 10500000, 0x0008, 3, 0xffff);
	g_assert_cmpuint(qpt_pfc_last(pf)->active[3], ==, 10);
	for (int32_t i = 0; i < 5; i++)
		qpt_pfc_data(pf, 10600000 + i, 3, 1000 + i, 0);
	pfc_at(pf, 101, 10700000, 0x0008, 3, 0);
	g_assert_cmpuint(qpt_pfc_last(pf)->active[3], ==, 10);
	qpt_pfc_data(pf, 10800000, 3, 1000, 0);
	qpt_pfc_data(pf, 400000, 3, 2000, 1);
	p3 = qpt_pfc_prio(pf, 3);
	g_assert_cmpuint(p3->stalls, ==, 5);
	pfc_at(pf, 200, 500500, 0x0008, 3, 0xffff);
	g_assert_cmpuint(qpt_pfc_last(pf)->active[3], ==, 502);
	g_assert_cmpuint(qpt_pfc_last(pf)->active[4], ==, 0);
	qpt_pfc_data(pf, 510000, 4, 500, 0);
	for (int32_t c = 0; c < 100; c++)
		qpt_pfc_data(pf, 520000, 3, c, 0);
	qpt_pfc_finish(pf, 600000);
	g_assert_cmpuint(p3->windows, ==, 2);
	g_assert_cmpuint(p3->stalls, ==, 406);
	g_assert_cmpuint(p3->first_stall_frame, ==, 100);
	g_assert_cmpuint(p3->data_packets, ==, 1000 + 10 + 5 + 1 + 1 + 100);
	g_assert_cmpuint(qpt_pfc_prio(pf, 4)->data_packets, ==, 1);
	g_assert_cmpuint(qpt_pfc_prio(pf, 4)->stalls, ==, 0);
	st = p3->stalled;
	g_assert_cmpuint(st->len, ==, 406);
	for (guint k = 0; k < st->len && k < 406; k++) {
		int32_t want = k < 5 ? 1005 + (int32_t)k : k < 405 ? 100 + (int32_t)(k - 5) : 2000;

		g_assert_cmpint(g_array_index(st, int32_t, k), ==, want);
	}
	qpt_pfc_free(pf);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_set_nonfatal_assertions();
	g_test_add_func("/pfc/decode/pfc", test_pfc);
	g_test_add_func("/pfc/decode/qinq", test_pfc_qinq);
	g_test_add_func("/pfc/decode/pause", test_pause);
	g_test_add_func("/pfc/decode/short", test_short);
	g_test_add_func("/pfc/decode/other-opcode", test_other_opcode);
	g_test_add_func("/pfc/engine/counts", test_counts);
	g_test_add_func("/pfc/engine/stall-speed", test_stall_speed);
	g_test_add_func("/pfc/engine/stall-xon", test_stall_xon);
	g_test_add_func("/pfc/engine/stall-no-end", test_stall_no_end);
	g_test_add_func("/pfc/engine/quiet-then-pause", test_quiet_then_pause);
	return g_test_run();
}
