/* qpt_flow_lat.c - latency histograms: exact min/max/mean, p50/p99 from
 * 100 log bins per decade (about 1 %) */
#include <math.h>
#include <string.h>

#define LAT_NBINS (QPT_LAT_BINS_PER_DECADE * QPT_LAT_DECADES)
#define LAT_MIN_US 0.01

#include "qpt_flow_int.h"
#include "qpt_opcode.h"

/* The bin of a sample of us (>= 0). */
static unsigned lat_bin_of(double us)
{
	int bin = us <= LAT_MIN_US ? 0 :
				     (int)(log10(us / LAT_MIN_US) * QPT_LAT_BINS_PER_DECADE);

	return (unsigned)CLAMP(bin, 0, LAT_NBINS - 1);
}

/* From the few samples' bin numbers to a count per bin. */
static void lat_spread(struct qpt_lat *l)
{
	uint32_t *b = g_new0(uint32_t, LAT_NBINS);

	for (uint64_t k = 0; k < l->n; k++)
		b[l->bins[k]]++;
	g_free(l->bins);
	l->bins = b;
}

/* Counts a sample in bin (min, max, n and sum are the caller's). */
static void lat_count(struct qpt_lat *l, unsigned bin)
{
	if (l->n < QPT_LAT_FEW) {
		uint64_t k = l->n;

		if (!l->bins)
			l->bins = g_new0(uint32_t, QPT_LAT_FEW);
		while (k > 0 && l->bins[k - 1] > bin) { /* kept in order */
			l->bins[k] = l->bins[k - 1];
			k--;
		}
		l->bins[k] = bin;
		return;
	}
	if (l->n == QPT_LAT_FEW)
		lat_spread(l);
	l->bins[bin]++;
}

uint32_t qpt_lat_bin(const struct qpt_lat *l, unsigned i)
{
	uint32_t c = 0;

	if (!l->bins || i >= LAT_NBINS)
		return 0;
	if (l->n > QPT_LAT_FEW)
		return l->bins[i];
	for (uint64_t k = 0; k < l->n; k++)
		c += l->bins[k] == i;
	return c;
}

void fl_lat_add(struct qpt_lat *l, double us)
{
	if (!(us >= 0))
		return; /* capture clock went backwards (or NaN): not a latency */
	lat_count(l, lat_bin_of(us));
	if (l->n == 0 || us < l->min_us)
		l->min_us = us;
	if (l->n == 0 || us > l->max_us)
		l->max_us = us;
	l->n++;
	l->sum_us += us;
}

/* A percentile in bin i: the bin's middle, within the exact min and max. */
static double lat_mid(const struct qpt_lat *l, int i)
{
	double mid = LAT_MIN_US * pow(10, (i + 0.5) / QPT_LAT_BINS_PER_DECADE);

	return CLAMP(mid, l->min_us, l->max_us);
}

double qpt_lat_percentile(const struct qpt_lat *l, double p)
{
	uint64_t want, seen = 0;

	if (!l->n)
		return 0;
	want = (uint64_t)ceil(p / 100.0 * (double)l->n);
	if (want < 1)
		want = 1;
	if (l->n <= QPT_LAT_FEW) /* the samples' bins, in order: the want-th */
		return lat_mid(l, (int)l->bins[MIN(want, l->n) - 1]);
	for (int i = 0; i < LAT_NBINS; i++) {
		seen += l->bins[i];
		if (seen >= want)
			return lat_mid(l, i);
	}
	return l->max_us;
}

void fl_lat_merge(struct qpt_lat *d, const struct qpt_lat *s)
{
	if (!s->n)
		return;
	for (unsigned i = 0; i < LAT_NBINS; i++) {
		uint32_t c = qpt_lat_bin(s, i);

		/* lat_count() counts d->n as it goes: n is set after */
		for (uint32_t k = 0; k < c; k++) {
			lat_count(d, i);
			d->n++;
		}
	}
	d->n -= s->n;
	d->min_us = d->n ? MIN(d->min_us, s->min_us) : s->min_us;
	d->max_us = d->n ? MAX(d->max_us, s->max_us) : s->max_us;
	d->n += s->n;
	d->sum_us += s->sum_us;
}

/* As ack_requests() in qpt_flow_resp.c counts them: a sample of a packet of
 * an ACK opcode that is no NAK (an RNR NAK has no RTT), timed from a
 * request not resent (Karn), not before it. */
bool qpt_rtt_sample(const struct qpt_verdict *v, const struct qpt_pkt *p)
{
	if (v->ack_rtt_ns < 0 || !(p->flags & QPT_HAS_BTH) ||
	    !(qpt_opcodes[p->bth.opcode].flags & QPT_O_ACK))
		return false;
	return !(p->flags & QPT_H_AETH) || p->aeth.kind != QPT_AETH_NAK;
}
