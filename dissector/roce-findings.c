/* roce-findings.c - the diagnosis on the frames it names
 *
 * After the first sequential pass (tshark -2, the GUI once a file is read:
 * Wireshark's postseq routines), the engine's findings of the whole
 * capture, as `qptrace summary` makes them (analyzer/qpt_findings.c), are
 * put on the frames each names: a `roce.finding` item with its words, its
 * kind in `roce.finding.kind`, and an expert info per kind with the kind's
 * constant title (so that -z expert groups them, as TCP's analysis does).
 * A finding that names no frame (a capture-wide count) shows nowhere here:
 * `qptrace summary` has it.  In one pass (tshark without -2) there are no
 * findings yet when a frame is dissected, as TCP's analysis that needs
 * later frames.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define WS_BUILD_DLL
#include <wireshark.h>

#include <epan/expert.h>
#include <epan/packet.h>
#include <epan/proto.h>

#include "qpt_attr.h"
#include "qpt_findings.h"
#include "qpt_flow.h"
#include "roce-int.h"

static int hf_finding = -1, hf_finding_kind = -1;
static gint ett_finding = -1;
/* one expert info per kind and severity: a finding's severity is the one
 * summary gives it (the row's, raised when it is large), not the kind's;
 * roce.finding.<kind> at the row's, roce.finding.<kind>.<severity> else */
#define N_SEV (QPT_SEV_ERROR + 1)
static expert_field ei_finding[QPT_F_COUNT][N_SEV];
static struct qpt_findings_frames *frames; /* the events' frames, first pass */
static GArray *findings;		   /* struct qpt_finding, after it */
static GHashTable *by_frame;		   /* frame -> GArray of guint: indexes */

static void clear(void)
{
	if (frames)
		qpt_findings_frames_free(frames);
	if (findings)
		g_array_free(findings, TRUE);
	if (by_frame)
		g_hash_table_destroy(by_frame);
	frames = NULL;
	findings = NULL;
	by_frame = NULL;
}

static void findings_init(void)
{
	clear();
	frames = qpt_findings_frames_new();
}

QPT_HOT void roce_findings_note(const struct qpt_verdict *v)
{
	if (frames && !findings)
		qpt_findings_frames_add(frames, v);
}

static void findings_postseq(void)
{
	struct qpt_flow *fl = roce_flow();
	GPtrArray *att;

	if (!fl || !frames || findings)
		return;
	roce_flow_finish();
	att = qpt_flow_cm_attempts(fl);
	/* every conversation, read one at a time (none thawed) */
	findings = qpt_findings_walk(fl, NULL, NULL, att, TRUE, frames);
	g_ptr_array_free(att, TRUE);
	by_frame = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
					 (GDestroyNotify)g_array_unref);
	for (guint i = 0; i < findings->len; i++) {
		const struct qpt_finding *f = &g_array_index(findings, struct qpt_finding, i);

		for (unsigned k = 0; k < f->nframes; k++) {
			gpointer key = GSIZE_TO_POINTER((gsize)f->frames[k]);
			GArray *idx = g_hash_table_lookup(by_frame, key);

			if (!idx) {
				idx = g_array_new(FALSE, FALSE, sizeof(guint));
				g_hash_table_insert(by_frame, key, idx);
			}
			if (!idx->len || g_array_index(idx, guint, idx->len - 1) != i)
				g_array_append_val(idx, i);
		}
	}
}

QPT_HOT void roce_show_findings(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree)
{
	GArray *idx;

	if (!by_frame ||
	    !(idx = g_hash_table_lookup(by_frame, GSIZE_TO_POINTER((gsize)pinfo->num))))
		return;
	for (guint i = 0; i < idx->len; i++) {
		const struct qpt_finding *f =
			&g_array_index(findings, struct qpt_finding, g_array_index(idx, guint, i));
		proto_item *it = proto_tree_add_string(tree, hf_finding, tvb, 0, 0, f->text);
		proto_tree *st = proto_item_add_subtree(it, ett_finding);

		proto_item_set_generated(it);
		proto_item_set_generated(proto_tree_add_string(st, hf_finding_kind, tvb, 0, 0,
							       qpt_finding_kinds[f->kind].key));
		expert_add_info(pinfo, it, &ei_finding[f->kind][MIN((unsigned)f->severity, N_SEV - 1u)]);
	}
}

void roce_findings_register(void)
{
	static hf_register_info hf[] = {
		{ &hf_finding, { "Finding (qptrace diagnosis)", "roce.finding", FT_STRING, BASE_NONE, NULL, 0, "What `qptrace summary` says of the capture, on the frames it names", HFILL } },
		{ &hf_finding_kind, { "Finding kind", "roce.finding.kind", FT_STRING, BASE_NONE, NULL, 0, "As `qptrace summary --json` findings[].kind", HFILL } },
	};
	static gint *ett[] = { &ett_finding };
	ei_register_info *ei = g_new0(ei_register_info, QPT_F_COUNT * N_SEV);
	expert_module_t *em;

	for (unsigned k = 0; k < QPT_F_COUNT; k++) {
		const struct qpt_finding_info *fk = &qpt_finding_kinds[k];

		for (unsigned sv = 0; sv < N_SEV; sv++) {
			ei_finding[k][sv] = (expert_field)EI_INIT;
			ei[k * N_SEV + sv] = (ei_register_info){ &ei_finding[k][sv], {
				sv == fk->severity ? g_strdup_printf("roce.finding.%s", fk->key) :
				g_strdup_printf("roce.finding.%s.%s", fk->key, qpt_severity_name(sv)),
				PI_PROTOCOL, roce_pi_severity(sv), fk->title, EXPFILL } };
		}
	}
	proto_register_field_array(proto_roce, hf, array_length(hf));
	proto_register_subtree_array(ett, array_length(ett));
	em = expert_register_protocol(proto_roce);
	expert_register_field_array(em, ei, QPT_F_COUNT * N_SEV);
	register_init_routine(findings_init);
	register_cleanup_routine(clear);
	register_postseq_cleanup_routine(findings_postseq);
}
