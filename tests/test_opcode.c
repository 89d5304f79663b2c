/* test_opcode.c - the BTH opcode table against IBA vol 1 table 38 */
#include <glib.h>
#include <stdbool.h>
#include <string.h>

/* Mark the test failed with a message and stop it; the other tests run. */
#define FAILF(...)                                                             \
	do {                                                                   \
		g_test_fail_printf(__VA_ARGS__);                                \
		return;                                                        \
	} while (0)

#include "qpt_opcode.h"

/* The valid opcodes, written out independently of qpt_opcode.c. */
static bool expect_valid(unsigned op)
{
	unsigned low = op & 0x1f;

	switch (op & 0xe0) {
	case 0x00: /* RC */
	case 0xa0: /* XRC */
		return low <= 0x14 || low == 0x16 || low == 0x17 || low == 0x1c ||
		       low == 0x1d;
	case 0x20: /* UC */
		return low <= 0x0b;
	case 0x40: /* RD */
		return low <= 0x15;
	case 0x60: /* UD */
		return low == 0x04 || low == 0x05;
	case 0x80: /* CNP */
		return low == 0x01;
	default: /* manufacturer specific 0xc0-0xff: not in the table */
		return false;
	}
}

static void test_valid_set(void)
{
	unsigned n = 0;

	for (unsigned op = 0; op < 256; op++) {
		bool v = qpt_opcodes[op].flags & QPT_O_VALID;

		if (v != expect_valid(op))
			FAILF("opcode 0x%02x: valid=%d, expected %d", op, v, expect_valid(op));
		n += v;
	}
	/* RC 25 + UC 12 + RD 22 + UD 2 + CNP 1 + XRC 25 */
	g_assert_cmpuint(n, ==, 87);
}

static void test_reserved_invalid(void)
{
	static const uint8_t reserved[] = { 0x15, 0x18, 0x19, 0x1a, 0x1b, 0x1e,
					    0x1f, 0x2c, 0x3f, 0x56, 0x5f, 0x60,
					    0x63, 0x66, 0x7f, 0x80, 0x82, 0x9f,
					    0xb5, 0xb8, 0xbb, 0xbe, 0xbf, 0xc0,
					    0xff };

	for (size_t i = 0; i < sizeof(reserved); i++) {
		const struct qpt_opcode_info *oi = &qpt_opcodes[reserved[i]];

		g_assert_cmphex(oi->flags, ==, 0);
		g_assert_null(oi->name);
	}
}

static void test_ext_len_is_sum(void)
{
	for (unsigned op = 0; op < 256; op++) {
		const struct qpt_opcode_info *oi = &qpt_opcodes[op];
		unsigned sum = 0;

		if (!(oi->flags & QPT_O_VALID))
			continue;
		for (unsigned i = 0; i < QPT_H_COUNT; i++)
			if (oi->hdrs & (1u << i))
				sum += qpt_hdr_len(1u << i);
		if (sum != oi->ext_len)
			FAILF("opcode 0x%02x %s: ext_len %u, headers sum %u", op,
				oi->name, oi->ext_len, sum);
	}
}

static void test_hdr_lengths(void)
{
	g_assert_cmpuint(qpt_hdr_len(QPT_H_RDETH), ==, 4);
	g_assert_cmpuint(qpt_hdr_len(QPT_H_DETH), ==, 8);
	g_assert_cmpuint(qpt_hdr_len(QPT_H_XRCETH), ==, 4);
	g_assert_cmpuint(qpt_hdr_len(QPT_H_FETH), ==, 4);
	g_assert_cmpuint(qpt_hdr_len(QPT_H_RETH), ==, 16);
	g_assert_cmpuint(qpt_hdr_len(QPT_H_ATOMICETH), ==, 28);
	g_assert_cmpuint(qpt_hdr_len(QPT_H_AETH), ==, 4);
	g_assert_cmpuint(qpt_hdr_len(QPT_H_ATOMICACKETH), ==, 8);
	g_assert_cmpuint(qpt_hdr_len(QPT_H_IMMDT), ==, 4);
	g_assert_cmpuint(qpt_hdr_len(QPT_H_IETH), ==, 4);
	g_assert_cmpstr(qpt_hdr_name(QPT_H_ATOMICACKETH), ==, "AtomicAckETH");
	g_assert_cmpstr(qpt_hdr_name(QPT_H_RETH), ==, "RETH");
}

