/* report_conv.c - summary --long and --json: one conversation, the CM
 * attempts, PFC and PAUSE per priority
 * (report.c's parts share report_int.h)
 */
#include "report_int.h"

/* ---- summary: text ------------------------------------------------------- */

/* "1 NAK", "2 NAKs", then SEP */
void counted(GString *o, uint64_t n, const char *noun, const char *sep)
{
	qpt_appendf(o, "%" PRIu64 " %s%s%s", n, noun, n == 1 ? "" : "s", sep);
}

static void row(GString *o, const char *label, uint64_t a, uint64_t b)
{
	qpt_appendf(o, "  %-28s %18" PRIu64 " %18" PRIu64 "\n", label, a, b);
}

/* s right-aligned in width characters (UTF-8: "µs" is one). */
void cell_pad(GString *o, const char *s, int width)
{
	long n = g_utf8_strlen(s, -1);

	for (; n < width; n++)
		g_string_append_c(o, ' ');
	g_string_append(o, s);
}

/* The same, left-aligned. */
void cell_left(GString *o, const char *s, int width)
{
	long n = g_utf8_strlen(s, -1);

	g_string_append(o, s);
	for (; n < width; n++)
		g_string_append_c(o, ' ');
}

static void row_lat(GString *o, const char *label, const struct qpt_lat *a,
		    const struct qpt_lat *b)
{
	const struct qpt_lat *l[2] = { a, b };
	char cell[2][64];

	if (!a->n && !b->n)
		return;
	for (int i = 0; i < 2; i++) {
		if (l[i]->n) {
			char x[3][24];

			g_snprintf(cell[i], sizeof(cell[i]), "%s/%s/%s",
				   qpt_format_duration_us(l[i]->min_us, x[0], sizeof(x[0])),
				   qpt_format_duration_us(qpt_lat_percentile(l[i], 50), x[1],
							  sizeof(x[1])),
				   qpt_format_duration_us(l[i]->max_us, x[2], sizeof(x[2])));
		}
		else
			g_strlcpy(cell[i], "-", sizeof(cell[i]));
	}
	qpt_appendf(o, "  %-28s", label);
	cell_pad(o, cell[0], 19);
	cell_pad(o, cell[1], 19);
	g_string_append_c(o, '\n');
}

/* CM requests that made no conversation. */
void text_attempts(GString *o, GPtrArray *att)
{
	char fq[QPT_ENDPOINT_QP_STRLEN], t[QPT_ADDR_STRLEN];

	for (guint i = 0; i < att->len; i++) {
		const struct qpt_cm_attempt *a = g_ptr_array_index(att, i);

		if (!i)
			g_string_append(o, "CM requests that made no connection:\n");
		qpt_format_endpoint_qp(&a->from, fq);
		qpt_endpoint_addr(&a->to, t);
		qpt_appendf(o, "  REQ frame %" PRIu64 ": %s -> %s, service ID 0x%016" PRIx64,
				       a->info.req_frame, fq, t, a->info.service_id);
		if (a->info.mra_frame)
			qpt_appendf(o, ", MRA frame %" PRIu64, a->info.mra_frame);
		if (a->info.rej_frame)
			qpt_appendf(o, ", REJ frame %" PRIu64 ": reason %u (%s)\n",
					       a->info.rej_frame, a->info.rej_reason,
					       qpt_cm_rej_reason_text(a->info.rej_reason));
		else
			g_string_append(o, ": no REP or REJ in the capture\n");
	}
	if (att->len)
		g_string_append_c(o, '\n');
}

