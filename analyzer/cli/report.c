/* report.c - `qptrace summary` (tcptrace -l style) and `qptrace events`
 *
 * The JSON shapes are a public contract documented in README.md.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reader.h"
#include "options.h"
#include "commands.h"
#include "driver.h"
#include "output.h"
#include "interrupt.h"
#include "shard.h"
#include "qpt_findings.h"
#include "qpt_flow.h"
#include "qpt_pfc.h"
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
	char addr_text[QPT_ADDR_STRLEN];
	struct qpt_findings_frames *ff; /* frames the findings name */
	uint64_t nevents[QPT_VB_COUNT]; /* events shown, by kind */
	/* the time of the first and last frame analysed */
	bool have_span;
	int64_t first_ns, last_ns;
	/* the table: rows still to print (-1: all), rows left out */
	long rows_left;
	guint rows_hidden;
	enum qpt_severity worst; /* of the findings (summary --fail-on) */
	int64_t prev_event_ns;	 /* events --time delta: the event before */
	bool any_event;
	/* summary --interval: struct interval per interval from an.t0 */
	GArray *intervals;
	int64_t interval_ns;
	bool interval_auto; /* plot --timeline: intervals double past 512 */
	/* --from/--to: what the window holds (frames' first and last time,
	 * packets, pauses, events as `events` prints them) */
	GHashTable *roce_like; /* UDP port -> datagrams that read as RoCEv2 there */
	struct interval *win;
	bool win_span;
	int64_t win_first, win_last;
	bool any_finding;
	/* --from/--to: each conversation direction's counts in the window by
	 * the id its frames and events carried (id -> struct wconv), then by
	 * the id at the end (wfinal); the window's totals; the conversation
	 * as the summary shows it (window_view: its storage) */
	GHashTable *wconvs, *wfinal;
	struct qpt_totals wtot;
	struct qpt_conv_stats vconv;
	GArray *vep[2];
	struct qpt_findings_view view;
};

/* A conversation direction's counts in the window: the QPT_DIR_COUNTERS
 * rows, the NAKs by code, its first and last frame. */
struct wdir {
	uint64_t c[QPT_C_COUNT];
	uint64_t naks[QPT_NAK_KINDS];
	int64_t first_ns, last_ns;
};
struct wconv {
	struct wdir d[2];
};

/* One event, as a JSON Lines object or a text line.  f is the frame it is
 * on, named by file and frame in it when several files are merged. */
static void event_out(const struct qpt_event *ev, struct run *r,
		      const struct qpt_frame *f)
{
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
		qpt_appendf(o, "{\"schema\":\"" QPT_SCHEMA_BASE "events-" QPT_SCHEMA_VERSION
			    "\",\"frame\":%" PRIu64 ",\"time\":", ev->frame);
		qpt_format_epoch(o, ev->time_ns);
		if (f) {
			g_string_append(o, ",\"file\":");
			qpt_json_escape(o, f->file);
			qpt_appendf(o, ",\"file_frame\":%" PRIu64, f->file_number);
		}
	} else {
		switch (r->o->time_mode) {
		case QPT_TIME_ABS:
			qpt_format_iso(o, ev->time_ns, true);
			break;
		case QPT_TIME_DELTA: /* the first from the first frame, as tcpdump -ttt */
			qpt_appendf(o, "%.6f",
				    secs(ev->time_ns - (r->any_event ? r->prev_event_ns : r->an.t0)));
			break;
		default:
			qpt_appendf(o, "%.6f", secs(ev->time_ns - r->an.t0));
			break;
		}
		r->prev_event_ns = ev->time_ns;
		r->any_event = true;
		qpt_appendf(o, " frame %" PRIu64, ev->frame);
		if (f)
			qpt_appendf(o, " (%s frame %" PRIu64 ")", f->file, f->file_number);
	}
	qpt_event_words(o, ev, ev->conv, r->o->json);
}

/* An event after its frame and time (events, monitor): JSON keys from
 * "conv" to the closing brace, or the text line from " conv". */
