/* grade_book.c - `qptrace grade` in class mode: the CSV gradebook
 * (--gradebook) and the submissions that are copies of each other */
#include <stdbool.h>
#include <string.h>

#include "grade.h"

/* One CSV field (RFC 4180): quoted when it holds a comma, a quote, CR or
 * LF, or starts or ends with a space; quotes doubled.  Text a spreadsheet
 * would run as a formula (OWASP's CSV injection rule: a first character
 * =, +, -, @, tab or CR; student ids come from file names such as
 * =1+2.pcap) is written as text, behind a ' that the spreadsheet does not
 * show.  Numbers are written by csv_long(), as they are. */
static void csv_cell(GString *o, const char *s, bool first, bool text)
{
	bool formula;

	if (!first)
		g_string_append_c(o, ',');
	if (!s)
		return;
	formula = text && s[0] && strchr("=+-@\t\r", s[0]);
	if (strpbrk(s, ",\"\r\n") || s[0] == ' ' || (*s && s[strlen(s) - 1] == ' ')) {
		g_string_append_c(o, '"');
		if (formula)
			g_string_append_c(o, '\'');
		for (const char *p = s; *p; p++) {
			if (*p == '"')
				g_string_append_c(o, '"');
			g_string_append_c(o, *p);
		}
		g_string_append_c(o, '"');
	} else {
		if (formula)
			g_string_append_c(o, '\'');
		g_string_append(o, s);
	}
}

static void csv_field(GString *o, const char *s, bool first)
{
	csv_cell(o, s, first, true);
}

static void csv_long(GString *o, long v)
{
	char buf[32];

	g_snprintf(buf, sizeof buf, "%ld", v);
	csv_cell(o, buf, false, false);
}

GString *grade_gradebook_csv(const struct rubric *rb, GArray *gs)
{
	GString *o = g_string_new("");

	csv_field(o, "file", true);
	csv_field(o, "student", false);
	csv_field(o, "score", false);
	csv_field(o, "maximum", false);
	csv_field(o, "result", false);
	for (guint i = 0; i < rb->checks->len; i++)
		csv_field(o, ((const struct check *)g_ptr_array_index(rb->checks, i))->name, false);
	csv_field(o, "notes", false);
	g_string_append(o, "\r\n");
	for (guint k = 0; k < gs->len; k++) {
		const struct graded *g = &g_array_index(gs, struct graded, k);

		csv_field(o, g->file, true);
		csv_field(o, g->student, false);
		if (g->graded) {
			csv_long(o, g->score);
			csv_long(o, g->max);
		} else {
			csv_field(o, "", false);
			csv_long(o, rb->max_points);
		}
		csv_field(o, g->error ? "ERROR" : g->pass ? "PASS" : "FAIL", false);
		for (guint i = 0; i < rb->checks->len; i++) {
			if (g->graded && g->points[i] >= 0)
				csv_long(o, g->points[i]);
			else
				csv_field(o, "", false);
		}
		if (g->error) {
			char *n = g_strdup_printf("%s%serror: %s", g->notes ? g->notes->str : "",
						  g->notes && g->notes->len ? "; " : "", g->error);

			csv_field(o, n, false);
			g_free(n);
		} else {
			csv_field(o, g->notes ? g->notes->str : "", false);
		}
		g_string_append(o, "\r\n");
	}
	return o;
}

/* Submissions of different students that are the same: the same bytes,
 * the same frames (times and bytes: a recompressed or converted copy), or
 * the same RoCE/IB packets.  Each pair named in both rows' notes and
 * copy_note; returned as triples (index, index, what is the same). */
GPtrArray *grade_find_copies(GArray *gs)
{
	GPtrArray *out = g_ptr_array_new();

	for (guint i = 0; i < gs->len; i++) {
		struct graded *a = &g_array_index(gs, struct graded, i);

		for (guint j = i + 1; a->graded && j < gs->len; j++) {
			struct graded *b = &g_array_index(gs, struct graded, j);
			const char *same = NULL;

			if (!b->graded || !g_strcmp0(a->student, b->student))
				continue;
			if (a->sum_bytes && !g_strcmp0(a->sum_bytes, b->sum_bytes))
				same = "the same bytes";
			else if (!g_strcmp0(a->sum_frames, b->sum_frames))
				same = "the same frames and times (the file recompressed or converted)";
			else if (a->iba && a->iba == b->iba && !g_strcmp0(a->sum_roce, b->sum_roce))
				same = "the same RoCE/IB packets and times";
			if (!same)
				continue;
			g_ptr_array_add(out, GUINT_TO_POINTER(i));
			g_ptr_array_add(out, GUINT_TO_POINTER(j));
			g_ptr_array_add(out, (gpointer)same);
			for (int k = 0; k < 2; k++) {
				struct graded *x = k ? b : a, *y = k ? a : b;

				if (!x->copy_note)
					x->copy_note = g_string_new("");
				g_string_append_printf(x->copy_note, "%s%s as %s (student %s)",
						       x->copy_note->len ? "; " : "", same, y->file,
						       y->student ? y->student : "?");
				g_string_append_printf(x->notes, "%scopy: %s as %s (student %s)",
						       x->notes->len ? "; " : "", same, y->file,
						       y->student ? y->student : "?");
			}
		}
	}
	return out;
}
