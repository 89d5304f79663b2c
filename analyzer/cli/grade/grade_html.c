/* grade_html.c - `grade --html FILE.html`: the class report a teacher opens
 *
 * One static page, no script and nothing fetched: the totals (found,
 * graded, passed, failed, unreadable, copies), the gradebook (a row per
 * submission: student, file, score, result, each check's outcome, notes,
 * a link to the feedback file), each check's pass rate over the graded
 * submissions and the distribution of the scores in tenths of the
 * maximum.  Every text is escaped (g_markup_escape_text); the numbers carry
 * ids and data- attributes so that a test can read them back.
 */
#include <inttypes.h>
#include <string.h>

#include "grade.h"

static void esc(GString *o, const char *s)
{
	char *e = g_markup_escape_text(s ? s : "", -1);

	g_string_append(o, e);
	g_free(e);
}

/* A link to target relative to the folder of the page (file://, no
 * server): "feedback/alice.txt". */
static char *rel_link(const char *page, const char *target)
{
	char *pd = g_path_get_dirname(page), *apd, *at, *out;
	size_t n;

	apd = g_canonicalize_filename(pd, NULL);
	at = g_canonicalize_filename(target, NULL);
	n = strlen(apd);
	if (!strncmp(at, apd, n) && at[n] == '/')
		out = g_uri_escape_string(at + n + 1, "/", TRUE);
	else
		out = g_strconcat("file://", at, NULL); /* elsewhere: the absolute path */
	g_free(pd);
	g_free(apd);
	g_free(at);
	return out;
}

static const char *const cls_of[] = { "fail", "pass", "missing", "blocked" };
static const char *const word_of[] = { "FAIL", "PASS", "NOT-IN-CAPTURE", "NOT-CHECKED" };

