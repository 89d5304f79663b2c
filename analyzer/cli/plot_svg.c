/* plot_svg.c - the SVG writer of `qptrace plot`
 *
 * One panel per direction that carries requests (PSN offset against time),
 * a legend, a title naming the conversation.  Every series is a
 * <g data-series="NAME" data-total="N" data-drawn="M"> whose children are
 * its marks, so tests can count them; past MAX_DRAWN marks in a series,
 * marks are thinned (first one per pixel, then evenly) and the legend says
 * how many were drawn.  A series longer than SERIES_RAW_MAX comes thinned
 * already (plot.c): the first and last marks of cells finer than a pixel;
 * its totals and the PSN range are those of every mark.  The series of verdicts are those of qpt_verdicts[]
 * with a plot name; this file says only how each is drawn.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "plot.h"
#include "qpt_findings.h"

/* ---- series ---------------------------------------------------------- */

enum shape { SH_TICK, SH_TICK_BOLD, SH_GAP, SH_RING, SH_TRI, SH_DIAMOND, SH_SQUARE };

/* How a series is drawn, and its legend words: what its marks are and
 * where they sit.  A verdict series with no row here is drawn with
 * style_other and its verdict's label. */
struct style {
	const char *legend, *color;
	enum shape shape;
};
static const struct style styles[S_COUNT] = {
	[S_REQ] = { "request packets", "#1f77b4", SH_TICK },
	[S_RESP] = { "READ responses, atomic ACKs", "#7f7f00", SH_TICK },
	[S_OF(DUPLICATE)] = { "capture duplicates", "#999999", SH_TICK },
	[S_OF(RETRANSMISSION)] = { "retransmissions", "#d62728", SH_TICK_BOLD },
	[S_OF(PSN_GAP)] = { "PSN gaps (missing PSNs)", "#ff7f0e", SH_GAP },
	[S_OF(ECN_CE)] = { "ECN-CE marked packets", "#8c564b", SH_RING },
	[S_OF(NAK)] = { "NAKs (at the NAK PSN)", "#9467bd", SH_TRI },
	[S_OF(RNR_NAK)] = { "RNR NAKs", "#e377c2", SH_DIAMOND },
	[S_OF(CNP)] = { "CNPs (at the QP's highest PSN)", "#17becf", SH_SQUARE },
};
static const struct style style_other = { NULL, "#555555", SH_RING };
#define ACK_COLOR "#2ca02c"

/* Drawing order, bottom to top (the ACKed PSN line goes under the
 * retransmissions); verdict series not listed come last. */
static const int draw_order[] = {
	S_REQ, S_RESP, S_OF(DUPLICATE), S_OF(RETRANSMISSION), S_OF(PSN_GAP),
	S_OF(ECN_CE), S_OF(NAK), S_OF(RNR_NAK), S_OF(CNP),
};

static const struct style *style_of(int s)
{
	return styles[s].color ? &styles[s] : &style_other;
}

/* data-series / data-legend name */
static const char *series_key(int s)
{
	return s == S_REQ ? "requests" : s == S_RESP ? "responses" :
	       qpt_verdicts[s - S_VERDICT0].plot;
}

static const char *series_legend(int s)
{
	return style_of(s)->legend ? style_of(s)->legend : qpt_verdicts[s - S_VERDICT0].label;
}

/* The series drawn, in drawing order: the plot's own two, then every
 * verdict kind with a plot name (but GBN_START: episodes are shaded). */
static int series_list(int out[S_COUNT])
{
	bool listed[S_COUNT] = { false };
	int n = 0;

	for (size_t i = 0; i < G_N_ELEMENTS(draw_order); i++) {
		int s = draw_order[i];

		listed[s] = true;
		if (s < S_VERDICT0 || qpt_verdicts[s - S_VERDICT0].plot)
			out[n++] = s;
	}
	for (int k = 0; k < QPT_VB_COUNT; k++)
		if (!listed[S_VERDICT0 + k] && k != QPT_VB_GBN_START && qpt_verdicts[k].plot)
			out[n++] = S_VERDICT0 + k;
	return n;
}

/* Go-back-N shading, one class per enum qpt_trigger (its name is the
 * rect's class).  fill: the shading, swatch: the legend's darker sample. */
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

