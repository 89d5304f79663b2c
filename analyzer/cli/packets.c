/* packets.c - `qptrace packets`: one line (or JSON object) per RoCE/IB frame
 *
 * Each file is analysed on its own (frame numbers are those of the file),
 * through qpt_analyse_files(), so that every line carries what the
 * analysis says about the frame: the Info column tags Wireshark shows
 * ([Retransmission], [Go-back-N], ...), and in JSON the conversation and
 * the verdict kinds, to join with `events`.  -w writes the frames shown
 * (selected by --conv/--qp/--addr/--from/--to/-f) as a pcap.
 */
#include <errno.h>
#include <pcap/pcap.h>
#include <stddef.h>
#include <string.h>

#include "reader.h"
#include "options.h"
#include "commands.h"
#include "driver.h"
#include "output.h"
#include "outfile.h"
#include "qpt_flow.h"
#include "qpt_verdict.h"

struct counts {
	uint64_t frames, iba, malformed, bad_icrc, other, fragmented;
	uint64_t macc; /* MAC control (PAUSE, PFC) frames shown */
};

/* A frame shown but not printed yet: the engine may still revise its
 * verdict (a PSN gap filler is judged by the request after it, an RNR
 * retry by a READ re-issue later), and the line carries it.  PENDING
 * frames are held, then printed oldest first; a revision of a frame
 * printed already gets a line of its own ("# frame N ...") and is
 * counted on standard error: none is lost. */
#define PENDING 256
struct pend {
	struct qpt_frame f; /* data: NULL, or the copy in data */
	struct qpt_pkt pkt;
	struct qpt_verdict v;
	uint8_t *data; /* -w: the frame's bytes */
};

struct pk {
	struct opts *o;
	enum qpt_print_mode mode;
	GString *out;
	struct qpt_flow *fl;
	struct qpt_analysis *an;
	struct counts c;
	double t0;
	bool write_failed;
	char addr_text[QPT_ADDR_STRLEN];
	uint64_t shown; /* frames printed (or written), for -c */
	/* -w */
	pcap_t *dead;
	struct qpt_outfile *dump_file; /* the file the dumper writes (outfile.c) */
	pcap_dumper_t *dump;
	uint32_t dump_linktype;
	bool dump_failed;
	struct pend *pend; /* PENDING of them: a ring, oldest at pend_first */
	unsigned pend_first, pend_n;
	/* with --conv/--qp/--addr or --from/--to, the frames of this file
	 * shown, one bit each (by frame number; without them every frame an
	 * event names was shown); the revisions that came after their frame's
	 * line was printed */
	GArray *shown_bits; /* of uint8_t, cleared when grown */
	uint64_t late, late_first, late_at;
	/* --conv/--qp/--addr on a file: the conversation ids whose
	 * conversation the selection shows as the whole file ends them
	 * (gboolean by id: a first reading), NULL when not known */
	GArray *selected;
};

/* -w FILE: the frame as it was read, into a pcap of its link type.  The
 * file is made at the first frame (none selected: none made), written
 * through outfile.c (a temporary file renamed at the end). */
static void dump_frame(struct pk *k, const struct qpt_frame *f)
{
	struct pcap_pkthdr h;

	if (k->dump_failed || !f->data)
		return;
	if (!k->dump) {
		GError *e = NULL;

		k->dead = pcap_open_dead_with_tstamp_precision((int)f->linktype, 262144,
							       PCAP_TSTAMP_PRECISION_NANO);
		k->dump_file = k->dead ? qpt_outfile_open(k->o->write_file, &e) : NULL;
		k->dump = k->dump_file ? pcap_dump_fopen(k->dead, qpt_outfile_stream(k->dump_file)) :
					 NULL;
		if (!k->dump) {
			g_printerr("qptrace packets: cannot write %s: %s\n", k->o->write_file,
				   e ? e->message : k->dead ? pcap_geterr(k->dead) : "out of memory");
			if (e)
				g_error_free(e);
			qpt_outfile_abort(k->dump_file);
			k->dump_file = NULL;
			k->dump_failed = true;
			k->an->stop = true;
			return;
		}
		k->dump_linktype = f->linktype;
	}
	if (f->linktype != k->dump_linktype) {
		g_printerr("qptrace packets: cannot write frame %" G_GUINT64_FORMAT " of %s "
			   "(link type %u) into %s, a pcap of link type %u: write each file "
			   "to a pcap of its own\n", f->number, f->file, f->linktype,
			   k->o->write_file, k->dump_linktype);
		k->dump_failed = true;
		k->an->stop = true;
		return;
	}
	memset(&h, 0, sizeof(h));
	h.ts.tv_sec = (time_t)f->ts_sec;
	h.ts.tv_usec = (suseconds_t)f->ts_nsec; /* nanoseconds: opened NANO */
	h.caplen = f->caplen;
	h.len = f->wirelen;
	pcap_dump((u_char *)k->dump, &h, f->data);
	if (qpt_outfile_failed(k->dump_file))
		k->an->stop = true; /* a full disk: the commit says so */
}

