/* roce-stats.c - QP conversation statistics and the conversation filter
 *
 *   tshark -q -z roce,qp[,FILTER]          one line per QP conversation
 *   Statistics > RoCE QP Conversations     the same rows in a sortable table
 *   Conversation Filter > RoCE QP          roce.stream eq N
 *   Statistics > Conversations > RoCE      one row per QP conversation, whose
 *   (tshark -z conv,roce)                  Apply as Filter is roce.stream==N
 *   Statistics > Endpoints > RoCE          one row per QP (address, QPN)
 *
 * The counter columns are the engine's per-direction counter table
 * (qpt_counters[], the rows with a column title), so a new counter is one
 * row there, titled as summary --long's row; after them come the columns
 * the counters do not hold as one number (messages, NAKs of every code),
 * then the conversation's time lost and RTT p50/p99, the cells of qptrace
 * summary's table.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define WS_BUILD_DLL
#include <wireshark.h>

#include <epan/packet.h>
#include <epan/addr_resolv.h>
#include <epan/conversation_filter.h>
#include <epan/conversation_table.h>
#include <epan/stat_tap_ui.h>
#include <epan/tap.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "qpt_findings.h"
#include "qpt_flow.h"
#include "qpt_ulp.h"
#include "qpt_verdict.h"
#include "roce-int.h"

/* ---- conversation filter ----------------------------------------------------------- */

static qpt_ws_bool roce_conv_valid(packet_info *pinfo QPT_WS_CONV_FILTER_UDATA)
{
	const roce_frame_t *fi = roce_frame_info(pinfo);

	return proto_is_frame_protocol(pinfo->layers, "roce") && fi && fi->conv >= 0;
}

static gchar *roce_conv_filter(packet_info *pinfo QPT_WS_CONV_FILTER_UDATA)
{
	const roce_frame_t *fi = roce_frame_info(pinfo);

	if (!fi || fi->conv < 0)
		return NULL;
	return g_strdup_printf("roce.stream eq %d", roce_conv_id(fi->conv));
}

/* ---- Statistics > Conversations / Endpoints: a "RoCE" tab ------------------------ */

/* Wireshark's Conversations dialog builds a row's filter itself
 * (get_conversation_filter(), 4.0 to 4.6 alike): "NAME==ADDR_A && NAME==ADDR_B"
 * for A<->B (the direction entries use the source and destination names),
 * the ports only for TCP, UDP, SCTP and NCP, NAME being what the table's
 * get_filter_type callback returns for the row.  The callback is given the
 * row, so NAME carries the row's stream.  The addresses are text, each
 * endpoint with its QPN (roce_ct_endpoints()), which no field holds: NAME
 * is "roce.stream==N && !string(roce.stream)", whose comparison with that
 * text is always false, and the dialog's Apply as Filter gives
 *   roce.stream==N && !string(roce.stream)=="A" && roce.stream==N && ...
 * i.e. the packets of roce.stream N.  The ports are the QPNs (shown in the
 * Port columns, not used in the filter), conv_id the stream.  The names
 * are interned (rows of every file share them; their number is that of the
 * streams seen). */

static const char *roce_ct_name(conv_filter_type_e ft, const char *stream_test)
{
	const char *name;
	char *s;

	if (ft != CONV_FT_SRC_ADDRESS && ft != CONV_FT_DST_ADDRESS && ft != CONV_FT_ANY_ADDRESS)
		return CONV_FILTER_INVALID; /* ports: not asked for (not TCP/UDP/SCTP/NCP) */
	s = g_strdup_printf("%s && !string(roce.stream)", stream_test);
	name = g_intern_string(s);
	g_free(s);
	return name;
}

static const char *roce_ct_filter_type(conv_item_t *item, conv_filter_type_e ft)
{
	char test[40];

	g_snprintf(test, sizeof(test), "roce.stream==%u", (unsigned)item->conv_id);
	return roce_ct_name(ft, test);
}

