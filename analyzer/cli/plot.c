/* plot.c - `qptrace plot`: time-sequence graph of a conversation (SVG)
 *
 *   qptrace plot --conv ID [-o FILE.svg] FILE...
 *   qptrace plot --top N -o FILE.svg FILE...   FILE-conv<ID>.svg for each of
 *                                              the N worst conversations
 *                                              (qpt_conv_cmp_worst)
 *
 * A Stevens / tcptrace-style graph: PSN (unwrapped across the 24-bit wrap,
 * relative to the direction's first request PSN) against time, one panel
 * per direction that carries requests.  Request packets are ticks;
 * retransmissions, capture duplicates, PSN gaps, ECN-CE marks, NAKs, RNR
 * NAKs and CNPs are distinct marks (one series per verdict kind with a
 * plot name in qpt_verdicts[]); the ACKed PSN (from the other direction's
 * ACKs) is a step line; go-back-N episodes are shaded from their trigger to
 * their end, in one colour per trigger (NAK, timeout, READ retry, resend
 * without a captured NAK).  The SVG (plot_svg.c) is self-contained (no
 * scripts, no external references).
 *
 * The input is read twice: the first pass runs the engine to find the
 * conversations (ids are final only at the end, when late pairings have
 * been folded), the second one takes the packets of the chosen
 * conversations by the engine's verdict (its conversation and direction),
 * the id mapped to the conversation it ends in.  Standard input is copied
 * to a temporary file first.  Memory: bounded by what is drawn, not by
 * the packets: each series stores its marks up to SERIES_RAW_MAX, then the
 * first and last mark of each cell of a grid finer than a pixel, whose
 * cells double as the range grows (plot.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "reader.h"
#include "options.h"
#include "commands.h"
#include "driver.h"
#include "outfile.h"
#include "compression.h"
#include "plot.h"
#include "qpt_rank.h"

/* ---- marks ------------------------------------------------------------- */

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

/* ---- thinning before storing (SERIES_RAW_MAX in plot.h) ----------------- */

/* A cell of a thinned series, and where its first and last marks are in
 * the series' array (the same slot while it has one). */
struct cell {
	int64_t tx, ty;
	guint first, last;
};

static guint cell_hash(gconstpointer k)
{
	const struct cell *c = k;
	uint64_t h = (uint64_t)c->tx * 0x9e3779b97f4a7c15ull ^ (uint64_t)c->ty * 0xc2b2ae3d27d4eb4full;

	return (guint)(h ^ h >> 32);
}

static gboolean cell_equal(gconstpointer a, gconstpointer b)
{
	const struct cell *x = a, *y = b;

	return x->tx == y->tx && x->ty == y->ty;
}

/* floor(v / 2^s), v of any sign */
static int64_t floor_shift(int64_t v, int s)
{
	return v >= 0 ? (int64_t)((uint64_t)v >> s) : -(int64_t)(((uint64_t)(-(v + 1))) >> s) - 1;
}

static int shift_for(int64_t range, int64_t cells)
{
	int s = 0;

	while (s < 62 && (range >> s) >= cells)
		s++;
	return s;
}

/* Keeps m in the cell it falls in: the first and the last mark of each. */
static void cell_put(struct series *se, GArray *to, GHashTable *cells, const struct mark *m)
{
	struct cell probe = {
		.tx = floor_shift(m->ns - se->t0, se->tshift),
		.ty = floor_shift(m->y - se->y0, se->yshift),
	};
	struct cell *c = g_hash_table_lookup(cells, &probe);

	if (!c) {
		c = g_new(struct cell, 1);
		*c = probe;
		c->first = c->last = to->len;
		g_array_append_val(to, *m);
		g_hash_table_add(cells, c);
	} else if (c->last == c->first) {
		c->last = to->len;
		g_array_append_val(to, *m);
	} else {
		g_array_index(to, struct mark, c->last) = *m;
	}
}

