/* grade_find.c - `qptrace grade --rubric NAME`: the shipped rubrics, found
 * by name, and the other labs' rubrics a failing capture is compared with */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "grade.h"

static gint cmp_str(gconstpointer a, gconstpointer b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

#ifndef QPT_RUBRIC_DIR
#define QPT_RUBRIC_DIR "/usr/local/share/qptrace/rubrics"
#endif

/* The shipped rubrics: the source tree's rubrics/ when this binary is the
 * one in its build directory, else the installed datadir. */
static const char *rubric_dir(void)
{
#if defined(QPT_BUILD_DIR) && defined(QPT_SOURCE_RUBRIC_DIR)
	char *exe = g_file_read_link("/proc/self/exe", NULL);
	char *dir = exe ? g_path_get_dirname(exe) : NULL;
	char *build = realpath(QPT_BUILD_DIR, NULL);
	bool in_build = dir && build && !strcmp(dir, build);

	g_free(exe);
	g_free(dir);
	free(build);
	if (in_build)
		return QPT_SOURCE_RUBRIC_DIR;
#endif
	return QPT_RUBRIC_DIR;
}

/* --rubric FILE, or the name of a shipped rubric (rc_pingpong, or
 * rc_pingpong.ini); NULL and a message when there is none. */
char *grade_find_rubric(const char *arg)
{
	const char *dir;
	char *name, *path;
	GDir *d;

	if (g_file_test(arg, G_FILE_TEST_EXISTS) || strchr(arg, '/'))
		return g_strdup(arg);
	dir = rubric_dir();
	name = g_str_has_suffix(arg, ".ini") ? g_strdup(arg) : g_strconcat(arg, ".ini", NULL);
	path = g_build_filename(dir, name, NULL);
	g_free(name);
	if (g_file_test(path, G_FILE_TEST_IS_REGULAR))
		return path;
	g_printerr("qptrace grade: no rubric file '%s' and no shipped rubric of that name in %s", arg, dir);
	d = g_dir_open(dir, 0, NULL);
	if (d) {
		GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
		const char *n;

		while ((n = g_dir_read_name(d)))
			if (g_str_has_suffix(n, ".ini"))
				g_ptr_array_add(names, g_strndup(n, strlen(n) - 4));
		g_dir_close(d);
		g_ptr_array_sort(names, cmp_str);
		for (guint i = 0; i < names->len; i++)
			g_printerr("%s%s", i ? ", " : " (shipped: ", (char *)g_ptr_array_index(names, i));
		if (names->len)
			g_printerr(")");
		g_ptr_array_free(names, TRUE);
	}
	g_printerr("\n");
	g_free(path);
	return NULL;
}

bool grade_rubric_shipped(const char *path)
{
	char *dir = g_path_get_dirname(path);
	char *a = realpath(dir, NULL), *b = realpath(rubric_dir(), NULL);
	bool yes = a && b && !strcmp(a, b);

	g_free(dir);
	free(a);
	free(b);
	return yes;
}

/* Every shipped rubric but rb (the same file, or the same name), with its
 * defaults: which lab a capture that fails rb is (guess_lab). */
GPtrArray *grade_load_others(const char *path, const struct rubric *rb)
{
	const char *dir = rubric_dir();
	GPtrArray *out = g_ptr_array_new_with_free_func((GDestroyNotify)grade_rubric_free);
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	char *self = realpath(path, NULL);
	GDir *d = g_dir_open(dir, 0, NULL);
	const char *n;

	while (d && (n = g_dir_read_name(d)))
		if (g_str_has_suffix(n, ".ini"))
			g_ptr_array_add(names, g_build_filename(dir, n, NULL));
	if (d)
		g_dir_close(d);
	g_ptr_array_sort(names, cmp_str);
	for (guint i = 0; i < names->len; i++) {
		const char *f = g_ptr_array_index(names, i);
		char *real = realpath(f, NULL);
		struct rubric *ob;

		if (!(self && real && !strcmp(self, real)) && (ob = grade_rubric_load(f, NULL))) {
			if (strcmp(ob->name, rb->name))
				g_ptr_array_add(out, ob);
			else
				grade_rubric_free(ob);
		}
		free(real);
	}
	free(self);
	g_ptr_array_free(names, TRUE);
	return out;
}
