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

#define MAX_DRAWN 20000 /* marks per series before thinning */

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
GString *plot_render(const struct plot *p, const struct qpt_conv *c, int64_t t0,
		     gchar **files);

#endif
