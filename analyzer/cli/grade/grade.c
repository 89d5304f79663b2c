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
 * A check is PASS, FAIL or NOT-IN-CAPTURE (the capture cannot show it:
 * filtered out, cut before, wrong link type); the rubric's missing= says
 * whether NOT-IN-CAPTURE scores as a failure or is left out of the score.
 * Class mode: --gradebook writes one CSV row per capture, --feedback one
 * text report per capture (the words of the report on stdout).
 *
 * Exit status: 0 when every capture passes every check, 1 when any check
 * fails, 2 on bad input (invalid rubric, or a capture that could not be
 * read: the others are still graded; a gradebook or feedback file that
 * could not be written).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grade.h"

/* ---- output -------------------------------------------------------------- */

static const char *const outcome_word[] = { "FAIL", "PASS", "NOT-IN-CAPTURE", "NOT-CHECKED" };
static const char *const outcome_json[] = { "fail", "pass", "not-in-capture", "not-checked" };

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

/* "KEY":[A,B] */
static void json_two(GString *o, const char *key, const char *a, const char *b)
{
	g_string_append_printf(o, "\"%s\":[", key);
	json_str(o, a);
	g_string_append_c(o, ',');
	json_str(o, b);
	g_string_append_c(o, ']');
}

/* The checks of rb run on a read capture: outcome, reason and frames of
 * each.  A check whose required check did not pass, or (any kind but
 * oob_tcp) on a capture without one RoCE/IB packet, is NOT-CHECKED. */
static void run_checks(const struct rubric *rb, const struct capture *cap, enum outcome *oc,
		       struct result *res)
{
	uint64_t data = 0; /* RoCE/IB packets that are not management (CM) MADs */

	for (guint i = 0; i < cap->frames->len; i++)
		data += !g_array_index(cap->frames, struct frec, i).mad;
	for (guint i = 0; i < rb->checks->len; i++) {
		const struct check *c = g_ptr_array_index(rb->checks, i);
		struct result *r = &res[i];
		guint need = G_MAXUINT;

		for (guint k = 0; c->req && k < c->req->len; k++)
			if (oc[g_array_index(c->req, guint, k)] != O_PASS) {
				need = g_array_index(c->req, guint, k);
				break;
			}
		if ((!cap->iba && c->kind != K_OOB_TCP) || need != G_MAXUINT) {
			r->reason = g_string_new("");
			r->frames = g_array_new(FALSE, FALSE, sizeof(uint64_t));
			if (!cap->iba && c->kind != K_OOB_TCP)
				g_string_append(r->reason, "not checked: no RoCE/IB packet in the capture");
			else
				g_string_append_printf(r->reason, "not checked: it needs %s, which did not pass",
						       ((const struct check *)g_ptr_array_index(rb->checks, need))->name);
			oc[i] = O_BLOCKED;
			continue;
		}
		grade_run_check(c, i, cap, r);
		oc[i] = r->pass ? O_PASS : r->missing ? O_MISSING : O_FAIL;
		/* "nothing wrong" among no data packet is no pass: the subject
		 * of the check is not in the capture */
		if (oc[i] == O_PASS && !data &&
		    (c->kind == K_NO_RETRANSMISSIONS || c->kind == K_NO_GAPS ||
		     c->kind == K_NO_VERDICT || (c->kind == K_ACKS && !c->present))) {
			g_string_printf(r->reason, "no RDMA data packet in the capture (%" PRIu64
					" RoCE/IB %s, all CM management): nothing to check",
					cap->iba, grade_plural(cap->iba, "packet", "packets"));
			r->pass = false;
			r->missing = true;
			oc[i] = O_MISSING;
		}
	}
}

/* What the capture shows when it has no RoCE/IB packet: the one root
 * cause, and what to do. */
