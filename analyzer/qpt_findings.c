/* qpt_findings.c - the diagnosis (see qpt_findings.h) */
#include "qpt_findings.h"
#include "qpt_findings_int.h"

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

void fb_start(struct fb *b, enum qpt_finding_kind kind, const struct qpt_conv_stats *c, int dir)
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

void fb_num(struct fb *b, const char *key, double v)
{
	if (b->f.nnumbers < QPT_FINDING_NUMBERS)
		b->f.numbers[b->f.nnumbers++] = (struct qpt_finding_number){ key, v };
}

void fb_frame(struct fb *b, uint64_t frame)
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

void fb_frames_of(struct fb *b, const struct conv_frames *cf, int dir, unsigned kind)
{
	int k = fk_index(kind);

	if (!cf || k < 0 || dir < 0)
		return;
	for (unsigned i = 0; i < cf->n; i++)
		if (fe_key(cf->e[i]) == ((unsigned)k << 1 | (unsigned)dir))
			fb_frame(b, cf->e[i] >> FK_BITS);
}

/* The bad ICRCs' time span (kept for the whole capture). */
void fb_icrc_time(struct fb *b)
{
	if (!b->ff || !b->ff->nicrc)
		return;
	b->f.has_time = true;
	b->f.first_ns = b->ff->icrc_first_ns;
	b->f.last_ns = b->ff->icrc_last_ns;
}

void fb_end(struct fb *b, GArray *out, uint64_t weight)
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

const char *fb_plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

double fb_pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* The packets a direction sent as the capture saw them, each once: its
 * packets less the capture's copies.  The denominator of every share. */
uint64_t fb_sendings(const struct qpt_dir_stats *x)
{
	return x->packets > x->duplicates ? x->packets - x->duplicates : 0;
}

void fb_share(struct fb *b, uint64_t part, uint64_t whole)
{
	b->f.part = part;
	b->f.whole = whole;
}

