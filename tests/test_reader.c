/* test_reader.c - the CLI's capture reader (analyzer/cli/reader.c) on files
 * written here: every frame's bytes and time come back, across many fills
 * of the reader's buffer; the threaded input hands over the same frames,
 * numbered, whichever thread decodes; and a file cut short while it is
 * being read ends with one error naming the file at the cut, every frame
 * handed out before it intact. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <pcap/pcap.h> /* DLT_RAW: what libpcap calls LINKTYPE_RAW (101) here */

#include "cli/reader.h"

#define NFRAMES 20000u
#define FRAME_LEN 1000u /* 16 + 1000 bytes a record: about 20 MB in all */

static char *dir;

/* Frame i: an Ethernet frame whose bytes all derive from i. */
static void frame_bytes(uint32_t i, uint8_t *b)
{
	for (uint32_t k = 0; k < FRAME_LEN; k++)
		b[k] = (uint8_t)(i * 7u + k * 13u + (k >> 8));
	memcpy(b + 14, &i, 4);
}

/* NFRAMES frames of link type linktype; frame i at i ms + ns_offset. */
static char *write_capture_at(const char *name, uint32_t linktype, uint32_t ns_offset)
{
	char *path = g_build_filename(dir, name, NULL);
	FILE *f = fopen(path, "wb");
	uint32_t hdr[6] = { 0xa1b23c4du, 0x00040002u, 0, 0, 65535, linktype };
	uint8_t b[FRAME_LEN];

	g_assert_nonnull(f);
	fwrite(hdr, sizeof(hdr), 1, f);
	for (uint32_t i = 0; i < NFRAMES; i++) {
		uint32_t rec[4] = { 1700000000u + i / 1000, (i % 1000) * 1000000u + ns_offset,
				    FRAME_LEN, FRAME_LEN };

		frame_bytes(i, b);
		fwrite(rec, sizeof(rec), 1, f);
		fwrite(b, FRAME_LEN, 1, f);
	}
	g_assert_cmpint(fclose(f), ==, 0);
	return path;
}

static char *write_capture(const char *name)
{
	return write_capture_at(name, 1, 0);
}

static bool frame_ok(uint32_t i, const struct qpt_frame *f)
{
	uint8_t b[FRAME_LEN];

	frame_bytes(i, b);
	return f->caplen == FRAME_LEN && !memcmp(f->data, b, FRAME_LEN) &&
	       f->ts_sec == 1700000000 + i / 1000 && f->ts_nsec == (i % 1000) * 1000000u;
}

static void read_all(void)
{
	char *path = write_capture("all.pcap");
	struct qpt_reader *r;
	struct qpt_frame f;
	uint32_t n = 0, bad = 0;
	int rc;

	r = qpt_reader_open(path, NULL, NULL);
	g_assert_nonnull(r);
	while ((rc = qpt_reader_next(r, &f, NULL)) == 1)
		bad += !frame_ok(n++, &f);
	g_assert_cmpint(rc, ==, 0);
	g_assert_cmpuint(n, ==, NFRAMES);
	g_assert_cmpuint(bad, ==, 0);
	qpt_reader_close(r);
	g_unlink(path);
	g_free(path);
}

/* The threaded input with decoding forced into one thread ("reader" or
 * "analyser", as QPTRACE_DECODE_IN says). */
static struct qpt_input *open_decoding_in(char **files, const struct qpt_input_opts *o,
					  const char *where, GPtrArray *errors)
{
	struct qpt_input *in;

	g_setenv("QPTRACE_DECODE_IN", where, TRUE);
	in = qpt_input_open(files, o, errors);
	g_unsetenv("QPTRACE_DECODE_IN");
	g_assert_nonnull(in);
	return in;
}

/* The threaded input: the same frames, numbered, with their bytes; or,
 * decoding forced into the reading thread, decoded there (no bytes). */
static void input_all(gconstpointer where)
{
	char *path = write_capture("input.pcap");
	char *files[] = { path, NULL };
	struct qpt_decode_opts dec = { 0 };
	struct qpt_input_opts o = { .decode = &dec };
	struct qpt_input *in;
	struct qpt_frame f;
	uint32_t n = 0, bad = 0;
	GPtrArray *errors = g_ptr_array_new_with_free_func((GDestroyNotify)g_error_free);

	in = open_decoding_in(files, &o, where, errors);
	while (qpt_input_next(in, &f, errors) > 0) {
		if (!strcmp(where, "reader"))
			bad += !f.pkt || f.data || f.pkt->caplen != FRAME_LEN ||
			       f.pkt->linktype != 1 || f.number != n + 1;
		else
			bad += f.pkt || !frame_ok(n, &f) || f.number != n + 1;
		n++;
	}
	qpt_input_close(in);
	g_assert_cmpuint(errors->len, ==, 0);
	g_ptr_array_free(errors, TRUE);
	g_assert_cmpuint(n, ==, NFRAMES);
	g_assert_cmpuint(bad, ==, 0);
	g_unlink(path);
	g_free(path);
}

