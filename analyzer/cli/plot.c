/* plot.c - `qptrace plot`: time-sequence graph of a conversation (SVG)
 *
 *   qptrace plot --conv ID [-o FILE.svg] FILE...
 *   qptrace plot --top N -o FILE.svg FILE...   FILE-conv<ID>.svg for each of
 *                                              the N conversations with the
 *                                              most retransmissions
 *
 * A Stevens / tcptrace-style graph: PSN (unwrapped across the 24-bit wrap,
 * relative to the direction's first request PSN) against time, one panel
 * per direction that carries requests.  Request packets are ticks;
 * retransmissions, capture duplicates, PSN gaps, ECN-CE marks, NAKs, RNR
 * NAKs and CNPs are distinct marks; the ACKed PSN (from the other
 * direction's ACKs) is a step line; go-back-N episodes are shaded from
 * their trigger to their end, in one colour per trigger (NAK, timeout, READ
 * retry, resend without a captured NAK).  The SVG is self-contained (no
 * scripts, no external references).
 *
 * The input is read twice: the first pass runs the engine to find the
 * conversations (ids are final only at the end, when late pairings have
 * been folded), the second one classifies the packets of the chosen
 * conversations by their endpoints, with the engine's per-packet verdicts.
 * Standard input is copied to a temporary file first.  Memory: 32 bytes per
 * packet of the plotted conversations.
 *
 * Every series is a <g data-series="NAME" data-total="N" data-drawn="M">
 * whose children are its marks, so tests can count them; past
 * MAX_DRAWN marks in a series, marks are thinned (first one per pixel, then
 * evenly) and the legend says how many were drawn.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "qpt_flow.h"

#define MAX_DRAWN 20000 /* marks per series before thinning */

/* ---- series ---------------------------------------------------------- */

enum shape { SH_TICK, SH_TICK_BOLD, SH_GAP, SH_RING, SH_TRI, SH_DIAMOND, SH_SQUARE };

enum {
	S_REQ,
	S_RESP,
	S_DUP,
	S_RETX,
	S_GAP,
	S_CE,
	S_NAK,
	S_RNR,
	S_CNP,
	S_COUNT
};

static const struct {
	const char *key, *label, *color;
	enum shape shape;
} sdef[S_COUNT] = {
	[S_REQ] = { "requests", "request packets", "#1f77b4", SH_TICK },
	[S_RESP] = { "responses", "READ responses, atomic ACKs", "#7f7f00", SH_TICK },
	[S_DUP] = { "duplicates", "capture duplicates", "#999999", SH_TICK },
	[S_RETX] = { "retransmissions", "retransmissions", "#d62728", SH_TICK_BOLD },
	[S_GAP] = { "psn_gaps", "PSN gaps (missing PSNs)", "#ff7f0e", SH_GAP },
	[S_CE] = { "ecn_ce", "ECN-CE marked packets", "#8c564b", SH_RING },
	[S_NAK] = { "naks", "NAKs (at the NAK PSN)", "#9467bd", SH_TRI },
	[S_RNR] = { "rnr_naks", "RNR NAKs", "#e377c2", SH_DIAMOND },
	[S_CNP] = { "cnps", "CNPs (at the QP's highest PSN)", "#17becf", SH_SQUARE },
};
#define ACK_COLOR "#2ca02c"

/* Go-back-N shading, one class per enum qpt_trigger (its name is the
 * rect's class).  fill: the shading, swatch: the legend's darker sample. */
#define GBN_CLASSES 4
static const struct {
	const char *legend, *title, *color, *fill, *swatch;
} gdef[GBN_CLASSES] = {
	[QPT_TRIGGER_NAK] = { "go-back-N after NAK", "after NAK frame", "#d62728", "0.11",
			      "0.25" },
	[QPT_TRIGGER_TIMEOUT] = { "go-back-N after timeout", "after a silence before frame",
				  "#7f7f7f", "0.16", "0.3" },
	[QPT_TRIGGER_READ_RETRY] = { "go-back-N after READ retry",
				     "after a gap in READ responses, READ re-issued at frame",
				     "#bcbd22", "0.25", "0.5" },
	[QPT_TRIGGER_RESEND] = { "go-back-N resend, NAK not captured",
				 "without a captured NAK or silence, resend at frame", "#9467bd",
				 "0.12", "0.3" },
};
G_STATIC_ASSERT(QPT_TRIGGER_RESEND + 1 == GBN_CLASSES); /* a new trigger needs a class */

static unsigned gbn_class(const struct qpt_episode *e)
{
	return e->trigger < GBN_CLASSES ? e->trigger : QPT_TRIGGER_RESEND;
}

struct mark {
	int64_t ns;
	int64_t y;	/* PSN offset (unwrapped) */
	uint64_t frame;
	uint32_t psn;	/* as on the wire */
	uint32_t n;	/* PSN gap: missing PSNs */
	uint32_t code;	/* NAK code, RNR timer */
	uint32_t pad_;
};

/* One PSN space: the requests of one direction, with the responses, ACKs
 * and NAKs of the other direction that answer them. */
struct space {
	bool init;
	uint32_t base, last_raw;
	int64_t last_y;
	bool has_top;
	int64_t top; /* highest request offset so far (CNP placement) */
	GArray *s[S_COUNT];
	GArray *ack; /* struct mark: y = highest ACKed offset, when it grows */
	bool ack_init;
	int64_t ack_max;
};

struct plot {
	int32_t id;
	struct qpt_endpoint ep[2];
	bool ud;
	struct space sp[2];
	uint64_t first_frame;
	int64_t first_ns, last_ns, min_ns; /* min: capture time can go backwards */
	bool seen;
};

static int64_t unwrap(struct space *sp, uint32_t psn)
{
	if (!sp->init) {
		sp->init = true;
		sp->base = psn;
		sp->last_raw = psn;
		sp->last_y = 0;
		return 0;
	}
	sp->last_y += qpt_psn_diff(psn, sp->last_raw);
	sp->last_raw = psn;
	return sp->last_y;
}

static void add(struct space *sp, int s, int64_t ns, int64_t y, uint64_t frame,
		uint32_t psn, uint32_t n, uint32_t code)
{
	struct mark m = { .ns = ns, .y = y, .frame = frame, .psn = psn, .n = n,
			  .code = code };

	if (!sp->s[s])
		sp->s[s] = g_array_new(FALSE, FALSE, sizeof(struct mark));
	g_array_append_val(sp->s[s], m);
}