/* The -w file in place when every frame went in, else none (a frame of
 * another link type, a full disk).  The dumper is its stream (libpcap's
 * pcap_dumper_t is the FILE, pcap_dump_close() only closes it): the
 * outfile closes it instead of pcap_dump_close(). */
static bool dump_close(struct pk *k)
{
	bool ok = !k->dump_failed;

	if (k->dump) {
		GError *e = NULL;

		if (!ok) {
			qpt_outfile_abort(k->dump_file);
			g_printerr("qptrace packets: %s not written\n", k->o->write_file);
		} else if (!qpt_outfile_commit(k->dump_file, &e)) {
			g_printerr("qptrace packets: cannot write %s: %s\n", k->o->write_file,
				   e->message);
			g_error_free(e);
			ok = false;
		}
		k->dump_file = NULL;
		k->dump = NULL;
	}
	if (k->dead)
		pcap_close(k->dead);
	k->dead = NULL;
	return ok;
}

/* Prints (or writes) the oldest held frame. */
static void pend_flush_one(struct pk *k)
{
	struct pend *e = &k->pend[k->pend_first];

	if (k->o->write_file) {
		e->f.data = e->data;
		dump_frame(k, &e->f);
	} else {
		qpt_print_pkt_v(k->out, &e->f, &e->pkt, k->mode, k->t0, &e->v);
	}
	g_free(e->data);
	e->data = NULL;
	k->pend_first = (k->pend_first + 1) % PENDING;
	k->pend_n--;
	if (k->out->len > (1 << 16) - 4096 && qpt_write_out(k->out, "standard output")) {
		k->write_failed = true; /* nobody reads what follows */
		k->an->stop = true;
	}
}

static void pend_flush(struct pk *k)
{
	while (k->pend_n && !k->write_failed && !k->dump_failed)
		pend_flush_one(k);
	while (k->pend_n) { /* after a failed write: dropped */
		g_free(k->pend[k->pend_first].data);
		k->pend[k->pend_first].data = NULL;
		k->pend_first = (k->pend_first + 1) % PENDING;
		k->pend_n--;
	}
}

static void shown_set(struct pk *k, uint64_t frame)
{
	uint64_t byte = frame / 8;

	if (!k->shown_bits)
		return;
	if (byte >= k->shown_bits->len)
		g_array_set_size(k->shown_bits, (guint)MAX(byte + 1, 2 * (uint64_t)k->shown_bits->len));
	g_array_index(k->shown_bits, uint8_t, byte) |= (uint8_t)(1u << (frame % 8));
}

static bool shown_get(const struct pk *k, uint64_t frame)
{
	if (!k->shown_bits)
		return true;
	return frame / 8 < k->shown_bits->len &&
	       g_array_index(k->shown_bits, uint8_t, frame / 8) & (1u << (frame % 8));
}

/* A revision of a frame printed already without it (v: its events): a
 * line of its own after the lines printed so far, before those of the
 * frames still held (all later), and counted. */
static void late_revision(struct pk *k, const struct qpt_verdict *v, uint64_t at)
{
	if (!k->late++) {
		k->late_first = v->frame;
		k->late_at = at;
	}
	if (!k->o->write_file)
		qpt_print_revision(k->out, k->mode, at, v);
}

