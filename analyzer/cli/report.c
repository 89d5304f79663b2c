/* report.c - `qptrace summary` (tcptrace -l style) and `qptrace events`
 *
 * The JSON shapes are a public contract documented in README.md.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <string.h>

#include "cli.h"
#include "qpt_flow.h"
#include "qpt_rank.h"

static double secs(int64_t ns)
{
	return (double)ns / 1e9;
}

#define RECENT 4096 /* frames remembered for events of earlier frames */

struct run {
	struct opts *o;
	GString *out;
	struct qpt_flow *fl;
	const char *file;
	struct qpt_analysis an;
	bool events;
	bool several; /* files merged: events also say which file and frame */
	/* the last frames' files, for events of earlier frames */
	struct recent {
		uint64_t number, file_number;
		const char *file;
	} recent[RECENT];
	bool write_failed;
	bool window;	  /* --from/--to given: show what they select */
	GArray *seen;	  /* gboolean per conversation id: a frame in the window */
	GArray *seen_final; /* the same by the ids at the end */
	unsigned char addr[16]; /* --addr, parsed */
	uint8_t addr_family;
	char addr_text[QPT_ADDR_STRLEN];
};

/* One event, as a JSON Lines object or a text line.  f is the frame it is
 * on, named by file and frame in it when several files are merged. */
static void event_out(const struct qpt_event *ev, const struct run *r,
		      const struct qpt_frame *f)
{
	const struct qpt_verdict_info *vi = &qpt_verdicts[ev->kind];
	GString *o = r->out;
	struct qpt_frame at;

	if (!r->several) {
		f = NULL;
	} else if (f && ev->frame != f->number) {
		/* an event of an earlier frame: its file and number there */
		const struct recent *e = &r->recent[ev->frame % RECENT];

		f = NULL;
		if (e->number == ev->frame) {
			at = (struct qpt_frame){ .file = e->file, .file_number = e->file_number };
			f = &at;
		}
	}
	if (r->o->json) {
		g_string_append_printf(o, "{\"frame\":%" PRIu64 ",\"time\":%" PRId64 ".%06d",
				       ev->frame, ev->time_ns / 1000000000,
				       (int)(ev->time_ns % 1000000000 / 1000));
		if (f) {
			g_string_append(o, ",\"file\":");
			qpt_json_escape(o, f->file);
			g_string_append_printf(o, ",\"file_frame\":%" PRIu64, f->file_number);
		}
		g_string_append_printf(o, ",\"conv\":%d,\"dir\":%d,\"kind\":\"%s\",\"psn\":%u",
				       ev->conv, ev->dir, vi->key, ev->psn);
		if (ev->original_frame)
			g_string_append_printf(o, ",\"original_frame\":%" PRIu64,
					       ev->original_frame);
		if (vi->count_key)
			g_string_append_printf(o, ",\"%s\":%u", vi->count_key, ev->count);
		switch (vi->code) {
		case QPT_CODE_NAK:
			g_string_append_printf(o, ",\"nak\":\"%s\"", qpt_nak_name(ev->code));
			break;
		case QPT_CODE_RNR_NAK:
		case QPT_CODE_RNR_TIMER:
			g_string_append_printf(o, ",\"rnr_timer\":%u", ev->code);
			break;
		case QPT_CODE_REASON:
			g_string_append_printf(o, ",\"reason\":%u", ev->code);
			break;
		case QPT_CODE_NONE: break;
		}
		if (ev->duration_ns)
			g_string_append_printf(o, ",\"duration_us\":%.3f",
					       (double)ev->duration_ns / 1000.0);
		if (ev->detail) {
			g_string_append(o, ",\"detail\":");
			qpt_json_escape(o, ev->detail);
		}
		g_string_append(o, "}\n");
		return;
	}
	g_string_append_printf(o, "%.6f frame %" PRIu64, secs(ev->time_ns - r->an.t0), ev->frame);
	if (f)
		g_string_append_printf(o, " (%s frame %" PRIu64 ")", f->file, f->file_number);
	g_string_append_printf(o, " conv %d %s PSN %u", ev->conv, vi->key, ev->psn);
	if (ev->original_frame)
		g_string_append_printf(o, " (original frame %" PRIu64 ")", ev->original_frame);
	if (vi->count_key)
		g_string_append_printf(o, " %s %u", vi->count_key, ev->count);
	switch (vi->code) {
	case QPT_CODE_NAK: g_string_append_printf(o, " %s", qpt_nak_name(ev->code)); break;
	case QPT_CODE_RNR_NAK: /* its duration is the timer's wait */
		g_string_append_printf(o, " timer %u (%.1f us)", ev->code,
				       (double)ev->duration_ns / 1000.0);
		break;
	case QPT_CODE_RNR_TIMER: g_string_append_printf(o, " timer %u", ev->code); break;
	case QPT_CODE_REASON: g_string_append_printf(o, " reason %u", ev->code); break;
	case QPT_CODE_NONE: break;
	}
	if (ev->duration_ns && vi->code != QPT_CODE_RNR_NAK)
		g_string_append_printf(o, " after %.1f us", (double)ev->duration_ns / 1000.0);
	if (ev->detail && vi->detail_in_text)
		g_string_append_printf(o, ": %s", ev->detail);
	g_string_append_c(o, '\n');
}