static ct_dissector_info_t roce_ct_info = { &roce_ct_filter_type };

/* An endpoint (address, QPN) is in one or more streams: its filter names
 * them all.  Which streams, per endpoint, is kept from the endpoint tap for
 * the life of the file (emptied when a file is opened). */
static GHashTable *roce_et_streams; /* "type/address/qpn" -> set of stream ids + 1 */

static char *roce_et_key(const address *a, guint32 qpn)
{
	char *as = address_to_str(NULL, a);
	char *k = g_strdup_printf("%d/%s/%u", a->type, as, qpn);

	wmem_free(NULL, as);
	return k;
}

static gint cmp_int(gconstpointer a, gconstpointer b)
{
	gint x = *(const gint *)a, y = *(const gint *)b;

	return x < y ? -1 : x > y;
}

static const char *roce_et_filter_type(endpoint_item_t *item, conv_filter_type_e ft)
{
	char *k = roce_et_key(&item->myaddress, item->port);
	GHashTable *set = roce_et_streams ? (GHashTable *)g_hash_table_lookup(roce_et_streams, k) : NULL;
	GArray *ids;
	GHashTableIter it;
	gpointer key;
	GString *test;
	const char *name;

	g_free(k);
	if (!set)
		return CONV_FILTER_INVALID;
	ids = g_array_new(FALSE, FALSE, sizeof(gint));
	g_hash_table_iter_init(&it, set);
	while (g_hash_table_iter_next(&it, &key, NULL)) {
		gint id = GPOINTER_TO_INT(key) - 1;

		g_array_append_val(ids, id);
	}
	g_array_sort(ids, cmp_int);
	test = g_string_new(ids->len > 1 ? "(" : "");
	for (guint i = 0; i < ids->len; i++)
		g_string_append_printf(test, "%sroce.stream==%d", i ? " || " : "",
				       g_array_index(ids, gint, i));
	if (ids->len > 1)
		g_string_append_c(test, ')');
	name = roce_ct_name(ft, test->str);
	g_string_free(test, TRUE);
	g_array_free(ids, TRUE);
	return name;
}

static et_dissector_info_t roce_et_info = { &roce_et_filter_type };

static void roce_et_note(const address *a, guint32 qpn, gint32 stream)
{
	char *k = roce_et_key(a, qpn);
	GHashTable *set;

	if (!roce_et_streams)
		roce_et_streams = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
							(GDestroyNotify)g_hash_table_destroy);
	set = (GHashTable *)g_hash_table_lookup(roce_et_streams, k);
	if (!set) {
		set = g_hash_table_new(NULL, NULL);
		g_hash_table_insert(roce_et_streams, k, set);
	} else {
		g_free(k);
	}
	g_hash_table_add(set, GINT_TO_POINTER(stream + 1));
}

/* The endpoints each stream was first tapped with, per table (conversation,
 * endpoint), kept while the table is filled: one pass (tshark without -2)
 * taps a stream's first frames before the engine has paired its two
 * directions (the QPN of its requester comes with the first ACK), and a
 * row per stream needs the same endpoints on every frame: the row keeps the
 * words of its first frame ("QP ?" where the QPN was not known yet; two
 * passes, and Wireshark's dialogs, tap once the file is read, with every
 * QPN known).  Emptied when the table is (a new file, a retap). */
typedef struct {
	char text[2][QPT_ENDPOINT_QP_STRLEN];
	guint32 qpn[2];
} roce_ct_first_t;
static GHashTable *roce_ct_first[2]; /* stream -> roce_ct_first_t (a->b order) */

static void roce_et_init(void)
{
	if (roce_et_streams)
		g_hash_table_remove_all(roce_et_streams);
	for (int i = 0; i < 2; i++)
		if (roce_ct_first[i])
			g_hash_table_remove_all(roce_ct_first[i]);
}