void json_attempts(GString *o, GPtrArray *att)
{
	char f[QPT_ADDR_STRLEN], t[QPT_ADDR_STRLEN];

	g_string_append(o, ",\"cm_failed\":[");
	for (guint i = 0; i < att->len; i++) {
		const struct qpt_cm_attempt *a = g_ptr_array_index(att, i);

		qpt_endpoint_addr(&a->from, f);
		qpt_endpoint_addr(&a->to, t);
		qpt_appendf(o,
				       "%s{\"req_frame\":%" PRIu64 ",\"from\":{\"addr\":\"%s\",\"qpn\":%u}"
				       ",\"to\":{\"addr\":\"%s\"},\"service_id\":%" PRIu64
				       ",\"mra_frame\":%" PRIu64 ",\"rej_frame\":%" PRIu64,
				       i ? "," : "", a->info.req_frame, f, a->from.qpn, t,
				       a->info.service_id, a->info.mra_frame, a->info.rej_frame);
		if (a->info.rej_frame)
			qpt_appendf(o, ",\"rej_reason\":%u,\"rej_reason_name\":\"%s\"",
					       a->info.rej_reason, qpt_cm_rej_reason_text(a->info.rej_reason));
		g_string_append_c(o, '}');
	}
	g_string_append_c(o, ']');
}

/* Per operation: messages and their bytes, for the ops seen. */
static void text_ops(GString *o, const struct qpt_dir_stats *a, const struct qpt_dir_stats *b)
{
	for (int op = 1; op < QPT_OP_COUNT; op++) {
		char label[64];

		if (!qpt_dir_op(a, op)->count && !qpt_dir_op(b, op)->count)
			continue;
		g_snprintf(label, sizeof(label), "%s messages:", qpt_op_name(op));
		row(o, label, qpt_dir_op(a, op)->count, qpt_dir_op(b, op)->count);
		g_snprintf(label, sizeof(label), "%s message bytes:", qpt_op_name(op));
		row(o, label, qpt_dir_op(a, op)->bytes, qpt_dir_op(b, op)->bytes);
	}
}

/* NAKs by code: PSN sequence errors always, the others when seen. */
static void text_naks(GString *o, const struct qpt_dir_stats *a, const struct qpt_dir_stats *b,
		      bool verbose)
{
	for (unsigned i = 0; i < QPT_NAK_KINDS; i++) {
		char label[64];

		if (!a->naks[i] && !b->naks[i] && (i || !verbose))
			continue;
		g_snprintf(label, sizeof(label), "NAK %s:", qpt_nak_name(i));
		row(o, label, a->naks[i], b->naks[i]);
	}
}

/* "3", "3+5" (the most packets first), "none" (untagged), "-" (no packet) */
static void qos_cell(char *buf, size_t len, const struct qpt_dir_stats *x, unsigned cls, bool dscp)
{
	GString *t = g_string_new(NULL);
	const struct qpt_qos_count *e;

	for (unsigned i = 0; (e = qpt_qos_count_at(x, i)); i++) {
		if (e->cls != cls || e->dscp != dscp)
			continue;
		if (t->len)
			g_string_append_c(t, '+');
		if (e->value < 0)
			g_string_append(t, "none");
		else
			qpt_appendf(t, "%d", e->value);
	}
	g_strlcpy(buf, t->len ? t->str : "-", len);
	g_string_free(t, TRUE);
}

/* Priorities, ECN reaction and the rate around CNPs (qpt_flow_qos.c): shown
 * with -v, or when the conversation has ECN marks or CNPs. */