/* Does the conversation pass --conv, --qp and --addr?  (The window is
 * checked apart: by frame for events, by conversation for summary.) */
static bool conv_selected(const struct run *r, const struct qpt_conv *c)
{
	bool qp = r->o->qp < 0, addr = !r->o->addr;

	if (!c)
		return r->o->conv < 0 && r->o->qp < 0 && !r->o->addr;
	if (r->o->conv >= 0 && c->id != r->o->conv)
		return false;
	for (int e = 0; e < 2; e++) {
		char a[QPT_ADDR_STRLEN];

		if (c->ep[e].qpn_known && (gint64)c->ep[e].qpn == r->o->qp)
			qp = true;
		if (r->o->addr && !strcmp(qpt_endpoint_addr(&c->ep[e], a), r->addr_text))
			addr = true;
	}
	return qp && addr;
}

/* Every analysed frame: the conversations the window shows; the events
 * (events command) of the frames it shows. */
static void on_frame(void *user, const struct qpt_frame *f, int64_t ns,
		     const struct qpt_pkt *pkt, const struct qpt_verdict *v)
{
	struct run *r = user;

	(void)ns;
	(void)pkt;
	if (r->several && f->number) {
		struct recent *e = &r->recent[f->number % RECENT];

		*e = (struct recent){ f->number, f->file_number, f->file };
	}
	if (!f->in_window)
		return;
	if (v->conv >= 0 && r->seen) {
		if ((guint)v->conv >= r->seen->len)
			g_array_set_size(r->seen, (guint)v->conv + 1);
		g_array_index(r->seen, gboolean, v->conv) = TRUE;
	}
	if (!r->events)
		return;
	for (unsigned i = 0; i < v->nevents; i++)
		if (conv_selected(r, v->ev[i].conv >= 0 ?
					     qpt_flow_conv(r->fl, v->ev[i].conv) : NULL))
			event_out(&v->ev[i], r, f);
	if (r->out->len > 60000 && qpt_write_out(r->out, "standard output")) {
		r->write_failed = true;
		r->an.stop = true; /* nobody reads what follows */
	}
}

/* Input options from the command line; false after reporting a bad one. */
bool qpt_input_opts_from(const struct opts *o, struct qpt_input_opts *io)
{
	memset(io, 0, sizeof(*io));
	io->bpf = o->filter;
	io->progress = !o->quiet;
	if (o->from) {
		if (!qpt_parse_time(o->from, &io->from_ns, &io->from_rel)) {
			g_printerr("qptrace: bad --from time '%s'\n", o->from);
			return false;
		}
		io->has_from = true;
	}
	if (o->to) {
		if (!qpt_parse_time(o->to, &io->to_ns, &io->to_rel)) {
			g_printerr("qptrace: bad --to time '%s'\n", o->to);
			return false;
		}
		io->has_to = true;
	}
	return true;
}

int qpt_analyse_files(const struct opts *o, gchar **files, bool progress,
		      struct qpt_flow *fl, struct qpt_analysis *an,
		      qpt_frame_fn fn, void *user, GPtrArray *keep_errors)
{
	struct qpt_input_opts io;
	struct qpt_input *in;
	struct qpt_frame f;
	struct qpt_pkt pkt;
	const struct qpt_pkt *p;
	struct qpt_verdict v;
	GPtrArray *errors = keep_errors ? keep_errors :
			    g_ptr_array_new_with_free_func((GDestroyNotify)g_error_free);
	int status = 0;

	if (!qpt_input_opts_from(o, &io))
		return 2;
	io.progress = progress && !o->quiet;
	io.decode = &o->dec;
	io.window_selects = an->window_selects;
	in = qpt_input_open(files, &io, errors);
	if (!keep_errors)
		status = qpt_errors_print(errors);
	if (!in) {
		if (!keep_errors)
			g_ptr_array_free(errors, TRUE);
		return 2;
	}
	an->opened = true;
	an->label = qpt_input_label(in);
	while (!an->stop && qpt_input_next(in, &f, errors) > 0) {
		int64_t ns = f.ts_sec * 1000000000 + f.ts_nsec;

		if (!an->have_t0) {
			an->t0 = ns;
			an->have_t0 = true;
		}
		if (!f.matched)
			continue;
		p = f.pkt; /* decoded by the reading thread, or here */
		if (!p) {
			qpt_decode(&pkt, f.linktype, f.data, f.caplen, f.wirelen, &o->dec);
			p = &pkt;
		}
		/* each file is a capture point of its own: merged captures of
		 * both hosts show every packet twice, copies, not resends */
		qpt_flow_set_tap(fl, f.file_index);
		qpt_flow_packet(fl, f.number, ns, p, &v);
		if (fn)
			fn(user, &f, ns, p, &v);
	}
	qpt_input_close(in);
	/* the events still undecided at the end (of earlier frames) */
	qpt_flow_drain(fl, &v);
	if (fn && v.nevents && an->have_t0 && !an->stop) {
		static const struct qpt_pkt none;
		struct qpt_frame last = { .in_window = true, .file = "" };

		fn(user, &last, 0, &none, &v);
	}
	qpt_flow_finish(fl);
	if (keep_errors)
		return errors->len ? 2 : 0;
	status |= qpt_errors_print(errors);
	g_ptr_array_free(errors, TRUE);
	return status;
}

