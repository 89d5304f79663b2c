/* outfile.c - every file qptrace writes: never an input, never half written
 *
 * Two rules for each output file (packets -w, plot -o and --top, grade
 * --gradebook and --feedback):
 *
 * - It may not be one of the files the command reads.  An input and an
 *   output are the same file when they have the same device and inode
 *   (stat(), which follows symbolic links), so a symbolic or a hard link
 *   to a capture is caught as the capture itself.  The command checks its
 *   outputs against its inputs (qpt_output_names_input) before it opens
 *   anything for writing, and refuses with one line naming both.
 *
 * - It is written to a temporary file in the same directory
 *   (.NAME.XXXXXX, mkstemp) and renamed over NAME only once every byte is
 *   written, flushed and fsync()ed without error (qpt_outfile_commit).  A
 *   failed write (a full disk, a quota, a file size limit) leaves no file
 *   behind and an older file of that name as it was; a signal that ends
 *   qptrace removes the temporary file (qpt_tmp_guard).  A name that is a
 *   symbolic link is written where the link points (the link stays); a
 *   name that exists and is not a regular file (/dev/null, a FIFO, a
 *   terminal) is written in place, as nothing can be renamed over it; "-"
 *   is standard output.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"

/* ---- inputs and outputs -------------------------------------------------- */

struct input_id {
	dev_t dev;
	ino_t ino;
	char *name;
};

struct qpt_inputs {
	GArray *ids; /* struct input_id */
};

struct qpt_inputs *qpt_inputs_new(void)
{
	struct qpt_inputs *in = g_new0(struct qpt_inputs, 1);

	in->ids = g_array_new(FALSE, FALSE, sizeof(struct input_id));
	return in;
}

void qpt_inputs_add(struct qpt_inputs *in, const char *file)
{
	struct input_id id;
	struct stat st;

	/* "-": standard input, when it is a file (qptrace ... - < F) */
	if (!strcmp(file, "-") ? fstat(STDIN_FILENO, &st) != 0 || !S_ISREG(st.st_mode) :
				 stat(file, &st) != 0)
		return; /* missing: the reader says so */
	id.dev = st.st_dev;
	id.ino = st.st_ino;
	id.name = g_strdup(strcmp(file, "-") ? file : "standard input");
	g_array_append_val(in->ids, id);
}

void qpt_inputs_add_all(struct qpt_inputs *in, gchar **files)
{
	for (; files && *files; files++)
		qpt_inputs_add(in, *files);
}

void qpt_inputs_free(struct qpt_inputs *in)
{
	if (!in)
		return;
	for (guint i = 0; i < in->ids->len; i++)
		g_free(g_array_index(in->ids, struct input_id, i).name);
	g_array_free(in->ids, TRUE);
	g_free(in);
}

bool qpt_output_names_input(const struct qpt_inputs *in, const char *cmd, const char *opt,
			    const char *output)
{
	struct stat st, lst;

	if (!output || !strcmp(output, "-") || stat(output, &st) != 0)
		return false; /* standard output, or a new file */
	for (guint i = 0; i < in->ids->len; i++) {
		const struct input_id *id = &g_array_index(in->ids, struct input_id, i);
		const char *how = "the input";
		char *ro, *ri;

		if (id->dev != st.st_dev || id->ino != st.st_ino)
			continue;
		ro = realpath(output, NULL);
		ri = strcmp(id->name, "standard input") ? realpath(id->name, NULL) : NULL;
		if (lstat(output, &lst) == 0 && S_ISLNK(lst.st_mode))
			how = "a symbolic link to the input";
		else if (ro && ri && strcmp(ro, ri))
			how = "a hard link to the input";
		free(ro);
		free(ri);
		g_printerr("qptrace %s: %s %s is %s %s: refusing to overwrite it (name another "
			   "file)\n", cmd, opt, output, how, id->name);
		return true;
	}
	return false;
}

/* ---- temporary files removed by a signal --------------------------------- */