static void text_qos(GString *o, const struct qpt_conv_stats *c, bool verbose)
{
	static const char *const labels[QPT_QOS_CLASSES] = {
		"data PCP/DSCP:", "ACK/NAK PCP/DSCP:", "CNP PCP/DSCP:"
	};
	const struct qpt_dir_stats *a = &c->dir[0], *b = &c->dir[1];
	const struct qpt_dir_stats *d2[2] = { a, b };
	const struct qpt_qos_stats *aq = qpt_dir_qos(a), *bq = qpt_dir_qos(b);

	if (!verbose && !a->ecn_ce && !b->ecn_ce && !a->cnps && !b->cnps)
		return;
	for (unsigned cls = 0; cls < QPT_QOS_CLASSES; cls++) {
		char cell[2][96];

		if (!qpt_qos_values(a, cls, false, NULL) && !qpt_qos_values(b, cls, false, NULL))
			continue;
		for (int d = 0; d < 2; d++) {
			char pcp[44], dscp[44];

			qos_cell(pcp, sizeof(pcp), d2[d], cls, false);
			qos_cell(dscp, sizeof(dscp), d2[d], cls, true);
			if (!strcmp(pcp, "-") && !strcmp(dscp, "-"))
				g_strlcpy(cell[d], "-", sizeof(cell[d]));
			else
				g_snprintf(cell[d], sizeof(cell[d]), "%s/%s", pcp, dscp);
		}
		qpt_appendf(o, "  %-28s %18s %18s\n", labels[cls], cell[0], cell[1]);
	}
	if (aq || bq) {
		static const struct qpt_lat none;

		row_lat(o, "ECN reaction min/p50/max:", aq ? &aq->reaction : &none,
			bq ? &bq->reaction : &none);
	}
	if ((aq && aq->rate_windows) || (bq && bq->rate_windows)) {
		char cell[2][64];

		for (int d = 0; d < 2; d++) {
			const struct qpt_qos_stats *q = qpt_dir_qos(d2[d]);
			char r0[32], r1[32];

			if (!q || !q->rate_windows) {
				g_strlcpy(cell[d], "-", sizeof(cell[d]));
				continue;
			}
			qpt_format_rate(q->rate_before_bps, r0, sizeof(r0));
			qpt_format_rate(q->rate_after_bps, r1, sizeof(r1));
			g_snprintf(cell[d], sizeof(cell[d]), "%s > %s", r0, r1);
		}
		qpt_appendf(o, "  %-28s", "rate before > after CNPs:");
		cell_pad(o, cell[0], 19);
		cell_pad(o, cell[1], 19);
		g_string_append_c(o, '\n');
	}
}

