/* grade.c - `qptrace grade --rubric FILE CAPTURE...`
 *
 * Grades lab captures against a rubric (a GLib key file, see
 * rubrics/README.md).  Each capture is read once: every frame goes through
 * the decoder and the flow engine, and a small record of each RoCE/IB
 * frame is kept (what the engine does not keep: which frames carried
 * immediate data, FIRST/MIDDLE/LAST packets, CM messages, AETHs, the
 * out-of-band TCP frames, ...).  Each check then looks at the engine's
 * conversations and at those records, and says PASS or FAIL with the
 * frame numbers that prove it.
 *
 * Exit status: 0 when every capture passes every check, 1 when any check
 * fails, 2 on bad input (invalid rubric, or a capture that could not be
 * read: the others are still graded).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "grade.h"

/* ---- output -------------------------------------------------------------- */

struct graded {
	char *file;
	char *error;
	bool graded; /* checks ran (the file opened) */
	long score;
	guint passed;
	bool pass;
};

static void json_frames(GString *o, GArray *f)
{
	g_string_append(o, "[");
	for (guint i = 0; i < f->len && i < 1000; i++)
		g_string_append_printf(o, "%s%" PRIu64, i ? "," : "", g_array_index(f, uint64_t, i));
	g_string_append(o, "]");
}

static void json_str(GString *o, const char *s)
{
	if (s)
		qpt_json_escape(o, s);
	else
		g_string_append(o, "null");
}

static void grade_one(const struct rubric *rb, const struct opts *o, const char *file,
		      struct graded *g, GString *out, bool first)
{
	struct capture cap = { .file = file };
	guint nc = rb->checks->len;

	g->file = g_strdup(file);
	grade_read_capture(&cap, o, rb);
	if (cap.error)
		g->error = g_strdup(cap.error);
	if (o->json) {
		g_string_append_printf(out, "%s{\"file\":", first ? "" : ",");
		json_str(out, file);
	} else {
		g_string_append_printf(out, "== %s\n", file);
	}
	if (!cap.opened) {
		if (o->json) {
			g_string_append(out, ",\"result\":\"error\",\"error\":");
			json_str(out, cap.error);
			g_string_append_printf(out, ",\"score\":null,\"max_score\":%ld,\"checks\":[]}",
					       rb->max_points);
		} else {
			g_string_append_printf(out, "  ERROR  cannot read the capture: %s\n\n", cap.error);
		}
		grade_capture_free(&cap, nc);
		return;
	}
	g->graded = true;
	if (o->json)
		g_string_append_printf(out, ",\"frames\":%" PRIu64 ",\"roce_ib_packets\":%" PRIu64
				       ",\"conversations\":%u,\"checks\":[",
				       cap.nframes, cap.iba, cap.convs->len);
	for (guint i = 0; i < nc; i++) {
		const struct check *c = g_ptr_array_index(rb->checks, i);
		struct result r = { 0 };
		long got;

		grade_run_check(c, i, &cap, &r);
		got = r.pass ? c->points : 0;
		g->score += got;
		g->passed += r.pass;
		if (o->json) {
			g_string_append_printf(out, "%s{\"name\":", i ? "," : "");
			json_str(out, c->name);
			g_string_append_printf(out, ",\"kind\":\"%s\",\"result\":\"%s\",\"points\":%ld,\"max_points\":%ld,\"reason\":",
					       grade_kinds[c->kind].name, r.pass ? "pass" : "fail", got,
					       c->points);
			json_str(out, r.reason->str);
			g_string_append(out, ",\"frames\":");
			json_frames(out, r.frames);
			g_string_append(out, ",\"explain\":");
			json_str(out, c->explain);
			g_string_append_c(out, '}');
		} else {
			g_string_append_printf(out, "  %s  %ld/%ld  %s: %s\n", r.pass ? "PASS" : "FAIL",
					       got, c->points, c->name, r.reason->str);
			if (!r.pass && c->explain)
				g_string_append_printf(out, "              why it matters: %s\n", c->explain);
		}
		g_string_free(r.reason, TRUE);
		g_array_free(r.frames, TRUE);
	}
	g->pass = g->passed == nc && !cap.error;
	if (o->json) {
		g_string_append_printf(out, "],\"score\":%ld,\"max_score\":%ld,\"checks_passed\":%u,\"checks_total\":%u,\"result\":\"%s\",\"error\":",
				       g->score, rb->max_points, g->passed, nc,
				       cap.error ? "error" : g->pass ? "pass" : "fail");
		json_str(out, cap.error);
		g_string_append_c(out, '}');
	} else {
		if (cap.error)
			g_string_append_printf(out, "  ERROR  the capture was not read to its end: %s\n",
					       cap.error);
		g_string_append_printf(out, "  score %ld/%ld, %u of %u checks passed: %s\n\n", g->score,
				       rb->max_points, g->passed, nc,
				       cap.error ? "ERROR" : g->pass ? "PASS" : "FAIL");
	}
	grade_capture_free(&cap, nc);
}

static bool is_capture_name(const char *n)
{
	return g_str_has_suffix(n, ".pcap") || g_str_has_suffix(n, ".pcapng") ||
	       g_str_has_suffix(n, ".PCAP") || g_str_has_suffix(n, ".PCAPNG");
}

