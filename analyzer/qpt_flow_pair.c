/* qpt_flow_pair.c - halves and conversations (see qpt_flow_int.h)
 *
 * A half is found by its key (addresses, destination QP, UD source QP);
 * two halves are paired into one conversation by CM, by traffic (a
 * response answering the other half's requests) or by UD datagrams both
 * ways.  Ids are given in order of first appearance; when two halves seen
 * apart are paired late, the later conversation is folded into the
 * earlier one. */
#include <string.h>

#include "qpt_flow_int.h"

/* A UD half is in neither lookup list (it is neither a requester nor a
 * responder to pair by PSNs).  h: live or cold. */
static bool half_ud(const struct half *h)
{
	struct half_key tmp;

	return fl_key_of(h, &tmp)->sqpn != ~0u;
}

/* A lookup list given by a mask over n inline halves, as spilled: NULL
 * when it holds them all (the same as all). */
static GPtrArray *list_of_mask(struct half *const *in, unsigned n, unsigned mask)
{
	GPtrArray *l;

	if (mask == (1u << n) - 1)
		return NULL;
	l = g_ptr_array_sized_new(n);
	for (unsigned i = 0; i < n; i++)
		if (mask & 1u << i)
			g_ptr_array_add(l, in[i]);
	return l;
}

/* h comes after every half of a spilled all: add it to lookup list *l
 * (NULL: the same as all, which it stops being if h is UD). */
static void list_add(GPtrArray **l, GPtrArray *all, struct half *h)
{
	if (!half_ud(h)) {
		if (*l)
			g_ptr_array_add(*l, h);
	} else if (!*l) {
		*l = g_ptr_array_copy(all, NULL, NULL);
	}
}

/* h, new, goes last in all and, unless UD, last in both lookup lists. */
static void addr_add(struct addr_halves *a, struct half *h)
{
	if (a->n < ADDR_INLINE) {
		if (!half_ud(h)) {
			a->req |= (uint8_t)(1u << a->n);
			a->resp |= (uint8_t)(1u << a->n);
		}
		a->u.in[a->n++] = h;
		return;
	}
	if (a->n == ADDR_INLINE) { /* spill: u.in and u.v overlap */
		struct half *in[ADDR_INLINE];

		memcpy(in, a->u.in, sizeof(in));
		a->u.v.all = g_ptr_array_sized_new(2 * ADDR_INLINE);
		for (unsigned i = 0; i < ADDR_INLINE; i++)
			g_ptr_array_add(a->u.v.all, in[i]);
		a->u.v.req = list_of_mask(in, ADDR_INLINE, a->req);
		a->u.v.resp = list_of_mask(in, ADDR_INLINE, a->resp);
		a->n = ADDR_SPILLED;
	}
	list_add(&a->u.v.req, a->u.v.all, h);
	list_add(&a->u.v.resp, a->u.v.all, h);
	g_ptr_array_add(a->u.v.all, h);
}

/* Lookup list *l made anew from all (after a fold): its halves but UD
 * ones, nrc of them. */
static void list_remake(GPtrArray **l, GPtrArray *all, guint nrc)
{
	if (nrc == all->len) { /* the same as all */
		if (*l)
			g_ptr_array_unref(*l);
		*l = NULL;
		return;
	}
	if (*l)
		g_ptr_array_set_size(*l, 0);
	else
		*l = g_ptr_array_sized_new(nrc);
	for (guint i = 0; i < all->len; i++) {
		struct half *r = g_ptr_array_index(all, i);

		if (!half_ud(r))
			g_ptr_array_add(*l, r);
	}
}

/* Both lookup lists made anew from all: every half but UD ones. */
static void addr_remake(struct addr_halves *a)
{
	guint nrc = 0;

	if (a->n != ADDR_SPILLED) {
		a->req = 0;
		for (unsigned i = 0; i < a->n; i++)
			if (!half_ud(a->u.in[i]))
				a->req |= (uint8_t)(1u << i);
		a->resp = a->req;
		return;
	}
	for (guint i = 0; i < a->u.v.all->len; i++)
		nrc += !half_ud(g_ptr_array_index(a->u.v.all, i));
	list_remake(&a->u.v.req, a->u.v.all, nrc);
	list_remake(&a->u.v.resp, a->u.v.all, nrc);
}

/* keep(r, e, ctx) of a list entry e: r is e's half to read (a cold one
 * decoded, not thawed: fl_peek). */
typedef bool keep_fn(const struct half *r, struct half *e, void *ctx);

