/* test_icrc.c - ICRC/VCRC against known answers from REAL captures
 *
 * The frames in icrc_vectors.h are copied from captures/public/ by
 * tests/gen_icrc_vectors.py, with the ICRC/VCRC values TShark shows.
 */
#include <glib.h>
#include <string.h>

#include "qpt_crc.h"
#include "qpt_decode.h"
#include "icrc_vectors.h"

static void decode_vec(const struct icrc_vector *v, const uint8_t *data,
		       struct qpt_pkt *pkt)
{
	qpt_decode(pkt, v->linktype, data, v->len, v->wirelen, NULL);
}

static void test_known_answer(gconstpointer p)
{
	const struct icrc_vector *v = p;
	struct qpt_pkt pkt;

	decode_vec(v, v->data, &pkt);
	g_assert_cmpint(pkt.error, ==, QPT_E_OK);
	g_assert_true(pkt.flags & QPT_HAS_ICRC);
	g_assert_true(pkt.icrc_checked);
	g_assert_cmphex(pkt.icrc, ==, v->icrc);
	g_assert_cmphex(pkt.icrc_computed, ==, v->icrc);
	g_assert_true(pkt.icrc_ok);
	if (v->has_vcrc) {
		g_assert_cmpint(pkt.transport, ==, QPT_TR_IB);
		g_assert_true(pkt.flags & QPT_HAS_VCRC);
		g_assert_cmphex(pkt.vcrc, ==, v->vcrc);
		g_assert_cmphex(pkt.vcrc_computed, ==, v->vcrc);
		g_assert_true(pkt.vcrc_ok);
	} else {
		g_assert_cmpint(pkt.transport, ==, QPT_TR_ROCEV2);
		g_assert_false(pkt.flags & QPT_HAS_VCRC);
	}
}

/* One bit flipped in the payload (or in the last extended header when
 * there is no payload) must break the ICRC and, natively, the VCRC. */
static void test_bit_flip(gconstpointer p)
{
	const struct icrc_vector *v = p;
	struct qpt_pkt pkt;
	uint8_t *buf = g_memdup2(v->data, v->len);
	uint32_t at;

	decode_vec(v, buf, &pkt);
	at = pkt.payload_len ? pkt.off_payload + pkt.payload_len / 2 : pkt.off_payload - 1;
	g_assert_cmpuint(at, >, pkt.off_bth + 11);
	buf[at] ^= 0x10;
	decode_vec(v, buf, &pkt);
	g_assert_true(pkt.icrc_checked);
	g_assert_cmphex(pkt.icrc, ==, v->icrc);
	g_assert_cmphex(pkt.icrc_computed, !=, v->icrc);
	g_assert_false(pkt.icrc_ok);
	if (v->has_vcrc)
		g_assert_false(pkt.vcrc_ok);
	/* Flip it back: good again. */
	buf[at] ^= 0x10;
	decode_vec(v, buf, &pkt);
	g_assert_true(pkt.icrc_ok);
	g_free(buf);
}

/* A flipped bit in the BTH PSN (invariant) breaks the ICRC too. */
static void test_bth_flip(gconstpointer p)
{
	const struct icrc_vector *v = p;
	struct qpt_pkt pkt;
	uint8_t *buf = g_memdup2(v->data, v->len);

	decode_vec(v, buf, &pkt);
	buf[pkt.off_bth + 11] ^= 0x01;
	decode_vec(v, buf, &pkt);
	g_assert_false(pkt.icrc_ok);
	g_free(buf);
}

/* Variant fields are masked out of the ICRC: changing them keeps it good.
 * RoCEv2: IPv4 TOS (DSCP/ECN), TTL, header checksum, UDP checksum, BTH
 * FECN/BECN.  Native: LRH VL; with a GRH the whole LRH, the traffic class,
 * flow label and hop limit.  The VCRC covers everything, so it breaks. */
