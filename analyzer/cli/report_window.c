/* report_window.c - summary --interval, --from/--to and plot --timeline: the
 * intervals' and the window's counts, the conversations as the window
 * shows them, the capture per interval as SVG panels
 * (report.c's parts share report_int.h)
 */
#include "report_int.h"

/* Intervals twice as long: each the sum of two. */
void intervals_double(struct run *r)
{
	guint n = (r->intervals->len + 1) / 2;

	for (guint i = 0; i < n; i++) {
		struct interval *to = &g_array_index(r->intervals, struct interval, i);
		const struct interval *a = &g_array_index(r->intervals, struct interval, 2 * i);
		struct interval sum = *a;

		if (2 * i + 1 < r->intervals->len) {
			const struct interval *b = &g_array_index(r->intervals, struct interval, 2 * i + 1);

			sum.packets += b->packets;
			sum.pauses += b->pauses;
			for (unsigned k = 0; k < QPT_VB_COUNT; k++)
				sum.ev[k] += b->ev[k];
		}
		*to = sum;
	}
	g_array_set_size(r->intervals, n);
	r->interval_ns *= 2;
}

struct interval *interval_at(struct run *r, int64_t ns)
{
	int64_t k = (ns - r->an.t0) / r->interval_ns;

	while (r->interval_auto && k >= 512 && r->interval_ns < INT64_MAX / 4) {
		intervals_double(r);
		k = (ns - r->an.t0) / r->interval_ns;
	}
	if (ns < r->an.t0 || k > (int64_t)G_MAXUINT32 - 1)
		k = 0; /* before the first frame (time going back): the first */
	if ((guint)k >= r->intervals->len)
		g_array_set_size(r->intervals, (guint)k + 1);
	return &g_array_index(r->intervals, struct interval, k);
}

/* ---- summary --interval -------------------------------------------------- */

/* The table's columns: the events of a kind (as `events` names them). */
static const struct {
	unsigned kind;
	const char *title;
} interval_col[] = {
	{ QPT_VB_RETRANSMISSION, "re-sent" }, { QPT_VB_PSN_GAP, "PSN gaps" },
	{ QPT_VB_NAK, "NAKs" }, { QPT_VB_RNR_NAK, "RNR NAKs" }, { QPT_VB_CNP, "CNPs" },
	{ QPT_VB_ECN_CE, "ECN-CE" },
};

void interval_text(struct run *r)
{
	GString *o = r->out;
	char d[48];

	if (!r->intervals || !r->an.have_t0)
		return;
	qpt_appendf(o, "intervals of %s from ", qpt_format_duration(r->interval_ns, d, sizeof(d)));
	qpt_format_iso(o, r->an.t0, true);
	qpt_appendf(o, "%s:\n%12s %10s", r->window ? " (the window's frames and events)" : "",
		    "start (s)", "packets");
	for (unsigned c = 0; c < G_N_ELEMENTS(interval_col); c++)
		qpt_appendf(o, " %9s", interval_col[c].title);
	qpt_appendf(o, " %9s\n", "pauses");
	for (guint i = 0; i < r->intervals->len; i++) {
		const struct interval *iv = &g_array_index(r->intervals, struct interval, i);

		qpt_appendf(o, "%12.6f %10" PRIu64, (double)i * (double)r->interval_ns / 1e9,
			    iv->packets);
		for (unsigned c = 0; c < G_N_ELEMENTS(interval_col); c++)
			qpt_appendf(o, " %9" PRIu64, iv->ev[interval_col[c].kind]);
		qpt_appendf(o, " %9" PRIu64 "\n", iv->pauses);
		spill(r);
	}
	g_string_append_c(o, '\n');
}

/* {kind: count} of the kinds that have any */
static void json_event_counts(GString *o, const uint64_t ev[QPT_VB_COUNT])
{
	bool first = true;

	g_string_append_c(o, '{');
	for (unsigned k = 0; k < QPT_VB_COUNT; k++) {
		if (!ev[k])
			continue;
		qpt_appendf(o, "%s\"%s\":%" PRIu64, first ? "" : ",", qpt_verdicts[k].key, ev[k]);
		first = false;
	}
	g_string_append_c(o, '}');
}