/* Paths kept for the signal handler (no allocation there). */
#define TMP_SLOTS 8
static char tmp_path[TMP_SLOTS][4096];
static volatile sig_atomic_t tmp_set[TMP_SLOTS];

void qpt_tmp_remove_all(void)
{
	for (int i = 0; i < TMP_SLOTS; i++)
		if (tmp_set[i]) {
			tmp_set[i] = 0;
			unlink(tmp_path[i]); /* async-signal-safe */
		}
}

static void tmp_on_signal(int sig)
{
	qpt_tmp_remove_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

int qpt_tmp_guard(const char *path)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGXFSZ };
	static bool installed;

	if (!installed) {
		/* Only where the signal would end qptrace anyway: an ignored
		 * SIGPIPE stays ignored (the write fails, EPIPE), and the Ctrl-C
		 * of summary/events/packets keeps its handler (interrupt.c),
		 * which removes these files on the second Ctrl-C. */
		for (size_t i = 0; i < G_N_ELEMENTS(sigs); i++) {
			struct sigaction sa, old;

			if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
			    (old.sa_flags & SA_SIGINFO))
				continue;
			memset(&sa, 0, sizeof(sa));
			sigemptyset(&sa.sa_mask);
			sa.sa_handler = tmp_on_signal;
			sigaction(sigs[i], &sa, NULL);
		}
		installed = true;
	}
	for (int i = 0; i < TMP_SLOTS; i++)
		if (!tmp_set[i]) {
			g_strlcpy(tmp_path[i], path, sizeof(tmp_path[i]));
			tmp_set[i] = 1;
			return i;
		}
	return -1; /* every slot taken: not removed by a signal */
}

void qpt_tmp_unguard(int slot)
{
	if (slot >= 0 && slot < TMP_SLOTS)
		tmp_set[slot] = 0;
}

/* ---- writing a file ------------------------------------------------------ */

struct qpt_outfile {
	FILE *fp;
	char *path;  /* the name written (a symbolic link's target) */
	char *tmp;   /* the temporary file, NULL when written in place */
	int slot;    /* qpt_tmp_guard's */
	bool is_stdout;
	mode_t mode; /* the file's permissions once in place */
	int err;     /* the first write error seen (qpt_outfile_failed) */
};

/* A name that is a symbolic link: where it points, following the chain
 * (a link to a file not made yet is written there). */
static char *resolve_links(const char *path)
{
	char *p = g_strdup(path);

	for (int depth = 0; depth < 40; depth++) {
		struct stat st;
		char *target, *full, *dir;

		if (lstat(p, &st) != 0 || !S_ISLNK(st.st_mode))
			break;
		target = g_file_read_link(p, NULL);
		if (!target)
			break;
		if (g_path_is_absolute(target)) {
			full = target;
		} else {
			dir = g_path_get_dirname(p);
			full = g_build_filename(dir, target, NULL);
			g_free(dir);
			g_free(target);
		}
		g_free(p);
		p = full;
	}
	return p;
}

static mode_t default_mode(void)
{
	mode_t mask = umask(0);

	umask(mask);
	return 0666 & ~mask;
}

static struct qpt_outfile *open_failed(struct qpt_outfile *f, int e, GError **error)
{
	g_set_error_literal(error, G_FILE_ERROR, g_file_error_from_errno(e), g_strerror(e));
	g_free(f->tmp);
	g_free(f->path);
	g_free(f);
	return NULL;
}

struct qpt_outfile *qpt_outfile_open(const char *path, GError **error)
{
	struct qpt_outfile *f = g_new0(struct qpt_outfile, 1);
	struct stat st;
	char *dir, *base, *tmp;
	bool exists;
	int fd;

