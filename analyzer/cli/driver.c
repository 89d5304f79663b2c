/* driver.c - the one analysis driver of the command line (see driver.h)
 *
 * The only file of the front end that makes, feeds, ends and frees the
 * flow engine (qpt_flow_new, qpt_flow_set_tap, qpt_flow_packet,
 * qpt_flow_end, qpt_flow_forget_halves, qpt_flow_free): summary, events,
 * packets, plot, grade, monitor and -j N's analysis threads come here.
 */
#include <string.h>

#include "driver.h"
#include "interrupt.h"
#include "shard.h"
#include "qpt_flow.h"
#include "qpt_pfc.h"

/* ---- the engine ------------------------------------------------------------ */

static void flow_opts_from(const struct opts *o, struct qpt_flow_opts *fo)
{
	memset(fo, 0, sizeof(*fo));
	fo->cnp_qos_set = true;
	fo->cnp_dscp = o->cnp_dscp;
	fo->cnp_pcp = o->cnp_pcp;
	fo->ecn_window_ns = o->ecn_window_ns;
	fo->max_halves = o->max_qps;
	fo->cold_every = o->cold_every;
}

struct qpt_flow *qpt_drive_new(const struct opts *o)
{
	struct qpt_flow_opts fo;
	struct qpt_flow *fl;

	flow_opts_from(o, &fo);
	fl = qpt_flow_new(&fo);
	qpt_pfc_set_link_speed(qpt_flow_pfc(fl), o->link_bps);
	return fl;
}

struct qpt_flow *qpt_drive_new_like(const struct qpt_flow *fl)
{
	return qpt_flow_new(qpt_flow_options(fl));
}

void qpt_drive_free(struct qpt_flow *fl)
{
	if (fl)
		qpt_flow_free(fl);
}

void qpt_drive_tap(struct qpt_flow *fl, unsigned tap)
{
	qpt_flow_set_tap(fl, tap);
}

void qpt_drive_packet(struct qpt_flow *fl, unsigned tap, uint64_t frame, int64_t ns,
		      const struct qpt_pkt *pkt, struct qpt_verdict *v)
{
	/* each file is a capture point of its own: merged captures of both
	 * hosts show every packet twice, copies, not resends */
	if (tap != QPT_DRIVE_NO_TAP)
		qpt_flow_set_tap(fl, tap);
	qpt_flow_packet(fl, frame, ns, pkt, v);
}

void qpt_drive_end(struct qpt_flow *fl, qpt_end_fn fn, void *data)
{
	qpt_flow_end(fl, fn, data);
}

void qpt_drive_forget(struct qpt_flow *fl)
{
	qpt_flow_forget_halves(fl);
}

void qpt_drive_previous_time(struct qpt_flow *fl, int64_t ns)
{
	qpt_flow_set_previous_time(fl, ns);
}

void qpt_drive_pfc(struct qpt_flow *fl, uint64_t frame, int64_t ns, const struct qpt_pkt *pkt,
		   const struct qpt_verdict *v)
{
	qpt_flow_pfc_feed(fl, frame, ns, pkt, v);
}

void qpt_drive_parts_end(struct qpt_flow *const *fls, unsigned n)
{
	int64_t end = INT64_MIN;

	for (unsigned k = 0; k < n; k++)
		end = MAX(end, qpt_flow_conv_end(fls[k]));
	for (unsigned k = 0; k < n; k++)
		qpt_flow_set_conv_end(fls[k], end);
}

void qpt_drive_absorb(struct qpt_flow *fl, struct qpt_flow *part, const int32_t *ids)
{
	qpt_flow_absorb(fl, part, ids);
	qpt_drive_free(part);
}

/* What each plain pcapng file's interface statistics say it dropped. */
static void capture_drops(struct qpt_flow *fl, gchar **files)
{
	for (gchar **fp = files; fp && *fp; fp++) {
		uint64_t ifd = 0, osd = 0;
		gchar *note = NULL;

		if (qpt_pcapng_drops(*fp, &ifd, &osd, &note))
			qpt_flow_add_capture_drops(fl, ifd, osd);
		if (note) /* an ISB of an interface that does not exist */
			g_printerr("qptrace: %s\n", note);
		g_free(note);
	}
}

