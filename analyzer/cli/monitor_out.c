/* monitor_out.c - qptrace monitor's standard output: events as they
 * happen, a line per active conversation and summary's diagnosis every
 * --interval seconds and at the end (monitor.c; monitor_int.h). */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "monitor_int.h"
#include "output.h"

/* ---- output --------------------------------------------------------------- */

void mon_flush_out(struct mon *m)
{
	if (m->out->len && !m->write_failed) {
		if (qpt_write_out(m->out, "standard output"))
			m->write_failed = true;
		fflush(stdout);
	}
	g_string_truncate(m->out, 0);
}

/* An event as `events` writes it (qpt_event_words), after its frame and
 * time: JSON "type":"event" first, the wall-clock (ISO 8601) time in text. */
void mon_event_line(struct mon *m, const struct qpt_event *ev)
{
	GString *o = m->out;
	int32_t conv = ev->conv >= 0 ? ev->conv + m->id_base : -1;

	if (m->o->json) {
		g_string_append_printf(o, "{" MON_SCHEMA "\"type\":\"event\",\"frame\":%" PRIu64 ",\"time\":",
				       ev->frame);
		qpt_format_epoch(o, ev->time_ns);
	} else {
		time_t sec = (time_t)(ev->time_ns / 1000000000);
		struct tm tm;
		char ts[32];

		gmtime_r(&sec, &tm);
		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
		g_string_append_printf(o, "%s.%06dZ frame %" PRIu64, ts,
				       (int)(ev->time_ns % 1000000000 / 1000), ev->frame);
	}
	qpt_event_words(o, ev, conv, m->o->json);
}

/* summary's diagnosis of the current engine (qpt_findings_walk, written by
 * qpt_diagnosis_text / qpt_diagnosis_json): every interval and at the end. */
void mon_diagnosis(struct mon *m, bool final)
{
	GPtrArray *att = qpt_flow_cm_attempts(m->fl);
	GArray *fs = qpt_findings_walk(m->fl, NULL, NULL, att, true, m->ff);
	GArray *groups = qpt_findings_groups(m->fl, fs);
	int64_t t = now_ns(m);

	if (m->o->json) {
		g_string_append_printf(m->out, "{" MON_SCHEMA "\"type\":\"%s\",\"time\":",
				       final ? "final_diagnosis" : "diagnosis");
		qpt_format_epoch(m->out, t);
		qpt_diagnosis_json(m->out, fs, groups);
		g_string_append(m->out, "}\n");
	} else {
		struct qpt_diag_opts dopt = { .verbose = m->o->verbose, .top = m->o->top };

		g_string_append(m->out, final ? "final " : "");
		qpt_diagnosis_text(m->out, fs, groups, &dopt);
	}
	qpt_findings_groups_free(groups);
	g_array_free(fs, TRUE);
	g_ptr_array_free(att, TRUE);
}