/* "35 %", "0.4 %" */
void fb_pct_text(GString *t, double p)
{
	if (p >= 9.95 || p == 0)
		g_string_append_printf(t, "%.0f %%", p);
	else
		g_string_append_printf(t, "%.1f %%", p);
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
int fb_one_way_dir(const struct qpt_conv_stats *c)
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
		int d = fb_one_way_dir(c);

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
			       fb_plural(missing, "PSN", "PSNs"), gaps, fb_plural(gaps, "gap", "gaps"));
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
	if (fb_conv_span(c, &first, &last))
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
					       x->bad_icrc, fb_sendings(x));
			fb_num(b, "bad_icrc", (double)x->bad_icrc);
			fb_share(b, x->bad_icrc, fb_sendings(x));
			for (unsigned k = 0; b->ff && k < MIN(b->ff->nicrc, QPT_FINDING_FRAMES); k++)
				fb_frame(b, b->ff->icrc_frames[k]);
			fb_icrc_time(b);
			fb_end(b, out, x->bad_icrc);
		}
		if (!x->eventful && !y->eventful)
			continue; /* each finding below counts something rare */
		qpt_endpoint_addr(&c->ep[x->from], sa);
		qpt_endpoint_addr(&c->ep[x->to], ra);
		findings_dir_loss(b, out, c, d, cf, conv_ns);
		for (unsigned k = 1; k < QPT_NAK_KINDS; k++)
			errs += y->naks[k];
		if (errs) {
			bool first_k = true;

			fb_start(b, QPT_F_ERROR_NAKS, c, d);
			g_string_append_printf(b->t, "%s refused %" PRIu64 " %s with an error NAK (",
					       ra, errs, fb_plural(errs, "request", "requests"));
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
					       y->rnr_naks, fb_plural(y->rnr_naks, "NAK", "NAKs"), ra,
					       x->rnr_retries, fb_plural(x->rnr_retries, "retry", "retries"));
			if (!x->gbn_episodes && x->retransmitted_packets)
				g_string_append_printf(b->t, " (%" PRIu64 " %s re-sent)",
						       x->retransmitted_packets,
						       fb_plural(x->retransmitted_packets, "packet", "packets"));
			fb_num(b, "rnr_naks", (double)y->rnr_naks);
			fb_num(b, "rnr_retries", (double)x->rnr_retries);
			fb_frames_of(b, cf, 1 - d, QPT_VB_RNR_NAK);
			fb_end(b, out, y->rnr_naks);
		}
		if (x->ecn_ce || y->cnps) {
			double share = fb_pct(x->ecn_ce, fb_sendings(x));

			fb_start(b, QPT_F_CONGESTION, c, d);
			g_string_append_printf(b->t, "congestion on the way to %s: %" PRIu64
					       " of %" PRIu64 " packets ECN-CE marked (", ra,
					       x->ecn_ce, fb_sendings(x));
			fb_pct_text(b->t, share);
			g_string_append_printf(b->t, "), %" PRIu64 " %s from %s back to %s", y->cnps,
					       fb_plural(y->cnps, "CNP", "CNPs"), ra, sa);
			if (share >= 10)
				b->f.severity = QPT_SEV_WARN;
			fb_num(b, "ecn_ce", (double)x->ecn_ce);
			fb_num(b, "packets", (double)fb_sendings(x));
			fb_share(b, x->ecn_ce, fb_sendings(x));
			fb_num(b, "cnps", (double)y->cnps);
			fb_frames_of(b, cf, d, QPT_VB_ECN_CE);
			fb_frames_of(b, cf, 1 - d, QPT_VB_CNP);
			fb_end(b, out, x->ecn_ce + y->cnps);
		}
		if (x->duplicates && !b->copies_wide) {
			fb_start(b, QPT_F_CAPTURE_COPIES, c, d);
			g_string_append_printf(b->t, "%" PRIu64 " %s seen twice by the capture "
					       "(mirrored both ways, or captures merged): not re-sent",
					       x->duplicates, fb_plural(x->duplicates, "packet", "packets"));
			fb_num(b, "duplicates", (double)x->duplicates);
			fb_frames_of(b, cf, d, QPT_VB_DUPLICATE);
			fb_end(b, out, x->duplicates);
		}
	}
	fold_capture_gaps(b, out, from, c);
	findings_lossless(b, out, c, cf, fo);
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
				       attempts->len, fb_plural(attempts->len, "request", "requests"),
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
				       fb_plural(t->interface_drops, "packet", "packets"), t->os_drops);
		fb_num(b, "interface_drops", (double)t->interface_drops);
		fb_num(b, "os_drops", (double)t->os_drops);
		fb_end(b, out, t->interface_drops + t->os_drops);
	}
	if (t->time_backwards) {
		fb_start(b, QPT_F_TIME_BACKWARDS, NULL, -1);
		g_string_append_printf(b->t, "%" PRIu64 " %s stamped before the previous frame "
				       "(a clock step, or files merged unsorted): times around them "
				       "are not to be trusted", t->time_backwards,
				       fb_plural(t->time_backwards, "frame", "frames"));
		fb_num(b, "time_backwards", (double)t->time_backwards);
		fb_end(b, out, t->time_backwards);
	}
	if (t->untracked) {
		fb_start(b, QPT_F_UNTRACKED, NULL, -1);
		g_string_append_printf(b->t, "%" PRIu64 " %s not analysed: more QPs than the "
				       "limit of %u (--max-qps; without it every QP is tracked)",
				       t->untracked, fb_plural(t->untracked, "packet", "packets"),
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
	findings_pfc(b, out, fl);
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

		all += fb_sendings(&c->dir[0]) + fb_sendings(&c->dir[1]);
		if (!k)
			continue;
		if (n < 8)
			g_string_append_printf(ids, "%s%d", n ? ", " : "", c->id);
		n++;
		bad += k;
	}
	csrc_end(convs);
	g_string_append_printf(b->t, "%" PRIu64 " of %" PRIu64 " packets (", bad, all);
	fb_pct_text(b->t, fb_pct(bad, all));
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
		one_way += fb_one_way_dir(c) >= 0;
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