static bool keep_entry(struct qpt_flow *fl, struct half *e, keep_fn *keep, void *ctx)
{
	struct half_view view;

	return keep(fl_peek(fl, e, &view), e, ctx);
}

/* Calls keep on every half of a's lookup list (resp or req), in order;
 * drops from the list those it returns false for. */
static void addr_walk(struct qpt_flow *fl, struct addr_halves *a, bool resp,
		      keep_fn *keep, void *ctx)
{
	GPtrArray **lp, *list, *all;
	guint k = 0;

	if (a->n != ADDR_SPILLED) {
		uint8_t *m = resp ? &a->resp : &a->req;

		for (unsigned i = 0; i < a->n; i++)
			if (*m & 1u << i && !keep_entry(fl, a->u.in[i], keep, ctx))
				*m &= (uint8_t)~(1u << i);
		return;
	}
	lp = resp ? &a->u.v.resp : &a->u.v.req;
	if (*lp) { /* kept ones moved down in place */
		list = *lp;
		for (guint i = 0; i < list->len; i++) {
			struct half *r = g_ptr_array_index(list, i);

			if (keep_entry(fl, r, keep, ctx))
				list->pdata[k++] = r;
		}
		g_ptr_array_set_size(list, k);
		return;
	}
	/* the same as all, until the first dropped */
	all = a->u.v.all;
	list = NULL;
	for (guint i = 0; i < all->len; i++) {
		struct half *r = g_ptr_array_index(all, i);

		if (keep_entry(fl, r, keep, ctx)) {
			if (list)
				g_ptr_array_add(list, r);
		} else if (!list) {
			list = g_ptr_array_sized_new(i + 1);
			for (guint j = 0; j < i; j++)
				g_ptr_array_add(list, g_ptr_array_index(all, j));
		}
	}
	if (list)
		*lp = list;
}

/* What a half allocated (not the half). */
void fl_half_free_parts(struct half *h)
{
	g_free(h->win[WIN_REQ]);
	g_free(h->win[WIN_RESP]);
	g_free(h->seen);
	if (h->x) {
		g_free(h->x->taps);
		g_free(h->x->reads);
		g_free(h->x->l);
		g_free(h->x->rc);
		g_free(h->x);
	}
}

void fl_half_free(struct qpt_flow *fl, struct half *h)
{
	if (fl_is_cold(h)) {
		fl_cold_free(fl, fl_cold_of(h));
		return;
	}
	fl_half_free_parts(h);
	g_free(h);
}

/* The index of op among the operations stored (those below it in the mask). */
static unsigned op_index(uint16_t mask, unsigned op)
{
	return (unsigned)__builtin_popcount(mask & ((1u << op) - 1));
}

const struct qpt_opstat *fl_dir_op_r(const struct qpt_dir *d, unsigned op)
{
	static const struct qpt_opstat none;

	if (op >= QPT_OP_COUNT || !(d->op_mask & 1u << op))
		return &none;
	return &d->opv[op_index(d->op_mask, op)];
}

/* The stats of op in d, added (zero) when it had none. */
struct qpt_opstat *fl_dir_op(struct qpt_dir *d, unsigned op)
{
	unsigned i = op_index(d->op_mask, op), n = (unsigned)__builtin_popcount(d->op_mask);

	if (!(d->op_mask & 1u << op)) {
		d->opv = g_renew(struct qpt_opstat, d->opv, n + 1);
		memmove(d->opv + i + 1, d->opv + i, (n - i) * sizeof(*d->opv));
		memset(d->opv + i, 0, sizeof(*d->opv));
		d->op_mask |= (uint16_t)(1u << op);
	}
	return &d->opv[i];
}

void fl_dir_free_parts(struct qpt_dir *x)
{
	g_free(x->opv);
	fl_lat_free(x->ack_rtt);
	fl_lat_free(x->r->read_lat);
	fl_lat_free(x->r->atomic_lat);
	if (x->r->episodes)
		g_array_free(x->r->episodes, TRUE);
	if (x->r != &qpt_dir_rare_none)
		g_free((gpointer)(uintptr_t)x->r);
	fl_qos_free(x);
}

void fl_conv_free(struct qpt_conv *c)
{
	struct conv_block *b = (struct conv_block *)(void *)c;

	G_STATIC_ASSERT(offsetof(struct conv_block, c) == 0);
	for (int d = 0; d < 2; d++) {
		struct qpt_dir *x = (struct qpt_dir *)(uintptr_t)c->dir[d];

		if (x == &qpt_dir_none[d])
			continue;
		fl_dir_free_parts(x);
		if (x != &b->d0)
			g_free(x);
	}
	g_free(b);
}