static gint cmp_worst_entry(gconstpointer a, gconstpointer b)
{
	const struct mconv *x = *(struct mconv *const *)a, *y = *(struct mconv *const *)b;
	uint64_t tx = x->trouble, ty = y->trouble;

	if (tx != ty)
		return tx > ty ? -1 : 1;
	if (mv(x, MV_PACKETS) != mv(y, MV_PACKETS))
		return mv(x, MV_PACKETS) > mv(y, MV_PACKETS) ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The table's conversations, sorted by cmp. */
GPtrArray *mon_entries_sorted(struct mon *m, GCompareFunc cmp)
{
	GPtrArray *a = g_ptr_array_new();
	GHashTableIter it;
	gpointer val;

	g_hash_table_iter_init(&it, m->convs);
	while (g_hash_table_iter_next(&it, NULL, &val))
		g_ptr_array_add(a, val);
	g_ptr_array_sort(a, cmp);
	return a;
}

static GPtrArray *entries_worst_first(struct mon *m)
{
	return mon_entries_sorted(m, cmp_worst_entry);
}

static uint64_t naks_of(const struct mconv *e, const uint64_t *base)
{
	uint64_t n = 0;

	for (int k = 0; k < QPT_NAK_KINDS; k++)
		n += mv(e, MV_NAKS + k) - (base ? base[MV_NAKS + k] : 0);
	return n;
}

/* One line per active conversation, the worst first; final: the whole run. */
void mon_conv_lines(struct mon *m, bool final)
{
	GPtrArray *a = entries_worst_first(m);
	int64_t t = now_ns(m);
	const char *type = final ? "final" : "interval";
	GString *limit = g_string_new("");

	for (guint i = 0; i < a->len; i++) {
		struct mconv *e = g_ptr_array_index(a, i);
		uint64_t d_pk = mv(e, MV_PACKETS) - e->shown[MV_PACKETS];
		uint64_t d_rt = mv(e, MV_RETRANS) - e->shown[MV_RETRANS];

		char lost[32];

		/* summary's keys (a conversation object's "id", "endpoints",
		 * "time_lost_us"), its units in text */
		if (m->o->json) {
			g_string_append_printf(m->out, "{" MON_SCHEMA "\"type\":\"%s\",\"time\":", type);
			qpt_format_epoch(m->out, t);
			g_string_append_printf(m->out, ",\"id\":%d,\"transport\":\"%s\",\"endpoints\":[",
					       e->id, e->transport);
			for (int k = 0; k < 2; k++) {
				g_string_append_printf(m->out, "%s{\"addr\":\"%s\",\"qpn\":", k ? "," : "",
						       k ? e->remote : e->local);
				if (e->qpn_known[k])
					g_string_append_printf(m->out, "%u}", e->qpn[k]);
				else
					g_string_append(m->out, "null}");
			}
			g_string_append_printf(m->out,
				"],\"packets\":%" PRIu64 ",\"packets_delta\":%" PRIu64
				",\"retransmitted_packets\":%" PRIu64 ",\"retransmitted_delta\":%" PRIu64
				",\"psn_gaps\":%" PRIu64 ",\"gbn_episodes\":%" PRIu64
				",\"time_lost_us\":%.3f,\"naks\":%" PRIu64 ",\"rnr_naks\":%" PRIu64
				",\"cnps\":%" PRIu64 ",\"ecn_ce\":%" PRIu64 ",\"idle_s\":%.3f}\n",
				mv(e, MV_PACKETS), d_pk, mv(e, MV_RETRANS), d_rt, mv(e, MV_GAPS),
				mv(e, MV_GBN), mv(e, MV_GBN_LOST_NS) / 1000.0, naks_of(e, NULL),
				mv(e, MV_RNR), mv(e, MV_CNPS), mv(e, MV_ECN_CE), (t - e->last_ns) / 1e9);
		} else {
			g_string_append_printf(m->out,
				"%s conv %d %s %s QP %s <-> %s QP %s: %" PRIu64 " packets (+%" PRIu64
				"), %" PRIu64 " retransmitted (+%" PRIu64 "), %" PRIu64 " PSN gaps, %"
				PRIu64 " go-back-N (%s lost), %" PRIu64 " NAKs, %" PRIu64
				" RNR NAKs, %" PRIu64 " CNPs, %" PRIu64 " ECN-CE\n",
				type, e->id, e->transport, e->local, e->lqpn, e->remote, e->rqpn,
				mv(e, MV_PACKETS), d_pk, mv(e, MV_RETRANS), d_rt, mv(e, MV_GAPS),
				mv(e, MV_GBN),
				qpt_format_duration((int64_t)mv(e, MV_GBN_LOST_NS), lost, sizeof(lost)),
				naks_of(e, NULL), mv(e, MV_RNR), mv(e, MV_CNPS), mv(e, MV_ECN_CE));
		}
		for (int k = 0; k < MV_N; k++)
			e->shown[k] = mv(e, k);
	}
	/* --max-qps: what it left out (the metric counts it too) */
	if (m->o->max_qps && m->o->json)
		g_string_printf(limit, ",\"untracked\":%" PRIu64 ",\"max_qps\":%u",
				m->now.untracked, m->o->max_qps);
	else if (m->o->max_qps && m->now.untracked)
		g_string_printf(limit, "; %" PRIu64 " packets not analysed: more QPs than --max-qps %u",
				m->now.untracked, m->o->max_qps);
	if (m->o->json)
		g_string_append_printf(m->out,
			"{" MON_SCHEMA "\"type\":\"%s_totals\",\"time\":%" PRId64 ".%06d,\"frames\":%" PRIu64
			",\"iba_packets\":%" PRIu64 ",\"malformed\":%" PRIu64 ",\"cut_by_capture\":%" PRIu64
			",\"active_conversations\":%u,\"conversations\":%" PRIu64
			",\"retransmitted_packets\":%" PRIu64 ",\"gbn_episodes\":%" PRIu64
			",\"capture_dropped\":%" PRIu64 ",\"engine_renewals\":%u"
			",\"not_listed\":%" PRIu64 "%s}\n",
			type, t / 1000000000, (int)(t % 1000000000 / 1000), m->now.frames, m->now.iba,
			m->now.malformed, m->now.cut, a->len, m->now.conversations,
			m->now.v[MV_RETRANS], m->now.v[MV_GBN], m->cap_drop + m->cap_ifdrop,
			m->renewals, m->untabled, limit->str);
	else
		g_string_append_printf(m->out,
			"%s totals: %" PRIu64 " frames, %" PRIu64 " RoCE/IB (%" PRIu64 " malformed, %"
			PRIu64 " cut by the capture), %u active conversations (%" PRIu64
			" seen), %" PRIu64 " retransmitted, %" PRIu64 " go-back-N; capture dropped %"
			PRIu64 "%s%s%s\n",
			type, m->now.frames, m->now.iba, m->now.malformed, m->now.cut, a->len,
			m->now.conversations, m->now.v[MV_RETRANS], m->now.v[MV_GBN],
			m->cap_drop + m->cap_ifdrop,
			m->renewals ? " (engine renewed: conversation ids restart higher)" : "",
			m->untabled ? "; more active conversations than --max-conversations: "
				      "the rest are in the totals only" : "", limit->str);
	g_string_free(limit, TRUE);
	g_ptr_array_free(a, TRUE);
}
