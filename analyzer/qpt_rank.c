/* qpt_rank.c - which conversations went worst (see qpt_rank.h) */
#include "qpt_rank.h"

#include "qpt_findings.h"
#include "qpt_flow.h"

uint64_t qpt_conv_trouble(const struct qpt_conv_stats *c)
{
	uint64_t t = 0;

	for (int d = 0; d < 2; d++) {
		const struct qpt_dir_stats *x = &c->dir[d];

		t += x->retransmitted_packets + x->psn_gaps + x->rnr_naks + x->duplicates;
		for (int i = 0; i < QPT_NAK_KINDS; i++)
			t += x->naks[i];
	}
	return t;
}

void qpt_conv_rank_key(const struct qpt_conv_stats *c, struct qpt_rank_key *k)
{
	*k = (struct qpt_rank_key){ .trouble = qpt_conv_trouble(c), .id = c->id };
	for (int d = 0; d < 2; d++) {
		k->time_lost_ns += qpt_dir_time_lost(&c->dir[d]);
		k->congestion += c->dir[d].cnps + c->dir[d].ecn_ce;
	}
}

int qpt_rank_key_cmp(const struct qpt_rank_key *x, const struct qpt_rank_key *y, bool with_id)
{
	if (x->trouble != y->trouble)
		return x->trouble < y->trouble ? 1 : -1;
	if (x->time_lost_ns != y->time_lost_ns)
		return x->time_lost_ns < y->time_lost_ns ? 1 : -1;
	if (x->congestion != y->congestion)
		return x->congestion < y->congestion ? 1 : -1;
	if (!with_id)
		return 0;
	return x->id < y->id ? -1 : x->id > y->id;
}

gint qpt_conv_cmp_worst(gconstpointer a, gconstpointer b)
{
	struct qpt_rank_key x, y;

	qpt_conv_rank_key(*(const struct qpt_conv_stats *const *)a, &x);
	qpt_conv_rank_key(*(const struct qpt_conv_stats *const *)b, &y);
	return qpt_rank_key_cmp(&x, &y, true);
}
