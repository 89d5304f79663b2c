/* qpt_rank.h - which conversations went worst
 *
 * One ranking for every front end (summary's "worst conversations", plot
 * --top, the plugin): the trouble of a conversation is what the sequence
 * analysis found wrong in both directions.
 */
#ifndef QPT_RANK_H
#define QPT_RANK_H

#include <glib.h>
#include <stdint.h>

struct qpt_conv;

/* Retransmitted packets + PSN gaps + RNR NAKs + capture duplicates + NAKs,
 * of both directions; 0 for a clean conversation. */
uint64_t qpt_conv_trouble(const struct qpt_conv *c);

/* For g_ptr_array_sort() of struct qpt_conv pointers: the most trouble
 * first, then by id. */
gint qpt_conv_cmp_worst(gconstpointer a, gconstpointer b);

#endif