void text_conv(GString *o, const struct qpt_conv_stats *c, int64_t t0, bool verbose)
{
	const struct qpt_dir_stats *a = &c->dir[0], *b = &c->dir[1];
	char e0[QPT_ENDPOINT_QP_STRLEN], e1[QPT_ENDPOINT_QP_STRLEN];

	qpt_format_endpoint_qp(&c->ep[0], e0);
	qpt_format_endpoint_qp(&c->ep[1], e1);
	qpt_appendf(o, "conversation %d: %s  a: %s  b: %s\n", c->id,
			       c->transport[0] ? c->transport : "?", e0, e1);
	qpt_appendf(o, "  paired by %s%s%s%s\n", qpt_paired_by_name(c->paired_by),
			       c->pair_evidence[0] ? " (" : "", c->pair_evidence,
			       c->pair_evidence[0] ? ")" : "");
	if (c->has_cm) {
		const struct qpt_cm_info *cm = c->cm;

		qpt_appendf(o,
				       "  CM: REQ frame %" PRIu64 ", REP frame %" PRIu64
				       ", RTU frame %" PRIu64 ", DREQ frame %" PRIu64
				       ", DREP frame %" PRIu64 "; service ID 0x%016" PRIx64
				       ", path MTU %u\n",
				       cm->req_frame, cm->rep_frame, cm->rtu_frame,
				       cm->dreq_frame, cm->drep_frame, cm->service_id,
				       cm->path_mtu);
		if (cm->rej_frame)
			qpt_appendf(o, "  CM REJ frame %" PRIu64 ": reason %u (%s)\n",
					       cm->rej_frame, cm->rej_reason,
					       qpt_cm_rej_reason_text(cm->rej_reason));
		if (cm->has_ip) {
			char s[64], d[64];
			int af = cm->ip.ip_version == 4 ? AF_INET : AF_INET6;
			const uint8_t *sa = cm->ip.ip_version == 4 ? cm->ip.src + 12 : cm->ip.src;
			const uint8_t *da = cm->ip.ip_version == 4 ? cm->ip.dst + 12 : cm->ip.dst;

			inet_ntop(af, sa, s, sizeof(s));
			inet_ntop(af, da, d, sizeof(d));
			qpt_appendf(o, "  RDMA-CM: %s port %u -> %s port %u\n", s,
					       cm->ip.port, d, cm->ip.dst_port);
		}
	}
	qpt_appendf(o, "  %-28s %18s %18s\n", "", "a->b", "b->a");
	for (unsigned k = 0; k < QPT_C_COUNT; k++) {
		const struct qpt_counter_info *ci = &qpt_counters[k];
		uint64_t va = qpt_counter(a, k), vb = qpt_counter(b, k);

		if (ci->label && ((ci->always && verbose) || va || vb))
			row(o, ci->label, va, vb);
		if (k == QPT_C_resp_packets)
			text_ops(o, a, b);
		if (k == QPT_C_out_of_order)
			text_naks(o, a, b, verbose);
	}
	row_lat(o, "ACK RTT min/p50/max:", a->ack_rtt, b->ack_rtt);
	row_lat(o, "READ latency min/p50/max:", a->read_lat, b->read_lat);
	row_lat(o, "atomic latency min/p50/max:", a->atomic_lat, b->atomic_lat);
	text_qos(o, c, verbose);
	{
		char ta[32] = "-", tb[32] = "-";
		double da = secs(a->last_ns - a->first_ns), db = secs(b->last_ns - b->first_ns);

		if (a->payload_bytes && da > 0)
			qpt_format_rate((double)a->payload_bytes * 8 / da, ta, sizeof(ta));
		if (b->payload_bytes && db > 0)
			qpt_format_rate((double)b->payload_bytes * 8 / db, tb, sizeof(tb));
		if (a->payload_bytes || b->payload_bytes)
			qpt_appendf(o, "  %-28s %18s %18s\n", "throughput:", ta, tb);
	}
	{
		char pa[32] = "-", pb[32] = "-";

		if (a->psn_seen)
			g_snprintf(pa, sizeof(pa), "%u-%u", a->first_psn, a->last_psn);
		if (b->psn_seen)
			g_snprintf(pb, sizeof(pb), "%u-%u", b->first_psn, b->last_psn);
		qpt_appendf(o, "  %-28s %18s %18s\n", "request PSNs:", pa, pb);
	}
	qpt_appendf(o, "  %-28s %18.6f %18.6f\n", "first packet (s):",
			       a->packets ? secs(a->first_ns - t0) : 0.0,
			       b->packets ? secs(b->first_ns - t0) : 0.0);
	qpt_appendf(o, "  %-28s %18.6f %18.6f\n", "last packet (s):",
			       a->packets ? secs(a->last_ns - t0) : 0.0,
			       b->packets ? secs(b->last_ns - t0) : 0.0);
	for (int d = 0; d < 2; d++) {
		const struct qpt_dir_stats *x = &c->dir[d];

		for (guint i = 0; x->episodes && i < x->episodes->len; i++) {
			const struct qpt_episode *e =
				&g_array_index(x->episodes, struct qpt_episode, i);

			char lost[32];

			qpt_appendf(o,
					       "  %s go-back-N #%u: %s frame %" PRIu64
					       ", first resent frame %" PRIu64
					       ", %u packets resent from PSN %u, %s lost\n",
					       d ? "b->a" : "a->b", i + 1,
					       qpt_trigger_name(e->trigger),
					       e->trigger_frame, e->first_resent_frame,
					       e->resent_packets, e->from_psn,
					       qpt_format_duration(e->end_ns - e->start_ns, lost,
								   sizeof(lost)));
		}
		if (x->episodes && x->gbn_episodes > x->episodes->len)
			qpt_appendf(o, "  %s: %" PRIu64 " more go-back-N episodes, "
					       "not kept (at most %u per direction)\n",
					       d ? "b->a" : "a->b",
					       x->gbn_episodes - x->episodes->len, x->episodes->len);
	}
	g_string_append_c(o, '\n');
}

