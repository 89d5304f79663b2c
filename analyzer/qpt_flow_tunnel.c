/* qpt_flow_tunnel.c - the mirror or tunnel session of each conversation
 *
 * A mirror (ERSPAN) or an overlay (GRE, VXLAN) delivers the frames of a
 * conversation inside a session: its kind, its id (ERSPAN session id, GRE
 * key, VXLAN VNI) and its outer addresses (struct qpt_tunnel_id).  The
 * engine keeps the distinct sessions once (a table, a hash of them) and
 * per conversation id a 32-bit reference, in an array made at the first
 * frame that came in a tunnel (a capture without one pays nothing; one
 * with, 4 bytes a conversation).  A reference is 0 before the
 * conversation's first frame, REF_DIRECT for frames in no tunnel, the
 * session's index + REF_BASE, with REF_SEVERAL set once a frame came in
 * another (the first one is kept).  Folds (qpt_flow_pair.c) and the
 * absorption of other engines (-j N) carry the references over.
 */
#include <arpa/inet.h>
#include <string.h>

#include "qpt_flow_int.h"

#define REF_DIRECT 1u
#define REF_BASE 2u
#define REF_SEVERAL 0x80000000u

struct fl_tunnels {
	GArray *ids;	     /* struct qpt_tunnel_id, by index */
	GHashTable *index;   /* struct qpt_tunnel_id * (in ids' copy) -> index + 1 */
	GArray *ref;	     /* guint32 per conversation id */
};

static guint tid_hash(gconstpointer p)
{
	const struct qpt_tunnel_id *t = p;
	guint h = t->kind * 31u + t->key;

	for (unsigned i = 0; i < 16; i++)
		h = h * 33u + t->src[i] * 7u + t->dst[i];
	return h;
}

static gboolean tid_equal(gconstpointer a, gconstpointer b)
{
	return !memcmp(a, b, sizeof(struct qpt_tunnel_id));
}

/* The session of a frame's outermost tunnel (the UDP source port of VXLAN,
 * a hash of the inner flow, and the GRE sequence number are no part of it). */
static void tid_of(const struct qpt_pkt *p, struct qpt_tunnel_id *t)
{
	const struct qpt_tunnel *x = &p->tunnel;

	memset(t, 0, sizeof(*t)); /* (compared and hashed whole) */
	t->kind = x->kind;
	t->ip_version = x->ip_version;
	memcpy(t->src, x->src, 16);
	memcpy(t->dst, x->dst, 16);
	switch (x->kind) {
	case QPT_TUN_ERSPAN2:
	case QPT_TUN_ERSPAN3:
		t->has_key = true;
		t->key = x->session_id;
		break;
	case QPT_TUN_VXLAN:
		t->has_key = true;
		t->key = x->vni;
		break;
	default: /* GRE, GRE-TEB, ERSPAN I: the GRE key when there is one */
		t->has_key = x->has_key;
		t->key = x->has_key ? x->gre_key : 0;
		break;
	}
}

static guint32 *ref_at(struct fl_tunnels *tn, int32_t id)
{
	if ((guint)id >= tn->ref->len)
		g_array_set_size(tn->ref, (guint)id + 1); /* (zero: no frame yet) */
	return &g_array_index(tn->ref, guint32, id);
}

/* A conversation seen under ref: the first kept, a second one noted. */
static void ref_add(guint32 *r, guint32 ref)
{
	if (!*r)
		*r = ref;
	else if ((*r & ~REF_SEVERAL) != (ref & ~REF_SEVERAL) || (ref & REF_SEVERAL))
		*r |= REF_SEVERAL;
}

static guint32 tunnel_ref(struct fl_tunnels *tn, const struct qpt_tunnel_id *t)
{
	gpointer at = g_hash_table_lookup(tn->index, t);

	if (!at) {
		g_array_append_val(tn->ids, *t);
		at = GUINT_TO_POINTER(tn->ids->len);
		/* (keys point into ids, which moves as it grows: made again) */
		g_hash_table_remove_all(tn->index);
		for (guint i = 0; i < tn->ids->len; i++)
			g_hash_table_insert(tn->index, &g_array_index(tn->ids, struct qpt_tunnel_id, i),
					    GUINT_TO_POINTER(i + 1));
	}
	return GPOINTER_TO_UINT(at) - 1 + REF_BASE;
}

static struct fl_tunnels *tunnels_new(struct qpt_flow *fl)
{
	struct fl_tunnels *tn = g_new0(struct fl_tunnels, 1);