static void no_roce_cause(GString *o, const struct capture *cap)
{
	if (!cap->nframes) {
		g_string_append(o, "the capture holds no frame at all: tcpdump was stopped before the lab ran, or wrote nothing (check its -i interface and that it ran as root)");
		return;
	}
	g_string_append_printf(o, "no RoCE/IB packet among %" PRIu64 " %s", cap->nframes,
			       grade_plural(cap->nframes, "frame", "frames"));
	if (cap->ntcp) {
		g_string_append(o, " (");
		grade_tcp_seen(o, cap);
		g_string_append_c(o, ')');
	}
	g_string_append(o, ": the RDMA traffic was not captured.  Capture on the network interface the RDMA device sends on (rdma link show: rxe0 on eth0 means -i eth0), with a filter that keeps RoCEv2 (UDP port 4791) and the TCP setup, e.g. tcpdump -i eth0 -w lab.pcap 'udp port 4791 or tcp', started before the programs run");
}

/* The first failed check to fix: one that others require, else the first
 * that failed; -1 none. */
static int fix_first(const struct rubric *rb, const enum outcome *oc)
{
	int first = -1;

	for (guint i = 0; i < rb->checks->len; i++) {
		if (oc[i] != O_FAIL && oc[i] != O_MISSING)
			continue;
		if (first < 0)
			first = (int)i;
		for (guint j = i + 1; j < rb->checks->len; j++) {
			const struct check *d = g_ptr_array_index(rb->checks, j);

			for (guint k = 0; d->req && k < d->req->len; k++)
				if (g_array_index(d->req, guint, k) == i)
					return (int)i;
		}
	}
	return first;
}

/* Which lab this is: the capture graded with every other shipped rubric
 * (their defaults); those it passes go into lab ("ib_write_bw -n 5 -s 3000
 * (rubric write_bw: 10/10)").  JSON: "looks_like" entries. */
static void guess_lab(GPtrArray *others, const struct opts *o, const char *file, GString *lab,
		      GString *json)
{
	long *score = g_new0(long, others ? others->len : 0), *max = g_new0(long, others ? others->len : 0);
	bool *pass = g_new0(bool, others ? others->len : 0);

	for (guint k = 0; others && k < others->len; k++) {
		const struct rubric *ob = g_ptr_array_index(others, k);
		guint nc = ob->checks->len;
		struct capture cap = { .file = file };
		enum outcome *oc = g_new0(enum outcome, nc);
		struct result *res = g_new0(struct result, nc);

		grade_read_capture(&cap, o, ob);
		if (cap.opened) {
			run_checks(ob, &cap, oc, res);
			pass[k] = true;
			for (guint i = 0; i < nc; i++) {
				const struct check *c = g_ptr_array_index(ob->checks, i);
				bool skip = oc[i] == O_MISSING && c->missing == MISSING_SKIP;

				if (!skip)
					max[k] += c->points;
				if (oc[i] == O_PASS)
					score[k] += c->points;
				else if (!skip)
					pass[k] = false;
				g_string_free(res[i].reason, TRUE);
				g_array_free(res[i].frames, TRUE);
			}
			pass[k] = pass[k] && max[k] > 0 && !cap.error;
		}
		g_free(oc);
		g_free(res);
		grade_capture_free(&cap, nc);
	}
	for (guint k = 0; others && k < others->len; k++) {
		const struct rubric *ob = g_ptr_array_index(others, k);
		char *base;

		if (!pass[k]) /* a rubric it fails says nothing about the lab */
			continue;
		base = g_path_get_basename(ob->file);
		if (g_str_has_suffix(base, ".ini"))
			base[strlen(base) - 4] = '\0';
		g_string_append_printf(lab, "%s%s (rubric %s: %ld/%ld)", lab->len ? " or " : "", ob->name,
				       base, score[k], max[k]);
		if (json) {
			g_string_append_printf(json, "%s{\"rubric\":", json->len ? "," : "");
			json_str(json, base);
			g_string_append(json, ",\"name\":");
			json_str(json, ob->name);
			g_string_append_printf(json, ",\"score\":%ld,\"max_score\":%ld,\"passes\":%s}",
					       score[k], max[k], pass[k] ? "true" : "false");
		}
		g_free(base);
	}
	g_free(score);
	g_free(max);
	g_free(pass);
}

