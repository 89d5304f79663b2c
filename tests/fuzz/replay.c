/* replay.c - plain driver for the fuzz targets (no libFuzzer needed)
 *
 * Runs LLVMFuzzerTestOneInput() once over every regular file of each
 * argument (a file or a directory; a missing directory is skipped), so that
 * the seed corpus and every crash found by tools/fuzz are replayed by
 * `meson test` in the normal build, and under ASan/UBSan by tools/sanitize.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path, unsigned long *count)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f) {
		perror(path);
		return 1;
	}
	do {
		if (len == cap) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	fclose(f);
	/* An exact-size copy, so that overreads are caught under ASan. */
	uint8_t *exact = malloc(len ? len : 1);
	if (!exact)
		abort();
	memcpy(exact, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	(*count)++;
	return 0;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	unsigned long count = 0;
	int bad = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		DIR *d;
		struct dirent *e;
		char **names = NULL;
		size_t n = 0;

		if (stat(argv[i], &st) != 0) {
			printf("# %s: absent, skipped\n", argv[i]);
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			bad |= run_file(argv[i], &count);
			continue;
		}
		d = opendir(argv[i]);
		if (!d) {
			perror(argv[i]);
			return 1;
		}
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.' || !strncmp(e->d_name, "README", 6))
				continue;
			names = realloc(names, (n + 1) * sizeof *names);
			if (!names)
				abort();
			names[n++] = strdup(e->d_name);
		}
		closedir(d);
		if (n)
			qsort(names, n, sizeof *names, cmp);
		for (size_t j = 0; j < n; j++) {
			char path[4096];

			snprintf(path, sizeof path, "%s/%s", argv[i], names[j]);
			if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
				bad |= run_file(path, &count);
			free(names[j]);
		}
		free(names);
	}
	printf("replayed %lu inputs\n", count);
	return bad;
}