static void ack_to(struct space *sp, int64_t ns, int64_t y, uint64_t frame)
{
	struct mark m = { .ns = ns, .y = y, .frame = frame };

	if (sp->ack_init && y <= sp->ack_max)
		return;
	sp->ack_init = true;
	sp->ack_max = y;
	if (!sp->ack)
		sp->ack = g_array_new(FALSE, FALSE, sizeof(struct mark));
	g_array_append_val(sp->ack, m);
}

static guint nmarks(const struct space *sp, int s)
{
	return sp->s[s] ? sp->s[s]->len : 0;
}

static bool space_used(const struct space *sp)
{
	for (int s = 0; s < S_COUNT; s++)
		if (nmarks(sp, s))
			return true;
	return sp->ack && sp->ack->len;
}

static void plot_free(struct plot *p)
{
	for (int d = 0; d < 2; d++) {
		for (int s = 0; s < S_COUNT; s++)
			if (p->sp[d].s[s])
				g_array_free(p->sp[d].s[s], TRUE);
		if (p->sp[d].ack)
			g_array_free(p->sp[d].ack, TRUE);
	}
	g_free(p);
}

/* ---- matching packets to conversations -------------------------------- */

/* The engine's half key (qpt_flow.c): a packet belongs to direction d of a
 * conversation when it goes from ep[d] to ep[1-d], to QP ep[1-d].qpn (and,
 * for UD, from QP ep[d].qpn). */
struct hkey {
	uint8_t src[16], dst[16];
	uint32_t qpn, sqpn;
};

struct target {
	struct plot *p;
	int dir;
};