/* Extended headers per opcode, IBA table 38 (+ IBA 1.5 FLUSH/ATOMIC WRITE). */
static void test_headers_exact(void)
{
	static const struct {
		uint8_t op;
		uint16_t hdrs;
		uint8_t ext_len;
	} t[] = {
		{ 0x00, 0, 0 },
		{ 0x03, QPT_H_IMMDT, 4 },
		{ 0x06, QPT_H_RETH, 16 },
		{ 0x07, 0, 0 },
		{ 0x0b, QPT_H_RETH | QPT_H_IMMDT, 20 },
		{ 0x0c, QPT_H_RETH, 16 },
		{ 0x0d, QPT_H_AETH, 4 },
		{ 0x0e, 0, 0 },
		{ 0x0f, QPT_H_AETH, 4 },
		{ 0x10, QPT_H_AETH, 4 },
		{ 0x11, QPT_H_AETH, 4 },
		{ 0x12, QPT_H_AETH | QPT_H_ATOMICACKETH, 12 },
		{ 0x13, QPT_H_ATOMICETH, 28 },
		{ 0x14, QPT_H_ATOMICETH, 28 },
		{ 0x16, QPT_H_IETH, 4 },
		{ 0x17, QPT_H_IETH, 4 },
		{ 0x1c, QPT_H_FETH | QPT_H_RETH, 20 },
		{ 0x1d, QPT_H_RETH, 16 },
		{ 0x24, 0, 0 },
		{ 0x2a, QPT_H_RETH, 16 },
		{ 0x2b, QPT_H_RETH | QPT_H_IMMDT, 20 },
		{ 0x40, QPT_H_RDETH | QPT_H_DETH, 12 },
		{ 0x45, QPT_H_RDETH | QPT_H_DETH | QPT_H_IMMDT, 16 },
		{ 0x4b, QPT_H_RDETH | QPT_H_DETH | QPT_H_RETH | QPT_H_IMMDT, 32 },
		{ 0x4c, QPT_H_RDETH | QPT_H_DETH | QPT_H_RETH, 28 },
		{ 0x4d, QPT_H_RDETH | QPT_H_AETH, 8 },
		{ 0x4e, QPT_H_RDETH, 4 },
		{ 0x51, QPT_H_RDETH | QPT_H_AETH, 8 },
		{ 0x52, QPT_H_RDETH | QPT_H_AETH | QPT_H_ATOMICACKETH, 16 },
		{ 0x53, QPT_H_RDETH | QPT_H_DETH | QPT_H_ATOMICETH, 40 },
		{ 0x55, QPT_H_RDETH | QPT_H_DETH, 12 },
		{ 0x64, QPT_H_DETH, 8 },
		{ 0x65, QPT_H_DETH | QPT_H_IMMDT, 12 },
		{ 0x81, 0, 0 },
		{ 0xa4, QPT_H_XRCETH, 4 },
		{ 0xab, QPT_H_XRCETH | QPT_H_RETH | QPT_H_IMMDT, 24 },
		{ 0xac, QPT_H_XRCETH | QPT_H_RETH, 20 },
		{ 0xad, QPT_H_AETH, 4 }, /* responses carry no XRCETH */
		{ 0xb1, QPT_H_AETH, 4 },
		{ 0xb2, QPT_H_AETH | QPT_H_ATOMICACKETH, 12 },
		{ 0xb4, QPT_H_XRCETH | QPT_H_ATOMICETH, 32 },
		{ 0xb7, QPT_H_XRCETH | QPT_H_IETH, 8 },
		{ 0xbc, QPT_H_XRCETH | QPT_H_FETH | QPT_H_RETH, 24 },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(t); i++) {
		const struct qpt_opcode_info *oi = &qpt_opcodes[t[i].op];

		if (oi->hdrs != t[i].hdrs || oi->ext_len != t[i].ext_len)
			FAILF("opcode 0x%02x: hdrs 0x%x ext_len %u, expected 0x%x %u",
				t[i].op, oi->hdrs, oi->ext_len, t[i].hdrs, t[i].ext_len);
	}
}