/* Events of earlier frames: onto those frames, if still held; else, if
 * the frame was shown, a line of its own (late_revision). */
static void pend_revise(struct pk *k, const struct qpt_verdict *v)
{
	struct qpt_verdict late; /* (what qpt_print_revision reads) */

	late.nevents = 0;

	for (unsigned i = 0; i < v->nevents; i++) {
		const struct qpt_event *ev = &v->ev[i];
		bool held = false;

		if (ev->frame == v->frame && v->frame)
			continue;
		for (unsigned j = k->pend_n; j-- > 0;) {
			struct pend *e = &k->pend[(k->pend_first + j) % PENDING];

			if (e->f.number == ev->frame) {
				e->v.flags |= 1u << ev->kind;
				/* its links too (-v names the trigger frame) */
				if (e->v.nevents < QPT_MAX_EVENTS)
					e->v.ev[e->v.nevents++] = *ev;
				held = true;
				break;
			}
		}
		if (held || !shown_get(k, ev->frame))
			continue;
		if (late.nevents && ev->frame != late.frame) {
			late_revision(k, &late, v->frame);
			late.nevents = 0;
		}
		if (!late.nevents) {
			late.frame = ev->frame;
			late.conv = ev->conv >= 0 ? qpt_flow_conv_id(k->fl, ev->conv) : -1;
			late.dir = ev->dir;
			late.flags = 0;
		}
		late.flags |= 1u << ev->kind;
		late.ev[late.nevents++] = *ev;
	}
	if (late.nevents)
		late_revision(k, &late, v->frame);
}

static void on_frame(void *user, const struct qpt_frame *f, int64_t ns,
		     const struct qpt_pkt *pkt, const struct qpt_verdict *v)
{
	struct pk *k = user;
	struct pend *e;

	(void)ns;
	pend_revise(k, v);
	if (!f->number)
		return; /* the end: events of earlier frames only */
	if (k->t0 < 0) /* as before the analysis: the first frame's, in seconds */
		k->t0 = (double)(k->an->t0 / 1000000000) +
			(double)(k->an->t0 % 1000000000) / 1e9;
	if (!f->in_window)
		return;
	/* MAC control frames (PAUSE, PFC) are shown unless conversations are
	 * selected (they belong to none); other frames never */
	if (pkt->transport == QPT_TR_NONE &&
	    (!(pkt->flags & QPT_HAS_MACC) || qpt_selecting(k->o))) {
		k->c.other++;
		k->c.fragmented += pkt->ip_fragment == QPT_FRAG_ROCE_FIRST;
		return;
	}
	if (pkt->transport == QPT_TR_NONE) { /* MAC control: of no conversation */
		k->c.other++;
		k->c.macc++;
	} else if (k->selected) {
		if (v->conv < 0 || (guint)v->conv >= k->selected->len ||
		    !g_array_index(k->selected, gboolean, v->conv))
			return;
	} else if (qpt_selecting(k->o)) {
		/* standard input, read once: the conversation as known now */
		struct qpt_conv_ident ci;
		const struct qpt_conv_ident *c =
			v->conv >= 0 ? qpt_flow_conv_ident(k->fl, v->conv, &ci) : NULL;

		if (!qpt_conv_matches(k->o, k->addr_text, c))
			return;
	}
	if (pkt->transport != QPT_TR_NONE)
		k->c.iba++;
	if (pkt->transport != QPT_TR_NONE && pkt->error != QPT_E_OK)
		k->c.malformed++;
	if (pkt->icrc_checked && !pkt->icrc_ok)
		k->c.bad_icrc++;
	if (k->pend_n == PENDING)
		pend_flush_one(k);
	e = &k->pend[(k->pend_first + k->pend_n++) % PENDING];
	e->f = *f;
	e->f.data = NULL;
	e->f.pkt = NULL;
	e->pkt = *pkt;
	/* the verdict without the events it does not use (a copy of 616
	 * bytes a frame otherwise) */
	memcpy(&e->v, v, offsetof(struct qpt_verdict, ev));
	memcpy(e->v.ev, v->ev, v->nevents * sizeof(*v->ev));
	memcpy(&e->v.original_frame, &v->original_frame,
	       sizeof(*v) - offsetof(struct qpt_verdict, original_frame));
	/* the conversation's id as it is now (a later pairing may fold it) */
	if (v->conv >= 0)
		e->v.conv = qpt_flow_conv_id(k->fl, v->conv);
	/* only this frame's own verdicts; later ones come by pend_revise */
	e->v.flags = 0;
	for (unsigned i = 0; i < v->nevents; i++)
		if (v->ev[i].frame == f->number)
			e->v.flags |= 1u << v->ev[i].kind;
	e->v.flags |= v->flags;
	e->data = k->o->write_file && f->data ? g_memdup2(f->data, f->caplen) : NULL;
	shown_set(k, f->number);
	k->shown++;
	if (k->o->count > 0 && k->shown >= (uint64_t)k->o->count)
		k->an->stop = true; /* -c N: N frames shown */
}

