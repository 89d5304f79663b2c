/* report_int.h - what the parts of summary/events (report*.c) share */
#ifndef QPT_REPORT_INT_H
#define QPT_REPORT_INT_H

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

static inline double secs(int64_t ns)
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

/* summary --interval: what an interval counts, the packets and pauses by
 * frame time, the events (as `events` prints them) by their time. */
struct interval {
	uint64_t packets, pauses;
	uint64_t ev[QPT_VB_COUNT];
};

/* A table row: what the ranking needs (qpt_rank.h: the numbers are
 * computed again to print a row: a million conversations cost 32 bytes
 * each here, not a copy each). */
#define conv_row qpt_rank_key

/* ---- what the parts share, by the file that defines it ---- */

/* report.c */
bool shown_filter(const struct qpt_conv_ident *c, void *r);
int run_one(struct opts *o, gchar **files, bool events, GString *timeline_out);
void spill(struct run *r);
bool conv_selected(const struct run *r, const struct qpt_conv_ident *c);
struct wdir *wdir_of(GHashTable *t, int32_t conv, int dir);

/* report_events.c */
void event_out(const struct qpt_event *ev, struct run *r, const struct qpt_frame *f);

/* report_conv.c */
void cell_left(GString *o, const char *s, int width);
void cell_pad(GString *o, const char *s, int width);
void json_conv(GString *o, const struct qpt_conv_stats *c);
void json_attempts(GString *o, GPtrArray *att);
void json_pfc(GString *o, struct qpt_flow *fl);
void text_conv(GString *o, const struct qpt_conv_stats *c, int64_t t0, bool verbose);
void text_attempts(GString *o, GPtrArray *att);
void text_pfc(GString *o, struct qpt_flow *fl);
void counted(GString *o, uint64_t n, const char *noun, const char *sep);

/* report_window.c */
struct interval *interval_at(struct run *r, int64_t ns);
const struct qpt_conv_stats *viewed(struct run *r, const struct qpt_conv_stats *c);
bool shown_conv(const struct run *r, const struct qpt_conv_ident *c);
bool in_window(const struct run *r, const struct qpt_conv_ident *c);
void interval_json(struct run *r);
void window_json(struct run *r, guint nconvs);
void window_text(struct run *r, guint nconvs);
void interval_text(struct run *r);
const struct qpt_conv_stats *window_view(const struct qpt_conv_stats *c, void *data);
void window_final(struct run *r);
void timeline_render(struct run *r, GString *svg);
void intervals_double(struct run *r);
void window_fold(struct run *r);

/* report_diag.c */
void json_time(GString *o, const char *key, int64_t ns);
void share_text(GString *o, uint64_t part, uint64_t whole);

#endif
