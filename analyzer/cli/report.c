/* report.c - `qptrace summary` (tcptrace -l style) and `qptrace events`: the
 * frame function, the conversation table, the summary's order, the run
 *
 * The JSON shapes are a public contract documented in README.md.
 */
#include "report_int.h"

bool qpt_selecting(const struct opts *o)
{
	return o->conv >= 0 || o->qp >= 0 || o->addr;
}

/* Does the conversation pass --conv, --qp and --addr?  (The window is
 * checked apart: by frame for events, by conversation for summary.) */
bool qpt_conv_matches(const struct opts *o, const char *addr_text, const struct qpt_conv_ident *c)
{
	bool qp = o->qp < 0, addr = !o->addr;

	if (!c)
		return !qpt_selecting(o);
	if (o->conv >= 0 && c->id != o->conv)
		return false;
	for (int e = 0; e < 2; e++) {
		char a[QPT_ADDR_STRLEN];

		if (c->ep[e].qpn_known && (gint64)c->ep[e].qpn == o->qp)
			qp = true;
		if (o->addr && !strcmp(qpt_endpoint_addr(&c->ep[e], a), addr_text))
			addr = true;
	}
	return qp && addr;
}

bool conv_selected(const struct run *r, const struct qpt_conv_ident *c)
{
	return qpt_conv_matches(r->o, r->addr_text, c);
}

/* An 802.3x PAUSE or PFC frame that pauses (an XOFF: a time > 0). */
static bool is_pause(const struct qpt_pkt *pkt)
{
	const struct qpt_macc *m = &pkt->macc;

	if (!(pkt->flags & QPT_HAS_MACC) || m->error)
		return false;
	if (m->opcode == QPT_MACC_PAUSE)
		return m->quanta[0] > 0;
	for (unsigned p = 0; m->opcode == QPT_MACC_PFC && p < 8; p++)
		if ((m->cev & (1u << p)) && m->quanta[p])
			return true;
	return false;
}

/* The counter (QPT_DIR_COUNTERS index) an event kind's events count in
 * their direction, -1: none there (NAKs count by code, totals apart). */
static int event_counter(unsigned kind)
{
	static int at[QPT_VB_COUNT];
	static bool made;

	if (!made) {
		for (unsigned k = 0; k < QPT_VB_COUNT; k++) {
			at[k] = -1;
			for (unsigned c = 0; c < QPT_C_COUNT; c++)
				if (qpt_counters[c].key && qpt_verdicts[k].counter &&
				    !strcmp(qpt_counters[c].key, qpt_verdicts[k].counter))
					at[k] = (int)c;
		}
		made = true;
	}
	return kind < QPT_VB_COUNT ? at[kind] : -1;
}

struct wdir *wdir_of(GHashTable *t, int32_t conv, int dir)
{
	struct wconv *w = g_hash_table_lookup(t, GINT_TO_POINTER(conv));

	if (!w) {
		w = g_new0(struct wconv, 1);
		g_hash_table_insert(t, GINT_TO_POINTER(conv), w);
	}
	return &w->d[dir];
}

/* --from/--to: a frame in the window and its events, counted as the
 * engine counts the whole input (qpt_flow.c, the sequence analysis): by
 * the frame's conversation and direction, the events by theirs. */
