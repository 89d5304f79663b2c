/* qpt_flow.c - conversations and PSN/ACK analysis (see qpt_flow.h)
 *
 * A "half" is what one BTH can name: packets from one address to a QP at
 * another address.  A reliable connection is two halves: requests A->B to
 * QP b together with B's responses to QP a.  Each half tracks the requests
 * it carries (its own PSN space) and the responses it carries (answers to
 * the twin half's requests).
 *
 * Requester rules mirrored from rxe_comp.c / rxe_resp.c: PSNs are 24-bit
 * and compared with qpt_psn_cmp(); an ACK acknowledges every request up to
 * its PSN; a PSN sequence error NAK carries the expected PSN and only the
 * first NAK of an episode matters; an RNR NAK names the PSN to retry.
 */
#include <math.h>
#include <string.h>

#include "qpt_flow.h"

#define WIN_SIZE 256u /* PSNs remembered per half: original frames, RTT */
#define WIN_MIN 16u   /* a window starts this small and doubles up to WIN_SIZE */
#define MAX_GAPS 8    /* open PSN gaps remembered per half */
#define MAX_READS 16  /* outstanding READ requests remembered per half */
#define QPT_MAX_EPISODES 1024 /* episodes kept per direction (all counted) */

const char *qpt_trigger_name(unsigned trigger)
{
	return qpt_name_of(qpt_trigger_names, trigger, "?");
}

const char *qpt_paired_by_name(enum qpt_paired_by p)
{
	return qpt_name_of(qpt_paired_by_names, p, "none");
}

/* ---- latency histogram --------------------------------------------- */

#define LAT_NBINS (QPT_LAT_BINS_PER_DECADE * QPT_LAT_DECADES)
#define LAT_MIN_US 0.01

static void lat_add(struct qpt_lat *l, double us)
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

static void lat_merge(struct qpt_lat *d, const struct qpt_lat *s)
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

/* ---- halves ---------------------------------------------------------- */

struct half_key {
	uint8_t src[16], dst[16];
	uint32_t qpn;
	uint32_t sqpn; /* UD: source QP from the DETH; else ~0 */
};

struct slot {
	uint32_t psn;
	bool used, ackreq, resent, acked;
	uint64_t frame;
	int64_t ns;
	uint32_t fp;
};

/* PSN -> slot, direct-mapped; grows while a recent PSN would be evicted. */
struct window {
	struct slot *s;
	uint32_t size;
};

struct read_req {
	uint32_t psn, len, span; /* span 0: not yet known */
	uint64_t frame;
	int64_t ns;
	bool answered;
};

/* A message being reassembled from FIRST/MIDDLE/LAST packets. */
struct msg {
	bool open;
	uint8_t op;
	uint64_t first_frame;
	uint32_t len, pkts;
};

struct gap {
	uint32_t first, count;
	int64_t ns;
	struct msg msg; /* the message the gap interrupted, completed by the fill */
};

struct half {
	struct half_key key;
	struct half *twin; /* the last twin_of() answer (halves are never freed) */
	uint8_t family;
	struct qpt_conv *conv;
	int dir;
	uint8_t service; /* opcode & 0xe0 of its first request/response */

	/* requests carried */
	bool req_started;
	uint32_t expected; /* next new PSN */
	uint32_t acked;	   /* highest PSN acknowledged by the twin */
	bool any_acked;
	struct window win;
	struct read_req reads[MAX_READS];
	unsigned nreads;
	struct gap gaps[MAX_GAPS];
	unsigned ngaps;
	struct msg msg;

	/* last request, for capture duplicates and silences */
	bool last_valid;
	uint32_t last_psn, last_fp;
	uint64_t last_frame;
	int64_t last_ns;

	/* recovery */
	bool nak_pending, rnr_pending, in_episode;
	uint64_t nak_frame, rnr_frame;
	int64_t nak_ns, rnr_ns;
	uint32_t nak_psn, rnr_psn, rnr_timer;
	uint32_t episode_top; /* highest PSN sent before the episode */
	bool episode_resent_top; /* ... or, when all that was answered before it,
				  * the highest PSN it resends */
	struct qpt_episode cur;

	/* responses carried */
	bool resp_started;
	uint32_t resp_max; /* highest READ response / atomic ACK PSN sent */
	struct window rwin;
	bool ack_valid;
	uint32_t ack_psn, ack_msn;
	uint8_t ack_synd;
};

#define HALF_CACHE 4096u

struct qpt_flow {
	struct qpt_flow_opts o;
	GHashTable *halves;  /* half_key -> struct half */
	GHashTable *by_addr; /* "src,dst" -> GPtrArray of halves */
	GHashTable *cm;	     /* REQ local comm ID -> struct cm_rec */
	GHashTable *cm_rep;  /* REP local comm ID -> the same struct cm_rec */
	GPtrArray *convs;
	/* Halves by a hash of the key, direct-mapped in front of the table:
	 * most frames find theirs here without hashing the 40-byte key. */
	struct half *recent[HALF_CACHE];
	struct qpt_totals t;
	uint64_t nhalves;
};

/* A CM connection by its REQ: att.from is the REQ's sender, att.to its
 * receiver (with the REP's QPN once one came). */
struct cm_rec {
	struct qpt_cm_attempt att;
	struct qpt_conv *conv;
};

/* Five 64-bit words of key, mixed multiplicatively (the key is 40 bytes). */
static guint key_hash(gconstpointer p)
{
	uint64_t w[sizeof(struct half_key) / 8], h = 0x9e3779b97f4a7c15ull;

	G_STATIC_ASSERT(sizeof(struct half_key) % 8 == 0);
	memcpy(w, p, sizeof(w));
	for (size_t i = 0; i < G_N_ELEMENTS(w); i++)
		h = (h ^ w[i]) * 0xff51afd7ed558ccdull;
	return (guint)(h ^ (h >> 32));
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
	return !memcmp(a, b, sizeof(struct half_key));
}

