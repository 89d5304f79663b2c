/* qpt_findings.c - the diagnosis (see qpt_findings.h) */
#include "qpt_findings.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "qpt_flow.h"
#include "qpt_pfc.h"
#include "qpt_rank.h"

const struct qpt_finding_info qpt_finding_kinds[QPT_F_COUNT] = {
#define QPT_F_ROW(id, k, s, t, n)                                                       \
	[QPT_F_##id] = { .key = k, .severity = QPT_SEV_##s, .title = t, .next_step = n },
	QPT_FINDINGS(QPT_F_ROW)
#undef QPT_F_ROW
};

const char *qpt_severity_name(enum qpt_severity s)
{
	static const char *const names[] = { "chat", "note", "warning", "error" };

	return (unsigned)s < G_N_ELEMENTS(names) ? names[s] : "?";
}

/* ---- numbers as words --------------------------------------------------- */

/* v (>= 0) with three significant digits. */
static void sig3(char *buf, size_t len, double v, const char *unit)
{
	if (v >= 99.95)
		snprintf(buf, len, "%.0f %s", v, unit);
	else if (v >= 9.995)
		snprintf(buf, len, "%.1f %s", v, unit);
	else
		snprintf(buf, len, "%.2f %s", v, unit);
}

char *qpt_format_duration_us(double us, char *buf, size_t len)
{
	double a = fabs(us);
	const char *sign = us < 0 ? "-" : "";
	char tmp[48];

	/* the unit is chosen after rounding: 999.96 us is "1.00 ms" */
	if (a < 999.5)
		sig3(tmp, sizeof(tmp), a, "µs");
	else if (a < 999.5e3)
		sig3(tmp, sizeof(tmp), a / 1e3, "ms");
	else
		sig3(tmp, sizeof(tmp), a / 1e6, "s");
	snprintf(buf, len, "%s%s", sign, tmp);
	return buf;
}

char *qpt_format_rtt_p50_p99(const struct qpt_conv_numbers *n, char *buf, size_t len)
{
	char p50[24], p99[24];

	if (n->rtt_p50_us < 0) {
		g_strlcpy(buf, "-", len);
		return buf;
	}
	g_snprintf(buf, (gulong)len, "%s/%s", qpt_format_duration_us(n->rtt_p50_us, p50, sizeof(p50)),
		   qpt_format_duration_us(n->rtt_p99_us, p99, sizeof(p99)));
	return buf;
}

char *qpt_format_duration(int64_t ns, char *buf, size_t len)
{
	return qpt_format_duration_us((double)ns / 1000.0, buf, len);
}

char *qpt_format_time_lost(const struct qpt_conv_numbers *n, char *buf, size_t len)
{
	if (!n->time_lost_ns) {
		g_strlcpy(buf, "-", len);
		return buf;
	}
	return qpt_format_duration(n->time_lost_ns, buf, len);
}

char *qpt_format_rate(double bps, char *buf, size_t len)
{
	static const char *const units[] = { "bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s" };
	unsigned u = 0;

	if (!(bps > 0)) {
		snprintf(buf, len, "0 bit/s");
		return buf;
	}
	while (u + 1 < G_N_ELEMENTS(units) && bps >= 999.5) {
		bps /= 1000;
		u++;
	}
	sig3(buf, len, bps, units[u]);
	return buf;
}

/* ---- a conversation's numbers -------------------------------------------- */

int64_t qpt_dir_time_lost(const struct qpt_dir_stats *d)
{
	int64_t t = 0;

	for (guint i = 0; d->episodes && i < d->episodes->len; i++) {
		const struct qpt_episode *e = &g_array_index(d->episodes, struct qpt_episode, i);

		if (e->end_ns > e->start_ns)
			t += e->end_ns - e->start_ns;
	}
	return t;
}

static bool conv_span(const struct qpt_conv_stats *c, int64_t *first, int64_t *last)
{
	bool any = false;

	for (int d = 0; d < 2; d++) {
		const struct qpt_dir_stats *x = &c->dir[d];

		if (!x->packets)
			continue;
		if (!any || x->first_ns < *first)
			*first = x->first_ns;
		if (!any || x->last_ns > *last)
			*last = x->last_ns;
		any = true;
	}
	return any;
}

void qpt_conv_numbers(const struct qpt_conv_stats *c, struct qpt_conv_numbers *n)
{
	int64_t first = 0, last = 0;
	const struct qpt_lat *rtt = NULL;

	memset(n, 0, sizeof(*n));
	for (int d = 0; d < 2; d++) {
		const struct qpt_dir_stats *x = &c->dir[d];

		n->packets += x->packets;
		n->bytes += x->payload_bytes;
		n->resent += x->retransmitted_packets;
		n->episodes += x->gbn_episodes;
		n->cnps += x->cnps;
		n->ecn_ce += x->ecn_ce;
		n->time_lost_ns += qpt_dir_time_lost(x);
		if (x->episodes && x->gbn_episodes > x->episodes->len)
			n->episodes_truncated = true;
		if (x->ack_rtt->n && (!rtt || x->ack_rtt->n > rtt->n))
			rtt = x->ack_rtt;
	}
	if (conv_span(c, &first, &last) && last > first) {
		n->duration_ns = last - first;
		n->throughput_bps = (double)n->bytes * 8 / ((double)n->duration_ns / 1e9);
	}
	n->rtt_p50_us = rtt ? qpt_lat_percentile(rtt, 50) : -1;
	n->rtt_p99_us = rtt ? qpt_lat_percentile(rtt, 99) : -1;
}

/* ---- frames to name ------------------------------------------------------ */

/* The verdict kinds whose first frames a finding names. */
static const unsigned frame_kinds[] = {
	QPT_VB_PSN_GAP, QPT_VB_RESPONSE_GAP, QPT_VB_NAK, QPT_VB_RNR_NAK, QPT_VB_CNP,
	QPT_VB_ECN_CE, QPT_VB_BAD_ICRC, QPT_VB_DUPLICATE, QPT_VB_RETRANSMISSION,
};
#define N_FK G_N_ELEMENTS(frame_kinds)
#define FRAMES_PER 2

/* A conversation's first frames of each kind and direction: the
 * FRAMES_PER smallest of each, kept as a list of what there is (a
 * conversation has events of a kind or two: a merged capture's copies,
 * a loss; a table of every kind was 288 bytes for each of a million). */
#define FK_BITS 5 /* an entry: frame << FK_BITS | kind index << 1 | dir */
G_STATIC_ASSERT(N_FK < 1u << (FK_BITS - 1));
struct conv_frames {
	uint8_t n, size;
	int64_t first_ns, last_ns; /* of its events */
	uint64_t e[]; /* n of them, in no order */
};

static void frames_time(struct conv_frames *cf, int64_t first, int64_t last)
{
	if (!cf->n || first < cf->first_ns)
		cf->first_ns = first;
	if (!cf->n || last > cf->last_ns)
		cf->last_ns = last;
}

static unsigned fe_key(uint64_t e)
{
	return (unsigned)(e & ((1u << FK_BITS) - 1));
}

/* Adds frame as the frame of kind index k, direction d, if it is among
 * the FRAMES_PER smallest of them: *cfp may be reallocated. */
static void frames_put(struct conv_frames **cfp, int d, unsigned k, uint64_t frame)
{
	struct conv_frames *cf = *cfp;

	unsigned key = k << 1 | (unsigned)d, have = 0, max_at = 0;
	uint64_t e = frame << FK_BITS | key;

	for (unsigned i = 0; i < cf->n; i++) {
		if (fe_key(cf->e[i]) != key)
			continue;
		if (cf->e[i] == e)
			return;
		if (!have++ || cf->e[i] > cf->e[max_at])
			max_at = i;
	}
	if (have == FRAMES_PER) { /* the largest goes, if larger */
		if (cf->e[max_at] > e)
			cf->e[max_at] = e;
		return;
	}
	if (cf->n == cf->size) {
		cf->size = (uint8_t)(cf->size ? 2 * cf->size : 2);
		cf = *cfp = g_realloc(cf, sizeof(*cf) + cf->size * sizeof(cf->e[0]));
	}
	cf->e[cf->n++] = e;
}

/* frames_put() on the frames of conversation id in t (id -> struct
 * conv_frames), made when it has none; t keeps the list where it moved. */
static void frames_add(GHashTable *t, int32_t id, int d, unsigned k, uint64_t frame,
		       int64_t first_ns, int64_t last_ns)
{
	struct conv_frames *cf = g_hash_table_lookup(t, GINT_TO_POINTER(id)), *was = cf;

	G_STATIC_ASSERT(2 * N_FK * FRAMES_PER <= UINT8_MAX);
	if (!cf)
		cf = g_new0(struct conv_frames, 1);
	frames_time(cf, first_ns, last_ns);
	frames_put(&cf, d, k, frame);
	if (cf != was) { /* new, or reallocated: was is gone, not to be freed */
		g_hash_table_steal(t, GINT_TO_POINTER(id));
		g_hash_table_insert(t, GINT_TO_POINTER(id), cf);
	}
}

struct qpt_findings_frames {
	GHashTable *by_conv; /* conversation id (as seen) -> struct conv_frames */
	/* bad ICRCs: the first frames and the time span over the whole
	 * capture, not per conversation (a capture path that zeroes every
	 * ICRC has them in every conversation: no memory per conversation) */
	unsigned nicrc;
	uint64_t icrc_frames[QPT_FINDING_FRAMES];
	int64_t icrc_first_ns, icrc_last_ns;
};

struct qpt_findings_frames *qpt_findings_frames_new(void)
{
	struct qpt_findings_frames *ff = g_new0(struct qpt_findings_frames, 1);

	ff->by_conv = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
	return ff;
}

void qpt_findings_frames_free(struct qpt_findings_frames *ff)
{
	if (!ff)
		return;
	g_hash_table_destroy(ff->by_conv);
	g_free(ff);
}

static int fk_index(unsigned kind)
{
	for (unsigned i = 0; i < N_FK; i++)
		if (frame_kinds[i] == kind)
			return (int)i;
	return -1;
}

void qpt_findings_frames_add(struct qpt_findings_frames *ff, const struct qpt_verdict *v)
{
	for (unsigned i = 0; i < v->nevents; i++) {
		const struct qpt_event *ev = &v->ev[i];
		int k = fk_index(ev->kind);

		if (ev->kind == QPT_VB_BAD_ICRC) {
			if (!ff->nicrc || ev->time_ns < ff->icrc_first_ns)
				ff->icrc_first_ns = ev->time_ns;
			if (!ff->nicrc || ev->time_ns > ff->icrc_last_ns)
				ff->icrc_last_ns = ev->time_ns;
			if (ev->frame && ff->nicrc < QPT_FINDING_FRAMES)
				ff->icrc_frames[ff->nicrc] = ev->frame;
			if (ff->nicrc < UINT_MAX)
				ff->nicrc++;
			continue;
		}
		if (k < 0 || ev->conv < 0 || ev->dir < 0 || ev->dir > 1)
			continue;
		if (!ev->frame)
			continue; /* none (frames count from 1) */
		frames_add(ff->by_conv, ev->conv, ev->dir, (unsigned)k, ev->frame, ev->time_ns,
			   ev->time_ns);
	}
}

/* ---- building findings --------------------------------------------------- */

struct fb {
	struct qpt_finding f;
	struct qpt_flow *fl;
	GString *t;
	const struct conv_frames *cf; /* the conversation's, for its time */
	const struct qpt_findings_frames *ff;
	/* more than one RC conversation seen one way only: one capture-wide
	 * finding for them all (one_way_wide), not one per conversation */
	bool one_way_wide;
	/* the same for capture copies in more than one conversation
	 * (copies_wide): captures merged from two points, a mirror of both
	 * directions, copy every packet of every conversation */
	bool copies_wide;
	/* the same for bad ICRCs in more than one conversation (icrc_wide) */
	bool icrc_wide;
	/* the conversation as the whole input shows it, when the findings
	 * count a window of it (NULL: they count the whole input) */
	const struct qpt_conv_stats *whole;
};

static void fb_start(struct fb *b, enum qpt_finding_kind kind, const struct qpt_conv_stats *c, int dir)
{
	memset(&b->f, 0, sizeof(b->f));
	b->f.kind = kind;
	b->f.severity = qpt_finding_kinds[kind].severity;
	b->f.conv = c ? c->id : -1;
	b->f.dir = (int8_t)dir;
	b->f.pcp = -2;
	if (!c)
		b->cf = NULL;
	g_string_truncate(b->t, 0);
	if (c && dir >= 0) {
		char s[QPT_ENDPOINT_QP_STRLEN], r[QPT_ENDPOINT_QP_STRLEN];
		const struct qpt_dir_stats *x = &c->dir[dir];
		int top = -2;

		qpt_endpoint_addr(&c->ep[x->from], b->f.from);
		qpt_endpoint_addr(&c->ep[x->to], b->f.to);
		if (qpt_qos_values(x, QPT_QOS_DATA, false, &top) == 1 ||
		    (!qpt_qos_values(x, QPT_QOS_DATA, false, NULL) &&
		     qpt_qos_values(x, QPT_QOS_ACK, false, &top) == 1))
			b->f.pcp = (int16_t)top;

		b->f.tunnel = qpt_flow_conv_tunnel(b->fl, c->id, &b->f.tunnel_several);
		g_string_append_printf(b->t, "conversation %d, %s -> %s: ", c->id,
				       qpt_format_endpoint_qp(&c->ep[x->from], s),
				       qpt_format_endpoint_qp(&c->ep[x->to], r));
	} else if (c) {
		g_string_append_printf(b->t, "conversation %d: ", c->id);
	}
}

static void fb_num(struct fb *b, const char *key, double v)
{
	if (b->f.nnumbers < QPT_FINDING_NUMBERS)
		b->f.numbers[b->f.nnumbers++] = (struct qpt_finding_number){ key, v };
}

static void fb_frame(struct fb *b, uint64_t frame)
{
	unsigned n = b->f.nframes;

	if (!frame)
		return;
	for (unsigned i = 0; i < n; i++)
		if (b->f.frames[i] == frame)
			return;
	if (n == QPT_FINDING_FRAMES) {
		if (frame > b->f.frames[n - 1])
			return;
		n--; /* keep the earliest */
	}
	b->f.frames[n] = frame;
	b->f.nframes = n + 1;
	for (unsigned i = n; i > 0 && b->f.frames[i] < b->f.frames[i - 1]; i--) {
		uint64_t t = b->f.frames[i];

		b->f.frames[i] = b->f.frames[i - 1];
		b->f.frames[i - 1] = t;
	}
}

static void fb_frames_of(struct fb *b, const struct conv_frames *cf, int dir, unsigned kind)
{
	int k = fk_index(kind);

	if (!cf || k < 0 || dir < 0)
		return;
	for (unsigned i = 0; i < cf->n; i++)
		if (fe_key(cf->e[i]) == ((unsigned)k << 1 | (unsigned)dir))
			fb_frame(b, cf->e[i] >> FK_BITS);
}

/* The bad ICRCs' time span (kept for the whole capture). */
static void fb_icrc_time(struct fb *b)
{
	if (!b->ff || !b->ff->nicrc)
		return;
	b->f.has_time = true;
	b->f.first_ns = b->ff->icrc_first_ns;
	b->f.last_ns = b->ff->icrc_last_ns;
}

static void fb_end(struct fb *b, GArray *out, uint64_t weight)
{
	if (b->f.nframes) {
		g_string_append(b->t, b->f.nframes == 1 ? "; look at frame " : "; look at frames ");
		for (unsigned i = 0; i < b->f.nframes; i++)
			g_string_append_printf(b->t, "%s%" PRIu64, i ? ", " : "", b->f.frames[i]);
	}
	g_strlcpy(b->f.text, b->t->str, sizeof(b->f.text));
	b->f.weight = weight;
	if (!b->f.has_time && b->cf && b->cf->n) {
		b->f.has_time = true;
		b->f.first_ns = b->cf->first_ns;
		b->f.last_ns = b->cf->last_ns;
	}
	g_array_append_val(out, b->f);
}

static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* The packets a direction sent as the capture saw them, each once: its
 * packets less the capture's copies.  The denominator of every share. */
static uint64_t sendings(const struct qpt_dir_stats *x)
{
	return x->packets > x->duplicates ? x->packets - x->duplicates : 0;
}

static void fb_share(struct fb *b, uint64_t part, uint64_t whole)
{
	b->f.part = part;
	b->f.whole = whole;
}

/* "35 %", "0.4 %" */
static void pct_text(GString *t, double p)
{
	if (p >= 9.95 || p == 0)
		g_string_append_printf(t, "%.0f %%", p);
	else
		g_string_append_printf(t, "%.1f %%", p);
}

/* Re-sent packets of one direction: how many, what it cost, what started
 * the resends, where the packets were lost. */
static void dir_loss(struct fb *b, GArray *out, const struct qpt_conv_stats *c, int d,
		     const struct conv_frames *cf, int64_t conv_ns)
{
	const struct qpt_dir_stats *x = &c->dir[d], *y = &c->dir[1 - d];
	char sa[QPT_ADDR_STRLEN], ra[QPT_ADDR_STRLEN], tl[48];
	uint64_t gaps = x->psn_gaps + x->response_gaps;
	uint64_t missing = x->missing_psns + x->missing_responses;
	uint64_t naks = y->naks[0], trig[4] = { 0 }, wgaps = 0, wmissing = 0;
	int64_t lost = qpt_dir_time_lost(x);
	bool reliable = strcmp(c->transport, "UC") && strcmp(c->transport, "UD");
	enum qpt_finding_kind kind;
	GString *t;

	qpt_endpoint_addr(&c->ep[x->from], sa);
	qpt_endpoint_addr(&c->ep[x->to], ra);
	for (guint i = 0; x->episodes && i < x->episodes->len; i++) {
		const struct qpt_episode *e = &g_array_index(x->episodes, struct qpt_episode, i);

		if (e->trigger < 4)
			trig[e->trigger]++;
	}
	if (!x->retransmitted_packets) {
		if (!gaps)
			return;
		/* PSNs missing, never re-sent */
		kind = !reliable ? QPT_F_UNRECOVERED_LOSS : naks ? QPT_F_LOSS_BEFORE_TAP :
			QPT_F_CAPTURE_GAPS;
		fb_start(b, kind, c, d);
		t = b->t;
		g_string_append_printf(t, "%" PRIu64 " %s missing in %" PRIu64 " %s", missing,
				       plural(missing, "PSN", "PSNs"), gaps, plural(gaps, "gap", "gaps"));
		if (kind == QPT_F_UNRECOVERED_LOSS)
			g_string_append_printf(t, " (%s does not re-send): lost between %s and "
					       "the capture point", c->transport, sa);
		else if (kind == QPT_F_CAPTURE_GAPS)
			g_string_append(t, ", never NAKed or re-sent: the capture dropped them, "
					   "the network did not");
		else
			g_string_append_printf(t, ", NAKed by %s but not re-sent in the capture: "
					       "lost between %s and the capture point", ra, sa);
		fb_num(b, "missing_psns", (double)missing);
		fb_num(b, "psn_gaps", (double)gaps);
		fb_share(b, missing, sendings(x) + missing);
		fb_frames_of(b, cf, d, QPT_VB_PSN_GAP);
		fb_frames_of(b, cf, d, QPT_VB_RESPONSE_GAP);
		fb_end(b, out, missing);
		return;
	}
	/* resends that RNR NAKs explain are the RNR finding's */
	if (!x->gbn_episodes && x->rnr_retries && y->rnr_naks && !gaps)
		return;
	/* a window with resends but no PSN gap of its own: where the loss
	 * is, the whole input tells (the gap may have come before it) */
	if (!gaps && b->whole) {
		const struct qpt_dir_stats *w = &b->whole->dir[d];

		wgaps = w->psn_gaps + w->response_gaps;
		wmissing = w->missing_psns + w->missing_responses;
	}
	if (gaps || wgaps)
		kind = QPT_F_LOSS_BEFORE_TAP;
	else if (naks || trig[QPT_TRIGGER_NAK])
		kind = QPT_F_LOSS_AFTER_TAP;
	else if (trig[QPT_TRIGGER_TIMEOUT] || x->timeouts)
		kind = QPT_F_TIMEOUTS;
	else
		kind = QPT_F_RESENDS;
	fb_start(b, kind, c, d);
	t = b->t;
	g_string_append_printf(t, "%" PRIu64 " of %" PRIu64 " packets re-sent (",
			       x->retransmitted_packets, sendings(x));
	pct_text(t, pct(x->retransmitted_packets, sendings(x)));
	g_string_append_c(t, ')');
	if (x->gbn_episodes) {
		bool floor = x->episodes && x->gbn_episodes > x->episodes->len;

		g_string_append_printf(t, ", %" PRIu64 " go-back-N %s cost %s%s", x->gbn_episodes,
				       plural(x->gbn_episodes, "episode", "episodes"),
				       floor ? "at least " : "",
				       qpt_format_duration(lost, tl, sizeof(tl)));
		if (conv_ns > 0) {
			g_string_append(t, " (");
			pct_text(t, 100.0 * (double)lost / (double)conv_ns);
			g_string_append(t, " of its duration)");
		}
	}
	if (x->rnr_retries)
		g_string_append_printf(t, ", %" PRIu64 " after RNR NAKs", x->rnr_retries);
	/* what started the resends */
	if (naks)
		g_string_append_printf(t, "; %" PRIu64 " %s from %s", naks,
				       plural(naks, "NAK", "NAKs"), ra);
	if (trig[QPT_TRIGGER_TIMEOUT])
		g_string_append_printf(t, "; %" PRIu64 " %s after a silence (ACK timeout)",
				       trig[QPT_TRIGGER_TIMEOUT],
				       plural(trig[QPT_TRIGGER_TIMEOUT], "resend", "resends"));
	if (trig[QPT_TRIGGER_READ_RETRY])
		g_string_append_printf(t, "; %" PRIu64 " READ %s re-issued", trig[QPT_TRIGGER_READ_RETRY],
				       plural(trig[QPT_TRIGGER_READ_RETRY], "request", "requests"));
	if (trig[QPT_TRIGGER_RESEND])
		g_string_append_printf(t, "; %" PRIu64 " without a captured NAK or silence",
				       trig[QPT_TRIGGER_RESEND]);
	/* where */
	switch (kind) {
	case QPT_F_LOSS_BEFORE_TAP:
		if (gaps)
			g_string_append_printf(t, "; %" PRIu64 " %s missing here: lost between %s and "
					       "the capture point", missing, plural(missing, "PSN", "PSNs"), sa);
		else
			g_string_append_printf(t, "; no PSN gap in the window, %" PRIu64 " %s missing "
					       "in the whole input: lost between %s and the capture point",
					       wmissing, plural(wmissing, "PSN", "PSNs"), sa);
		if (trig[QPT_TRIGGER_TIMEOUT] && naks)
			g_string_append_printf(t, " (and a NAK lost between the capture point "
					       "and %s)", sa);
		break;
	case QPT_F_LOSS_AFTER_TAP:
		g_string_append_printf(t, "; no PSN gap here: lost between the capture point "
				       "and %s", ra);
		break;
	case QPT_F_TIMEOUTS:
		g_string_append_printf(t, "; no PSN gap or NAK here: lost between the capture "
				       "point and %s, or their ACKs lost on the way back", ra);
		break;
	default:
		if (trig[QPT_TRIGGER_READ_RETRY] && (y->response_gaps || y->retransmitted_packets))
			g_string_append_printf(t, "; READ responses from %s were missing "
					       "(see %s -> %s)", ra, ra, sa);
		else
			g_string_append(t, "; no PSN gap here: a NAK the capture did not see");
		break;
	}
	/* a large share, or much time lost, is an error */
	if (pct(x->retransmitted_packets, sendings(x)) >= 5 ||
	    (conv_ns > 0 && (double)lost >= 0.1 * (double)conv_ns))
		b->f.severity = QPT_SEV_ERROR;
	fb_num(b, "resent_packets", (double)x->retransmitted_packets);
	fb_num(b, "packets", (double)sendings(x));
	fb_share(b, x->retransmitted_packets, sendings(x));
	fb_num(b, "gbn_episodes", (double)x->gbn_episodes);
	fb_num(b, "time_lost_us", (double)lost / 1000.0);
	fb_num(b, "duration_us", (double)conv_ns / 1000.0);
	fb_num(b, "psn_gaps", (double)gaps);
	fb_num(b, "naks", (double)naks);
	fb_num(b, "timeouts", (double)trig[QPT_TRIGGER_TIMEOUT]);
	fb_frames_of(b, cf, d, QPT_VB_PSN_GAP);
	fb_frames_of(b, cf, 1 - d, QPT_VB_NAK);
	for (guint i = 0; x->episodes && i < x->episodes->len && i < 2; i++) {
		const struct qpt_episode *e = &g_array_index(x->episodes, struct qpt_episode, i);

		fb_frame(b, e->trigger_frame);
		fb_frame(b, e->first_resent_frame);
	}
	fb_frames_of(b, cf, d, QPT_VB_RETRANSMISSION);
	fb_end(b, out, x->retransmitted_packets);
}

/* "48 (30 CNPs), 46 (25)": the values of a class, as the direction saw them */
static void qos_list(GString *t, const struct qpt_dir_stats *x, unsigned cls, bool dscp,
		     const char *noun)
{
	bool first = true, one = qpt_qos_values(x, cls, dscp, NULL) == 1;
	const struct qpt_qos_count *e;

	for (unsigned i = 0; (e = qpt_qos_count_at(x, i)); i++) {
		if (e->cls != cls || e->dscp != dscp)
			continue;
		if (!first)
			g_string_append(t, ", ");
		if (e->value < 0)
			g_string_append(t, "untagged");
		else
			g_string_append_printf(t, "%d", e->value);
		if (!one)
			g_string_append_printf(t, " (%" PRIu64 "%s%s)", e->packets, first ? " " : "",
					       first ? (e->packets == 1 ? noun : "CNPs") : "");
		first = false;
	}
}

/* The conversations the findings consider: an array, or every one of the
 * engine that a filter accepts, walked without thawing (qpt_conv_walk). */
struct csrc {
	GPtrArray *a;
	struct qpt_flow *fl;
	qpt_conv_filter shown;
	void *data;
	struct qpt_conv_walk w;
	guint i;
	const struct qpt_findings_view *view; /* NULL: none */
	const struct qpt_conv_stats *whole; /* csrc_next's, before the view */
};

static void csrc_start(struct csrc *s)
{
	s->i = 0;
	if (!s->a)
		qpt_conv_walk_start(&s->w, s->fl, s->shown, s->data);
}

static const struct qpt_conv_stats *csrc_next(struct csrc *s)
{
	const struct qpt_conv_stats *c;

	if (s->a)
		c = s->i < s->a->len ? g_ptr_array_index(s->a, s->i++) : NULL;
	else
		c = qpt_conv_walk_next(&s->w);
	s->whole = c;
	return c && s->view && s->view->conv ? s->view->conv(c, s->view->data) : c;
}

static void csrc_end(struct csrc *s)
{
	if (!s->a)
		qpt_conv_walk_end(&s->w);
}

/* The direction an RC conversation has when the capture saw only one of
 * its two (0 or 1), else -1. */
static int one_way_dir(const struct qpt_conv_stats *c)
{
	if (strcmp(c->transport, "RC") || (!c->dir[0].packets) == (!c->dir[1].packets))
		return -1;
	return c->dir[0].packets ? 0 : 1;
}

/* Many conversations seen one way only (a mirror of one direction of a
 * port, a one-way filter): one finding about the capture, with the first
 * ones named, instead of one per conversation. */
static void one_way_wide(struct fb *b, GArray *out, struct csrc *convs)
{
	uint64_t n = 0, req = 0, resp = 0, packets = 0;
	GString *ids = g_string_new(NULL);
	const struct qpt_conv_stats *c;

	fb_start(b, QPT_F_CAPTURE_INCOMPLETE, NULL, -1);
	for (csrc_start(convs); (c = csrc_next(convs));) {
		int d = one_way_dir(c);

		if (d < 0)
			continue;
		if (n < 8)
			g_string_append_printf(ids, "%s%d", n ? ", " : "", c->id);
		n++;
		packets += c->dir[d].packets;
		if (c->dir[d].req_packets)
			req++;
		else
			resp++;
	}
	csrc_end(convs);
	g_string_append_printf(b->t, "%" PRIu64 " RC conversations seen in one direction only "
			       "(%" PRIu64 " with requests and nothing back, %" PRIu64 " with ACKs or "
			       "responses and no request; %" PRIu64 " packets): the capture sees one "
			       "direction only (a mirror of one port direction, an asymmetric path, "
			       "a filter); conversations %s%s", n, req, resp, packets, ids->str,
			       n > 8 ? ", ..." : "");
	fb_num(b, "conversations", (double)n);
	fb_num(b, "packets", (double)packets);
	fb_end(b, out, packets);
	g_string_free(ids, TRUE);
}

static uint64_t conv_copies(const struct qpt_conv_stats *c)
{
	return c->dir[0].duplicates + c->dir[1].duplicates;
}

static struct conv_frames *frames_now(struct qpt_flow *fl, const struct qpt_findings_frames *ff,
				      GHashTable *cache, int32_t id);

/* Capture copies in many conversations (captures of two points merged,
 * a mirror of both directions of a link): one finding about the capture,
 * with the first conversations named and the first frames to look at,
 * instead of one per conversation and direction (a merged capture of
 * 100,000 QPs: 200,000 rows saying the same). */
static void copies_wide(struct fb *b, GArray *out, struct csrc *convs, struct qpt_flow *fl,
			const struct qpt_findings_frames *ff, GHashTable *cache)
{
	uint64_t n = 0, copies = 0;
	GString *ids = g_string_new(NULL);
	const struct qpt_conv_stats *c;

	fb_start(b, QPT_F_CAPTURE_COPIES, NULL, -1);
	for (csrc_start(convs); (c = csrc_next(convs));) {
		uint64_t k = conv_copies(c);
		const struct conv_frames *cf;

		if (!k)
			continue;
		if (n < 8)
			g_string_append_printf(ids, "%s%d", n ? ", " : "", c->id);
		n++;
		copies += k;
		cf = frames_now(fl, ff, cache, c->id);
		fb_frames_of(b, cf, 0, QPT_VB_DUPLICATE);
		fb_frames_of(b, cf, 1, QPT_VB_DUPLICATE);
	}
	csrc_end(convs);
	g_string_append_printf(b->t, "%" PRIu64 " packets in %" PRIu64 " conversations seen twice "
			       "by the capture (mirrored both ways, or captures merged): not "
			       "re-sent; conversations %s%s", copies, n, ids->str, n > 8 ? ", ..." : "");
	fb_num(b, "duplicates", (double)copies);
	fb_num(b, "conversations", (double)n);
	fb_end(b, out, copies);
	g_string_free(ids, TRUE);
}

/* Priorities, ECN and MTU of a conversation (qpt_ecn.c's numbers). */
static void lossless_findings(struct fb *b, GArray *out, const struct qpt_conv_stats *c,
			      const struct conv_frames *cf, const struct qpt_flow_opts *fo)
{
	for (int d = 0; d < 2 && fo; d++) {
		const struct qpt_dir_stats *x = &c->dir[d], *y = &c->dir[1 - d];
		char ra[QPT_ADDR_STRLEN], sa[QPT_ADDR_STRLEN];
		unsigned nd, np;

		if (!x->cnps && !x->ce_without_cnp)
			continue; /* neither finding below (most directions) */
		nd = qpt_qos_values(x, QPT_QOS_CNP, true, NULL);
		np = qpt_qos_values(x, QPT_QOS_CNP, false, NULL);
		qpt_endpoint_addr(&c->ep[x->from], sa);
		qpt_endpoint_addr(&c->ep[x->to], ra);
		/* the CNPs this direction carries (sa's NIC sends them to ra) */
		if (x->cnps && (nd > 1 || np > 1 || x->cnp_unexpected)) {
			fb_start(b, QPT_F_CNP_PRIORITY, c, d);
			g_string_append_printf(b->t, "%" PRIu64 " %s from %s to %s on DSCP ", x->cnps,
					       plural(x->cnps, "CNP", "CNPs"), sa, ra);
			qos_list(b->t, x, QPT_QOS_CNP, true, "CNP");
			g_string_append(b->t, ", 802.1Q priority ");
			qos_list(b->t, x, QPT_QOS_CNP, false, "CNP");
			g_string_append(b->t, "; expected ");
			if (fo->cnp_dscp >= 0)
				g_string_append_printf(b->t, "DSCP %d", fo->cnp_dscp);
			if (fo->cnp_dscp >= 0 && fo->cnp_pcp >= 0)
				g_string_append(b->t, ", ");
			if (fo->cnp_pcp >= 0)
				g_string_append_printf(b->t, "priority %d", fo->cnp_pcp);
			if (fo->cnp_dscp < 0 && fo->cnp_pcp < 0)
				g_string_append(b->t, "one DSCP and priority");
			if (x->cnp_unexpected)
				g_string_append_printf(b->t, " (--cnp-dscp, --cnp-priority): %" PRIu64
						       " elsewhere", x->cnp_unexpected);
			else
				g_string_append(b->t, ": the CNPs are split");
			g_string_append(b->t, " (the switches queue them in another class than the "
					      "CNP class: check the NIC's CNP DSCP/priority and the "
					      "switches' DSCP-to-priority map)");
			fb_num(b, "cnps", (double)x->cnps);
			fb_num(b, "cnp_unexpected", (double)x->cnp_unexpected);
			fb_num(b, "cnp_dscps", nd);
			fb_num(b, "cnp_priorities", np);
			for (unsigned i = 0; qpt_dir_qos(x) && i < QPT_QOS_FRAMES; i++)
				fb_frame(b, qpt_dir_qos(x)->cnp_unexpected_frames[i]);
			if (!x->cnp_unexpected)
				fb_frames_of(b, cf, d, QPT_VB_CNP);
			fb_end(b, out, x->cnps);
		}
		/* marks on this direction that no CNP answered */
		if (x->ce_without_cnp) {
			char w[48];

			fb_start(b, QPT_F_ECN_NO_CNP, c, d);
			g_string_append_printf(b->t, "%" PRIu64 " of %" PRIu64 " ECN-CE marked packets "
					       "to %s had no CNP back to %s within %s (%" PRIu64
					       " %s from %s in all): %s did not notify the sender of "
					       "the congestion (ECN notification point disabled for "
					       "this priority?) or its CNPs were lost or filtered "
					       "before the capture point",
					       x->ce_without_cnp, x->ecn_ce, ra, sa,
					       qpt_format_duration(fo->ecn_window_ns, w, sizeof(w)),
					       y->cnps, plural(y->cnps, "CNP", "CNPs"), ra, ra);
			fb_num(b, "ce_without_cnp", (double)x->ce_without_cnp);
			fb_num(b, "ecn_ce", (double)x->ecn_ce);
			fb_num(b, "cnps", (double)y->cnps);
			fb_num(b, "window_us", (double)fo->ecn_window_ns / 1000.0);
			for (unsigned i = 0; qpt_dir_qos(x) && i < QPT_QOS_FRAMES; i++)
				fb_frame(b, qpt_dir_qos(x)->no_cnp_frames[i]);
			fb_end(b, out, x->ce_without_cnp);
		}
	}
	/* MTU: payloads above the CM path MTU; the two sides' segment sizes */
	for (int d = 0; d < 2; d++) {
		const struct qpt_dir_stats *x = &c->dir[d];
		char ra[QPT_ADDR_STRLEN], sa[QPT_ADDR_STRLEN];

		if (!qpt_dir_qos(x) || !c->has_cm || !c->cm->path_mtu ||
		    x->qos.max_payload <= c->cm->path_mtu)
			continue;
		qpt_endpoint_addr(&c->ep[x->from], sa);
		qpt_endpoint_addr(&c->ep[x->to], ra);
		fb_start(b, QPT_F_MTU_MISMATCH, c, d);
		g_string_append_printf(b->t, "packets from %s to %s carry up to %u payload bytes, "
				       "more than the path MTU %u the CM REQ set: %s's MTU is larger "
				       "than the connection's (the packets are dropped where the "
				       "path MTU holds)", sa, ra, x->qos.max_payload, c->cm->path_mtu, sa);
		fb_num(b, "max_payload", x->qos.max_payload);
		fb_num(b, "path_mtu", c->cm->path_mtu);
		fb_frame(b, x->qos.max_payload_frame);
		fb_end(b, out, 1);
	}
	if (c->dir[0].qos.seg_payload && c->dir[1].qos.seg_payload &&
	    c->dir[0].qos.seg_payload != c->dir[1].qos.seg_payload) {
		char a0[QPT_ADDR_STRLEN], a1[QPT_ADDR_STRLEN];

		qpt_endpoint_addr(&c->ep[c->dir[0].from], a0);
		qpt_endpoint_addr(&c->ep[c->dir[1].from], a1);
		fb_start(b, QPT_F_MTU_MISMATCH, c, -1);
		g_string_append_printf(b->t, "the two sides' MTUs differ: %s sends FIRST/MIDDLE "
				       "packets of %u payload bytes, %s of %u (each side's QP has "
				       "its own path MTU: set the same on both)", a0,
				       c->dir[0].qos.seg_payload, a1, c->dir[1].qos.seg_payload);
		fb_num(b, "mtu_a", c->dir[0].qos.seg_payload);
		fb_num(b, "mtu_b", c->dir[1].qos.seg_payload);
		fb_frame(b, c->dir[0].qos.seg_frame);
		fb_frame(b, c->dir[1].qos.seg_frame);
		fb_end(b, out, 1);
	}
	/* an RC conversation whose one direction the capture never saw */
	if (one_way_dir(c) >= 0 && !b->one_way_wide) {
		int d = one_way_dir(c);
		const struct qpt_dir_stats *x = &c->dir[d];
		char ra[QPT_ADDR_STRLEN], sa[QPT_ADDR_STRLEN];

		qpt_endpoint_addr(&c->ep[x->from], sa);
		qpt_endpoint_addr(&c->ep[x->to], ra);
		fb_start(b, QPT_F_CAPTURE_INCOMPLETE, c, d);
		if (x->req_packets)
			g_string_append_printf(b->t, "%" PRIu64 " request %s from %s to %s and "
					       "nothing back (no ACK, no response) in the whole capture",
					       x->req_packets, plural(x->req_packets, "packet", "packets"),
					       sa, ra);
		else
			g_string_append_printf(b->t, "%" PRIu64 " ACK/response %s from %s to %s and "
					       "no request from %s in the whole capture",
					       x->packets, plural(x->packets, "packet", "packets"), sa,
					       ra, ra);
		g_string_append(b->t, ": the capture sees one direction only (a mirror of one "
				      "port direction, an asymmetric path, a filter)");
		fb_num(b, "packets", (double)x->packets);
		fb_end(b, out, x->packets);
	}
}

/* PSN gaps in both directions that nothing re-sent are one finding about
 * the capture (it dropped packets both ways), not two capture_gaps. */
static void fold_capture_gaps(struct fb *b, GArray *out, guint from, const struct qpt_conv_stats *c)
{
	int at[2] = { -1, -1 };
	struct qpt_finding g[2];
	uint64_t missing = 0, gaps = 0;

	for (guint i = from; i < out->len; i++) {
		const struct qpt_finding *f = &g_array_index(out, struct qpt_finding, i);

		if (f->kind == QPT_F_CAPTURE_GAPS && f->dir >= 0 && f->dir <= 1)
			at[f->dir] = (int)i;
	}
	if (at[0] < 0 || at[1] < 0)
		return;
	g[0] = g_array_index(out, struct qpt_finding, at[0]);
	g[1] = g_array_index(out, struct qpt_finding, at[1]);
	g_array_remove_index(out, (guint)MAX(at[0], at[1]));
	g_array_remove_index(out, (guint)MIN(at[0], at[1]));
	for (int d = 0; d < 2; d++) {
		const struct qpt_dir_stats *x = &c->dir[d];

		missing += x->missing_psns + x->missing_responses;
		gaps += x->psn_gaps + x->response_gaps;
	}
	fb_start(b, QPT_F_CAPTURE_INCOMPLETE, c, -1);
	g_string_append_printf(b->t, "%" PRIu64 " %s missing in %" PRIu64 " %s in both "
			       "directions, never NAKed or re-sent: the capture dropped packets "
			       "both ways, the network did not", missing,
			       plural(missing, "PSN", "PSNs"), gaps, plural(gaps, "gap", "gaps"));
	fb_num(b, "missing_psns", (double)missing);
	fb_num(b, "psn_gaps", (double)gaps);
	for (int d = 0; d < 2; d++)
		for (unsigned k = 0; k < g[d].nframes; k++)
			fb_frame(b, g[d].frames[k]);
	fb_end(b, out, missing);
}

static void conv_findings(struct fb *b, GArray *out, const struct qpt_conv_stats *c,
			  const struct conv_frames *cf, const struct qpt_flow_opts *fo)
{
	int64_t first = 0, last = 0, conv_ns = 0;
	guint from = out->len;

	b->cf = cf;
	if (conv_span(c, &first, &last))
		conv_ns = last - first;
	for (int d = 0; d < 2; d++) {
		const struct qpt_dir_stats *x = &c->dir[d], *y = &c->dir[1 - d];
		char ra[QPT_ADDR_STRLEN], sa[QPT_ADDR_STRLEN];
		uint64_t errs = 0;

		if (x->bad_icrc && !b->icrc_wide) {
			fb_start(b, QPT_F_BAD_ICRC, c, d);
			g_string_append_printf(b->t, "%" PRIu64 " of %" PRIu64 " packets with a bad "
					       "ICRC: corrupted on the way to the capture point (or "
					       "changed by the capture: a NIC offload, a rewrite)",
					       x->bad_icrc, sendings(x));
			fb_num(b, "bad_icrc", (double)x->bad_icrc);
			fb_share(b, x->bad_icrc, sendings(x));
			for (unsigned k = 0; b->ff && k < MIN(b->ff->nicrc, QPT_FINDING_FRAMES); k++)
				fb_frame(b, b->ff->icrc_frames[k]);
			fb_icrc_time(b);
			fb_end(b, out, x->bad_icrc);
		}
		if (!x->eventful && !y->eventful)
			continue; /* each finding below counts something rare */
		qpt_endpoint_addr(&c->ep[x->from], sa);
		qpt_endpoint_addr(&c->ep[x->to], ra);
		dir_loss(b, out, c, d, cf, conv_ns);
		for (unsigned k = 1; k < QPT_NAK_KINDS; k++)
			errs += y->naks[k];
		if (errs) {
			bool first_k = true;

			fb_start(b, QPT_F_ERROR_NAKS, c, d);
			g_string_append_printf(b->t, "%s refused %" PRIu64 " %s with an error NAK (",
					       ra, errs, plural(errs, "request", "requests"));
			for (unsigned k = 1; k < QPT_NAK_KINDS; k++) {
				if (!y->naks[k])
					continue;
				g_string_append_printf(b->t, "%s%" PRIu64 " %s", first_k ? "" : ", ",
						       y->naks[k], qpt_nak_name(k));
				first_k = false;
			}
			g_string_append(b->t, "): the operation failed at the responder, and the QP "
					      "goes to the error state");
			fb_num(b, "error_naks", (double)errs);
			fb_frames_of(b, cf, 1 - d, QPT_VB_NAK);
			fb_end(b, out, errs);
		}
		if (y->rnr_naks) {
			fb_start(b, QPT_F_RNR, c, d);
			g_string_append_printf(b->t, "%" PRIu64 " RNR %s from %s (receiver not ready: "
					       "no receive buffer posted in time), %" PRIu64 " %s after them",
					       y->rnr_naks, plural(y->rnr_naks, "NAK", "NAKs"), ra,
					       x->rnr_retries, plural(x->rnr_retries, "retry", "retries"));
			if (!x->gbn_episodes && x->retransmitted_packets)
				g_string_append_printf(b->t, " (%" PRIu64 " %s re-sent)",
						       x->retransmitted_packets,
						       plural(x->retransmitted_packets, "packet", "packets"));
			fb_num(b, "rnr_naks", (double)y->rnr_naks);
			fb_num(b, "rnr_retries", (double)x->rnr_retries);
			fb_frames_of(b, cf, 1 - d, QPT_VB_RNR_NAK);
			fb_end(b, out, y->rnr_naks);
		}
		if (x->ecn_ce || y->cnps) {
			double share = pct(x->ecn_ce, sendings(x));

			fb_start(b, QPT_F_CONGESTION, c, d);
			g_string_append_printf(b->t, "congestion on the way to %s: %" PRIu64
					       " of %" PRIu64 " packets ECN-CE marked (", ra,
					       x->ecn_ce, sendings(x));
			pct_text(b->t, share);
			g_string_append_printf(b->t, "), %" PRIu64 " %s from %s back to %s", y->cnps,
					       plural(y->cnps, "CNP", "CNPs"), ra, sa);
			if (share >= 10)
				b->f.severity = QPT_SEV_WARN;
			fb_num(b, "ecn_ce", (double)x->ecn_ce);
			fb_num(b, "packets", (double)sendings(x));
			fb_share(b, x->ecn_ce, sendings(x));
			fb_num(b, "cnps", (double)y->cnps);
			fb_frames_of(b, cf, d, QPT_VB_ECN_CE);
			fb_frames_of(b, cf, 1 - d, QPT_VB_CNP);
			fb_end(b, out, x->ecn_ce + y->cnps);
		}
		if (x->duplicates && !b->copies_wide) {
			fb_start(b, QPT_F_CAPTURE_COPIES, c, d);
			g_string_append_printf(b->t, "%" PRIu64 " %s seen twice by the capture "
					       "(mirrored both ways, or captures merged): not re-sent",
					       x->duplicates, plural(x->duplicates, "packet", "packets"));
			fb_num(b, "duplicates", (double)x->duplicates);
			fb_frames_of(b, cf, d, QPT_VB_DUPLICATE);
			fb_end(b, out, x->duplicates);
		}
	}
	fold_capture_gaps(b, out, from, c);
	lossless_findings(b, out, c, cf, fo);
}

/* "priority 0", "priorities 0 and 4", "priorities 0, 2 and 4" */
static void prio_list(GString *t, uint8_t mask)
{
	unsigned n = (unsigned)__builtin_popcount(mask), k = 0;

	g_string_append(t, n == 1 ? "priority " : "priorities ");
	for (unsigned p = 0; p < QPT_PFC_PRIOS; p++) {
		if (!(mask & (1u << p)))
			continue;
		if (k)
			g_string_append(t, k + 1 == n ? " and " : ", ");
		g_string_append_printf(t, "%u", p);
		k++;
	}
}

/* The link's pauses against the priorities of the RoCE data (qpt_pfc.h). */
static void pfc_findings(struct fb *b, GArray *out, struct qpt_flow *fl)
{
	const struct qpt_pfc *pf = qpt_flow_pfc(fl);
	uint8_t roce = 0, paused = 0;
	uint64_t xoff = 0, data = 0;

	if (!qpt_pfc_any(pf))
		return;
	for (unsigned p = 0; p < QPT_PFC_PRIOS; p++) {
		const struct qpt_pfc_prio *pr = qpt_pfc_prio(pf, p);

		if (pr->data_packets) {
			roce |= (uint8_t)(1u << p);
			data += pr->data_packets;
		}
		if (pr->xoff_frames) {
			paused |= (uint8_t)(1u << p);
			xoff += pr->xoff_frames;
		}
	}
	if (roce && paused && !(roce & paused)) {
		fb_start(b, QPT_F_PFC_PRIORITY_MISMATCH, NULL, -1);
		g_string_append(b->t, "PFC pauses only on ");
		prio_list(b->t, paused);
		g_string_append_printf(b->t, " (%" PRIu64 " XOFF %s), none on ", xoff,
				       plural(xoff, "frame", "frames"));
		prio_list(b->t, roce);
		g_string_append_printf(b->t, " that %s the RoCE data (%" PRIu64 " %s): PFC is not "
				       "enabled on the RoCE priority, or the hosts and the switch "
				       "disagree on it (untagged frames count as priority 0)",
				       __builtin_popcount(roce) == 1 ? "carries" : "carry", data,
				       plural(data, "packet", "packets"));
		for (unsigned p = 0; p < QPT_PFC_PRIOS; p++)
			fb_frame(b, qpt_pfc_prio(pf, p)->first_frame);
		fb_num(b, "xoff_frames", (double)xoff);
		fb_num(b, "roce_packets", (double)data);
		fb_end(b, out, xoff);
	}
	for (unsigned p = 0; p < QPT_PFC_PRIOS; p++) {
		const struct qpt_pfc_prio *pr = qpt_pfc_prio(pf, p);
		GArray *ids;
		char gap[32];

		if (!pr->stalls)
			continue;
		ids = qpt_flow_pfc_stalled(fl, p);
		fb_start(b, QPT_F_PFC_STALLS, NULL, -1);
		if (ids->len == 1)
			b->f.conv = g_array_index(ids, int32_t, 0);
		g_string_append_printf(b->t, "pauses on priority %u stalled %u %s (", p, ids->len,
				       plural(ids->len, "conversation", "conversations"));
		for (guint i = 0; i < ids->len && i < 8; i++)
			g_string_append_printf(b->t, "%s%d", i ? ", " : "", g_array_index(ids, int32_t, i));
		if (ids->len > 8)
			g_string_append_printf(b->t, ", and %u more", ids->len - 8);
		g_string_append_printf(b->t, "): sending before the pause, silent for all of it "
				       "and at least %s", qpt_format_duration(QPT_PFC_STALL_GAP_NS, gap,
									sizeof(gap)));
		fb_frame(b, pr->first_stall_frame);
		fb_num(b, "priority", p);
		fb_num(b, "stalled_conversations", ids->len);
		fb_num(b, "stalls", (double)pr->stalls);
		fb_end(b, out, pr->stalls);
		g_array_free(ids, TRUE);
	}
}

static void totals_findings(struct fb *b, GArray *out, struct qpt_flow *fl, GPtrArray *attempts,
			    const struct qpt_findings_view *view)
{
	const struct qpt_totals *t = view && view->totals ? view->totals : qpt_flow_totals(fl);

	if (attempts && attempts->len) {
		uint64_t rej = 0;

		fb_start(b, QPT_F_CM_FAILED, NULL, -1);
		for (guint i = 0; i < attempts->len; i++) {
			const struct qpt_cm_attempt *a = g_ptr_array_index(attempts, i);

			rej += a->info.rej_frame != 0;
			fb_frame(b, a->info.req_frame);
		}
		g_string_append_printf(b->t, "%u CM connection %s made no connection (%" PRIu64
				       " rejected, %" PRIu64 " unanswered in the capture)",
				       attempts->len, plural(attempts->len, "request", "requests"),
				       rej, (uint64_t)attempts->len - rej);
		fb_num(b, "cm_failed", attempts->len);
		fb_num(b, "cm_rejects", (double)rej);
		fb_end(b, out, attempts->len);
	}
	if (t->malformed) {
		fb_start(b, QPT_F_MALFORMED, NULL, -1);
		g_string_append_printf(b->t, "%" PRIu64 " of %" PRIu64 " RoCE/IB packets malformed "
				       "or cut short by the capture's snapshot length (qptrace events "
				       "names them)", t->malformed, t->iba_packets);
		fb_num(b, "malformed", (double)t->malformed);
		fb_end(b, out, t->malformed);
	}
	if (t->interface_drops + t->os_drops) {
		fb_start(b, QPT_F_CAPTURE_INCOMPLETE, NULL, -1);
		g_string_append_printf(b->t, "the capture file's interface statistics (pcapng) count "
				       "%" PRIu64 " %s dropped by the interface and %" PRIu64 " by the "
				       "operating system: the capture missed them (PSN gaps here may "
				       "be the capture's, not the network's)", t->interface_drops,
				       plural(t->interface_drops, "packet", "packets"), t->os_drops);
		fb_num(b, "interface_drops", (double)t->interface_drops);
		fb_num(b, "os_drops", (double)t->os_drops);
		fb_end(b, out, t->interface_drops + t->os_drops);
	}
	if (t->time_backwards) {
		fb_start(b, QPT_F_TIME_BACKWARDS, NULL, -1);
		g_string_append_printf(b->t, "%" PRIu64 " %s stamped before the previous frame "
				       "(a clock step, or files merged unsorted): times around them "
				       "are not to be trusted", t->time_backwards,
				       plural(t->time_backwards, "frame", "frames"));
		fb_num(b, "time_backwards", (double)t->time_backwards);
		fb_end(b, out, t->time_backwards);
	}
	if (t->untracked) {
		fb_start(b, QPT_F_UNTRACKED, NULL, -1);
		g_string_append_printf(b->t, "%" PRIu64 " %s not analysed: more QPs than the "
				       "limit of %u (--max-qps; without it every QP is tracked)",
				       t->untracked, plural(t->untracked, "packet", "packets"),
				       t->max_halves);
		fb_num(b, "untracked", (double)t->untracked);
		fb_num(b, "max_qps", (double)t->max_halves);
		fb_end(b, out, t->untracked);
	}
	if (t->fragmented_roce_packets) {
		fb_start(b, QPT_F_FRAGMENTED, NULL, -1);
		g_string_append_printf(b->t, "%" PRIu64 " RoCEv2 packets fragmented by IP (v4 or v6), not "
				       "analysed: an IP MTU smaller than the RoCE MTU on the path",
				       t->fragmented_roce_packets);
		fb_num(b, "fragmented_roce_packets", (double)t->fragmented_roce_packets);
		fb_end(b, out, t->fragmented_roce_packets);
	}
	pfc_findings(b, out, fl);
}

static gint finding_cmp(gconstpointer pa, gconstpointer pb)
{
	const struct qpt_finding *a = pa, *b = pb;

	if (a->severity != b->severity)
		return a->severity > b->severity ? -1 : 1;
	if (a->weight != b->weight)
		return a->weight > b->weight ? -1 : 1;
	if (a->conv != b->conv)
		return a->conv < b->conv ? -1 : 1;
	if (a->dir != b->dir)
		return a->dir < b->dir ? -1 : 1;
	return (int)a->kind - (int)b->kind;
}

/* The frames of conversation id as it is now: those gathered under ids
 * that were folded into it count too. */
static struct conv_frames *frames_now(struct qpt_flow *fl, const struct qpt_findings_frames *ff,
				      GHashTable *cache, int32_t id)
{
	struct conv_frames *cf;
	GHashTableIter it;
	gpointer k, val;

	if (!ff)
		return NULL;
	if (!g_hash_table_size(cache)) {
		g_hash_table_iter_init(&it, ff->by_conv);
		while (g_hash_table_iter_next(&it, &k, &val)) {
			int32_t now = qpt_flow_conv_id(fl, GPOINTER_TO_INT(k));
			const struct conv_frames *src = val;

			if (now < 0)
				continue;
			for (unsigned i = 0; i < src->n; i++)
				frames_add(cache, now, (int)(src->e[i] & 1), fe_key(src->e[i]) >> 1,
					   src->e[i] >> FK_BITS, src->first_ns, src->last_ns);
		}
	}
	cf = g_hash_table_lookup(cache, GINT_TO_POINTER(id));
	return cf;
}

/* Bad ICRCs in many conversations: one finding about the capture.  When
 * (nearly) every packet has one, the capture path strips, zeroes or
 * rewrites ICRCs (a NIC that trims them, a mirror that cuts the frame):
 * not corruption, and --no-crc is the answer. */
static void icrc_wide(struct fb *b, GArray *out, struct csrc *convs)
{
	uint64_t n = 0, bad = 0, all = 0;
	GString *ids = g_string_new(NULL);
	const struct qpt_conv_stats *c;

	fb_start(b, QPT_F_BAD_ICRC, NULL, -1);
	for (csrc_start(convs); (c = csrc_next(convs));) {
		uint64_t k = c->dir[0].bad_icrc + c->dir[1].bad_icrc;

		all += sendings(&c->dir[0]) + sendings(&c->dir[1]);
		if (!k)
			continue;
		if (n < 8)
			g_string_append_printf(ids, "%s%d", n ? ", " : "", c->id);
		n++;
		bad += k;
	}
	csrc_end(convs);
	g_string_append_printf(b->t, "%" PRIu64 " of %" PRIu64 " packets (", bad, all);
	pct_text(b->t, pct(bad, all));
	g_string_append_printf(b->t, ") in %" PRIu64 " conversations with a bad ICRC", n);
	if (bad >= all - all / 100) {
		/* a capture artefact, not the network's: a note */
		b->f.severity = QPT_SEV_NOTE;
		g_string_append(b->t, ": every packet, so the capture path strips, zeroes or "
				      "rewrites ICRCs (not corruption); run with --no-crc");
	} else {
		g_string_append_printf(b->t, ": corrupted on the way to the capture point; "
				       "conversations %s%s", ids->str, n > 8 ? ", ..." : "");
	}
	fb_num(b, "bad_icrc", (double)bad);
	fb_num(b, "packets", (double)all);
	fb_num(b, "conversations", (double)n);
	fb_share(b, bad, all);
	for (unsigned k = 0; b->ff && k < MIN(b->ff->nicrc, QPT_FINDING_FRAMES); k++)
		fb_frame(b, b->ff->icrc_frames[k]);
	fb_icrc_time(b);
	fb_end(b, out, bad);
	g_string_free(ids, TRUE);
}

static GArray *findings_of(struct qpt_flow *fl, struct csrc *convs, GPtrArray *attempts,
			   bool capture_wide, const struct qpt_findings_frames *ff)
{
	GArray *out = g_array_new(FALSE, TRUE, sizeof(struct qpt_finding));
	GHashTable *cache = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
	struct fb b = { .t = g_string_sized_new(640), .ff = ff, .fl = fl };
	guint one_way = 0, copies = 0, icrc = 0;
	const struct qpt_conv_stats *c;

	for (csrc_start(convs); one_way < 2 && (c = csrc_next(convs));)
		one_way += one_way_dir(c) >= 0;
	csrc_end(convs);
	b.one_way_wide = one_way > 1;
	for (csrc_start(convs); copies < 2 && (c = csrc_next(convs));)
		copies += conv_copies(c) > 0;
	csrc_end(convs);
	b.copies_wide = copies > 1;
	for (csrc_start(convs); icrc < 2 && (c = csrc_next(convs));)
		icrc += c->dir[0].bad_icrc + c->dir[1].bad_icrc > 0;
	csrc_end(convs);
	b.icrc_wide = icrc > 1;
	for (csrc_start(convs); (c = csrc_next(convs));) {
		b.whole = convs->whole != c ? convs->whole : NULL;
		conv_findings(&b, out, c, frames_now(fl, ff, cache, c->id), qpt_flow_options(fl));
	}
	b.whole = NULL;
	csrc_end(convs);
	if (b.one_way_wide)
		one_way_wide(&b, out, convs);
	if (b.copies_wide)
		copies_wide(&b, out, convs, fl, ff, cache);
	if (b.icrc_wide)
		icrc_wide(&b, out, convs);
	if (capture_wide)
		totals_findings(&b, out, fl, attempts, convs->view);
	g_array_sort(out, finding_cmp);
	g_string_free(b.t, TRUE);
	g_hash_table_destroy(cache);
	return out;
}

void qpt_findings_add_capture(GArray *fs, enum qpt_finding_kind kind, const char *text,
			      uint64_t weight)
{
	struct qpt_finding f = { .kind = kind, .severity = qpt_finding_kinds[kind].severity,
				 .conv = -1, .dir = -1, .weight = weight, .pcp = -2 };

	g_strlcpy(f.text, text, sizeof(f.text));
	g_array_append_val(fs, f);
	g_array_sort(fs, finding_cmp);
}

GArray *qpt_findings(struct qpt_flow *fl, GPtrArray *convs, GPtrArray *attempts,
		     bool capture_wide, const struct qpt_findings_frames *ff)
{
	struct csrc s = { .a = convs, .fl = fl };

	return findings_of(fl, &s, attempts, capture_wide, ff);
}

GArray *qpt_findings_walk(struct qpt_flow *fl, qpt_conv_filter shown, void *data,
			  GPtrArray *attempts, bool capture_wide,
			  const struct qpt_findings_frames *ff)
{
	return qpt_findings_walk_view(fl, shown, data, attempts, capture_wide, ff, NULL);
}

GArray *qpt_findings_walk_view(struct qpt_flow *fl, qpt_conv_filter shown, void *data,
			       GPtrArray *attempts, bool capture_wide,
			       const struct qpt_findings_frames *ff,
			       const struct qpt_findings_view *view)
{
	struct csrc s = { .fl = fl, .shown = shown, .data = data, .view = view };

	return findings_of(fl, &s, attempts, capture_wide, ff);
}

/* ---- the roll-up ---------------------------------------------------------- */

/* Adds addr to a group's hosts (counted in seen, addr -> count). */
static void group_host(GHashTable *seen, const char *addr)
{
	gpointer n = g_hash_table_lookup(seen, addr);

	g_hash_table_insert(seen, g_strdup(addr), GUINT_TO_POINTER(GPOINTER_TO_UINT(n) + 1));
}

static gint host_cmp(gconstpointer pa, gconstpointer pb)
{
	const struct qpt_group_host *a = pa, *b = pb;

	if (a->n != b->n)
		return a->n > b->n ? -1 : 1;
	return strcmp(a->addr, b->addr);
}

/* The most named hosts of seen into top (QPT_GROUP_HOSTS), their number. */
static uint32_t group_hosts(GHashTable *seen, struct qpt_group_host *top)
{
	GArray *all = g_array_new(FALSE, TRUE, sizeof(struct qpt_group_host));
	GHashTableIter it;
	gpointer k, v;
	uint32_t n;

	g_hash_table_iter_init(&it, seen);
	while (g_hash_table_iter_next(&it, &k, &v)) {
		struct qpt_group_host h = { .n = GPOINTER_TO_UINT(v) };

		g_strlcpy(h.addr, k, sizeof(h.addr));
		g_array_append_val(all, h);
	}
	g_array_sort(all, host_cmp);
	memset(top, 0, QPT_GROUP_HOSTS * sizeof(*top));
	for (guint i = 0; i < all->len && i < QPT_GROUP_HOSTS; i++)
		top[i] = g_array_index(all, struct qpt_group_host, i);
	n = all->len;
	g_array_free(all, TRUE);
	return n;
}

struct member_key {
	guint index;
	struct qpt_rank_key rank;
};

static gint member_cmp(gconstpointer pa, gconstpointer pb)
{
	const struct member_key *a = pa, *b = pb;
	int k = qpt_rank_key_cmp(&a->rank, &b->rank, true);

	return k ? k : (a->index > b->index) - (a->index < b->index);
}

static gint group_cmp(gconstpointer pa, gconstpointer pb)
{
	const struct qpt_finding_group *a = pa, *b = pb;

	if (a->severity != b->severity)
		return a->severity > b->severity ? -1 : 1;
	if (a->weight != b->weight)
		return a->weight > b->weight ? -1 : 1;
	if (a->kind != b->kind)
		return (int)a->kind - (int)b->kind;
	if (a->pcp != b->pcp)
		return a->pcp - b->pcp;
	/* two capture-wide ones of a kind: their first finding's order */
	return (int)g_array_index(a->members, guint, 0) - (int)g_array_index(b->members, guint, 0);
}

GArray *qpt_findings_groups(struct qpt_flow *fl, const GArray *fs)
{
	return qpt_findings_groups_view(fl, fs, NULL);
}

GArray *qpt_findings_groups_view(struct qpt_flow *fl, const GArray *fs,
				 const struct qpt_findings_view *view)
{
	GArray *groups = g_array_new(FALSE, TRUE, sizeof(struct qpt_finding_group));
	/* "kind/pcp/session" -> index into groups + 1 */
	GHashTable *at = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

	for (guint i = 0; i < fs->len; i++) {
		const struct qpt_finding *f = &g_array_index(fs, struct qpt_finding, i);
		bool wide = f->conv < 0 || f->dir < 0;
		gchar *key = g_strdup_printf("%d/%d/%p", (int)f->kind, f->pcp, (const void *)f->tunnel);
		guint gi = wide ? 0 : GPOINTER_TO_UINT(g_hash_table_lookup(at, key));
		struct qpt_finding_group *g;

		if (!gi) {
			struct qpt_finding_group ng = {
				.kind = f->kind, .severity = f->severity, .pcp = f->pcp,
				.tunnel = f->tunnel, .capture_wide = wide,
				.members = g_array_new(FALSE, FALSE, sizeof(guint)),
			};

			g_array_append_val(groups, ng);
			gi = groups->len;
			if (!wide) {
				g_hash_table_insert(at, key, GUINT_TO_POINTER(gi));
				key = NULL; /* the table's */
			}
		}
		g_free(key);
		g = &g_array_index(groups, struct qpt_finding_group, gi - 1);
		g_array_append_val(g->members, i);
		g->tunnel_several |= f->tunnel_several;
		if (f->severity > g->severity)
			g->severity = f->severity;
		g->weight += f->weight;
		g->part += f->part;
		g->whole += f->whole;
		if (f->has_time) {
			if (!g->has_time || f->first_ns < g->first_ns)
				g->first_ns = f->first_ns;
			if (!g->has_time || f->last_ns > g->last_ns)
				g->last_ns = f->last_ns;
			g->has_time = true;
		}
	}
	g_hash_table_destroy(at);
	for (guint gi = 0; gi < groups->len; gi++) {
		struct qpt_finding_group *g = &g_array_index(groups, struct qpt_finding_group, gi);
		GHashTable *snd = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
		GHashTable *rcv = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
		GHashTable *convs = g_hash_table_new(g_direct_hash, g_direct_equal);
		GArray *keys = g_array_sized_new(FALSE, FALSE, sizeof(struct member_key),
						 g->members->len);
		struct qpt_conv_stats cs;

		for (guint m = 0; m < g->members->len; m++) {
			guint i = g_array_index(g->members, guint, m);
			const struct qpt_finding *f = &g_array_index(fs, struct qpt_finding, i);
			const struct qpt_conv_stats *c =
				f->conv >= 0 ? qpt_flow_conv_stats(fl, f->conv, &cs) : NULL;
			struct member_key k = { .index = i };

			if (f->from[0])
				group_host(snd, f->from);
			if (f->to[0])
				group_host(rcv, f->to);
			if (f->conv >= 0)
				g_hash_table_add(convs, GINT_TO_POINTER(f->conv));
			if (c && view && view->conv)
				c = view->conv(c, view->data);
			if (c)
				qpt_conv_rank_key(c, &k.rank);
			else
				k.rank.id = INT32_MAX;
			g_array_append_val(keys, k);
		}
		g_array_sort(keys, member_cmp);
		for (guint m = 0; m < keys->len; m++)
			g_array_index(g->members, guint, m) = g_array_index(keys, struct member_key, m).index;
		g->nsenders = group_hosts(snd, g->senders);
		g->nreceivers = group_hosts(rcv, g->receivers);
		g->nconvs = g_hash_table_size(convs);
		g_array_free(keys, TRUE);
		g_hash_table_destroy(snd);
		g_hash_table_destroy(rcv);
		g_hash_table_destroy(convs);
	}
	g_array_sort(groups, group_cmp);
	return groups;
}

void qpt_findings_groups_free(GArray *groups)
{
	if (!groups)
		return;
	for (guint i = 0; i < groups->len; i++)
		g_array_free(g_array_index(groups, struct qpt_finding_group, i).members, TRUE);
	g_array_free(groups, TRUE);
}
