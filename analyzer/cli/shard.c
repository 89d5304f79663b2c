/* shard.c - the analysis over several threads (qptrace -j N; see shard.h)
 *
 *   reading thread (reader.c) --batches--> calling thread: decodes (when
 *   the reader did not), picks the shard of each frame, fills rounds of
 *   frames --round--> N analysis threads, each running qpt_flow_packet()
 *   on its own frames of the round (its own engine) --done--> calling
 *   thread: merges the round in frame order (ids, then the front end's
 *   frame function), while the analysis threads work on later rounds.
 *
 * The shard of a frame is a hash of the unordered pair of its addresses
 * (IP, GID, or LIDs, as the engine's fl_pkt_addrs() takes them): the
 * engine pairs halves, CM messages and UD datagrams only between the two
 * addresses of one pair, so every frame that can meet another in one
 * conversation goes to the same engine.  One exception, handled here: an
 * engine keeps the first CM REQ of a comm ID whoever sent it and takes a
 * later REQ with that ID as resent, so a REQ whose comm ID an earlier REQ
 * took goes to that REQ's shard.
 *
 * Memory: ROUNDS rounds of ROUND_FRAMES frames, whatever the input.
 */
#include <string.h>
#include <sys/resource.h>

#include "qpt_flow.h"
#include "queue.h"
#include "shard.h"

#define ROUND_FRAMES 2048
#define ROUNDS 4 /* being filled, analysed, waiting to be merged */

struct entry {
	struct qpt_frame f; /* data NULL, pkt the entry's */
	int64_t ns, prev_ns;
	bool have_prev;
	uint8_t maxtap;		 /* the highest capture point so far */
	int32_t first_new, created; /* ids the frame handed out (shard's) */
	int32_t conv_now;	 /* v.conv after the frame (qpt_flow_conv_id) */
	uint16_t shard;
	uint64_t read_at, matched_at; /* qpt_analysis' counts after this frame */
	struct qpt_pkt pkt;
	struct qpt_verdict v;
};

struct round {
	guint n;
	bool end;  /* no frames: the analysis threads stop analysing */
	bool forget; /* ... then this: they free their engine's halves and end
		      * (in their own malloc arena, where the halves were; the
		      * conversations stay as they are, cold ones cold:
		      * qpt_flow_absorb encodes those again for the caller's) */
	int done;  /* analysis threads that finished it (calling thread's) */
	struct entry *e;
	uint16_t **idx; /* [shard]: its entries, in frame order */
	guint *nidx;	/* [shard] */
};

struct shards;
struct worker {
	struct shards *s;
	unsigned index;
	struct qpt_flow *fl;
	GAsyncQueue *in; /* rounds to analyse */
	GThread *thread;
	GArray *ids; /* shard id -> global id (the calling thread's) */
	uint64_t frames, iba; /* analysed here; RoCE/IB among them */
	double user_s, sys_s;  /* CPU time, when QPTRACE_THREAD_TIMES is set */
};

struct shards {
	unsigned n;
	struct worker *w;
	GAsyncQueue *done; /* rounds analysed, once per analysis thread */
	struct round r[ROUNDS];
	struct round stop, forget;
	uint64_t sent, merged;
	GHashTable *req_owner; /* CM REQ local comm ID -> shard + 1 */
	int32_t next_id;
	/* the merge */
	struct qpt_flow *fl; /* the caller's engine: absorbs the threads' */
	struct qpt_analysis *an;
	qpt_frame_fn fn;
	void *user;
};

unsigned qpt_default_jobs(void)
{
	guint cores = g_get_num_processors();

	/* the reading thread and the calling thread (decoding, merging) keep
	 * a core each; below that, the analysis threads only take turns with
	 * them (tools/bench/README.md: -j 2 on 2 cores) */
	if (cores < QPT_SHARD_MIN_CORES)
		return 1;
	return MIN(cores - 2, 16u);
}