static guint pair_hash(gconstpointer p)
{
	const uint8_t *b = p;
	guint h = 2166136261u;

	for (size_t i = 0; i < 32; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

static gboolean pair_equal(gconstpointer a, gconstpointer b)
{
	return !memcmp(a, b, 32);
}

static void half_free(gpointer p)
{
	struct half *h = p;

	g_free(h->win.s);
	g_free(h->rwin.s);
	g_free(h);
}

static void conv_free(gpointer p)
{
	struct qpt_conv *c = p;

	for (int d = 0; d < 2; d++) {
		g_free(c->dir[d].ack_rtt.bins);
		g_free(c->dir[d].read_lat.bins);
		g_free(c->dir[d].atomic_lat.bins);
		if (c->dir[d].episodes)
			g_array_free(c->dir[d].episodes, TRUE);
	}
	g_free(c);
}

struct qpt_flow *qpt_flow_new(const struct qpt_flow_opts *opts)
{
	struct qpt_flow *fl = g_new0(struct qpt_flow, 1);

	if (opts)
		fl->o = *opts;
	if (!fl->o.max_halves)
		fl->o.max_halves = 65536;
	if (!fl->o.dup_window_ns)
		fl->o.dup_window_ns = 50000;
	if (!fl->o.timeout_gap_ns)
		fl->o.timeout_gap_ns = 500000;
	fl->halves = g_hash_table_new_full(key_hash, key_equal, NULL, half_free);
	fl->by_addr = g_hash_table_new_full(pair_hash, pair_equal, g_free,
					    (GDestroyNotify)g_ptr_array_unref);
	fl->cm = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
	fl->cm_rep = g_hash_table_new(g_direct_hash, g_direct_equal);
	fl->convs = g_ptr_array_new_with_free_func(conv_free);
	return fl;
}

void qpt_flow_free(struct qpt_flow *fl)
{
	if (!fl)
		return;
	g_hash_table_destroy(fl->halves);
	g_hash_table_destroy(fl->by_addr);
	g_hash_table_destroy(fl->cm_rep);
	g_hash_table_destroy(fl->cm);
	g_ptr_array_free(fl->convs, TRUE);
	g_free(fl);
}

const struct qpt_totals *qpt_flow_totals(struct qpt_flow *fl)
{
	return &fl->t;
}

/* ---- addresses --------------------------------------------------------- */

static uint8_t pkt_addrs(const struct qpt_pkt *p, uint8_t src[16], uint8_t dst[16])
{
	memset(src, 0, 16);
	memset(dst, 0, 16);
	if (p->ip_version) {
		memcpy(src, p->ip_src, 16);
		memcpy(dst, p->ip_dst, 16);
		return p->ip_version;
	}
	if (p->flags & QPT_HAS_LRH) {
		src[0] = p->lrh.slid >> 8;
		src[1] = p->lrh.slid & 0xff;
		dst[0] = p->lrh.dlid >> 8;
		dst[1] = p->lrh.dlid & 0xff;
		return 'L';
	}
	memcpy(src, p->grh.sgid, 16);
	memcpy(dst, p->grh.dgid, 16);
	return 6;
}

/* Adds an event of this kind to the packet's verdict (and its flag). */
static struct qpt_event *emit(struct qpt_verdict *v, uint64_t frame, int64_t ns,
			      const struct half *h, unsigned kind, uint32_t psn,
			      uint64_t orig, uint32_t count, uint32_t code, int64_t dur,
			      const char *detail)
{
	struct qpt_event *ev;

	v->flags |= 1u << kind;
	if (v->nevents == QPT_MAX_EVENTS)
		return NULL; /* cannot happen: fewer kinds apply to one packet */
	ev = &v->ev[v->nevents++];
	*ev = (struct qpt_event){
		.frame = frame,
		.time_ns = ns,
		.conv = h && h->conv ? h->conv->id : -1,
		.dir = h && h->conv ? (int8_t)h->dir : -1,
		.kind = kind,
		.psn = psn,
		.original_frame = orig,
		.count = count,
		.code = code,
		.duration_ns = dur,
		.detail = detail,
	};
	return ev;
}

static struct qpt_conv *conv_new(struct qpt_flow *fl, struct half *h)
{
	struct qpt_conv *c = g_new0(struct qpt_conv, 1);

	c->id = (int32_t)fl->convs->len;
	c->merged_into = -1;
	g_ptr_array_add(fl->convs, c);
	fl->t.conversations++;
	c->pair_evidence = "";
	for (int e = 0; e < 2; e++) {
		c->ep[e].family = h->family;
		memcpy(c->ep[e].addr, e == 0 ? h->key.src : h->key.dst, 16);
	}
	c->ep[1].qpn = h->key.qpn;
	c->ep[1].qpn_known = true;
	if (h->key.sqpn != ~0u) {
		c->ep[0].qpn = h->key.sqpn;
		c->ep[0].qpn_known = true;
	}
	c->dir[0].from = 0;
	c->dir[0].to = 1;
	c->dir[1].from = 1;
	c->dir[1].to = 0;
	h->conv = c;
	h->dir = 0;
	return c;
}

static unsigned recent_slot(const struct half_key *k)
{
	uint32_t a, b;

	memcpy(&a, k->src + 12, 4); /* IPv4 addresses and the ends of IPv6/GIDs */
	memcpy(&b, k->dst + 12, 4);
	return ((k->qpn ^ k->sqpn ^ a ^ (b << 7)) * 0x9e3779b1u) >> 20 & (HALF_CACHE - 1);
}

static struct half *half_get(struct qpt_flow *fl, const struct qpt_pkt *p,
			     bool create)
{
	struct half_key k;
	struct half *h, **slot;
	uint8_t fam;
	GPtrArray *list;

	memset(&k, 0, sizeof(k));
	fam = pkt_addrs(p, k.src, k.dst);
	k.qpn = p->bth.dqpn;
	k.sqpn = (p->bth.opcode & 0xe0) == QPT_SVC_UD && p->flags & QPT_H_DETH ?
			 p->deth.sqpn :
			 ~0u;
	slot = &fl->recent[recent_slot(&k)];
	if (*slot && !memcmp(&(*slot)->key, &k, sizeof(k)))
		return *slot;
	h = g_hash_table_lookup(fl->halves, &k);
	if (!h && create) {
		if (fl->nhalves >= fl->o.max_halves)
			return NULL;
		h = g_new0(struct half, 1);
		h->key = k;
		h->family = fam;
		h->service = 0xff;
		g_hash_table_insert(fl->halves, &h->key, h);
		fl->nhalves++;
		list = g_hash_table_lookup(fl->by_addr, k.src);
		if (!list) {
			list = g_ptr_array_new();
			g_hash_table_insert(fl->by_addr, g_memdup2(k.src, 32), list);
		}
		g_ptr_array_add(list, h);
	}
	if (h)
		*slot = h;
	return h;
}

static struct half *twin_of(struct qpt_flow *fl, struct half *h)
{
	struct half_key k;

	if (!h->conv || h->key.sqpn != ~0u)
		return NULL;
	if (!h->conv->ep[h->dir].qpn_known)
		return NULL;
	/* the twin's addresses are h's swapped: only the QPN can differ */
	if (h->twin && h->twin->key.qpn == h->conv->ep[h->dir].qpn)
		return h->twin;
	memset(&k, 0, sizeof(k));
	memcpy(k.src, h->key.dst, 16);
	memcpy(k.dst, h->key.src, 16);
	k.qpn = h->conv->ep[h->dir].qpn;
	k.sqpn = ~0u;
	h->twin = g_hash_table_lookup(fl->halves, &k);
	return h->twin;
}

/* ---- merging two conversations when pairing comes late --------------- */

static void dir_merge(struct qpt_dir *d, const struct qpt_dir *s)
{
	bool had_packets = d->packets != 0;

	for (unsigned k = 0; k < QPT_C_COUNT; k++) {
		uint64_t *dv = (uint64_t *)(void *)((char *)d + qpt_counters[k].offset);

		*dv += qpt_counter(s, k);
	}
	for (int i = 0; i < QPT_NAK_KINDS; i++)
		d->naks[i] += s->naks[i];
	for (int i = 0; i < QPT_OP_COUNT; i++) {
		struct qpt_opstat *a = &d->ops[i];
		const struct qpt_opstat *b = &s->ops[i];

		if (!b->count)
			continue;
		a->min_size = a->count ? MIN(a->min_size, b->min_size) : b->min_size;
		a->max_size = MAX(a->max_size, b->max_size);
		a->count += b->count;
		a->bytes += b->bytes;
		a->packets += b->packets;
	}
	if (s->packets) {
		if (!had_packets || s->first_ns < d->first_ns)
			d->first_ns = s->first_ns;
		d->last_ns = MAX(d->last_ns, s->last_ns);
	}
	if (s->psn_seen && !d->psn_seen) {
		d->psn_seen = true;
		d->first_psn = s->first_psn;
		d->last_psn = s->last_psn;
		d->psn_span = s->psn_span;
	}
	lat_merge(&d->ack_rtt, &s->ack_rtt);
	lat_merge(&d->read_lat, &s->read_lat);
	lat_merge(&d->atomic_lat, &s->atomic_lat);
	if (s->episodes) {
		if (!d->episodes)
			d->episodes = g_array_new(FALSE, TRUE, sizeof(struct qpt_episode));
		g_array_append_vals(d->episodes, s->episodes->data, s->episodes->len);
	}
}

/* Folds conversation o into c: o's direction od becomes c's direction cd;
 * every half that pointed at o follows. */
static void conv_fold(struct qpt_flow *fl, struct qpt_conv *c, int cd,
		      struct qpt_conv *o, int od)
{
	GHashTableIter it;
	gpointer v;

	dir_merge(&c->dir[cd], &o->dir[od]);
	o->merged = true;
	o->merged_into = c->id;
	fl->t.conversations--;
	g_hash_table_iter_init(&it, fl->halves);
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		struct half *x = v;

		if (x->conv == o) {
			x->conv = c;
			x->dir = cd;
		}
	}
}

/* Make req (A->B to qb) and resp (B->A to qa) the two halves of one
 * conversation.  When both already had one, the older (lower id) one
 * stays, so that ids already shown for earlier packets remain valid. */
static struct qpt_conv *pair(struct qpt_flow *fl, struct half *req,
			     struct half *resp, enum qpt_paired_by by,
			     const char *evidence)
{
	struct qpt_conv *c;

	if (req->conv && resp->conv && req->conv != resp->conv) {
		if (resp->conv->id < req->conv->id)
			conv_fold(fl, resp->conv, 1 - resp->dir, req->conv, req->dir);
		else
			conv_fold(fl, req->conv, 1 - req->dir, resp->conv, resp->dir);
	} else if (!req->conv && resp->conv) {
		req->conv = resp->conv;
		req->dir = 1 - resp->dir;
	} else if (!req->conv) {
		conv_new(fl, req);
	}
	c = req->conv;
	if (resp->conv != c) {
		resp->conv = c;
		resp->dir = 1 - req->dir;
	}
	c->ep[req->dir].qpn = resp->key.qpn;
	c->ep[req->dir].qpn_known = true;
	c->ep[resp->dir].qpn = req->key.qpn;
	c->ep[resp->dir].qpn_known = true;
	if (by > c->paired_by || c->paired_by == QPT_PAIR_NONE) {
		c->paired_by = by;
		c->pair_evidence = evidence;
	}
	return c;
}

/* The halves going the other way between h's two addresses. */
static GPtrArray *reverse_halves(struct qpt_flow *fl, const struct half *h)
{
	uint8_t k[32];

	memcpy(k, h->key.dst, 16);
	memcpy(k + 16, h->key.src, 16);
	return g_hash_table_lookup(fl->by_addr, k);
}

/* A response with this PSN arrived on h, unpaired: find the request half
 * (h->dst -> h->src) whose PSNs it answers. */
static struct half *find_requester(struct qpt_flow *fl, struct half *h,
				   uint32_t psn)
{
	GPtrArray *list = reverse_halves(fl, h);
	struct half *best = NULL;
	int32_t best_d = 0;

	for (guint i = 0; list && i < list->len; i++) {
		struct half *r = g_ptr_array_index(list, i);
		int32_t d;

		if (r == h || !r->req_started || r->key.sqpn != ~0u)
			continue;
		if (r->conv && twin_of(fl, r))
			continue; /* already paired */
		d = qpt_psn_diff(r->expected, psn);
		/* PSN must be one the requester sent (READ spans reach ahead). */
		if (d < 0 || d > 65536)
			continue;
		if (!best || d < best_d) {
			best = r;
			best_d = d;
		}
	}
	return best;
}

/* ---- per-direction helpers -------------------------------------------- */

static struct qpt_dir *dir_of(struct half *h)
{
	return h->conv ? &h->conv->dir[h->dir] : NULL;
}

static void win_grow(struct window *w)
{
	uint32_t n = w->size * 2;
	struct slot *t = g_new0(struct slot, n);

	/* distinct modulo size, so distinct modulo 2 * size */
	for (uint32_t i = 0; i < w->size; i++)
		if (w->s[i].used)
			t[w->s[i].psn & (n - 1)] = w->s[i];
	g_free(w->s);
	w->s = t;
	w->size = n;
}

static struct slot *slot_of(struct window *w, uint32_t psn, bool create)
{
	struct slot *s;

	if (!w->s) {
		if (!create)
			return NULL;
		w->size = WIN_MIN;
		w->s = g_new0(struct slot, WIN_MIN);
	}
	s = &w->s[psn & (w->size - 1)];
	if (s->used && s->psn == psn)
		return s;
	if (!create)
		return NULL;
	while (s->used && w->size < WIN_SIZE &&
	       ABS(qpt_psn_diff(psn, s->psn)) < (int32_t)WIN_SIZE) {
		win_grow(w);
		s = &w->s[psn & (w->size - 1)];
	}
	memset(s, 0, sizeof(*s));
	s->psn = psn;
	s->used = true;
	return s;
}

static void episode_close(struct half *h, uint64_t frame, int64_t ns)
{
	struct qpt_dir *d = dir_of(h);

	if (!h->in_episode)
		return;
	h->in_episode = false;
	h->cur.end_frame = frame;
	h->cur.end_ns = ns;
	if (!d)
		return;
	if (!d->episodes)
		d->episodes = g_array_new(FALSE, TRUE, sizeof(struct qpt_episode));
	if (d->episodes->len < QPT_MAX_EPISODES)
		g_array_append_val(d->episodes, h->cur);
}

static struct read_req *read_find(struct half *h, uint32_t psn)
{
	for (unsigned i = 0; i < h->nreads; i++) {
		struct read_req *r = &h->reads[i];
		uint32_t span = r->span ? r->span : MAX(1u, (r->len + 255) / 256);
		int32_t d = qpt_psn_diff(psn, r->psn);

		if (d >= 0 && (uint32_t)d < span)
			return r;
	}
	return NULL;
}

/* The last PSN a request takes: a READ's responses span its length. */
static uint32_t request_end(const struct half *h, const struct qpt_pkt *p)
{
	uint32_t mtu = h->conv ? h->conv->mtu : 0, span = 1;

	if (qpt_opcodes[p->bth.opcode].flags & QPT_O_READ && mtu && p->reth.dmalen)
		span = (p->reth.dmalen + mtu - 1) / mtu;
	return qpt_psn_add(p->bth.psn, (int32_t)span - 1);
}

static void read_add(struct half *h, uint32_t psn, uint32_t len, uint32_t mtu,
		     uint64_t frame, int64_t ns)
{
	struct read_req *r;

	if (h->nreads == MAX_READS) {
		memmove(h->reads, h->reads + 1, sizeof(h->reads[0]) * (MAX_READS - 1));
		h->nreads--;
	}
	r = &h->reads[h->nreads++];
	memset(r, 0, sizeof(*r));
	r->psn = psn;
	r->len = len;
	r->frame = frame;
	r->ns = ns;
	if (mtu)
		r->span = len ? (len + mtu - 1) / mtu : 1;
}

static void learn_mtu(struct half *h, const struct qpt_pkt *p)
{
	const struct qpt_opcode_info *oi = &qpt_opcodes[p->bth.opcode];

	if (!h->conv || !(oi->flags & (QPT_O_FIRST | QPT_O_MIDDLE)) ||
	    (oi->flags & QPT_O_LAST))
		return;
	if (qpt_mtu_bytes(1) <= p->payload_len && p->payload_len <= 4096 &&
	    !(p->payload_len & (p->payload_len - 1)))
		h->conv->mtu = p->payload_len;
}

static void set_transport(struct half *h, uint8_t opcode)
{
	if (h->service == 0xff && (opcode & 0xe0) != QPT_SVC_CNP)
		h->service = opcode & 0xe0;
	if (h->conv && !h->conv->transport[0] && h->service != 0xff)
		g_strlcpy(h->conv->transport, qpt_service_name(h->service),
			  sizeof(h->conv->transport));
}

/* ---- requests ---------------------------------------------------------- */

/* Adds a request packet seen for the first time to message m; a message
 * is counted once, when its LAST (or ONLY) packet is first seen. */
static void message_add(struct msg *m, struct qpt_dir *d, const struct qpt_pkt *p,
			uint64_t frame, struct qpt_verdict *v)
{
	const struct qpt_opcode_info *oi = &qpt_opcodes[p->bth.opcode];
	struct qpt_opstat *os;
	uint32_t len;

	if (oi->op == QPT_OP_NONE || !(oi->flags & QPT_O_REQ))
		return;
	if (oi->flags & QPT_O_FIRST || !m->open) {
		m->open = true;
		m->first_frame = frame;
		m->len = 0;
		m->pkts = 0;
		m->op = oi->op;
	}
	m->len += p->payload_len;
	m->pkts++;
	if (oi->op != QPT_OP_SEND && oi->op != QPT_OP_WRITE)
		m->op = oi->op; /* the LAST with Immediate / Invalidate names it */
	if (!(oi->flags & QPT_O_LAST))
		return;
	m->open = false;
	len = m->len;
	if (oi->op == QPT_OP_READ || oi->op == QPT_OP_FLUSH)
		len = p->reth.dmalen;
	os = &d->ops[m->op];
	os->min_size = os->count ? MIN(os->min_size, len) : len;
	os->max_size = MAX(os->max_size, len);
	os->count++;
	os->bytes += len;
	os->packets += m->pkts;
	v->msg_first_frame = m->first_frame;
	v->msg_len = len;
	v->msg_packets = m->pkts;
	v->msg_op = m->op;
}

/* The gap this never-seen PSN fills, or NULL. */
static struct gap *gap_of(struct half *h, uint32_t psn)
{
	for (unsigned i = 0; i < h->ngaps; i++) {
		int32_t off = qpt_psn_diff(psn, h->gaps[i].first);

		if (off >= 0 && (uint32_t)off < h->gaps[i].count)
			return &h->gaps[i];
	}
	return NULL;
}

static void request(struct qpt_flow *fl, struct half *h, const struct qpt_pkt *p,
		    uint64_t frame, int64_t ns, struct qpt_verdict *v)
{
	const struct qpt_opcode_info *oi = &qpt_opcodes[p->bth.opcode];
	struct qpt_dir *d = dir_of(h);
	uint32_t psn = p->bth.psn;
	uint32_t fp = p->icrc ^ (p->payload_len * 2654435761u);
	int64_t silence = h->last_valid ? ns - h->last_ns : 0;
	uint64_t prev_frame = h->last_valid ? h->last_frame : 0;
	bool ud = (p->bth.opcode & 0xe0) == QPT_SVC_UD;
	struct slot *s;
	struct gap *fill;
	int32_t cmp;

	d->req_packets++;
	if (ud) { /* a UD QP's PSNs span all its destinations: no sequence */
		message_add(&h->msg, d, p, frame, v);
		return;
	}
	/* The same bytes twice in a row within microseconds: a capture copy. */
	if (h->last_valid && h->last_psn == psn && h->last_fp == fp &&
	    silence <= fl->o.dup_window_ns) {
		v->flags |= QPT_V(DUPLICATE);
		v->original_frame = h->last_frame;
		d->duplicates++;
		emit(v, frame, ns, h, QPT_VB_DUPLICATE, psn, h->last_frame, 0, 0, 0,
		     "same PSN and bytes as the previous packet");
		return;
	}
	h->last_valid = true;
	h->last_psn = psn;
	h->last_fp = fp;
	h->last_frame = frame;
	h->last_ns = ns;

	if (!h->req_started) {
		h->req_started = true;
		h->expected = psn;
		d->psn_seen = true;
		d->first_psn = psn;
		d->last_psn = psn;
	}
	cmp = qpt_psn_diff(psn, h->expected);
	if (cmp >= 0) {
		/* New PSN.  After a READ whose span is unknown, any PSN within
		 * its possible span is not a gap. */
		struct read_req *r = h->nreads ? &h->reads[h->nreads - 1] : NULL;
		uint32_t skipped = (uint32_t)cmp;

		if (r && !r->span && qpt_psn_diff(psn, r->psn) > 0 &&
		    (uint32_t)qpt_psn_diff(psn, r->psn) <= MAX(1u, (r->len + 255) / 256) &&
		    qpt_psn_add(r->psn, 1) == h->expected) {
			r->span = (uint32_t)qpt_psn_diff(psn, r->psn);
			skipped = 0;
		}
		if (skipped) {
			struct gap *g;

			v->flags |= QPT_V(PSN_GAP);
			v->gap_psns = skipped;
			v->gap_first_psn = h->expected;
			d->psn_gaps++;
			d->missing_psns += skipped;
			if (h->ngaps == MAX_GAPS) {
				memmove(h->gaps, h->gaps + 1, sizeof(h->gaps[0]) * (MAX_GAPS - 1));
				h->ngaps--;
			}
			g = &h->gaps[h->ngaps++];
			g->first = h->expected;
			g->count = skipped;
			g->ns = ns;
			/* the interrupted message completes when the gap is filled */
			g->msg = h->msg;
			h->msg.open = false;
			emit(v, frame, ns, h, QPT_VB_PSN_GAP, psn, 0, skipped, 0, 0,
			     "PSNs skipped: lost before the capture point or from the capture");
		}
		if (h->in_episode && qpt_psn_diff(psn, h->episode_top) > 0)
			episode_close(h, frame, ns);
		s = slot_of(&h->win, psn, true);
		s->frame = frame;
		s->ns = ns;
		s->fp = fp;
		s->ackreq = p->bth.ackreq;
		h->expected = qpt_psn_add(psn, 1);
		if (oi->flags & QPT_O_READ) {
			uint32_t mtu = h->conv ? h->conv->mtu : 0;

			read_add(h, psn, p->reth.dmalen, mtu, frame, ns);
			if (h->reads[h->nreads - 1].span)
				h->expected = qpt_psn_add(psn, (int32_t)h->reads[h->nreads - 1].span);
		}
		d->psn_span = (uint32_t)qpt_psn_diff(h->expected, d->first_psn);
		d->last_psn = qpt_psn_add(h->expected, -1);
		message_add(&h->msg, d, p, frame, v);
		return;
	}

	/* An old PSN: retransmission, READ retry, or the late fill of a gap. */
	s = slot_of(&h->win, psn, false);
	fill = s ? NULL : gap_of(h, psn);
	if (fill) {
		/* First sight of a PSN that a gap skipped: its bytes count once. */
		struct slot *n = slot_of(&h->win, psn, true);

		n->frame = frame;
		n->ns = ns;
		n->fp = fp;
		message_add(&fill->msg, d, p, frame, v);
		if (!h->nak_pending && !h->in_episode && !h->rnr_pending &&
		    silence < fl->o.timeout_gap_ns) {
			v->flags |= QPT_V(OUT_OF_ORDER);
			d->out_of_order++;
			emit(v, frame, ns, h, QPT_VB_OUT_OF_ORDER, psn, 0, 0, 0, 0,
			     "fills a PSN gap without a resend trigger");
			return;
		}
		n->resent = true;
	}
	v->flags |= QPT_V(RETRANSMISSION);
	d->retransmitted_packets++;
	if (s) {
		v->original_frame = s->frame;
		s->resent = true;
	}
	if (oi->flags & QPT_O_READ && !s) {
		struct read_req *r = read_find(h, psn);

		if (r) { /* re-issued from inside the first READ's range */
			v->original_frame = r->frame;
			d->read_retries++;
			emit(v, frame, ns, h, QPT_VB_READ_RETRY, psn, r->frame, 0, 0, 0,
			     "READ re-issued inside its response range");
		}
	}
	if (h->rnr_pending && psn == h->rnr_psn) {
		h->rnr_pending = false;
		v->flags |= QPT_V(RNR_RETRY);
		v->nak_frame = h->rnr_frame;
		d->rnr_retries++;
		emit(v, frame, ns, h, QPT_VB_RNR_RETRY, psn, h->rnr_frame, 0,
		     h->rnr_timer, ns - h->rnr_ns, "retry after RNR NAK");
	} else if (!h->in_episode) {
		/* A go-back-N episode starts with its first resent packet. */
		h->in_episode = true;
		memset(&h->cur, 0, sizeof(h->cur));
		h->cur.first_resent_frame = frame;
		h->cur.from_psn = psn;
		h->episode_top = qpt_psn_add(h->expected, -1);
		/* Everything sent before was answered already (a READ's
		 * responses went missing before later ones came): recovered
		 * once what this episode resends is answered, see below. */
		h->episode_resent_top =
			h->any_acked && qpt_psn_diff(h->acked, h->episode_top) >= 0 &&
			qpt_psn_diff(h->acked, h->episode_top) < 65536;
		if (h->episode_resent_top)
			h->episode_top = request_end(h, p);
		if (h->nak_pending) {
			h->cur.trigger = QPT_TRIGGER_NAK;
			h->cur.trigger_frame = h->nak_frame;
			h->cur.start_ns = h->nak_ns;
			v->nak_frame = h->nak_frame;
		} else if (silence >= fl->o.timeout_gap_ns) {
			/* from the last packet before the silence */
			h->cur.trigger = QPT_TRIGGER_TIMEOUT;
			h->cur.timeout = true;
			h->cur.trigger_frame = prev_frame;
			h->cur.start_ns = ns - silence;
			d->timeouts++;
		} else {
			h->cur.trigger = v->flags & QPT_V(READ_RETRY) ?
						 QPT_TRIGGER_READ_RETRY :
						 QPT_TRIGGER_RESEND;
			h->cur.trigger_frame = frame;
			h->cur.start_ns = ns;
		}
		h->nak_pending = false;
		d->gbn_episodes++;
		v->trigger = h->cur.trigger;
		emit(v, frame, ns, h, QPT_VB_GBN_START, psn, h->cur.trigger_frame,
		     (uint32_t)d->gbn_episodes, 0, ns - h->cur.start_ns,
		     qpt_name_of(qpt_trigger_descr, h->cur.trigger, "?"));
		if (h->cur.trigger == QPT_TRIGGER_TIMEOUT)
			emit(v, frame, ns, h, QPT_VB_TIMEOUT_RESEND, psn, prev_frame, 0, 0,
			     silence, "resend after a silence (local ACK timeout)");
	}
	if (h->in_episode) {
		h->cur.resent_packets++;
		v->episode = (uint32_t)d->gbn_episodes;
		if (h->episode_resent_top &&
		    qpt_psn_diff(request_end(h, p), h->episode_top) > 0)
			h->episode_top = request_end(h, p);
	}
	emit(v, frame, ns, h, QPT_VB_RETRANSMISSION, psn, v->original_frame, 0, 0,
	     0, v->flags & QPT_V(READ_RETRY) ? "READ re-issued inside its response range" :
	     s ? "PSN sent before" : "PSN sent before (original not captured)");
}

/* ---- responses --------------------------------------------------------- */

static void ack_requests(struct half *h, struct half *t,
			 const struct qpt_pkt *p, uint64_t frame, int64_t ns,
			 struct qpt_verdict *v, bool is_ack)
{
	struct qpt_dir *d = dir_of(h), *td = dir_of(t);
	uint32_t psn = p->bth.psn;
	/* the first ACK covers every request since the first one */
	uint32_t from = t->any_acked ? qpt_psn_add(t->acked, 1) :
			td && td->psn_seen ? td->first_psn : psn;
	int32_t n = qpt_psn_diff(psn, from);
	unsigned ackreqs = 0;
	struct slot *hit = NULL;

	if (n < 0 || n > (int32_t)WIN_SIZE * 64)
		n = -1; /* stale or foreign: nothing new acknowledged */
	for (int32_t i = 0; i <= n && i < (int32_t)WIN_SIZE; i++) {
		uint32_t q = qpt_psn_add(psn, -i);
		struct slot *s = slot_of(&t->win, q, false);

		if (!s || s->acked)
			continue;
		s->acked = true;
		if (s->ackreq)
			ackreqs++;
		if (!hit)
			hit = s;
	}
	if (n >= 0) {
		t->acked = psn;
		t->any_acked = true;
	}
	if (hit && !hit->resent) { /* Karn: no RTT from resent requests */
		v->acks_frame = hit->frame;
		v->ack_rtt_ns = ns - hit->ns;
		if (is_ack && td)
			lat_add(&td->ack_rtt, (double)(ns - hit->ns) / 1000.0);
	}
	if (is_ack && ackreqs > 1) {
		d->coalesced_acks++;
		emit(v, frame, ns, h, QPT_VB_COALESCED_ACK, psn, 0, ackreqs, 0, 0,
		     "one ACK for several requests that asked for one");
	}
	/* Recovered once the responder answers up to the highest PSN sent
	 * before the episode (even with a resent response: READs). */
	if (t->in_episode && qpt_psn_diff(psn, t->episode_top) >= 0 &&
	    qpt_psn_diff(psn, t->episode_top) < 65536)
		episode_close(t, frame, ns);
}

static void response(struct qpt_flow *fl, struct half *h, const struct qpt_pkt *p,
		     uint64_t frame, int64_t ns, struct qpt_verdict *v)
{
	const struct qpt_opcode_info *oi = &qpt_opcodes[p->bth.opcode];
	struct qpt_dir *d;
	struct half *t = twin_of(fl, h);
	uint32_t psn = p->bth.psn;

	if (!t) {
		struct half *r = find_requester(fl, h, psn);

		if (r) {
			pair(fl, r, h,
			     QPT_PAIR_TRAFFIC,
			     oi->flags & QPT_O_READ ? "READ response PSN answers READ request" :
			     oi->flags & QPT_O_ATOMIC ? "atomic ACK PSN answers atomic request" :
							"ACK PSN answers requests");
			set_transport(r, r->service == 0xff ? p->bth.opcode : r->service);
			t = r;
		}
	}
	if (!h->conv)
		conv_new(fl, h);
	set_transport(h, p->bth.opcode);
	v->conv = h->conv->id;
	v->dir = (int8_t)h->dir;
	d = dir_of(h);
	d->resp_packets++;

	if (p->flags & QPT_H_AETH) {
		const struct qpt_aeth *a = &p->aeth;

		if (a->kind == QPT_AETH_NAK) {
			v->flags |= QPT_V(NAK);
			d->naks[MIN(a->value, QPT_NAK_KINDS - 1u)]++;
			emit(v, frame, ns, h, QPT_VB_NAK, psn, 0, 0, a->value, 0,
			     qpt_nak_name(a->value));
			if (t && a->value == QPT_NAK_PSN_SEQ_ERR && !t->in_episode &&
			    !t->nak_pending) {
				t->nak_pending = true;
				t->nak_frame = frame;
				t->nak_ns = ns;
				t->nak_psn = psn;
			}
			/* A sequence error NAK acknowledges every PSN before it. */
			if (t && a->value == QPT_NAK_PSN_SEQ_ERR) {
				struct qpt_pkt q = *p;

				q.bth.psn = qpt_psn_add(psn, -1);
				ack_requests(h, t, &q, frame, ns, v, false);
			}
			h->ack_valid = false;
			return;
		}
		if (a->kind == QPT_AETH_RNR) {
			v->flags |= QPT_V(RNR_NAK);
			d->rnr_naks++;
			emit(v, frame, ns, h, QPT_VB_RNR_NAK, psn, 0, 0, a->value,
			     (int64_t)(qpt_rnr_timer_us(a->value) * 1000), "receiver not ready");
			if (t) {
				t->rnr_pending = true;
				t->rnr_frame = frame;
				t->rnr_ns = ns;
				t->rnr_psn = psn;
				t->rnr_timer = a->value;
			}
			h->ack_valid = false;
			return;
		}
	}
	if (oi->flags & QPT_O_ACK) {
		d->acks++;
		if (h->ack_valid && h->ack_psn == psn && h->ack_msn == p->aeth.msn &&
		    h->ack_synd == p->aeth.syndrome) {
			v->flags |= QPT_V(DUP_ACK);
			d->dup_acks++;
			emit(v, frame, ns, h, QPT_VB_DUP_ACK, psn, 0, 0, 0, 0,
			     "same PSN and MSN as the previous ACK");
		}
		h->ack_valid = true;
		h->ack_psn = psn;
		h->ack_msn = p->aeth.msn;
		h->ack_synd = p->aeth.syndrome;
		if (t)
			ack_requests(h, t, p, frame, ns, v, true);
		return;
	}

	/* READ responses and atomic ACKs: the responder's own sequence. */
	learn_mtu(h, p);
	if (h->resp_started && qpt_psn_diff(psn, h->resp_max) <= 0) {
		struct slot *s = slot_of(&h->rwin, psn, false);

		v->flags |= QPT_V(RETRANSMISSION);
		d->retransmitted_packets++;
		if (s)
			v->original_frame = s->frame;
		emit(v, frame, ns, h, QPT_VB_RETRANSMISSION, psn, v->original_frame,
		     0, 0, 0, "response resent by the responder");
	} else {
		struct slot *s = slot_of(&h->rwin, psn, true);

		s->frame = frame;
		s->ns = ns;
		h->resp_started = true;
		h->resp_max = psn;
	}
	if (t) {
		struct read_req *r = oi->flags & QPT_O_READ ? read_find(t, psn) : NULL;

		if (r) {
			v->read_request_frame = r->frame;
			if (!r->answered && psn == r->psn) {
				r->answered = true;
				lat_add(&dir_of(t)->read_lat, (double)(ns - r->ns) / 1000.0);
			}
			if (oi->flags & QPT_O_LAST && !r->span) {
				r->span = (uint32_t)qpt_psn_diff(psn, r->psn) + 1;
				/* the requester's next PSN follows the READ's span */
				if (t->expected == qpt_psn_add(r->psn, 1))
					t->expected = qpt_psn_add(r->psn, (int32_t)r->span);
			}
		}
		if (oi->flags & QPT_O_ATOMIC) {
			struct slot *s = slot_of(&t->win, psn, false);

			if (s && !s->resent)
				lat_add(&dir_of(t)->atomic_lat, (double)(ns - s->ns) / 1000.0);
		}
		/* Responses carrying an AETH acknowledge up to their PSN. */
		if (p->flags & QPT_H_AETH)
			ack_requests(h, t, p, frame, ns, v, false);
	}
}

/* ---- CM ---------------------------------------------------------------- */

static struct half *half_for(struct qpt_flow *fl, uint8_t fam, const uint8_t *src,
			     const uint8_t *dst, uint32_t qpn)
{
	struct qpt_pkt p;

	memset(&p, 0, sizeof(p));
	if (fam == 'L') {
		p.flags = QPT_HAS_LRH;
		p.lrh.slid = (uint16_t)(src[0] << 8 | src[1]);
		p.lrh.dlid = (uint16_t)(dst[0] << 8 | dst[1]);
	} else {
		p.ip_version = fam;
		memcpy(p.ip_src, src, 16);
		memcpy(p.ip_dst, dst, 16);
	}
	p.bth.dqpn = qpn;
	p.bth.opcode = 0;
	return half_get(fl, &p, true);
}

/* The connection a CM message belongs to, by either side's comm ID: the
 * REQ sender's (the table key) or the REP sender's. */
static struct cm_rec *cm_find(struct qpt_flow *fl, uint32_t a, uint32_t b)
{
	const uint32_t ids[2] = { a, b };

	for (int i = 0; i < 2; i++) {
		struct cm_rec *r = g_hash_table_lookup(fl->cm, GUINT_TO_POINTER(ids[i]));

		if (!r)
			r = g_hash_table_lookup(fl->cm_rep, GUINT_TO_POINTER(ids[i]));
		if (r)
			return r;
	}
	return NULL;
}

static void cm_message(struct qpt_flow *fl, const struct qpt_pkt *p, uint64_t frame,
		       int64_t ns, struct qpt_verdict *v)
{
	const struct qpt_cm *cm = &p->cm;
	struct cm_rec *r;
	uint8_t src[16], dst[16];
	uint8_t fam = pkt_addrs(p, src, dst);

	if (cm->msg == QPT_CM_REQ) {
		if (g_hash_table_size(fl->cm) >= fl->o.max_halves)
			return;
		r = g_hash_table_lookup(fl->cm, GUINT_TO_POINTER(cm->local_comm_id));
		if (r)
			return; /* a resent REQ */
		r = g_new0(struct cm_rec, 1);
		r->att.from.family = r->att.to.family = fam;
		memcpy(r->att.from.addr, src, 16);
		memcpy(r->att.to.addr, dst, 16);
		r->att.from.qpn = cm->local_qpn;
		r->att.from.qpn_known = true;
		r->att.info.req_frame = frame;
		r->att.info.req_ns = ns;
		r->att.info.req_comm_id = cm->local_comm_id;
		r->att.info.service_id = cm->service_id;
		r->att.info.path_mtu = qpt_mtu_bytes(cm->path_mtu);
		r->att.info.psn[0] = cm->starting_psn;
		if (p->flags & QPT_HAS_CMA_IP) {
			r->att.info.has_ip = true;
			r->att.info.ip = p->cma;
		}
		g_hash_table_insert(fl->cm, GUINT_TO_POINTER(cm->local_comm_id), r);
		return;
	}
	if (cm->msg == QPT_CM_SIDR_REQ || cm->msg == QPT_CM_SIDR_REP ||
	    cm->msg == QPT_CM_CLASSPORTINFO)
		return;
	r = cm_find(fl, cm->remote_comm_id, cm->local_comm_id);
	if (!r) {
		v->flags |= QPT_V(CM_UNKNOWN);
		emit(v, frame, ns, NULL, QPT_VB_CM_UNKNOWN, 0, 0, 0, cm->msg, 0,
		     qpt_cm_msg_name(cm->msg));
		return;
	}
	switch (cm->msg) {
	case QPT_CM_REP: {
		struct half *ha, *hb;

		if (r->att.info.rep_frame)
			break;
		r->att.info.rep_frame = frame;
		r->att.info.rep_ns = ns;
		r->att.info.rep_comm_id = cm->local_comm_id;
		g_hash_table_insert(fl->cm_rep, GUINT_TO_POINTER(cm->local_comm_id), r);
		r->att.info.psn[1] = cm->starting_psn;
		r->att.to.qpn = cm->local_qpn;
		r->att.to.qpn_known = true;
		ha = half_for(fl, r->att.from.family, r->att.from.addr, r->att.to.addr,
			      r->att.to.qpn);
		hb = half_for(fl, r->att.from.family, r->att.to.addr, r->att.from.addr,
			      r->att.from.qpn);
		if (!ha || !hb)
			break;
		r->conv = pair(fl, ha, hb, QPT_PAIR_CM, "CM REQ/REP");
		r->conv->has_cm = true;
		if (r->att.info.path_mtu)
			r->conv->mtu = r->att.info.path_mtu;
		/* endpoint 0 is the REQ sender when the CM created the pair */
		break;
	}
	case QPT_CM_RTU: r->att.info.rtu_frame = frame; r->att.info.rtu_ns = ns; break;
	case QPT_CM_DREQ:
		if (!r->att.info.dreq_frame) {
			r->att.info.dreq_frame = frame;
			r->att.info.dreq_ns = ns;
		}
		break;
	case QPT_CM_DREP:
		if (!r->att.info.drep_frame) {
			r->att.info.drep_frame = frame;
			r->att.info.drep_ns = ns;
		}
		break;
	case QPT_CM_REJ: {
		struct qpt_event *ev = emit(v, frame, ns, NULL, QPT_VB_CM_REJECT, p->bth.psn,
					    r->att.info.req_frame, 0, cm->reason, 0,
					    qpt_cm_rej_reason_text(cm->reason));

		if (ev && r->conv)
			ev->conv = r->conv->id;
		r->att.info.rej_frame = frame;
		r->att.info.rej_reason = cm->reason;
		break;
	}
	case QPT_CM_MRA: r->att.info.mra_frame = frame; break;
	default: break;
	}
	if (r->conv) {
		r->conv->cm = r->att.info;
		v->conv = r->conv->id;
	}
}

/* A first request on h whose PSN continues what an unpaired response
 * half (h->dst -> h->src, ACKs seen before any request, as when the
 * capture starts mid-connection) acknowledged: the same connection. */
static bool join_responder(struct qpt_flow *fl, struct half *h, uint32_t psn)
{
	GPtrArray *list = reverse_halves(fl, h);
	struct half *found = NULL;

	for (guint i = 0; list && i < list->len; i++) {
		struct half *r = g_ptr_array_index(list, i);
		int32_t d;

		if (r == h || !r->conv || r->req_started || !r->ack_valid ||
		    r->key.sqpn != ~0u || r->conv->ep[r->dir].qpn_known)
			continue;
		d = qpt_psn_diff(psn, r->ack_psn);
		if (d < 1 || d > 64)
			continue;
		if (found)
			return false; /* ambiguous: wait for stronger evidence */
		found = r;
	}
	if (!found)
		return false;
	pair(fl, h, found, QPT_PAIR_TRAFFIC, "requests continue the PSNs ACKed before");
	return true;
}

/* A UD datagram names both QPs (DETH source QP): the reverse flow, if
 * seen, is the other direction of the same conversation. */
static void ud_pair_or_new(struct qpt_flow *fl, struct half *h)
{
	struct half_key k;
	struct half *r;

	if (h->key.sqpn != ~0u) {
		memset(&k, 0, sizeof(k));
		memcpy(k.src, h->key.dst, 16);
		memcpy(k.dst, h->key.src, 16);
		k.qpn = h->key.sqpn;
		k.sqpn = h->key.qpn;
		r = g_hash_table_lookup(fl->halves, &k);
		if (r && r->conv) {
			h->conv = r->conv;
			h->dir = 1 - r->dir;
			if (r->conv->paired_by == QPT_PAIR_NONE) {
				r->conv->paired_by = QPT_PAIR_TRAFFIC;
				r->conv->pair_evidence = "UD datagrams both ways (DETH source QPs)";
			}
			return;
		}
	}
	conv_new(fl, h);
}

/* ---- entry point ------------------------------------------------------- */

void qpt_flow_packet(struct qpt_flow *fl, uint64_t frame, int64_t ns,
		     const struct qpt_pkt *p, struct qpt_verdict *v)
{
	const struct qpt_opcode_info *oi;
	struct half *h;
	struct qpt_dir *d;

	memset(v, 0, sizeof(*v));
	v->conv = -1;
	v->dir = -1;
	v->ack_rtt_ns = -1;
	fl->t.frames++;
	if (p->transport == QPT_TR_NONE)
		return;
	fl->t.iba_packets++;
	if (p->error != QPT_E_OK) {
		fl->t.malformed++;
		v->flags |= QPT_V(MALFORMED);
	}
	if (p->icrc_checked && !p->icrc_ok) {
		fl->t.bad_icrc++;
		v->flags |= QPT_V(BAD_ICRC);
	}
	if (v->flags)
		emit(v, frame, ns, NULL,
		     v->flags & QPT_V(MALFORMED) ? QPT_VB_MALFORMED : QPT_VB_BAD_ICRC,
		     p->bth.psn, 0, 0, 0, 0,
		     v->flags & QPT_V(MALFORMED) ? qpt_strerror(p->error) : "ICRC mismatch");
	if (!(p->flags & QPT_HAS_BTH))
		return;
	oi = &qpt_opcodes[p->bth.opcode];
	if (p->bth.dqpn <= 1 && (p->bth.opcode & 0xe0) == QPT_SVC_UD) {
		fl->t.management++;
		if (p->flags & QPT_HAS_CM)
			cm_message(fl, p, frame, ns, v);
		return;
	}
	if (!(oi->flags & QPT_O_VALID) && !(oi->flags & QPT_O_CNP))
		return;
	h = half_get(fl, p, true);
	if (!h) {
		fl->t.untracked++;
		return;
	}
	fl->t.tracked++;
	if (oi->flags & QPT_O_RESP) {
		response(fl, h, p, frame, ns, v);
	} else {
		if (!h->conv && !(oi->flags & QPT_O_CNP) &&
		    !join_responder(fl, h, p->bth.psn))
			ud_pair_or_new(fl, h);
		else if (!h->conv)
			ud_pair_or_new(fl, h);
		if (p->flags & QPT_H_DETH && !h->conv->ep[h->dir].qpn_known) {
			h->conv->ep[h->dir].qpn = p->deth.sqpn; /* RD */
			h->conv->ep[h->dir].qpn_known = true;
		}
		set_transport(h, p->bth.opcode);
		v->conv = h->conv->id;
		v->dir = (int8_t)h->dir;
		d = dir_of(h);
		if (oi->flags & QPT_O_CNP) {
			v->flags |= QPT_V(CNP);
			d->cnps++;
			emit(v, frame, ns, h, QPT_VB_CNP, p->bth.psn, 0, 0, 0, 0,
			     "congestion notification for this QP");
		} else {
			learn_mtu(h, p);
			request(fl, h, p, frame, ns, v);
		}
	}
	d = dir_of(h);
	if (!d->packets)
		d->first_ns = ns;
	d->last_ns = ns;
	d->packets++;
	d->bytes += p->wirelen;
	if (!(oi->flags & QPT_O_CNP)) /* a CNP's 16 bytes are reserved, not data */
		d->payload_bytes += p->payload_len;
	if (p->bth.fecn)
		d->fecn++;
	if (p->bth.becn)
		d->becn++;
	if (v->flags & QPT_V(BAD_ICRC))
		d->bad_icrc++;
	if (v->flags & QPT_V(MALFORMED))
		d->malformed++;
	if (p->ip_version && p->ip_ecn == 3) {
		v->flags |= QPT_V(ECN_CE);
		d->ecn_ce++;
		emit(v, frame, ns, h, QPT_VB_ECN_CE, p->bth.psn, 0, 0, 0, 0,
		     "IP ECN Congestion Experienced");
	}
}

void qpt_flow_finish(struct qpt_flow *fl)
{
	GHashTableIter it;
	gpointer val;

	g_hash_table_iter_init(&it, fl->halves);
	while (g_hash_table_iter_next(&it, NULL, &val)) {
		struct half *h = val;

		if (h->in_episode)
			episode_close(h, 0, h->last_ns);
	}
}

int32_t qpt_flow_conv_id(struct qpt_flow *fl, int32_t id)
{
	/* a chain of merges always points to a smaller or live id */
	while (id >= 0 && (guint)id < fl->convs->len) {
		const struct qpt_conv *c = g_ptr_array_index(fl->convs, id);

		if (c->merged_into < 0)
			break;
		id = c->merged_into;
	}
	return id;
}

static gint by_req_frame(gconstpointer a, gconstpointer b)
{
	const struct qpt_cm_attempt *x = *(const struct qpt_cm_attempt *const *)a;
	const struct qpt_cm_attempt *y = *(const struct qpt_cm_attempt *const *)b;

	return x->info.req_frame < y->info.req_frame ? -1 :
	       x->info.req_frame > y->info.req_frame;
}

GPtrArray *qpt_flow_cm_attempts(struct qpt_flow *fl)
{
	GPtrArray *out = g_ptr_array_new();
	GHashTableIter it;
	gpointer val;

	g_hash_table_iter_init(&it, fl->cm);
	while (g_hash_table_iter_next(&it, NULL, &val)) {
		struct cm_rec *r = val;

		/* an RTU means a REP came, whether captured or not */
		if (!r->conv && !r->att.info.rep_frame && !r->att.info.rtu_frame)
			g_ptr_array_add(out, &r->att);
	}
	g_ptr_array_sort(out, by_req_frame);
	return out;
}

GPtrArray *qpt_flow_conversations(struct qpt_flow *fl)
{
	GPtrArray *out = g_ptr_array_new();

	for (guint i = 0; i < fl->convs->len; i++) {
		struct qpt_conv *c = g_ptr_array_index(fl->convs, i);

		if (!c->merged)
			g_ptr_array_add(out, c);
	}
	return out;
}