void interval_json(struct run *r)
{
	GString *o = r->out;

	if (!r->intervals)
		return;
	qpt_appendf(o, ",\"intervals\":{\"seconds\":%.9g,\"start\":", (double)r->interval_ns / 1e9);
	if (r->an.have_t0) {
		g_string_append_c(o, '"');
		qpt_format_iso(o, r->an.t0, true);
		g_string_append_c(o, '"');
	} else {
		g_string_append(o, "null");
	}
	qpt_appendf(o, ",\"window\":%s,\"rows\":[", r->window ? "true" : "false");
	for (guint i = 0; i < r->intervals->len; i++) {
		const struct interval *iv = &g_array_index(r->intervals, struct interval, i);

		qpt_appendf(o, "%s{\"start_s\":%.9f,\"packets\":%" PRIu64 ",\"pauses\":%" PRIu64
			    ",\"events\":", i ? "," : "", (double)i * (double)r->interval_ns / 1e9,
			    iv->packets, iv->pauses);
		json_event_counts(o, iv->ev);
		g_string_append_c(o, '}');
		spill(r);
	}
	g_string_append(o, "]}");
}

/* --from/--to: the window's own line (what follows on it, the re-sent
 * share, and the rest of the summary count the window too). */
void window_text(struct run *r, guint nconvs)
{
	GString *o = r->out;

	g_string_append(o, "window: ");
	if (r->win_span) {
		qpt_format_iso(o, r->win_first, true);
		g_string_append(o, " to ");
		qpt_format_iso(o, r->win_last, true);
		g_string_append(o, ", ");
	}
	qpt_appendf(o, "%" PRIu64 " packets", r->win->packets);
	for (unsigned c = 0; c < G_N_ELEMENTS(interval_col); c++)
		qpt_appendf(o, ", %" PRIu64 " %s", r->win->ev[interval_col[c].kind],
			    interval_col[c].title);
	qpt_appendf(o, ", %" PRIu64 " pauses, %u %s in the window (--from/--to); this line, the "
		       "diagnosis, the table and the totals count its frames and events "
		       "(conversation ids and go-back-N episodes from the whole input)",
		    r->win->pauses, nconvs, nconvs == 1 ? "conversation" : "conversations");
}

/* (with it, every count of the document is the window's) */
void window_json(struct run *r, guint nconvs)
{
	GString *o = r->out;

	if (!r->win)
		return;
	qpt_appendf(o, ",\"window\":{\"packets\":%" PRIu64 ",\"pauses\":%" PRIu64
		    ",\"conversations\":%u", r->win->packets, r->win->pauses, nconvs);
	if (r->win_span) {
		json_time(o, "first_frame", r->win_first);
		json_time(o, "last_frame", r->win_last);
	} else {
		g_string_append(o, ",\"first_frame\":null,\"last_frame\":null");
	}
	g_string_append(o, ",\"events\":");
	json_event_counts(o, r->win->ev);
	g_string_append_c(o, '}');
}

/* In the summary: selected, and with a frame in the window when there is
 * one (ids seen during the reading may have been folded since). */
bool in_window(const struct run *r, const struct qpt_conv_ident *c)
{
	return !r->window || ((guint)c->id < r->seen_final->len &&
			      g_array_index(r->seen_final, gboolean, c->id));
}

bool shown_conv(const struct run *r, const struct qpt_conv_ident *c)
{
	return conv_selected(r, c) && in_window(r, c);
}

/* The window's counts of conversation id as it is at the end: those of the
 * ids folded into it added up. */