static void window_count(struct run *r, const struct qpt_frame *f, int64_t ns,
			 const struct qpt_pkt *pkt, const struct qpt_verdict *v)
{
	struct qpt_totals *t = &r->wtot;

	if (pkt && f->number) {
		const struct qpt_opcode_info *oi = &qpt_opcodes[pkt->bth.opcode];
		bool bth = pkt->transport != QPT_TR_NONE && (pkt->flags & QPT_HAS_BTH);

		t->frames++;
		t->iba_packets += pkt->transport != QPT_TR_NONE;
		t->malformed += (v->flags & QPT_V(MALFORMED)) != 0;
		t->bad_icrc += (v->flags & QPT_V(BAD_ICRC)) != 0;
		t->management += bth && pkt->bth.dqpn <= 1 && (pkt->bth.opcode & 0xe0) == QPT_SVC_UD;
		if (bth && v->conv >= 0 && (v->dir == 0 || v->dir == 1)) {
			struct wdir *d = wdir_of(r->wconvs, v->conv, v->dir);

			if (!d->c[QPT_C_packets])
				d->first_ns = ns;
			d->last_ns = ns;
			d->c[QPT_C_packets]++;
			d->c[QPT_C_bytes] += pkt->wirelen;
			if (!(oi->flags & QPT_O_CNP))
				d->c[QPT_C_payload_bytes] += pkt->payload_len;
			if (oi->flags & QPT_O_RESP)
				d->c[QPT_C_resp_packets]++;
			else if (!(oi->flags & QPT_O_CNP))
				d->c[QPT_C_req_packets]++;
			if ((oi->flags & QPT_O_ACK) && pkt->aeth.kind == QPT_AETH_ACK &&
			    !(v->flags & QPT_V(DUPLICATE)))
				d->c[QPT_C_acks]++;
			d->c[QPT_C_fecn] += pkt->bth.fecn;
			d->c[QPT_C_becn] += pkt->bth.becn;
			d->c[QPT_C_malformed] += (v->flags & QPT_V(MALFORMED)) != 0;
			d->c[QPT_C_bad_icrc] += (v->flags & QPT_V(BAD_ICRC)) != 0;
		}
	}
	for (unsigned i = 0; i < v->nevents; i++) {
		const struct qpt_event *ev = &v->ev[i];
		int k = event_counter(ev->kind);
		struct wdir *d;

		switch (ev->kind) {
		case QPT_VB_IP_FRAGMENT: t->fragmented_roce_packets++; break;
		case QPT_VB_TIME_BACKWARDS: t->time_backwards++; break;
		case QPT_VB_CM_UNKNOWN: t->cm_unknown_comm_id++; break;
		case QPT_VB_CM_REJECT: t->cm_rejects++; break;
		default: break;
		}
		if (ev->conv < 0 || (ev->dir != 0 && ev->dir != 1))
			continue;
		d = wdir_of(r->wconvs, ev->conv, ev->dir);
		if (ev->kind == QPT_VB_NAK)
			d->naks[MIN(ev->code, QPT_NAK_KINDS - 1u)]++;
		if (ev->kind == QPT_VB_PSN_GAP)
			d->c[QPT_C_missing_psns] += ev->count;
		if (ev->kind == QPT_VB_RESPONSE_GAP)
			d->c[QPT_C_missing_responses] += ev->count;
		if (k >= 0 && k != QPT_C_bad_icrc) /* (by the frame, above: an event of no direction) */
			d->c[k]++;
	}
}

/* Every analysed frame: the conversations the window shows; the events
 * (events command) of the frames it shows. */
static void on_frame(void *user, const struct qpt_frame *f, int64_t ns,
		     const struct qpt_pkt *pkt, const struct qpt_verdict *v)
{
	struct run *r = user;
	struct qpt_conv_ident ci;

	if (f->number && (!r->have_span || ns < r->first_ns))
		r->first_ns = ns;
	if (f->number && (!r->have_span || ns > r->last_ns))
		r->last_ns = ns;
	r->have_span |= f->number != 0; /* (the end's events come without a frame) */
	if (r->several && f->number) {
		struct recent *e = &r->recent[f->number % RECENT];

		*e = (struct recent){ f->number, f->file_number, f->file };
	}
	if (!f->in_window)
		return;
	if (r->ff && v->nevents) /* (the window's: its findings name them) */
		qpt_findings_frames_add(r->ff, v);
	if (r->wconvs)
		window_count(r, f, ns, pkt, v);
	if (pkt && pkt->roce_like && r->roce_like) {
		gpointer k = GUINT_TO_POINTER(pkt->udp_dport);

		g_hash_table_insert(r->roce_like, k,
				    GSIZE_TO_POINTER(GPOINTER_TO_SIZE(g_hash_table_lookup(r->roce_like, k)) + 1));
	}
	if (pkt && f->number) { /* (the end's events come without a frame) */
		bool iba = pkt->transport != QPT_TR_NONE, pause = is_pause(pkt);

		if (r->intervals) {
			struct interval *iv = interval_at(r, ns);

			iv->packets += iba;
			iv->pauses += pause;
		}
		if (r->win) {
			r->win->packets += iba;
			r->win->pauses += pause;
			if (!r->win_span || ns < r->win_first)
				r->win_first = ns;
			if (!r->win_span || ns > r->win_last)
				r->win_last = ns;
			r->win_span = true;
		}
	}
	if (r->intervals || r->win)
		for (unsigned i = 0; i < v->nevents; i++)
			if (conv_selected(r, v->ev[i].conv >= 0 ?
						     qpt_flow_conv_ident(r->fl, v->ev[i].conv, &ci) : NULL)) {
				if (r->intervals)
					interval_at(r, v->ev[i].time_ns)->ev[v->ev[i].kind]++;
				if (r->win)
					r->win->ev[v->ev[i].kind]++;
			}
	if (v->conv >= 0 && r->seen) {
		if ((guint)v->conv >= r->seen->len)
			g_array_set_size(r->seen, (guint)v->conv + 1);
		g_array_index(r->seen, gboolean, v->conv) = TRUE;
	}
	if (!r->events)
		return;
	for (unsigned i = 0; i < v->nevents; i++)
		if (conv_selected(r, v->ev[i].conv >= 0 ?
					     qpt_flow_conv_ident(r->fl, v->ev[i].conv, &ci) : NULL))
		{
			event_out(&v->ev[i], r, f);
			r->nevents[v->ev[i].kind]++;
		}
	if (r->out->len > 60000 && qpt_write_out(r->out, "standard output")) {
		r->write_failed = true;
		r->an.stop = true; /* nobody reads what follows */
	}
}