static unsigned gbn_class(const struct qpt_episode *e)
{
	return e->trigger < GBN_CLASSES ? e->trigger : QPT_TRIGGER_RESEND;
}

static bool space_used(const struct space *sp)
{
	for (int s = 0; s < S_COUNT; s++)
		if (sp->s[s].total)
			return true;
	return sp->ack.total;
}

/* ---- SVG helpers ------------------------------------------------------- */


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
	switch (style_of(s)->shape) {
	case SH_TICK: return "fill=\"none\" stroke-width=\"1.2\"";
	case SH_TICK_BOLD: return "fill=\"none\" stroke-width=\"2.4\"";
	case SH_GAP: return "fill=\"#ffffff\" fill-opacity=\"0.6\" stroke-width=\"1.5\"";
	case SH_RING: return "fill=\"none\" stroke-width=\"1.5\"";
	default: return "stroke=\"#ffffff\" stroke-width=\"0.6\"";
	}
}

static bool series_filled(int s)
{
	enum shape sh = style_of(s)->shape;

	return sh == SH_TRI || sh == SH_DIAMOND || sh == SH_SQUARE;
}

static void mark_title(GString *o, int s, const struct mark *m, int64_t t_first)
{
	char when[32];

	g_string_append_printf(o, "<title>frame %" PRIu64 ", %s: ", m->frame,
			       qpt_format_duration(m->ns - t_first, when, sizeof(when)));
	switch (s) {
	case S_OF(PSN_GAP):
		g_string_append_printf(o, "%u PSN%s missing from PSN %u", m->n,
				       m->n == 1 ? "" : "s", m->psn);
		break;
	case S_OF(NAK):
		g_string_append_printf(o, "NAK %s, PSN %u", qpt_nak_name(m->code), m->psn);
		break;
	case S_OF(RNR_NAK):
		g_string_append_printf(o, "RNR NAK, PSN %u, timer %u (%s)", m->psn, m->code,
				       qpt_format_duration_us(qpt_rnr_timer_us(m->code), when,
							      sizeof(when)));
		break;
	case S_OF(CNP):
		g_string_append(o, "CNP");
		break;
	default:
		g_string_append_printf(o, "%s PSN %u", series_legend(s), m->psn);
		break;
	}
	g_string_append(o, "</title>");
}

/* Indexes of the marks to draw: all of them up to MAX_DRAWN, else the
 * first one (of those stored: plot.c thins a long series before storing
 * it) in each pixel cell, then evenly thinned, the first and the last of
 * them kept. */