/* The marks kept so far, put again into the cells of the current size. */
static void cells_rebuild(struct series *se)
{
	GArray *old = se->m;

	if (se->cells)
		g_hash_table_destroy(se->cells);
	se->cells = g_hash_table_new_full(cell_hash, cell_equal, g_free, NULL);
	se->m = g_array_sized_new(FALSE, FALSE, sizeof(struct mark), MIN(old->len, SERIES_CELL_MAX) + 1);
	for (guint i = 0; i < old->len; i++)
		cell_put(se, se->m, se->cells, &g_array_index(old, struct mark, i));
	g_array_free(old, TRUE);
}

/* Doubles the cells of the axis with more of them (relative to
 * SERIES_TCELLS : SERIES_YCELLS) until at most 3/4 SERIES_CELL_MAX marks
 * are kept. */
static void cells_coarsen(struct series *se)
{
	while (se->m->len > SERIES_CELL_MAX / 4 * 3) {
		int64_t tc = floor_shift(se->tmax - se->t0, se->tshift) -
			     floor_shift(se->tmin - se->t0, se->tshift) + 1;
		int64_t yc = floor_shift(se->ymax - se->y0, se->yshift) -
			     floor_shift(se->ymin - se->y0, se->yshift) + 1;

		if (tc <= 1 && yc <= 1)
			break; /* cannot be: one cell keeps two marks */
		if ((double)tc / SERIES_TCELLS >= (double)yc / SERIES_YCELLS)
			se->tshift++;
		else
			se->yshift++;
		cells_rebuild(se);
	}
}

static void series_add(struct series *se, const struct mark *m)
{
	if (!se->m) {
		se->m = g_array_new(FALSE, FALSE, sizeof(struct mark));
		se->tmin = se->tmax = m->ns;
		se->ymin = se->ymax = m->y;
	}
	se->total++;
	se->tmin = MIN(se->tmin, m->ns);
	se->tmax = MAX(se->tmax, m->ns);
	se->ymin = MIN(se->ymin, m->y);
	se->ymax = MAX(se->ymax, m->y);
	if (!se->cells && se->m->len < SERIES_RAW_MAX) {
		g_array_append_val(se->m, *m);
		return;
	}
	if (!se->cells) { /* thinning starts: cells finer than a pixel */
		se->t0 = g_array_index(se->m, struct mark, 0).ns;
		se->y0 = g_array_index(se->m, struct mark, 0).y;
		se->tshift = shift_for(se->tmax - se->tmin, SERIES_TCELLS);
		se->yshift = shift_for(se->ymax - se->ymin, SERIES_YCELLS);
		cells_rebuild(se);
	}
	cell_put(se, se->m, se->cells, m);
	if (se->m->len > SERIES_CELL_MAX)
		cells_coarsen(se);
}

static void series_free(struct series *se)
{
	if (se->m)
		g_array_free(se->m, TRUE);
	if (se->cells)
		g_hash_table_destroy(se->cells);
}

static void yrange(struct space *sp, int64_t a, int64_t b)
{
	if (!sp->yany || a < sp->ylo)
		sp->ylo = a;
	if (!sp->yany || b > sp->yhi)
		sp->yhi = b;
	sp->yany = true;
}

static void add(struct space *sp, int s, int64_t ns, int64_t y, uint64_t frame,
		uint32_t psn, uint32_t n, uint32_t code)
{
	struct mark m = { .ns = ns, .y = y, .frame = frame, .psn = psn, .n = n,
			  .code = code };

	if (s >= S_VERDICT0 && !qpt_verdicts[s - S_VERDICT0].plot)
		return; /* the verdict has no series */
	yrange(sp, y, s == S_OF(PSN_GAP) ? y + n : y);
	series_add(&sp->s[s], &m);
}

