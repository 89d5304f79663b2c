/* fuzz_rubric.c - libFuzzer target for the rubric parser of `qptrace grade`
 *
 * The input is the text of a rubric (a GLib key file, rubrics/README.md).
 * The parser, grade_rubric_load() in analyzer/cli/grade/grade_rubric.c, reads a
 * file, so this target hands it the input through a memfd
 * (/proc/self/fd/N).  Invalid rubrics are the common case: they must be
 * reported (stderr, silenced here) and freed without a leak.
 *
 * Input lines "#command TOOL ARGS" and "#set NAME=VALUE" (comments to the
 * parser) are also given as grade's --command and --set, so the command
 * line tables (grade_tools.c) and the parameter expressions
 * (grade_params.c) are fuzzed too.  Those two files are included below
 * rather than listed here and in tests/fuzz/meson.build, whose source list
 * for this target is grade_rubric.c alone.
 *
 * FUZZ_EXTRA_SOURCES: analyzer/cli/grade/grade_rubric.c
 */
#include <sys/mman.h>
#include <unistd.h>

#include "cli/grade/grade.h"
#include "cli/grade/grade_params.c"
#include "cli/grade/grade_tools.c"

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
	{
		char *text = g_strndup((const char *)data, size);
		gchar **lines = g_strsplit(text, "\n", 64);
		GPtrArray *sets = g_ptr_array_new();
		struct grade_overrides ov = { 0 };

		for (gchar **l = lines; *l; l++) {
			if (g_str_has_prefix(*l, "#command ") && !ov.command)
				ov.command = *l + strlen("#command ");
			else if (g_str_has_prefix(*l, "#set "))
				g_ptr_array_add(sets, *l + strlen("#set "));
		}
		g_ptr_array_add(sets, NULL);
		ov.sets = (gchar **)sets->pdata;
		rb = grade_rubric_load(path, &ov);
		if (rb)
			grade_rubric_free(rb);
		g_ptr_array_free(sets, TRUE);
		g_strfreev(lines);
		g_free(text);
	}
	return 0;
}