/* The two endpoints of a tapped frame's stream, sender first, as text with
 * their QPNs, the words of qptrace summary ("10.0.0.1 QP 0x000011", "QP ?"
 * for one not known yet): TShark's text tables (-z conv,roce, -z
 * endpoints,roce) print ports only for TCP, UDP and SCTP, so the QPNs are
 * in the addresses (the addresses point into the struct); the QPNs are
 * the ports too (the dialogs' Port columns). */
typedef struct {
	address src, dst;
	guint32 sport, dport;
	gint32 stream;
	char text[2][QPT_ENDPOINT_QP_STRLEN];
} roce_ct_ends_t;

/* The endpoints of the frame a conversation or endpoint tap was given
 * (data, a roce_frame_t); FALSE when the frame has no stream. */
static gboolean roce_ct_endpoints(const void *data, conv_hash_t *hash, int table,
				  roce_ct_ends_t *ends)
{
	const roce_frame_t *fi = (const roce_frame_t *)data;
	const struct qpt_conv_ident *c;
	struct qpt_conv_ident ci;
	roce_ct_first_t *first;
	gpointer key;

	if (!fi || fi->conv < 0 || fi->dir < 0 || fi->dir > 1 || !roce_flow())
		return FALSE;
	ends->stream = roce_conv_id(fi->conv);
	key = GINT_TO_POINTER(ends->stream);
	if (!roce_ct_first[table])
		roce_ct_first[table] = g_hash_table_new_full(NULL, NULL, NULL, g_free);
	if (!hash->conv_array || !hash->conv_array->len)
		g_hash_table_remove_all(roce_ct_first[table]); /* an empty table: a new fill */
	first = (roce_ct_first_t *)g_hash_table_lookup(roce_ct_first[table], key);
	if (!first) {
		c = qpt_flow_conv_ident(roce_flow(), ends->stream, &ci);
		if (!c)
			return FALSE;
		first = g_new(roce_ct_first_t, 1);
		for (int i = 0; i < 2; i++) {
			qpt_format_endpoint_qp(&c->ep[i], first->text[i]);
			first->qpn[i] = c->ep[i].qpn_known || i ? c->ep[i].qpn : 0;
		}
		g_hash_table_insert(roce_ct_first[table], key, first);
	}
	for (int i = 0; i < 2; i++) {
		int e = i ? 1 - fi->dir : fi->dir;

		g_strlcpy(ends->text[i], first->text[e], sizeof(ends->text[i]));
		set_address(i ? &ends->dst : &ends->src, AT_STRINGZ, (int)strlen(ends->text[i]) + 1,
			    ends->text[i]);
	}
	ends->sport = first->qpn[fi->dir];
	ends->dport = first->qpn[1 - fi->dir];
	return TRUE;
}

static tap_packet_status roce_conv_packet(void *pct, packet_info *pinfo, epan_dissect_t *edt _U_,
					  const void *data, tap_flags_t flags _U_)
{
	roce_ct_ends_t t;

	if (!roce_ct_endpoints(data, (conv_hash_t *)pct, 0, &t))
		return TAP_PACKET_DONT_REDRAW;
	add_conversation_table_data_with_conv_id((conv_hash_t *)pct, &t.src, &t.dst, t.sport,
						 t.dport, (conv_id_t)t.stream, 1,
						 (int)pinfo->fd->pkt_len, &pinfo->rel_ts,
						 &pinfo->abs_ts, &roce_ct_info, CONVERSATION_IBQP);
	return TAP_PACKET_REDRAW;
}

