/* qpt_pfc.c - PFC/PAUSE per priority and stall correlation (see qpt_pfc.h) */
#include "qpt_attr.h"
#include "qpt_pfc.h"

#include <math.h>
#include <string.h>

/* A conversation direction, as the pause windows see it, is key
 * conv << 1 | dir; each direction d has two arrays indexed by conv (ids are
 * dense: no hashing and no allocation per direction): its last packet's
 * time in pf->last_ns[d] and a state byte in pf->state[d], 0 where the
 * direction never sent data (an array per direction: a capture of
 * conversations seen one way, a million of them, has none for the other).
 * That is 9 bytes per direction; they are all kept to the end of the
 * capture, because a frame stamped earlier than the ones before it (time
 * going backwards: merged captures, several interfaces) makes any direction
 * that sent in the QPT_PFC_ACTIVE_NS before that frame's time active again,
 * however long it has been quiet since. */
#define DIR_SEEN 0x08u	 /* it sent data (bits 0-2: the priority of its last packet) */
#define DIR_PRIO 0x07u
#define DIR_CAND 0x80u	 /* a candidate of the open window of its priority */

/* The pause window of one priority (at most one at a time).  A direction
 * is a candidate of at most one window, the open one of its priority (the
 * flag DIR_CAND): a window's close or the direction's next packet clears it,
 * and a packet on another priority clears it too (it moved). */
struct win {
	bool open;
	int64_t start, end; /* end INT64_MAX: until an XON (speed unknown) */
	uint64_t serial, frame;
	GArray *cands; /* guint keys: those active when it started */
};

struct qpt_pfc {
	double bps;
	bool any;
	struct qpt_pfc_prio prio[QPT_PFC_PRIOS];
	struct win win[QPT_PFC_PRIOS];
	uint64_t serial;
	/* by conv, for each direction: n[d] of them, zeroed as they grow
	 * (room for cap[d]) */
	int64_t *last_ns[2]; /* (0 where state is 0) */
	uint8_t *state[2];
	guint n[2], cap[2];
	struct qpt_pfc_frame_info info; /* of the last MAC control frame */
};

struct qpt_pfc *qpt_pfc_new(void)
{
	struct qpt_pfc *pf = g_new0(struct qpt_pfc, 1);

	for (unsigned p = 0; p < QPT_PFC_PRIOS; p++) {
		pf->prio[p].stalled = g_array_new(FALSE, FALSE, sizeof(int32_t));
		pf->win[p].cands = g_array_new(FALSE, FALSE, sizeof(guint));
	}
	return pf;
}

void qpt_pfc_free(struct qpt_pfc *pf)
{
	if (!pf)
		return;
	for (unsigned p = 0; p < QPT_PFC_PRIOS; p++) {
		g_array_free(pf->prio[p].stalled, TRUE);
		g_array_free(pf->win[p].cands, TRUE);
	}
	for (int d = 0; d < 2; d++) {
		g_free(pf->last_ns[d]);
		g_free(pf->state[d]);
	}
	g_free(pf);
}

/* Key conv << 1 | dir's state byte (NULL: it never sent data) and time. */
static uint8_t *state_of(struct qpt_pfc *pf, guint key)
{
	return key >> 1 < pf->n[key & 1] ? &pf->state[key & 1][key >> 1] : NULL;
}

static int64_t *last_of(struct qpt_pfc *pf, guint key)
{
	return &pf->last_ns[key & 1][key >> 1];
}

/* One past the highest key (conv << 1 | dir) any direction has. */
static guint keys_end(const struct qpt_pfc *pf)
{
	return 2 * MAX(pf->n[0], pf->n[1]);
}

void qpt_pfc_set_link_speed(struct qpt_pfc *pf, double bps)
{
	pf->bps = bps > 0 && isfinite(bps) ? bps : 0;
}

double qpt_pfc_link_speed(const struct qpt_pfc *pf)
{
	return pf->bps;
}

bool qpt_pfc_any(const struct qpt_pfc *pf)
{
	return pf->any;
}

const struct qpt_pfc_prio *qpt_pfc_prio(const struct qpt_pfc *pf, unsigned p)
{
	return p < QPT_PFC_PRIOS ? &pf->prio[p] : NULL;
}