/* Writes out what the report holds so far (a report of a million
 * conversations is not built whole in memory); a failed write is
 * remembered and reported at the end. */
void spill(struct run *r)
{
	if (r->out->len > 60000 && !r->write_failed && qpt_write_out(r->out, "standard output"))
		r->write_failed = true;
	if (r->write_failed)
		g_string_truncate(r->out, 0); /* nobody reads it */
}

/* Worst first: the engine's ranking (the keys only: 0 for two rows that
 * tie). */
static int conv_row_keys_cmp(const struct conv_row *x, const struct conv_row *y)
{
	return qpt_rank_key_cmp(x, y, false);
}

/* ... then the id. */
static gint conv_row_cmp(gconstpointer a, gconstpointer b)
{
	return qpt_rank_key_cmp(a, b, true);
}

static const struct {
	const char *title;
	int width;
	bool left;
} table_col[] = {
	{ "conv", 5, false }, { "", 1, false }, { "transport", 9, true },
	{ "packets", 9, false }, { "bytes", 12, false }, { "throughput", 13, false },
	{ "re-sent", 13, false }, { "episodes", 9, false }, { "time lost", 10, false },
	{ "CNPs", 7, false }, { "RTT p50/p99", 20, false }, { "", 2, false },
	{ "endpoints", 0, true },
};
enum { N_COL = G_N_ELEMENTS(table_col) };

/* One conversation's line of the table. */
static void table_line(struct run *r, const struct qpt_conv_stats *c)
{
	GString *o = r->out;
	struct qpt_conv_numbers n;
	char cell[N_COL][128], e0[QPT_ENDPOINT_QP_STRLEN], e1[QPT_ENDPOINT_QP_STRLEN];
	uint64_t resent_of = 0;

	if (r->rows_left == 0) {
		r->rows_hidden++;
		return;
	}
	if (r->rows_left > 0)
		r->rows_left--;
	qpt_conv_numbers(c, &n);
	/* the share of re-sent packets: of the sendings of the directions
	 * that re-sent them (as the findings count it) */
	for (int d = 0; d < 2; d++)
		if (c->dir[d].retransmitted_packets)
			resent_of += c->dir[d].packets - MIN(c->dir[d].packets,
							      c->dir[d].duplicates);
	g_snprintf(cell[0], sizeof(cell[0]), "%d", c->id);
	cell[1][0] = 0;
	g_strlcpy(cell[2], c->transport[0] ? c->transport : "?", sizeof(cell[2]));
	g_snprintf(cell[3], sizeof(cell[3]), "%" PRIu64, n.packets);
	g_snprintf(cell[4], sizeof(cell[4]), "%" PRIu64, n.bytes);
	if (n.duration_ns > 0)
		qpt_format_rate(n.throughput_bps, cell[5], sizeof(cell[5]));
	else
		g_strlcpy(cell[5], "-", sizeof(cell[5]));
	if (n.resent && resent_of)
		g_snprintf(cell[6], sizeof(cell[6]), "%" PRIu64 " (%.*f %%)", n.resent,
			   100.0 * (double)n.resent / (double)resent_of >= 9.95 ? 0 : 1,
			   100.0 * (double)n.resent / (double)resent_of);
	else
		g_strlcpy(cell[6], "0", sizeof(cell[6]));
	g_snprintf(cell[7], sizeof(cell[7]), "%" PRIu64, n.episodes);
	qpt_format_time_lost(&n, cell[8], sizeof(cell[8]));
	g_snprintf(cell[9], sizeof(cell[9]), "%" PRIu64, n.cnps);
	qpt_format_rtt_p50_p99(&n, cell[10], sizeof(cell[10]));
	cell[11][0] = 0;
	g_snprintf(cell[12], sizeof(cell[12]), "%s <-> %s",
		   qpt_format_endpoint_qp(&c->ep[0], e0), qpt_format_endpoint_qp(&c->ep[1], e1));
	for (unsigned k = 0; k < N_COL; k++) {
		if (k == N_COL - 1)
			g_string_append(o, cell[k]);
		else
			(table_col[k].left ? cell_left : cell_pad)(o, cell[k], table_col[k].width);
	}
	g_string_append_c(o, '\n');
	spill(r);
}

static const struct conv_row *conv_row_of(const struct qpt_conv_stats *c, struct conv_row *row)
{
	qpt_conv_rank_key(c, row);
	return row;
}

