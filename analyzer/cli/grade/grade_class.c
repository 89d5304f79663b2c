/* grade_class.c - `qptrace grade` on a class folder: every submission found
 *
 * The arguments are files and folders.  A folder is walked recursively
 * (sorted, symbolic links to folders not followed, so a link loop cannot
 * recurse): a learning platform's layout has one folder per student
 * (alice/submission.pcap, bob/lab3/capture.pcap).  A file is a submission
 * when its name says capture (.pcap, .pcapng, .cap, each possibly .gz or
 * .zst; .gz and .zst alone) or when its first bytes are those of a pcap,
 * pcapng, gzip or zstd file.  A file or folder that cannot be opened is a
 * submission that cannot be read: an ERROR row, never a missing one.  The
 * others (notes.txt, .DS_Store) are counted and named, not graded.
 *
 * The student id: group 1 of --student-pattern on the path relative to the
 * class folder (the file name for a file named on the command line); else
 * the first folder of that path (one folder per student) or the file name
 * without its capture extensions.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "grade.h"

/* Capture extensions, longest first: what the student id drops. */
static const char *const cap_ext[] = {
	".pcapng.gz", ".pcapng.zst", ".pcap.gz", ".pcap.zst", ".cap.gz", ".cap.zst",
	".pcapng", ".pcap", ".cap", ".gz", ".zst",
};

/* The length of name's capture extension (case-insensitive), 0 none. */
size_t grade_capture_ext(const char *name)
{
	size_t n = strlen(name);

	for (guint i = 0; i < G_N_ELEMENTS(cap_ext); i++) {
		size_t e = strlen(cap_ext[i]);

		if (n > e && !g_ascii_strcasecmp(name + n - e, cap_ext[i]))
			return e;
	}
	return 0;
}

/* The first bytes say pcap (either byte order, µs or ns), pcapng, gzip or
 * zstd (libpcap and decompress.c decide; this only finds submissions).
 * -1 when the file cannot be opened or read, errno set. */
static int sniff(const char *path)
{
	static const uint8_t magic[][4] = {
		{ 0xd4, 0xc3, 0xb2, 0xa1 }, { 0xa1, 0xb2, 0xc3, 0xd4 }, { 0x4d, 0x3c, 0xb2, 0xa1 },
		{ 0xa1, 0xb2, 0x3c, 0x4d }, { 0x0a, 0x0d, 0x0d, 0x0a }, { 0x28, 0xb5, 0x2f, 0xfd },
	};
	uint8_t b[4] = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, b, sizeof b);
	if (n < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	close(fd);
	if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
		return 1;
	for (guint i = 0; n == 4 && i < G_N_ELEMENTS(magic); i++)
		if (!memcmp(b, magic[i], 4))
			return 1;
	return 0;
}

static gint cmp_str(gconstpointer a, gconstpointer b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void add_sub(GArray *subs, const char *path, const char *rel, const char *error)
{
	struct submission s = {
		.path = g_strdup(path), .rel = g_strdup(rel), .error = g_strdup(error),
	};

	g_array_append_val(subs, s);
}

/* dir (rel: its path below the class folder, "" the folder itself). */
static void walk(struct class_files *cf, const char *dir, const char *rel)
{
	GError *e = NULL;
	GDir *d = g_dir_open(dir, 0, &e);
	GPtrArray *names;
	const char *n;

	if (!d) {
		/* a folder that cannot be opened may hold a submission */
		add_sub(cf->subs, dir, *rel ? rel : dir, e->message);
		g_error_free(e);
		return;
	}
	names = g_ptr_array_new_with_free_func(g_free);
	while ((n = g_dir_read_name(d)))
		g_ptr_array_add(names, g_strdup(n));
	g_dir_close(d);
	g_ptr_array_sort(names, cmp_str);
	for (guint i = 0; i < names->len; i++) {
		const char *name = g_ptr_array_index(names, i);
		char *path = g_build_filename(dir, name, NULL);
		char *r = *rel ? g_strconcat(rel, "/", name, NULL) : g_strdup(name);

		if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
			if (g_file_test(path, G_FILE_TEST_IS_SYMLINK))
				g_ptr_array_add(cf->skipped, g_strdup_printf("%s (a link to a folder, not followed)", path));
			else
				walk(cf, path, r);
		} else if (g_file_test(path, G_FILE_TEST_EXISTS) &&
			   !g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
			/* a FIFO would block the reader: named, not opened */
			add_sub(cf->subs, path, r, "not a regular file (a FIFO, a socket or a device)");
		} else {
			int k = sniff(path);

			if (k < 0)
				add_sub(cf->subs, path, r, g_strerror(errno));
			else if (k > 0 || grade_capture_ext(name))
				add_sub(cf->subs, path, r, NULL);
			else
				g_ptr_array_add(cf->skipped, g_strdup(path));
		}
		g_free(path);
		g_free(r);
	}
	g_ptr_array_free(names, TRUE);
}

