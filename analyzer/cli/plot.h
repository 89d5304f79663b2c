/* plot.h - `qptrace plot`, shared by its files (not an interface)
 *
 *   plot.c      the command: the two passes, choosing conversations, the
 *               marks of each packet
 *   plot_svg.c  the SVG writer: panels, series, legend
 */
#ifndef QPT_PLOT_H
#define QPT_PLOT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "qpt_flow.h"

#define MAX_DRAWN 20000 /* marks per series drawn before thinning */
/* Marks a series stores: every one up to SERIES_RAW_MAX (the picture is
 * then drawn from all of them, as choose() in plot_svg.c decides); past
 * it, a grid of cells (a power of two of nanoseconds by a power of two of
 * PSNs, finer than a pixel) keeps the first and the last mark of each
 * cell, and cells double (the axis with more cells) whenever more than
 * SERIES_CELL_MAX marks are kept.  Memory per series: O(SERIES_CELL_MAX),
 * whatever the number of packets.  SERIES_RAW_MAX >= MAX_DRAWN: a series
 * that is drawn whole is stored whole. */
#define SERIES_RAW_MAX (1u << 16)
#define SERIES_CELL_MAX (1u << 16)
#define SERIES_TCELLS 4096 /* cells across the time range when thinning starts */
#define SERIES_YCELLS 2048 /* and across the PSN range */
G_STATIC_ASSERT(SERIES_RAW_MAX >= MAX_DRAWN);

/* Series of marks: the request and response ticks are the plot's own,
 * every other series is a verdict kind (qpt_verdicts[k].plot names it;
 * a kind with no plot name has no series).  GBN_START is not a series of
 * marks: go-back-N episodes are shaded from the conversation's episodes. */
enum { S_REQ, S_RESP, S_VERDICT0 };
#define S_COUNT (S_VERDICT0 + QPT_VB_COUNT)
#define S_OF(id) (S_VERDICT0 + QPT_VB_##id)

/* Go-back-N shading, one class per enum qpt_trigger. */
#define GBN_CLASSES 4
G_STATIC_ASSERT(QPT_TRIGGER_RESEND + 1 == GBN_CLASSES); /* a new trigger needs a class */

struct mark {
	int64_t ns;
	int64_t y;	/* PSN offset (unwrapped) */
	uint64_t frame;
	uint32_t psn;	/* as on the wire */
	uint32_t n;	/* PSN gap: missing PSNs */
	uint32_t code;	/* NAK code, RNR timer */
	uint32_t pad_;
};

/* The marks of one series (see SERIES_RAW_MAX). */
struct series {
	GArray *m;	   /* struct mark, in the order they came; NULL: none */
	uint64_t total;	   /* marks added (m holds fewer once cells is set) */
	GHashTable *cells; /* NULL: m holds every mark; else its cells (plot.c) */
	int64_t t0, y0;	   /* the cells' origin */
	int tshift, yshift; /* a cell: 2^tshift ns by 2^yshift PSNs */
	int64_t tmin, tmax, ymin, ymax; /* of the marks added */
};

/* One PSN space: the requests of one direction, with the responses, ACKs
 * and NAKs of the other direction that answer them. */
struct space {
	bool init;
	uint32_t base, last_raw;
	int64_t last_y;
	bool has_top;
	int64_t top; /* highest request offset so far (CNP placement) */
	struct series s[S_COUNT];
	struct series ack; /* y = highest ACKed offset, when it grows */
	bool ack_init;
	int64_t ack_max;
	bool yany;	  /* the PSN range of every mark added, thinned or not */
	int64_t ylo, yhi; /* (a PSN gap reaches y + n) */
};

/* One conversation being plotted: a PSN space per direction. */
struct plot {
	int32_t id;
	struct space sp[2];
	uint64_t first_frame;
	int64_t first_ns, last_ns, min_ns; /* min: capture time can go backwards */
	bool seen;
};

/* The SVG of p, conversation c of the engine; t0 is the time of the first
 * frame of files. */
GString *plot_render(const struct plot *p, const struct qpt_conv_stats *c, int64_t t0,
		     gchar **files);

#endif
