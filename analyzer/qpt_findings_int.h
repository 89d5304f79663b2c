/* qpt_findings_int.h - what the findings' files share (qpt_findings.c the
 * frames to name, the builder and the conversation/capture rules;
 * qpt_findings_loss.c, qpt_findings_net.c rules of their own;
 * qpt_findings_words.c numbers as words; qpt_findings_groups.c the
 * roll-up).  Not part of the interface (qpt_findings.h). */
#ifndef QPT_FINDINGS_INT_H
#define QPT_FINDINGS_INT_H

#include <glib.h>

#include "qpt_findings.h"
#include "qpt_flow.h"

struct conv_frames; /* a conversation's first frames of each kind (qpt_findings.c) */

struct fb {
	struct qpt_finding f;
	struct qpt_flow *fl;
	GString *t;
	const struct conv_frames *cf; /* the conversation's, for its time */
	const struct qpt_findings_frames *ff;
	/* more than one RC conversation seen one way only: one capture-wide
	 * finding for them all (one_way_wide), not one per conversation */
	bool one_way_wide;
	/* the same for capture copies in more than one conversation
	 * (copies_wide): captures merged from two points, a mirror of both
	 * directions, copy every packet of every conversation */
	bool copies_wide;
	/* the same for bad ICRCs in more than one conversation (icrc_wide) */
	bool icrc_wide;
	/* the conversation as the whole input shows it, when the findings
	 * count a window of it (NULL: they count the whole input) */
	const struct qpt_conv_stats *whole;
};

/* A finding of that kind about conversation c (NULL: the capture) and its
 * direction dir (-1: both) begins: its text in b->t, its numbers and
 * frames added with fb_num(), fb_frame(), fb_frames_of(), fb_share(); it
 * goes to out with its weight by fb_end(). */
void fb_start(struct fb *b, enum qpt_finding_kind kind, const struct qpt_conv_stats *c, int dir);
void fb_num(struct fb *b, const char *key, double v);
void fb_frame(struct fb *b, uint64_t frame);
void fb_frames_of(struct fb *b, const struct conv_frames *cf, int dir, unsigned kind);
void fb_icrc_time(struct fb *b);
void fb_end(struct fb *b, GArray *out, uint64_t weight);
void fb_share(struct fb *b, uint64_t part, uint64_t whole);
/* one or many by n */
const char *fb_plural(uint64_t n, const char *one, const char *many);
double fb_pct(uint64_t part, uint64_t whole);
void fb_pct_text(GString *t, double p);
/* the packets a direction sent, resends included */
uint64_t fb_sendings(const struct qpt_dir_stats *x);
/* the time span of c's packets (false: none) */
bool fb_conv_span(const struct qpt_conv_stats *c, int64_t *first, int64_t *last);
/* the direction an RC conversation has when the capture saw only one of
 * its two (0 or 1), else -1 */
int fb_one_way_dir(const struct qpt_conv_stats *c);

/* the rules in files of their own */
void findings_dir_loss(struct fb *b, GArray *out, const struct qpt_conv_stats *c, int d,
		       const struct conv_frames *cf, int64_t conv_ns);
void findings_lossless(struct fb *b, GArray *out, const struct qpt_conv_stats *c,
		       const struct conv_frames *cf, const struct qpt_flow_opts *fo);
void findings_pfc(struct fb *b, GArray *out, struct qpt_flow *fl);

#endif