static void test_names(void)
{
	GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);

	for (unsigned op = 0; op < 256; op++) {
		const struct qpt_opcode_info *oi = &qpt_opcodes[op];

		if (!(oi->flags & QPT_O_VALID))
			continue;
		g_assert_nonnull(oi->name);
		g_assert_nonnull(oi->short_name);
		/* The name starts with the service. */
		if (op != 0x81)
			g_assert_true(g_str_has_prefix(oi->name, qpt_service_name((uint8_t)op)));
		if (g_hash_table_contains(seen, oi->name))
			FAILF("opcode 0x%02x: name '%s' used twice", op, oi->name);
		g_hash_table_add(seen, (gpointer)oi->name);
	}
	g_hash_table_destroy(seen);
	g_assert_cmpstr(qpt_opcodes[0x04].name, ==, "RC SEND Only");
	g_assert_cmpstr(qpt_opcodes[0x0a].name, ==, "RC RDMA WRITE Only");
	g_assert_cmpstr(qpt_opcodes[0x11].name, ==, "RC Acknowledge");
	g_assert_cmpstr(qpt_opcodes[0x11].short_name, ==, "ACK");
	g_assert_cmpstr(qpt_opcodes[0x12].name, ==, "RC ATOMIC Acknowledge");
	g_assert_cmpstr(qpt_opcodes[0x24].name, ==, "UC SEND Only");
	g_assert_cmpstr(qpt_opcodes[0x55].name, ==, "RD RESYNC");
	g_assert_cmpstr(qpt_opcodes[0x64].name, ==, "UD SEND Only");
	g_assert_cmpstr(qpt_opcodes[0xb7].name, ==, "XRC SEND Only with Invalidate");
	g_assert_cmpstr(qpt_opcodes[0x1c].short_name, ==, "FLUSH");
	g_assert_cmpstr(qpt_opcodes[0x1d].short_name, ==, "ATOMIC_WRITE");
}

static void test_services(void)
{
	g_assert_cmpstr(qpt_service_name(0x04), ==, "RC");
	g_assert_cmpstr(qpt_service_name(0x24), ==, "UC");
	g_assert_cmpstr(qpt_service_name(0x44), ==, "RD");
	g_assert_cmpstr(qpt_service_name(0x64), ==, "UD");
	g_assert_cmpstr(qpt_service_name(0x81), ==, "CNP");
	g_assert_cmpstr(qpt_service_name(0xa4), ==, "XRC");
	g_assert_cmpstr(qpt_service_name(0xc0), ==, "MANUF");
	g_assert_cmpstr(qpt_service_name(0xff), ==, "MANUF");
	/* Every UD opcode carries a DETH, every RD request RDETH+DETH, every
	 * RD response RDETH, every XRC request XRCETH. */
	for (unsigned op = 0; op < 256; op++) {
		const struct qpt_opcode_info *oi = &qpt_opcodes[op];

		if (!(oi->flags & QPT_O_VALID))
			continue;
		switch (op & 0xe0) {
		case 0x60:
			g_assert_true(oi->hdrs & QPT_H_DETH);
			break;
		case 0x40:
			g_assert_true(oi->hdrs & QPT_H_RDETH);
			g_assert_true(!!(oi->hdrs & QPT_H_DETH) == !!(oi->flags & QPT_O_REQ));
			break;
		case 0xa0:
			g_assert_true(!!(oi->hdrs & QPT_H_XRCETH) == !!(oi->flags & QPT_O_REQ));
			break;
		default:
			g_assert_false(oi->hdrs & (QPT_H_RDETH | QPT_H_DETH | QPT_H_XRCETH));
		}
		/* Exactly one of request / response, CNP neither. */
		if (op == 0x81)
			g_assert_false(oi->flags & (QPT_O_REQ | QPT_O_RESP));
		else
			g_assert_true(!!(oi->flags & QPT_O_REQ) != !!(oi->flags & QPT_O_RESP));
	}
}

static void test_semantics(void)
{
	g_assert_true(qpt_opcodes[0x11].flags & QPT_O_ACK);
	g_assert_true(qpt_opcodes[0x11].flags & QPT_O_RESP);
	g_assert_true(qpt_opcodes[0x0c].flags & QPT_O_REQ);
	g_assert_true(qpt_opcodes[0x0c].flags & QPT_O_READ);
	g_assert_false(qpt_opcodes[0x0c].flags & QPT_O_PAYLOAD);
	g_assert_cmpuint(qpt_opcodes[0x0c].op, ==, QPT_OP_READ);
	g_assert_cmpuint(qpt_opcodes[0x0e].op, ==, QPT_OP_READ);
	g_assert_cmpuint(qpt_opcodes[0x05].op, ==, QPT_OP_SEND_IMM);
	g_assert_cmpuint(qpt_opcodes[0x09].op, ==, QPT_OP_WRITE_IMM);
	g_assert_cmpuint(qpt_opcodes[0x13].op, ==, QPT_OP_CMP_SWAP);
	g_assert_cmpuint(qpt_opcodes[0x14].op, ==, QPT_OP_FETCH_ADD);
	g_assert_cmpuint(qpt_opcodes[0x17].op, ==, QPT_OP_SEND_INV);
	g_assert_cmphex(qpt_opcodes[0x00].flags & QPT_O_ONLY, ==, QPT_O_FIRST);
	g_assert_cmphex(qpt_opcodes[0x01].flags & (QPT_O_ONLY | QPT_O_MIDDLE), ==, QPT_O_MIDDLE);
	g_assert_cmphex(qpt_opcodes[0x02].flags & QPT_O_ONLY, ==, QPT_O_LAST);
	g_assert_cmphex(qpt_opcodes[0x04].flags & QPT_O_ONLY, ==, QPT_O_ONLY);
	g_assert_true(qpt_opcodes[0x1d].flags & QPT_O_ATOMIC_WRITE);
	g_assert_cmpuint(qpt_opcodes[0x1d].fixed_payload, ==, 8);
	g_assert_cmpstr(qpt_op_name(QPT_OP_WRITE_IMM), ==, "WRITE_IMM");
	g_assert_cmpstr(qpt_op_name(QPT_OP_COUNT), ==, "?");
}

