/* grade.h - `qptrace grade`, shared by its files (not an interface)
 *
 *   grade.c          the command: captures to grade, text and JSON output
 *   grade_rubric.c   the rubric: key-file parsing and validation
 *   grade_params.c   rubric parameters: ${...} and derived counts
 *   grade_tools.c    the lab's command line (--command) as parameters
 *   grade_records.c  one pass over a capture: frame and message records
 *   grade_checks.c   the check kinds, each a PASS/FAIL with its proof
 *   grade_checks_msg.c  ... of messages and connections (ops, CM, pairing)
 *   grade_proof.c    the proof: frame lists and the words around them
 *   grade_class.c    a class folder: submissions, student ids, feedback names
 *   grade_book.c     class mode: the CSV gradebook, copied submissions
 *   grade_find.c     shipped rubrics by name, the other labs' rubrics
 */
#ifndef QPT_GRADE_H
#define QPT_GRADE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "../commands.h"
#include "../driver.h"
#include "../options.h"
#include "../outfile.h"
#include "../output.h"
#include "../reader.h"
#include "qpt_flow.h"

/* ---- parameters (grade_params.c, grade_tools.c) ------------------------ */

struct grade_param {
	char *name, *value;
	char *from; /* "rubric", "--set", "--command -n", "ib_write_bw default" */
	int line;   /* of its [params] key */
};

struct grade_params {
	GPtrArray *list; /* struct grade_param *, in the rubric's order */
};

void grade_params_init(struct grade_params *ps);
void grade_params_clear(struct grade_params *ps);
struct grade_param *grade_param_find(const struct grade_params *ps, const char *name);
struct grade_param *grade_param_add(struct grade_params *ps, const char *name,
				    const char *value, const char *from);
void grade_param_assign(struct grade_param *p, const char *value, const char *from);
bool grade_name_ok(const char *s);  /* [A-Za-z_][A-Za-z0-9_]* */
bool grade_value_ok(const char *s); /* a whole number or a word */
/* Evaluates an integer expression over the parameters; false and a reason
 * appended to err when it has none. */
bool grade_eval(const char *expr, const struct grade_params *ps, int64_t *out, GString *err);
/* The text with each ${NAME} and ${EXPR} replaced; NULL and err on error. */
char *grade_subst(const char *text, const struct grade_params *ps, GString *err);

/* Sets the parameters of ps that the command line's tool sets (from its
 * options, or the tool's defaults).  want: the tools the rubric is for
 * (space separated) or NULL.  *tool_out: the tool's name. */
bool grade_command_params(const char *cmdline, const char *want, struct grade_params *ps,
			  const char *from, char **tool_out, GString *err);
const char *grade_tool_list(void); /* "ibv_rc_pingpong, ..." */

/* ---- the rubric (grade_rubric.c) --------------------------------------- */

enum kind {
	K_OPS,
	K_MULTI_PACKET,
	K_CM_HANDSHAKE,
	K_PAIRED,
	K_TRANSPORT,
	K_ACKS,
	K_NO_RETRANSMISSIONS,
	K_NO_GAPS,
	K_PATH_MTU,
	K_IMMEDIATE,
	K_ATOMIC,
	K_MIN_QPS,
	K_OOB_TCP,
	K_HEADER,
	K_PRIORITY,   /* the PCP/DSCP of a class of packets (qpt_flow_qos.c) */
	K_NO_FINDING, /* the diagnosis has no finding of a kind */
	K_NO_VERDICT, /* no frame has a verdict of a kind (qptrace events) */
	K_COUNT
};

/* Keys every check may have: kind, points, explain.  Then per kind the
 * keys it knows (space separated) and the ones it requires. */
struct grade_kind {
	const char *name;
	const char *keys;
	const char *required;
	const char *what; /* one line for the error message and README */
};
extern const struct grade_kind grade_kinds[K_COUNT];

/* paired: by= */
enum { BY_ANY, BY_CM, BY_TRAFFIC };

struct check {
	char *name;
	enum kind kind;
	int line;
	long points;
	char *explain;
	char transport[4]; /* "" any */
	int op;		   /* enum qpt_op, -1 any */
	long min_count, max_count, size, min_packets, min_connections,
		min_conversations, min_qps, value, min_frames;
	bool teardown, only, present, all, middle, acks;
	int by;
	unsigned header; /* QPT_H_* bit */
	int qos_class;	 /* priority: enum qpt_qos_class */
	long pcp, dscp;	 /* priority: -1 not checked */
	int finding;	 /* no_finding: enum qpt_finding_kind */
	int verdict;	 /* no_verdict: a QPT_VB_* index */
	char *bpf;	 /* oob_tcp */
	int missing;	 /* MISSING_FAIL or MISSING_SKIP */
	char *when;	 /* when=: the condition as written, NULL none */
	char *requires;	 /* requires=: check names as written, NULL none */
	int requires_line;
	GArray *req;	 /* guint: the indices of the checks it requires (earlier ones) */
};

/* missing=: how a check the capture cannot show (NOT-IN-CAPTURE) scores */
enum { MISSING_FAIL, MISSING_SKIP };