void grade_find_submissions(struct class_files *cf, gchar **args)
{
	cf->subs = g_array_new(FALSE, TRUE, sizeof(struct submission));
	cf->skipped = g_ptr_array_new_with_free_func(g_free);
	cf->empty = g_ptr_array_new_with_free_func(g_free);
	for (gchar **a = args; a && *a; a++) {
		guint before = cf->subs->len;

		if (!g_file_test(*a, G_FILE_TEST_IS_DIR)) {
			char *base = g_path_get_basename(*a);

			/* named: graded whatever it is (an ERROR row if not a capture) */
			add_sub(cf->subs, *a, base, NULL);
			g_free(base);
			continue;
		}
		walk(cf, *a, "");
		if (cf->subs->len == before)
			g_ptr_array_add(cf->empty, g_strdup(*a));
	}
}

void grade_class_files_clear(struct class_files *cf)
{
	for (guint i = 0; cf->subs && i < cf->subs->len; i++) {
		struct submission *s = &g_array_index(cf->subs, struct submission, i);

		g_free(s->path);
		g_free(s->rel);
		g_free(s->error);
	}
	if (cf->subs)
		g_array_free(cf->subs, TRUE);
	if (cf->skipped)
		g_ptr_array_free(cf->skipped, TRUE);
	if (cf->empty)
		g_ptr_array_free(cf->empty, TRUE);
	memset(cf, 0, sizeof *cf);
}

/* The file name without its capture extensions. */
static char *stem(const char *rel)
{
	const char *slash = strrchr(rel, '/');
	const char *base = slash ? slash + 1 : rel;
	size_t e = grade_capture_ext(base);

	return g_strndup(base, strlen(base) - e);
}

char *grade_student_of(const struct submission *s, GRegex *re, bool quiet)
{
	GMatchInfo *mi = NULL;
	char *id;

	if (!re) {
		const char *slash = strchr(s->rel, '/');

		if (slash) /* one folder per student */
			return g_strndup(s->rel, (gsize)(slash - s->rel));
		return stem(s->rel);
	}
	if (g_regex_match(re, s->rel, 0, &mi)) {
		id = g_match_info_fetch(mi, 1);
	} else {
		id = g_strdup("");
		if (!quiet)
			g_printerr("qptrace grade: %s: --student-pattern does not match '%s'\n", s->path,
				   s->rel);
	}
	g_match_info_free(mi);
	return id;
}

/* The feedback file of a submission: DIR/STUDENT.txt (the student id, or
 * the file name when it has none; characters other than letters, digits,
 * '-', '_', '.' and '@' made '_'), STUDENT-2.txt, ... when taken. */
char *grade_feedback_path(const char *dir, const struct submission *s, const char *student,
			  GHashTable *used)
{
	char *base = student && *student ? g_strdup(student) : stem(s->rel), *path = NULL;

	for (char *p = base; *p; p++)
		if (!g_ascii_isalnum(*p) && !strchr("-_.@", *p))
			*p = '_';
	if (base[0] == '.' || !base[0]) {
		char *b = g_strconcat("_", base, NULL);

		g_free(base);
		base = b;
	}
	for (int n = 1; !path; n++) {
		char *name = n == 1 ? g_strdup_printf("%s.txt", base) : g_strdup_printf("%s-%d.txt", base, n);

		if (!g_hash_table_contains(used, name)) {
			path = g_build_filename(dir, name, NULL);
			g_hash_table_add(used, name);
		} else {
			g_free(name);
		}
	}
	g_free(base);
	return path;
}

char *grade_file_sha256(const char *path)
{
	GChecksum *sum = g_checksum_new(G_CHECKSUM_SHA256);
	FILE *f = fopen(path, "rb");
	guchar buf[1 << 16];
	char *hex = NULL;
	size_t n;

	if (f) {
		while ((n = fread(buf, 1, sizeof buf, f)) > 0)
			g_checksum_update(sum, buf, n);
		if (!ferror(f))
			hex = g_strdup(g_checksum_get_string(sum));
		fclose(f);
	}
	g_checksum_free(sum);
	return hex;
}
