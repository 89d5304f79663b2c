/* qpt_findings_net.c - the findings about the lossless network: a
 * conversation's priorities, ECN marks, CNPs and MTU; the link's pauses
 * against the RoCE data's priorities (qpt_flow_qos.c's and qpt_pfc.h's
 * numbers) */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "qpt_findings.h"
#include "qpt_findings_int.h"
#include "qpt_flow.h"
#include "qpt_pfc.h"

/* "48 (30 CNPs), 46 (25)": the values of a class, as the direction saw them */
static void qos_list(GString *t, const struct qpt_dir_stats *x, unsigned cls, bool dscp,
		     const char *noun)
{
	bool first = true, one = qpt_qos_values(x, cls, dscp, NULL) == 1;
	const struct qpt_qos_count *e;

	for (unsigned i = 0; (e = qpt_qos_count_at(x, i)); i++) {
		if (e->cls != cls || e->dscp != dscp)
			continue;
		if (!first)
			g_string_append(t, ", ");
		if (e->value < 0)
			g_string_append(t, "untagged");
		else
			g_string_append_printf(t, "%d", e->value);
		if (!one)
			g_string_append_printf(t, " (%" PRIu64 "%s%s)", e->packets, first ? " " : "",
					       first ? (e->packets == 1 ? noun : "CNPs") : "");
		first = false;
	}
}