static guint hkey_hash(gconstpointer k)
{
	const uint8_t *b = k;
	guint h = 2166136261u;

	for (size_t i = 0; i < sizeof(struct hkey); i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

static gboolean hkey_equal(gconstpointer a, gconstpointer b)
{
	return !memcmp(a, b, sizeof(struct hkey));
}

static void pkt_key(const struct qpt_pkt *p, struct hkey *k)
{
	memset(k, 0, sizeof(*k));
	if (p->ip_version) {
		memcpy(k->src, p->ip_src, 16);
		memcpy(k->dst, p->ip_dst, 16);
	} else if (p->flags & QPT_HAS_LRH) {
		k->src[0] = (uint8_t)(p->lrh.slid >> 8);
		k->src[1] = (uint8_t)(p->lrh.slid & 0xff);
		k->dst[0] = (uint8_t)(p->lrh.dlid >> 8);
		k->dst[1] = (uint8_t)(p->lrh.dlid & 0xff);
	} else {
		memcpy(k->src, p->grh.sgid, 16);
		memcpy(k->dst, p->grh.dgid, 16);
	}
	k->qpn = p->bth.dqpn;
	k->sqpn = (p->bth.opcode & 0xe0) == QPT_SVC_UD && p->flags & QPT_H_DETH ?
			  p->deth.sqpn : ~0u;
}

static void add_keys(GHashTable *keys, struct plot *p)
{
	for (int d = 0; d < 2; d++) {
		struct hkey *k;
		struct target *t;

		if (!p->ep[1 - d].qpn_known)
			continue;
		if (p->ud && !p->ep[d].qpn_known)
			continue;
		k = g_new0(struct hkey, 1);
		memcpy(k->src, p->ep[d].addr, 16);
		memcpy(k->dst, p->ep[1 - d].addr, 16);
		k->qpn = p->ep[1 - d].qpn;
		k->sqpn = p->ud ? p->ep[d].qpn : ~0u;
		t = g_new0(struct target, 1);
		t->p = p;
		t->dir = d;
		g_hash_table_insert(keys, k, t);
	}
}

/* One packet of direction e of p, with the engine's verdict. */
static void record(struct plot *p, int e, uint64_t frame, int64_t ns,
		   const struct qpt_pkt *pkt, const struct qpt_verdict *v)
{
	const struct qpt_opcode_info *oi = &qpt_opcodes[pkt->bth.opcode];
	uint32_t psn = pkt->bth.psn;
	struct space *sp;
	int64_t y;

	if (!p->seen) {
		p->seen = true;
		p->first_frame = frame;
		p->first_ns = p->min_ns = ns;
	}
	p->last_ns = MAX(p->last_ns, ns);
	p->min_ns = MIN(p->min_ns, ns);
	if (oi->flags & QPT_O_CNP) {
		/* sent to the throttled QP: a mark on its requests */
		sp = &p->sp[1 - e];
		y = sp->has_top ? sp->top : 0;
		add(sp, S_CNP, ns, y, frame, psn, 0, 0);
	} else if (oi->flags & QPT_O_RESP) {
		sp = &p->sp[1 - e];
		y = unwrap(sp, psn);
		if (v->flags & QPT_V(NAK)) {
			add(sp, S_NAK, ns, y, frame, psn, 0, pkt->aeth.value);
			if (pkt->aeth.value == QPT_NAK_PSN_SEQ_ERR)
				ack_to(sp, ns, y - 1, frame); /* acknowledges PSN-1 */
		} else if (v->flags & QPT_V(RNR_NAK)) {
			add(sp, S_RNR, ns, y, frame, psn, 0, pkt->aeth.value);
		} else {
			if (pkt->flags & QPT_H_AETH && pkt->aeth.kind == QPT_AETH_ACK)
				ack_to(sp, ns, y, frame);
			if (!(oi->flags & QPT_O_ACK))
				add(sp,
				    v->flags & QPT_V(DUPLICATE) ? S_DUP :
				    v->flags & QPT_V(RETRANSMISSION) ? S_RETX :
								       S_RESP,
				    ns, y, frame, psn, 0, 0);
		}
	} else {
		sp = &p->sp[e];
		y = unwrap(sp, psn);
		add(sp,
		    v->flags & QPT_V(DUPLICATE) ? S_DUP :
		    v->flags & QPT_V(RETRANSMISSION) ? S_RETX : S_REQ,
		    ns, y, frame, psn, 0, 0);
		if (!sp->has_top || y > sp->top) {
			sp->has_top = true;
			sp->top = y;
		}
		if (v->flags & QPT_V(PSN_GAP))
			add(sp, S_GAP, ns, y + qpt_psn_diff(v->gap_first_psn, psn), frame,
			    v->gap_first_psn, v->gap_psns, 0);
	}
	if (v->flags & QPT_V(ECN_CE))
		add(sp, S_CE, ns, y, frame, psn, 0, 0);
}

/* ---- reading ---------------------------------------------------------- */

struct pass {
	struct opts *o;
	gchar **files;
	struct qpt_flow *fl;
	GHashTable *keys; /* second pass: struct hkey -> struct target */
	struct qpt_analysis an;
};

static void pass_frame(void *user, const struct qpt_frame *f, int64_t ns,
		       const struct qpt_pkt *pkt, const struct qpt_verdict *v)
{
	struct pass *ps = user;
	struct hkey k;
	struct target *t;

	if (!ps->keys || v->conv < 0 || !(pkt->flags & QPT_HAS_BTH))
		return;
	pkt_key(pkt, &k);
	t = g_hash_table_lookup(ps->keys, &k);
	if (t)
		record(t->p, t->dir, f->number, ns, pkt, v);
}

/* One reading of the files; the first pass reports their errors, a
 * second one (errors) keeps them quiet. */
static int read_pass(struct pass *ps, bool progress, GPtrArray *errors)
{
	return qpt_analyse_files(ps->o, ps->files, progress, ps->fl, &ps->an,
				 pass_frame, ps, errors);
}

/* ---- SVG helpers ------------------------------------------------------- */

static void fmt_ep(const struct qpt_endpoint *e, char *buf, size_t len)
{
	if (e->family == 'L')
		g_snprintf(buf, len, "LID %u", e->addr[0] << 8 | e->addr[1]);
	else if (e->family == 4 ||
		 !memcmp(e->addr, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12))
		inet_ntop(AF_INET, e->addr + 12, buf, (socklen_t)len);
	else
		inet_ntop(AF_INET6, e->addr, buf, (socklen_t)len);
}

static void fmt_ep_qp(const struct qpt_endpoint *e, char *buf, size_t len)
{
	char a[64];

	fmt_ep(e, a, sizeof(a));
	if (e->qpn_known)
		g_snprintf(buf, len, "%s QP 0x%06x", a, e->qpn);
	else
		g_snprintf(buf, len, "%s QP ?", a);
}

static void esc(GString *o, const char *s)
{
	gchar *e = g_markup_escape_text(s, -1);

	g_string_append(o, e);
	g_free(e);
}

static void fmt_count(char *buf, size_t len, uint64_t n)
{
	char tmp[32];
	size_t l, j = 0;

	g_snprintf(tmp, sizeof(tmp), "%" PRIu64, n);
	l = strlen(tmp);
	for (size_t i = 0; i < l && j + 2 < len; i++) {
		if (i && (l - i) % 3 == 0)
			buf[j++] = ',';
		buf[j++] = tmp[i];
	}
	buf[j] = '\0';
}

static double nice_step(double range, int n)
{
	double raw = range / n, mag, r;

	if (!(raw > 0))
		return 1;
	mag = pow(10, floor(log10(raw)));
	r = raw / mag;
	return (r < 1.5 ? 1 : r < 3.5 ? 2 : r < 7.5 ? 5 : 10) * mag;
}

static int decimals(double step)
{
	int d = 0;

	while (d < 9 && fabs(step * pow(10, d) - floor(step * pow(10, d) + 0.5)) > 1e-6)
		d++;
	return d;
}

/* Page layout. */
#define W 1300
#define PL 92		   /* left margin (y axis) */
#define PW 860		   /* plot width */
#define LX (PL + PW + 24)  /* legend x */
#define TOP 78		   /* first panel top */
#define PANEL_GAP 58
#define BOTTOM 64

struct geom {
	double x0, y0, w, h; /* plot area */
	double tlo, thi;     /* ns, relative to the conversation's first packet */
	double ylo, yhi;
};

static double px(const struct geom *g, int64_t rel_ns)
{
	return g->x0 + ((double)rel_ns - g->tlo) / (g->thi - g->tlo) * g->w;
}

static double py(const struct geom *g, double y)
{
	return g->y0 + g->h - (y - g->ylo) / (g->yhi - g->ylo) * g->h;
}

/* tick: length of a request tick, about the height of one PSN */
static void shape_path(GString *o, enum shape sh, double x, double y, double y2,
		       double tick)
{
	switch (sh) {
	case SH_TICK:
		g_string_append_printf(o, "<path d=\"M%.1f %.1fv%.1f\"", x, y - tick / 2, tick);
		break;
	case SH_TICK_BOLD:
		g_string_append_printf(o, "<path d=\"M%.1f %.1fv%.1f\"", x, y - tick / 2 - 1.5,
				       tick + 3);
		break;
	case SH_GAP: {
		double top = MIN(y, y2), h = fabs(y2 - y);

		if (h < 5) {
			top -= (5 - h) / 2;
			h = 5;
		}
		g_string_append_printf(o, "<path d=\"M%.1f %.1fh7v%.1fh-7z\"", x - 3.5, top, h);
		break;
	}
	case SH_RING:
		g_string_append_printf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\"", x, y);
		break;
	case SH_TRI: /* pointing down at the PSN */
		g_string_append_printf(o, "<path d=\"M%.1f %.1fh11l-5.5 9z\"", x - 5.5, y - 9);
		break;
	case SH_DIAMOND:
		g_string_append_printf(o, "<path d=\"M%.1f %.1fl5 6-5 6-5-6z\"", x, y - 6);
		break;
	case SH_SQUARE:
		g_string_append_printf(o, "<path d=\"M%.1f %.1fh8v8h-8z\"", x - 4, y - 4);
		break;
	}
}

static const char *series_style(int s)
{
	switch (sdef[s].shape) {
	case SH_TICK: return "fill=\"none\" stroke-width=\"1.2\"";
	case SH_TICK_BOLD: return "fill=\"none\" stroke-width=\"2.4\"";
	case SH_GAP: return "fill=\"#ffffff\" fill-opacity=\"0.6\" stroke-width=\"1.5\"";
	case SH_RING: return "fill=\"none\" stroke-width=\"1.5\"";
	default: return "stroke=\"#ffffff\" stroke-width=\"0.6\"";
	}
}

static bool series_filled(int s)
{
	return sdef[s].shape == SH_TRI || sdef[s].shape == SH_DIAMOND ||
	       sdef[s].shape == SH_SQUARE;
}

static void mark_title(GString *o, int s, const struct mark *m, int64_t t_first)
{
	g_string_append_printf(o, "<title>frame %" PRIu64 ", %.3f us: ", m->frame,
			       (double)(m->ns - t_first) / 1000.0);
	switch (s) {
	case S_GAP:
		g_string_append_printf(o, "%u PSN%s missing from PSN %u", m->n,
				       m->n == 1 ? "" : "s", m->psn);
		break;
	case S_NAK:
		g_string_append_printf(o, "NAK %s, PSN %u", qpt_nak_name(m->code), m->psn);
		break;
	case S_RNR:
		g_string_append_printf(o, "RNR NAK, PSN %u, timer %u (%.2f us)", m->psn,
				       m->code, qpt_rnr_timer_us(m->code));
		break;
	case S_CNP:
		g_string_append(o, "CNP");
		break;
	default:
		g_string_append_printf(o, "%s PSN %u", sdef[s].label, m->psn);
		break;
	}
	g_string_append(o, "</title>");
}

/* Indexes of the marks to draw: all of them up to MAX_DRAWN, else the
 * first one in each pixel cell, then evenly thinned. */
static GArray *choose(const struct geom *g, GArray *marks, int64_t t_first)
{
	GArray *idx = g_array_new(FALSE, FALSE, sizeof(guint));
	guint n = marks ? marks->len : 0;

	if (n <= MAX_DRAWN) {
		for (guint i = 0; i < n; i++)
			g_array_append_val(idx, i);
		return idx;
	}
	{
		int cw = (int)g->w + 1, ch = (int)g->h + 1;
		guint8 *seen = g_malloc0((size_t)cw * (size_t)ch / 8 + 1);

		for (guint i = 0; i < n; i++) {
			const struct mark *m = &g_array_index(marks, struct mark, i);
			int cx = (int)(px(g, m->ns - t_first) - g->x0);
			int cy = (int)(py(g, (double)m->y) - g->y0);
			size_t bit;

			cx = CLAMP(cx, 0, cw - 1);
			cy = CLAMP(cy, 0, ch - 1);
			bit = (size_t)cy * (size_t)cw + (size_t)cx;
			if (seen[bit / 8] & (1u << (bit % 8)))
				continue;
			seen[bit / 8] |= (guint8)(1u << (bit % 8));
			g_array_append_val(idx, i);
		}
		g_free(seen);
	}
	if (idx->len > MAX_DRAWN) {
		GArray *thin = g_array_new(FALSE, FALSE, sizeof(guint));

		for (guint k = 0; k < MAX_DRAWN; k++) {
			guint j = (guint)((uint64_t)k * idx->len / MAX_DRAWN);

			g_array_append_val(thin, g_array_index(idx, guint, j));
		}
		g_array_free(idx, TRUE);
		idx = thin;
	}
	return idx;
}

struct totals {
	uint64_t total[S_COUNT], drawn[S_COUNT];
	uint64_t episodes[GBN_CLASSES]; /* shaded, by enum qpt_trigger */
	uint64_t acks;
};

static void draw_axes_x(GString *o, const struct geom *g, double unit,
			const char *uname, bool labels)
{
	double lo = g->tlo / unit, hi = g->thi / unit;
	double step = nice_step(hi - lo, 8);
	int dec = decimals(step);

	g_string_append(o, "<g class=\"grid-x\" stroke=\"#e4e4e4\" stroke-width=\"1\">");
	for (double t = ceil(lo / step) * step; t <= hi + step * 1e-9; t += step)
		g_string_append_printf(o, "<path d=\"M%.1f %.1fv%.1f\"/>",
				       px(g, (int64_t)llround(t * unit)), g->y0, g->h);
	g_string_append(o, "</g>\n");
	if (!labels)
		return;
	g_string_append_printf(o, "<g class=\"axis-x\" font-size=\"12\" text-anchor=\"middle\" fill=\"#333\">");
	for (double t = ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) {
		double x = px(g, (int64_t)llround(t * unit));

		g_string_append_printf(o, "<path d=\"M%.1f %.1fv5\" stroke=\"#333\"/>", x,
				       g->y0 + g->h);
		g_string_append_printf(o, "<text x=\"%.1f\" y=\"%.1f\">%.*f</text>", x,
				       g->y0 + g->h + 18, dec, fabs(t) < step * 1e-9 ? 0.0 : t);
	}
	g_string_append_printf(o,
			       "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\">time since the conversation's first packet (%s)</text>",
			       g->x0 + g->w / 2, g->y0 + g->h + 40, uname);
	g_string_append(o, "</g>\n");
}

static void draw_axes_y(GString *o, const struct geom *g, uint32_t base)
{
	double step = MAX(1.0, nice_step(g->yhi - g->ylo, 6));
	/* past a million, labels in M so they stay clear of the axis title */
	bool mega = MAX(fabs(g->ylo), fabs(g->yhi)) >= 1e6;
	int dec = mega ? decimals(step / 1e6) : 0;

	g_string_append(o, "<g class=\"axis-y\" font-size=\"12\" text-anchor=\"end\" fill=\"#333\">");
	for (double y = ceil(g->ylo / step) * step; y <= g->yhi; y += step) {
		double yy = py(g, y);

		g_string_append_printf(o,
				       "<path d=\"M%.1f %.1fh%.1f\" stroke=\"#e4e4e4\"/>"
				       "<path d=\"M%.1f %.1fh5\" stroke=\"#333\"/>"
				       "<text x=\"%.1f\" y=\"%.1f\">%.*f%s</text>",
				       g->x0, yy, g->w, g->x0 - 5, yy, g->x0 - 8, yy + 4, dec,
				       (mega ? y / 1e6 : y) + 0.0, mega ? "M" : "");
	}
	g_string_append_printf(o,
			       "<text transform=\"translate(%.1f %.1f) rotate(-90)\" text-anchor=\"middle\" font-size=\"13\">PSN offset from PSN %u (packets)</text>",
			       g->x0 - 64, g->y0 + g->h / 2, base);
	g_string_append(o, "</g>\n");
}

/* ACKed PSN: a step line, one vertex per pixel column */
static void draw_acked(GString *o, const struct plot *p, const struct space *sp,
		       const struct geom *g, int pi, struct totals *tot)
{
	g_string_append_printf(o, "<g data-series=\"acked\" data-total=\"%u\" clip-path=\"url(#clip%d)\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\">",
			       sp->ack ? sp->ack->len : 0, pi, ACK_COLOR);
	if (sp->ack && sp->ack->len) {
		double lx = 0, ly = 0, pend = 0;
		bool pending = false;

		for (guint i = 0; i < sp->ack->len; i++) {
			const struct mark *m = &g_array_index(sp->ack, struct mark, i);
			double x1 = floor(px(g, m->ns - p->first_ns) * 2 + 0.5) / 2;
			double y1 = floor(py(g, (double)m->y) * 2 + 0.5) / 2;

			if (!i) {
				g_string_append_printf(o, "<path d=\"M%.1f %.1f", x1, y1);
				lx = x1;
				ly = y1;
				continue;
			}
			if (x1 == lx) {
				pend = y1;
				pending = true;
				continue;
			}
			if (pending) {
				g_string_append_printf(o, "V%.1f", pend);
				ly = pend;
				pending = false;
			}
			g_string_append_printf(o, "H%.1f", x1);
			if (y1 != ly)
				g_string_append_printf(o, "V%.1f", y1);
			lx = x1;
			ly = y1;
		}
		if (pending)
			g_string_append_printf(o, "V%.1f", pend);
		g_string_append_printf(o, "H%.1f\"/>", g->x0 + g->w);
		tot->acks += sp->ack->len;
	}
	g_string_append(o, "</g>\n");

}

static void draw_panel(GString *o, const struct plot *p, const struct qpt_conv *c,
		       int d, const struct geom *g, int pi, struct totals *tot,
		       double unit, const char *uname, bool last)
{
	const struct space *sp = &p->sp[d];
	const struct qpt_dir *x = &c->dir[d];
	char from[96], to[96];
	double tick = CLAMP(g->h / (g->yhi - g->ylo) * 0.7, 6.0, 14.0);

	fmt_ep_qp(&c->ep[x->from], from, sizeof(from));
	fmt_ep_qp(&c->ep[x->to], to, sizeof(to));
	g_string_append_printf(o, "<g class=\"panel\" data-dir=\"%d\">\n", d);
	g_string_append_printf(o,
			       "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\" font-weight=\"bold\" fill=\"#222\">%s requests: ",
			       g->x0, g->y0 - 9, d ? "b\u2192a" : "a\u2192b");
	esc(o, from);
	g_string_append(o, " \u2192 ");
	esc(o, to);
	g_string_append(o, "</text>\n");
	g_string_append_printf(o, "<clipPath id=\"clip%d\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/></clipPath>\n",
			       pi, g->x0 - 6, g->y0 - 6, g->w + 12, g->h + 12);
	g_string_append_printf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#fcfcfc\" stroke=\"none\"/>\n",
			       g->x0, g->y0, g->w, g->h);
	draw_axes_x(o, g, unit, uname, last);
	draw_axes_y(o, g, sp->base);

	/* go-back-N episodes of this direction, shaded trigger -> end */
	g_string_append_printf(o, "<g data-series=\"gbn_episodes\" data-total=\"%" PRIu64 "\" clip-path=\"url(#clip%d)\">",
			       x->gbn_episodes, pi);
	for (guint i = 0; x->episodes && i < x->episodes->len; i++) {
		const struct qpt_episode *e = &g_array_index(x->episodes, struct qpt_episode, i);
		unsigned k = gbn_class(e);
		double a = px(g, e->start_ns - p->first_ns);
		double b = px(g, (e->end_ns > e->start_ns ? e->end_ns : e->start_ns) - p->first_ns);

		if (b - a < 2)
			b = a + 2;
		g_string_append_printf(o,
				       "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" fill-opacity=\"%s\">"
				       "<title>go-back-N #%u %s %" PRIu64 ": %u packets resent from PSN %u, %.1f us lost</title></rect>",
				       qpt_trigger_name(k), a, g->y0, b - a, g->h, gdef[k].color,
				       gdef[k].fill, i + 1, gdef[k].title, e->trigger_frame,
				       e->resent_packets, e->from_psn,
				       (double)(e->end_ns - e->start_ns) / 1000.0);
		tot->episodes[k]++;
	}
	g_string_append(o, "</g>\n");
	if (x->episodes && x->episodes->len) {
		/* labels on two rows, only where they fit without overlapping */
		double row_end[2] = { -1e9, -1e9 };

		g_string_append(o, "<g class=\"episode-labels\" font-size=\"11\" fill=\"#6a1a1a\">");
		for (guint i = 0; i < x->episodes->len; i++) {
			const struct qpt_episode *e =
				&g_array_index(x->episodes, struct qpt_episode, i);
			char label[64];
			double lx = px(g, e->start_ns - p->first_ns) + 3, lw;
			int r;

			g_snprintf(label, sizeof(label), "GBN #%u %.1f \u00b5s", i + 1,
				   (double)(e->end_ns - e->start_ns) / 1000.0);
			lw = 6.3 * (double)g_utf8_strlen(label, -1);
			if (lx + lw > g->x0 + g->w - 2)
				continue;
			r = lx >= row_end[0] + 6 ? 0 : lx >= row_end[1] + 6 ? 1 : -1;
			if (r < 0)
				continue;
			row_end[r] = lx + lw;
			g_string_append_printf(o, "<text x=\"%.1f\" y=\"%.1f\">%s</text>", lx,
					       g->y0 + 13 + 13 * r, label);
		}
		g_string_append(o, "</g>\n");
	}
	for (int s = 0; s < S_COUNT; s++) {
		GArray *m = sp->s[s];
		GArray *idx = choose(g, m, p->first_ns);
		bool titles = s != S_REQ && s != S_RESP && idx->len <= 5000;

		if (s == S_RETX) /* above the ticks, under the marks */
			draw_acked(o, p, sp, g, pi, tot);

		g_string_append_printf(o,
				       "<g data-series=\"%s\" data-total=\"%u\" data-drawn=\"%u\" clip-path=\"url(#clip%d)\" %s=\"%s\" %s>",
				       sdef[s].key, m ? m->len : 0, idx->len, pi,
				       series_filled(s) ? "fill" : "stroke", sdef[s].color,
				       series_style(s));
		for (guint k = 0; k < idx->len; k++) {
			const struct mark *mk = &g_array_index(m, struct mark, g_array_index(idx, guint, k));
			double xx = px(g, mk->ns - p->first_ns);
			double yy = py(g, (double)mk->y - (s == S_GAP ? 0.5 : 0));

			shape_path(o, sdef[s].shape, xx, yy,
				   s == S_GAP ? py(g, (double)mk->y + mk->n - 0.5) : yy, tick);

			if (titles) {
				g_string_append_c(o, '>');
				mark_title(o, s, mk, p->first_ns);
				g_string_append(o, sdef[s].shape == SH_RING ? "</circle>" : "</path>");
			} else {
				g_string_append(o, "/>");
			}
			if ((k & 255) == 255)
				g_string_append_c(o, '\n');
		}
		g_string_append(o, "</g>\n");
		tot->total[s] += m ? m->len : 0;
		tot->drawn[s] += idx->len;
		g_array_free(idx, TRUE);
	}
	g_string_append_printf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#555\"/>\n",
			       g->x0, g->y0, g->w, g->h);
	g_string_append(o, "</g>\n");
}