static tap_packet_status roce_endpoint_packet(void *pit, packet_info *pinfo,
					      epan_dissect_t *edt _U_, const void *data,
					      tap_flags_t flags _U_)
{
	conv_hash_t *hash = (conv_hash_t *)pit;
	roce_ct_ends_t t;

	if (!roce_ct_endpoints(data, hash, 1, &t))
		return TAP_PACKET_DONT_REDRAW;
	roce_et_note(&t.src, t.sport, t.stream);
	roce_et_note(&t.dst, t.dport, t.stream);
	add_endpoint_table_data(hash, &t.src, t.sport, TRUE, 1, (int)pinfo->fd->pkt_len,
				&roce_et_info, ENDPOINT_IBQP);
	add_endpoint_table_data(hash, &t.dst, t.dport, FALSE, 1, (int)pinfo->fd->pkt_len,
				&roce_et_info, ENDPOINT_IBQP);
	return TAP_PACKET_REDRAW;
}

/* ---- statistics: -z roce,qp (TShark) and Statistics → RoCE QP Conversations -------- */

/* Both views show the engine's own per-conversation counters (as `qptrace
 * summary`), for the whole file: the engine has seen every packet on the
 * first pass, so a filter does not change the numbers.  A filter (`-z
 * roce,qp,FILTER`, or the dialog's) chooses the rows: the conversations that
 * have a packet it lets through. */

/* The conversations of the packets a statistics tap was given. */
static void seen_add(GHashTable **seen, const void *data)
{
	const roce_frame_t *fi = (const roce_frame_t *)data;

	if (!*seen)
		*seen = g_hash_table_new(NULL, NULL);
	if (fi && fi->conv >= 0)
		g_hash_table_add(*seen, GINT_TO_POINTER(fi->conv + 1));
}

/* The engine's conversations, those in seen only, read one at a time in
 * id order (a walk: none thawed, qpt_conv_walk); ids seen are resolved now
 * (a conversation may have been folded into another since): their set
 * (ids + 1, the caller's), the walk's filter (seen_live). */
static GHashTable *seen_ids(GHashTable *seen)
{
	GHashTable *live = g_hash_table_new(NULL, NULL);
	GHashTableIter it;
	gpointer key;

	if (seen) {
		g_hash_table_iter_init(&it, seen);
		while (g_hash_table_iter_next(&it, &key, NULL)) {
			int32_t id = roce_conv_id(GPOINTER_TO_INT(key) - 1);

			g_hash_table_add(live, GINT_TO_POINTER(id + 1));
		}
	}
	return live;
}

static bool seen_live(const struct qpt_conv_ident *c, void *live)
{
	return g_hash_table_contains((GHashTable *)live, GINT_TO_POINTER(c->id + 1));
}

/* ---- the columns ---------------------------------------------------------------- */

enum qp_col_kind { QP_CONV, QP_SVC, QP_ULP, QP_EP_A, QP_EP_B, QP_COUNTER, QP_MESSAGES, QP_NAKS,
		   QP_TIME_LOST, QP_RTT };

#define QP_MAX_COLS (QPT_C_COUNT + 8)
#define QP_CELL 96
typedef char qp_row_t[QP_MAX_COLS][QP_CELL];

static struct {
	enum qp_col_kind kind;
	unsigned counter; /* QP_COUNTER: index into qpt_counters[] */
} qp_cols[QP_MAX_COLS];
static unsigned qp_ncols;
/* Column titles and alignment, shared by the TShark text and the GUI table.
 * The GUI draws a cell with its field_format. */
static stat_tap_table_item qp_fields[QP_MAX_COLS];

static void qp_add_col(enum qp_col_kind kind, unsigned counter, stat_tap_table_item_enum type,
		       tap_alignment_type align, const char *title, const char *fmt)
{
	qp_cols[qp_ncols].kind = kind;
	qp_cols[qp_ncols].counter = counter;
	qp_fields[qp_ncols] = (stat_tap_table_item){ type, align, title, fmt };
	qp_ncols++;
}

/* Room for the GUI's sort indicator before the first column's title. */
#define QP_TITLE_PAD "\u2003\u2003"

static const char *qp_text_title(unsigned col)
{
	const char *t = qp_fields[col].column_name;

	return g_str_has_prefix(t, QP_TITLE_PAD) ? t + strlen(QP_TITLE_PAD) : t;
}