void qpt_event_words(GString *o, const struct qpt_event *ev, int32_t conv, bool json)
{
	const struct qpt_verdict_info *vi = &qpt_verdicts[ev->kind];
	char dur[32];

	if (json) {
		qpt_appendf(o, ",\"conv\":%d,\"dir\":%d,\"kind\":\"%s\",\"psn\":%u",
				       conv, ev->dir, vi->key, ev->psn);
		if (ev->original_frame)
			qpt_appendf(o, ",\"original_frame\":%" PRIu64,
					       ev->original_frame);
		if (vi->count_key)
			qpt_appendf(o, ",\"%s\":%u", vi->count_key, ev->count);
		switch (vi->code) {
		case QPT_CODE_NAK:
			qpt_appendf(o, ",\"nak\":\"%s\"", qpt_nak_name(ev->code));
			break;
		case QPT_CODE_RNR_NAK:
		case QPT_CODE_RNR_TIMER:
			qpt_appendf(o, ",\"rnr_timer\":%u", ev->code);
			break;
		case QPT_CODE_REASON:
			qpt_appendf(o, ",\"reason\":%u", ev->code);
			break;
		case QPT_CODE_NONE: break;
		}
		if (ev->duration_ns)
			qpt_appendf(o, ",\"duration_us\":%.3f",
					       (double)ev->duration_ns / 1000.0);
		if (ev->detail) {
			g_string_append(o, ",\"detail\":");
			qpt_json_escape(o, ev->detail);
		}
		g_string_append(o, "}\n");
		return;
	}
	qpt_appendf(o, " conv %d %s PSN %u", conv, vi->key, ev->psn);
	if (ev->original_frame)
		qpt_appendf(o, " (%s frame %" PRIu64 ")", qpt_event_link_name(ev->kind),
				       ev->original_frame);
	if (vi->count_key)
		qpt_appendf(o, " %s %u", vi->count_key, ev->count);
	switch (vi->code) {
	case QPT_CODE_NAK: qpt_appendf(o, " %s", qpt_nak_name(ev->code)); break;
	case QPT_CODE_RNR_NAK: /* its duration is the timer's wait */
		qpt_appendf(o, " timer %u (%s)", ev->code,
				       qpt_format_duration(ev->duration_ns, dur, sizeof(dur)));
		break;
	case QPT_CODE_RNR_TIMER: qpt_appendf(o, " timer %u", ev->code); break;
	case QPT_CODE_REASON: qpt_appendf(o, " reason %u", ev->code); break;
	case QPT_CODE_NONE: break;
	}
	if (ev->duration_ns && vi->code != QPT_CODE_RNR_NAK)
		qpt_appendf(o, " after %s",
				       qpt_format_duration(ev->duration_ns, dur, sizeof(dur)));
	if (ev->detail && vi->detail_in_text)
		qpt_appendf(o, ": %s", ev->detail);
	g_string_append_c(o, '\n');
}

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

static bool conv_selected(const struct run *r, const struct qpt_conv_ident *c)
{
	return qpt_conv_matches(r->o, r->addr_text, c);
}

/* summary --interval: what an interval counts, the packets and pauses by
 * frame time, the events (as `events` prints them) by their time. */
struct interval {
	uint64_t packets, pauses;
	uint64_t ev[QPT_VB_COUNT];
};

/* Intervals twice as long: each the sum of two. */
static void intervals_double(struct run *r)
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

static struct interval *interval_at(struct run *r, int64_t ns)
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

static struct wdir *wdir_of(GHashTable *t, int32_t conv, int dir)
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

/* ---- summary: text ------------------------------------------------------- */

/* "1 NAK", "2 NAKs", then SEP */
static void counted(GString *o, uint64_t n, const char *noun, const char *sep)
{
	qpt_appendf(o, "%" PRIu64 " %s%s%s", n, noun, n == 1 ? "" : "s", sep);
}

static void row(GString *o, const char *label, uint64_t a, uint64_t b)
{
	qpt_appendf(o, "  %-28s %18" PRIu64 " %18" PRIu64 "\n", label, a, b);
}

/* s right-aligned in width characters (UTF-8: "µs" is one). */
static void cell_pad(GString *o, const char *s, int width)
{
	long n = g_utf8_strlen(s, -1);

	for (; n < width; n++)
		g_string_append_c(o, ' ');
	g_string_append(o, s);
}

/* The same, left-aligned. */
static void cell_left(GString *o, const char *s, int width)
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
static void text_attempts(GString *o, GPtrArray *att)
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