/* ---- summary: text ------------------------------------------------------- */

/* "1 NAK", "2 NAKs", then SEP */
static void counted(GString *o, uint64_t n, const char *noun, const char *sep)
{
	g_string_append_printf(o, "%" PRIu64 " %s%s%s", n, noun, n == 1 ? "" : "s", sep);
}

static void row(GString *o, const char *label, uint64_t a, uint64_t b)
{
	g_string_append_printf(o, "  %-28s %18" PRIu64 " %18" PRIu64 "\n", label, a, b);
}

static void row_lat(GString *o, const char *label, const struct qpt_lat *a,
		    const struct qpt_lat *b)
{
	const struct qpt_lat *l[2] = { a, b };
	char cell[2][64];

	if (!a->n && !b->n)
		return;
	for (int i = 0; i < 2; i++) {
		if (l[i]->n)
			g_snprintf(cell[i], sizeof(cell[i]), "%.1f/%.1f/%.1f", l[i]->min_us,
				   qpt_lat_percentile(l[i], 50), l[i]->max_us);
		else
			g_strlcpy(cell[i], "-", sizeof(cell[i]));
	}
	g_string_append_printf(o, "  %-28s %18s %18s\n", label, cell[0], cell[1]);
}

/* CM requests that made no conversation. */
static void text_attempts(GString *o, GPtrArray *att)
{
	char fq[QPT_ENDPOINT_QP_STRLEN], t[QPT_ADDR_STRLEN];

	for (guint i = 0; i < att->len; i++) {
		const struct qpt_cm_attempt *a = g_ptr_array_index(att, i);

		if (!i)
			g_string_append(o, "CM requests that made no connection:\n");
		qpt_format_endpoint_qp(&a->from, fq);
		qpt_endpoint_addr(&a->to, t);
		g_string_append_printf(o, "  REQ frame %" PRIu64 ": %s -> %s, service ID 0x%016" PRIx64,
				       a->info.req_frame, fq, t, a->info.service_id);
		if (a->info.mra_frame)
			g_string_append_printf(o, ", MRA frame %" PRIu64, a->info.mra_frame);
		if (a->info.rej_frame)
			g_string_append_printf(o, ", REJ frame %" PRIu64 ": reason %u (%s)\n",
					       a->info.rej_frame, a->info.rej_reason,
					       qpt_cm_rej_reason_text(a->info.rej_reason));
		else
			g_string_append(o, ": no REP or REJ in the capture\n");
	}
	if (att->len)
		g_string_append_c(o, '\n');
}

static void json_attempts(GString *o, GPtrArray *att)
{
	char f[QPT_ADDR_STRLEN], t[QPT_ADDR_STRLEN];

	g_string_append(o, ",\"cm_failed\":[");
	for (guint i = 0; i < att->len; i++) {
		const struct qpt_cm_attempt *a = g_ptr_array_index(att, i);

		qpt_endpoint_addr(&a->from, f);
		qpt_endpoint_addr(&a->to, t);
		g_string_append_printf(o,
				       "%s{\"req_frame\":%" PRIu64 ",\"from\":{\"addr\":\"%s\",\"qpn\":%u}"
				       ",\"to\":{\"addr\":\"%s\"},\"service_id\":%" PRIu64
				       ",\"mra_frame\":%" PRIu64 ",\"rej_frame\":%" PRIu64,
				       i ? "," : "", a->info.req_frame, f, a->from.qpn, t,
				       a->info.service_id, a->info.mra_frame, a->info.rej_frame);
		if (a->info.rej_frame)
			g_string_append_printf(o, ",\"rej_reason\":%u,\"rej_reason_name\":\"%s\"",
					       a->info.rej_reason, qpt_cm_rej_reason_text(a->info.rej_reason));
		g_string_append_c(o, '}');
	}
	g_string_append_c(o, ']');
}