static bool shown_conv(const struct qpt_conv_ident *c, void *data)
{
	const struct pk *k = data;

	return qpt_conv_matches(k->o, k->addr_text, c);
}

/* --conv/--qp/--addr on a file: a first reading of it, whose engine ends
 * with every pairing made, says which conversation ids the selection
 * shows (an id handed out before two halves were paired was folded into
 * the other one's since; a QPN only the other direction names is known
 * once it was paired).  The second reading, the same frames through the
 * same engine, hands out the same ids: its frames are shown by theirs.
 * NULL when the file cannot be read (the second reading says why). */
static GArray *selected_ids(struct pk *k, gchar **one)
{
	struct qpt_analysis an = { .window_selects = true, .own_count = true };
	GPtrArray *quiet = g_ptr_array_new_with_free_func((GDestroyNotify)g_error_free);
	struct qpt_flow *fl;
	struct qpt_conv_walk w;
	const struct qpt_conv_stats *c;
	GArray *final, *sel = NULL;

	fl = qpt_drive_new(k->o);
	qpt_analyse_files(k->o, one, true, fl, &an, NULL, NULL, quiet);
	if (an.opened) {
		int32_t n = qpt_flow_conv_count(fl);

		final = g_array_new(FALSE, TRUE, sizeof(gboolean));
		g_array_set_size(final, (guint)n);
		/* read one at a time, none thawed */
		for (qpt_conv_walk_start(&w, fl, shown_conv, k); (c = qpt_conv_walk_next(&w));)
			g_array_index(final, gboolean, c->id) = TRUE;
		qpt_conv_walk_end(&w);
		sel = g_array_new(FALSE, TRUE, sizeof(gboolean));
		g_array_set_size(sel, (guint)n);
		for (int32_t id = 0; id < n; id++) {
			int32_t now = qpt_flow_conv_id(fl, id);

			g_array_index(sel, gboolean, id) =
				now >= 0 && now < n && g_array_index(final, gboolean, now);
		}
		g_array_free(final, TRUE);
	}
	g_free(an.label);
	g_ptr_array_free(quiet, TRUE);
	qpt_drive_free(fl);
	return sel;
}