static gint cmp_str(gconstpointer a, gconstpointer b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Expands directories into their captures, sorted.  Empty or unreadable
 * directories are reported and make *bad true. */
static GPtrArray *expand(gchar **files, bool *bad)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(g_free);

	for (gchar **f = files; *f; f++) {
		GPtrArray *dir;
		GDir *d;
		GError *e = NULL;
		const char *n;

		if (!g_file_test(*f, G_FILE_TEST_IS_DIR)) {
			g_ptr_array_add(out, g_strdup(*f));
			continue;
		}
		d = g_dir_open(*f, 0, &e);
		if (!d) {
			g_printerr("qptrace grade: %s: %s\n", *f, e->message);
			g_error_free(e);
			*bad = true;
			continue;
		}
		dir = g_ptr_array_new();
		while ((n = g_dir_read_name(d)))
			if (is_capture_name(n))
				g_ptr_array_add(dir, g_build_filename(*f, n, NULL));
		g_dir_close(d);
		if (!dir->len) {
			g_printerr("qptrace grade: %s: no *.pcap or *.pcapng file in this directory\n", *f);
			*bad = true;
		}
		g_ptr_array_sort(dir, cmp_str);
		for (guint i = 0; i < dir->len; i++)
			g_ptr_array_add(out, g_ptr_array_index(dir, i));
		g_ptr_array_free(dir, TRUE);
	}
	return out;
}

int cmd_grade(struct opts *o)
{
	struct rubric *rb;
	GPtrArray *files;
	GArray *gs;
	GString *out;
	bool bad = false;
	guint npass = 0, nfail = 0, nerr = 0;
	size_t w = 7;

	if (!o->rubric) {
		g_printerr("qptrace grade: no rubric given: --rubric FILE (see rubrics/)\n");
		return 2;
	}
	rb = grade_rubric_load(o->rubric);
	g_free(o->rubric); /* the option is grade's own: main() does not free it */
	o->rubric = NULL;
	if (!rb)
		return 2;
	out = g_string_sized_new(1 << 14); /* after the early returns: no leak */
	files = expand(o->files, &bad);
	gs = g_array_new(FALSE, TRUE, sizeof(struct graded));
	g_array_set_size(gs, files->len);
	if (o->json) {
		g_string_append(out, "{\"rubric\":{\"file\":");
		json_str(out, rb->file);
		g_string_append(out, ",\"name\":");
		json_str(out, rb->name);
		g_string_append(out, ",\"description\":");
		json_str(out, rb->description);
		g_string_append_printf(out, ",\"max_score\":%ld,\"checks\":%u},\"captures\":[",
				       rb->max_points, rb->checks->len);
	} else {
		g_string_append_printf(out, "rubric %s: %s (%u checks, %ld points)\n", rb->file,
				       rb->name, rb->checks->len, rb->max_points);
		if (rb->description && *rb->description)
			g_string_append_printf(out, "  %s\n", rb->description);
		g_string_append_c(out, '\n');
	}
	for (guint i = 0; i < files->len; i++) {
		struct graded *g = &g_array_index(gs, struct graded, i);

		grade_one(rb, o, g_ptr_array_index(files, i), g, out, i == 0);
		if (g->error)
			nerr++;
		else if (g->pass)
			npass++;
		else
			nfail++;
		fwrite(out->str, 1, out->len, stdout);
		fflush(stdout); /* keep the order of stdout and stderr */
		g_string_truncate(out, 0);
		if (g->error && !o->quiet)
			g_printerr("qptrace grade: %s: %s\n", g->file, g->error);
		w = MAX(w, strlen(g->file));
	}
	if (o->json) {
		g_string_append_printf(out, "],\"totals\":{\"captures\":%u,\"passed\":%u,\"failed\":%u,\"errors\":%u}}\n",
				       files->len, npass, nfail, nerr);
	} else {
		g_string_append_printf(out, "totals (%s):\n  %-*s  %9s  %7s  %s\n", rb->name, (int)w,
				       "capture", "score", "checks", "result");
		for (guint i = 0; i < gs->len; i++) {
			struct graded *g = &g_array_index(gs, struct graded, i);
			char score[32] = "-", checks[32] = "-";

			if (g->graded) {
				g_snprintf(score, sizeof(score), "%ld/%ld", g->score, rb->max_points);
				g_snprintf(checks, sizeof(checks), "%u/%u", g->passed, rb->checks->len);
			}
			g_string_append_printf(out, "  %-*s  %9s  %7s  %s%s%s\n", (int)w, g->file, score,
					       checks,
					       g->error ? "ERROR" : g->pass ? "PASS" : "FAIL",
					       g->error ? ": " : "", g->error ? g->error : "");
		}
		g_string_append_printf(out, "  %u %s: %u passed, %u failed, %u unreadable\n",
				       files->len, grade_plural(files->len, "capture", "captures"), npass,
				       nfail, nerr);
	}
	fwrite(out->str, 1, out->len, stdout);
	fflush(stdout);
	for (guint i = 0; i < gs->len; i++) {
		g_free(g_array_index(gs, struct graded, i).file);
		g_free(g_array_index(gs, struct graded, i).error);
	}
	g_array_free(gs, TRUE);
	g_ptr_array_free(files, TRUE);
	g_string_free(out, TRUE);
	grade_rubric_free(rb);
	if (bad || nerr)
		return 2;
	return nfail ? 1 : 0;
}
