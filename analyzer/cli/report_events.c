/* report_events.c - one event as a text line or a JSON Lines object
 * (report.c's parts share report_int.h)
 */
#include "report_int.h"

/* One event, as a JSON Lines object or a text line.  f is the frame it is
 * on, named by file and frame in it when several files are merged. */
void event_out(const struct qpt_event *ev, struct run *r,
		      const struct qpt_frame *f)
{
	GString *o = r->out;
	struct qpt_frame at;

	if (!r->several) {
		f = NULL;
	} else if (f && ev->frame != f->number) {
		/* an event of an earlier frame: its file and number there */
		const struct recent *e = &r->recent[ev->frame % RECENT];

		f = NULL;
		if (e->number == ev->frame) {
			at = (struct qpt_frame){ .file = e->file, .file_number = e->file_number };
			f = &at;
		}
	}
	if (r->o->json) {
		qpt_appendf(o, "{\"schema\":\"" QPT_SCHEMA_BASE "events-" QPT_SCHEMA_VERSION
			    "\",\"frame\":%" PRIu64 ",\"time\":", ev->frame);
		qpt_format_epoch(o, ev->time_ns);
		if (f) {
			g_string_append(o, ",\"file\":");
			qpt_json_escape(o, f->file);
			qpt_appendf(o, ",\"file_frame\":%" PRIu64, f->file_number);
		}
	} else {
		switch (r->o->time_mode) {
		case QPT_TIME_ABS:
			qpt_format_iso(o, ev->time_ns, true);
			break;
		case QPT_TIME_DELTA: /* the first from the first frame, as tcpdump -ttt */
			qpt_appendf(o, "%.6f",
				    secs(ev->time_ns - (r->any_event ? r->prev_event_ns : r->an.t0)));
			break;
		default:
			qpt_appendf(o, "%.6f", secs(ev->time_ns - r->an.t0));
			break;
		}
		r->prev_event_ns = ev->time_ns;
		r->any_event = true;
		qpt_appendf(o, " frame %" PRIu64, ev->frame);
		if (f)
			qpt_appendf(o, " (%s frame %" PRIu64 ")", f->file, f->file_number);
	}
	qpt_event_words(o, ev, ev->conv, r->o->json);
}

/* An event after its frame and time (events, monitor): JSON keys from
 * "conv" to the closing brace, or the text line from " conv". */
void qpt_event_words(GString *o, const struct qpt_event *ev, int32_t conv, bool json)
{
	const struct qpt_verdict_info *vi = &qpt_verdicts[ev->kind];
	char dur[32];

	if (json) {
		qpt_appendf(o, ",\"conv\":%d,\"dir\":%d,\"kind\":\"%s\",\"psn\":%u",
				       conv, ev->dir, vi->key, ev->psn);
		if (ev->original_frame)
			qpt_appendf(o, ",\"original_frame\":%" PRIu64,
					       ev->original_frame);
		if (vi->count_key)
			qpt_appendf(o, ",\"%s\":%u", vi->count_key, ev->count);
		switch (vi->code) {
		case QPT_CODE_NAK:
			qpt_appendf(o, ",\"nak\":\"%s\"", qpt_nak_name(ev->code));
			break;
		case QPT_CODE_RNR_NAK:
		case QPT_CODE_RNR_TIMER:
			qpt_appendf(o, ",\"rnr_timer\":%u", ev->code);
			break;
		case QPT_CODE_REASON:
			qpt_appendf(o, ",\"reason\":%u", ev->code);
			break;
		case QPT_CODE_NONE: break;
		}
		if (ev->duration_ns)
			qpt_appendf(o, ",\"duration_us\":%.3f",
					       (double)ev->duration_ns / 1000.0);
		if (ev->detail) {
			g_string_append(o, ",\"detail\":");
			qpt_json_escape(o, ev->detail);
		}
		g_string_append(o, "}\n");
		return;
	}
	qpt_appendf(o, " conv %d %s PSN %u", conv, vi->key, ev->psn);
	if (ev->original_frame)
		qpt_appendf(o, " (%s frame %" PRIu64 ")", qpt_event_link_name(ev->kind),
				       ev->original_frame);
	if (vi->count_key)
		qpt_appendf(o, " %s %u", vi->count_key, ev->count);
	switch (vi->code) {
	case QPT_CODE_NAK: qpt_appendf(o, " %s", qpt_nak_name(ev->code)); break;
	case QPT_CODE_RNR_NAK: /* its duration is the timer's wait */
		qpt_appendf(o, " timer %u (%s)", ev->code,
				       qpt_format_duration(ev->duration_ns, dur, sizeof(dur)));
		break;
	case QPT_CODE_RNR_TIMER: qpt_appendf(o, " timer %u", ev->code); break;
	case QPT_CODE_REASON: qpt_appendf(o, " reason %u", ev->code); break;
	case QPT_CODE_NONE: break;
	}
	if (ev->duration_ns && vi->code != QPT_CODE_RNR_NAK)
		qpt_appendf(o, " after %s",
				       qpt_format_duration(ev->duration_ns, dur, sizeof(dur)));
	if (ev->detail && vi->detail_in_text)
		qpt_appendf(o, ": %s", ev->detail);
	g_string_append_c(o, '\n');
}