/* ---- summary: JSON ------------------------------------------------------- */

static void json_lat(GString *o, const char *key, const struct qpt_lat *l)
{
	g_string_append(o, ",\"");
	g_string_append(o, key);
	g_string_append(o, "\":");
	if (!l->n) {
		g_string_append(o, "null");
		return;
	}
	qpt_appendf(o,
			       "{\"n\":%" PRIu64 ",\"min\":%.3f,\"mean\":%.3f,\"p50\":%.3f,\"p99\":%.3f,\"max\":%.3f}",
			       l->n, l->min_us, l->sum_us / (double)l->n,
			       qpt_lat_percentile(l, 50), qpt_lat_percentile(l, 99),
			       l->max_us);
}

static void json_ops(GString *o, const struct qpt_dir_stats *x)
{
	bool first = true;

	g_string_append(o, ",\"messages\":{");
	for (int op = 1; op < QPT_OP_COUNT; op++) {
		if (!qpt_dir_op(x, op)->count)
			continue;
		qpt_appendf(o, "%s\"%s\":%" PRIu64, first ? "" : ",",
				       qpt_op_name(op), qpt_dir_op(x, op)->count);
		first = false;
	}
	g_string_append(o, "},\"message_sizes\":{");
	first = true;
	for (int op = 1; op < QPT_OP_COUNT; op++) {
		const struct qpt_opstat *s = qpt_dir_op(x, op);

		if (!s->count)
			continue;
		qpt_appendf(o,
				       "%s\"%s\":{\"bytes\":%" PRIu64 ",\"min\":%u,\"max\":%u,\"packets\":%" PRIu64 "}",
				       first ? "" : ",", qpt_op_name(op), s->bytes,
				       s->min_size, s->max_size, s->packets);
		first = false;
	}
	g_string_append_c(o, '}');
}

/* Priorities and ECN of a direction (qpt_flow_qos.c): "pcp":{"3":120}, ... */
static void json_qos(GString *o, const struct qpt_dir_stats *x)
{
	static const char *const keys[QPT_QOS_CLASSES] = { "", "ack_", "cnp_" };
	const struct qpt_qos_stats *q = qpt_dir_qos(x);

	for (unsigned cls = 0; cls < QPT_QOS_CLASSES; cls++)
		for (int dscp = 0; dscp < 2; dscp++) {
			const struct qpt_qos_count *e;
			bool first = true;

			qpt_appendf(o, ",\"%s%s\":{", keys[cls], dscp ? "dscp" : "pcp");
			for (unsigned i = 0; (e = qpt_qos_count_at(x, i)); i++) {
				if (e->cls != cls || e->dscp != (dscp != 0))
					continue;
				if (e->value < 0)
					qpt_appendf(o, "%s\"untagged\":%" PRIu64,
							       first ? "" : ",", e->packets);
				else
					qpt_appendf(o, "%s\"%d\":%" PRIu64, first ? "" : ",",
							       e->value, e->packets);
				first = false;
			}
			g_string_append_c(o, '}');
		}
	if (q) {
		json_lat(o, "ecn_reaction_us", &q->reaction);
		qpt_appendf(o,
				       ",\"ecn\":{\"ce_answered\":%" PRIu64 ",\"ce_covered\":%" PRIu64
				       ",\"ce_undecided\":%" PRIu64 ",\"cnps_without_ce\":%" PRIu64
				       ",\"rate_windows\":%" PRIu64 ",\"rate_windows_cut\":%" PRIu64,
				       q->ce_answered, q->ce_covered, q->ce_undecided,
				       q->cnps_without_ce, q->rate_windows, q->rate_windows_cut);
		if (q->rate_windows) {
			qpt_appendf(o, ",\"rate_before_bps\":%.0f,\"rate_after_bps\":%.0f",
					       q->rate_before_bps, q->rate_after_bps);
		} else {
			g_string_append(o, ",\"rate_before_bps\":null,\"rate_after_bps\":null");
		}
		qpt_appendf(o, "},\"max_payload\":%u", x->qos.max_payload);
		if (x->qos.seg_payload)
			qpt_appendf(o, ",\"segment_payload\":%u", x->qos.seg_payload);
	} else {
		g_string_append(o, ",\"ecn_reaction_us\":null");
	}
}

