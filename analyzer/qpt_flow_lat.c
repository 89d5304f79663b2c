/* qpt_flow_lat.c - latency histograms: exact min/max/mean, p50/p99 from
 * 100 log bins per decade (about 1 %) */
#include <math.h>
#include <string.h>

#define LAT_NBINS (QPT_LAT_BINS_PER_DECADE * QPT_LAT_DECADES)
#define LAT_MIN_US 0.01

#include "qpt_flow_int.h"

void fl_lat_add(struct qpt_lat *l, double us)
{
	int bin;

	if (!(us >= 0))
		return; /* capture clock went backwards (or NaN): not a latency */
	if (!l->bins)
		l->bins = g_new0(uint32_t, LAT_NBINS);
	if (l->n == 0 || us < l->min_us)
		l->min_us = us;
	if (l->n == 0 || us > l->max_us)
		l->max_us = us;
	l->n++;
	l->sum_us += us;
	bin = us <= LAT_MIN_US ? 0 :
			       (int)(log10(us / LAT_MIN_US) * QPT_LAT_BINS_PER_DECADE);
	l->bins[CLAMP(bin, 0, LAT_NBINS - 1)]++;
}

double qpt_lat_percentile(const struct qpt_lat *l, double p)
{
	uint64_t want, seen = 0;

	if (!l->n)
		return 0;
	want = (uint64_t)ceil(p / 100.0 * (double)l->n);
	if (want < 1)
		want = 1;
	for (int i = 0; i < LAT_NBINS; i++) {
		seen += l->bins[i];
		if (seen >= want) {
			double mid = LAT_MIN_US *
				     pow(10, (i + 0.5) / QPT_LAT_BINS_PER_DECADE);

			return CLAMP(mid, l->min_us, l->max_us);
		}
	}
	return l->max_us;
}

void fl_lat_merge(struct qpt_lat *d, const struct qpt_lat *s)
{
	if (!s->n)
		return;
	if (!d->bins)
		d->bins = g_new0(uint32_t, LAT_NBINS);
	for (int i = 0; i < LAT_NBINS; i++)
		d->bins[i] += s->bins[i];
	d->min_us = d->n ? MIN(d->min_us, s->min_us) : s->min_us;
	d->max_us = d->n ? MAX(d->max_us, s->max_us) : s->max_us;
	d->n += s->n;
	d->sum_us += s->sum_us;
}
