/* shard.h - the analysis over several threads (qptrace -j N)
 *
 * Conversations are sharded by their address pair over N analysis
 * threads, each with an engine of its own; the calling thread hands them
 * the frames and merges their verdicts back in frame order, with the ids
 * one engine would have given.  See docs/architecture.md, "Multi-core
 * analysis".
 */
#ifndef QPT_SHARD_H
#define QPT_SHARD_H

#include "driver.h"

#define QPT_MAX_JOBS 256

/* -j's default: the cores available (g_get_num_processors()) less the
 * reading and the calling thread's, at most 16; 1 below
 * QPT_SHARD_MIN_CORES cores, where sharding does not pay
 * (tools/bench/README.md). */
#define QPT_SHARD_MIN_CORES 4
unsigned qpt_default_jobs(void);

/* The reading loop of qpt_analyse_files() with jobs analysis threads:
 * reads in to its end (or -c, or an->stop), gives fn every frame's verdict
 * in frame order as one engine would, closes in, gives fn the events the
 * end decides (qpt_end_deliver), and leaves in fl (fed no frame) the
 * whole input's conversations, CM attempts and totals
 * (qpt_flow_absorb), finished. */
struct qpt_flow;
void qpt_shard_analyse(const struct opts *o, struct qpt_input *in, GPtrArray *errors,
		       unsigned jobs, struct qpt_flow *fl, struct qpt_analysis *an,
		       qpt_frame_fn fn, void *user);

#endif