static void qp_columns(void)
{
	/* Wireshark (4.0 to 4.6) sizes the dialog's columns to their titles
	 * and cells before it shows the sort indicator on the first one, which
	 * then takes room from the title: right-aligned, the title was clipped
	 * ("Conv" to "onv"; two em spaces before the cells' numbers did not make the
	 * column wide enough).  Two em spaces before the title do: the
	 * indicator clips them instead.  TShark prints the title without them
	 * (QP_TITLE_PAD). */
	qp_add_col(QP_CONV, 0, TABLE_ITEM_UINT, TAP_ALIGN_RIGHT, QP_TITLE_PAD "conv", "%u");
	qp_add_col(QP_SVC, 0, TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "transport", "%s");
	qp_add_col(QP_ULP, 0, TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "ULP", "%s");
	qp_add_col(QP_EP_A, 0, TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "A (addr QP)", "%s");
	qp_add_col(QP_EP_B, 0, TABLE_ITEM_STRING, TAP_ALIGN_LEFT, "B (addr QP)", "%s");
	/* the counters a->b/b->a, titled as summary --long names its rows
	 * ("retransmitted packets:" without the colon) */
	for (unsigned c = 0; c < QPT_C_COUNT; c++)
		if (qpt_counters[c].column)
			qp_add_col(QP_COUNTER, c, TABLE_ITEM_STRING, TAP_ALIGN_RIGHT,
				   g_strndup(qpt_counters[c].label,
					     strcspn(qpt_counters[c].label, ":")), "%s");
	qp_add_col(QP_MESSAGES, 0, TABLE_ITEM_STRING, TAP_ALIGN_RIGHT, "messages", "%s");
	qp_add_col(QP_NAKS, 0, TABLE_ITEM_STRING, TAP_ALIGN_RIGHT, "NAKs", "%s");
	/* the conversation's, as the columns of summary's table */
	qp_add_col(QP_TIME_LOST, 0, TABLE_ITEM_STRING, TAP_ALIGN_RIGHT, "time lost", "%s");
	qp_add_col(QP_RTT, 0, TABLE_ITEM_STRING, TAP_ALIGN_RIGHT, "RTT p50/p99", "%s");
}

static guint64 dir_messages(const struct qpt_dir_stats *d)
{
	guint64 n = 0;

	for (int op = 1; op < QPT_OP_COUNT; op++)
		n += qpt_dir_op(d, op)->count;
	return n;
}

static guint64 dir_naks(const struct qpt_dir_stats *d)
{
	guint64 n = 0;

	for (int i = 0; i < QPT_NAK_KINDS; i++)
		n += d->naks[i];
	return n;
}

static void fmt_ep(const struct qpt_endpoint *e, char *buf, size_t len, gboolean b_side)
{
	char a[QPT_ADDR_STRLEN];

	qpt_endpoint_addr(e, a);
	if (e->qpn_known || b_side)
		g_snprintf(buf, (gulong)len, "%s 0x%06x", a, e->qpn);
	else
		g_snprintf(buf, (gulong)len, "%s ?", a);
}

