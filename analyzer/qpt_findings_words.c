/* qpt_findings_words.c - numbers as the reports write them, and a
 * conversation's own numbers (see qpt_findings.h) */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "qpt_findings.h"
#include "qpt_findings_int.h"
#include "qpt_flow.h"

/* ---- numbers as words --------------------------------------------------- */

/* v (>= 0) with three significant digits. */
static void sig3(char *buf, size_t len, double v, const char *unit)
{
	if (v >= 99.95)
		snprintf(buf, len, "%.0f %s", v, unit);
	else if (v >= 9.995)
		snprintf(buf, len, "%.1f %s", v, unit);
	else
		snprintf(buf, len, "%.2f %s", v, unit);
}

char *qpt_format_duration_us(double us, char *buf, size_t len)
{
	double a = fabs(us);
	const char *sign = us < 0 ? "-" : "";
	char tmp[48];

	/* the unit is chosen after rounding: 999.96 us is "1.00 ms" */
	if (a < 999.5)
		sig3(tmp, sizeof(tmp), a, "µs");
	else if (a < 999.5e3)
		sig3(tmp, sizeof(tmp), a / 1e3, "ms");
	else
		sig3(tmp, sizeof(tmp), a / 1e6, "s");
	snprintf(buf, len, "%s%s", sign, tmp);
	return buf;
}

char *qpt_format_rtt_p50_p99(const struct qpt_conv_numbers *n, char *buf, size_t len)
{
	char p50[24], p99[24];

	if (n->rtt_p50_us < 0) {
		g_strlcpy(buf, "-", len);
		return buf;
	}
	g_snprintf(buf, (gulong)len, "%s/%s", qpt_format_duration_us(n->rtt_p50_us, p50, sizeof(p50)),
		   qpt_format_duration_us(n->rtt_p99_us, p99, sizeof(p99)));
	return buf;
}

char *qpt_format_duration(int64_t ns, char *buf, size_t len)
{
	return qpt_format_duration_us((double)ns / 1000.0, buf, len);
}

char *qpt_format_time_lost(const struct qpt_conv_numbers *n, char *buf, size_t len)
{
	if (!n->time_lost_ns) {
		g_strlcpy(buf, "-", len);
		return buf;
	}
	return qpt_format_duration(n->time_lost_ns, buf, len);
}

char *qpt_format_rate(double bps, char *buf, size_t len)
{
	static const char *const units[] = { "bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s" };
	unsigned u = 0;

	if (!(bps > 0)) {
		snprintf(buf, len, "0 bit/s");
		return buf;
	}
	while (u + 1 < G_N_ELEMENTS(units) && bps >= 999.5) {
		bps /= 1000;
		u++;
	}
	sig3(buf, len, bps, units[u]);
	return buf;
}

/* ---- a conversation's numbers -------------------------------------------- */

int64_t qpt_dir_time_lost(const struct qpt_dir_stats *d)
{
	int64_t t = 0;

	for (guint i = 0; d->episodes && i < d->episodes->len; i++) {
		const struct qpt_episode *e = &g_array_index(d->episodes, struct qpt_episode, i);

		if (e->end_ns > e->start_ns)
			t += e->end_ns - e->start_ns;
	}
	return t;
}

bool fb_conv_span(const struct qpt_conv_stats *c, int64_t *first, int64_t *last)
{
	bool any = false;

	for (int d = 0; d < 2; d++) {
		const struct qpt_dir_stats *x = &c->dir[d];

		if (!x->packets)
			continue;
		if (!any || x->first_ns < *first)
			*first = x->first_ns;
		if (!any || x->last_ns > *last)
			*last = x->last_ns;
		any = true;
	}
	return any;
}

void qpt_conv_numbers(const struct qpt_conv_stats *c, struct qpt_conv_numbers *n)
{
	int64_t first = 0, last = 0;
	const struct qpt_lat *rtt = NULL;

	memset(n, 0, sizeof(*n));
	for (int d = 0; d < 2; d++) {
		const struct qpt_dir_stats *x = &c->dir[d];

		n->packets += x->packets;
		n->bytes += x->payload_bytes;
		n->resent += x->retransmitted_packets;
		n->episodes += x->gbn_episodes;
		n->cnps += x->cnps;
		n->ecn_ce += x->ecn_ce;
		n->time_lost_ns += qpt_dir_time_lost(x);
		if (x->episodes && x->gbn_episodes > x->episodes->len)
			n->episodes_truncated = true;
		if (x->ack_rtt->n && (!rtt || x->ack_rtt->n > rtt->n))
			rtt = x->ack_rtt;
	}
	if (fb_conv_span(c, &first, &last) && last > first) {
		n->duration_ns = last - first;
		n->throughput_bps = (double)n->bytes * 8 / ((double)n->duration_ns / 1e9);
	}
	n->rtt_p50_us = rtt ? qpt_lat_percentile(rtt, 50) : -1;
	n->rtt_p99_us = rtt ? qpt_lat_percentile(rtt, 99) : -1;
}