/* sep "key":v (what qpt_appendf(o, "%s\"%s\":%" PRIu64, ...)
 * writes, without formatting: a direction has some 40 of them, a
 * summary --json of a million conversations 80 million) */
static void json_u64(GString *o, const char *sep, const char *key, uint64_t v)
{
	char d[24];
	size_t n = sizeof(d);

	do {
		d[--n] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	g_string_append(o, sep);
	g_string_append_c(o, '"');
	g_string_append(o, key);
	g_string_append(o, "\":");
	g_string_append_len(o, d + n, (gssize)(sizeof(d) - n));
}

static void json_dir(GString *o, const struct qpt_dir_stats *x)
{
	qpt_appendf(o, "{\"from\":%u,\"to\":%u", x->from, x->to);
	for (unsigned k = 0; k < QPT_C_COUNT; k++) {
		if (qpt_counters[k].key)
			json_u64(o, ",", qpt_counters[k].key, qpt_counter(x, k));
		if (k == QPT_C_resp_packets)
			json_ops(o, x);
		if (k == QPT_C_out_of_order) {
			g_string_append(o, ",\"naks\":{");
			for (unsigned i = 0; i < QPT_NAK_KINDS; i++)
				json_u64(o, i ? "," : "", qpt_nak_name(i), x->naks[i]);
			g_string_append_c(o, '}');
		}
	}
	if (x->psn_seen)
		qpt_appendf(o, ",\"first_psn\":%u,\"last_psn\":%u",
				       x->first_psn, x->last_psn);
	if (x->packets) {
		double dur = secs(x->last_ns - x->first_ns);

		qpt_appendf(o,
				       ",\"first_time\":%.6f,\"last_time\":%.6f,\"throughput_bps\":%.0f",
				       secs(x->first_ns), secs(x->last_ns),
				       dur > 0 ? (double)x->payload_bytes * 8 / dur : 0.0);
	}
	qpt_appendf(o, ",\"time_lost_us\":%.3f", (double)qpt_dir_time_lost(x) / 1000.0);
	json_lat(o, "ack_rtt_us", x->ack_rtt);
	json_lat(o, "read_latency_us", x->read_lat);
	json_lat(o, "atomic_latency_us", x->atomic_lat);
	json_qos(o, x);
	g_string_append(o, ",\"episodes\":[");
	for (guint i = 0; x->episodes && i < x->episodes->len; i++) {
		const struct qpt_episode *e = &g_array_index(x->episodes, struct qpt_episode, i);

		qpt_appendf(o,
				       "%s{\"trigger\":\"%s\",\"trigger_frame\":%" PRIu64
				       ",\"first_resent_frame\":%" PRIu64 ",\"end_frame\":%" PRIu64
				       ",\"resent_packets\":%u,\"from_psn\":%u,\"time_lost_us\":%.3f}",
				       i ? "," : "", qpt_trigger_name(e->trigger),
				       e->trigger_frame, e->first_resent_frame, e->end_frame,
				       e->resent_packets, e->from_psn,
				       (double)(e->end_ns - e->start_ns) / 1000.0);
	}
	qpt_appendf(o, "],\"episodes_truncated\":%s}",
			       x->episodes && x->gbn_episodes > x->episodes->len ? "true" : "false");
}

void json_conv(GString *o, const struct qpt_conv_stats *c)
{
	char a[64];

	qpt_appendf(o, "{\"id\":%d,\"transport\":\"%s\",\"paired_by\":\"%s\"",
			       c->id, c->transport[0] ? c->transport : "?",
			       qpt_paired_by_name(c->paired_by));
	g_string_append(o, ",\"evidence\":");
	qpt_json_escape(o, c->pair_evidence);
	g_string_append(o, ",\"endpoints\":[");
	for (int e = 0; e < 2; e++) {
		qpt_endpoint_addr(&c->ep[e], a);
		qpt_appendf(o, "%s{\"addr\":\"%s\",\"qpn\":", e ? "," : "", a);
		if (c->ep[e].qpn_known)
			qpt_appendf(o, "%u}", c->ep[e].qpn);
		else
			g_string_append(o, "null}");
	}
	g_string_append_c(o, ']');
	if (c->mtu)
		qpt_appendf(o, ",\"mtu\":%u", c->mtu);
	if (qpt_conv_ulp(&c->ident)) qpt_appendf(o, ",\"ulp\":\"%s\"", qpt_conv_ulp(&c->ident));
	if (c->has_cm) {
		const struct qpt_cm_info *cm = c->cm;

		qpt_appendf(o,
				       ",\"cm\":{\"req_frame\":%" PRIu64 ",\"rep_frame\":%" PRIu64
				       ",\"rtu_frame\":%" PRIu64 ",\"dreq_frame\":%" PRIu64
				       ",\"drep_frame\":%" PRIu64 ",\"rej_frame\":%" PRIu64
				       ",\"service_id\":%" PRIu64 ",\"path_mtu\":%u"
				       ",\"starting_psn\":[%u,%u]",
				       cm->req_frame, cm->rep_frame, cm->rtu_frame,
				       cm->dreq_frame, cm->drep_frame, cm->rej_frame,
				       cm->service_id, cm->path_mtu, cm->psn[0], cm->psn[1]);
		if (cm->rej_frame)
			qpt_appendf(o, ",\"rej_reason\":%u,\"rej_reason_name\":\"%s\"",
					       cm->rej_reason, qpt_cm_rej_reason_text(cm->rej_reason));
		if (cm->req_frame)
			qpt_appendf(o, ",\"setup_time\":%.6f", secs(cm->req_ns));
		if (cm->rtu_frame)
			qpt_appendf(o, ",\"established_time\":%.6f", secs(cm->rtu_ns));
		if (cm->dreq_frame)
			qpt_appendf(o, ",\"teardown_time\":%.6f", secs(cm->dreq_ns));
		if (cm->has_ip) {
			char s[64], d[64];
			int af = cm->ip.ip_version == 4 ? AF_INET : AF_INET6;

			inet_ntop(af, cm->ip.ip_version == 4 ? cm->ip.src + 12 : cm->ip.src,
				  s, sizeof(s));
			inet_ntop(af, cm->ip.ip_version == 4 ? cm->ip.dst + 12 : cm->ip.dst,
				  d, sizeof(d));
			qpt_appendf(o,
					       ",\"rdma_cm\":{\"src_ip\":\"%s\",\"src_port\":%u,\"dst_ip\":\"%s\",\"dst_port\":%u}",
					       s, cm->ip.port, d, cm->ip.dst_port);
		}
		g_string_append_c(o, '}');
	}
	g_string_append(o, ",\"directions\":[");
	json_dir(o, &c->dir[0]);
	g_string_append_c(o, ',');
	json_dir(o, &c->dir[1]);
	g_string_append(o, "]}");
}

/* ---- summary: PFC and PAUSE per priority (qpt_pfc.h) --------------------- */

gboolean qpt_opt_link_speed(const gchar *name, const gchar *value, gpointer data,
			    GError **error)
{
	struct opts *o = data;

	if (qpt_parse_bps(value, &o->link_bps))
		return TRUE;
	g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
		    "bad %s '%s': bits per second, e.g. 100G, 25G, 400Gb/s or 10000000000",
		    name, value);
	return FALSE;
}