/* Per operation: messages and their bytes, for the ops seen. */
static void text_ops(GString *o, const struct qpt_dir *a, const struct qpt_dir *b)
{
	for (int op = 1; op < QPT_OP_COUNT; op++) {
		char label[64];

		if (!a->ops[op].count && !b->ops[op].count)
			continue;
		g_snprintf(label, sizeof(label), "%s messages:", qpt_op_name(op));
		row(o, label, a->ops[op].count, b->ops[op].count);
		g_snprintf(label, sizeof(label), "%s message bytes:", qpt_op_name(op));
		row(o, label, a->ops[op].bytes, b->ops[op].bytes);
	}
}

/* NAKs by code: PSN sequence errors always, the others when seen. */
static void text_naks(GString *o, const struct qpt_dir *a, const struct qpt_dir *b)
{
	for (unsigned i = 0; i < QPT_NAK_KINDS; i++) {
		char label[64];

		if (!a->naks[i] && !b->naks[i] && i)
			continue;
		g_snprintf(label, sizeof(label), "NAK %s:", qpt_nak_name(i));
		row(o, label, a->naks[i], b->naks[i]);
	}
}

static void text_conv(GString *o, const struct qpt_conv *c, int64_t t0)
{
	const struct qpt_dir *a = &c->dir[0], *b = &c->dir[1];
	char e0[QPT_ENDPOINT_QP_STRLEN], e1[QPT_ENDPOINT_QP_STRLEN];

	qpt_format_endpoint_qp(&c->ep[0], e0);
	qpt_format_endpoint_qp(&c->ep[1], e1);
	g_string_append_printf(o, "conversation %d: %s  a: %s  b: %s\n", c->id,
			       c->transport[0] ? c->transport : "?", e0, e1);
	g_string_append_printf(o, "  paired by %s%s%s%s\n", qpt_paired_by_name(c->paired_by),
			       c->pair_evidence[0] ? " (" : "", c->pair_evidence,
			       c->pair_evidence[0] ? ")" : "");
	if (c->has_cm) {
		const struct qpt_cm_info *cm = &c->cm;

		g_string_append_printf(o,
				       "  CM: REQ frame %" PRIu64 ", REP frame %" PRIu64
				       ", RTU frame %" PRIu64 ", DREQ frame %" PRIu64
				       ", DREP frame %" PRIu64 "; service ID 0x%016" PRIx64
				       ", path MTU %u\n",
				       cm->req_frame, cm->rep_frame, cm->rtu_frame,
				       cm->dreq_frame, cm->drep_frame, cm->service_id,
				       cm->path_mtu);
		if (cm->rej_frame)
			g_string_append_printf(o, "  CM REJ frame %" PRIu64 ": reason %u (%s)\n",
					       cm->rej_frame, cm->rej_reason,
					       qpt_cm_rej_reason_text(cm->rej_reason));
		if (cm->has_ip) {
			char s[64], d[64];
			int af = cm->ip.ip_version == 4 ? AF_INET : AF_INET6;
			const uint8_t *sa = cm->ip.ip_version == 4 ? cm->ip.src + 12 : cm->ip.src;
			const uint8_t *da = cm->ip.ip_version == 4 ? cm->ip.dst + 12 : cm->ip.dst;

			inet_ntop(af, sa, s, sizeof(s));
			inet_ntop(af, da, d, sizeof(d));
			g_string_append_printf(o, "  RDMA-CM: %s port %u -> %s port %u\n", s,
					       cm->ip.port, d, cm->ip.dst_port);
		}
	}
	g_string_append_printf(o, "  %-28s %18s %18s\n", "", "a->b", "b->a");
	for (unsigned k = 0; k < QPT_C_COUNT; k++) {
		const struct qpt_counter_info *ci = &qpt_counters[k];
		uint64_t va = qpt_counter(a, k), vb = qpt_counter(b, k);

		if (ci->label && (ci->always || va || vb))
			row(o, ci->label, va, vb);
		if (k == QPT_C_resp_packets)
			text_ops(o, a, b);
		if (k == QPT_C_out_of_order)
			text_naks(o, a, b);
	}
	row_lat(o, "ACK RTT us min/p50/max:", &a->ack_rtt, &b->ack_rtt);
	row_lat(o, "READ latency us:", &a->read_lat, &b->read_lat);
	row_lat(o, "atomic latency us:", &a->atomic_lat, &b->atomic_lat);
	{
		char pa[32] = "-", pb[32] = "-";

		if (a->psn_seen)
			g_snprintf(pa, sizeof(pa), "%u-%u", a->first_psn, a->last_psn);
		if (b->psn_seen)
			g_snprintf(pb, sizeof(pb), "%u-%u", b->first_psn, b->last_psn);
		g_string_append_printf(o, "  %-28s %18s %18s\n", "request PSNs:", pa, pb);
	}
	g_string_append_printf(o, "  %-28s %18.6f %18.6f\n", "first packet (s):",
			       a->packets ? secs(a->first_ns - t0) : 0.0,
			       b->packets ? secs(b->first_ns - t0) : 0.0);
	g_string_append_printf(o, "  %-28s %18.6f %18.6f\n", "last packet (s):",
			       a->packets ? secs(a->last_ns - t0) : 0.0,
			       b->packets ? secs(b->last_ns - t0) : 0.0);
	for (int d = 0; d < 2; d++) {
		const struct qpt_dir *x = &c->dir[d];

		for (guint i = 0; x->episodes && i < x->episodes->len; i++) {
			const struct qpt_episode *e =
				&g_array_index(x->episodes, struct qpt_episode, i);

			g_string_append_printf(o,
					       "  %s go-back-N #%u: %s frame %" PRIu64
					       ", first resent frame %" PRIu64
					       ", %u packets resent from PSN %u, %.1f us lost\n",
					       d ? "b->a" : "a->b", i + 1,
					       qpt_trigger_name(e->trigger),
					       e->trigger_frame, e->first_resent_frame,
					       e->resent_packets, e->from_psn,
					       (double)(e->end_ns - e->start_ns) / 1000.0);
		}
	}
	g_string_append_c(o, '\n');
}