/* ---- the end of the input --------------------------------------------------- */

static gint by_frame(gconstpointer a, gconstpointer b)
{
	return qpt_event_cmp(a, b);
}

struct end_events {
	GArray *all; /* struct qpt_event */
	GArray *ids; /* the engine's conversation ids -> global ones, or NULL */
};

static void end_collect(void *data, const struct qpt_verdict *v)
{
	struct end_events *e = data;

	for (unsigned i = 0; i < v->nevents; i++) {
		struct qpt_event ev = v->ev[i];

		if (e->ids && ev.conv >= 0)
			ev.conv = (guint)ev.conv < e->ids->len ?
					  g_array_index(e->ids, int32_t, ev.conv) : -1;
		g_array_append_val(e->all, ev);
	}
}

void qpt_end_deliver(struct qpt_flow *const *fls, unsigned n, GArray *const *ids,
		     struct qpt_analysis *an, qpt_frame_fn fn, void *user)
{
	static const struct qpt_pkt none;
	struct end_events e = { .all = g_array_new(FALSE, FALSE, sizeof(struct qpt_event)) };
	struct qpt_verdict v;

	for (unsigned k = 0; k < n; k++) {
		e.ids = ids ? ids[k] : NULL;
		qpt_flow_end(fls[k], end_collect, &e);
	}
	/* several engines' events in the order one engine gives them */
	g_array_sort(e.all, by_frame);
	for (guint i = 0; i < e.all->len; i += QPT_MAX_EVENTS) {
		struct qpt_frame last = { .in_window = true, .file = "" };

		if (!fn || !an->have_t0 || an->stop)
			break;
		memset(&v, 0, sizeof(v));
		v.frame = UINT64_MAX; /* no frame: every event is of an earlier one */
		v.conv = -1;
		v.dir = -1;
		v.ack_rtt_ns = -1;
		v.nevents = (uint8_t)MIN(e.all->len - i, (guint)QPT_MAX_EVENTS);
		memcpy(v.ev, &g_array_index(e.all, struct qpt_event, i),
		       v.nevents * sizeof(struct qpt_event));
		fn(user, &last, 0, &none, &v);
	}
	g_array_free(e.all, TRUE);
}

/* ---- the files, frame by frame ---------------------------------------------- */

bool qpt_parse_time(const char *s, int64_t *ns, bool *relative)
{
	char *end;
	GDateTime *dt;

	*relative = s[0] == '+';
	/* Seconds with up to nine decimals, read exactly (a double would lose
	 * the nanoseconds of an epoch time). */
	if (g_ascii_isdigit(s[*relative])) {
		guint64 sec = g_ascii_strtoull(s + *relative, &end, 10);
		int64_t frac = 0, scale = 100000000;

		if (*end == '.')
			for (end++; g_ascii_isdigit(*end); end++, scale /= 10)
				frac += scale ? (*end - '0') * scale : 0;
		if (*end == '\0' && sec < 9000000000ull) {
			*ns = (int64_t)sec * 1000000000 + frac;
			return true;
		}
	}
	if (*relative)
		return false;
	dt = g_date_time_new_from_iso8601(s, NULL);
	if (!dt) {
		GTimeZone *utc = g_time_zone_new_utc();

		dt = g_date_time_new_from_iso8601(s, utc);
		g_time_zone_unref(utc);
	}
	if (!dt)
		return false;
	if (!qpt_frame_ns(g_date_time_to_unix(dt),
			  (uint32_t)g_date_time_get_microsecond(dt) * 1000, ns)) {
		g_date_time_unref(dt); /* past 2262: no capture is stamped there */
		return false;
	}
	g_date_time_unref(dt);
	return true;
}

