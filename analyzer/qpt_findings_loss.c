/* qpt_findings_loss.c - the findings about one direction's resends:
 * what they cost, what started them, where the packets were lost */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "qpt_findings.h"
#include "qpt_findings_int.h"
#include "qpt_flow.h"

/* Re-sent packets of one direction: how many, what it cost, what started
 * the resends, where the packets were lost. */
void findings_dir_loss(struct fb *b, GArray *out, const struct qpt_conv_stats *c, int d,
		     const struct conv_frames *cf, int64_t conv_ns)
{
	const struct qpt_dir_stats *x = &c->dir[d], *y = &c->dir[1 - d];
	char sa[QPT_ADDR_STRLEN], ra[QPT_ADDR_STRLEN], tl[48];
	uint64_t gaps = x->psn_gaps + x->response_gaps;
	uint64_t missing = x->missing_psns + x->missing_responses;
	uint64_t naks = y->naks[0], trig[4] = { 0 }, wgaps = 0, wmissing = 0;
	int64_t lost = qpt_dir_time_lost(x);
	bool reliable = strcmp(c->transport, "UC") && strcmp(c->transport, "UD");
	enum qpt_finding_kind kind;
	GString *t;

	qpt_endpoint_addr(&c->ep[x->from], sa);
	qpt_endpoint_addr(&c->ep[x->to], ra);
	for (guint i = 0; x->episodes && i < x->episodes->len; i++) {
		const struct qpt_episode *e = &g_array_index(x->episodes, struct qpt_episode, i);

		if (e->trigger < 4)
			trig[e->trigger]++;
	}
	if (!x->retransmitted_packets) {
		if (!gaps)
			return;
		/* PSNs missing, never re-sent */
		kind = !reliable ? QPT_F_UNRECOVERED_LOSS : naks ? QPT_F_LOSS_BEFORE_TAP :
			QPT_F_CAPTURE_GAPS;
		fb_start(b, kind, c, d);
		t = b->t;
		g_string_append_printf(t, "%" PRIu64 " %s missing in %" PRIu64 " %s", missing,
				       fb_plural(missing, "PSN", "PSNs"), gaps, fb_plural(gaps, "gap", "gaps"));
		if (kind == QPT_F_UNRECOVERED_LOSS)
			g_string_append_printf(t, " (%s does not re-send): lost between %s and "
					       "the capture point", c->transport, sa);
		else if (kind == QPT_F_CAPTURE_GAPS)
			g_string_append(t, ", never NAKed or re-sent: the capture dropped them, "
					   "the network did not");
		else
			g_string_append_printf(t, ", NAKed by %s but not re-sent in the capture: "
					       "lost between %s and the capture point", ra, sa);
		fb_num(b, "missing_psns", (double)missing);
		fb_num(b, "psn_gaps", (double)gaps);
		fb_share(b, missing, fb_sendings(x) + missing);
		fb_frames_of(b, cf, d, QPT_VB_PSN_GAP);
		fb_frames_of(b, cf, d, QPT_VB_RESPONSE_GAP);
		fb_end(b, out, missing);
		return;
	}
	/* resends that RNR NAKs explain are the RNR finding's */
	if (!x->gbn_episodes && x->rnr_retries && y->rnr_naks && !gaps)
		return;
	/* a window with resends but no PSN gap of its own: where the loss
	 * is, the whole input tells (the gap may have come before it) */
	if (!gaps && b->whole) {
		const struct qpt_dir_stats *w = &b->whole->dir[d];

		wgaps = w->psn_gaps + w->response_gaps;
		wmissing = w->missing_psns + w->missing_responses;
	}
	if (gaps || wgaps)
		kind = QPT_F_LOSS_BEFORE_TAP;
	else if (naks || trig[QPT_TRIGGER_NAK])
		kind = QPT_F_LOSS_AFTER_TAP;
	else if (trig[QPT_TRIGGER_TIMEOUT] || x->timeouts)
		kind = QPT_F_TIMEOUTS;
	else
		kind = QPT_F_RESENDS;
	fb_start(b, kind, c, d);
	t = b->t;
	g_string_append_printf(t, "%" PRIu64 " of %" PRIu64 " packets re-sent (",
			       x->retransmitted_packets, fb_sendings(x));
	fb_pct_text(t, fb_pct(x->retransmitted_packets, fb_sendings(x)));
	g_string_append_c(t, ')');
	if (x->gbn_episodes) {
		bool floor = x->episodes && x->gbn_episodes > x->episodes->len;

		g_string_append_printf(t, ", %" PRIu64 " go-back-N %s cost %s%s", x->gbn_episodes,
				       fb_plural(x->gbn_episodes, "episode", "episodes"),
				       floor ? "at least " : "",
				       qpt_format_duration(lost, tl, sizeof(tl)));
		if (conv_ns > 0) {
			g_string_append(t, " (");
			fb_pct_text(t, 100.0 * (double)lost / (double)conv_ns);
			g_string_append(t, " of its duration)");
		}
	}
	if (x->rnr_retries)
		g_string_append_printf(t, ", %" PRIu64 " after RNR NAKs", x->rnr_retries);
	/* what started the resends */
	if (naks)
		g_string_append_printf(t, "; %" PRIu64 " %s from %s", naks,
				       fb_plural(naks, "NAK", "NAKs"), ra);
	if (trig[QPT_TRIGGER_TIMEOUT])
		g_string_append_printf(t, "; %" PRIu64 " %s after a silence (ACK timeout)",
				       trig[QPT_TRIGGER_TIMEOUT],
				       fb_plural(trig[QPT_TRIGGER_TIMEOUT], "resend", "resends"));
	if (trig[QPT_TRIGGER_READ_RETRY])
		g_string_append_printf(t, "; %" PRIu64 " READ %s re-issued", trig[QPT_TRIGGER_READ_RETRY],
				       fb_plural(trig[QPT_TRIGGER_READ_RETRY], "request", "requests"));
	if (trig[QPT_TRIGGER_RESEND])
		g_string_append_printf(t, "; %" PRIu64 " without a captured NAK or silence",
				       trig[QPT_TRIGGER_RESEND]);
	/* where */
	switch (kind) {
	case QPT_F_LOSS_BEFORE_TAP:
		if (gaps)
			g_string_append_printf(t, "; %" PRIu64 " %s missing here: lost between %s and "
					       "the capture point", missing, fb_plural(missing, "PSN", "PSNs"), sa);
		else
			g_string_append_printf(t, "; no PSN gap in the window, %" PRIu64 " %s missing "
					       "in the whole input: lost between %s and the capture point",
					       wmissing, fb_plural(wmissing, "PSN", "PSNs"), sa);
		if (trig[QPT_TRIGGER_TIMEOUT] && naks)
			g_string_append_printf(t, " (and a NAK lost between the capture point "
					       "and %s)", sa);
		break;
	case QPT_F_LOSS_AFTER_TAP:
		g_string_append_printf(t, "; no PSN gap here: lost between the capture point "
				       "and %s", ra);
		break;
	case QPT_F_TIMEOUTS:
		g_string_append_printf(t, "; no PSN gap or NAK here: lost between the capture "
				       "point and %s, or their ACKs lost on the way back", ra);
		break;
	default:
		if (trig[QPT_TRIGGER_READ_RETRY] && (y->response_gaps || y->retransmitted_packets))
			g_string_append_printf(t, "; READ responses from %s were missing "
					       "(see %s -> %s)", ra, ra, sa);
		else
			g_string_append(t, "; no PSN gap here: a NAK the capture did not see");
		break;
	}
	/* a large share, or much time lost, is an error */
	if (fb_pct(x->retransmitted_packets, fb_sendings(x)) >= 5 ||
	    (conv_ns > 0 && (double)lost >= 0.1 * (double)conv_ns))
		b->f.severity = QPT_SEV_ERROR;
	fb_num(b, "resent_packets", (double)x->retransmitted_packets);
	fb_num(b, "packets", (double)fb_sendings(x));
	fb_share(b, x->retransmitted_packets, fb_sendings(x));
	fb_num(b, "gbn_episodes", (double)x->gbn_episodes);
	fb_num(b, "time_lost_us", (double)lost / 1000.0);
	fb_num(b, "duration_us", (double)conv_ns / 1000.0);
	fb_num(b, "psn_gaps", (double)gaps);
	fb_num(b, "naks", (double)naks);
	fb_num(b, "timeouts", (double)trig[QPT_TRIGGER_TIMEOUT]);
	fb_frames_of(b, cf, d, QPT_VB_PSN_GAP);
	fb_frames_of(b, cf, 1 - d, QPT_VB_NAK);
	for (guint i = 0; x->episodes && i < x->episodes->len && i < 2; i++) {
		const struct qpt_episode *e = &g_array_index(x->episodes, struct qpt_episode, i);

		fb_frame(b, e->trigger_frame);
		fb_frame(b, e->first_resent_frame);
	}
	fb_frames_of(b, cf, d, QPT_VB_RETRANSMISSION);
	fb_end(b, out, x->retransmitted_packets);
}