QPT_HOT uint8_t fl_pkt_addrs(const struct qpt_pkt *p, uint8_t src[16], uint8_t dst[16])
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

const struct qpt_cm_info fl_no_cm;

void fl_dr_alloc(struct qpt_dir *d)
{
	struct qpt_dir_rare *r = g_new0(struct qpt_dir_rare, 1);

	r->read_lat = r->atomic_lat = &qpt_lat_none;
	d->r = r;
}

void fl_dir_alloc(struct qpt_conv *c, int d)
{
	struct qpt_dir *x = g_new(struct qpt_dir, 1);

	*x = qpt_dir_none[d];
	c->dir[d] = x;
}

struct qpt_conv *fl_conv_new(struct qpt_flow *fl, struct half *h)
{
	struct conv_block *b = g_new0(struct conv_block, 1);
	struct qpt_conv *c = &b->c;

	G_STATIC_ASSERT(offsetof(struct conv_block, c) == 0); /* fl->convs frees it */
	c->id = (int32_t)fl->convs->len;
	c->merged_into = -1;
	g_ptr_array_add(fl->convs, c);
	fl->t.conversations++;
	c->pair_evidence = "";
	c->cm = &fl_no_cm;
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
	/* the first direction is this half's: it counts right away */
	b->d0 = qpt_dir_none[0];
	c->dir[0] = &b->d0;
	c->dir[1] = &qpt_dir_none[1];
	h->conv = c;
	h->dir = 0;
	return c;
}

QPT_HOT struct half *fl_half_get(struct qpt_flow *fl, const struct qpt_pkt *p,
				 bool create)
{
	struct half_key k;
	struct half *h, **slot;
	uint8_t fam;
	struct addr_halves *a;

	memset(&k, 0, sizeof(k));
	fam = fl_pkt_addrs(p, k.src, k.dst);
	k.qpn = p->bth.dqpn;
	k.sqpn = (p->bth.opcode & 0xe0) == QPT_SVC_UD && p->flags & QPT_H_DETH ?
			 p->deth.sqpn :
			 ~0u;
	/* two ways: slot, then its pair (two busy QPs of one slot, a fifth
	 * of the halves among hundreds, would each miss every other time) */
	slot = &fl->recent[fl_recent_slot(&k)];
	if (*slot && !memcmp(&(*slot)->key, &k, sizeof(k))) {
		(*slot)->touched = true; /* (as fl_live: the sweep keeps it) */
		return *slot;
	}
	h = fl->recent[fl_recent_slot(&k) ^ 1];
	if (h && !memcmp(&h->key, &k, sizeof(k))) {
		h->touched = true;
		return h;
	}
	h = fl_live(fl, g_hash_table_lookup(fl->halves, &k));
	if (!h && create) {
		if (fl->o.max_halves && fl->nhalves >= fl->o.max_halves) {
			fl->t.limit_reached = true;
			return NULL;
		}
		h = g_new0(struct half, 1);
		h->key = k;
		h->touched = true;
		g_ptr_array_add(fl->live, h);
		h->family = fam;
		h->service = 0xff;
		G_STATIC_ASSERT(offsetof(struct half, key) == 0);
		g_hash_table_add(fl->halves, h);
		fl->nhalves++;
		fl->t.halves = fl->nhalves;
		/* k.src, k.dst: the 32 bytes of an address pair's key */
		G_STATIC_ASSERT(offsetof(struct half_key, dst) == 16);
		G_STATIC_ASSERT(offsetof(struct addr_halves, key) == 0);
		a = g_hash_table_lookup(fl->by_addr, k.src);
		if (!a) {
			a = g_new0(struct addr_halves, 1);
			memcpy(a->key, k.src, 16);
			memcpy(a->key + 16, k.dst, 16);
			g_hash_table_add(fl->by_addr, a);
		}
		addr_add(a, h);
	}
	if (h) {
		if (*slot) /* the one there to the pair's */
			fl->recent[(unsigned)(slot - fl->recent) ^ 1] = *slot;
		*slot = h;
	}
	return h;
}

/* h's twin as fl_twin_of() finds it: the one it keeps, or the halves
 * table's entry (maybe cold); NULL when none. */
static struct half *twin_entry(struct qpt_flow *fl, const struct half *h)
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
	return g_hash_table_lookup(fl->halves, &k);
}

QPT_HOT struct half *fl_twin_find(struct qpt_flow *fl, struct half *h)
{
	struct half *e = twin_entry(fl, h);

	if (e && e != h->twin)
		h->twin = fl_live(fl, e);
	else if (e)
		h->twin->touched = true; /* (as fl_live: the sweep keeps it) */
	return e ? h->twin : NULL;
}