void json_pfc(GString *o, struct qpt_flow *fl)
{
	const struct qpt_pfc *pf = qpt_flow_pfc(fl);
	bool first = true;

	g_string_append(o, ",\"pfc\":[");
	for (unsigned p = 0; p < QPT_PFC_PRIOS; p++) {
		const struct qpt_pfc_prio *pr = qpt_pfc_prio(pf, p);
		GArray *ids;

		if (!pr->pause_frames)
			continue;
		qpt_appendf(o, "%s{\"priority\":%u,\"pause_frames\":%" PRIu64
				       ",\"xoff_frames\":%" PRIu64 ",\"xon_frames\":%" PRIu64
				       ",\"pause_8023x\":%" PRIu64 ",\"quanta_total\":%" PRIu64,
				       first ? "" : ",", p, pr->pause_frames, pr->xoff_frames,
				       pr->xon_frames, pr->pause_8023x, pr->quanta_total);
		if (qpt_pfc_link_speed(pf) > 0)
			qpt_appendf(o, ",\"pause_us\":%.3f",
					       qpt_pfc_quanta_us(pf, pr->quanta_total));
		qpt_appendf(o, ",\"windows\":%" PRIu64 ",\"roce_packets\":%" PRIu64
				       ",\"stalled_conversations\":[", pr->windows, pr->data_packets);
		ids = qpt_flow_pfc_stalled(fl, p);
		for (guint i = 0; i < ids->len; i++)
			qpt_appendf(o, "%s%d", i ? "," : "", g_array_index(ids, int32_t, i));
		g_array_free(ids, TRUE);
		g_string_append(o, "]}");
		first = false;
	}
	g_string_append_c(o, ']');
}