/* Grades one capture: its text block (always: stdout or feedback) and,
 * when json is not NULL, its JSON object. */
static void grade_one(const struct rubric *rb, const struct opts *o, const struct submission *sub,
		      GPtrArray *others, struct graded *g, GString *txt, GString *json, bool first)
{
	const char *file = sub->path;
	struct capture cap = { .file = file };
	guint nc = rb->checks->len;
	struct result *res;
	int fix;

	g->file = g_strdup(file);
	g->points = g_new(long, nc);
	g->oc = g_new0(enum outcome, nc);
	g->notes = g_string_new("");
	g->lab = g_string_new("");
	for (guint i = 0; i < nc; i++)
		g->points[i] = -1;
	if (sub->error) /* a file or folder that cannot be opened */
		cap.error = g_strdup(sub->error);
	else
		grade_read_capture(&cap, o, rb);
	if (cap.error)
		g->error = g_strdup(cap.error);
	if (json) {
		g_string_append_printf(json, "%s{\"file\":", first ? "" : ",");
		json_str(json, file);
		if (g->student) {
			g_string_append(json, ",\"student\":");
			json_str(json, g->student);
		}
	}
	g_string_append_printf(txt, "== %s\n", file);
	if (!cap.opened) {
		if (json) {
			g_string_append(json, ",\"result\":\"error\",\"error\":");
			json_str(json, cap.error);
			g_string_append_printf(json, ",\"score\":null,\"max_score\":%ld,\"checks\":[]}",
					       rb->max_points);
		}
		g_string_append_printf(txt, "  ERROR  cannot read the capture: %s\n\n", cap.error);
		grade_capture_free(&cap, nc);
		return;
	}
	g->graded = true;
	g->max = rb->max_points;
	g->iba = cap.iba;
	g->sum_frames = g_strdup(cap.sum_frames);
	g->sum_roce = g_strdup(cap.sum_roce);
	res = g_new0(struct result, nc);
	run_checks(rb, &cap, g->oc, res);
	if (json)
		g_string_append_printf(json, ",\"frames\":%" PRIu64 ",\"roce_ib_packets\":%" PRIu64
				       ",\"conversations\":%u",
				       cap.nframes, cap.iba, cap.convs->len);
	/* which lab this is, when it fails this one */
	{
		long mx = 0;
		bool ok = true;

		for (guint i = 0; i < nc; i++) {
			const struct check *c = g_ptr_array_index(rb->checks, i);
			bool skip = g->oc[i] == O_MISSING && c->missing == MISSING_SKIP;

			mx += skip ? 0 : c->points;
			ok = ok && (skip || g->oc[i] == O_PASS);
		}
		if ((!ok || !mx) && cap.iba) {
			GString *lj = g_string_new("");

			guess_lab(others, o, file, g->lab, lj);
			if (g->lab->len) {
				g_string_append_printf(txt, "  LAB  this looks like %s, not %s\n", g->lab->str,
						       rb->name);
				g_string_append_printf(g->notes, "%slooks like %s", g->notes->len ? "; " : "",
						       g->lab->str);
			}
			if (json)
				g_string_append_printf(json, ",\"looks_like\":[%s]", lj->str);
			g_string_free(lj, TRUE);
		}
	}
	/* the fix first: the root cause, what to do, the frames to look at */
	fix = fix_first(rb, g->oc);
	if (!cap.iba) {
		GString *why = g_string_new("");

		no_roce_cause(why, &cap);
		g_string_append_printf(txt, "  START HERE  %s\n", why->str);
		if (json) {
			g_string_append(json, ",\"fix_first\":{\"check\":null,\"what\":");
			json_str(json, why->str);
			g_string_append(json, ",\"frames\":[]}");
		}
		g_string_free(why, TRUE);
	} else if (fix >= 0) {
		const struct check *c = g_ptr_array_index(rb->checks, (guint)fix);
		struct result *r = &res[fix];

		g_string_append_printf(txt, "  START HERE  %s: %s\n", c->name, r->reason->str);
		if (c->explain)
			g_string_append_printf(txt, "              what the lab does: %s\n", c->explain);
		if (r->frames->len) {
			GString *f = g_string_new("");

			grade_fmt_frames(f, r->frames);
			g_string_append_printf(txt, "              look at %s in Wireshark (Go > Go to Packet)\n",
					       f->str);
			g_string_free(f, TRUE);
		}
		if (json) {
			g_string_append(json, ",\"fix_first\":{\"check\":");
			json_str(json, c->name);
			g_string_append(json, ",\"what\":");
			json_str(json, r->reason->str);
			g_string_append(json, ",\"frames\":");
			json_frames(json, r->frames);
			g_string_append_c(json, '}');
		}
	}
	if (json)
		g_string_append(json, ",\"checks\":[");
	for (guint i = 0; i < nc; i++) {
		const struct check *c = g_ptr_array_index(rb->checks, i);
		struct result *r = &res[i];
		enum outcome oc = g->oc[i];
		bool skip;
		long got;

		skip = oc == O_MISSING && c->missing == MISSING_SKIP;
		got = oc == O_PASS ? c->points : 0;
		g->score += got;
		g->passed += oc == O_PASS;
		g->missing += oc == O_MISSING;
		g->blocked += oc == O_BLOCKED;
		if (skip) {
			g->skipped++;
			g->max -= c->points;
		} else {
			g->points[i] = got;
		}
		if (oc == O_MISSING)
			g_string_append_printf(g->notes, "%s%s not in the capture%s", g->notes->len ? "; " : "",
					       c->name, skip ? " (not scored)" : " (scored as failed)");
		if (json) {
			g_string_append_printf(json, "%s{\"name\":", i ? "," : "");
			json_str(json, c->name);
			g_string_append_printf(json, ",\"kind\":\"%s\",\"result\":\"%s\",\"scored\":%s,\"points\":%ld,\"max_points\":%ld,\"reason\":",
					       grade_kinds[c->kind].name, outcome_json[oc],
					       skip ? "false" : "true", got, c->points);
			json_str(json, r->reason->str);
			g_string_append(json, ",\"frames\":");
			json_frames(json, r->frames);
			g_string_append(json, ",\"explain\":");
			json_str(json, c->explain);
			g_string_append_c(json, '}');
		}
		if (skip)
			g_string_append_printf(txt, "  %s  -/%ld  %s: %s (not scored: missing=skip)\n",
					       outcome_word[oc], c->points, c->name, r->reason->str);
		else
			g_string_append_printf(txt, "  %s  %ld/%ld  %s: %s\n", outcome_word[oc], got,
					       c->points, c->name, r->reason->str);
		if (oc == O_FAIL && c->explain && (int)i != fix)
			g_string_append_printf(txt, "              why it matters: %s\n", c->explain);
		else if (oc == O_MISSING && !skip)
			g_string_append_printf(txt, "              scored as failed (missing=fail)%s%s\n",
					       c->explain && (int)i != fix ? "; why it matters: " : "",
					       c->explain && (int)i != fix ? c->explain : "");
		g_string_free(r->reason, TRUE);
		g_array_free(r->frames, TRUE);
	}
	g_free(res);
	/* Nothing graded at all is not a pass. */
	g->pass = g->passed + g->skipped == nc && g->skipped < nc && !cap.error;
	if (json) {
		g_string_append_printf(json, "],\"score\":%ld,\"max_score\":%ld,\"checks_passed\":%u,\"checks_total\":%u,\"checks_not_in_capture\":%u,\"checks_skipped\":%u,\"checks_not_checked\":%u,\"result\":\"%s\",\"error\":",
				       g->score, g->max, g->passed, nc, g->missing, g->skipped, g->blocked,
				       cap.error ? "error" : g->pass ? "pass" : "fail");
		json_str(json, cap.error);
		g_string_append_c(json, '}');
	}
	if (cap.error)
		g_string_append_printf(txt, "  ERROR  the capture was not read to its end: %s\n", cap.error);
	g_string_append_printf(txt, "  score %ld/%ld, %u of %u checks passed", g->score, g->max,
			       g->passed, nc - g->skipped);
	if (g->missing)
		g_string_append_printf(txt, ", %u not in the capture%s", g->missing,
				       g->skipped == g->missing ? " (not scored)" :
				       g->skipped ? " (some not scored)" : "");
	if (g->blocked)
		g_string_append_printf(txt, ", %u not checked", g->blocked);
	g_string_append_printf(txt, ": %s\n\n", cap.error ? "ERROR" : g->pass ? "PASS" : "FAIL");
	grade_capture_free(&cap, nc);
}