static GArray *choose(const struct geom *g, const struct series *se, int64_t t_first)
{
	GArray *idx = g_array_new(FALSE, FALSE, sizeof(guint));
	GArray *marks = se->m;
	guint n = marks ? marks->len : 0;

	if (se->total <= MAX_DRAWN) { /* then stored whole */
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
			guint j = (guint)((uint64_t)k * (idx->len - 1) / (MAX_DRAWN - 1));

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
	const GArray *ack = sp->ack.m;

	g_string_append_printf(o, "<g data-series=\"acked\" data-total=\"%" PRIu64 "\" clip-path=\"url(#clip%d)\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\">",
			       sp->ack.total, pi, ACK_COLOR);
	if (ack && ack->len) {
		double lx = 0, ly = 0, pend = 0;
		bool pending = false;

		for (guint i = 0; i < ack->len; i++) {
			const struct mark *m = &g_array_index(ack, struct mark, i);
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
		tot->acks += sp->ack.total;
	}
	g_string_append(o, "</g>\n");

}

static void draw_panel(GString *o, const struct plot *p, const struct qpt_conv_stats *c,
		       int d, const struct geom *g, int pi, struct totals *tot,
		       double unit, const char *uname, bool last)
{
	const struct space *sp = &p->sp[d];
	const struct qpt_dir_stats *x = &c->dir[d];
	char from[QPT_ENDPOINT_QP_STRLEN], to[QPT_ENDPOINT_QP_STRLEN];
	double tick = CLAMP(g->h / (g->yhi - g->ylo) * 0.7, 6.0, 14.0);
	const char *gbn_key = qpt_verdicts[QPT_VB_GBN_START].plot;
	int series[S_COUNT], ns = series_list(series);
	bool acked = false;

	qpt_format_endpoint_qp(&c->ep[x->from], from);
	qpt_format_endpoint_qp(&c->ep[x->to], to);
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
	if (gbn_key) {
		g_string_append_printf(o, "<g data-series=\"%s\" data-total=\"%" PRIu64 "\" clip-path=\"url(#clip%d)\">",
				       gbn_key, x->gbn_episodes, pi);
		for (guint i = 0; x->episodes && i < x->episodes->len; i++) {
			const struct qpt_episode *e = &g_array_index(x->episodes, struct qpt_episode, i);
			unsigned k = gbn_class(e);
			char lost[32];
			double a = px(g, e->start_ns - p->first_ns);
			double b = px(g, (e->end_ns > e->start_ns ? e->end_ns : e->start_ns) - p->first_ns);

			if (b - a < 2)
				b = a + 2;
			g_string_append_printf(o,
					       "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" fill-opacity=\"%s\">"
					       "<title>go-back-N #%u %s %" PRIu64 ": %u packets resent from PSN %u, %s lost</title></rect>",
					       qpt_trigger_name(k), a, g->y0, b - a, g->h, gdef[k].color,
					       gdef[k].fill, i + 1, gdef[k].title, e->trigger_frame,
					       e->resent_packets, e->from_psn,
					       qpt_format_duration(e->end_ns - e->start_ns, lost,
								   sizeof(lost)));
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
	}
	for (int i = 0; i < ns; i++) {
		int s = series[i];
		const struct series *se = &sp->s[s];
		GArray *m = se->m;
		GArray *idx = choose(g, se, p->first_ns);
		bool titles = s != S_REQ && s != S_RESP && idx->len <= 5000;

		if (s == S_OF(RETRANSMISSION)) { /* above the ticks, under the marks */
			draw_acked(o, p, sp, g, pi, tot);
			acked = true;
		}

		g_string_append_printf(o,
				       "<g data-series=\"%s\" data-total=\"%" PRIu64 "\" data-drawn=\"%u\" clip-path=\"url(#clip%d)\" %s=\"%s\" %s>",
				       series_key(s), se->total, idx->len, pi,
				       series_filled(s) ? "fill" : "stroke", style_of(s)->color,
				       series_style(s));
		for (guint k = 0; k < idx->len; k++) {
			const struct mark *mk = &g_array_index(m, struct mark, g_array_index(idx, guint, k));
			double xx = px(g, mk->ns - p->first_ns);
			double yy = py(g, (double)mk->y - (s == S_OF(PSN_GAP) ? 0.5 : 0));

			shape_path(o, style_of(s)->shape, xx, yy,
				   s == S_OF(PSN_GAP) ? py(g, (double)mk->y + mk->n - 0.5) : yy, tick);

			if (titles) {
				g_string_append_c(o, '>');
				mark_title(o, s, mk, p->first_ns);
				g_string_append(o, style_of(s)->shape == SH_RING ? "</circle>" : "</path>");
			} else {
				g_string_append(o, "/>");
			}
			if ((k & 255) == 255)
				g_string_append_c(o, '\n');
		}
		g_string_append(o, "</g>\n");
		tot->total[s] += se->total;
		tot->drawn[s] += idx->len;
		g_array_free(idx, TRUE);
	}
	if (!acked)
		draw_acked(o, p, sp, g, pi, tot);
	g_string_append_printf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#555\"/>\n",
			       g->x0, g->y0, g->w, g->h);
	g_string_append(o, "</g>\n");
}

static void legend_swatch(GString *o, int s, double x, double y)
{
	g_string_append_printf(o, "<g %s=\"%s\" %s>", series_filled(s) ? "fill" : "stroke",
			       style_of(s)->color, series_style(s));
	shape_path(o, style_of(s)->shape, x + 10, y, y + 3, 9);
	g_string_append(o, style_of(s)->shape == SH_RING ? "/>" : "/>");
	g_string_append(o, "</g>");
}

static void draw_legend(GString *o, const struct totals *t, double y0)
{
	double y = y0 + 24;
	char a[32], b[32];
	int classes = 0;
	int series[S_COUNT], ns = series_list(series);
	const char *gbn_key = qpt_verdicts[QPT_VB_GBN_START].plot;

	for (int k = 0; k < GBN_CLASSES; k++)
		classes += t->episodes[k] != 0;
	g_string_append_printf(o, "<g id=\"legend\" class=\"legend\" font-size=\"12\" fill=\"#222\">\n");
	g_string_append_printf(o, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%d\" fill=\"#ffffff\" stroke=\"#bbbbbb\"/>\n",
			       LX - 8, y0, W - LX - 2, 22 * (ns + 1 + MAX(classes, 1)) + 30);
	g_string_append_printf(o, "<text x=\"%d\" y=\"%.1f\" font-weight=\"bold\">Legend</text>\n", LX, y0 + 16);
	y += 14;
	for (int i = 0; i < ns; i++, y += 22) {
		int s = series[i];

		g_string_append_printf(o, "<g class=\"legend-entry\" data-legend=\"%s\">", series_key(s));
		legend_swatch(o, s, LX, y);
		fmt_count(a, sizeof(a), t->total[s]);
		g_string_append_printf(o, "<text x=\"%d\" y=\"%.1f\"%s>%s (%s", LX + 26, y + 4,
				       t->total[s] ? "" : " fill=\"#9a9a9a\"", series_legend(s), a);
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
	for (int k = 0; k < GBN_CLASSES && gbn_key; k++) {
		if (!t->episodes[k] && (classes || k != QPT_TRIGGER_NAK))
			continue;
		y += 22;
		fmt_count(a, sizeof(a), t->episodes[k]);
		g_string_append_printf(o,
				       "<g class=\"legend-entry\" data-legend=\"%s\" data-trigger=\"%s\">"
				       "<rect x=\"%d\" y=\"%.1f\" width=\"20\" height=\"12\" fill=\"%s\" fill-opacity=\"%s\"/>"
				       "<text x=\"%d\" y=\"%.1f\"%s>%s (%s)</text></g>\n",
				       gbn_key, classes ? qpt_trigger_name((unsigned)k) : "none", LX, y - 6,
				       gdef[k].color, gdef[k].swatch, LX + 26, y + 4,
				       classes ? "" : " fill=\"#9a9a9a\"",
				       classes ? gdef[k].legend : "go-back-N episodes", a);
	}
	g_string_append(o, "</g>\n");
}

GString *plot_render(const struct plot *p, const struct qpt_conv_stats *c, int64_t t0,
		     gchar **files)
{
	GString *o = g_string_sized_new(1 << 16);
	int dirs[2], nd = 0;
	int64_t tmin = 0, tmax = 0, span;
	double unit, ph;
	const char *uname;
	int height;
	char e0[QPT_ENDPOINT_QP_STRLEN], e1[QPT_ENDPOINT_QP_STRLEN];
	struct totals tot = { 0 };
	int series[S_COUNT];
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
		const struct qpt_dir_stats *x = &c->dir[d];

		rexmit += x->retransmitted_packets;
		rnr += x->rnr_naks;
		cnps += x->cnps;
		gbn += x->gbn_episodes;
		for (int k = 0; k < QPT_NAK_KINDS; k++)
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
	height = MAX(height, TOP + 22 * (series_list(series) + 2 + GBN_CLASSES) + 40);

	qpt_format_endpoint_qp(&c->ep[0], e0);
	qpt_format_endpoint_qp(&c->ep[1], e1);
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
		char a[32], lost_s[32];

		fmt_count(a, sizeof(a), rexmit);
		g_string_append_printf(sub, "%s retransmitted, %" PRIu64 " NAK%s, %" PRIu64
				       " RNR NAK%s, %" PRIu64 " go-back-N (%s lost), %" PRIu64
				       " CNP%s; paired by %s",
				       a, naks, naks == 1 ? "" : "s", rnr, rnr == 1 ? "" : "s", gbn,
				       qpt_format_duration_us(lost_us, lost_s, sizeof(lost_s)), cnps, cnps == 1 ? "" : "s",
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
		/* every mark's, thinned or not (plot.c) */
		double ylo = sp->yany ? (double)sp->ylo : 0, yhi = sp->yany ? (double)sp->yhi : 0, pad;

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

