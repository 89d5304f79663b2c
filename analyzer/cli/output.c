/* output.c - writing results: every write checked
 *
 * A result cut short by a full disk, a closed standard output or a broken
 * pipe (with SIGPIPE ignored) must not look complete: the failed write is
 * reported once, naming the output, and the command exits 2.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "output.h"

int qpt_write_out(GString *out, const char *what)
{
	size_t n = out->len ? fwrite(out->str, 1, out->len, stdout) : 0;
	int e = errno;

	g_string_truncate(out, 0);
	if (n == 0 && !ferror(stdout) && fflush(stdout) == 0)
		return 0;
	if (ferror(stdout) || fflush(stdout) != 0) {
		if (!errno)
			errno = e;
		g_printerr("qptrace: cannot write %s: %s\n", what,
			   errno ? g_strerror(errno) : "write error");
		return 2;
	}
	return 0;
}