/* Writes the whole of text to path (outfile.c: complete or not at all);
 * false and *why on failure. */
static bool write_file(const char *path, const GString *text, char **why)
{
	GError *e = NULL;

	if (qpt_write_file(path, text->str, text->len, &e))
		return true;
	*why = g_strdup(e->message);
	g_error_free(e);
	return false;
}

static void header_text(GString *o, const struct rubric *rb)
{
	g_string_append_printf(o, "rubric %s: %s (%u checks, %ld points)\n", rb->file, rb->name,
			       rb->checks->len, rb->max_points);
	if (rb->description && *rb->description)
		g_string_append_printf(o, "  %s\n", rb->description);
	if (rb->command)
		g_string_append_printf(o, "  command: %s\n", rb->command);
	if (rb->params.list->len) {
		g_string_append(o, "  parameters:");
		for (guint i = 0; i < rb->params.list->len; i++) {
			const struct grade_param *p = g_ptr_array_index(rb->params.list, i);

			g_string_append_printf(o, "%s %s=%s (%s)", i ? "," : "", p->name, p->value, p->from);
		}
		g_string_append_c(o, '\n');
	}
	if (rb->not_checked->len)
		g_string_append_printf(o, "  not checked for these parameters: %s\n", rb->not_checked->str);
	g_string_append_c(o, '\n');
}