bool qpt_parse_bps(const char *s, double *bps)
{
	static const struct { const char *s; double mul; } units[] = {
		{ "", 1 }, { "k", 1e3 }, { "K", 1e3 }, { "M", 1e6 }, { "G", 1e9 }, { "T", 1e12 },
	};
	static const char *const tails[] = { "", "b/s", "bit/s", "bps" };
	char *end = NULL;
	double v = g_ascii_strtod(s, &end);

	if (end == s || !(v > 0) || !isfinite(v))
		return false;
	for (size_t u = 0; u < G_N_ELEMENTS(units); u++) {
		size_t n = strlen(units[u].s);

		if (strncmp(end, units[u].s, n))
			continue;
		for (size_t t = 0; t < G_N_ELEMENTS(tails); t++)
			if (!strcmp(end + n, tails[t]) && v * units[u].mul >= 1 &&
			    v * units[u].mul <= 1e15) {
				*bps = v * units[u].mul;
				return true;
			}
	}
	return false;
}

double qpt_pfc_quanta_us(const struct qpt_pfc *pf, uint64_t quanta)
{
	return pf->bps > 0 ? (double)quanta * 512.0 / pf->bps * 1e6 : -1;
}

/* Where a window stops being one: its end, and at least the stall gap. */
static int64_t win_limit(const struct win *w)
{
	int64_t min = w->start > INT64_MAX - QPT_PFC_STALL_GAP_NS ? INT64_MAX :
								     w->start + QPT_PFC_STALL_GAP_NS;

	return w->end > min ? w->end : min;
}

/* The window is over: its candidates that sent nothing in it were stalled
 * (judge false: the input ended before that could be told). */
static void win_close(struct qpt_pfc *pf, unsigned p, struct win *w, bool judge)
{
	struct qpt_pfc_prio *pr = &pf->prio[p];

	for (guint i = 0; i < w->cands->len; i++) {
		guint key = g_array_index(w->cands, guint, i);
		uint8_t *st = state_of(pf, key); /* (a candidate sent data) */
		int32_t conv = (int32_t)(key >> 1);
		bool seen = false;

		/* still this window's: not sent since, not moved */
		if (!(*st & DIR_CAND) || (*st & DIR_PRIO) != p)
			continue;
		*st &= (uint8_t)~DIR_CAND;
		if (!judge)
			continue;
		pr->stalls++;
		if (!pr->first_stall_frame)
			pr->first_stall_frame = w->frame;
		for (guint k = 0; k < pr->stalled->len && !seen; k++)
			seen = g_array_index(pr->stalled, int32_t, k) == conv;
		if (!seen)
			g_array_append_val(pr->stalled, conv);
	}
	g_array_set_size(w->cands, 0);
	w->open = false;
}

static G_NO_INLINE void expire(struct qpt_pfc *pf, unsigned p, int64_t ns)
{
	struct win *w = &pf->win[p];

	if (w->open && ns >= win_limit(w))
		win_close(pf, p, w, true);
}

/* One priority named by a PAUSE or PFC frame, with quanta q (0: XON). */
static void pause_prio(struct qpt_pfc *pf, unsigned p, uint64_t frame, int64_t ns,
		       uint16_t q, bool pause_8023x)
{
	struct qpt_pfc_prio *pr = &pf->prio[p];
	struct win *w = &pf->win[p];

	pr->pause_frames++;
	pr->pause_8023x += pause_8023x;
	if (!q) {
		pr->xon_frames++;
		expire(pf, p, ns);
		if (w->open && w->end > ns)
			w->end = ns;
		return;
	}
	pr->xoff_frames++;
	pr->quanta_total += q;
	if (!pr->first_frame)
		pr->first_frame = frame;
	expire(pf, p, ns);
	{
		int64_t end = INT64_MAX;

		if (pf->bps > 0) {
			double dur = (double)q * 512.0 / pf->bps * 1e9;

			end = ns + (int64_t)llround(dur);
		}
		if (w->open) { /* a refresh: the timer starts again from here */
			w->end = end;
			return;
		}
		w->open = true;
		w->start = ns;
		w->end = end;
		w->serial = ++pf->serial;
		w->frame = frame;
		pr->windows++;
	}
	/* the conversations on p that were sending */
	for (guint key = 0, end = keys_end(pf); key < end; key++) {
		uint8_t *st = state_of(pf, key);
		int64_t last;

		if (!st)
			continue;
		last = *last_of(pf, key);
		if ((*st & DIR_SEEN) && (*st & DIR_PRIO) == p && last <= ns &&
		    ns - last <= QPT_PFC_ACTIVE_NS) {
			*st |= DIR_CAND;
			g_array_append_val(w->cands, key);
		}
	}
}

const struct qpt_pfc_frame_info *qpt_pfc_last(const struct qpt_pfc *pf)
{
	return &pf->info;
}