static gpointer worker_main(gpointer data)
{
	struct worker *w = data;

	for (;;) {
		struct round *r = qpt_queue_pop(w->in);

		if (r->forget) { /* the engine finished (the calling thread's) */
			qpt_drive_forget(w->fl);
			break;
		}
		if (r->end) {
			struct rusage ru;

			getrusage(RUSAGE_THREAD, &ru);
			w->user_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
			w->sys_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
			qpt_queue_push(w->s->done, r);
			continue;
		}
		for (guint k = 0; k < r->nidx[w->index]; k++) {
			struct entry *e = &r->e[r->idx[w->index][k]];

			/* as one engine: the capture points seen so far, this
			 * frame's, and the time of the frame before it */
			qpt_drive_tap(w->fl, e->maxtap);
			if (e->have_prev)
				qpt_drive_previous_time(w->fl, e->prev_ns);
			e->first_new = qpt_flow_conv_count(w->fl);
			qpt_drive_packet(w->fl, e->f.file_index, e->f.number, e->ns, &e->pkt, &e->v);
			e->created = qpt_flow_conv_count(w->fl) - e->first_new;
			e->conv_now = e->v.conv >= 0 ? qpt_flow_conv_id(w->fl, e->v.conv) : -1;
			w->frames++;
			w->iba += e->pkt.transport != QPT_TR_NONE;
		}
		qpt_queue_push(w->s->done, r);
	}
	return NULL;
}

/* The address pair as the engine takes it (qpt_flow_pair.c, fl_pkt_addrs). */
static void pkt_addrs(const struct qpt_pkt *p, uint8_t src[16], uint8_t dst[16])
{
	memset(src, 0, 16);
	memset(dst, 0, 16);
	if (p->ip_version) {
		memcpy(src, p->ip_src, 16);
		memcpy(dst, p->ip_dst, 16);
	} else if (p->flags & QPT_HAS_LRH) {
		src[0] = p->lrh.slid >> 8;
		src[1] = p->lrh.slid & 0xff;
		dst[0] = p->lrh.dlid >> 8;
		dst[1] = p->lrh.dlid & 0xff;
	} else {
		memcpy(src, p->grh.sgid, 16);
		memcpy(dst, p->grh.dgid, 16);
	}
}

static unsigned shard_of(struct shards *s, const struct qpt_frame *f, const struct qpt_pkt *p)
{
	uint8_t a[16], b[16];
	uint64_t w[4], h = 0x9e3779b97f4a7c15ull;
	unsigned shard;

	if (p->transport == QPT_TR_NONE)
		return (unsigned)(f->number % s->n); /* counted only */
	pkt_addrs(p, a, b);
	if (memcmp(a, b, 16) > 0) { /* both directions alike */
		memcpy(w, b, 16);
		memcpy(w + 2, a, 16);
	} else {
		memcpy(w, a, 16);
		memcpy(w + 2, b, 16);
	}
	/* MurmurHash3's 64-bit finalizer after each word: every bit of the
	 * addresses reaches the low bits (a multiply alone leaves them to the
	 * words' low bytes, the constant ::ffff of IPv4-mapped addresses) */
	for (size_t i = 0; i < G_N_ELEMENTS(w); i++) {
		h ^= w[i];
		h ^= h >> 33;
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 33;
		h *= 0xc4ceb9fe1a85ec53ull;
		h ^= h >> 33;
	}
	shard = (unsigned)(h % s->n);
	/* the engine's test for a CM message (qpt_flow.c), then a REQ */
	if (p->flags & QPT_HAS_BTH && p->bth.dqpn <= 1 && (p->bth.opcode & 0xe0) == QPT_SVC_UD &&
	    p->flags & QPT_HAS_CM && p->cm.msg == QPT_CM_REQ) {
		gpointer key = GUINT_TO_POINTER(p->cm.local_comm_id);
		gpointer owner = g_hash_table_lookup(s->req_owner, key);

		if (owner)
			return GPOINTER_TO_UINT(owner) - 1;
		g_hash_table_insert(s->req_owner, key, GUINT_TO_POINTER(shard + 1));
	}
	return shard;
}

static int32_t global_id(const struct worker *w, int32_t id)
{
	return id >= 0 && (guint)id < w->ids->len ? g_array_index(w->ids, int32_t, id) : -1;
}

/* Round r analysed by every thread: its frames to the front end, in
 * order, with global ids: a shard's new ids are numbered in the order the
 * frames that created them come, as one engine numbers them. */