static void ack_to(struct space *sp, int64_t ns, int64_t y, uint64_t frame)
{
	struct mark m = { .ns = ns, .y = y, .frame = frame };

	if (sp->ack_init && y <= sp->ack_max)
		return;
	sp->ack_init = true;
	sp->ack_max = y;
	yrange(sp, y, y);
	series_add(&sp->ack, &m);
}

static void plot_free(struct plot *p)
{
	for (int d = 0; d < 2; d++) {
		for (int s = 0; s < S_COUNT; s++)
			series_free(&p->sp[d].s[s]);
		series_free(&p->sp[d].ack);
	}
	g_free(p);
}

/* Verdicts whose marks record() places itself (NAKs at the NAK PSN, CNPs
 * at the QP's highest PSN, ...); go-back-N episodes are shaded from the
 * conversation's episodes.  Any other verdict with a plot series is a mark
 * on the packet. */
#define PLACED (QPT_V(RETRANSMISSION) | QPT_V(DUPLICATE) | QPT_V(PSN_GAP) | QPT_V(NAK) | \
		QPT_V(RNR_NAK) | QPT_V(CNP) | QPT_V(GBN_START))

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
		add(sp, S_OF(CNP), ns, y, frame, psn, 0, 0);
	} else if (oi->flags & QPT_O_RESP) {
		sp = &p->sp[1 - e];
		y = unwrap(sp, psn);
		if (v->flags & QPT_V(NAK)) {
			add(sp, S_OF(NAK), ns, y, frame, psn, 0, pkt->aeth.value);
			if (pkt->aeth.value == QPT_NAK_PSN_SEQ_ERR)
				ack_to(sp, ns, y - 1, frame); /* acknowledges PSN-1 */
		} else if (v->flags & QPT_V(RNR_NAK)) {
			add(sp, S_OF(RNR_NAK), ns, y, frame, psn, 0, pkt->aeth.value);
		} else {
			if (pkt->flags & QPT_H_AETH && pkt->aeth.kind == QPT_AETH_ACK)
				ack_to(sp, ns, y, frame);
			if (!(oi->flags & QPT_O_ACK))
				add(sp,
				    v->flags & QPT_V(DUPLICATE) ? S_OF(DUPLICATE) :
				    v->flags & QPT_V(RETRANSMISSION) ? S_OF(RETRANSMISSION) :
								       S_RESP,
				    ns, y, frame, psn, 0, 0);
		}
	} else {
		sp = &p->sp[e];
		y = unwrap(sp, psn);
		add(sp,
		    v->flags & QPT_V(DUPLICATE) ? S_OF(DUPLICATE) :
		    v->flags & QPT_V(RETRANSMISSION) ? S_OF(RETRANSMISSION) : S_REQ,
		    ns, y, frame, psn, 0, 0);
		if (!sp->has_top || y > sp->top) {
			sp->has_top = true;
			sp->top = y;
		}
		if (v->flags & QPT_V(PSN_GAP))
			add(sp, S_OF(PSN_GAP), ns, y + qpt_psn_diff(v->gap_first_psn, psn), frame,
			    v->gap_first_psn, v->gap_psns, 0);
	}
	/* the other verdicts of the packet: a mark on it */
	for (unsigned k = 0; k < QPT_VB_COUNT; k++)
		if (v->flags & (1u << k) && !(PLACED & (1u << k)))
			add(sp, S_VERDICT0 + (int)k, ns, y, frame, psn, 0, 0);
}


/* ---- reading ---------------------------------------------------------- */

/* The second pass takes a packet's conversation and direction from the
 * engine's verdict.  Its id is the one the conversation had at that
 * packet: final[] (the first pass's qpt_flow_conv_id) says which
 * conversation it ends in.  A conversation folded into another one later
 * moves there whole, into one direction (qpt_flow_pair.c, conv_fold); the
 * verdict of its first packet cannot say which, so that packet is given
 * once more to the first pass's engine, whose pairings are final: its
 * answer is the direction for every packet of the folded id. */