void qpt_pfc_frame(struct qpt_pfc *pf, uint64_t frame, int64_t ns, const struct qpt_pkt *pkt)
{
	const struct qpt_macc *m = &pkt->macc;
	struct qpt_pfc_frame_info *info = &pf->info;
	uint8_t mask = 0;

	memset(info, 0, sizeof(*info));
	if (!(pkt->flags & QPT_HAS_MACC) || m->error != QPT_E_OK)
		return;
	if (m->opcode == QPT_MACC_PAUSE)
		mask = 0xff;
	else if (m->opcode == QPT_MACC_PFC)
		mask = (uint8_t)(m->cev & 0xff); /* the upper byte is reserved */
	else
		return;
	pf->any = true;
	for (unsigned p = 0; p < QPT_PFC_PRIOS; p++) {
		uint16_t q = m->opcode == QPT_MACC_PAUSE ? m->quanta[0] : m->quanta[p];

		if (!(mask & (1u << p)))
			continue;
		pause_prio(pf, p, frame, ns, q, m->opcode == QPT_MACC_PAUSE);
		if (q)
			info->xoff |= (uint8_t)(1u << p);
		else
			info->xon |= (uint8_t)(1u << p);
		info->pause_us[p] = qpt_pfc_quanta_us(pf, q);
	}
	info->pfc = m->opcode == QPT_MACC_PFC;
	info->pause = m->opcode == QPT_MACC_PAUSE;
	for (unsigned p = 0; p < QPT_PFC_PRIOS; p++) {
		if (pf->prio[p].data_packets)
			info->roce |= (uint8_t)(1u << p);
		if (!(mask & (1u << p)))
			info->pause_us[p] = -1;
	}
	for (guint key = 0, end = keys_end(pf); key < end; key++) {
		const uint8_t *stp = state_of(pf, key);
		uint8_t st = stp ? *stp : 0;
		int64_t last = stp ? *last_of(pf, key) : 0;

		if ((st & DIR_SEEN) && last <= ns && ns - last <= QPT_PFC_ACTIVE_NS)
			info->active[st & DIR_PRIO]++;
	}
}

/* Direction d's arrays up to conv n - 1, the new ones zero. */
static void dirs_grow(struct qpt_pfc *pf, int d, guint n)
{
	if (n > pf->cap[d]) {
		guint cap = MAX(n, 2 * pf->cap[d]);

		pf->state[d] = g_renew(uint8_t, pf->state[d], cap);
		pf->last_ns[d] = g_renew(int64_t, pf->last_ns[d], cap);
		pf->cap[d] = cap;
	}
	memset(pf->state[d] + pf->n[d], 0, n - pf->n[d]);
	memset(pf->last_ns[d] + pf->n[d], 0, (n - pf->n[d]) * sizeof(int64_t));
	pf->n[d] = n;
}

/* qpt_pfc_data() for priority p, direction d of conv >= 0 (its arrays
 * grown to it first).  Out of line: a window open or a new conversation
 * (rare). */
static G_NO_INLINE void data_slow(struct qpt_pfc *pf, int64_t ns, unsigned p, int32_t conv,
				  int d)
{
	uint8_t *st;

	if ((guint)conv >= pf->n[d])
		dirs_grow(pf, d, (guint)conv + 1);
	st = &pf->state[d][conv];
	if ((*st & (DIR_SEEN | DIR_PRIO)) != (DIR_SEEN | p))
		*st = (uint8_t)(DIR_SEEN | p); /* moved: not on the priority it was waiting on */
	expire(pf, p, ns);
	*st &= (uint8_t)~DIR_CAND; /* it sent during the window: not stalled */
	pf->last_ns[d][conv] = ns;
}

QPT_HOT void qpt_pfc_data(struct qpt_pfc *pf, int64_t ns, int pcp, int32_t conv, int dir)
{
	unsigned p = pcp < 0 || pcp >= QPT_PFC_PRIOS ? 0 : (unsigned)pcp;
	int d = dir & 1;
	uint8_t *st;

	if (conv < 0)
		return;
	pf->prio[p].data_packets++;
	if ((guint)conv >= pf->n[d] || pf->win[p].open) {
		data_slow(pf, ns, p, conv, d);
		return;
	}
	/* (data_slow() without a window: nothing expires, and no candidate
	 * flag is set on a closed window's priority) */
	st = &pf->state[d][conv];
	if ((*st & (DIR_SEEN | DIR_PRIO)) != (DIR_SEEN | p))
		*st = (uint8_t)(DIR_SEEN | p);
	*st &= (uint8_t)~DIR_CAND;
	pf->last_ns[d][conv] = ns;
}

void qpt_pfc_finish(struct qpt_pfc *pf, int64_t last_ns)
{
	for (unsigned p = 0; p < QPT_PFC_PRIOS; p++) {
		struct win *w = &pf->win[p];

		if (!w->open)
			continue;
		if (w->end == INT64_MAX) /* no XON: to the end of the capture */
			w->end = last_ns;
		win_close(pf, p, w, last_ns >= win_limit(w));
	}
}