static void merge(struct shards *s, struct round *r)
{
	while (r->done < (int)s->n) {
		struct round *x = qpt_queue_pop(s->done);

		x->done++;
	}
	for (guint i = 0; i < r->n; i++) {
		struct entry *e = &r->e[i];
		struct worker *w = &s->w[e->shard];
		struct qpt_verdict *v = &e->v;

		g_assert((guint)e->first_new == w->ids->len);
		for (int32_t k = 0; k < e->created; k++) {
			int32_t g = s->next_id++;

			g_array_append_val(w->ids, g);
		}
		/* the id as it is after the frame, as qpt_flow_conv_id() would
		 * answer the front end then (the caller's engine, fed nothing
		 * yet, answers every id with itself) */
		v->conv = global_id(w, e->conv_now);
		for (unsigned k = 0; k < v->nevents; k++)
			v->ev[k].conv = global_id(w, v->ev[k].conv);
		/* PFC pauses concern every conversation on a priority, whichever
		 * thread analysed it: the PFC analysis is the merge's, in frame
		 * order on the engine that absorbs the threads' (s->fl) */
		qpt_drive_previous_time(s->fl, e->ns);
		qpt_drive_pfc(s->fl, e->f.number, e->ns, &e->pkt, v);
		if (s->fn && !s->an->stop) {
			s->fn(s->user, &e->f, e->ns, &e->pkt, v);
			/* the frame function stopped the reading here: the frames
			 * read ahead of the merge were not read, as with one thread */
			if (s->an->stop) {
				s->an->frames_read = e->read_at;
				s->an->frames_matched = e->matched_at;
			}
		}
	}
	r->n = 0;
	r->done = 0;
	for (unsigned k = 0; k < s->n; k++)
		r->nidx[k] = 0;
	s->merged++;
}

static void send(struct shards *s, struct round *r)
{
	for (unsigned k = 0; k < s->n; k++)
		qpt_queue_push(s->w[k].in, r);
	s->sent++;
}

/* An empty round to fill: the oldest merged first when all are out. */
static struct round *next_round(struct shards *s)
{
	struct round *r = &s->r[s->sent % ROUNDS];

	if (s->sent - s->merged == ROUNDS)
		merge(s, r);
	return r;
}

static void shards_start(struct shards *s, unsigned n)
{
	s->n = n;
	s->w = g_new0(struct worker, n);
	s->done = g_async_queue_new();
	s->req_owner = g_hash_table_new(g_direct_hash, g_direct_equal);
	for (int i = 0; i < ROUNDS; i++) {
		struct round *r = &s->r[i];

		r->e = g_new(struct entry, ROUND_FRAMES);
		r->idx = g_new(uint16_t *, n);
		r->nidx = g_new0(guint, n);
		for (unsigned k = 0; k < n; k++)
			r->idx[k] = g_new(uint16_t, ROUND_FRAMES);
	}
	s->stop.end = true;
	s->forget.end = s->forget.forget = true;
	for (unsigned k = 0; k < n; k++) {
		struct worker *w = &s->w[k];
		char name[32];

		w->s = s;
		w->index = k;
		w->fl = qpt_drive_new_like(s->fl); /* the caller's options */
		w->in = g_async_queue_new();
		w->ids = g_array_new(FALSE, FALSE, sizeof(int32_t));
		g_snprintf(name, sizeof(name), "qptrace-an%u", k);
		w->thread = g_thread_new(name, worker_main, w);
	}
}

/* The analysis threads stop analysing (they stay, for shards_join). */
static void shards_stop(struct shards *s)
{
	for (unsigned k = 0; k < s->n; k++)
		qpt_queue_push(s->w[k].in, &s->stop);
	for (unsigned k = 0; k < s->n; k++)
		(void)qpt_queue_pop(s->done); /* each thread's stop, its times taken */
	/* QPTRACE_THREAD_TIMES: what each analysis thread did (tests/shard.py,
	 * tools/bench) */
	for (unsigned k = 0; k < s->n && g_getenv("QPTRACE_THREAD_TIMES"); k++)
		g_printerr("analysis thread %u: %.2f s user, %.2f s system; %" G_GUINT64_FORMAT
			   " frames, %" G_GUINT64_FORMAT " RoCE/IB\n", k, s->w[k].user_s,
			   s->w[k].sys_s, s->w[k].frames, s->w[k].iba);
	for (int i = 0; i < ROUNDS; i++) {
		struct round *r = &s->r[i];

		for (unsigned k = 0; k < s->n; k++)
			g_free(r->idx[k]);
		g_free(r->idx);
		g_free(r->nidx);
		g_free(r->e);
	}
	g_hash_table_destroy(s->req_owner);
}

