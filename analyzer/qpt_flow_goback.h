/* qpt_flow_goback.h - qpt_flow_goback.c's functions, for qpt_flow_seq.c:
 * fl_request's tests of what the capture shows around a resend (silence:
 * the time since the half's previous request), the RNR retry decided
 * later, and an episode's record kept.  The engine's own (included by
 * qpt_flow_int.h): no front end includes it. */
#ifndef QPT_FLOW_GOBACK_H
#define QPT_FLOW_GOBACK_H

bool fl_nak_after_pause(struct half *h, uint32_t psn, int64_t ns, int64_t silence);
/* Twice the half's shortest request-to-ACK time at the capture point (ns; 0: none) */
int64_t fl_ack_time2(struct half *h);
bool fl_timer_again(struct half *h, uint32_t psn, int64_t silence);
bool fl_goback_paused(const struct half *h, int64_t silence);
int64_t fl_goback_pace(const struct half *h, int64_t silence);
bool fl_goback_stopped_after_one(const struct half *h, uint32_t psn, int64_t silence);
bool fl_rnr_nak_missed(const struct qpt_flow *fl, struct half *h, int64_t ns, int64_t silence);
bool fl_rnr_retry_of(const struct qpt_flow *fl, struct half *h, uint32_t psn, int64_t ns,
		     int64_t silence);
void fl_rnr_doubt_note(struct half *h, uint32_t psn, uint64_t frame, int64_t ns);
void fl_rnr_doubt_resolve(struct half *h, const struct read_req *rr, uint32_t psn,
			  uint64_t frame, int64_t ns, struct qpt_verdict *v);
void fl_episode_keep(struct qpt_dir *d, const struct qpt_episode *e); /* kept in d */

#endif
