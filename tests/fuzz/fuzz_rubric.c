/* fuzz_rubric.c - libFuzzer target for the rubric parser of `qptrace grade`
 *
 * The input is the text of a rubric (a GLib key file, rubrics/README.md).
 * The parser, rubric_load(), is static in analyzer/cli/grade.c and reads a
 * file, so this target includes grade.c and hands it the input through a
 * memfd (/proc/self/fd/N).  Invalid rubrics are the common case: they must
 * be reported (stderr, silenced here) and freed without a leak.
 *
 * FUZZ_EXTRA_SOURCES: analyzer/cli/reader.c analyzer/cli/report.c analyzer/cli/print_pkt.c
 * FUZZ_EXTRA_LIBS: -lpcap
 */
#include <sys/mman.h>
#include <unistd.h>

#include "cli/grade.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quiet(const gchar *s)
{
	(void)s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	char path[64];
	struct rubric *rb;

	if (size > 1 << 20)
		return 0;
	if (fd < 0) {
		fd = memfd_create("rubric", 0);
		if (fd < 0)
			abort();
		g_set_printerr_handler(quiet);
	}
	if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	rb = rubric_load(path);
	if (rb)
		rubric_free(rb);
	return 0;
}