/* Priorities, ECN and MTU of a conversation (qpt_flow_qos.c's numbers). */
void findings_lossless(struct fb *b, GArray *out, const struct qpt_conv_stats *c,
			      const struct conv_frames *cf, const struct qpt_flow_opts *fo)
{
	for (int d = 0; d < 2 && fo; d++) {
		const struct qpt_dir_stats *x = &c->dir[d], *y = &c->dir[1 - d];
		char ra[QPT_ADDR_STRLEN], sa[QPT_ADDR_STRLEN];
		unsigned nd, np;

		if (!x->cnps && !x->ce_without_cnp)
			continue; /* neither finding below (most directions) */
		nd = qpt_qos_values(x, QPT_QOS_CNP, true, NULL);
		np = qpt_qos_values(x, QPT_QOS_CNP, false, NULL);
		qpt_endpoint_addr(&c->ep[x->from], sa);
		qpt_endpoint_addr(&c->ep[x->to], ra);
		/* the CNPs this direction carries (sa's NIC sends them to ra) */
		if (x->cnps && (nd > 1 || np > 1 || x->cnp_unexpected)) {
			fb_start(b, QPT_F_CNP_PRIORITY, c, d);
			g_string_append_printf(b->t, "%" PRIu64 " %s from %s to %s on DSCP ", x->cnps,
					       fb_plural(x->cnps, "CNP", "CNPs"), sa, ra);
			qos_list(b->t, x, QPT_QOS_CNP, true, "CNP");
			g_string_append(b->t, ", 802.1Q priority ");
			qos_list(b->t, x, QPT_QOS_CNP, false, "CNP");
			g_string_append(b->t, "; expected ");
			if (fo->cnp_dscp >= 0)
				g_string_append_printf(b->t, "DSCP %d", fo->cnp_dscp);
			if (fo->cnp_dscp >= 0 && fo->cnp_pcp >= 0)
				g_string_append(b->t, ", ");
			if (fo->cnp_pcp >= 0)
				g_string_append_printf(b->t, "priority %d", fo->cnp_pcp);
			if (fo->cnp_dscp < 0 && fo->cnp_pcp < 0)
				g_string_append(b->t, "one DSCP and priority");
			if (x->cnp_unexpected)
				g_string_append_printf(b->t, " (--cnp-dscp, --cnp-priority): %" PRIu64
						       " elsewhere", x->cnp_unexpected);
			else
				g_string_append(b->t, ": the CNPs are split");
			g_string_append(b->t, " (the switches queue them in another class than the "
					      "CNP class: check the NIC's CNP DSCP/priority and the "
					      "switches' DSCP-to-priority map)");
			fb_num(b, "cnps", (double)x->cnps);
			fb_num(b, "cnp_unexpected", (double)x->cnp_unexpected);
			fb_num(b, "cnp_dscps", nd);
			fb_num(b, "cnp_priorities", np);
			for (unsigned i = 0; qpt_dir_qos(x) && i < QPT_QOS_FRAMES; i++)
				fb_frame(b, qpt_dir_qos(x)->cnp_unexpected_frames[i]);
			if (!x->cnp_unexpected)
				fb_frames_of(b, cf, d, QPT_VB_CNP);
			fb_end(b, out, x->cnps);
		}
		/* marks on this direction that no CNP answered */
		if (x->ce_without_cnp) {
			char w[48];

			fb_start(b, QPT_F_ECN_NO_CNP, c, d);
			g_string_append_printf(b->t, "%" PRIu64 " of %" PRIu64 " ECN-CE marked packets "
					       "to %s had no CNP back to %s within %s (%" PRIu64
					       " %s from %s in all): %s did not notify the sender of "
					       "the congestion (ECN notification point disabled for "
					       "this priority?) or its CNPs were lost or filtered "
					       "before the capture point",
					       x->ce_without_cnp, x->ecn_ce, ra, sa,
					       qpt_format_duration(fo->ecn_window_ns, w, sizeof(w)),
					       y->cnps, fb_plural(y->cnps, "CNP", "CNPs"), ra, ra);
			fb_num(b, "ce_without_cnp", (double)x->ce_without_cnp);
			fb_num(b, "ecn_ce", (double)x->ecn_ce);
			fb_num(b, "cnps", (double)y->cnps);
			fb_num(b, "window_us", (double)fo->ecn_window_ns / 1000.0);
			for (unsigned i = 0; qpt_dir_qos(x) && i < QPT_QOS_FRAMES; i++)
				fb_frame(b, qpt_dir_qos(x)->no_cnp_frames[i]);
			fb_end(b, out, x->ce_without_cnp);
		}
	}
	/* MTU: payloads above the CM path MTU; the two sides' segment sizes */
	for (int d = 0; d < 2; d++) {
		const struct qpt_dir_stats *x = &c->dir[d];
		char ra[QPT_ADDR_STRLEN], sa[QPT_ADDR_STRLEN];

		if (!qpt_dir_qos(x) || !c->has_cm || !c->cm->path_mtu ||
		    x->qos.max_payload <= c->cm->path_mtu)
			continue;
		qpt_endpoint_addr(&c->ep[x->from], sa);
		qpt_endpoint_addr(&c->ep[x->to], ra);
		fb_start(b, QPT_F_MTU_MISMATCH, c, d);
		g_string_append_printf(b->t, "packets from %s to %s carry up to %u payload bytes, "
				       "more than the path MTU %u the CM REQ set: %s's MTU is larger "
				       "than the connection's (the packets are dropped where the "
				       "path MTU holds)", sa, ra, x->qos.max_payload, c->cm->path_mtu, sa);
		fb_num(b, "max_payload", x->qos.max_payload);
		fb_num(b, "path_mtu", c->cm->path_mtu);
		fb_frame(b, x->qos.max_payload_frame);
		fb_end(b, out, 1);
	}
	if (c->dir[0].qos.seg_payload && c->dir[1].qos.seg_payload &&
	    c->dir[0].qos.seg_payload != c->dir[1].qos.seg_payload) {
		char a0[QPT_ADDR_STRLEN], a1[QPT_ADDR_STRLEN];

		qpt_endpoint_addr(&c->ep[c->dir[0].from], a0);
		qpt_endpoint_addr(&c->ep[c->dir[1].from], a1);
		fb_start(b, QPT_F_MTU_MISMATCH, c, -1);
		g_string_append_printf(b->t, "the two sides' MTUs differ: %s sends FIRST/MIDDLE "
				       "packets of %u payload bytes, %s of %u (each side's QP has "
				       "its own path MTU: set the same on both)", a0,
				       c->dir[0].qos.seg_payload, a1, c->dir[1].qos.seg_payload);
		fb_num(b, "mtu_a", c->dir[0].qos.seg_payload);
		fb_num(b, "mtu_b", c->dir[1].qos.seg_payload);
		fb_frame(b, c->dir[0].qos.seg_frame);
		fb_frame(b, c->dir[1].qos.seg_frame);
		fb_end(b, out, 1);
	}
	/* an RC conversation whose one direction the capture never saw */
	if (fb_one_way_dir(c) >= 0 && !b->one_way_wide) {
		int d = fb_one_way_dir(c);
		const struct qpt_dir_stats *x = &c->dir[d];
		char ra[QPT_ADDR_STRLEN], sa[QPT_ADDR_STRLEN];

		qpt_endpoint_addr(&c->ep[x->from], sa);
		qpt_endpoint_addr(&c->ep[x->to], ra);
		fb_start(b, QPT_F_CAPTURE_INCOMPLETE, c, d);
		if (x->req_packets)
			g_string_append_printf(b->t, "%" PRIu64 " request %s from %s to %s and "
					       "nothing back (no ACK, no response) in the whole capture",
					       x->req_packets, fb_plural(x->req_packets, "packet", "packets"),
					       sa, ra);
		else
			g_string_append_printf(b->t, "%" PRIu64 " ACK/response %s from %s to %s and "
					       "no request from %s in the whole capture",
					       x->packets, fb_plural(x->packets, "packet", "packets"), sa,
					       ra, ra);
		g_string_append(b->t, ": the capture sees one direction only (a mirror of one "
				      "port direction, an asymmetric path, a filter)");
		fb_num(b, "packets", (double)x->packets);
		fb_end(b, out, x->packets);
	}
}

