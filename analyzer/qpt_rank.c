/* qpt_rank.c - which conversations went worst (see qpt_rank.h) */
#include "qpt_rank.h"

#include "qpt_flow.h"

uint64_t qpt_conv_trouble(const struct qpt_conv *c)
{
	uint64_t t = 0;

	for (int d = 0; d < 2; d++) {
		const struct qpt_dir *x = c->dir[d];

		t += x->r->retransmitted_packets + x->r->psn_gaps + x->r->rnr_naks + x->r->duplicates;
		for (int i = 0; i < QPT_NAK_KINDS; i++)
			t += x->r->naks[i];
	}
	return t;
}

gint qpt_conv_cmp_worst(gconstpointer a, gconstpointer b)
{
	const struct qpt_conv *x = *(const struct qpt_conv *const *)a;
	const struct qpt_conv *y = *(const struct qpt_conv *const *)b;
	uint64_t tx = qpt_conv_trouble(x), ty = qpt_conv_trouble(y);

	if (tx != ty)
		return tx < ty ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}
