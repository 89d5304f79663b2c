/* qpt_pfc.h - PFC (802.1Qbb) and PAUSE (802.3x) frames per priority, and
 * the RoCE conversations a pause stalled
 *
 * Fed by the flow engine (qpt_flow_packet): every MAC control frame, and
 * the priority of every packet of a tracked conversation.  No I/O.
 *
 * Counting, per priority p (0-7):
 *   pause_frames  PFC frames whose class-enable vector has bit p, plus
 *                 802.3x PAUSE frames (a PAUSE stops every priority: it
 *                 counts on all eight, in pause_8023x too)
 *   xoff_frames   those with a pause time > 0 for p
 *   xon_frames    those with a pause time of 0 for p (resume)
 *   quanta_total  the pause times they asked for, in quanta; a quantum is
 *                 512 bit times, so with the link speed known the pause
 *                 time they asked for is quanta_total * 512 / speed
 *
 * The priority of a RoCE packet is the PCP of its outermost 802.1Q tag; an
 * untagged packet is priority 0 (what a switch port with the default
 * priority 0 gives it).  CNPs are not counted as data (they often travel on
 * a priority of their own).
 *
 * Stall correlation.  A pause window on p starts at an XOFF for p at time t
 * and ends at e: the XON for p, or the XOFF's time + its quanta * 512 bit
 * times when the link speed is known, whichever comes first; an XOFF
 * before the window is over (before e' = max(e, t + QPT_PFC_STALL_GAP_NS))
 * refreshes it (its own end counts from its own time).  Without the link
 * speed a window lasts until the XON; one that no XON ends lasts to the end
 * of the capture.  A conversation direction whose packets are on p, that
 * sent a packet in the QPT_PFC_ACTIVE_NS before t, is stalled by the window
 * when it sends nothing on p from t to e' (so the gap in its traffic covers
 * the pause and is at least QPT_PFC_STALL_GAP_NS long).  A PFC frame
 * applies to the link it was captured on; a capture of several links (a
 * switch's mirror, merged files) mixes their pauses and conversations.
 *
 * Memory: 9 bytes per conversation direction (conversation id << 1 |
 * direction, ids dense), to the end of the capture: with time going
 * backwards a pause can find any direction active, however long quiet.
 */
#ifndef QPT_PFC_H
#define QPT_PFC_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "qpt_decode.h"

#define QPT_PFC_PRIOS 8
#define QPT_PFC_STALL_GAP_NS 10000   /* 10 us: the shortest gap called a stall */
#define QPT_PFC_ACTIVE_NS 1000000    /* 1 ms: "was sending" before the pause */

struct qpt_pfc_prio {
	uint64_t pause_frames, xoff_frames, xon_frames, quanta_total;
	uint64_t pause_8023x;	  /* 802.3x PAUSE frames among pause_frames */
	uint64_t windows;	  /* pause windows (an XOFF with its refreshes) */
	uint64_t first_frame;	  /* the first XOFF (0: none) */
	uint64_t data_packets;	  /* RoCE packets (CNPs excepted) on this priority */
	uint64_t stalls;	  /* (window, conversation direction) stalls */
	uint64_t first_stall_frame; /* the XOFF that started the first stalling window */
	GArray *stalled;	  /* int32 conversation ids, as they were then
				   * (qpt_flow_conv_id() gives them now), each once */
};

/* What one MAC control frame did (for the plugin's tree). */
struct qpt_pfc_frame_info {
	bool pfc, pause;	/* a PFC frame, an 802.3x PAUSE frame */
	uint8_t xoff, xon;	/* priorities paused / resumed (bit p) */
	uint8_t roce;		/* priorities that carried RoCE data so far */
	uint32_t active[QPT_PFC_PRIOS]; /* conversation directions on p that sent
					 * in the QPT_PFC_ACTIVE_NS before */
	double pause_us[QPT_PFC_PRIOS]; /* the time asked for; < 0: speed unknown */
};

struct qpt_pfc;
struct qpt_pfc *qpt_pfc_new(void);
void qpt_pfc_free(struct qpt_pfc *pf);
/* The link's speed in bits per second (0: unknown, quanta only). */
void qpt_pfc_set_link_speed(struct qpt_pfc *pf, double bps);
double qpt_pfc_link_speed(const struct qpt_pfc *pf);
/* A MAC control frame (pkt has QPT_HAS_MACC). */
void qpt_pfc_frame(struct qpt_pfc *pf, uint64_t frame, int64_t ns, const struct qpt_pkt *pkt);
/* What the last one did (all zero for a malformed one or another opcode). */
const struct qpt_pfc_frame_info *qpt_pfc_last(const struct qpt_pfc *pf);
/* A packet of conversation conv, direction dir, on priority pcp (-1:
 * untagged, counted as 0). */
void qpt_pfc_data(struct qpt_pfc *pf, int64_t ns, int pcp, int32_t conv, int dir);
/* End of input at last_ns (the last frame's time): open windows end. */
void qpt_pfc_finish(struct qpt_pfc *pf, int64_t last_ns);
/* Any MAC control PAUSE or PFC frame seen. */
bool qpt_pfc_any(const struct qpt_pfc *pf);
const struct qpt_pfc_prio *qpt_pfc_prio(const struct qpt_pfc *pf, unsigned p);
/* A link speed as people write it: bits per second with an optional k, M,
 * G or T and an optional "b/s", "bit/s" or "bps" ("100G", "25Gb/s",
 * "10000000000"); false when it is not one (or not 1 b/s to 1 Pb/s). */
bool qpt_parse_bps(const char *s, double *bps);
/* The pause time quanta ask for at the link speed, in µs (< 0: unknown). */
double qpt_pfc_quanta_us(const struct qpt_pfc *pf, uint64_t quanta);

#endif