struct rubric {
	char *file;
	char *name, *description;
	GPtrArray *checks; /* struct check * */
	long max_points;
	struct grade_params params;
	char *tool;    /* tool= or the tool of command= */
	char *command; /* the command line the parameters come from, or NULL */
	int missing;
	GString *not_checked; /* "multi_packet (when ${size} > ${mtu})", ... */
};

/* What the command line of `grade` sets: --command and --set NAME=VALUE. */
struct grade_overrides {
	const char *command;
	gchar **sets;
};

/* Loads and validates the rubric, its parameters set from ov (NULL: none);
 * on error prints every problem (one a line, FILE:LINE: what is wrong) and
 * returns NULL. */
struct rubric *grade_rubric_load(const char *file, const struct grade_overrides *ov);
void grade_rubric_free(struct rubric *rb);

/* ---- one pass over a capture (grade_records.c) ------------------------- */

struct frec {
	uint64_t frame;
	uint64_t original_frame; /* retransmission: first sight */
	uint64_t read_request_frame;
	int32_t conv;
	int8_t dir;
	uint8_t opcode;
	bool mad;
	uint16_t cm_msg;
	uint16_t cm_reason;
	uint32_t vflags; /* its verdicts, those decided later included */
	uint32_t payload_len;
	uint32_t psn, gap_psns, gap_first_psn;
};

struct mrec {
	uint64_t first, last;
	int32_t conv;
	uint8_t op, opcode;
	uint32_t len, packets;
};

struct convspan {
	uint64_t first[2], last[2], n;
};

struct capture {
	const char *file;
	struct qpt_flow *fl;
	GPtrArray *convs;
	GArray *frames; /* struct frec, RoCE/IB frames only */
	GArray *msgs;	/* struct mrec */
	GArray *spans;	/* struct convspan by conversation id */
	GArray **tcp;	/* per check: frame numbers matching its BPF */
	char **tcp_err; /* per check: why the BPF could not be applied */
	uint64_t nframes, iba;
	uint32_t linktype;
	uint64_t ntcp;	     /* TCP frames of any port */
	GHashTable *tcp_ports;	   /* server port -> TCP frames (grade_tcp_seen) */
	GHashTable *tcp_syn_ports; /* ports a SYN went to */
	uint64_t first_mid;  /* frame 1 continues a message / answers one: its number */
	uint64_t cm_req;     /* first CM REQ frame, 0 none */
	bool tcp_unfilterable; /* libpcap cannot filter TCP on this link type */
	char *error; /* the file could not be read (fully) */
	char *sum_frames, *sum_roce; /* SHA-256 of the frames (time, bytes): all, RoCE/IB only */
	bool opened;
};

/* Reads cap->file once (decoder, flow engine, the checks' BPF filters);
 * sets cap->error when it could not be read to its end. */
void grade_read_capture(struct capture *cap, const struct opts *o, const struct rubric *rb);
void grade_capture_free(struct capture *cap, guint nc);

/* ---- checks (grade_checks.c) and their proof (grade_proof.c) ----------- */

struct result {
	bool pass;
	bool missing; /* NOT-IN-CAPTURE: the capture cannot show it (pass false) */
	GString *reason;
	GArray *frames; /* uint64_t, the proof */
};

/* Runs check c (the idx-th of its rubric) on cap: r->pass, r->reason and
 * r->frames (sorted, unique) are set. */
void grade_run_check(const struct check *c, guint idx, const struct capture *cap,
		     struct result *r);

/* The check kinds of messages and connections (grade_checks_msg.c). */
void grade_check_ops(const struct check *c, const struct capture *cap, struct result *r);
void grade_check_multi_packet(const struct check *c, const struct capture *cap,
			      struct result *r);
void grade_check_cm(const struct check *c, const struct capture *cap, struct result *r);
void grade_check_paired(const struct check *c, const struct capture *cap, struct result *r);
/* The capture starts in the middle of the traffic (its frame 1 continues a
 * message or answers a request): what came before it (what) is not in it;
 * r says so. */
bool grade_cut_before(const struct capture *cap, struct result *r, const char *what);
/* Does the frame record f carry one of the operations check c names. */
bool grade_rec_op_match(const struct check *c, const struct frec *f);
/* "TCP seen on port 18515 (31 frames, connections opened to it)" or
 * "no TCP frame at all"; the most used ports first. */