int cmd_grade(struct opts *o)
{
	struct grade_overrides ov = { .command = o->command, .sets = o->sets };
	struct rubric *rb = NULL;
	struct class_files cf = { 0 };
	GArray *gs;
	GString *out, *txt, *header;
	GRegex *re = NULL;
	GHashTable *fb_used = NULL;
	GPtrArray *fb_paths = NULL; /* --feedback: the file of each capture */
	struct qpt_inputs *inputs = NULL;
	struct qpt_outfile *book = NULL;
	char *path = NULL, *write_error = NULL;
	bool bad = false;
	guint npass = 0, nfail = 0, nerr = 0, ngraded = 0;
	GPtrArray *students = NULL; /* per submission */
	GPtrArray *others = NULL;   /* the other shipped rubrics (which lab is this) */
	GPtrArray *copies;	    /* triples: index, index (as pointers), what is the same */
	size_t w = 7;
	int status = 2;

	if ((o->lint || o->init_from) && o->files && o->files[0]) {
		g_printerr("qptrace grade: %s takes no capture to grade ('%s')\n",
			   o->lint ? "--lint" : "--init-from", o->files[0]);
		return 2;
	}
	if (o->lint) {
		char *lp = grade_find_rubric(o->lint);

		status = lp ? grade_lint(lp, &ov) : 2;
		g_free(lp);
		return status;
	}
	if (o->init_from) {
		status = grade_init_from(o->init_from, o->command, o);
		return status;
	}
	if (!o->rubric) {
		g_printerr("qptrace grade: no rubric given: --rubric FILE or --rubric NAME (a shipped rubric, see rubrics/)\n");
		return 2;
	}
	if (o->student_pattern) {
		GError *e = NULL;

		re = g_regex_new(o->student_pattern, 0, 0, &e);
		if (!re) {
			g_printerr("qptrace grade: --student-pattern '%s': %s\n", o->student_pattern, e->message);
			g_error_free(e);
			return 2;
		}
		if (g_regex_get_capture_count(re) < 1) {
			g_printerr("qptrace grade: --student-pattern '%s' has no group: put the student id in ( )\n",
				   o->student_pattern);
			g_regex_unref(re);
			return 2;
		}
	}
	path = grade_find_rubric(o->rubric);
	if (path)
		rb = grade_rubric_load(path, &ov);
	if (!rb) {
		g_free(path);
		if (re)
			g_regex_unref(re);
		return 2;
	}
	/* which lab a failing capture is: for a lab's rubric (tool=, or a
	 * shipped one), not for one made to check a property */
	if (rb->tool || grade_rubric_shipped(path))
		others = grade_load_others(path, rb);
	grade_find_submissions(&cf, o->files);
	for (guint i = 0; i < cf.empty->len; i++)
		g_printerr("qptrace grade: %s: no capture in this folder (nor below it)\n",
			   (char *)g_ptr_array_index(cf.empty, i));
	bad = cf.empty->len > 0;
	if (!cf.subs->len) {
		status = 2;
		goto done_early;
	}
	/* Class mode outputs: none may be a capture or the rubric (checked
	 * before anything is written), and they fail before grading 200
	 * captures, not after. */
	inputs = qpt_inputs_new();
	qpt_inputs_add(inputs, path);
	for (guint i = 0; i < cf.subs->len; i++)
		qpt_inputs_add(inputs, g_array_index(cf.subs, struct submission, i).path);
	if (o->gradebook && qpt_output_names_input(inputs, "grade", "--gradebook", o->gradebook))
		goto done_early;
	if (o->html && qpt_output_names_input(inputs, "grade", "--html", o->html))
		goto done_early;
	students = g_ptr_array_new_with_free_func(g_free);
	for (guint i = 0; i < cf.subs->len; i++)
		g_ptr_array_add(students, grade_student_of(&g_array_index(cf.subs, struct submission, i),
							   re, o->quiet));
	if (o->feedback) {
		fb_used = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
		fb_paths = g_ptr_array_new_with_free_func(g_free);
		for (guint i = 0; i < cf.subs->len; i++) {
			char *fp = grade_feedback_path(o->feedback,
						       &g_array_index(cf.subs, struct submission, i),
						       g_ptr_array_index(students, i), fb_used);

			g_ptr_array_add(fb_paths, fp);
			if (qpt_output_names_input(inputs, "grade", "--feedback", fp))
				goto done_early;
		}
		if (g_mkdir_with_parents(o->feedback, 0777) != 0 ||
		    !g_file_test(o->feedback, G_FILE_TEST_IS_DIR) || access(o->feedback, W_OK) != 0) {
			g_printerr("qptrace grade: --feedback %s: cannot write into this directory: %s\n",
				   o->feedback, g_strerror(errno));
			goto done_early;
		}
	}
	if (o->gradebook) {
		GError *e = NULL;

		/* made now (a temporary file beside it), in place at the end */
		book = qpt_outfile_open(o->gradebook, &e);
		if (!book) {
			g_printerr("qptrace grade: --gradebook %s: cannot write the gradebook: %s\n",
				   o->gradebook, e->message);
			g_error_free(e);
			goto done_early;
		}
	}
	out = g_string_sized_new(1 << 14);
	txt = g_string_sized_new(1 << 14);
	header = g_string_new("");
	header_text(header, rb);
	gs = g_array_new(FALSE, TRUE, sizeof(struct graded));
	g_array_set_size(gs, cf.subs->len);
	if (o->json) {
		g_string_append(out, "{\"rubric\":{\"file\":");
		json_str(out, rb->file);
		g_string_append(out, ",\"name\":");
		json_str(out, rb->name);
		g_string_append(out, ",\"description\":");
		json_str(out, rb->description);
		g_string_append(out, ",\"command\":");
		json_str(out, rb->command);
		g_string_append(out, ",\"parameters\":{");
		for (guint i = 0; i < rb->params.list->len; i++) {
			const struct grade_param *p = g_ptr_array_index(rb->params.list, i);

			g_string_append(out, i ? "," : "");
			json_str(out, p->name);
			g_string_append(out, ":{\"value\":");
			json_str(out, p->value);
			g_string_append(out, ",\"from\":");
			json_str(out, p->from);
			g_string_append_c(out, '}');
		}
		g_string_append_printf(out, "},\"max_score\":%ld,\"checks\":%u},\"captures\":[",
				       rb->max_points, rb->checks->len);
	} else {
		g_string_append(out, header->str);
	}
	for (guint i = 0; i < cf.subs->len; i++) {
		struct graded *g = &g_array_index(gs, struct graded, i);
		const struct submission *sub = &g_array_index(cf.subs, struct submission, i);

		g->student = g_strdup(g_ptr_array_index(students, i));
		g_string_truncate(txt, 0);
		grade_one(rb, o, sub, others, g, txt, o->json ? out : NULL, i == 0);
		g->txt = g_string_new(txt->str);
		if (g->graded)
			g->sum_bytes = grade_file_sha256(sub->path);
		if (!o->json)
			g_string_append(out, txt->str);
		ngraded += g->graded;
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
	copies = grade_find_copies(gs);
	if (o->json) {
		g_string_append(out, "],\"copies\":[");
		for (guint i = 0; i < copies->len; i += 3) {
			const struct graded *a = &g_array_index(gs, struct graded, GPOINTER_TO_UINT(g_ptr_array_index(copies, i)));
			const struct graded *b = &g_array_index(gs, struct graded, GPOINTER_TO_UINT(g_ptr_array_index(copies, i + 1)));

			g_string_append(out, i ? ",{" : "{");
			json_two(out, "files", a->file, b->file);
			g_string_append_c(out, ',');
			json_two(out, "students", a->student, b->student);
			g_string_append(out, ",\"same\":");
			json_str(out, g_ptr_array_index(copies, i + 2));
			g_string_append_c(out, '}');
		}
	}
	for (guint i = 0; fb_paths && !write_error && i < gs->len; i++) {
		struct graded *g = &g_array_index(gs, struct graded, i);
		const char *fp = g_ptr_array_index(fb_paths, i);
		char *why = NULL;
		GString *doc = g_string_new(header->str);

		g_string_append(doc, g->txt->str);
		if (g->copy_note)
			g_string_append_printf(doc, "  COPY  %s\n\n", g->copy_note->str);
		grade_glossary(doc, doc->str);
		g->feedback = g_strdup(fp);
		if (!write_file(fp, doc, &why)) {
			write_error = g_strdup_printf("--feedback: cannot write %s: %s", fp, why);
			g_free(why);
		}
		g_string_free(doc, TRUE);
	}
	if (o->json) {
		g_string_append_printf(out, "],\"totals\":{\"copies\":%u,\"captures\":%u,\"passed\":%u,\"failed\":%u,\"errors\":%u,\"found\":%u,\"graded\":%u,\"unreadable\":%u,\"not_captures\":%u}}\n",
				       copies->len / 3, cf.subs->len, npass, nfail, nerr, cf.subs->len, ngraded,
				       cf.subs->len - ngraded, cf.skipped->len);
	} else {
		for (guint i = 0; i < copies->len; i += 3)
			g_string_append_printf(out, "COPY  %s and %s: %s\n",
					       g_array_index(gs, struct graded, GPOINTER_TO_UINT(g_ptr_array_index(copies, i))).file,
					       g_array_index(gs, struct graded, GPOINTER_TO_UINT(g_ptr_array_index(copies, i + 1))).file,
					       (char *)g_ptr_array_index(copies, i + 2));
		g_string_append_printf(out, "totals (%s):\n  %-*s  %9s  %7s  %s\n", rb->name, (int)w,
				       "capture", "score", "checks", "result");
		for (guint i = 0; i < gs->len; i++) {
			struct graded *g = &g_array_index(gs, struct graded, i);
			char score[32] = "-", checks[32] = "-";

			if (g->graded) {
				g_snprintf(score, sizeof(score), "%ld/%ld", g->score, g->max);
				g_snprintf(checks, sizeof(checks), "%u/%u", g->passed,
					   rb->checks->len - g->skipped);
			}
			g_string_append_printf(out, "  %-*s  %9s  %7s  %s%s%s\n", (int)w, g->file, score,
					       checks,
					       g->error ? "ERROR" : g->pass ? "PASS" : "FAIL",
					       g->error ? ": " : "", g->error ? g->error : "");
		}
		g_string_append_printf(out, "  %u %s: %u passed, %u failed, %u unreadable\n",
				       cf.subs->len, grade_plural(cf.subs->len, "capture", "captures"), npass,
				       nfail, nerr);
		g_string_append_printf(out, "  found %u %s: %u graded", cf.subs->len,
				       grade_plural(cf.subs->len, "submission", "submissions"), ngraded);
		if (nerr > cf.subs->len - ngraded)
			g_string_append_printf(out, " (%u of them not to the end)",
					       nerr - (cf.subs->len - ngraded));
		g_string_append_printf(out, ", %u that could not be read", cf.subs->len - ngraded);
		if (cf.skipped->len) {
			g_string_append_printf(out, "; %u other %s not graded (not a capture):",
					       cf.skipped->len, grade_plural(cf.skipped->len, "file", "files"));
			for (guint i = 0; i < cf.skipped->len; i++)
				g_string_append_printf(out, "%s %s", i ? "," : "",
						       (char *)g_ptr_array_index(cf.skipped, i));
		}
		g_string_append_c(out, '\n');
	}
	fwrite(out->str, 1, out->len, stdout);
	fflush(stdout);
	if (book && !write_error) {
		GString *csv = grade_gradebook_csv(rb, gs);
		GError *e = NULL;

		fwrite(csv->str, 1, csv->len, qpt_outfile_stream(book));
		if (!qpt_outfile_commit(book, &e)) {
			write_error = g_strdup_printf("--gradebook: cannot write %s: %s", o->gradebook,
						      e->message);
			g_error_free(e);
		}
		book = NULL;
		g_string_free(csv, TRUE);
	}
	if (o->html && !write_error) {
		char *why = NULL;

		if (!grade_html(o->html, rb, gs, cf.subs->len, cf.subs->len - ngraded, cf.skipped->len,
				copies->len / 3, &why)) {
			write_error = g_strdup_printf("--html: cannot write %s: %s", o->html, why);
			g_free(why);
		}
	}
	if (write_error)
		g_printerr("qptrace grade: %s\n", write_error);
	for (guint i = 0; i < gs->len; i++) {
		struct graded *g = &g_array_index(gs, struct graded, i);

		g_free(g->file);
		g_free(g->error);
		g_free(g->student);
		g_free(g->points);
		g_free(g->oc);
		g_free(g->sum_bytes);
		g_free(g->sum_frames);
		g_free(g->sum_roce);
		g_free(g->feedback);
		if (g->notes)
			g_string_free(g->notes, TRUE);
		if (g->txt)
			g_string_free(g->txt, TRUE);
		if (g->lab)
			g_string_free(g->lab, TRUE);
		if (g->copy_note)
			g_string_free(g->copy_note, TRUE);
	}
	g_ptr_array_free(copies, TRUE);
	g_array_free(gs, TRUE);
	g_string_free(out, TRUE);
	g_string_free(txt, TRUE);
	g_string_free(header, TRUE);
	if (bad || nerr || write_error)
		status = 2;
	else
		status = nfail ? 1 : 0;
	g_free(write_error);
done_early:
	qpt_outfile_abort(book); /* not written: the temporary file removed */
	qpt_inputs_free(inputs);
	grade_class_files_clear(&cf);
	if (students)
		g_ptr_array_free(students, TRUE);
	if (fb_paths)
		g_ptr_array_free(fb_paths, TRUE);
	g_free(path);
	if (fb_used)
		g_hash_table_destroy(fb_used);
	if (re)
		g_regex_unref(re);
	grade_rubric_free(rb);
	if (others)
		g_ptr_array_free(others, TRUE);
	return status;
}