struct pass {
	struct opts *o;
	gchar **files;
	struct qpt_flow *fl;
	struct qpt_analysis an;
	int32_t nids; /* first pass: conversation ids handed out (highest + 1) */
	bool second;
	/* second pass, each [nids] */
	int32_t *final;	       /* id at a packet -> the conversation it ends in */
	struct plot **plot_of; /* a final id -> its plot, NULL when not plotted */
	int8_t *dir_of;	       /* a folded id: its direction there, -1 not known yet */
	struct qpt_flow *first; /* the first pass's engine, while a dir_of is unknown */
	guint unknown;		/* folded ids of plotted conversations, dir_of -1 */
};

static void folded_dir(struct pass *ps, int32_t id, const struct qpt_frame *f, int64_t ns,
		       const struct qpt_pkt *pkt, const struct qpt_verdict *v)
{
	struct qpt_verdict now;

	qpt_drive_packet(ps->first, QPT_DRIVE_NO_TAP, f->number, ns, pkt, &now);
	ps->dir_of[id] = now.dir >= 0 && qpt_flow_conv_id(ps->first, now.conv) == ps->final[id] ?
				 now.dir : v->dir;
	if (!--ps->unknown) {
		qpt_drive_free(ps->first);
		ps->first = NULL;
	}
}

static void pass_frame(void *user, const struct qpt_frame *f, int64_t ns,
		       const struct qpt_pkt *pkt, const struct qpt_verdict *v)
{
	struct pass *ps = user;
	struct plot *p;
	int32_t id = v->conv;

	if (id < 0)
		return;
	if (!ps->second) {
		ps->nids = MAX(ps->nids, id + 1);
		return;
	}
	if (v->dir < 0 || !(pkt->flags & QPT_HAS_BTH) || id >= ps->nids)
		return; /* CM messages: not packets of the conversation */
	p = ps->plot_of[ps->final[id]];
	if (!p)
		return;
	if (ps->final[id] != id && ps->dir_of[id] < 0)
		folded_dir(ps, id, f, ns, pkt, v);
	if (!f->in_window)
		return; /* analysed, not drawn: outside --from/--to */
	record(p, ps->final[id] == id ? v->dir : ps->dir_of[id], f->number, ns, pkt, v);
}

/* One reading of the files; the first pass reports their errors, a
 * second one (errors) keeps them quiet. */
static int read_pass(struct pass *ps, bool progress, GPtrArray *errors)
{
	int rc;

	ps->an.window_selects = true; /* the whole input analysed, the window drawn */
	rc = qpt_analyse_files(ps->o, ps->files, progress, ps->fl, &ps->an,
				   pass_frame, ps, errors);

	g_free(ps->an.label); /* the subtitle names the files as given */
	ps->an.label = NULL;
	return rc;
}

/* After the first pass: where each id ends, and which plot takes it. */
static void map_ids(struct pass *ps, GPtrArray *plots)
{
	for (guint i = 0; i < plots->len; i++)
		ps->nids = MAX(ps->nids, ((struct plot *)plots->pdata[i])->id + 1);
	ps->final = g_new(int32_t, ps->nids);
	ps->plot_of = g_new0(struct plot *, ps->nids);
	ps->dir_of = g_new(int8_t, ps->nids);
	for (guint i = 0; i < plots->len; i++) {
		struct plot *p = plots->pdata[i];

		ps->plot_of[p->id] = p;
	}
	for (int32_t id = 0; id < ps->nids; id++) {
		ps->final[id] = qpt_flow_conv_id(ps->fl, id);
		if (ps->final[id] < 0 || ps->final[id] >= ps->nids)
			ps->final[id] = id; /* cannot be: ids fold into smaller ones */
		ps->dir_of[id] = -1;
		if (ps->final[id] != id && ps->plot_of[ps->final[id]])
			ps->unknown++;
	}
}

/* ---- the command -------------------------------------------------------- */