/* The text of every column of one conversation ("a->b/b->a" pairs). */
static void qp_cells(const struct qpt_conv_stats *c, char cell[QP_MAX_COLS][QP_CELL])
{
	const struct qpt_dir_stats *a = &c->dir[0], *b = &c->dir[1];
	struct qpt_conv_numbers n;

	qpt_conv_numbers(c, &n);
	for (unsigned col = 0; col < qp_ncols; col++) {
		char *s = cell[col];

		switch (qp_cols[col].kind) {
		case QP_CONV:
			g_snprintf(s, QP_CELL, "%d", c->id);
			break;
		case QP_SVC:
			g_strlcpy(s, c->transport[0] ? c->transport : "?", QP_CELL);
			break;
		case QP_ULP:
			g_strlcpy(s, qpt_conv_ulp(&c->ident) ? qpt_conv_ulp(&c->ident) : "-", QP_CELL);
			break;
		case QP_EP_A:
			fmt_ep(&c->ep[0], s, QP_CELL, FALSE);
			break;
		case QP_EP_B:
			fmt_ep(&c->ep[1], s, QP_CELL, TRUE);
			break;
		case QP_COUNTER:
			g_snprintf(s, QP_CELL, "%" PRIu64 "/%" PRIu64,
				   qpt_counter(a, qp_cols[col].counter),
				   qpt_counter(b, qp_cols[col].counter));
			break;
		case QP_MESSAGES:
			g_snprintf(s, QP_CELL, "%" PRIu64 "/%" PRIu64, (guint64)dir_messages(a),
				   (guint64)dir_messages(b));
			break;
		case QP_NAKS:
			g_snprintf(s, QP_CELL, "%" PRIu64 "/%" PRIu64, (guint64)dir_naks(a),
				   (guint64)dir_naks(b));
			break;
		case QP_TIME_LOST: /* the conversation's, as qptrace summary's table */
			qpt_format_time_lost(&n, s, QP_CELL);
			break;
		case QP_RTT: /* the conversation's, as qptrace summary's table */
			qpt_format_rtt_p50_p99(&n, s, QP_CELL);
			break;
		}
	}
}

/* ---- TShark: -z roce,qp[,FILTER], printed once after the last packet ------------- */

/* A cell's width on a terminal: its characters, not its bytes ("µs"). */
static unsigned qp_width(const char *s)
{
	return (unsigned)g_utf8_strlen(s, -1);
}

/* Each column as wide as its title or widest cell, two spaces between. */
static void qp_print_row(const char *const *cells, const unsigned *width)
{
	for (unsigned col = 0; col < qp_ncols; col++) {
		if (col + 1 < qp_ncols)
			printf("%s%*s  ", cells[col], (int)(width[col] - qp_width(cells[col])), "");
		else
			printf("%s\n", cells[col]);
	}
}

static GHashTable *qp_seen;	/* conversations of the packets tapped */
static char *qp_filter;		/* -z roce,qp,FILTER */

static tap_packet_status qp_packet(void *tapdata _U_, packet_info *pinfo _U_,
				   epan_dissect_t *edt _U_, const void *data,
				   tap_flags_t flags _U_)
{
	seen_add(&qp_seen, data);
	return TAP_PACKET_DONT_REDRAW;
}

static void qp_draw(void *tapdata _U_)
{
	const char *cells[QP_MAX_COLS];
	unsigned width[QP_MAX_COLS];
	qp_row_t cell;
	struct qpt_conv_walk w;
	const struct qpt_conv_stats *c;
	GHashTable *live;
	guint n = 0;

	printf("==================================================================================\n");
	printf("RoCE QP conversations (qptrace engine)\n");
	printf("Counts are a->b/b->a, as qptrace summary --long; time lost (in go-back-N episodes)\n"
	       "and RTT p50/p99 (ACK RTT) are the conversation's, as in qptrace summary's table.\n");
	if (qp_filter)
		printf("Filter: %s (conversations with a packet it matches)\n", qp_filter);
	if (!roce_flow()) {
		printf("(no data)\n");
		printf("==================================================================================\n");
		return;
	}
	roce_flow_finish();
	live = seen_ids(qp_seen);
	/* one row's cells at a time: formatted once for the column widths and
	 * again to print (a row's cells are 3.4 KB: a million conversations'
	 * would be 3.4 GB at once), the conversations read one at a time */
	for (unsigned col = 0; col < qp_ncols; col++) {
		cells[col] = qp_text_title(col);
		width[col] = qp_width(cells[col]);
	}
	for (qpt_conv_walk_start(&w, roce_flow(), seen_live, live); (c = qpt_conv_walk_next(&w));) {
		qp_cells(c, cell);
		for (unsigned col = 0; col < qp_ncols; col++)
			width[col] = MAX(width[col], qp_width(cell[col]));
	}
	qpt_conv_walk_end(&w);
	qp_print_row(cells, width);
	for (qpt_conv_walk_start(&w, roce_flow(), seen_live, live); (c = qpt_conv_walk_next(&w));) {
		qp_cells(c, cell);
		for (unsigned col = 0; col < qp_ncols; col++)
			cells[col] = cell[col];
		qp_print_row(cells, width);
		n++;
	}
	qpt_conv_walk_end(&w);
	g_hash_table_destroy(live);
	printf("%u conversation(s)\n", n);
	printf("==================================================================================\n");
}