static void text_conv_table(struct run *r, guint nshown)
{
	GString *o = r->out;
	GArray *rows;
	const struct conv_row zero = { .id = -1 };
	struct qpt_conv_walk w;
	const struct qpt_conv_stats *c;
	struct qpt_conv_stats one;
	guint k = 0;

	if (!nshown)
		return;
	rows = g_array_new(FALSE, TRUE, sizeof(struct conv_row));
	for (qpt_conv_walk_start(&w, r->fl, shown_filter, r); (c = viewed(r, qpt_conv_walk_next(&w)));) {
		struct conv_row row;

		if (conv_row_keys_cmp(conv_row_of(c, &row), &zero))
			g_array_append_val(rows, row);
	}
	qpt_conv_walk_end(&w);
	g_array_sort(rows, conv_row_cmp);
	g_string_append(o, "conversations (worst first):\n");
	for (unsigned col = 0; col < N_COL; col++)
		(table_col[col].left ? cell_left : cell_pad)(o, table_col[col].title,
							     table_col[col].width);
	g_string_append_c(o, '\n');
	for (; k < rows->len && conv_row_keys_cmp(&g_array_index(rows, struct conv_row, k), &zero) < 0; k++)
		table_line(r, viewed(r, qpt_flow_conv_stats(r->fl, g_array_index(rows, struct conv_row, k).id, &one)));
	for (qpt_conv_walk_start(&w, r->fl, shown_filter, r); (c = viewed(r, qpt_conv_walk_next(&w)));) {
		struct conv_row row;

		if (!conv_row_keys_cmp(conv_row_of(c, &row), &zero))
			table_line(r, c);
	}
	qpt_conv_walk_end(&w);
	for (; k < rows->len; k++)
		table_line(r, viewed(r, qpt_flow_conv_stats(r->fl, g_array_index(rows, struct conv_row, k).id, &one)));
	if (r->rows_hidden)
		qpt_appendf(o, "  and %u more %s (-v, --top N)\n", r->rows_hidden,
			    r->rows_hidden == 1 ? "conversation" : "conversations");
	g_string_append_c(o, '\n');
	g_array_free(rows, TRUE);
}

/* A conversation with trouble for the "worst conversations" list, as the
 * summary shows it (the window's counts with --from/--to): its rank and
 * numbers, taken when it is shown (viewed() keeps one at a time). */
struct worst_row {
	struct qpt_rank_key k;
	uint64_t n[2][3]; /* per direction: retransmitted, PSN gaps, go-back-N */
};

static void worst_add(GArray *rows, const struct qpt_conv_stats *c)
{
	struct worst_row w;

	qpt_conv_rank_key(c, &w.k);
	for (int d = 0; d < 2; d++) {
		w.n[d][0] = c->dir[d].retransmitted_packets;
		w.n[d][1] = c->dir[d].psn_gaps;
		w.n[d][2] = c->dir[d].gbn_episodes;
	}
	g_array_append_val(rows, w);
}

static gint worst_cmp(gconstpointer a, gconstpointer b)
{
	return qpt_rank_key_cmp(&((const struct worst_row *)a)->k,
				&((const struct worst_row *)b)->k, true);
}

/* How many conversations the selectors show (for "no such conversation"),
 * and how many there are (*all). */
static guint count_shown(const struct run *r, guint *all)
{
	struct qpt_conv_walk w;
	const struct qpt_conv_stats *c;
	guint n = 0, k = 0;

	for (qpt_conv_walk_start(&w, r->fl, NULL, NULL); (c = qpt_conv_walk_next(&w)); k++)
		n += shown_conv(r, &c->ident);
	qpt_conv_walk_end(&w);
	if (all)
		*all = k;
	return n;
}

bool shown_filter(const struct qpt_conv_ident *c, void *r)
{
	return shown_conv(r, c);
}

/* What only the front end sees: a filter that matched nothing, RoCEv2 on
 * a port not decoded. */
static void front_end_findings(struct run *r, GArray *fs)
{
	const struct qpt_totals *t = qpt_flow_totals(r->fl);
	gpointer k, v, best_port = NULL;
	size_t best = 0;
	GHashTableIter it;
	gchar *text;

	if (r->o->filter && r->an.frames_read && !r->an.frames_matched) {
		text = g_strdup_printf("the filter -f '%s' matched none of the %" PRIu64 " frames: "
				       "in a mirror or tunnel (ERSPAN, GRE, VXLAN) -f sees the outer "
				       "headers; --addr selects by the inner ones", r->o->filter,
				       r->an.frames_read);
		qpt_findings_add_capture(fs, QPT_F_FILTER_MATCHED_NOTHING, text, r->an.frames_read);
		g_free(text);
	}
	g_hash_table_iter_init(&it, r->roce_like);
	while (g_hash_table_iter_next(&it, &k, &v))
		if (GPOINTER_TO_SIZE(v) > best ||
		    (GPOINTER_TO_SIZE(v) == best && GPOINTER_TO_UINT(k) < GPOINTER_TO_UINT(best_port))) {
			best = GPOINTER_TO_SIZE(v);
			best_port = k;
		}
	/* a few look-alikes among RoCE are chance; many, or RoCE only there, not */
	if (best >= 8 && best > t->iba_packets) {
		text = g_strdup_printf("%zu UDP datagrams to port %u read as RoCEv2 (a BTH, an "
				       "ICRC's room), %" PRIu64 " RoCE/IB packets decoded: RoCEv2 on "
				       "port %u? run with -p %u", best, GPOINTER_TO_UINT(best_port),
				       t->iba_packets, GPOINTER_TO_UINT(best_port),
				       GPOINTER_TO_UINT(best_port));
		qpt_findings_add_capture(fs, QPT_F_ROCE_OTHER_PORT, text, best);
		g_free(text);
	}
}