static void dir_merge(struct qpt_dir *d, const struct qpt_dir *s)
{
	bool had_packets = d->packets != 0;

	for (unsigned k = 0; k < QPT_C_COUNT; k++) {
		uint64_t v = fl_counter(s, k);
		char *base;

		if (!v)
			continue; /* a rare counter's struct only once one is non-zero */
		base = fl_counter_locs[k].rare ? (char *)fl_dr(d) : (char *)d;
		*(uint64_t *)(void *)(base + fl_counter_locs[k].offset) += v;
	}
	if (s->r != &qpt_dir_rare_none) {
		struct qpt_dir_rare *dr = fl_dr(d);

		for (int i = 0; i < QPT_NAK_KINDS; i++)
			dr->naks[i] += s->r->naks[i];
		if (s->r->read_lat->n)
			fl_lat_merge(fl_lat_w(&dr->read_lat), s->r->read_lat);
		if (s->r->atomic_lat->n)
			fl_lat_merge(fl_lat_w(&dr->atomic_lat), s->r->atomic_lat);
		if (s->r->episodes) {
			if (!dr->episodes)
				dr->episodes = g_array_new(FALSE, TRUE, sizeof(struct qpt_episode));
			g_array_append_vals(dr->episodes, s->r->episodes->data, s->r->episodes->len);
		}
	}
	for (int i = 0; i < QPT_OP_COUNT; i++) {
		const struct qpt_opstat *b = fl_dir_op_r(s, (unsigned)i);
		struct qpt_opstat *a;

		if (!b->count)
			continue;
		a = fl_dir_op(d, (unsigned)i);
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
	if (s->ack_rtt->n)
		fl_lat_merge(fl_rtt(d), s->ack_rtt);
	fl_qos_merge(d, s);
}

/* A fold moved h to another conversation (and maybe direction): a half
 * the pairing lookups dropped between h's addresses may be one again. */
static void addr_stale(struct qpt_flow *fl, const struct half_key *hk)
{
	uint8_t k[32];
	struct addr_halves *a;

	for (int i = 0; i < 2; i++) {
		memcpy(k, i ? hk->dst : hk->src, 16);
		memcpy(k + 16, i ? hk->src : hk->dst, 16);
		a = g_hash_table_lookup(fl->by_addr, k);
		if (a)
			a->stale = true;
	}
}

/* Folds conversation o into c: o's direction od becomes c's direction cd;
 * every half that pointed at o follows. */
static void conv_fold(struct qpt_flow *fl, struct qpt_conv *c, int cd,
		      struct qpt_conv *o, int od)
{
	GHashTableIter it;
	gpointer v;

	dir_merge(fl_dirw(c, cd), o->dir[od]);
	fl_qos_fold(fl, c); /* CNPs that came before the pairing meet their marks */
	o->merged = true;
	o->merged_into = c->id;
	fl_tunnel_fold(fl, c->id, o->id);
	if (!fl->folded)
		fl->folded = g_hash_table_new(g_direct_hash, g_direct_equal);
	g_hash_table_add(fl->folded, c);
	fl->t.conversations--;
	g_hash_table_iter_init(&it, fl->halves);
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		struct half *x = fl_unforward(fl, v);

		if (!x) {
			struct cold_half *ch = fl_cold_of(v);
			struct half_key k;

			if (ch->conv == o->id) { /* it thaws into c */
				ch->conv = c->id;
				ch->dir = (int8_t)cd;
				addr_stale(fl, fl_cold_key(ch, &k));
			}
			continue;
		}
		if (x->conv == o) {
			x->conv = c;
			x->dir = cd;
			addr_stale(fl, &x->key);
		}
	}
}

/* Make req (A->B to qb) and resp (B->A to qa) the two halves of one
 * conversation.  When both already had one, the older (lower id) one
 * stays, so that ids already shown for earlier packets remain valid. */
struct qpt_conv *fl_pair(struct qpt_flow *fl, struct half *req,
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
		fl_conv_new(fl, req);
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
	if (fl->folded && g_hash_table_contains(fl->folded, c))
		addr_stale(fl, &req->key);
	if (by > c->paired_by || c->paired_by == QPT_PAIR_NONE) {
		c->paired_by = by;
		c->pair_evidence = evidence;
	}
	return c;
}

/* The halves going the other way between h's two addresses, their lookup
 * lists copied anew after a fold. */
static struct addr_halves *reverse_halves(struct qpt_flow *fl, const struct half *h)
{
	uint8_t k[32];
	struct addr_halves *a;