/* Their engines finished: each thread frees its engine's halves and ends. */
static void shards_join(struct shards *s)
{
	for (unsigned k = 0; k < s->n; k++)
		qpt_queue_push(s->w[k].in, &s->forget);
	for (unsigned k = 0; k < s->n; k++) {
		g_thread_join(s->w[k].thread);
		g_async_queue_unref(s->w[k].in);
	}
	g_async_queue_unref(s->done);
}

void qpt_shard_analyse(const struct opts *o, struct qpt_input *in, GPtrArray *errors,
		       unsigned jobs, struct qpt_flow *fl, struct qpt_analysis *an,
		       qpt_frame_fn fn, void *user)
{
	struct shards s = { .fl = fl, .an = an, .fn = fn, .user = user };
	struct qpt_frame f;
	const struct qpt_pkt *p;
	int64_t ns;
	struct round *r;
	struct qpt_flow **fls;
	GArray **ids;
	int64_t prev_ns = 0;
	bool have_prev = false;
	unsigned maxtap = 0;

	shards_start(&s, MIN(jobs, (unsigned)QPT_MAX_JOBS));
	r = next_round(&s);
	/* r->n < ROUND_FRAMES here: the entry to fill is the decoding's */
	while ((p = qpt_analysis_next(o, in, errors, an, &f, &ns, &r->e[r->n].pkt))) {
		struct entry *e = &r->e[r->n];
		unsigned shard;

		if (p != &e->pkt)
			e->pkt = *p;
		e->f = f;
		e->f.data = NULL;
		e->f.pkt = &e->pkt;
		e->ns = ns;
		e->read_at = an->frames_read;
		e->matched_at = an->frames_matched;
		e->have_prev = have_prev;
		e->prev_ns = prev_ns;
		have_prev = true;
		prev_ns = ns;
		maxtap = MAX(maxtap, MIN(f.file_index, 255u));
		e->maxtap = (uint8_t)maxtap;
		shard = shard_of(&s, &f, &e->pkt);
		e->shard = (uint16_t)shard;
		r->idx[shard][r->nidx[shard]++] = (uint16_t)r->n;
		if (++r->n == ROUND_FRAMES) {
			send(&s, r);
			r = next_round(&s);
		}
		if (qpt_analysis_counted(o, an))
			break;
	}
	if (r->n)
		send(&s, r);
	while (s.merged < s.sent)
		merge(&s, &s.r[s.merged % ROUNDS]);
	shards_stop(&s);
	qpt_input_close(in);
	fls = g_new(struct qpt_flow *, s.n);
	ids = g_new(GArray *, s.n);
	for (unsigned k = 0; k < s.n; k++) {
		fls[k] = s.w[k].fl;
		ids[k] = s.w[k].ids;
	}
	/* the end of the capture as one engine sees it (the last packet of
	 * any conversation): ECN-CE marks near it are undecided, not unanswered */
	qpt_drive_parts_end(fls, s.n);
	for (unsigned k = 0; k < s.n; k++)
		g_assert(qpt_flow_conv_count(fls[k]) == (int32_t)ids[k]->len);
	qpt_end_deliver(fls, s.n, ids, an, fn, user);
	shards_join(&s);
	for (unsigned k = 0; k < s.n; k++) {
		qpt_drive_absorb(fl, fls[k], (const int32_t *)(void *)ids[k]->data);
		g_array_free(ids[k], TRUE);
	}
	g_free(fls);
	g_free(ids);
	g_free(s.w);
	/* --max-qps runs on one thread (report.c): no engine here has a limit */
}