static void summary_out(struct run *r, const char *file)
{
	bool everything = r->o->conv < 0 && r->o->qp < 0 && !r->o->addr;
	GPtrArray *att = everything ? qpt_flow_cm_attempts(r->fl) : g_ptr_array_new();
	/* the conversations with trouble, for the worst ones (the others are
	 * read one at a time, where they go: qpt_conv_walk) */
	GArray *troubled = g_array_new(FALSE, FALSE, sizeof(struct worst_row));
	/* with --from/--to the window's (qpt_flow_totals() for the capture line) */
	const struct qpt_totals *t = r->wconvs ? &r->wtot : qpt_flow_totals(r->fl);
	GString *o = r->out;
	uint64_t rexmit = 0, gaps = 0, naks = 0, rnr = 0, gbn = 0, cnps = 0, ce = 0;
	/* the directions that re-sent packets, and their sendings (packets
	 * less capture copies): the denominator of every share re-sent */
	uint64_t resent_dirs = 0, all_dirs = 0, sendings_all = 0;
	guint nconvs = 0, nshown = 0, njson = 0, nall = 0;
	struct qpt_conv_walk w;
	const struct qpt_conv_stats *c;
	GArray *fs, *groups;
	struct qpt_diag_opts dopt = { .verbose = r->o->verbose || r->o->long_report,
				      .top = r->o->top };

	for (qpt_conv_walk_start(&w, r->fl, NULL, NULL); (c = qpt_conv_walk_next(&w));) {
		nall++;
		if (!in_window(r, &c->ident))
			continue; /* with --from/--to, the window's conversations count */
		nshown += shown_conv(r, &c->ident);
		nconvs++;
		c = viewed(r, c);
		if (qpt_conv_trouble(c))
			worst_add(troubled, c);
		for (int d = 0; d < 2; d++) {
			const struct qpt_dir_stats *x = &c->dir[d];

			rexmit += x->retransmitted_packets;
			all_dirs += x->packets > 0;
			if (x->retransmitted_packets) {
				resent_dirs++;
				sendings_all += x->packets - MIN(x->packets, x->duplicates);
			}
			gaps += x->psn_gaps;
			rnr += x->rnr_naks;
			gbn += x->gbn_episodes;
			cnps += x->cnps;
			ce += x->ecn_ce;
			for (int k = 0; k < QPT_NAK_KINDS; k++)
				naks += x->naks[k];
		}
	}
	qpt_conv_walk_end(&w);
	/* the findings of what is shown; the capture's own with no selection */
	fs = qpt_findings_walk_view(r->fl, shown_filter, r, att, everything, r->ff,
				    r->wconvs ? &r->view : NULL);
	if (everything)
		front_end_findings(r, fs);
	groups = qpt_findings_groups_view(r->fl, fs, r->wconvs ? &r->view : NULL);
	for (guint i = 0; i < fs->len; i++) {
		enum qpt_severity s = g_array_index(fs, struct qpt_finding, i).severity;

		if (!r->any_finding || s > r->worst)
			r->worst = s;
		r->any_finding = true;
	}
	if (r->o->json) {
		g_string_append(o, "{\"schema\":\"" QPT_SCHEMA_BASE "summary-" QPT_SCHEMA_VERSION
				   "\",\"file\":");
		qpt_json_escape(o, file);
		if (r->have_span) {
			json_time(o, "first_frame", r->first_ns);
			json_time(o, "last_frame", r->last_ns);
		} else {
			g_string_append(o, ",\"first_frame\":null,\"last_frame\":null");
		}
		if (r->an.interrupted)
			qpt_appendf(o, ",\"interrupted\":true,\"frames_read\":%" PRIu64,
					       r->an.frames_read);
		else if (r->an.count_reached)
			qpt_appendf(o, ",\"count_reached\":%d", r->o->count);
		g_string_append(o, ",\"conversations\":[");
		for (qpt_conv_walk_start(&w, r->fl, shown_filter, r); (c = qpt_conv_walk_next(&w));) {
			g_string_append(o, njson++ ? "," : "");
			json_conv(o, viewed(r, c));
			spill(r);
		}
		qpt_conv_walk_end(&w);
		g_string_append_c(o, ']');
		json_attempts(o, att);
		qpt_diagnosis_json(o, fs, groups);
		interval_json(r);
		window_json(r, nconvs);
		json_pfc(o, r->fl);
		qpt_appendf(o,
				       ",\"totals\":{\"frames\":%" PRIu64 ",\"iba_packets\":%" PRIu64
				       ",\"management\":%" PRIu64 ",\"malformed\":%" PRIu64
				       ",\"bad_icrc\":%" PRIu64 ",\"untracked\":%" PRIu64
				       ",\"conversations\":%u,\"retransmitted_packets\":%" PRIu64
				       ",\"psn_gaps\":%" PRIu64 ",\"naks\":%" PRIu64
				       ",\"rnr_naks\":%" PRIu64 ",\"gbn_episodes\":%" PRIu64
				       ",\"cnps\":%" PRIu64 ",\"ecn_ce\":%" PRIu64
				       ",\"cm_unknown_comm_id\":%" PRIu64 ",\"cm_rejects\":%" PRIu64
				       ",\"fragmented_roce_packets\":%" PRIu64,
				       t->frames, t->iba_packets, t->management, t->malformed,
				       t->bad_icrc, t->untracked, nconvs, rexmit, gaps,
				       naks, rnr, gbn, cnps, ce, t->cm_unknown_comm_id,
				       t->cm_rejects, t->fragmented_roce_packets);
		/* headers-only captures: the key only when some frame was cut */
		if (t->cut_by_snaplen)
			qpt_appendf(o, ",\"cut_by_capture\":%" PRIu64
					       ",\"cut_snaplen\":%u", t->cut_by_snaplen, t->snaplen);
		/* pcapng interface statistics: only when a file had them */
		if (t->drops_known)
			qpt_appendf(o, ",\"interface_drops\":%" PRIu64
					       ",\"os_drops\":%" PRIu64, t->interface_drops, t->os_drops);
		/* --max-qps: the limit, and whether it was reached */
		if (t->max_halves)
			qpt_appendf(o, ",\"max_qps\":%u,\"qp_limit_reached\":%s",
					       t->max_halves, t->limit_reached ? "true" : "false");
		g_string_append(o, "}}\n");
		goto out;
	}
	qpt_appendf(o, "%s:\n\n", file);
	if (r->an.interrupted)
		qpt_appendf(o, "cut short by Ctrl-C: the results of the first %" PRIu64
				       " frames only\n\n", r->an.frames_read);
	else if (r->an.count_reached)
		qpt_appendf(o, "stopped after %d frames (-c): the results of those "
				       "only\n\n", r->o->count);
	/* the capture as a whole first: when, how much, how much of it went wrong */
	g_string_append(o, "capture: ");
	if (r->have_span) {
		char d[48];

		qpt_format_iso(o, r->first_ns, true);
		g_string_append(o, " to ");
		qpt_format_iso(o, r->last_ns, true);
		qpt_appendf(o, " (%s), ", qpt_format_duration(r->last_ns - r->first_ns, d, sizeof(d)));
	}
	if (r->o->filter)
		qpt_appendf(o, "%" PRIu64 " of %" PRIu64 " frames matched -f, ", r->an.frames_matched,
			    r->an.frames_read);
	qpt_appendf(o, "%" PRIu64 " frames, %u %s", qpt_flow_totals(r->fl)->frames, nall,
		    nall == 1 ? "conversation" : "conversations");
	if (r->win) { /* the window's counts: its own line */
		g_string_append(o, " (the whole input)\n");
		window_text(r, nconvs);
	}
	if (rexmit && sendings_all) {
		qpt_appendf(o, "; %" PRIu64 " of %" PRIu64 " directions re-sent ", resent_dirs, all_dirs);
		share_text(o, rexmit, sendings_all);
	}
	g_string_append_c(o, '\n');
	g_string_append_c(o, '\n');
	/* at most 40 lines in all: 4 or 5 above, the diagnosis with its blank
	 * line, the table (a title, its head, --top rows (10 by default), "and
	 * N more", a blank line), the totals line and up to 3 notes */
	dopt.max_lines = 40 - 1 - 4 - MIN(25u, 4u + (guint)(r->o->top > 0 ? r->o->top : 10)) - 4;
	if (r->an.interrupted || r->an.count_reached)
		dopt.max_lines -= 2;
	if (r->win)
		dopt.max_lines--;
	qpt_diagnosis_text(o, fs, groups, &dopt);
	r->rows_left = dopt.verbose ? -1 : r->o->top > 0 ? r->o->top : 10;
	if (r->o->long_report) {
		for (qpt_conv_walk_start(&w, r->fl, shown_filter, r); (c = qpt_conv_walk_next(&w));) {
			text_conv(o, viewed(r, c), r->an.t0, r->o->verbose);
			spill(r);
		}
		qpt_conv_walk_end(&w);
	} else {
		text_conv_table(r, nshown);
	}
	interval_text(r);
	if (dopt.verbose) { /* the findings name them otherwise */
		text_attempts(o, att);
		text_pfc(o, r->fl);
	}
	qpt_appendf(o,
			       "totals: %" PRIu64 " frames, %" PRIu64 " RoCE/IB (%" PRIu64
			       " management, %" PRIu64 " malformed, %" PRIu64 " bad ICRC), ",
			       t->frames, t->iba_packets, t->management, t->malformed, t->bad_icrc);
	counted(o, nconvs, "conversation", "; ");
	qpt_appendf(o, "%" PRIu64 " retransmitted, ", rexmit);
	counted(o, gaps, "PSN gap", ", ");
	counted(o, naks, "NAK", ", ");
	counted(o, rnr, "RNR NAK", ", ");
	qpt_appendf(o, "%" PRIu64 " go-back-N, ", gbn);
	counted(o, cnps, "CNP", ", ");
	qpt_appendf(o, "%" PRIu64 " ECN-CE\n", ce);
	if (t->cut_by_snaplen)
		qpt_appendf(o, "note: %" PRIu64 " frame%s cut by the capture at %u bytes: "
				       "ICRC not checked\n", t->cut_by_snaplen,
				       t->cut_by_snaplen == 1 ? "" : "s", t->snaplen);
	if (t->interface_drops + t->os_drops)
		qpt_appendf(o, "warning: the capture dropped %" PRIu64 " packets "
				       "(pcapng interface statistics: %" PRIu64 " by the interface, %"
				       PRIu64 " by the OS)\n", t->interface_drops + t->os_drops,
				       t->interface_drops, t->os_drops);
	if (t->limit_reached)
		qpt_appendf(o, "warning: %" PRIu64 " packet%s not analysed: more QPs than "
				       "--max-qps %u\n", t->untracked, t->untracked == 1 ? "" : "s",
				       t->max_halves);
	if (!r->o->long_report)
		goto out; /* the findings say the rest, the table is worst first */
	if (t->fragmented_roce_packets)
		qpt_appendf(o, "warning: %" PRIu64 " RoCEv2 packets fragmented by IP (v4 or v6), not "
				       "analysed (an IP MTU smaller than the RoCE MTU?)\n",
				       t->fragmented_roce_packets);
	/* the worst ten: every conversation with trouble, ranked (a
	 * conversation with none ranks after them all) */
	g_array_sort(troubled, worst_cmp);
	for (guint i = 0; i < troubled->len && i < 10; i++) {
		const struct worst_row *wr = &g_array_index(troubled, struct worst_row, i);

		if (!i)
			g_string_append(o, "worst conversations:\n");
		qpt_appendf(o,
				       "  conv %d: %" PRIu64 "+%" PRIu64 " retransmitted, %" PRIu64
				       "+%" PRIu64 " PSN gaps, %" PRIu64 "+%" PRIu64
				       " go-back-N (a->b + b->a)\n",
				       wr->k.id, wr->n[0][0], wr->n[1][0], wr->n[0][1], wr->n[1][1],
				       wr->n[0][2], wr->n[1][2]);
	}
out:
	qpt_findings_groups_free(groups);
	g_array_free(fs, TRUE);
	g_array_free(troubled, TRUE);
	g_ptr_array_free(att, TRUE);
}