static void test_cnp(void)
{
	const struct qpt_opcode_info *oi = &qpt_opcodes[0x81];

	g_assert_true(oi->flags & QPT_O_VALID);
	g_assert_true(oi->flags & QPT_O_CNP);
	g_assert_cmpuint(oi->hdrs, ==, 0);
	g_assert_cmpuint(oi->ext_len, ==, 0);
	g_assert_cmpuint(oi->fixed_payload, ==, 16);
	g_assert_cmpstr(oi->short_name, ==, "CNP");
	g_assert_false(qpt_opcodes[0x80].flags & QPT_O_VALID);
}

static void test_hdr_offset(void)
{
	/* For every valid opcode: present headers come in wire order, each
	 * right after the previous; absent ones are -1. */
	for (unsigned op = 0; op < 256; op++) {
		const struct qpt_opcode_info *oi = &qpt_opcodes[op];
		int expect = 0;

		if (!(oi->flags & QPT_O_VALID))
			continue;
		for (unsigned i = 0; i < QPT_H_COUNT; i++) {
			unsigned bit = 1u << i;
			int got = qpt_hdr_offset((uint8_t)op, bit);

			if (oi->hdrs & bit) {
				if (got != expect)
					FAILF("opcode 0x%02x %s: %s at %d, expected %d", op,
						oi->name, qpt_hdr_name(bit), got, expect);
				expect += (int)qpt_hdr_len(bit);
			} else {
				g_assert_cmpint(got, ==, -1);
			}
		}
		g_assert_cmpint(expect, ==, oi->ext_len);
	}
	/* Spot checks with literal numbers. */
	g_assert_cmpint(qpt_hdr_offset(0x4b, QPT_H_RDETH), ==, 0);
	g_assert_cmpint(qpt_hdr_offset(0x4b, QPT_H_DETH), ==, 4);
	g_assert_cmpint(qpt_hdr_offset(0x4b, QPT_H_RETH), ==, 12);
	g_assert_cmpint(qpt_hdr_offset(0x4b, QPT_H_IMMDT), ==, 28);
	g_assert_cmpint(qpt_hdr_offset(0x12, QPT_H_AETH), ==, 0);
	g_assert_cmpint(qpt_hdr_offset(0x12, QPT_H_ATOMICACKETH), ==, 4);
	g_assert_cmpint(qpt_hdr_offset(0xb4, QPT_H_ATOMICETH), ==, 4);
	g_assert_cmpint(qpt_hdr_offset(0x1c, QPT_H_FETH), ==, 0);
	g_assert_cmpint(qpt_hdr_offset(0x1c, QPT_H_RETH), ==, 4);
	g_assert_cmpint(qpt_hdr_offset(0x65, QPT_H_IMMDT), ==, 8);
	g_assert_cmpint(qpt_hdr_offset(0x04, QPT_H_RETH), ==, -1);
	g_assert_cmpint(qpt_hdr_offset(0x15, QPT_H_RETH), ==, -1);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_set_nonfatal_assertions();
	g_test_add_func("/opcode/valid-set", test_valid_set);
	g_test_add_func("/opcode/reserved-invalid", test_reserved_invalid);
	g_test_add_func("/opcode/ext-len-is-sum", test_ext_len_is_sum);
	g_test_add_func("/opcode/header-lengths", test_hdr_lengths);
	g_test_add_func("/opcode/headers-exact", test_headers_exact);
	g_test_add_func("/opcode/names", test_names);
	g_test_add_func("/opcode/services", test_services);
	g_test_add_func("/opcode/semantics", test_semantics);
	g_test_add_func("/opcode/cnp", test_cnp);
	g_test_add_func("/opcode/hdr-offset", test_hdr_offset);
	return g_test_run();
}