/* "priority 0", "priorities 0 and 4", "priorities 0, 2 and 4" */
static void prio_list(GString *t, uint8_t mask)
{
	unsigned n = (unsigned)__builtin_popcount(mask), k = 0;

	g_string_append(t, n == 1 ? "priority " : "priorities ");
	for (unsigned p = 0; p < QPT_PFC_PRIOS; p++) {
		if (!(mask & (1u << p)))
			continue;
		if (k)
			g_string_append(t, k + 1 == n ? " and " : ", ");
		g_string_append_printf(t, "%u", p);
		k++;
	}
}

/* The link's pauses against the priorities of the RoCE data (qpt_pfc.h). */
void findings_pfc(struct fb *b, GArray *out, struct qpt_flow *fl)
{
	const struct qpt_pfc *pf = qpt_flow_pfc(fl);
	uint8_t roce = 0, paused = 0;
	uint64_t xoff = 0, data = 0;

	if (!qpt_pfc_any(pf))
		return;
	for (unsigned p = 0; p < QPT_PFC_PRIOS; p++) {
		const struct qpt_pfc_prio *pr = qpt_pfc_prio(pf, p);

		if (pr->data_packets) {
			roce |= (uint8_t)(1u << p);
			data += pr->data_packets;
		}
		if (pr->xoff_frames) {
			paused |= (uint8_t)(1u << p);
			xoff += pr->xoff_frames;
		}
	}
	if (roce && paused && !(roce & paused)) {
		fb_start(b, QPT_F_PFC_PRIORITY_MISMATCH, NULL, -1);
		g_string_append(b->t, "PFC pauses only on ");
		prio_list(b->t, paused);
		g_string_append_printf(b->t, " (%" PRIu64 " XOFF %s), none on ", xoff,
				       fb_plural(xoff, "frame", "frames"));
		prio_list(b->t, roce);
		g_string_append_printf(b->t, " that %s the RoCE data (%" PRIu64 " %s): PFC is not "
				       "enabled on the RoCE priority, or the hosts and the switch "
				       "disagree on it (untagged frames count as priority 0)",
				       __builtin_popcount(roce) == 1 ? "carries" : "carry", data,
				       fb_plural(data, "packet", "packets"));
		for (unsigned p = 0; p < QPT_PFC_PRIOS; p++)
			fb_frame(b, qpt_pfc_prio(pf, p)->first_frame);
		fb_num(b, "xoff_frames", (double)xoff);
		fb_num(b, "roce_packets", (double)data);
		fb_end(b, out, xoff);
	}
	for (unsigned p = 0; p < QPT_PFC_PRIOS; p++) {
		const struct qpt_pfc_prio *pr = qpt_pfc_prio(pf, p);
		GArray *ids;
		char gap[32];

		if (!pr->stalls)
			continue;
		ids = qpt_flow_pfc_stalled(fl, p);
		fb_start(b, QPT_F_PFC_STALLS, NULL, -1);
		if (ids->len == 1)
			b->f.conv = g_array_index(ids, int32_t, 0);
		g_string_append_printf(b->t, "pauses on priority %u stalled %u %s (", p, ids->len,
				       fb_plural(ids->len, "conversation", "conversations"));
		for (guint i = 0; i < ids->len && i < 8; i++)
			g_string_append_printf(b->t, "%s%d", i ? ", " : "", g_array_index(ids, int32_t, i));
		if (ids->len > 8)
			g_string_append_printf(b->t, ", and %u more", ids->len - 8);
		g_string_append_printf(b->t, "): sending before the pause, silent for all of it "
				       "and at least %s", qpt_format_duration(QPT_PFC_STALL_GAP_NS, gap,
									sizeof(gap)));
		fb_frame(b, pr->first_stall_frame);
		fb_num(b, "priority", p);
		fb_num(b, "stalled_conversations", ids->len);
		fb_num(b, "stalls", (double)pr->stalls);
		fb_end(b, out, pr->stalls);
		g_array_free(ids, TRUE);
	}
}
