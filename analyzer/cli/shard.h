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

#include "cli.h"

#define QPT_MAX_JOBS 256

/* -j's default: the cores available (g_get_num_processors()) less the
 * reading and the calling thread's, at most 16; 1 below
 * QPT_SHARD_MIN_CORES cores, where sharding does not pay
 * (tools/bench/README.md). */
#define QPT_SHARD_MIN_CORES 4
unsigned qpt_default_jobs(void);

/* The next frame the analysis takes, for the reading loops of
 * qpt_analyse_files() (one thread) and qpt_shard_analyse(): counts every
 * frame read in an (frames_read; t0 from the first), passes over those
 * -f/--from/--to did not match, counts the matched one (frames_matched)
 * and returns its packet: f->pkt as the reading thread decoded it, or the
 * frame decoded into *pkt.  *ns is the frame's time.  NULL at the end of
 * in, or once an->stop. */
const struct qpt_pkt *qpt_analysis_next(const struct opts *o, struct qpt_input *in,
					GPtrArray *errors, struct qpt_analysis *an,
					struct qpt_frame *f, int64_t *ns,
					struct qpt_pkt *pkt);
/* After a frame: has -c N been reached (then an->count_reached)?  Not
 * with an->own_count (packets counts what it shows itself). */
bool qpt_analysis_counted(const struct opts *o, struct qpt_analysis *an);

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

/* The end of the input: qpt_flow_end() on each engine fls[0..n-1] (every
 * event still undecided, then the finish), their events' conversation ids
 * mapped through ids[i] (NULL: kept), in the order of one engine
 * (qpt_event_cmp), given to fn as verdicts of up to QPT_MAX_EVENTS events
 * each (frame UINT64_MAX: of earlier frames).  One engine's and several
 * engines' events come in the same order.  Every front end that reads
 * through qpt_analyse_files() ends its engine here. */
void qpt_end_deliver(struct qpt_flow *const *fls, unsigned n, GArray *const *ids,
		     struct qpt_analysis *an, qpt_frame_fn fn, void *user);

#endif