bool grade_html(const char *path, const struct rubric *rb, GArray *gs, guint found,
		guint unreadable, guint not_captures, guint copies, char **why)
{
	GString *o = g_string_sized_new(1 << 15);
	guint nc = rb->checks->len, graded = 0, npass = 0, nfail = 0, hist[11] = { 0 };
	GError *e = NULL;
	bool ok;

	for (guint k = 0; k < gs->len; k++) {
		const struct graded *g = &g_array_index(gs, struct graded, k);

		if (!g->graded)
			continue;
		graded++;
		npass += g->pass && !g->error;
		nfail += !g->pass || g->error;
		if (g->max > 0)
			hist[MIN(10, (g->score * 10) / g->max)]++;
	}
	g_string_append(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>");
	esc(o, rb->name);
	g_string_append(o, " - class report</title>\n<style>\n"
			   "body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;margin:1em 0}\n"
			   "td,th{border:1px solid #bbb;padding:.2em .5em;text-align:left;vertical-align:top}\n"
			   "td.n{text-align:right}.pass{background:#d8f5d0}.fail{background:#f8d4d0}\n"
			   ".missing{background:#f3ecc8}.blocked{background:#e4e4e4}.error{background:#f0b8b8}\n"
			   ".bar{background:#5b8fd9;height:1em;display:inline-block}\n"
			   "</style></head><body>\n<h1>");
	esc(o, rb->name);
	g_string_append(o, "</h1>\n<p>rubric ");
	esc(o, rb->file);
	g_string_append_printf(o, ": %u checks, %ld points</p>\n", nc, rb->max_points);

	g_string_append(o, "<h2>Totals</h2>\n<table id=\"totals\">\n");
	{
		const struct {
			const char *id, *label;
			guint v;
		} t[] = {
			{ "found", "submissions found", found },
			{ "graded", "graded", graded },
			{ "passed", "passed", npass },
			{ "failed", "failed", nfail },
			{ "unreadable", "could not be read", unreadable },
			{ "copies", "pairs of copies", copies },
			{ "not-captures", "other files (not captures, not graded)", not_captures },
		};

		for (guint i = 0; i < G_N_ELEMENTS(t); i++)
			g_string_append_printf(o, "<tr><th>%s</th><td class=\"n\" id=\"total-%s\">%u</td></tr>\n",
					       t[i].label, t[i].id, t[i].v);
	}
	g_string_append(o, "</table>\n");

	g_string_append(o, "<h2>Gradebook</h2>\n<table id=\"gradebook\">\n<tr><th>student</th><th>file</th>"
			   "<th>score</th><th>maximum</th><th>result</th>");
	for (guint i = 0; i < nc; i++) {
		g_string_append(o, "<th>");
		esc(o, ((const struct check *)g_ptr_array_index(rb->checks, i))->name);
		g_string_append(o, "</th>");
	}
	g_string_append(o, "<th>notes</th><th>feedback</th></tr>\n");
	for (guint k = 0; k < gs->len; k++) {
		const struct graded *g = &g_array_index(gs, struct graded, k);
		const char *res = g->error ? "ERROR" : g->pass ? "PASS" : "FAIL";

		g_string_append(o, "<tr class=\"row\"><td class=\"student\">");
		esc(o, g->student);
		g_string_append(o, "</td><td class=\"file\">");
		esc(o, g->file);
		if (g->graded)
			g_string_append_printf(o, "</td><td class=\"n score\">%ld</td><td class=\"n max\">%ld</td>",
					       g->score, g->max);
		else
			g_string_append(o, "</td><td class=\"n score\"></td><td class=\"n max\"></td>");
		g_string_append_printf(o, "<td class=\"result %s\">%s</td>",
				       g->error ? "error" : g->pass ? "pass" : "fail", res);
		for (guint i = 0; i < nc; i++) {
			if (!g->graded) {
				g_string_append(o, "<td class=\"check\"></td>");
				continue;
			}
			g_string_append_printf(o, "<td class=\"check %s\" title=\"%s\">", cls_of[g->oc[i]],
					       word_of[g->oc[i]]);
			if (g->points[i] >= 0)
				g_string_append_printf(o, "%ld", g->points[i]);
			else
				g_string_append(o, "-");
			g_string_append(o, "</td>");
		}
		g_string_append(o, "<td class=\"notes\">");
		esc(o, g->error ? g->error : "");
		if (g->error && g->notes->len)
			g_string_append(o, "; ");
		esc(o, g->notes->str);
		g_string_append(o, "</td><td class=\"feedback\">");
		if (g->feedback) {
			char *href = rel_link(path, g->feedback), *base = g_path_get_basename(g->feedback);

			g_string_append(o, "<a href=\"");
			esc(o, href);
			g_string_append(o, "\">");
			esc(o, base);
			g_string_append(o, "</a>");
			g_free(href);
			g_free(base);
		}
		g_string_append(o, "</td></tr>\n");
	}
	g_string_append(o, "</table>\n");

	g_string_append_printf(o, "<h2>Each check's pass rate (%u graded)</h2>\n<table id=\"rates\">\n"
				  "<tr><th>check</th><th>points</th><th>passed</th><th>graded</th><th>rate</th><th></th></tr>\n",
			       graded);
	for (guint i = 0; i < nc; i++) {
		const struct check *c = g_ptr_array_index(rb->checks, i);
		guint p = 0;
		int pct;

		for (guint k = 0; k < gs->len; k++) {
			const struct graded *g = &g_array_index(gs, struct graded, k);

			p += g->graded && g->oc[i] == O_PASS;
		}
		pct = graded ? (int)((p * 100 + graded / 2) / graded) : 0;
		g_string_append(o, "<tr class=\"rate\"><td class=\"check\">");
		esc(o, c->name);
		g_string_append_printf(o, "</td><td class=\"n\">%ld</td><td class=\"n passed\">%u</td>"
				       "<td class=\"n graded\">%u</td><td class=\"n pct\">%d%%</td>"
				       "<td><span class=\"bar\" style=\"width:%dpx\"></span></td></tr>\n",
				       c->points, p, graded, pct, pct * 2);
	}
	g_string_append(o, "</table>\n");

	g_string_append(o, "<h2>Scores (share of the maximum)</h2>\n<table id=\"scores\">\n"
			   "<tr><th>score</th><th>submissions</th><th></th></tr>\n");
	for (int b = 0; b <= 10; b++) {
		if (b < 10)
			g_string_append_printf(o, "<tr class=\"bucket\" data-from=\"%d\" data-to=\"%d\"><td>%d-%d%%</td>",
					       b * 10, b * 10 + 9, b * 10, b * 10 + 9);
		else
			g_string_append(o, "<tr class=\"bucket\" data-from=\"100\" data-to=\"100\"><td>100%</td>");
		g_string_append_printf(o, "<td class=\"n count\">%u</td><td><span class=\"bar\" style=\"width:%upx\"></span></td></tr>\n",
				       hist[b], hist[b] * 20);
	}
	g_string_append(o, "</table>\n<p>Made by qptrace grade.  Results: PASS, FAIL, NOT-IN-CAPTURE (the capture cannot show it), "
			   "NOT-CHECKED (a check it needs failed, or no RoCE packet was captured).</p>\n</body></html>\n");
	ok = qpt_write_file(path, o->str, o->len, &e);
	if (!ok) {
		*why = g_strdup(e->message);
		g_error_free(e);
	}
	g_string_free(o, TRUE);
	return ok;
}