	f->slot = -1;
	if (!strcmp(path, "-")) {
		f->fp = stdout;
		f->is_stdout = true;
		f->path = g_strdup(path);
		return f;
	}
	f->path = resolve_links(path);
	exists = stat(f->path, &st) == 0;
	if (exists && !S_ISREG(st.st_mode)) {
		/* a device, a FIFO, a directory: in place (or its error) */
		f->fp = fopen(f->path, "wb");
		return f->fp ? f : open_failed(f, errno, error);
	}
	/* a file that may not be written is not replaced either */
	if (exists && access(f->path, W_OK) != 0)
		return open_failed(f, errno, error);
	f->mode = exists ? st.st_mode & 07777 : default_mode();
	dir = g_path_get_dirname(f->path);
	base = g_path_get_basename(f->path);
	if (strlen(base) > 200) /* NAME_MAX with .XXXXXX added */
		base[200] = '\0';
	tmp = g_strdup_printf("%s/.%s.XXXXXX", dir, base);
	g_free(dir);
	g_free(base);
	f->tmp = tmp;
	fd = g_mkstemp_full(tmp, O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		return open_failed(f, errno, error);
	f->slot = qpt_tmp_guard(tmp);
	f->fp = fdopen(fd, "wb");
	if (!f->fp) {
		int e = errno;

		close(fd);
		unlink(tmp);
		qpt_tmp_unguard(f->slot);
		return open_failed(f, e, error);
	}
	return f;
}

FILE *qpt_outfile_stream(const struct qpt_outfile *f)
{
	return f->fp;
}

bool qpt_outfile_failed(struct qpt_outfile *f)
{
	if (!f->err && ferror(f->fp))
		f->err = errno ? errno : EIO; /* right after the write that failed */
	return f->err != 0;
}

static void outfile_free(struct qpt_outfile *f)
{
	g_free(f->tmp);
	g_free(f->path);
	g_free(f);
}

void qpt_outfile_abort(struct qpt_outfile *f)
{
	if (!f)
		return;
	if (f->is_stdout) {
		fflush(stdout);
	} else {
		fclose(f->fp);
		if (f->tmp) {
			unlink(f->tmp);
			qpt_tmp_unguard(f->slot);
		}
	}
	outfile_free(f);
}

static bool fail(struct qpt_outfile *f, int e, bool closed, GError **error)
{
	g_set_error_literal(error, G_FILE_ERROR, g_file_error_from_errno(e),
			    e ? g_strerror(e) : "write error");
	if (!closed && !f->is_stdout)
		fclose(f->fp);
	if (f->tmp) {
		unlink(f->tmp);
		qpt_tmp_unguard(f->slot);
	}
	outfile_free(f);
	return false;
}

bool qpt_outfile_commit(struct qpt_outfile *f, GError **error)
{
	int e;

	if (qpt_outfile_failed(f))
		return fail(f, f->err, false, error);
	errno = 0;
	if (fflush(f->fp) != 0 || ferror(f->fp))
		return fail(f, errno ? errno : EIO, false, error);
	if (f->is_stdout) {
		outfile_free(f);
		return true;
	}
	if (f->tmp) {
		/* on the disk before it takes the name: a crash leaves the
		 * old file or the new one, never an empty one */
		if (fsync(fileno(f->fp)) != 0 && errno != EINVAL && errno != EROFS)
			return fail(f, errno, false, error);
		if (fchmod(fileno(f->fp), f->mode) != 0)
			return fail(f, errno, false, error);
	}
	errno = 0;
	if (fclose(f->fp) != 0)
		return fail(f, errno ? errno : EIO, true, error);
	if (f->tmp) {
		char *dir;
		int dfd;

		if (rename(f->tmp, f->path) != 0) {
			e = errno;
			return fail(f, e, true, error);
		}
		qpt_tmp_unguard(f->slot);
		/* the rename itself on the disk (best effort) */
		dir = g_path_get_dirname(f->path);
		dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0) {
			fsync(dfd);
			close(dfd);
		}
		g_free(dir);
	}
	outfile_free(f);
	return true;
}

bool qpt_write_file(const char *path, const void *data, size_t len, GError **error)
{
	struct qpt_outfile *f = qpt_outfile_open(path, error);

	if (!f)
		return false;
	if (len && fwrite(data, 1, len, f->fp) != len)
		return fail(f, errno ? errno : EIO, false, error);
	return qpt_outfile_commit(f, error);
}
