/* fuzz_rubric.c - libFuzzer target for the rubric parser of `qptrace grade`
 *
 * The input is the text of a rubric (a GLib key file, rubrics/README.md).
 * The parser, grade_rubric_load() in analyzer/cli/grade_rubric.c, reads a
 * file, so this target hands it the input through a memfd
 * (/proc/self/fd/N).  Invalid rubrics are the common case: they must be
 * reported (stderr, silenced here) and freed without a leak.
 *
 * FUZZ_EXTRA_SOURCES: analyzer/cli/grade_rubric.c
 */
#include <sys/mman.h>
#include <unistd.h>

#include "cli/grade.h"

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
	rb = grade_rubric_load(path);
	if (rb)
		grade_rubric_free(rb);
	return 0;
}
