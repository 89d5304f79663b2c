/* qpt_rank.h - which conversations went worst
 *
 * One ranking for every front end (summary's "worst conversations", plot
 * --top, the plugin): the trouble of a conversation is what the sequence
 * analysis found wrong in both directions.
 */
#ifndef QPT_RANK_H
#define QPT_RANK_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

struct qpt_conv_stats;

/* Retransmitted packets + PSN gaps + RNR NAKs + capture duplicates + NAKs,
 * of both directions; 0 for a clean conversation. */
uint64_t qpt_conv_trouble(const struct qpt_conv_stats *c);

/* The ranking's keys: the trouble, then the time lost in go-back-N
 * episodes, then congestion (CNPs + ECN-CE marks), then the id. */
struct qpt_rank_key {
	uint64_t trouble;
	int64_t time_lost_ns;
	uint64_t congestion;
	int32_t id;
};
void qpt_conv_rank_key(const struct qpt_conv_stats *c, struct qpt_rank_key *k);
/* Worst first: < 0 when a ranks before b; with_id false: 0 for two
 * conversations whose keys other than the id tie. */
int qpt_rank_key_cmp(const struct qpt_rank_key *a, const struct qpt_rank_key *b, bool with_id);

/* For g_ptr_array_sort() of struct qpt_conv_stats pointers: worst first, by
 * qpt_rank_key_cmp(). */
gint qpt_conv_cmp_worst(gconstpointer a, gconstpointer b);

#endif