	tn->ids = g_array_new(FALSE, FALSE, sizeof(struct qpt_tunnel_id));
	tn->index = g_hash_table_new(tid_hash, tid_equal);
	tn->ref = g_array_new(FALSE, TRUE, sizeof(guint32));
	/* the conversations so far had their frames in no tunnel (the one
	 * the current frame made has none counted yet) */
	g_array_set_size(tn->ref, fl->convs->len);
	for (guint i = 0; i < fl->convs->len; i++) {
		const struct qpt_conv *c = g_ptr_array_index(fl->convs, i);

		if (c && (fl_conv_is_cold(c) || c->dir[0]->packets || c->dir[1]->packets))
			g_array_index(tn->ref, guint32, i) = REF_DIRECT;
	}
	return tn;
}

void fl_tunnel_note_slow(struct qpt_flow *fl, int32_t conv, const struct qpt_pkt *p)
{
	bool in = (p->flags & QPT_HAS_TUNNEL) && p->tunnel.kind != QPT_TUN_NONE;
	struct qpt_tunnel_id t;

	if (conv < 0 || (!in && !fl->tun))
		return; /* (no tunnel yet: every conversation direct) */
	if (!fl->tun)
		fl->tun = tunnels_new(fl);
	if (!in) {
		ref_add(ref_at(fl->tun, conv), REF_DIRECT);
		return;
	}
	tid_of(p, &t);
	ref_add(ref_at(fl->tun, conv), tunnel_ref(fl->tun, &t));
}

void fl_tunnel_fold(struct qpt_flow *fl, int32_t into, int32_t from)
{
	guint32 r;

	if (!fl->tun || (guint)from >= fl->tun->ref->len)
		return;
	r = g_array_index(fl->tun->ref, guint32, from);
	if (r)
		ref_add(ref_at(fl->tun, into), r);
}

void fl_tunnel_absorb(struct qpt_flow *fl, struct qpt_flow *part, const int32_t *ids)
{
	struct fl_tunnels *pt = part->tun;

	if (!pt)
		return;
	if (!fl->tun) {
		fl->tun = tunnels_new(fl);
		g_array_set_size(fl->tun->ref, 0); /* (every id comes from a part) */
	}
	for (guint i = 0; i < pt->ref->len; i++) {
		guint32 r = g_array_index(pt->ref, guint32, i), mine;

		if (!r)
			continue;
		mine = (r & ~REF_SEVERAL) < REF_BASE ? r & ~REF_SEVERAL :
		       tunnel_ref(fl->tun, &g_array_index(pt->ids, struct qpt_tunnel_id,
							   (r & ~REF_SEVERAL) - REF_BASE));
		ref_add(ref_at(fl->tun, ids[i]), mine | (r & REF_SEVERAL));
	}
}

void fl_tunnel_free(struct qpt_flow *fl)
{
	if (!fl->tun)
		return;
	g_array_free(fl->tun->ids, TRUE);
	g_hash_table_destroy(fl->tun->index);
	g_array_free(fl->tun->ref, TRUE);
	g_free(fl->tun);
	fl->tun = NULL;
}

const struct qpt_tunnel_id *qpt_flow_conv_tunnel(struct qpt_flow *fl, int32_t id, bool *several)
{
	guint32 r;

	if (several)
		*several = false;
	id = qpt_flow_conv_id(fl, id);
	if (!fl->tun || id < 0 || (guint)id >= fl->tun->ref->len)
		return NULL;
	r = g_array_index(fl->tun->ref, guint32, id);
	if (several)
		*several = (r & REF_SEVERAL) != 0;
	r &= ~REF_SEVERAL;
	return r < REF_BASE ? NULL : &g_array_index(fl->tun->ids, struct qpt_tunnel_id, r - REF_BASE);
}

char *qpt_tunnel_outer_addr(const struct qpt_tunnel_id *t, bool dst, char *buf)
{
	int af = t->ip_version == 6 ? AF_INET6 : AF_INET;
	const uint8_t *a = dst ? t->dst : t->src;

	if (!inet_ntop(af, af == AF_INET ? a + 12 : a, buf, INET6_ADDRSTRLEN))
		g_strlcpy(buf, "?", INET6_ADDRSTRLEN);
	return buf;
}

char *qpt_format_tunnel(const struct qpt_tunnel_id *t, char *buf, size_t len)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
	const char *what = t->kind == QPT_TUN_VXLAN ? " VNI" :
			   t->kind == QPT_TUN_ERSPAN2 || t->kind == QPT_TUN_ERSPAN3 ? " session" :
			   " key";

	qpt_tunnel_outer_addr(t, false, s);
	qpt_tunnel_outer_addr(t, true, d);
	if (t->has_key)
		g_snprintf(buf, (gulong)len, "%s%s %u, %s > %s", qpt_tunnel_name(t->kind), what,
			   t->key, s, d);
	else
		g_snprintf(buf, (gulong)len, "%s, %s > %s", qpt_tunnel_name(t->kind), s, d);
	return buf;
}