static void legend_swatch(GString *o, int s, double x, double y)
{
	g_string_append_printf(o, "<g %s=\"%s\" %s>", series_filled(s) ? "fill" : "stroke",
			       sdef[s].color, series_style(s));
	shape_path(o, sdef[s].shape, x + 10, y, y + 3, 9);
	g_string_append(o, sdef[s].shape == SH_RING ? "/>" : "/>");
	g_string_append(o, "</g>");
}

static void draw_legend(GString *o, const struct totals *t, double y0)
{
	double y = y0 + 24;
	char a[32], b[32];
	int classes = 0;

	for (int k = 0; k < GBN_CLASSES; k++)
		classes += t->episodes[k] != 0;
	g_string_append_printf(o, "<g id=\"legend\" class=\"legend\" font-size=\"12\" fill=\"#222\">\n");
	g_string_append_printf(o, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%d\" fill=\"#ffffff\" stroke=\"#bbbbbb\"/>\n",
			       LX - 8, y0, W - LX - 2, 22 * (S_COUNT + 1 + MAX(classes, 1)) + 30);
	g_string_append_printf(o, "<text x=\"%d\" y=\"%.1f\" font-weight=\"bold\">Legend</text>\n", LX, y0 + 16);
	y += 14;
	for (int s = 0; s < S_COUNT; s++, y += 22) {
		g_string_append_printf(o, "<g class=\"legend-entry\" data-legend=\"%s\">", sdef[s].key);
		legend_swatch(o, s, LX, y);
		fmt_count(a, sizeof(a), t->total[s]);
		g_string_append_printf(o, "<text x=\"%d\" y=\"%.1f\"%s>%s (%s", LX + 26, y + 4,
				       t->total[s] ? "" : " fill=\"#9a9a9a\"", sdef[s].label, a);
		if (t->drawn[s] < t->total[s]) {
			fmt_count(b, sizeof(b), t->drawn[s]);
			g_string_append_printf(o, ", %s drawn", b);
		}
		g_string_append(o, ")</text></g>\n");
	}
	g_string_append_printf(o,
			       "<g class=\"legend-entry\" data-legend=\"acked\"><path d=\"M%d %.1fh8v-6h12\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\"/>"
			       "<text x=\"%d\" y=\"%.1f\"%s>ACKed PSN (from the other side)</text></g>\n",
			       LX, y + 3, ACK_COLOR, LX + 26, y + 4, t->acks ? "" : " fill=\"#9a9a9a\"");
	/* go-back-N: one entry per trigger that occurs, or a grey one for none */
	for (int k = 0; k < GBN_CLASSES; k++) {
		if (!t->episodes[k] && (classes || k != QPT_TRIGGER_NAK))
			continue;
		y += 22;
		fmt_count(a, sizeof(a), t->episodes[k]);
		g_string_append_printf(o,
				       "<g class=\"legend-entry\" data-legend=\"gbn_episodes\" data-trigger=\"%s\">"
				       "<rect x=\"%d\" y=\"%.1f\" width=\"20\" height=\"12\" fill=\"%s\" fill-opacity=\"%s\"/>"
				       "<text x=\"%d\" y=\"%.1f\"%s>%s (%s)</text></g>\n",
				       classes ? qpt_trigger_name((unsigned)k) : "none", LX, y - 6,
				       gdef[k].color, gdef[k].swatch, LX + 26, y + 4,
				       classes ? "" : " fill=\"#9a9a9a\"",
				       classes ? gdef[k].legend : "go-back-N episodes", a);
	}
	g_string_append(o, "</g>\n");
}