static void test_variant_masked(gconstpointer p)
{
	const struct icrc_vector *v = p;
	struct qpt_pkt pkt;
	uint8_t *buf = g_memdup2(v->data, v->len);

	decode_vec(v, buf, &pkt);
	buf[pkt.off_bth + 4] ^= 0xc0; /* FECN, BECN */
	if (pkt.transport == QPT_TR_ROCEV2) {
		uint32_t l3 = pkt.off_l3, udp = l3 + 20;

		buf[l3 + 1] ^= 0x03;  /* ECN -> CE-ish */
		buf[l3 + 1] ^= 0x68;  /* DSCP */
		buf[l3 + 8] -= 7;     /* TTL */
		buf[l3 + 10] ^= 0x55; /* IP checksum */
		buf[udp + 6] ^= 0xaa; /* UDP checksum */
	} else {
		uint32_t lrh = pkt.off_iba;

		buf[lrh] ^= 0x30; /* VL */
		if (pkt.flags & QPT_HAS_GRH) {
			uint32_t grh = lrh + 8;

			buf[lrh + 3] ^= 0x01; /* DLID */
			buf[lrh + 7] ^= 0x01; /* SLID */
			buf[lrh + 1] ^= 0x50; /* SL */
			buf[grh] ^= 0x0f;     /* traffic class high nibble */
			buf[grh + 1] ^= 0xff; /* traffic class low, flow label */
			buf[grh + 3] ^= 0x42; /* flow label */
			buf[grh + 7] ^= 0x3c; /* hop limit */
		}
	}
	decode_vec(v, buf, &pkt);
	g_assert_cmpint(pkt.error, ==, QPT_E_OK);
	g_assert_true(pkt.icrc_ok);
	if (v->has_vcrc)
		g_assert_false(pkt.vcrc_ok);
	g_free(buf);
}

/* Native IB without a GRH: the LIDs are NOT masked (only VL is). */
static void test_lid_not_masked(gconstpointer p)
{
	const struct icrc_vector *v = p;
	struct qpt_pkt pkt;
	uint8_t *buf = g_memdup2(v->data, v->len);

	decode_vec(v, buf, &pkt);
	g_assert_false(pkt.flags & QPT_HAS_GRH);
	buf[pkt.off_iba + 3] ^= 0x01; /* DLID */
	decode_vec(v, buf, &pkt);
	g_assert_false(pkt.icrc_ok);
	g_free(buf);
}

static void test_no_crc_opt(void)
{
	const struct icrc_vector *v = &icrc_vectors[0];
	struct qpt_decode_opts o = { .no_crc = true };
	struct qpt_pkt pkt;

	qpt_decode(&pkt, v->linktype, v->data, v->len, v->wirelen, &o);
	g_assert_cmpint(pkt.error, ==, QPT_E_OK);
	g_assert_cmphex(pkt.icrc, ==, v->icrc); /* still read */
	g_assert_false(pkt.icrc_checked);
	g_assert_false(pkt.icrc_ok);
}

/* The CRC functions alone, on the RoCEv2 vector: l3 = IPv4 at 14. */
static void test_icrc_rocev2_direct(void)
{
	const struct icrc_vector *v = &icrc_vectors[1]; /* rping #4, 74 bytes */
	/* 14 Ethernet + 20 IPv4 + 8 UDP, BTH at 42, ICRC in the last 4. */
	uint32_t c = qpt_icrc_rocev2(v->data + 14, 20, 4, v->data + 42, v->len - 42 - 4);

	g_assert_cmphex(c, ==, v->icrc);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_set_nonfatal_assertions();
	for (size_t i = 0; i < G_N_ELEMENTS(icrc_vectors); i++) {
		const struct icrc_vector *v = &icrc_vectors[i];
		char *path;

		path = g_strdup_printf("/icrc/known-answer/%s", v->name);
		g_test_add_data_func(path, v, test_known_answer);
		g_free(path);
		path = g_strdup_printf("/icrc/payload-bit-flip/%s", v->name);
		g_test_add_data_func(path, v, test_bit_flip);
		g_free(path);
		path = g_strdup_printf("/icrc/bth-psn-flip/%s", v->name);
		g_test_add_data_func(path, v, test_bth_flip);
		g_free(path);
		path = g_strdup_printf("/icrc/variant-fields-masked/%s", v->name);
		g_test_add_data_func(path, v, test_variant_masked);
		g_free(path);
		if (v->has_vcrc && v->len > 16 + 8 &&
		    (v->data[16 + 1] & 3) == 2) { /* ERF hdr 16, LRH LNH=BTH */
			path = g_strdup_printf("/icrc/lid-not-masked/%s", v->name);
			g_test_add_data_func(path, v, test_lid_not_masked);
			g_free(path);
		}
	}
	g_test_add_func("/icrc/no-crc-option", test_no_crc_opt);
	g_test_add_func("/icrc/rocev2-direct", test_icrc_rocev2_direct);
	return g_test_run();
}