/* ---- summary: JSON ------------------------------------------------------- */

static void json_lat(GString *o, const char *key, const struct qpt_lat *l)
{
	g_string_append_printf(o, ",\"%s\":", key);
	if (!l->n) {
		g_string_append(o, "null");
		return;
	}
	g_string_append_printf(o,
			       "{\"n\":%" PRIu64 ",\"min\":%.3f,\"mean\":%.3f,\"p50\":%.3f,\"p99\":%.3f,\"max\":%.3f}",
			       l->n, l->min_us, l->sum_us / (double)l->n,
			       qpt_lat_percentile(l, 50), qpt_lat_percentile(l, 99),
			       l->max_us);
}

static void json_ops(GString *o, const struct qpt_dir *x)
{
	bool first = true;

	g_string_append(o, ",\"messages\":{");
	for (int op = 1; op < QPT_OP_COUNT; op++) {
		if (!x->ops[op].count)
			continue;
		g_string_append_printf(o, "%s\"%s\":%" PRIu64, first ? "" : ",",
				       qpt_op_name(op), x->ops[op].count);
		first = false;
	}
	g_string_append(o, "},\"message_sizes\":{");
	first = true;
	for (int op = 1; op < QPT_OP_COUNT; op++) {
		const struct qpt_opstat *s = &x->ops[op];

		if (!s->count)
			continue;
		g_string_append_printf(o,
				       "%s\"%s\":{\"bytes\":%" PRIu64 ",\"min\":%u,\"max\":%u,\"packets\":%" PRIu64 "}",
				       first ? "" : ",", qpt_op_name(op), s->bytes,
				       s->min_size, s->max_size, s->packets);
		first = false;
	}
	g_string_append_c(o, '}');
}

static void json_dir(GString *o, const struct qpt_dir *x)
{
	g_string_append_printf(o, "{\"from\":%u,\"to\":%u", x->from, x->to);
	for (unsigned k = 0; k < QPT_C_COUNT; k++) {
		if (qpt_counters[k].key)
			g_string_append_printf(o, ",\"%s\":%" PRIu64, qpt_counters[k].key,
					       qpt_counter(x, k));
		if (k == QPT_C_resp_packets)
			json_ops(o, x);
		if (k == QPT_C_out_of_order) {
			g_string_append(o, ",\"naks\":{");
			for (unsigned i = 0; i < QPT_NAK_KINDS; i++)
				g_string_append_printf(o, "%s\"%s\":%" PRIu64, i ? "," : "",
						       qpt_nak_name(i), x->naks[i]);
			g_string_append_c(o, '}');
		}
	}
	if (x->psn_seen)
		g_string_append_printf(o, ",\"first_psn\":%u,\"last_psn\":%u",
				       x->first_psn, x->last_psn);
	if (x->packets) {
		double dur = secs(x->last_ns - x->first_ns);

		g_string_append_printf(o,
				       ",\"first_time\":%.6f,\"last_time\":%.6f,\"throughput_bps\":%.0f",
				       secs(x->first_ns), secs(x->last_ns),
				       dur > 0 ? (double)x->payload_bytes * 8 / dur : 0.0);
	}
	json_lat(o, "ack_rtt_us", &x->ack_rtt);
	json_lat(o, "read_latency_us", &x->read_lat);
	json_lat(o, "atomic_latency_us", &x->atomic_lat);
	g_string_append(o, ",\"episodes\":[");
	for (guint i = 0; x->episodes && i < x->episodes->len; i++) {
		const struct qpt_episode *e = &g_array_index(x->episodes, struct qpt_episode, i);

		g_string_append_printf(o,
				       "%s{\"trigger\":\"%s\",\"trigger_frame\":%" PRIu64
				       ",\"first_resent_frame\":%" PRIu64 ",\"end_frame\":%" PRIu64
				       ",\"resent_packets\":%u,\"from_psn\":%u,\"time_lost_us\":%.3f}",
				       i ? "," : "", qpt_trigger_name(e->trigger),
				       e->trigger_frame, e->first_resent_frame, e->end_frame,
				       e->resent_packets, e->from_psn,
				       (double)(e->end_ns - e->start_ns) / 1000.0);
	}
	g_string_append(o, "]}");
}