/* Input options from the command line; false after reporting a bad one. */
bool qpt_input_opts_from(const struct opts *o, struct qpt_input_opts *io)
{
	memset(io, 0, sizeof(*io));
	io->bpf = o->filter;
	io->progress = !o->quiet;
	if (o->from) {
		if (!qpt_parse_time(o->from, &io->from_ns, &io->from_rel)) {
			g_printerr("qptrace: bad --from time '%s': seconds since 1970, "
				   "+seconds from the first frame, or an ISO 8601 time "
				   "(1678 to 2262)\n", o->from);
			return false;
		}
		io->has_from = true;
	}
	if (o->to) {
		if (!qpt_parse_time(o->to, &io->to_ns, &io->to_rel)) {
			g_printerr("qptrace: bad --to time '%s': seconds since 1970, "
				   "+seconds from the first frame, or an ISO 8601 time "
				   "(1678 to 2262)\n", o->to);
			return false;
		}
		io->has_to = true;
	}
	return true;
}

const struct qpt_pkt *qpt_analysis_next(const struct opts *o, struct qpt_input *in,
					GPtrArray *errors, struct qpt_analysis *an,
					struct qpt_frame *f, int64_t *ns,
					struct qpt_pkt *pkt)
{
	while (!an->stop && qpt_input_next(in, f, errors) > 0) {
		*ns = f->ts_sec * 1000000000 + f->ts_nsec;
		an->frames_read++;
		if (!an->have_t0) {
			an->t0 = *ns;
			an->have_t0 = true;
		}
		if (!f->matched)
			continue;
		an->frames_matched++;
		if (f->pkt) /* decoded by the reading thread, or here */
			return f->pkt;
		qpt_decode(pkt, f->linktype, f->data, f->caplen, f->wirelen, &o->dec);
		return pkt;
	}
	return NULL;
}

bool qpt_analysis_counted(const struct opts *o, struct qpt_analysis *an)
{
	if (o->count <= 0 || an->own_count || an->frames_matched < (uint64_t)o->count)
		return false;
	an->count_reached = true;
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
	int64_t ns;
	struct qpt_verdict v;
	GPtrArray *errors;
	int status = 0;

	if (!qpt_input_opts_from(o, &io))
		return 2;
	errors = keep_errors ? keep_errors :
		 g_ptr_array_new_with_free_func((GDestroyNotify)g_error_free);
	io.progress = progress && !o->quiet;
	io.decode = an->need_data ? NULL : &o->dec;
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
	/* -j N: analysis threads, unless the frame function asks the engine
	 * about conversations while frames come (--conv, --qp, --addr), needs
	 * the frames' bytes (-w) or stops the reading itself (packets -c N:
	 * the threads read ahead of it, into a read error one thread never
	 * meets), or --max-qps bounds the QPs (a limit of one engine: the
	 * same QPs past it as -j 1) */
	if (o->jobs > 1 && !qpt_selecting(o) && !an->need_data &&
	    !(an->own_count && o->count > 0) && !o->max_qps) {
		qpt_shard_analyse(o, in, errors, (unsigned)o->jobs, fl, an, fn, user);
		goto analysed;
	}
	while ((p = qpt_analysis_next(o, in, errors, an, &f, &ns, &pkt))) {
		qpt_drive_packet(fl, f.file_index, f.number, ns, p, &v);
		if (fn)
			fn(user, &f, ns, p, &v);
		if (qpt_analysis_counted(o, an))
			break;
	}
	qpt_input_close(in);
	/* the end: the events still undecided (of earlier frames), by frame */
	qpt_end_deliver(&fl, 1, NULL, an, fn, user);
analysed:
	capture_drops(fl, files);
	if (qpt_interrupted)
		an->interrupted = true; /* what was read before Ctrl-C */
	if (keep_errors)
		return errors->len ? 2 : 0;
	status |= qpt_errors_print(errors);
	g_ptr_array_free(errors, TRUE);
	return status;
}
