/* output.h - what the commands write: frames, events, the diagnosis, numbers and times */
#ifndef QPT_OUTPUT_H
#define QPT_OUTPUT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "qpt_decode.h"
#include "qpt_verdict.h"
#include "reader.h"

/* An event after its frame and time, as `events` writes it (report.c):
 * JSON keys from ",\"conv\"" to the closing brace, or the text from
 * " conv" to the newline; conv: the id to show.  The monitor's too. */
struct qpt_event;
void qpt_event_words(GString *o, const struct qpt_event *ev, int32_t conv, bool json);

/* Every JSON document names its schema, docs/schema/<name>.json: "schema":
 * "qptrace-summary-1".  The version goes up when a member is removed or
 * changes meaning; new members may come within a version (README). */
#define QPT_SCHEMA_BASE "qptrace-"
#define QPT_SCHEMA_VERSION "1"

/* The diagnosis as text, for summary and monitor: the findings rolled up
 * (qpt_findings_groups()), a group a line with the conversations it names
 * and the next step.  verbose: every group, every conversation, then every
 * finding; else at most max_lines lines (0: no limit; the groups that do
 * not fit are counted, "and N more groups (-v)") and top conversations a
 * group (0: 5).  Returns the lines written. */
struct qpt_diag_opts {
	bool verbose;
	int top;
	unsigned max_lines;
};
guint qpt_diagnosis_text(GString *o, const GArray *fs, const GArray *groups,
			 const struct qpt_diag_opts *d);
/* The same as JSON members: ,"groups":[...],"findings":[...] */
void qpt_diagnosis_json(GString *o, const GArray *fs, const GArray *groups);
/* ns since the epoch in ISO 8601 UTC with microseconds:
 * "2024-01-01T00:00:00.000001Z", or (date false) "00:00:00.000001". */
void qpt_format_iso(GString *o, int64_t ns, bool date);

/* Output of one decoded frame. */
enum qpt_print_mode { QPT_PRINT_LINE, QPT_PRINT_VERBOSE, QPT_PRINT_JSON };
void qpt_print_pkt(GString *out, const struct qpt_frame *f,
		   const struct qpt_pkt *pkt, enum qpt_print_mode mode,
		   double t0);
/* The same with the analysis' verdict v (may be NULL): the Info column's
 * tags in text, conv, dir, the verdict kinds and the ACK RTT sample in
 * JSON; -v names each verdict's linked frame as events does. */
void qpt_print_pkt_v(GString *out, const struct qpt_frame *f, const struct qpt_pkt *pkt,
		     enum qpt_print_mode mode, double t0, const struct qpt_verdict *v);
/* A revision v of frame v->frame (its events only, decided at frame at,
 * UINT64_MAX: at the end of the input) whose line was printed before:
 * "# frame N, decided at frame M:" and the tags, with -v the analysis line
 * too; nothing in JSON. */
void qpt_print_revision(GString *out, enum qpt_print_mode mode, uint64_t at,
			const struct qpt_verdict *v);
/* What an event's original_frame is to events of kind: "trigger" (go-back-N,
 * timeout resend), "REQ" (REJ), "RNR NAK" (RNR retry), else "original". */
const char *qpt_event_link_name(unsigned kind);
/* Address of the IBA packet's source/destination: IP, GID or LID. */
void qpt_format_addr(const struct qpt_pkt *pkt, bool src, char *buf, size_t len);
void qpt_json_escape(GString *out, const char *s);
/* g_string_append_printf() without its allocation (GLib formats into a
 * new string, then copies it) for what fits in 256 bytes: a summary of a
 * million conversations makes a hundred million such calls. */
void qpt_appendf(GString *out, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* Writes out to standard output and empties it; 0, or 2 after one line on
 * stderr naming what (e.g. "standard output") and the error. */
int qpt_write_out(GString *out, const char *what);

/* qpt_format_endpoint_qp(): qpt_verdict.h */

/* Nanoseconds since the epoch as seconds with six decimals, the sign in
 * front of the whole ("-0.000001", never "-1.999999"). */
void qpt_format_epoch(GString *out, int64_t ns);

#endif