static uint64_t conv_rexmit(const struct qpt_conv_stats *c)
{
	return c->dir[0].retransmitted_packets + c->dir[1].retransmitted_packets;
}

static gchar *out_name(const char *output, int32_t id)
{
	gchar *stem = g_str_has_suffix(output, ".svg") ?
			      g_strndup(output, strlen(output) - 4) : g_strdup(output);
	gchar *name = g_strdup_printf("%s-conv%d.svg", stem, id);

	g_free(stem);
	return name;
}

/* Standard input is read twice (the conversations first, then what they
 * draw): it is copied to a temporary file, but only once its first bytes
 * show a capture (pcap, pcapng, or gzip/zstd), and at most
 * QPTRACE_PLOT_STDIN_MAX bytes (default 4 GiB); the copy is removed at
 * the end and when a signal ends qptrace. */
static int spool_slot = -1; /* qpt_tmp_guard's (outfile.c) */

static void spool_remove(const char *path)
{
	unlink(path);
	qpt_tmp_unguard(spool_slot);
	spool_slot = -1;
}

static bool capture_magic(const uint8_t *m, size_t n)
{
	static const uint8_t magics[][4] = {
		{ 0xd4, 0xc3, 0xb2, 0xa1 }, { 0xa1, 0xb2, 0xc3, 0xd4 }, /* pcap */
		{ 0x4d, 0x3c, 0xb2, 0xa1 }, { 0xa1, 0xb2, 0x3c, 0x4d }, /* pcap ns */
		{ 0x0a, 0x0d, 0x0d, 0x0a },				 /* pcapng */
	};

	if (n < 4)
		return false;
	for (size_t i = 0; i < G_N_ELEMENTS(magics); i++)
		if (!memcmp(m, magics[i], 4))
			return true;
	return qpt_compression_of(m, n) != QPT_COMP_NONE;
}

static gchar *spool_stdin(void)
{
	GError *err = NULL;
	gchar *path = NULL;
	const char *max_s = g_getenv("QPTRACE_PLOT_STDIN_MAX");
	uint64_t max = max_s ? g_ascii_strtoull(max_s, NULL, 10) : (4ull << 30), total = 0;
	char buf[1 << 16];
	size_t n, head = 0;
	int fd;
	FILE *out;

	/* the header first: /dev/zero is not copied */
	while (head < 8 && (n = fread(buf + head, 1, 8 - head, stdin)) > 0)
		head += n;
	if (!capture_magic((const uint8_t *)buf, head)) {
		g_printerr("qptrace plot: standard input is not a capture (pcap, pcapng, "
			   "or one compressed with gzip or zstd)\n");
		return NULL;
	}
	fd = g_file_open_tmp("qptrace-plot-XXXXXX.pcap", &path, &err);
	if (fd < 0) {
		g_printerr("qptrace plot: cannot copy standard input: %s\n", err->message);
		g_error_free(err);
		return NULL;
	}
	spool_slot = qpt_tmp_guard(path);
	out = fdopen(fd, "wb");
	n = head;
	do {
		total += n;
		if (max && total > max) {
			g_printerr("qptrace plot: standard input is larger than %" G_GUINT64_FORMAT
				   " bytes (QPTRACE_PLOT_STDIN_MAX): save it to a file and plot "
				   "that\n", max);
			fclose(out);
			spool_remove(path);
			g_free(path);
			return NULL;
		}
		if (fwrite(buf, 1, n, out) != n)
			break;
	} while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0);
	if (ferror(stdin) || ferror(out) || fclose(out) != 0) {
		g_printerr("qptrace plot: cannot copy standard input to %s: %s\n", path,
			   g_strerror(errno));
		spool_remove(path);
		g_free(path);
		return NULL;
	}
	return path;
}

