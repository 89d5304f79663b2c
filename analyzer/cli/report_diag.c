/* report_diag.c - the diagnosis: findings and their roll-up, text and JSON
 * (report.c's parts share report_int.h)
 */
#include "report_int.h"

/* ---- summary: the diagnosis and one line per conversation ---------------- */

void qpt_format_iso(GString *o, int64_t ns, bool date)
{
	int64_t s = ns / 1000000000, us;
	GDateTime *dt;
	gchar *t;

	if (ns % 1000000000 < 0)
		s--;
	us = (ns - s * 1000000000) / 1000;
	dt = g_date_time_new_from_unix_utc(s);
	if (!dt) { /* outside years 1 to 9999 */
		qpt_format_epoch(o, ns);
		return;
	}
	t = g_date_time_format(dt, date ? "%Y-%m-%dT%H:%M:%S" : "%H:%M:%S");
	qpt_appendf(o, "%s.%06" PRId64 "%s", t, us, date ? "Z" : "");
	g_free(t);
	g_date_time_unref(dt);
}

/* What the share of a kind's findings counts. */
static const char *share_noun(enum qpt_finding_kind k)
{
	switch (k) {
	case QPT_F_LOSS_BEFORE_TAP:
	case QPT_F_LOSS_AFTER_TAP:
	case QPT_F_TIMEOUTS:
	case QPT_F_RESENDS: return "re-sent";
	case QPT_F_UNRECOVERED_LOSS:
	case QPT_F_CAPTURE_GAPS: return "missing";
	case QPT_F_CONGESTION: return "ECN-CE marked";
	case QPT_F_BAD_ICRC: return "with a bad ICRC";
	default: return NULL;
	}
}

/* What the weight of a kind without a share counts. */
static const char *weight_noun(enum qpt_finding_kind k)
{
	switch (k) {
	case QPT_F_ERROR_NAKS: return "requests refused with an error NAK";
	case QPT_F_RNR: return "RNR NAKs";
	case QPT_F_CAPTURE_COPIES: return "packets seen twice by the capture";
	case QPT_F_ECN_NO_CNP: return "ECN-CE marks no CNP answered";
	default: return NULL;
	}
}

/* Where the packets of a kind went missing, for many conversations. */
static const char *group_where(enum qpt_finding_kind k)
{
	switch (k) {
	case QPT_F_LOSS_BEFORE_TAP:
	case QPT_F_UNRECOVERED_LOSS:
		return "lost between the senders and the capture point";
	case QPT_F_LOSS_AFTER_TAP:
		return "lost between the capture point and the receivers";
	case QPT_F_TIMEOUTS:
		return "lost after the capture point, or their ACKs on the way back";
	case QPT_F_CAPTURE_GAPS: return "dropped by the capture, not the network";
	default: return NULL;
	}
}

void share_text(GString *o, uint64_t part, uint64_t whole)
{
	double p = whole ? 100.0 * (double)part / (double)whole : 0;

	qpt_appendf(o, "%" PRIu64 " of %" PRIu64 " packets (", part, whole);
	if (p == 0 || p >= 9.95)
		qpt_appendf(o, "%.0f %%)", p);
	else if (p >= 0.095)
		qpt_appendf(o, "%.*f %%)", p >= 0.995 ? 1 : 2, p);
	else
		qpt_appendf(o, "%.3f %%)", p);
}

static void hosts_text(GString *o, const struct qpt_group_host *h, uint32_t n)
{
	for (uint32_t i = 0; i < n && i < QPT_GROUP_HOSTS; i++)
		qpt_appendf(o, "%s%s (%u)", i ? ", " : "", h[i].addr, h[i].n);
	if (n > QPT_GROUP_HOSTS)
		qpt_appendf(o, " and %u more hosts", n - QPT_GROUP_HOSTS);
}

static void time_span_text(GString *o, bool has, int64_t first, int64_t last)
{
	if (!has)
		return;
	g_string_append(o, first == last ? "; at " : "; from ");
	qpt_format_iso(o, first, false);
	if (first != last) {
		g_string_append(o, " to ");
		qpt_format_iso(o, last, false);
	}
}