static void json_attempts(GString *o, GPtrArray *att)
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

/* Priorities, ECN reaction and the rate around CNPs (qpt_ecn.c): shown
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

static void text_conv(GString *o, const struct qpt_conv_stats *c, int64_t t0, bool verbose)
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

/* Priorities and ECN of a direction (qpt_ecn.c): "pcp":{"3":120}, ... */
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

static void json_conv(GString *o, const struct qpt_conv_stats *c)
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

static void json_pfc(GString *o, struct qpt_flow *fl)
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

static void text_pfc(GString *o, struct qpt_flow *fl)
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

/* ---- summary --interval -------------------------------------------------- */

static void spill(struct run *r);
static void json_time(GString *o, const char *key, int64_t ns);

/* The table's columns: the events of a kind (as `events` names them). */
static const struct {
	unsigned kind;
	const char *title;
} interval_col[] = {
	{ QPT_VB_RETRANSMISSION, "re-sent" }, { QPT_VB_PSN_GAP, "PSN gaps" },
	{ QPT_VB_NAK, "NAKs" }, { QPT_VB_RNR_NAK, "RNR NAKs" }, { QPT_VB_CNP, "CNPs" },
	{ QPT_VB_ECN_CE, "ECN-CE" },
};

static void interval_text(struct run *r)
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

static void interval_json(struct run *r)
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
static void window_text(struct run *r, guint nconvs)
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
static void window_json(struct run *r, guint nconvs)
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

static void share_text(GString *o, uint64_t part, uint64_t whole)
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

static void json_time(GString *o, const char *key, int64_t ns)
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

/* A table row: what the ranking needs (qpt_rank.h: the numbers are
 * computed again to print a row: a million conversations cost 32 bytes
 * each here, not a copy each). */
#define conv_row qpt_rank_key

/* Writes out what the report holds so far (a report of a million
 * conversations is not built whole in memory); a failed write is
 * remembered and reported at the end. */
static void spill(struct run *r)
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

/* The conversations, one line each, worst first.  Only the rows a sort
 * moves are copied and sorted: one with no trouble, no time lost and no
 * congestion goes, in id order, where every such row goes (after the rows
 * above it, before any below), so a million healthy conversations cost
 * their report nothing: they are read again, one at a time, where they go
 * (qpt_conv_walk), and the sorted rows are read by id. */
static bool shown_filter(const struct qpt_conv_ident *c, void *r);
static const struct qpt_conv_stats *viewed(struct run *r, const struct qpt_conv_stats *c);

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

/* In the summary: selected, and with a frame in the window when there is
 * one (ids seen during the reading may have been folded since). */
static bool in_window(const struct run *r, const struct qpt_conv_ident *c)
{
	return !r->window || ((guint)c->id < r->seen_final->len &&
			      g_array_index(r->seen_final, gboolean, c->id));
}

static bool shown_conv(const struct run *r, const struct qpt_conv_ident *c)
{
	return conv_selected(r, c) && in_window(r, c);
}

/* The window's counts of conversation id as it is at the end: those of the
 * ids folded into it added up. */
static void window_fold(struct run *r)
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

/* The conversation as the summary shows it: with --from/--to, its counts
 * are the window's (its id, endpoints, pairing, priorities, RTT and
 * messages those of the whole input; the go-back-N episodes that started
 * in the window, as the whole input found them); valid until the next
 * call. */
static const struct qpt_conv_stats *window_view(const struct qpt_conv_stats *c, void *data)
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

static const struct qpt_conv_stats *viewed(struct run *r, const struct qpt_conv_stats *c)
{
	return window_view(c, r);
}

/* The ids of the conversations that had a frame in the window, as they are
 * at the end (an id seen early may have been folded into another). */
static void window_final(struct run *r)
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

static bool shown_filter(const struct qpt_conv_ident *c, void *r)
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

/* ---- plot --timeline ------------------------------------------------------ */

static int run_one(struct opts *o, gchar **files, bool events, GString *timeline_out);

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

static void timeline_render(struct run *r, GString *svg)
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

/* One analysis over the files as a single timeline; plot --timeline: its
 * interval table drawn into timeline_out (else NULL). */
static int run_one(struct opts *o, gchar **files, bool events, GString *timeline_out)
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