void grade_tcp_seen(GString *o, const struct capture *cap);
const char *grade_plural(uint64_t n, const char *one, const char *many);
void grade_add_frame(struct result *r, uint64_t f); /* f == 0: none */
void grade_sort_unique(GArray *a);
/* "frame 4", "frames 4-6, 9", or "frames 4-18" when the list is long. */
void grade_fmt_frames(GString *o, GArray *in);
/* A conversation's first and last frame of each direction. */
void grade_conv_frames(const struct capture *cap, const struct qpt_conv_stats *c, struct result *r);
/* "frames 4-18", "frame 4" or "no data packets". */
void grade_conv_range(GString *o, const struct capture *cap, const struct qpt_conv_stats *c);
/* "conversation 0 RC 10.0.0.1 QP 0x000011 <-> 10.0.0.2 QP 0x000012, frames 4-18" */
void grade_conv_desc(GString *o, const struct capture *cap, const struct qpt_conv_stats *cv);
bool grade_tr_match(const struct check *c, const char *tr); /* the check's transport= */
const char *grade_tr_label(const struct check *c);	   /* it, or "" for any */
/* "24 RC WRITE_ONLY_IMM, 8 RC WRITE_LAST_IMM" for a list of frame records. */
void grade_opcode_breakdown(GString *o, GPtrArray *recs);
void grade_recs_frames(struct result *r, GPtrArray *recs);
/* "3 RC WRITE messages" */
void grade_desc_msgs(GString *o, const struct check *c, uint64_t n);
/* Sizes seen among messages: "5 of 3000 bytes, 2 of 64 bytes". */
void grade_size_breakdown(GString *o, GArray *ms);
void grade_msgs_frames(struct result *r, GArray *ms); /* first and last of each */
void grade_msgs_range(GString *o, GArray *ms);	      /* "frames 4-18" */

/* ---- a graded capture (grade.c) and the class report (grade_html.c) --- */

/* A check's outcome.  NOT-CHECKED: a check it requires (requires=) did not
 * pass, or the capture has no RoCE/IB packet at all: the one root cause is
 * said once, and the check scores 0 without a failure of its own. */
enum outcome { O_FAIL, O_PASS, O_MISSING, O_BLOCKED };

struct graded {
	char *file;
	char *error;
	char *student;
	bool graded; /* checks ran (the file opened) */
	long score, max;
	guint passed, skipped, missing, blocked;
	bool pass;
	long *points;	    /* per check: points got, -1 not scored (skipped) */
	enum outcome *oc;   /* per check */
	GString *notes;	    /* gradebook: what was not in the capture, copies */
	GString *txt;	    /* the report's block of this capture */
	char *sum_bytes;    /* SHA-256 of the file's bytes */
	char *sum_frames, *sum_roce; /* of its frames (struct capture) */
	uint64_t iba;
	GString *lab;	    /* "ibv_uc_pingpong -n 5 -s 1024 (uc_pingpong 9/9)", or empty */
	GString *copy_note; /* "the same RoCE packets as ... (student bob)", or NULL */
	char *feedback;	    /* its feedback file, or NULL */
};

/* Writes the class report, one static HTML page: the totals, the
 * gradebook (a link to each feedback file), each check's pass rate, the
 * score distribution.  false and *why when it cannot be written. */
bool grade_html(const char *path, const struct rubric *rb, GArray *gs, guint found,
		guint unreadable, guint not_captures, guint copies, char **why);

/* The CSV gradebook (--gradebook) of the graded captures gs (grade_book.c). */
GString *grade_gradebook_csv(const struct rubric *rb, GArray *gs);
/* Submissions of different students that are the same: the same bytes,
 * the same frames (times and bytes: a recompressed or converted copy), or
 * the same RoCE/IB packets.  Each pair named in both rows' notes and
 * copy_note; returned as triples (index, index, what is the same). */
GPtrArray *grade_find_copies(GArray *gs);

/* ---- shipped rubrics (grade_find.c) ------------------------------------ */

/* --rubric FILE, or the name of a shipped rubric (rc_pingpong, or
 * rc_pingpong.ini); NULL and a message when there is none. */
char *grade_find_rubric(const char *arg);
/* Whether path is in the shipped rubrics' folder. */
bool grade_rubric_shipped(const char *path);
/* Every shipped rubric but rb (the same file, or the same name), with its
 * defaults: which lab a capture that fails rb is (guess_lab). */
GPtrArray *grade_load_others(const char *path, const struct rubric *rb);

/* ---- --lint and --init-from (grade_init.c) ---------------------------- */

int grade_lint(const char *file, const struct grade_overrides *ov);
int grade_init_from(const char *ref, const char *command, const struct opts *o);

/* ---- a class folder (grade_class.c) ----------------------------------- */

struct submission {
	char *path;  /* as it is opened */
	char *rel;   /* below the class folder ('/' separated); a named file: its name */
	char *error; /* it cannot be opened (a file or a folder), else NULL */
};

struct class_files {
	GArray *subs;	    /* struct submission, in the order found */
	GPtrArray *skipped; /* files that are not captures (char *) */
	GPtrArray *empty;   /* folders named without a submission */
};

size_t grade_capture_ext(const char *name); /* ".pcap.gz": 8; 0 none */
char *grade_file_sha256(const char *path);  /* hex, NULL when it cannot be read */
/* "words used above:" and a line per term of text explained (grade_words.c) */
void grade_glossary(GString *o, const char *text);
void grade_find_submissions(struct class_files *cf, gchar **args);
void grade_class_files_clear(struct class_files *cf);
char *grade_student_of(const struct submission *s, GRegex *re, bool quiet);
char *grade_feedback_path(const char *dir, const struct submission *s, const char *student,
			  GHashTable *used);

#endif