/* One group: its line, the conversations it names, the next step. */
static guint group_text(GString *o, const struct qpt_finding_group *g, const GArray *fs,
			const struct qpt_diag_opts *d)
{
	const struct qpt_finding *f0 = &g_array_index(fs, struct qpt_finding,
						       g_array_index(g->members, guint, 0));
	const char *noun = share_noun(g->kind), *where = group_where(g->kind);
	guint lines = 1, shown = 0, top = d->top > 0 ? (guint)d->top : 5;

	qpt_appendf(o, "  %-7s ", qpt_severity_name(g->severity));
	if (g->members->len == 1) {
		g_string_append(o, f0->text);
	} else {
		qpt_appendf(o, "%s: %u %s", qpt_finding_kinds[g->kind].key, g->nconvs,
			    g->nconvs == 1 ? "conversation" : "conversations");
		if (g->nsenders) {
			g_string_append(o, " from ");
			hosts_text(o, g->senders, g->nsenders);
		}
		if (g->nreceivers) {
			g_string_append(o, " to ");
			hosts_text(o, g->receivers, g->nreceivers);
		}
		if (g->pcp >= 0)
			qpt_appendf(o, ", priority %d", g->pcp);
		else if (g->pcp == -1)
			g_string_append(o, ", untagged");
		if (noun && g->whole) {
			g_string_append(o, ": ");
			share_text(o, g->part, g->whole);
			qpt_appendf(o, " %s", noun);
		} else if (weight_noun(g->kind)) {
			qpt_appendf(o, ": %" PRIu64 " %s", g->weight, weight_noun(g->kind));
		} else {
			qpt_appendf(o, ": %s", qpt_finding_kinds[g->kind].title);
		}
		if (where)
			qpt_appendf(o, ", %s", where);
	}
	if (g->tunnel) {
		char tn[QPT_TUNNEL_STRLEN];

		qpt_appendf(o, "; in %s%s", qpt_format_tunnel(g->tunnel, tn, sizeof(tn)),
			    g->tunnel_several ? " (and another)" : "");
	}
	time_span_text(o, g->has_time, g->first_ns, g->last_ns);
	g_string_append_c(o, '\n');
	if (g->members->len > 1) {
		/* each conversation once (its directions' findings are
		 * neighbours: the members are ranked by conversation) */
		g_string_append(o, g->nconvs == 1 ? "          conversation " :
						    "          worst: conversations ");
		for (guint m = 0; m < g->members->len;) {
			const struct qpt_finding *f = &g_array_index(fs, struct qpt_finding,
								      g_array_index(g->members, guint, m));
			uint64_t part = 0;
			int32_t id = f->conv;

			for (; m < g->members->len; m++) {
				f = &g_array_index(fs, struct qpt_finding,
						   g_array_index(g->members, guint, m));
				if (f->conv != id)
					break;
				part += f->part;
			}
			if (!d->verbose && shown == top)
				continue; /* counted below */
			qpt_appendf(o, "%s%d", shown ? ", " : "", id);
			if (noun && g->whole)
				qpt_appendf(o, " (%" PRIu64 "%s%s)", part, shown ? "" : " ",
					    shown ? "" : noun);
			shown++;
		}
		if (shown < g->nconvs)
			qpt_appendf(o, " and %u more (-v)", g->nconvs - shown);
		g_string_append_c(o, '\n');
		lines++;
	}
	qpt_appendf(o, "          next: %s\n", qpt_finding_kinds[g->kind].next_step);
	return lines + 1;
}

guint qpt_diagnosis_text(GString *o, const GArray *fs, const GArray *groups,
			 const struct qpt_diag_opts *d)
{
	guint lines = 0, g = 0;

	if (!fs->len) {
		g_string_append(o, "diagnosis: nothing wrong found\n\n");
		return 2;
	}
	qpt_appendf(o, "diagnosis (%u %s in %u %s, worst first):\n", fs->len,
		    fs->len == 1 ? "finding" : "findings", groups->len,
		    groups->len == 1 ? "group" : "groups");
	lines++;
	for (; g < groups->len; g++) {
		const struct qpt_finding_group *gr =
			&g_array_index(groups, struct qpt_finding_group, g);
		guint need = 1 + (gr->members->len > 1) + 1;

		/* the budget: room for this group and the line saying what is left */
		if (!d->verbose && d->max_lines && g &&
		    lines + need + (g + 1 < groups->len) > d->max_lines)
			break;
		lines += group_text(o, gr, fs, d);
	}
	if (g < groups->len) {
		qpt_appendf(o, "  and %u more %s (-v)\n", groups->len - g,
			    groups->len - g == 1 ? "group" : "groups");
		lines++;
	}
	if (d->verbose && fs->len > groups->len) {
		qpt_appendf(o, "every finding:\n");
		lines++;
		for (guint i = 0; i < fs->len; i++) {
			const struct qpt_finding *f = &g_array_index(fs, struct qpt_finding, i);

			qpt_appendf(o, "  %-7s %s\n", qpt_severity_name(f->severity), f->text);
			lines++;
		}
	}
	g_string_append_c(o, '\n');
	return lines + 1;
}

void json_time(GString *o, const char *key, int64_t ns)
{
	qpt_appendf(o, ",\"%s\":\"", key);
	qpt_format_iso(o, ns, true);
	g_string_append_c(o, '"');
}

static void json_when(GString *o, bool has, int64_t first, int64_t last)
{
	if (!has) {
		g_string_append(o, ",\"first\":null,\"last\":null");
		return;
	}
	json_time(o, "first", first);
	json_time(o, "last", last);
}

static void json_share(GString *o, uint64_t part, uint64_t whole)
{
	if (!whole) {
		g_string_append(o, ",\"share\":null");
		return;
	}
	qpt_appendf(o, ",\"share\":{\"part\":%" PRIu64 ",\"whole\":%" PRIu64
		    ",\"percent\":%.17g}", part, whole, 100.0 * (double)part / (double)whole);
}