	memcpy(k, h->key.dst, 16);
	memcpy(k + 16, h->key.src, 16);
	a = g_hash_table_lookup(fl->by_addr, k);
	if (a && a->stale) {
		addr_remake(a);
		a->stale = false;
	}
	return a;
}

/* fl_find_requester's scan: its answer so far */
struct req_scan {
	struct qpt_flow *fl;
	struct half *h, *best;
	uint32_t psn;
	int32_t best_d;
};

static bool req_keep(const struct half *r, struct half *e, void *ctx)
{
	struct req_scan *s = ctx;
	int32_t d;

	if (r != s->h && r->conv && twin_entry(s->fl, r))
		return false; /* already paired, for good: dropped */
	if (r == s->h || !r->req_started)
		return true;
	d = qpt_psn_diff(r->expected, s->psn);
	/* PSN must be one the requester sent (READ spans reach ahead). */
	if (d < 0 || d > 65536)
		return true;
	if (!s->best || d < s->best_d) {
		s->best = e;
		s->best_d = d;
	}
	return true;
}

/* A response with this PSN arrived on h, unpaired: find the request half
 * (h->dst -> h->src) whose PSNs it answers: of those that sent requests
 * and are not paired, the one whose next PSN is the nearest at or after
 * psn (the first in order of creation of equals).  A paired half stays
 * paired (a fold, that could change it, makes the list stale) and leaves
 * the list. */
struct half *fl_find_requester(struct qpt_flow *fl, struct half *h,
				   uint32_t psn)
{
	struct addr_halves *a = reverse_halves(fl, h);
	struct req_scan s = { .fl = fl, .h = h, .psn = psn };

	if (a)
		addr_walk(fl, a, false, req_keep, &s);
	return fl_live(fl, s.best);
}

struct half *fl_half_for(struct qpt_flow *fl, uint8_t fam, const uint8_t *src,
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
	return fl_half_get(fl, &p, true);
}

/* fl_join_responder's scan: its answer so far */
struct resp_scan {
	struct half *h, *found;
	uint32_t psn;
	bool ambiguous;
};

static bool resp_keep(const struct half *r, struct half *e, void *ctx)
{
	struct resp_scan *s = ctx;
	int32_t d;

	/* a requester, or a half whose source QPN is known, stays so (but
	 * after a fold, which makes the list stale): dropped */
	if (r != s->h && (r->req_started || (r->conv && r->conv->ep[r->dir].qpn_known)))
		return false;
	if (s->ambiguous || r == s->h || !r->conv || !r->ack_valid)
		return true;
	d = qpt_psn_diff(s->psn, r->ack_psn);
	if (d < 1 || d > 64)
		return true;
	if (s->found)
		s->ambiguous = true; /* wait for stronger evidence */
	s->found = e;
	return true;
}

/* A first request on h whose PSN continues what an unpaired response
 * half (h->dst -> h->src, ACKs seen before any request, as when the
 * capture starts mid-connection) acknowledged: the same connection. */
bool fl_join_responder(struct qpt_flow *fl, struct half *h, uint32_t psn)
{
	struct addr_halves *a = reverse_halves(fl, h);
	struct resp_scan s = { .h = h, .psn = psn };

	if (a)
		addr_walk(fl, a, true, resp_keep, &s);
	if (!s.found || s.ambiguous)
		return false;
	fl_pair(fl, h, fl_live(fl, s.found), QPT_PAIR_TRAFFIC, "requests continue the PSNs ACKed before");
	return true;
}

/* A UD datagram names both QPs (DETH source QP): the reverse flow, if
 * seen, is the other direction of the same conversation. */
void fl_ud_pair_or_new(struct qpt_flow *fl, struct half *h)
{
	struct half_key k;
	struct half *r;

	if (h->key.sqpn != ~0u) {
		memset(&k, 0, sizeof(k));
		memcpy(k.src, h->key.dst, 16);
		memcpy(k.dst, h->key.src, 16);
		k.qpn = h->key.sqpn;
		k.sqpn = h->key.qpn;
		r = fl_live(fl, g_hash_table_lookup(fl->halves, &k));
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
	fl_conv_new(fl, h);
}

QPT_HOT int32_t qpt_flow_conv_id(struct qpt_flow *fl, int32_t id)
{
	/* a chain of merges always points to a smaller or live id */
	while (id >= 0 && (guint)id < fl->convs->len) {
		const struct qpt_conv *c = g_ptr_array_index(fl->convs, id);

		if (fl_conv_is_cold(c) || c->merged_into < 0)
			break; /* (a cold one is never merged) */
		id = c->merged_into;
	}
	return id;
}