static int qp_stats_dummy;

static qpt_ws_tap_init_ret qp_init(const char *opt_arg, void *userdata _U_)
{
	GString *err;

	if (opt_arg && g_str_has_prefix(opt_arg, "roce,qp,") && opt_arg[8]) {
		g_free(qp_filter);
		qp_filter = g_strdup(opt_arg + 8);
	}
	err = register_tap_listener("roce", &qp_stats_dummy, qp_filter, 0, NULL, qp_packet,
				    qp_draw, NULL);
	if (err) {
		fprintf(stderr, "tshark: couldn't register roce,qp tap: %s\n", err->str);
		g_string_free(err, TRUE);
		exit(1);
	}
	QPT_WS_TAP_INIT_OK;
}

/* Registered before the table below, so it owns "-z roce,qp" (the first
 * registration of a -z name wins): TShark keeps the text layout above. */
static stat_tap_ui qp_ui = {
	REGISTER_PACKET_STAT_GROUP_UNSORTED,
	"RoCE QP Conversations",
	"roce,qp",
	qp_init,
	0,
	NULL,
};

/* Wireshark: the same rows as a stat_tap_table, which the GUI lists under
 * Statistics (REGISTER_PACKET_STAT_GROUP_UNSORTED; Wireshark 4.0 puts GENERIC ones in
 * no menu) and shows in its sortable table
 * dialog.  The GUI has no "draw" hook for the dissector, so the rows are
 * (re)built from the engine on the first tapped packet after a reset, and
 * again only if the engine has seen more frames since (live capture). */

#define QP_TABLE_NAME "RoCE QP conversations (qptrace engine)"

static guint64 qp_table_frames = G_MAXUINT64; /* engine frames when last built */
static GHashTable *qp_table_seen;	       /* conversations of the packets tapped */
static guint qp_table_nseen;		       /* their number when last built */

static void qp_table_reset(stat_tap_table *table)
{
	for (guint row = 0; row < table->num_elements; row++) {
		stat_tap_table_item_type *f = table->elements[row];

		for (guint col = 0; col < table->num_fields; col++) {
			if (f[col].type == TABLE_ITEM_STRING) {
				g_free((char *)f[col].value.string_value);
				f[col].value.string_value = NULL;
			}
		}
		g_free(f);
		table->elements[row] = NULL;
	}
	table->num_elements = 0;
	qp_table_frames = G_MAXUINT64;
	if (qp_table_seen)
		g_hash_table_remove_all(qp_table_seen);
}

static void qp_table_free_item(stat_tap_table *table _U_, guint row _U_, guint col _U_,
			       stat_tap_table_item_type *field)
{
	if (field->type == TABLE_ITEM_STRING) {
		g_free((char *)field->value.string_value);
		field->value.string_value = NULL;
	}
}

static void qp_table_init(stat_tap_table_ui *ui)
{
	stat_tap_table *table = stat_tap_find_table(ui, QP_TABLE_NAME);

	if (table) {
		qp_table_reset(table);
		return;
	}
	/* filter_string: "roce.stream==" and a row's conversation number
	 * would be its display filter, but Wireshark's simple statistics
	 * dialog (4.0 to 4.6) offers no Apply as Filter for its rows: use
	 * Conversation Filter > RoCE QP on a packet instead. */
	table = stat_tap_init_table(QP_TABLE_NAME, (int)qp_ncols, 0, "roce.stream==");
	stat_tap_add_table(ui, table);
	qp_table_frames = G_MAXUINT64;
}