static void json_conv(GString *o, const struct qpt_conv *c)
{
	char a[64];

	g_string_append_printf(o, "{\"id\":%d,\"transport\":\"%s\",\"paired_by\":\"%s\"",
			       c->id, c->transport[0] ? c->transport : "?",
			       qpt_paired_by_name(c->paired_by));
	g_string_append(o, ",\"evidence\":");
	qpt_json_escape(o, c->pair_evidence);
	g_string_append(o, ",\"endpoints\":[");
	for (int e = 0; e < 2; e++) {
		qpt_endpoint_addr(&c->ep[e], a);
		g_string_append_printf(o, "%s{\"addr\":\"%s\",\"qpn\":", e ? "," : "", a);
		if (c->ep[e].qpn_known)
			g_string_append_printf(o, "%u}", c->ep[e].qpn);
		else
			g_string_append(o, "null}");
	}
	g_string_append_c(o, ']');
	if (c->mtu)
		g_string_append_printf(o, ",\"mtu\":%u", c->mtu);
	if (c->has_cm) {
		const struct qpt_cm_info *cm = &c->cm;

		g_string_append_printf(o,
				       ",\"cm\":{\"req_frame\":%" PRIu64 ",\"rep_frame\":%" PRIu64
				       ",\"rtu_frame\":%" PRIu64 ",\"dreq_frame\":%" PRIu64
				       ",\"drep_frame\":%" PRIu64 ",\"rej_frame\":%" PRIu64
				       ",\"service_id\":%" PRIu64 ",\"path_mtu\":%u"
				       ",\"starting_psn\":[%u,%u]",
				       cm->req_frame, cm->rep_frame, cm->rtu_frame,
				       cm->dreq_frame, cm->drep_frame, cm->rej_frame,
				       cm->service_id, cm->path_mtu, cm->psn[0], cm->psn[1]);
		if (cm->rej_frame)
			g_string_append_printf(o, ",\"rej_reason\":%u,\"rej_reason_name\":\"%s\"",
					       cm->rej_reason, qpt_cm_rej_reason_text(cm->rej_reason));
		if (cm->req_frame)
			g_string_append_printf(o, ",\"setup_time\":%.6f", secs(cm->req_ns));
		if (cm->rtu_frame)
			g_string_append_printf(o, ",\"established_time\":%.6f", secs(cm->rtu_ns));
		if (cm->dreq_frame)
			g_string_append_printf(o, ",\"teardown_time\":%.6f", secs(cm->dreq_ns));
		if (cm->has_ip) {
			char s[64], d[64];
			int af = cm->ip.ip_version == 4 ? AF_INET : AF_INET6;

			inet_ntop(af, cm->ip.ip_version == 4 ? cm->ip.src + 12 : cm->ip.src,
				  s, sizeof(s));
			inet_ntop(af, cm->ip.ip_version == 4 ? cm->ip.dst + 12 : cm->ip.dst,
				  d, sizeof(d));
			g_string_append_printf(o,
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

/* In the summary: selected, and with a frame in the window when there is
 * one (ids seen during the reading may have been folded since). */
static bool shown_conv(const struct run *r, const struct qpt_conv *c)
{
	if (!conv_selected(r, c))
		return false;
	return !r->window || ((guint)c->id < r->seen_final->len &&
			      g_array_index(r->seen_final, gboolean, c->id));
}

/* The ids of the conversations that had a frame in the window, as they are
 * at the end (an id seen early may have been folded into another). */
static void window_final(struct run *r)
{
	r->seen_final = g_array_new(FALSE, TRUE, sizeof(gboolean));
	g_array_set_size(r->seen_final, r->seen->len);
	for (guint id = 0; id < r->seen->len; id++) {
		int32_t now = qpt_flow_conv_id(r->fl, (int32_t)id);

		if (g_array_index(r->seen, gboolean, id) && now >= 0 && (guint)now < r->seen->len)
			g_array_index(r->seen_final, gboolean, now) = TRUE;
	}
}

/* How many conversations the selectors show (for "no such conversation"). */
static guint count_shown(const struct run *r)
{
	GPtrArray *convs = qpt_flow_conversations(r->fl);
	guint n = 0;

	for (guint i = 0; i < convs->len; i++)
		n += shown_conv(r, g_ptr_array_index(convs, i));
	g_ptr_array_free(convs, TRUE);
	return n;
}

static void summary_out(struct run *r, const char *file)
{
	GPtrArray *convs = qpt_flow_conversations(r->fl);
	GPtrArray *att = r->o->conv < 0 && r->o->qp < 0 && !r->o->addr ?
				 qpt_flow_cm_attempts(r->fl) : g_ptr_array_new();
	const struct qpt_totals *t = qpt_flow_totals(r->fl);
	GString *o = r->out;
	uint64_t rexmit = 0, gaps = 0, naks = 0, rnr = 0, gbn = 0, cnps = 0, ce = 0;
	guint shown = 0;

	for (guint i = 0; i < convs->len; i++) {
		const struct qpt_conv *c = g_ptr_array_index(convs, i);

		for (int d = 0; d < 2; d++) {
			const struct qpt_dir *x = &c->dir[d];

			rexmit += x->retransmitted_packets;
			gaps += x->psn_gaps;
			rnr += x->rnr_naks;
			gbn += x->gbn_episodes;
			cnps += x->cnps;
			ce += x->ecn_ce;
			for (int k = 0; k < QPT_NAK_KINDS; k++)
				naks += x->naks[k];
		}
	}
	if (r->o->json) {
		g_string_append(o, "{\"file\":");
		qpt_json_escape(o, file);
		g_string_append(o, ",\"conversations\":[");
		for (guint i = 0; i < convs->len; i++) {
			const struct qpt_conv *c = g_ptr_array_index(convs, i);

			if (!shown_conv(r, c))
				continue;
			g_string_append(o, shown++ ? "," : "");
			json_conv(o, c);
		}
		g_string_append_c(o, ']');
		json_attempts(o, att);
		g_string_append_printf(o,
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
				       t->bad_icrc, t->untracked, convs->len, rexmit, gaps,
				       naks, rnr, gbn, cnps, ce, t->cm_unknown_comm_id,
				       t->cm_rejects, t->fragmented_roce_packets);
		/* headers-only captures: the key only when some frame was cut */
		if (t->cut_by_snaplen)
			g_string_append_printf(o, ",\"cut_by_capture\":%" PRIu64
					       ",\"cut_snaplen\":%u", t->cut_by_snaplen, t->snaplen);
		g_string_append(o, "}}\n");
		g_ptr_array_free(convs, TRUE);
		g_ptr_array_free(att, TRUE);
		return;
	}
	g_string_append_printf(o, "%s:\n\n", file);
	for (guint i = 0; i < convs->len; i++) {
		const struct qpt_conv *c = g_ptr_array_index(convs, i);

		if (!shown_conv(r, c))
			continue;
		text_conv(o, c, r->an.t0);
	}
	text_attempts(o, att);
	g_string_append_printf(o,
			       "totals: %" PRIu64 " frames, %" PRIu64 " RoCE/IB (%" PRIu64
			       " management, %" PRIu64 " malformed, %" PRIu64 " bad ICRC), ",
			       t->frames, t->iba_packets, t->management, t->malformed, t->bad_icrc);
	counted(o, convs->len, "conversation", "; ");
	g_string_append_printf(o, "%" PRIu64 " retransmitted, ", rexmit);
	counted(o, gaps, "PSN gap", ", ");
	counted(o, naks, "NAK", ", ");
	counted(o, rnr, "RNR NAK", ", ");
	g_string_append_printf(o, "%" PRIu64 " go-back-N, ", gbn);
	counted(o, cnps, "CNP", ", ");
	g_string_append_printf(o, "%" PRIu64 " ECN-CE\n", ce);
	if (t->untracked)
		g_string_append_printf(o, "warning: %" PRIu64 " packets not analysed: more than the QP limit\n",
				       t->untracked);
	if (t->fragmented_roce_packets)
		g_string_append_printf(o, "warning: %" PRIu64 " RoCEv2 packets fragmented by IPv4, not "
				       "analysed (an IP MTU smaller than the RoCE MTU?)\n",
				       t->fragmented_roce_packets);
	if (t->cut_by_snaplen)
		g_string_append_printf(o, "note: %" PRIu64 " frame%s cut by the capture at %u bytes: "
				       "ICRC not checked\n", t->cut_by_snaplen,
				       t->cut_by_snaplen == 1 ? "" : "s", t->snaplen);
	g_ptr_array_sort(convs, qpt_conv_cmp_worst);
	for (guint i = 0; i < convs->len && i < 10; i++) {
		const struct qpt_conv *c = g_ptr_array_index(convs, i);
		uint64_t tr = qpt_conv_trouble(c);

		if (!tr)
			break;
		if (!i)
			g_string_append(o, "worst conversations:\n");
		g_string_append_printf(o,
				       "  conv %d: %" PRIu64 "+%" PRIu64 " retransmitted, %" PRIu64
				       "+%" PRIu64 " PSN gaps, %" PRIu64 "+%" PRIu64
				       " go-back-N (a->b + b->a)\n",
				       c->id, c->dir[0].retransmitted_packets,
				       c->dir[1].retransmitted_packets, c->dir[0].psn_gaps,
				       c->dir[1].psn_gaps, c->dir[0].gbn_episodes,
				       c->dir[1].gbn_episodes);
	}
	g_ptr_array_free(convs, TRUE);
	g_ptr_array_free(att, TRUE);
}

/* --addr: an IPv4 or IPv6 address, a GID, or "LID N"; compared in the
 * form the summary prints endpoints. */
static bool parse_addr(struct run *r, const char *s)
{
	unsigned char b[16] = { 0 };
	guint64 lid;

	if (inet_pton(AF_INET, s, b + 12) == 1) {
		qpt_addr_format(b, 4, r->addr_text);
	} else if (inet_pton(AF_INET6, s, b) == 1) {
		qpt_addr_format(b, 6, r->addr_text);
	} else if ((g_str_has_prefix(s, "LID ") &&
		    g_ascii_string_to_unsigned(s + 4, 0, 0, 0xffff, &lid, NULL)) ||
		   (g_str_has_prefix(s, "lid:") &&
		    g_ascii_string_to_unsigned(s + 4, 0, 0, 0xffff, &lid, NULL))) {
		b[0] = (unsigned char)(lid >> 8);
		b[1] = (unsigned char)lid;
		qpt_addr_format(b, 'L', r->addr_text);
	} else {
		g_printerr("qptrace: bad --addr '%s': an IPv4 or IPv6 address, a GID, or LID N\n", s);
		return false;
	}
	return true;
}

/* One analysis over the files as a single timeline. */
static int run_one(struct opts *o, gchar **files, bool events)
{
	struct run r = { .o = o, .out = g_string_sized_new(1 << 16), .events = events };
	bool selecting = o->conv >= 0 || o->qp >= 0 || o->addr;
	int status;

	if (o->addr && !parse_addr(&r, o->addr))
		return 2;
	r.fl = qpt_flow_new(NULL);
	r.several = files[0] && files[1];
	r.window = o->from || o->to;
	r.seen = g_array_new(FALSE, TRUE, sizeof(gboolean));
	r.an.window_selects = true; /* analyse everything, show the window */
	status = qpt_analyse_files(o, files, true, r.fl, &r.an, on_frame, &r, NULL);
	r.file = r.an.label; /* only the files that could be read */
	window_final(&r);
	if (r.an.opened && (selecting || r.window) && !count_shown(&r)) {
		GPtrArray *all = qpt_flow_conversations(r.fl);

		g_printerr("qptrace %s: no conversation %s in %s (it has %u; qptrace summary "
			   "lists them)\n", events ? "events" : "summary",
			   r.window && !selecting ? "in that time window" : "matches the selection",
			   r.an.label, all->len);
		g_ptr_array_free(all, TRUE);
		status = 2;
	}
	/* A capture without frames still gets its (empty) summary. */
	if (r.an.opened && !events && !r.write_failed)
		summary_out(&r, r.an.label);
	if (r.write_failed || qpt_write_out(r.out, "standard output"))
		status = 2;
	g_string_free(r.out, TRUE);
	qpt_flow_free(r.fl);
	g_free(r.an.label);
	g_array_free(r.seen, TRUE);
	g_array_free(r.seen_final, TRUE);
	return status;
}

static int run_all(struct opts *o, bool events)
{
	int status = 0;

	if (!o->each) {
		status = run_one(o, o->files, events);
	} else {
		for (gchar **file = o->files; *file; file++) {
			gchar *one[2] = { *file, NULL };
			int rc = run_one(o, one, events);

			if (rc)
				status = rc;
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
