/* driver.h - the one analysis driver of the command line (driver.c) */
#ifndef QPT_DRIVER_H
#define QPT_DRIVER_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "options.h"
#include "reader.h"
#include "qpt_verdict.h"

struct qpt_flow;

/* Every command (summary, events, packets, plot, grade, monitor, -j N's
 * analysis threads) makes, feeds and ends the flow engine through here:
 * driver.c is the only file of the front end that calls qpt_flow_new,
 * qpt_flow_set_tap, qpt_flow_packet, qpt_flow_end, qpt_flow_forget_halves,
 * qpt_flow_free and the -j N calls (tests/boundaries.py checks it).  Summary, events, packets and plot read through
 * qpt_analyse_files() (frames, drops, the end, all here); grade's records
 * and the monitor read frames themselves (one capture, a live interface)
 * and give them to qpt_drive_packet(), then end with qpt_drive_end(). */

/* The engine of the command line's options: its qpt_flow_opts (--max-qps,
 * --cnp-dscp, --cnp-priority, --ecn-window, QPTRACE_COLD_EVERY) and the
 * link speed (--link-speed).  Freed by qpt_drive_free() (NULL: nothing). */
struct qpt_flow *qpt_drive_new(const struct opts *o);
/* Another engine with fl's options (-j N: one per analysis thread). */
struct qpt_flow *qpt_drive_new_like(const struct qpt_flow *fl);
void qpt_drive_free(struct qpt_flow *fl);
/* One frame: its capture point tap (the file it came from; or
 * QPT_DRIVE_NO_TAP: an engine of one source, grade's or the monitor's),
 * then the engine's verdict on pkt into *v. */
#define QPT_DRIVE_NO_TAP (~0u)
void qpt_drive_packet(struct qpt_flow *fl, unsigned tap, uint64_t frame, int64_t ns,
		      const struct qpt_pkt *pkt, struct qpt_verdict *v);
/* A capture point seen (-j N: the highest so far, as one engine saw them). */
void qpt_drive_tap(struct qpt_flow *fl, unsigned tap);
/* The end of the input, the one end-of-input call of the engine: every
 * event still undecided given to fn, then the results final. */
void qpt_drive_end(struct qpt_flow *fl, void (*fn)(void *data, const struct qpt_verdict *v),
		   void *data);
/* After the end, when no frame follows: the engine's halves freed before
 * the results are read (qpt_flow_forget_halves). */
void qpt_drive_forget(struct qpt_flow *fl);

/* -j N (shard.c): several engines fed the frames of their own address
 * pairs, judged as one engine.  The time of the frame before the next one
 * fed to fl, when that frame went to another engine; a frame and its
 * verdict for the PFC analysis of the engine that absorbs the others; the
 * end of the capture as one engine sees it (the latest of all: ECN-CE
 * marks near it are undecided), set on each before their end; then each
 * part's conversations moved into fl under the global ids (and the part
 * freed). */
void qpt_drive_previous_time(struct qpt_flow *fl, int64_t ns);
void qpt_drive_pfc(struct qpt_flow *fl, uint64_t frame, int64_t ns, const struct qpt_pkt *pkt,
		   const struct qpt_verdict *v);
void qpt_drive_parts_end(struct qpt_flow *const *fls, unsigned n);
void qpt_drive_absorb(struct qpt_flow *fl, struct qpt_flow *part, const int32_t *ids);

/* Parses --from/--to: seconds since the epoch, +seconds from the first
 * frame, or an ISO 8601 date and time. */
bool qpt_parse_time(const char *s, int64_t *ns, bool *relative);
/* Input options from the command line; false after reporting a bad one. */
bool qpt_input_opts_from(const struct opts *o, struct qpt_input_opts *io);

/* The reading loop of summary, events and plot: the files as one timeline,
 * every matched frame decoded and fed to fl, then fn (may be NULL) with the
 * verdict.  *t0 is the first frame's time (matched or not), set before the
 * engine sees a frame.  Returns 0, or 2 when a file could not be read (the
 * others are).  With progress, a progress line unless --quiet.  Errors are
 * printed on stderr, or with keep_errors added there instead. */
typedef void (*qpt_frame_fn)(void *user, const struct qpt_frame *f, int64_t ns,
			     const struct qpt_pkt *pkt, const struct qpt_verdict *v);
struct qpt_analysis {
	int64_t t0;	/* time of the first frame read (ns), when have_t0 */
	bool have_t0;
	bool opened; /* some file could be opened (and label is set) */
	gchar *label; /* the files opened, joined by " + " (the caller frees) */
	bool stop;    /* set by the frame function: read no further (a write failed) */
	/* --from/--to select what is shown; everything is analysed (the
	 * frame function sees qpt_frame.in_window) */
	bool window_selects;
	bool need_data; /* the frame function needs the frame's bytes (-w) */
	bool own_count; /* the frame function applies -c itself (packets) */
	uint64_t frames_read; /* every frame read, matched or not */
	uint64_t frames_matched; /* those -f matched (what -c counts) */
	bool count_reached; /* -c N stopped the reading */
	bool interrupted;   /* Ctrl-C stopped the reading: results are partial */
};
int qpt_analyse_files(const struct opts *o, gchar **files, bool progress,
		      struct qpt_flow *fl, struct qpt_analysis *an,
		      qpt_frame_fn fn, void *user, GPtrArray *keep_errors);

/* The next frame the analysis takes, for the reading loops of
 * qpt_analyse_files() (one thread) and qpt_shard_analyse(): counts every
 * frame read in an (frames_read; t0 from the first), passes over those
 * -f/--from/--to did not match, counts the matched one (frames_matched)
 * and returns its packet: f->pkt as the reading thread decoded it, or the
 * frame decoded into *pkt.  *ns is the frame's time.  NULL at the end of
 * in, or once an->stop. */
const struct qpt_pkt *qpt_analysis_next(const struct opts *o, struct qpt_input *in,
					GPtrArray *errors, struct qpt_analysis *an,
					struct qpt_frame *f, int64_t *ns,
					struct qpt_pkt *pkt);
/* After a frame: has -c N been reached (then an->count_reached)?  Not
 * with an->own_count (packets counts what it shows itself). */
bool qpt_analysis_counted(const struct opts *o, struct qpt_analysis *an);

/* The end of the input: qpt_flow_end() on each engine fls[0..n-1] (every
 * event still undecided, then the finish), their events' conversation ids
 * mapped through ids[i] (NULL: kept), in the order of one engine
 * (qpt_event_cmp), given to fn as verdicts of up to QPT_MAX_EVENTS events
 * each (frame UINT64_MAX: of earlier frames).  One engine's and several
 * engines' events come in the same order.  Every front end that reads
 * through qpt_analyse_files() ends its engine here. */
void qpt_end_deliver(struct qpt_flow *const *fls, unsigned n, GArray *const *ids,
		     struct qpt_analysis *an, qpt_frame_fn fn, void *user);

#endif