static void json_pcp(GString *o, int pcp)
{
	if (pcp >= 0)
		qpt_appendf(o, ",\"priority\":%d", pcp);
	else
		qpt_appendf(o, ",\"priority\":%s", pcp == -1 ? "\"untagged\"" : "null");
}

static void json_hosts(GString *o, const char *key, const struct qpt_group_host *h, uint32_t n)
{
	qpt_appendf(o, ",\"%s\":{\"count\":%u,\"top\":[", key, n);
	for (uint32_t i = 0; i < n && i < QPT_GROUP_HOSTS; i++) {
		g_string_append(o, i ? ",{\"host\":" : "{\"host\":");
		qpt_json_escape(o, h[i].addr);
		qpt_appendf(o, ",\"findings\":%u}", h[i].n);
	}
	g_string_append(o, "]}");
}

/* The group's mirror or tunnel session: null, or its kind, id, outer
 * addresses and words. */
static void json_tunnel(GString *o, const struct qpt_finding_group *g)
{
	const struct qpt_tunnel_id *t = g->tunnel;
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN], tn[QPT_TUNNEL_STRLEN];

	if (!t) {
		g_string_append(o, ",\"tunnel\":null");
		return;
	}
	qpt_tunnel_outer_addr(t, false, s);
	qpt_tunnel_outer_addr(t, true, d);
	qpt_appendf(o, ",\"tunnel\":{\"kind\":\"%s\",\"id\":", qpt_tunnel_name(t->kind));
	if (t->has_key)
		qpt_appendf(o, "%u", t->key);
	else
		g_string_append(o, "null");
	qpt_appendf(o, ",\"outer_src\":\"%s\",\"outer_dst\":\"%s\",\"several\":%s,\"text\":", s, d,
		    g->tunnel_several ? "true" : "false");
	qpt_json_escape(o, qpt_format_tunnel(t, tn, sizeof(tn)));
	g_string_append_c(o, '}');
}

void qpt_diagnosis_json(GString *o, const GArray *fs, const GArray *groups)
{
	g_string_append(o, ",\"groups\":[");
	for (guint i = 0; i < groups->len; i++) {
		const struct qpt_finding_group *g = &g_array_index(groups, struct qpt_finding_group, i);

		qpt_appendf(o, "%s{\"kind\":\"%s\",\"severity\":\"%s\",\"capture_wide\":%s"
			    ",\"conversations\":%u", i ? "," : "", qpt_finding_kinds[g->kind].key,
			    qpt_severity_name(g->severity), g->capture_wide ? "true" : "false",
			    g->nconvs);
		json_pcp(o, g->pcp);
		json_tunnel(o, g);
		json_hosts(o, "senders", g->senders, g->nsenders);
		json_hosts(o, "receivers", g->receivers, g->nreceivers);
		json_share(o, g->part, g->whole);
		json_when(o, g->has_time, g->first_ns, g->last_ns);
		g_string_append(o, ",\"findings\":[");
		for (guint m = 0; m < g->members->len; m++)
			qpt_appendf(o, "%s%u", m ? "," : "", g_array_index(g->members, guint, m));
		g_string_append(o, "],\"next_step\":");
		qpt_json_escape(o, qpt_finding_kinds[g->kind].next_step);
		g_string_append_c(o, '}');
	}
	g_string_append_c(o, ']');
	g_string_append(o, ",\"findings\":[");
	for (guint i = 0; i < fs->len; i++) {
		const struct qpt_finding *f = &g_array_index(fs, struct qpt_finding, i);

		qpt_appendf(o, "%s{\"kind\":\"%s\",\"severity\":\"%s\",\"text\":",
				       i ? "," : "", qpt_finding_kinds[f->kind].key,
				       qpt_severity_name(f->severity));
		qpt_json_escape(o, f->text);
		g_string_append(o, ",\"next_step\":");
		qpt_json_escape(o, qpt_finding_kinds[f->kind].next_step);
		json_when(o, f->has_time, f->first_ns, f->last_ns);
		json_share(o, f->part, f->whole);
		if (f->from[0]) {
			g_string_append(o, ",\"from\":");
			qpt_json_escape(o, f->from);
			g_string_append(o, ",\"to\":");
			qpt_json_escape(o, f->to);
		}
		json_pcp(o, f->pcp);
		if (f->conv >= 0)
			qpt_appendf(o, ",\"conv\":%d", f->conv);
		else
			g_string_append(o, ",\"conv\":null");
		if (f->dir >= 0)
			qpt_appendf(o, ",\"dir\":%d", f->dir);
		g_string_append(o, ",\"frames\":[");
		for (unsigned k = 0; k < f->nframes; k++)
			qpt_appendf(o, "%s%" PRIu64, k ? "," : "", f->frames[k]);
		g_string_append(o, "],\"numbers\":{");
		for (unsigned k = 0; k < f->nnumbers; k++)
			qpt_appendf(o, "%s\"%s\":%.17g", k ? "," : "",
					       f->numbers[k].key, f->numbers[k].value);
		g_string_append(o, "}}");
	}
	g_string_append_c(o, ']');
}