void window_fold(struct run *r)
{
	GHashTableIter it;
	gpointer k, val;

	struct qpt_totals w = r->wtot;

	/* the window's totals: what it counted, the rest the engine's */
	r->wtot = *qpt_flow_totals(r->fl);
	r->wtot.frames = w.frames;
	r->wtot.iba_packets = w.iba_packets;
	r->wtot.management = w.management;
	r->wtot.malformed = w.malformed;
	r->wtot.bad_icrc = w.bad_icrc;
	r->wtot.fragmented_roce_packets = w.fragmented_roce_packets;
	r->wtot.time_backwards = w.time_backwards;
	r->wtot.cm_unknown_comm_id = w.cm_unknown_comm_id;
	r->wtot.cm_rejects = w.cm_rejects;
	r->wfinal = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
	g_hash_table_iter_init(&it, r->wconvs);
	while (g_hash_table_iter_next(&it, &k, &val)) {
		int32_t now = qpt_flow_conv_id(r->fl, GPOINTER_TO_INT(k));
		const struct wconv *src = val;

		for (int d = 0; d < 2 && now >= 0; d++) {
			const struct wdir *s = &src->d[d];
			struct wdir *to;

			if (!memcmp(s, &(struct wdir){ 0 }, sizeof(*s)))
				continue;
			to = wdir_of(r->wfinal, now, d);
			if (s->c[QPT_C_packets] && (!to->c[QPT_C_packets] || s->first_ns < to->first_ns))
				to->first_ns = s->first_ns;
			if (s->c[QPT_C_packets] && (!to->c[QPT_C_packets] || s->last_ns > to->last_ns))
				to->last_ns = s->last_ns;
			for (unsigned c = 0; c < QPT_C_COUNT; c++)
				to->c[c] += s->c[c];
			for (unsigned c = 0; c < QPT_NAK_KINDS; c++)
				to->naks[c] += s->naks[c];
		}
	}
}

/* The conversation as the summary shows it: with --from/--to, its counts
 * are the window's (its id, endpoints, pairing, priorities, RTT and
 * messages those of the whole input; the go-back-N episodes that started
 * in the window, as the whole input found them); valid until the next
 * call. */
const struct qpt_conv_stats *window_view(const struct qpt_conv_stats *c, void *data)
{
	struct run *r = data;
	static const struct wdir none;
	const struct wconv *w;

	if (!r->wfinal || !c)
		return c;
	w = g_hash_table_lookup(r->wfinal, GINT_TO_POINTER(c->id));
	r->vconv = *c;
	for (int d = 0; d < 2; d++) {
		const struct wdir *wd = w ? &w->d[d] : &none;
		struct qpt_dir_stats *x = &r->vconv.dir[d];
		const GArray *eps = c->dir[d].episodes;

		for (unsigned k = 0; k < QPT_C_COUNT; k++)
			memcpy((char *)x + qpt_counters[k].offset, &wd->c[k], sizeof(uint64_t));
		memcpy(x->naks, wd->naks, sizeof(x->naks));
		x->first_ns = wd->first_ns;
		x->last_ns = wd->last_ns;
		g_array_set_size(r->vep[d], 0);
		for (guint i = 0; eps && r->win_span && i < eps->len; i++) {
			const struct qpt_episode *e = &g_array_index(eps, struct qpt_episode, i);

			struct qpt_episode in = *e; /* (its time in the window) */

			if (e->start_ns < r->win_first || e->start_ns > r->win_last)
				continue;
			in.end_ns = MIN(in.end_ns, r->win_last);
			g_array_append_val(r->vep[d], in);
		}
		x->episodes = eps ? r->vep[d] : NULL;
		x->eventful = true; /* (the window's counts: the findings look) */
	}
	return &r->vconv;
}

const struct qpt_conv_stats *viewed(struct run *r, const struct qpt_conv_stats *c)
{
	return window_view(c, r);
}

/* The ids of the conversations that had a frame in the window, as they are
 * at the end (an id seen early may have been folded into another). */
void window_final(struct run *r)
{
	if (!r->seen)
		return; /* no window */
	if (r->wconvs)
		window_fold(r);
	r->seen_final = g_array_new(FALSE, TRUE, sizeof(gboolean));
	g_array_set_size(r->seen_final, r->seen->len);
	for (guint id = 0; id < r->seen->len; id++) {
		int32_t now = qpt_flow_conv_id(r->fl, (int32_t)id);

		if (g_array_index(r->seen, gboolean, id) && now >= 0 && (guint)now < r->seen->len)
			g_array_index(r->seen_final, gboolean, now) = TRUE;
	}
}

/* ---- plot --timeline ------------------------------------------------------ */