/* --addr: an IPv4 or IPv6 address, a GID, or "LID N"; compared in the
 * form the summary prints endpoints. */
bool qpt_selection_init(const struct opts *o, char addr_text[QPT_ADDR_STRLEN])
{
	unsigned char b[16] = { 0 };
	guint64 lid;
	const char *s = o->addr;

	addr_text[0] = 0;
	if (!s)
		return true;
	if (inet_pton(AF_INET, s, b + 12) == 1) {
		qpt_addr_format(b, 4, addr_text);
	} else if (inet_pton(AF_INET6, s, b) == 1) {
		qpt_addr_format(b, 6, addr_text);
	} else if ((g_str_has_prefix(s, "LID ") &&
		    g_ascii_string_to_unsigned(s + 4, 0, 0, 0xffff, &lid, NULL)) ||
		   (g_str_has_prefix(s, "lid:") &&
		    g_ascii_string_to_unsigned(s + 4, 0, 0, 0xffff, &lid, NULL))) {
		b[0] = (unsigned char)(lid >> 8);
		b[1] = (unsigned char)lid;
		qpt_addr_format(b, 'L', addr_text);
	} else {
		g_printerr("qptrace: bad --addr '%s': an IPv4 or IPv6 address, a GID, or LID N\n", s);
		return false;
	}
	return true;
}