static void qp_table_build(stat_tap_table *table)
{
	GHashTable *live = seen_ids(qp_table_seen);
	struct qpt_conv_walk w;
	const struct qpt_conv_stats *c;
	guint row;

	qpt_conv_walk_start(&w, roce_flow(), seen_live, live);
	c = qpt_conv_walk_next(&w);
	for (row = 0; c || row < table->num_elements; row++, c = c ? qpt_conv_walk_next(&w) : NULL) {
		stat_tap_table_item_type items[QP_MAX_COLS];
		char cell[QP_MAX_COLS][QP_CELL];

		if (c)
			qp_cells(c, cell);
		memset(items, 0, sizeof(items));
		for (unsigned col = 0; col < qp_ncols; col++) {
			items[col].type = qp_fields[col].type;
			if (qp_cols[col].kind == QP_CONV)
				items[col].value.uint_value = c ? (guint)c->id : 0;
			else
				items[col].value.string_value = g_strdup(c ? cell[col] : "");
		}
		/* Rows already shown by the GUI keep their storage: free the old
		 * strings and overwrite the values in place. */
		if (row < table->num_elements) {
			for (guint col = 0; col < qp_ncols; col++)
				qp_table_free_item(table, row, col, &table->elements[row][col]);
		}
		stat_tap_init_table_row(table, row, qp_ncols, items);
	}
	qpt_conv_walk_end(&w);
	g_hash_table_destroy(live);
}

static tap_packet_status qp_table_packet(void *tapdata, packet_info *pinfo _U_,
					 epan_dissect_t *edt _U_, const void *data,
					 tap_flags_t flags _U_)
{
	stat_data_t *sd = (stat_data_t *)tapdata;
	stat_tap_table *table;
	guint64 frames;

	if (!roce_flow() || !sd->stat_tap_data->tables || sd->stat_tap_data->tables->len == 0)
		return TAP_PACKET_DONT_REDRAW;
	seen_add(&qp_table_seen, data);
	frames = qpt_flow_totals(roce_flow())->frames;
	if (frames == qp_table_frames && g_hash_table_size(qp_table_seen) == qp_table_nseen)
		return TAP_PACKET_DONT_REDRAW;
	table = g_array_index(sd->stat_tap_data->tables, stat_tap_table *, 0);
	qp_table_build(table);
	qp_table_frames = frames;
	qp_table_nseen = g_hash_table_size(qp_table_seen);
	return TAP_PACKET_REDRAW;
}

static tap_param qp_table_params[] = {
	{ PARAM_FILTER, "filter", "Filter", NULL, TRUE },
};

static stat_tap_table_ui qp_table_ui = {
	REGISTER_PACKET_STAT_GROUP_UNSORTED,
	"RoCE QP Conversations",
	"roce",
	"roce,qp",
	qp_table_init,
	qp_table_packet,
	qp_table_reset,
	qp_table_free_item,
	NULL,
	0, NULL, /* the columns: set by roce_stats_register() */
	array_length(qp_table_params), qp_table_params,
	NULL,
	0,
};

void roce_stats_register(void)
{
	qp_columns();
	qp_table_ui.nfields = qp_ncols;
	qp_table_ui.fields = qp_fields;
	qpt_register_conversation_filter("roce", "RoCE QP", roce_conv_valid, roce_conv_filter);
	register_conversation_table(proto_roce, FALSE, roce_conv_packet, roce_endpoint_packet);
	register_init_routine(roce_et_init);
	register_stat_tap_ui(&qp_ui, NULL);
	register_stat_tap_table_ui(&qp_table_ui);
}