/* One panel: the series of each column, as polylines over the intervals. */
static void timeline_panel(GString *svg, const struct run *r, double top, double height,
			   const char *title, bool packets)
{
	static const char *const colour[] = { "#d62728", "#ff7f0e", "#9467bd", "#8c564b",
					      "#2ca02c", "#17becf", "#7f7f7f" };
	const double left = 70, width = 820;
	guint n = r->intervals->len;
	unsigned nser = packets ? 1 : G_N_ELEMENTS(interval_col) + 1;
	uint64_t max = 1;

	for (guint i = 0; i < n; i++) {
		const struct interval *iv = &g_array_index(r->intervals, struct interval, i);

		for (unsigned s = 0; s < nser; s++) {
			uint64_t v = packets ? iv->packets : s < G_N_ELEMENTS(interval_col) ?
				iv->ev[interval_col[s].kind] : iv->pauses;

			max = MAX(max, v);
		}
	}
	qpt_appendf(svg, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"13\">%s (per interval; "
		    "at most %" PRIu64 ")</text>\n", left, top - 6, title, max);
	qpt_appendf(svg, "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.0f\" height=\"%.1f\" "
		    "fill=\"none\" stroke=\"#999\"/>\n", left, top, width, height);
	qpt_appendf(svg, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">"
		    "%" PRIu64 "</text>\n", left - 4, top + 10, max);
	qpt_appendf(svg, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">0"
		    "</text>\n", left - 4, top + height);
	for (unsigned s = 0; s < nser; s++) {
		const char *name = packets ? "packets" : s < G_N_ELEMENTS(interval_col) ?
			interval_col[s].title : "pauses";

		qpt_appendf(svg, "<polyline class=\"series\" data-series=\"%s\" fill=\"none\" "
			    "stroke=\"%s\" points=\"", name, packets ? "#1f77b4" : colour[s]);
		for (guint i = 0; i < n; i++) {
			const struct interval *iv = &g_array_index(r->intervals, struct interval, i);
			uint64_t v = packets ? iv->packets : s < G_N_ELEMENTS(interval_col) ?
				iv->ev[interval_col[s].kind] : iv->pauses;

			qpt_appendf(svg, "%s%.1f,%.1f", i ? " " : "",
				    left + width * ((double)i + 0.5) / (double)MAX(n, 1u),
				    top + height - height * (double)v / (double)max);
		}
		g_string_append(svg, "\"/>\n");
		if (!packets)
			qpt_appendf(svg, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"11\" fill=\"%s\">"
				    "%s</text>\n", left + 8 + 100 * s, top + height + 16, colour[s], name);
	}
}

void timeline_render(struct run *r, GString *svg)
{
	char d[48];

	g_string_append(svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			     "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"920\" "
			     "height=\"470\" font-family=\"sans-serif\">\n"
			     "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
	/* the file name as XML text: quotes and the like escaped */
	g_string_append(svg, "<text x=\"70\" y=\"20\" font-size=\"14\">");
	for (const char *c = r->an.label ? r->an.label : ""; *c; c++) {
		if (*c == '<')
			g_string_append(svg, "&lt;");
		else if (*c == '>')
			g_string_append(svg, "&gt;");
		else if (*c == '&')
			g_string_append(svg, "&amp;");
		else
			g_string_append_c(svg, *c);
	}
	qpt_appendf(svg, ": %u intervals of %s from ", r->intervals->len,
		    qpt_format_duration(r->interval_ns, d, sizeof(d)));
	if (r->an.have_t0)
		qpt_format_iso(svg, r->an.t0, true);
	g_string_append(svg, "</text>\n");
	qpt_appendf(svg, "<desc data-interval-ns=\"%" PRId64 "\" data-intervals=\"%u\"/>\n",
		    r->interval_ns, r->intervals->len);
	timeline_panel(svg, r, 50, 150, "RoCE/IB packets", true);
	timeline_panel(svg, r, 240, 180, "re-sent, PSN gaps, NAKs, RNR NAKs, CNPs, ECN-CE, pauses",
		       false);
	g_string_append(svg, "</svg>\n");
}

int qpt_timeline_svg(struct opts *o, GString *svg)
{
	return run_one(o, o->files, false, svg);
}