/* An SVG in place whole, or not at all (outfile.c). */
static int write_out(const char *name, const GString *svg)
{
	GError *e = NULL;

	if (!qpt_write_file(name, svg->str, svg->len, &e)) {
		g_printerr("qptrace plot: cannot write %s: %s\n",
			   strcmp(name, "-") ? name : "standard output", e->message);
		g_error_free(e);
		return 2;
	}
	return 0;
}

/* -o (or each --top file) is none of the captures read. */
static bool output_is_input(const struct opts *o, const char *name)
{
	struct qpt_inputs *in = qpt_inputs_new();
	bool same;

	qpt_inputs_add_all(in, o->files);
	same = qpt_output_names_input(in, "plot", "-o", name);
	qpt_inputs_free(in);
	return same;
}

/* Conversation id filled, the caller's (g_free); NULL when none. */
static struct qpt_conv_stats *conv_stats_new(struct qpt_flow *fl, int32_t id)
{
	struct qpt_conv_stats *s = g_new(struct qpt_conv_stats, 1);

	if (!qpt_flow_conv_stats(fl, id, s)) {
		g_free(s);
		return NULL;
	}
	return s;
}

int cmd_plot(struct opts *o)
{
	struct pass ps = { .o = o };
	GPtrArray *plots = g_ptr_array_new();
	GArray *cand = g_array_new(FALSE, FALSE, sizeof(int32_t)); /* --top */
	guint nconvs = 0;
	int32_t first_id = -1, last_id = -1;
	bool found = false;
	bool made = false; /* plots holds struct plot, not conversations */
	gchar **files = g_strdupv(o->files);
	gchar *spooled = NULL;
	int status = 0, rc;
	GPtrArray *quiet;

	if (o->timeline) { /* the capture per interval, not a conversation */
		GString *svg = g_string_new(NULL);

		if (o->top > 0 || o->conv >= 0) {
			g_printerr("qptrace plot: --timeline draws the whole capture: not with "
				   "--conv or --top\n");
			status = 2;
		} else if (output_is_input(o, o->output)) {
			status = 2;
		} else {
			status = qpt_timeline_svg(o, svg);
			if (!status)
				status = write_out(o->output ? o->output : "-", svg);
		}
		g_string_free(svg, TRUE);
		goto out;
	}
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
	if (o->top <= 0 && output_is_input(o, o->output)) {
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

	/* pass 1: which conversations, and where each id ends (map_ids) */
	ps.fl = qpt_drive_new(o);
	rc = read_pass(&ps, true, NULL);
	if (rc)
		status = rc;
	if (!ps.an.have_t0) {
		if (!rc)
			g_printerr("qptrace plot: %s: no frames\n", files[0]);
		status = 2;
		goto out;
	}
	/* the conversations read one at a time (qpt_conv_walk: none thawed,
	 * a million of them in the memory of one): how many, the first and
	 * last ids, whether the one asked for is there, and for --top N the
	 * candidates: every one with trouble and the first N without (the
	 * ranking puts those after all with trouble, by id); then only the
	 * candidates are read by id */
	{
		struct qpt_conv_walk w;
		const struct qpt_conv_stats *c;
		guint untroubled = 0;

		for (qpt_conv_walk_start(&w, ps.fl, NULL, NULL); (c = qpt_conv_walk_next(&w)); nconvs++) {
			if (!nconvs)
				first_id = c->id;
			last_id = c->id;
			found |= o->conv >= 0 && c->id == o->conv;
			if (o->top > 0 && (qpt_conv_trouble(c) || untroubled++ < (guint)o->top))
				g_array_append_val(cand, c->id);
		}
		qpt_conv_walk_end(&w);
	}
	if (!nconvs) {
		g_printerr("qptrace plot: no RoCE/InfiniBand conversation in %s%s\n", o->files[0],
			   o->files[1] ? " ..." : "");
		status = 2;
	} else if (o->conv >= 0 || (o->top <= 0 && nconvs == 1)) {
		if (o->conv >= 0 && !found) {
			g_printerr("qptrace plot: no conversation %d in %s (%u conversations, ids %d..%d; see qptrace summary)\n",
				   o->conv, o->files[0], nconvs, first_id, last_id);
			status = 2;
		} else {
			g_ptr_array_add(plots, conv_stats_new(ps.fl, o->conv >= 0 ? o->conv : first_id));
		}
	} else if (o->top > 0) {
		for (guint i = 0; i < cand->len; i++)
			g_ptr_array_add(plots, conv_stats_new(ps.fl, g_array_index(cand, int32_t, i)));
		g_ptr_array_sort(plots, qpt_conv_cmp_worst);
		for (guint i = (guint)o->top; i < plots->len; i++)
			g_free(plots->pdata[i]);
		if (plots->len > (guint)o->top)
			g_ptr_array_set_size(plots, (guint)o->top);
	} else {
		g_printerr("qptrace plot: %u conversations in %s: choose one with --conv ID (see qptrace summary) or plot the worst with --top N\n",
			   nconvs, o->files[0]);
		status = 2;
	}
	for (guint i = 0; i < plots->len; i++) {
		const struct qpt_conv_stats *c = plots->pdata[i];
		struct plot *p = g_new0(struct plot, 1);

		p->id = c->id;
		for (int d = 0; d < 2; d++)
			if (c->dir[d].psn_seen) { /* offsets from the first request PSN */
				p->sp[d].init = true;
				p->sp[d].base = p->sp[d].last_raw = c->dir[d].first_psn;
			}
		plots->pdata[i] = p;
		g_free((gpointer)c);
	}
	made = true;
	/* --top: the names are known now, before anything is written */
	for (guint i = 0; i < plots->len && o->top > 0; i++) {
		gchar *name = out_name(o->output, ((struct plot *)plots->pdata[i])->id);
		bool same = output_is_input(o, name);

		g_free(name);
		if (same) {
			status = 2;
			goto out;
		}
	}
	map_ids(&ps, plots);
	if (ps.unknown)
		ps.first = ps.fl; /* kept to place the packets of folded ids */
	else
		qpt_drive_free(ps.fl);
	ps.fl = NULL;
	if (!plots->len)
		goto out;

	/* pass 2: the packets of those conversations (errors were reported) */
	ps.fl = qpt_drive_new(o);
	ps.second = true;
	/* the same frames again: -c N counts from the start */
	ps.an.have_t0 = false;
	ps.an.frames_read = ps.an.frames_matched = 0;
	ps.an.count_reached = false;
	quiet = g_ptr_array_new_with_free_func((GDestroyNotify)g_error_free);
	read_pass(&ps, false, quiet); /* reported by the first pass */
	g_ptr_array_free(quiet, TRUE);
	for (guint i = 0; i < plots->len; i++) {
		struct plot *p = plots->pdata[i];
		/* read by id (the others are not thawed); one folded into
		 * another since the first read is not that conversation */
		struct qpt_conv_stats cs;
		const struct qpt_conv_stats *c = qpt_flow_conv_stats(ps.fl, p->id, &cs);
		GString *svg;
		gchar *name;

		if (c && c->id != p->id)
			c = NULL;
		if (!c || !p->seen) {
			g_printerr(c ? "qptrace plot: conversation %d has no packets to plot\n" :
				       "qptrace plot: conversation %d changed between the two reads of the input\n",
				   p->id);
			status = 2;
			continue;
		}
		svg = plot_render(p, c, ps.an.t0, o->files);
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
out:
	for (guint i = 0; i < plots->len && made; i++)
		plot_free(plots->pdata[i]);
	g_ptr_array_free(plots, TRUE);
	g_array_free(cand, TRUE);
	qpt_drive_free(ps.fl);
	qpt_drive_free(ps.first);
	g_free(ps.final);
	g_free(ps.plot_of);
	g_free(ps.dir_of);
	if (spooled) {
		spool_remove(spooled);
		g_free(spooled);
	}
	g_strfreev(files);
	return status;
}