static GString *render(const struct plot *p, const struct qpt_conv *c, int64_t t0,
		       gchar **files)
{
	GString *o = g_string_sized_new(1 << 16);
	int dirs[2], nd = 0;
	int64_t tmin = 0, tmax = 0, span;
	double unit, ph;
	const char *uname;
	int height;
	char e0[96], e1[96];
	struct totals tot = { 0 };
	uint64_t rexmit = 0, naks = 0, rnr = 0, cnps = 0, gbn = 0;
	double lost_us = 0;

	for (int d = 0; d < 2; d++)
		if (space_used(&p->sp[d]))
			dirs[nd++] = d;
	if (!nd)
		dirs[nd++] = 0;
	/* time range: the packets of both directions */
	tmax = p->last_ns - p->first_ns;
	tmin = p->min_ns - p->first_ns;
	for (int d = 0; d < 2; d++) {
		const struct qpt_dir *x = &c->dir[d];

		rexmit += x->retransmitted_packets;
		rnr += x->rnr_naks;
		cnps += x->cnps;
		gbn += x->gbn_episodes;
		for (int k = 0; k < 5; k++)
			naks += x->naks[k];
		for (guint i = 0; x->episodes && i < x->episodes->len; i++) {
			const struct qpt_episode *e =
				&g_array_index(x->episodes, struct qpt_episode, i);

			lost_us += (double)(e->end_ns - e->start_ns) / 1000.0;
		}
	}
	span = MAX(tmax - tmin, (int64_t)1000);
	if (span < 2000000) {
		unit = 1e3;
		uname = "\u00b5s";
	} else if (span < 2000000000) {
		unit = 1e6;
		uname = "ms";
	} else {
		unit = 1e9;
		uname = "s";
	}
	ph = nd == 1 ? 470 : 290;
	height = (int)(TOP + nd * ph + (nd - 1) * PANEL_GAP + BOTTOM + 16);
	height = MAX(height, TOP + 22 * (S_COUNT + 2 + GBN_CLASSES) + 40);

	fmt_ep_qp(&c->ep[0], e0, sizeof(e0));
	fmt_ep_qp(&c->ep[1], e1, sizeof(e1));
	g_string_append_printf(o,
			       "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			       "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
			       "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" data-conv=\"%d\">\n",
			       W, height, W, height, c->id);
	g_string_append_printf(o, "<title>qptrace: conversation %d ", c->id);
	esc(o, e0);
	g_string_append(o, " \u21c4 ");
	esc(o, e1);
	g_string_append(o, "</title>\n");
	g_string_append_printf(o, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", W, height);
	g_string_append_printf(o, "<text x=\"%d\" y=\"26\" font-size=\"17\" font-weight=\"bold\" fill=\"#111\">conversation %d (%s): ",
			       PL, c->id, c->transport[0] ? c->transport : "?");
	esc(o, e0);
	g_string_append(o, " \u21c4 ");
	esc(o, e1);
	g_string_append(o, "</text>\n");
	{
		GString *sub = g_string_new(NULL);
		char a[32];

		fmt_count(a, sizeof(a), rexmit);
		g_string_append_printf(sub, "%s retransmitted, %" PRIu64 " NAK%s, %" PRIu64
				       " RNR NAK%s, %" PRIu64 " go-back-N (%.1f \u00b5s lost), %" PRIu64
				       " CNP%s; paired by %s",
				       a, naks, naks == 1 ? "" : "s", rnr, rnr == 1 ? "" : "s", gbn,
				       lost_us, cnps, cnps == 1 ? "" : "s",
				       qpt_paired_by_name(c->paired_by));
		g_string_append_printf(o, "<text x=\"%d\" y=\"46\" font-size=\"12.5\" fill=\"#333\">", PL);
		esc(o, sub->str);
		g_string_append(o, "</text>\n");
		g_string_truncate(sub, 0);
		g_string_append_printf(sub, "t = 0 at frame %" PRIu64 ", %.6f s after the first frame of ",
				       p->first_frame, (double)(p->first_ns - t0) / 1e9);
		for (gchar **f = files; *f; f++)
			g_string_append_printf(sub, "%s%s", f == files ? "" : " + ", *f);
		g_string_append_printf(o, "<text x=\"%d\" y=\"62\" font-size=\"11.5\" fill=\"#555\">", PL);
		esc(o, sub->str);
		g_string_append(o, "</text>\n");
		g_string_free(sub, TRUE);
	}

	for (int i = 0; i < nd; i++) {
		const struct space *sp = &p->sp[dirs[i]];
		struct geom g = {
			.x0 = PL, .w = PW, .h = ph,
			.y0 = TOP + 14 + i * (ph + PANEL_GAP),
		};
		double ylo = 0, yhi = 0, pad;
		bool any = false;

		for (int s = 0; s < S_COUNT; s++)
			for (guint k = 0; k < nmarks(sp, s); k++) {
				const struct mark *m = &g_array_index(sp->s[s], struct mark, k);
				double a = (double)m->y, b = s == S_GAP ? (double)(m->y + m->n) : a;

				if (!any || a < ylo)
					ylo = a;
				if (!any || b > yhi)
					yhi = b;
				any = true;
			}
		for (guint k = 0; sp->ack && k < sp->ack->len; k++) {
			double a = (double)g_array_index(sp->ack, struct mark, k).y;

			if (!any || a < ylo)
				ylo = a;
			if (!any || a > yhi)
				yhi = a;
			any = true;
		}
		pad = MAX(1.0, (yhi - ylo) * 0.05);
		g.ylo = ylo - pad;
		g.yhi = yhi + pad;
		g.tlo = (double)tmin - (double)span * 0.02;
		g.thi = (double)tmax + (double)span * 0.02;
		draw_panel(o, p, c, dirs[i], &g, i, &tot, unit, uname, i == nd - 1);
	}
	draw_legend(o, &tot, TOP + 14);
	g_string_append_printf(o, "<text x=\"%d\" y=\"%d\" font-size=\"10.5\" fill=\"#777\">qptrace plot: PSNs unwrapped across 0xFFFFFF\u21920; "
			       "series over %d marks are thinned (legend: drawn).</text>\n",
			       PL, height - 8, MAX_DRAWN);
	g_string_append(o, "</svg>\n");
	return o;
}

/* ---- the command -------------------------------------------------------- */

static uint64_t conv_rexmit(const struct qpt_conv *c)
{
	return c->dir[0].retransmitted_packets + c->dir[1].retransmitted_packets;
}

static uint64_t conv_trouble(const struct qpt_conv *c)
{
	uint64_t t = 0;

	for (int d = 0; d < 2; d++) {
		t += c->dir[d].psn_gaps + c->dir[d].rnr_naks + c->dir[d].duplicates +
		     c->dir[d].gbn_episodes + c->dir[d].cnps;
		for (int k = 0; k < 5; k++)
			t += c->dir[d].naks[k];
	}
	return t;
}

static gint by_rexmit(gconstpointer a, gconstpointer b)
{
	const struct qpt_conv *x = *(const struct qpt_conv *const *)a;
	const struct qpt_conv *y = *(const struct qpt_conv *const *)b;
	uint64_t rx = conv_rexmit(x), ry = conv_rexmit(y);
	uint64_t tx = conv_trouble(x), ty = conv_trouble(y);
	uint64_t px_ = x->dir[0].packets + x->dir[1].packets;
	uint64_t py_ = y->dir[0].packets + y->dir[1].packets;

	if (rx != ry)
		return rx < ry ? 1 : -1;
	if (tx != ty)
		return tx < ty ? 1 : -1;
	if (px_ != py_)
		return px_ < py_ ? 1 : -1;
	return x->id - y->id;
}

static gchar *out_name(const char *output, int32_t id)
{
	gchar *stem = g_str_has_suffix(output, ".svg") ?
			      g_strndup(output, strlen(output) - 4) : g_strdup(output);
	gchar *name = g_strdup_printf("%s-conv%d.svg", stem, id);

	g_free(stem);
	return name;
}

/* Copies standard input to a temporary file (the input is read twice). */
static gchar *spool_stdin(void)
{
	GError *err = NULL;
	gchar *path = NULL;
	int fd = g_file_open_tmp("qptrace-plot-XXXXXX.pcap", &path, &err);
	char buf[1 << 16];
	size_t n;
	FILE *out;

	if (fd < 0) {
		g_printerr("qptrace plot: cannot copy standard input: %s\n", err->message);
		g_error_free(err);
		return NULL;
	}
	out = fdopen(fd, "wb");
	while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			break;
	if (ferror(stdin) || ferror(out) || fclose(out) != 0) {
		g_printerr("qptrace plot: cannot copy standard input to %s: %s\n", path,
			   g_strerror(errno));
		unlink(path);
		g_free(path);
		return NULL;
	}
	return path;
}

static int write_out(const char *name, const GString *svg)
{
	FILE *f;

	if (!strcmp(name, "-")) {
		fwrite(svg->str, 1, svg->len, stdout);
		fflush(stdout);
		return ferror(stdout) ? 2 : 0;
	}
	f = fopen(name, "wb");
	if (!f || fwrite(svg->str, 1, svg->len, f) != svg->len || fclose(f) != 0) {
		g_printerr("qptrace plot: cannot write %s: %s\n", name, g_strerror(errno));
		return 2;
	}
	return 0;
}

int cmd_plot(struct opts *o)
{
	struct pass ps = { .o = o };
	struct qpt_flow_opts fo = { 0 };
	GPtrArray *convs, *plots = g_ptr_array_new();
	GHashTable *keys = NULL;
	gchar **files = g_strdupv(o->files);
	gchar *spooled = NULL;
	int status = 0, rc;
	GPtrArray *quiet;

	if (o->top < 0 || (o->top > 0 && o->conv >= 0)) {
		g_printerr("qptrace plot: %s\n", o->top < 0 ? "--top needs N >= 1" :
				   "give --conv ID or --top N, not both");
		status = 2;
		goto out;
	}
	if (o->top > 0 && (!o->output || !strcmp(o->output, "-"))) {
		g_printerr("qptrace plot: --top needs -o FILE.svg (writes FILE-conv<ID>.svg per conversation)\n");
		status = 2;
		goto out;
	}
	for (gchar **f = files; *f; f++) {
		if (strcmp(*f, "-"))
			continue;
		if (spooled) {
			g_printerr("qptrace plot: standard input given twice\n");
			status = 2;
			goto out;
		}
		spooled = spool_stdin();
		if (!spooled) {
			status = 2;
			goto out;
		}
		g_free(*f);
		*f = g_strdup(spooled);
	}
	ps.files = files;

	/* pass 1: which conversations, with which endpoints */
	ps.fl = qpt_flow_new(&fo);
	rc = read_pass(&ps, true, NULL);
	if (rc)
		status = rc;
	if (!ps.an.have_t0) {
		if (!rc)
			g_printerr("qptrace plot: %s: no frames\n", files[0]);
		status = 2;
		goto out;
	}
	convs = qpt_flow_conversations(ps.fl);
	if (!convs->len) {
		g_printerr("qptrace plot: no RoCE/InfiniBand conversation in %s%s\n", o->files[0],
			   o->files[1] ? " ..." : "");
		status = 2;
	} else if (o->conv >= 0 || (o->top <= 0 && convs->len == 1)) {
		const struct qpt_conv *c = NULL;
		int32_t want = o->conv >= 0 ? o->conv : ((struct qpt_conv *)convs->pdata[0])->id;

		for (guint i = 0; i < convs->len && !c; i++)
			if (((struct qpt_conv *)convs->pdata[i])->id == want)
				c = convs->pdata[i];
		if (!c) {
			const struct qpt_conv *l = convs->pdata[convs->len - 1];

			g_printerr("qptrace plot: no conversation %d in %s (%u conversations, ids %d..%d; see qptrace summary)\n",
				   want, o->files[0], convs->len,
				   ((struct qpt_conv *)convs->pdata[0])->id, l->id);
			status = 2;
		} else {
			g_ptr_array_add(plots, (gpointer)c);
		}
	} else if (o->top > 0) {
		g_ptr_array_sort(convs, by_rexmit);
		for (guint i = 0; i < convs->len && i < (guint)o->top; i++)
			g_ptr_array_add(plots, convs->pdata[i]);
	} else {
		g_printerr("qptrace plot: %u conversations in %s: choose one with --conv ID (see qptrace summary) or plot the worst with --top N\n",
			   convs->len, o->files[0]);
		status = 2;
	}
	keys = g_hash_table_new_full(hkey_hash, hkey_equal, g_free, g_free);
	for (guint i = 0; i < plots->len; i++) {
		const struct qpt_conv *c = plots->pdata[i];
		struct plot *p = g_new0(struct plot, 1);

		p->id = c->id;
		p->ep[0] = c->ep[0];
		p->ep[1] = c->ep[1];
		p->ud = !strcmp(c->transport, "UD");
		for (int d = 0; d < 2; d++)
			if (c->dir[d].psn_seen) { /* offsets from the first request PSN */
				p->sp[d].init = true;
				p->sp[d].base = p->sp[d].last_raw = c->dir[d].first_psn;
			}
		plots->pdata[i] = p;
		add_keys(keys, p);
	}
	g_ptr_array_free(convs, TRUE);
	qpt_flow_free(ps.fl);
	ps.fl = NULL;
	if (!plots->len)
		goto out;

	/* pass 2: the packets of those conversations (errors were reported) */
	ps.fl = qpt_flow_new(&fo);
	ps.keys = keys;
	ps.an.have_t0 = false;
	quiet = g_ptr_array_new_with_free_func((GDestroyNotify)g_error_free);
	read_pass(&ps, false, quiet); /* reported by the first pass */
	g_ptr_array_free(quiet, TRUE);
	convs = qpt_flow_conversations(ps.fl);
	for (guint i = 0; i < plots->len; i++) {
		struct plot *p = plots->pdata[i];
		const struct qpt_conv *c = NULL;
		GString *svg;
		gchar *name;

		for (guint k = 0; k < convs->len && !c; k++)
			if (((struct qpt_conv *)convs->pdata[k])->id == p->id)
				c = convs->pdata[k];
		if (!c || !p->seen) {
			g_printerr(c ? "qptrace plot: conversation %d has no packets to plot\n" :
				       "qptrace plot: conversation %d changed between the two reads of the input\n",
				   p->id);
			status = 2;
			continue;
		}
		svg = render(p, c, ps.an.t0, o->files);
		name = o->top > 0 ? out_name(o->output, p->id) :
				    g_strdup(o->output ? o->output : "-");
		rc = write_out(name, svg);
		if (rc)
			status = rc;
		else if (!o->quiet && strcmp(name, "-"))
			g_printerr("qptrace plot: conversation %d (%" PRIu64 " retransmitted) -> %s\n",
				   p->id, conv_rexmit(c), name);
		g_free(name);
		g_string_free(svg, TRUE);
	}
	g_ptr_array_free(convs, TRUE);
out:
	for (guint i = 0; i < plots->len && keys; i++)
		plot_free(plots->pdata[i]);
	g_ptr_array_free(plots, TRUE);
	if (keys)
		g_hash_table_destroy(keys);
	if (ps.fl)
		qpt_flow_free(ps.fl);
	if (spooled) {
		unlink(spooled);
		g_free(spooled);
	}
	g_strfreev(files);
	g_free(o->output);
	o->output = NULL;
	return status;
}