void text_pfc(GString *o, struct qpt_flow *fl)
{
	const struct qpt_pfc *pf = qpt_flow_pfc(fl);
	char rate[32];

	if (!qpt_pfc_any(pf))
		return;
	if (qpt_pfc_link_speed(pf) > 0)
		qpt_appendf(o, "PFC/PAUSE pauses per priority (link %s):\n",
				       qpt_format_rate(qpt_pfc_link_speed(pf), rate, sizeof(rate)));
	else
		g_string_append(o, "PFC/PAUSE pauses per priority (link speed unknown: "
				   "--link-speed gives pause times):\n");
	g_string_append(o, "  priority  frames    XOFF     XON        quanta  pause time  "
			   "RoCE packets  stalled conversations\n");
	for (unsigned p = 0; p < QPT_PFC_PRIOS; p++) {
		const struct qpt_pfc_prio *pr = qpt_pfc_prio(pf, p);
		char t[32];
		GArray *ids;

		if (!pr->pause_frames)
			continue;
		if (qpt_pfc_link_speed(pf) > 0)
			qpt_format_duration_us(qpt_pfc_quanta_us(pf, pr->quanta_total), t, sizeof(t));
		else
			g_strlcpy(t, "-", sizeof(t));
		qpt_appendf(o, "  %8u %7" PRIu64 " %7" PRIu64 " %7" PRIu64 " %13" PRIu64 " ",
				       p, pr->pause_frames, pr->xoff_frames, pr->xon_frames,
				       pr->quanta_total);
		cell_pad(o, t, 11);
		qpt_appendf(o, " %13" PRIu64 "  ", pr->data_packets);
		ids = qpt_flow_pfc_stalled(fl, p);
		for (guint i = 0; i < ids->len; i++)
			qpt_appendf(o, "%s%d", i ? ", " : "", g_array_index(ids, int32_t, i));
		if (!ids->len)
			g_string_append(o, "-");
		g_array_free(ids, TRUE);
		g_string_append_c(o, '\n');
	}
	g_string_append_c(o, '\n');
}
