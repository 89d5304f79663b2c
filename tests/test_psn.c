/* test_psn.c - 24-bit PSN arithmetic across the wrap */
#include <glib.h>

#include "qpt_psn.h"

static void test_cmp_basic(void)
{
	g_assert_cmpint(qpt_psn_cmp(5, 5), ==, 0);
	g_assert_cmpint(qpt_psn_cmp(6, 5), >, 0);
	g_assert_cmpint(qpt_psn_cmp(5, 6), <, 0);
	g_assert_cmpint(qpt_psn_cmp(0xffffff, 0xffffff), ==, 0);
}

static void test_cmp_wrap(void)
{
	/* 0 comes right after 0xFFFFFF. */
	g_assert_cmpint(qpt_psn_cmp(0, 0xffffff), >, 0);
	g_assert_cmpint(qpt_psn_cmp(0xffffff, 0), <, 0);
	g_assert_cmpint(qpt_psn_cmp(3, 0xfffffd), >, 0);
	g_assert_cmpint(qpt_psn_cmp(0xfffffd, 3), <, 0);
	g_assert_cmpint(qpt_psn_diff(0, 0xffffff), ==, 1);
	g_assert_cmpint(qpt_psn_diff(0xffffff, 0), ==, -1);
	g_assert_cmpint(qpt_psn_diff(3, 0xfffffd), ==, 6);
	g_assert_cmpint(qpt_psn_diff(0xfffffd, 3), ==, -6);
	g_assert_cmpint(qpt_psn_diff(0x000010, 0xfffff0), ==, 0x20);
}

static void test_half_range(void)
{
	/* The largest forward distance is 2^23 - 1; 2^23 reads as backward. */
	g_assert_cmpint(qpt_psn_diff(0x7fffff, 0), ==, 0x7fffff);
	g_assert_cmpint(qpt_psn_cmp(0x7fffff, 0), >, 0);
	g_assert_cmpint(qpt_psn_diff(0x800000, 0), ==, -0x800000);
	g_assert_cmpint(qpt_psn_cmp(0x800000, 0), <, 0);
	g_assert_cmpint(qpt_psn_diff(0x800001, 0), ==, -0x7fffff);
	g_assert_cmpint(qpt_psn_cmp(0, 0x800001), >, 0);
	/* Across the wrap the same boundary holds. */
	g_assert_cmpint(qpt_psn_diff(0x7ffffe, 0xffffff), ==, 0x7fffff);
	g_assert_cmpint(qpt_psn_diff(0x7fffff, 0xffffff), ==, -0x800000);
	g_assert_cmpint(qpt_psn_diff(0xffffff, 0x7fffff), ==, -0x800000);
}

static void test_high_bits_ignored(void)
{
	/* Only the low 24 bits count (callers may pass A-bit laden words). */
	g_assert_cmpint(qpt_psn_cmp(0x80000005, 5), ==, 0);
	g_assert_cmpint(qpt_psn_diff(0x01000007, 5), ==, 2);
}

static void test_add(void)
{
	g_assert_cmphex(qpt_psn_add(0xffffff, 1), ==, 0);
	g_assert_cmphex(qpt_psn_add(0xfffffe, 5), ==, 3);
	g_assert_cmphex(qpt_psn_add(0, -1), ==, 0xffffff);
	g_assert_cmphex(qpt_psn_add(2, -5), ==, 0xfffffd);
	g_assert_cmphex(qpt_psn_add(0x123456, 0), ==, 0x123456);
	g_assert_cmphex(qpt_psn_add(0x7fffff, 0x800000), ==, 0xffffff);
	g_assert_cmphex(qpt_psn_add(0xffffff, 0x7fffff), ==, 0x7ffffe);
	/* add and diff are inverse. */
	for (int32_t n = -0x800000; n < 0x800000; n += 0x10001) {
		g_assert_cmpint(qpt_psn_diff(qpt_psn_add(0xfffff0, n), 0xfffff0), ==, n);
		g_assert_cmpint(qpt_psn_diff(qpt_psn_add(7, n), 7), ==, n);
	}
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_set_nonfatal_assertions();
	g_test_add_func("/psn/cmp-basic", test_cmp_basic);
	g_test_add_func("/psn/cmp-wrap", test_cmp_wrap);
	g_test_add_func("/psn/half-range", test_half_range);
	g_test_add_func("/psn/high-bits-ignored", test_high_bits_ignored);
	g_test_add_func("/psn/add", test_add);
	return g_test_run();
}