/* Two files merged into one timeline: frames alternate between them (the
 * second's half a millisecond later), numbered in a row, each keeping its
 * file, its number in that file, its file's link type, time and bytes; with
 * a time window, the frames outside it keep their numbers but no bytes. */
static void input_merge(gconstpointer where)
{
	char *a = write_capture_at("merge-a.pcap", 1, 0);
	char *b = write_capture_at("merge-b.pcap", 101, 500000); /* raw IP */
	char *files[] = { a, b, NULL };
	struct qpt_decode_opts dec = { 0 };
	struct qpt_input_opts o = { .decode = &dec, .has_to = true, .to_rel = true,
				    .to_ns = 10 * 1000000000ll - 1 };
	struct qpt_input *in;
	struct qpt_frame f;
	uint32_t n = 0, bad = 0, matched = 0;
	GPtrArray *errors = g_ptr_array_new_with_free_func((GDestroyNotify)g_error_free);

	in = open_decoding_in(files, &o, where, errors);
	while (qpt_input_next(in, &f, errors) > 0) {
		uint32_t i = n / 2;
		bool second = n & 1;
		struct qpt_frame want = { .ts_sec = 1700000000 + i / 1000,
					  .ts_nsec = (i % 1000) * 1000000u + (second ? 500000u : 0) };

		/* frame i of a file at i ms: the first 10 s are 10,000 frames */
		bad += f.number != n + 1 || f.file_number != i + 1 ||
		       strcmp(f.file, second ? b : a) || f.linktype != (second ? (uint32_t)DLT_RAW : 1u) ||
		       f.ts_sec != want.ts_sec || f.ts_nsec != want.ts_nsec ||
		       f.caplen != FRAME_LEN || f.wirelen != FRAME_LEN ||
		       f.matched != (i < 10000);
		if (f.matched && !strcmp(where, "reader"))
			bad += !f.pkt || f.data || f.pkt->linktype != f.linktype;
		else if (f.matched) {
			uint8_t bytes[FRAME_LEN];

			frame_bytes(i, bytes);
			bad += f.pkt || !f.data || memcmp(f.data, bytes, FRAME_LEN);
		} else {
			bad += f.pkt || f.data;
		}
		matched += f.matched;
		n++;
	}
	qpt_input_close(in);
	g_assert_cmpuint(errors->len, ==, 0);
	g_ptr_array_free(errors, TRUE);
	g_assert_cmpuint(n, ==, 2 * NFRAMES);
	g_assert_cmpuint(matched, ==, 20000);
	g_assert_cmpuint(bad, ==, 0);
	g_unlink(a);
	g_unlink(b);
	g_free(a);
	g_free(b);
}

/* Run in a subprocess: a crash there fails the test with its signal. */
static void truncated_child(void)
{
	char *path = write_capture("cut.pcap");
	struct qpt_reader *r = qpt_reader_open(path, NULL, NULL);
	struct qpt_frame f;
	uint32_t n = 0, bad = 0;
	GError *err = NULL;
	int rc;

	g_assert_nonnull(r);
	while (n < 100 && (rc = qpt_reader_next(r, &f, &err)) == 1)
		bad += !frame_ok(n++, &f);
	/* Cut the file to a third while it is being read. */
	g_assert_cmpint(truncate(path, (off_t)(NFRAMES / 3) * (16 + FRAME_LEN)), ==, 0);
	while ((rc = qpt_reader_next(r, &f, &err)) == 1)
		bad += !frame_ok(n++, &f);
	/* the reader prints nothing: the error comes back */
	g_print("frames %u bad %u rc %d error %d: %s\n", n, bad, rc,
		err ? err->code : -1, err ? err->message : "none");
	g_clear_error(&err);
	qpt_reader_close(r);
	g_unlink(path);
	g_free(path);
}

static void truncated(void)
{
	g_test_trap_subprocess("/reader/truncated/subprocess", 0, G_TEST_SUBPROCESS_DEFAULT);
	g_test_trap_assert_passed();
	/* The cut leaves frames 1..6665 whole and 6666 short: every frame handed
	 * out is intact, and reading stops there with libpcap's error. */
	g_test_trap_assert_stdout("*frames 6665 bad 0 rc -1 error 4: *cut.pcap: after frame 6665: *truncated*");
	g_test_trap_assert_stderr("");
}

int main(int argc, char **argv)
{
	int rc;

	g_test_init(&argc, &argv, NULL);
	dir = g_dir_make_tmp("qpt-reader-XXXXXX", NULL);
	g_assert_nonnull(dir);
	g_test_add_func("/reader/all", read_all);
	g_test_add_data_func("/reader/input/analyser", "analyser", input_all);
	g_test_add_data_func("/reader/input/reader", "reader", input_all);
	g_test_add_data_func("/reader/merge/analyser", "analyser", input_merge);
	g_test_add_data_func("/reader/merge/reader", "reader", input_merge);
	g_test_add_func("/reader/truncated", truncated);
	g_test_add_func("/reader/truncated/subprocess", truncated_child);
	rc = g_test_run();
	g_rmdir(dir);
	g_free(dir);
	return rc;
}