int cmd_packets(struct opts *o)
{
	struct pk k = { .o = o, .out = g_string_sized_new(1 << 16) };
	GString *written; /* -w: "F: N frames written to OUT" of each file */
	int status = 0;

	k.pend = g_new0(struct pend, PENDING);
	k.mode = o->json ? QPT_PRINT_JSON : o->verbose ? QPT_PRINT_VERBOSE : QPT_PRINT_LINE;
	if (!qpt_selection_init(o, k.addr_text)) {
		g_free(k.pend);
		return 2;
	}
	if (o->write_file) { /* -w IN.pcap IN.pcap would read an empty file */
		struct qpt_inputs *in = qpt_inputs_new();
		bool same;

		qpt_inputs_add_all(in, o->files);
		same = qpt_output_names_input(in, "packets", "-w", o->write_file);
		qpt_inputs_free(in);
		if (same) {
			g_free(k.pend);
			g_string_free(k.out, TRUE);
			return 2;
		}
	}
	written = g_string_new("");
	if (qpt_selecting(o) || o->from || o->to)
		k.shown_bits = g_array_new(FALSE, TRUE, 1);
	/* Each file on its own: frame numbers are those of the file. */
	for (gchar **file = o->files; *file && !k.write_failed && !k.dump_failed &&
				     !(k.dump_file && qpt_outfile_failed(k.dump_file)); file++) {
		gchar *one[2] = { *file, NULL };
		struct qpt_analysis an = { .window_selects = true,
					   .need_data = o->write_file != NULL,
					   .own_count = true };
		int rc;

		memset(&k.c, 0, sizeof(k.c));
		k.t0 = -1;
		if (k.shown_bits)
			g_array_set_size(k.shown_bits, 0);
		k.late = 0;
		k.an = &an;
		k.fl = qpt_drive_new(o);
		/* a file read twice for --conv/--qp/--addr; standard input is
		 * read once, as it comes */
		k.selected = qpt_selecting(o) && strcmp(*file, "-") ? selected_ids(&k, one) : NULL;
		/* the output itself shows progress */
		rc = qpt_analyse_files(o, one, false, k.fl, &an, on_frame, &k, NULL);
		status |= rc;
		pend_flush(&k); /* the frames still held */
		if (!k.write_failed && qpt_write_out(k.out, "standard output"))
			k.write_failed = true;
		if (k.late && !o->write_file)
			g_printerr("%s: %" G_GUINT64_FORMAT " %s decided after its frame "
				   "was printed (the first: frame %" G_GUINT64_FORMAT ", at %s%" G_GUINT64_FORMAT
				   "; %d frames are held)%s; `qptrace events` lists every verdict\n",
				   *file, k.late, k.late == 1 ? "verdict was" : "verdicts were", k.late_first,
				   k.late_at == UINT64_MAX ? "the end" : "frame ",
				   k.late_at == UINT64_MAX ? 0 : k.late_at, PENDING,
				   o->json ? "" : ": the lines '# frame N, decided ...' give them");
		k.c.frames = an.frames_read;
		if (an.opened && !o->quiet && (!o->json || o->write_file))
			g_printerr("%s: %" G_GUINT64_FORMAT " frames, %" G_GUINT64_FORMAT
				   " RoCE/IB (%" G_GUINT64_FORMAT " malformed, %" G_GUINT64_FORMAT
				   " bad ICRC), %" G_GUINT64_FORMAT " other%s%s\n",
				   *file, k.c.frames, k.c.iba, k.c.malformed, k.c.bad_icrc,
				   k.c.other, k.c.fragmented ? " (with IP fragments of RoCEv2 packets, not reassembled)" : "",
				   an.interrupted ? " (cut short by Ctrl-C)" : "");
		if (an.opened && o->write_file && !o->quiet && !k.dump_failed)
			g_string_append_printf(written, "%s: %" G_GUINT64_FORMAT " frames written to %s\n",
					       *file, k.c.iba + k.c.macc, o->write_file);
		qpt_drive_free(k.fl);
		if (k.selected)
			g_array_free(k.selected, TRUE);
		k.selected = NULL;
		g_free(an.label);
		if (an.interrupted) {
			if (!status)
				status = 130; /* the output is partial */
			break;
		}
		if (o->count > 0 && k.shown >= (uint64_t)o->count)
			break;
	}
	/* said once the file is in place */
	if (o->write_file && !dump_close(&k))
		status = 2;
	else
		g_printerr("%s", written->str);
	g_string_free(written, TRUE);
	if (o->write_file && !k.dump_failed && !k.dump && !k.dead && k.shown == 0 && !o->quiet)
		g_printerr("qptrace packets: no frame selected, %s not written\n", o->write_file);
	g_string_free(k.out, TRUE);
	g_free(k.pend);
	if (k.shown_bits)
		g_array_free(k.shown_bits, TRUE);
	return k.write_failed || k.dump_failed ? 2 : status;
}