/* One analysis over the files as a single timeline; plot --timeline: its
 * interval table drawn into timeline_out (else NULL). */
int run_one(struct opts *o, gchar **files, bool events, GString *timeline_out)
{
	struct run r = { .o = o, .out = g_string_sized_new(1 << 16), .events = events };
	bool selecting = o->conv >= 0 || o->qp >= 0 || o->addr;
	int status;
	guint nall;

	if (!qpt_selection_init(o, r.addr_text))
		return 2;
	r.fl = qpt_drive_new(o);
	r.several = files[0] && files[1];
	r.window = o->from || o->to;
	if (r.window) { /* (only for a window: a flag per conversation) */
		r.seen = g_array_new(FALSE, TRUE, sizeof(gboolean));
		r.win = g_new0(struct interval, 1);
		if (!events) { /* the summary counts the window (window_view) */
			r.wconvs = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
			r.vep[0] = g_array_new(FALSE, FALSE, sizeof(struct qpt_episode));
			r.vep[1] = g_array_new(FALSE, FALSE, sizeof(struct qpt_episode));
			r.view = (struct qpt_findings_view){ .conv = window_view, .data = &r,
							     .totals = &r.wtot };
		}
	}
	if (!events) {
		r.ff = qpt_findings_frames_new();
		r.roce_like = g_hash_table_new(g_direct_hash, g_direct_equal);
	}
	if (!events && (o->interval > 0 || timeline_out)) {
		r.intervals = g_array_new(FALSE, TRUE, sizeof(struct interval));
		r.interval_ns = MAX((int64_t)1, (int64_t)llround(o->interval * 1e9));
		r.interval_auto = !(o->interval > 0);
		if (r.interval_auto)
			r.interval_ns = 1000; /* 1 µs, doubled as the capture goes on */
	}
	r.an.window_selects = true; /* analyse everything, show the window */
	status = qpt_analyse_files(o, files, true, r.fl, &r.an, on_frame, &r, NULL);
	/* no frame follows: the halves go before the results thaw the
	 * conversations (qpt_flow_cold.c) */
	qpt_drive_forget(r.fl);
	r.file = r.an.label; /* only the files that could be read */
	window_final(&r);
	if (r.an.opened && (selecting || r.window) && !count_shown(&r, &nall)) {
		g_printerr("qptrace %s: no conversation %s in %s (it has %u; qptrace summary "
			   "lists them)\n", events ? "events" : "summary",
			   r.window && !selecting ? "in that time window" : "matches the selection",
			   r.an.label, nall);
		status = 2;
	}
	/* A capture without frames still gets its (empty) summary. */
	if (r.an.opened && !events && !r.write_failed && timeline_out)
		timeline_render(&r, timeline_out);
	else if (r.an.opened && !events && !r.write_failed)
		summary_out(&r, r.an.label);
	if (r.write_failed || qpt_write_out(r.out, "standard output"))
		status = 2;
	/* events: what they were, on stderr, also when there was none */
	if (r.an.opened && events && !o->quiet && status != 2) {
		GString *t = g_string_new("");
		uint64_t n = 0;

		for (unsigned k = 0; k < QPT_VB_COUNT; k++) {
			if (!r.nevents[k])
				continue;
			qpt_appendf(t, "%s%" PRIu64 " %s", n ? ", " : ": ",
					       r.nevents[k], qpt_verdicts[k].key);
			n += r.nevents[k];
		}
		fflush(stdout); /* the events first, when both go to a terminal */
		g_printerr("%s: %" PRIu64 " frames, %" PRIu64 " %s%s%s\n", r.an.label,
			   r.an.frames_read, n, n == 1 ? "event" : "events", t->str,
			   r.an.interrupted ? " (cut short by Ctrl-C)" : "");
		g_string_free(t, TRUE);
	}
	if (r.an.interrupted && !status)
		status = 130; /* as a shell reports SIGINT: the results are partial */
	/* --fail-on: 1 for a finding that bad, unless something else went wrong */
	if (!status && !events && o->fail_on >= 0 && r.any_finding && (gint)r.worst >= o->fail_on)
		status = 1;
	g_string_free(r.out, TRUE);
	qpt_drive_free(r.fl);
	g_free(r.an.label);
	if (r.seen) {
		g_array_free(r.seen, TRUE);
		g_array_free(r.seen_final, TRUE);
	}
	qpt_findings_frames_free(r.ff);
	if (r.intervals)
		g_array_free(r.intervals, TRUE);
	g_free(r.win);
	if (r.wconvs) {
		g_hash_table_destroy(r.wconvs);
		if (r.wfinal)
			g_hash_table_destroy(r.wfinal);
		g_array_free(r.vep[0], TRUE);
		g_array_free(r.vep[1], TRUE);
	}
	if (r.roce_like)
		g_hash_table_destroy(r.roce_like);
	return status;
}

static int run_all(struct opts *o, bool events)
{
	int status = 0;

	if (!o->each) {
		status = run_one(o, o->files, events, NULL);
	} else {
		for (gchar **file = o->files; *file; file++) {
			gchar *one[2] = { *file, NULL };
			int rc = run_one(o, one, events, NULL);

			if (rc)
				status = rc;
			if (qpt_interrupted)
				break; /* Ctrl-C: no further files */
		}
	}
	fflush(stdout);
	return status;
}

int cmd_summary(struct opts *o)
{
	return run_all(o, false);
}

int cmd_events(struct opts *o)
{
	return run_all(o, true);
}
