/* print_ext.c - the parts of a packet printed the same way in every mode
 * (one line, -v, JSON): its extended headers (QPT_EXT_HEADERS, one pr_<ID>
 * each, IBA vol 1 9.3) and how it was delivered (tunnel, MPLS, cut by the
 * capture).  print_pkt.c calls them from each of its printers.
 */
#include <arpa/inet.h>
#include <inttypes.h>

#include "print_int.h"

/* ---- how the frame was delivered: tunnel, MPLS, cut by the capture ----- */

/* The outer tunnel a mirror or overlay wrapped the frame in, its MPLS
 * labels, and a payload or ICRC cut by the capture's snap length: a bracket
 * at the end of the line, a line of its own with -v, keys in JSON
 * ("tunnel", "mpls", "cut_by_capture"). */
void print_delivery(GString *o, const struct qpt_pkt *pkt, enum qpt_print_mode m)
{
	const struct qpt_tunnel *t = &pkt->tunnel;
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];

	if (pkt->flags & QPT_HAS_TUNNEL) {
		int af = t->ip_version == 6 ? AF_INET6 : AF_INET;
		unsigned skip = t->ip_version == 6 ? 0 : 12;

		inet_ntop(af, t->src + skip, s, sizeof(s));
		inet_ntop(af, t->dst + skip, d, sizeof(d));
		if (m == QPT_PRINT_JSON) {
			print_json_obj_begin(o, "tunnel");
			print_json_key(o, false, "type");
			qpt_json_escape(o, qpt_tunnel_name(t->kind));
			print_json_str_member(o, "src", s);
			print_json_str_member(o, "dst", d);
			if (t->kind == QPT_TUN_ERSPAN2 || t->kind == QPT_TUN_ERSPAN3) {
				JU(o, "session_id", t->session_id);
				JB(o, "truncated", t->erspan_truncated);
			}
			if (t->kind == QPT_TUN_ERSPAN2)
				JU(o, "erspan_vlan", t->erspan_vlan);
			if (t->kind == QPT_TUN_ERSPAN3)
				JB(o, "subheader", t->erspan_subheader);
			if (t->kind == QPT_TUN_VXLAN)
				JU(o, "vni", t->vni);
			if (t->has_key)
				JU(o, "gre_key", t->gre_key);
			if (t->depth > 1)
				JU(o, "depth", t->depth);
			g_string_append_c(o, '}');
		} else {
			g_string_append_printf(o, m == QPT_PRINT_LINE ? " [%s %s > %s" : "  tunnel %s %s > %s",
					       qpt_tunnel_name(t->kind), s, d);
			if (t->kind == QPT_TUN_ERSPAN2 || t->kind == QPT_TUN_ERSPAN3)
				g_string_append_printf(o, " session %u%s", t->session_id,
						       t->erspan_truncated ? " truncated" : "");
			if (t->kind == QPT_TUN_VXLAN)
				g_string_append_printf(o, " VNI %u", t->vni);
			if (t->has_key)
				g_string_append_printf(o, " key 0x%08x", t->gre_key);
			if (m == QPT_PRINT_VERBOSE && t->kind == QPT_TUN_ERSPAN3)
				g_string_append(o, t->erspan_subheader ? " with platform subheader" : "");
			if (t->depth > 1)
				g_string_append_printf(o, " (%u tunnels deep)", t->depth);
			g_string_append(o, m == QPT_PRINT_LINE ? "]" : "\n");
		}
	}
	if (pkt->mpls_depth) {
		if (m == QPT_PRINT_JSON) {
			g_string_append(o, ",\"mpls\":{\"labels\":[");
			for (unsigned i = 0; i < pkt->mpls_count; i++) {
				if (i)
					g_string_append_c(o, ',');
				print_append_u64(o, pkt->mpls_label[i]);
			}
			g_string_append_c(o, ']');
			JU(o, "depth", pkt->mpls_depth);
			g_string_append_c(o, '}');
		} else {
			g_string_append(o, m == QPT_PRINT_LINE ? " [MPLS" : "  MPLS labels");
			for (unsigned i = 0; i < pkt->mpls_count; i++)
				g_string_append_printf(o, "%s%u", i ? "/" : " ", pkt->mpls_label[i]);
			if (pkt->mpls_depth > pkt->mpls_count)
				g_string_append_printf(o, " (%u labels)", pkt->mpls_depth);
			g_string_append(o, m == QPT_PRINT_LINE ? "]" : "\n");
		}
	}
	if (pkt->cut_by_snaplen) {
		if (m == QPT_PRINT_JSON)
			JB(o, "cut_by_capture", true);
		else
			g_string_append_printf(o, m == QPT_PRINT_LINE ?
					" [cut by the capture at %u bytes: ICRC not checked]" :
					"  cut by the capture at %u bytes: ICRC not checked\n",
					pkt->caplen);
	}
}

/* ---- extended headers: one print function each (QPT_EXT_HEADERS) ------ */

static void pr_RDETH(GString *o, const struct qpt_pkt *p, enum qpt_print_mode m)
{
	if (m == QPT_PRINT_LINE)
		g_string_append_printf(o, " RDETH eecnxt=0x%06x", p->rdeth_eecnxt);
	else if (m == QPT_PRINT_VERBOSE)
		g_string_append_printf(o, "  RDETH EE context 0x%06x\n", p->rdeth_eecnxt);
	else {
		print_json_obj_begin(o, "rdeth");
		print_json_first(o, "eecnxt", p->rdeth_eecnxt);
		g_string_append_c(o, '}');
	}
}

static void pr_DETH(GString *o, const struct qpt_pkt *p, enum qpt_print_mode m)
{
	if (m == QPT_PRINT_LINE)
		g_string_append_printf(o, " DETH qkey=0x%08x srcqp=0x%06x", p->deth.qkey,
				       p->deth.sqpn);
	else if (m == QPT_PRINT_VERBOSE)
		g_string_append_printf(o, "  DETH Q_Key 0x%08x SrcQP 0x%06x\n", p->deth.qkey,
				       p->deth.sqpn);
	else {
		print_json_obj_begin(o, "deth");
		print_json_first(o, "qkey", p->deth.qkey);
		JU(o, "sqpn", p->deth.sqpn);
		g_string_append_c(o, '}');
	}
}

static void pr_XRCETH(GString *o, const struct qpt_pkt *p, enum qpt_print_mode m)
{
	if (m == QPT_PRINT_LINE)
		g_string_append_printf(o, " XRCETH srq=0x%06x", p->xrceth_srq);
	else if (m == QPT_PRINT_VERBOSE)
		g_string_append_printf(o, "  XRCETH XRC SRQ 0x%06x\n", p->xrceth_srq);
	else {
		print_json_obj_begin(o, "xrceth");
		print_json_first(o, "srq", p->xrceth_srq);
		g_string_append_c(o, '}');
	}
}

static void pr_FETH(GString *o, const struct qpt_pkt *p, enum qpt_print_mode m)
{
	if (m == QPT_PRINT_LINE)
		g_string_append_printf(o, " FETH sel=%u placement=%u", p->feth_sel_level,
				       p->feth_placement);
	else if (m == QPT_PRINT_VERBOSE)
		g_string_append_printf(o, "  FETH selectivity level %u placement type %u\n",
				       p->feth_sel_level, p->feth_placement);
	else {
		print_json_obj_begin(o, "feth");
		print_json_first(o, "sel_level", p->feth_sel_level);
		JU(o, "placement", p->feth_placement);
		g_string_append_c(o, '}');
	}
}

static void pr_RETH(GString *o, const struct qpt_pkt *p, enum qpt_print_mode m)
{
	if (m == QPT_PRINT_LINE) {
		g_string_append_len(o, " RETH va=0x", 11);
		print_append_hex(o, p->reth.va, 1);
		g_string_append_len(o, " rkey=0x", 8);
		print_append_hex(o, p->reth.rkey, 8);
		g_string_append_len(o, " dmalen=", 8);
		print_append_u64(o, p->reth.dmalen);
	} else if (m == QPT_PRINT_VERBOSE)
		g_string_append_printf(o, "  RETH VA 0x%016" PRIx64 " R_Key 0x%08x DMA length %u\n",
				       p->reth.va, p->reth.rkey, p->reth.dmalen);
	else {
		print_json_obj_begin(o, "reth");
		print_json_first(o, "va", p->reth.va);
		JU(o, "rkey", p->reth.rkey);
		JU(o, "dmalen", p->reth.dmalen);
		g_string_append_c(o, '}');
	}
}

static void pr_ATOMICETH(GString *o, const struct qpt_pkt *p, enum qpt_print_mode m)
{
	const struct qpt_atomiceth *a = &p->atomiceth;

	if (m == QPT_PRINT_LINE)
		g_string_append_printf(o,
				       " AtomicETH va=0x%" PRIx64 " rkey=0x%08x swap=0x%" PRIx64
				       " cmp=0x%" PRIx64,
				       a->va, a->rkey, a->swap, a->compare);
	else if (m == QPT_PRINT_VERBOSE)
		g_string_append_printf(o,
				       "  AtomicETH VA 0x%016" PRIx64 " R_Key 0x%08x swap/add 0x%016" PRIx64
				       " compare 0x%016" PRIx64 "\n",
				       a->va, a->rkey, a->swap, a->compare);
	else {
		print_json_obj_begin(o, "atomiceth");
		print_json_first(o, "va", a->va);
		JU(o, "rkey", a->rkey);
		JU(o, "swap", a->swap);
		JU(o, "compare", a->compare);
		g_string_append_c(o, '}');
	}
}

static void pr_AETH(GString *o, const struct qpt_pkt *p, enum qpt_print_mode m)
{
	const struct qpt_aeth *a = &p->aeth;

	if (m == QPT_PRINT_LINE) {
		if (a->kind == QPT_AETH_ACK) {
			g_string_append_len(o, " AETH ACK credits=", 18);
			print_append_u64(o, a->value);
		} else if (a->kind == QPT_AETH_RNR)
			g_string_append_printf(o, " AETH RNR-NAK timer=%u (%.2f ms)",
					       a->value, qpt_rnr_timer_us(a->value) / 1000);
		else if (a->kind == QPT_AETH_NAK)
			g_string_append_printf(o, " AETH NAK %s", qpt_nak_name(a->value));
		else
			g_string_append_printf(o, " AETH reserved 0x%02x", a->syndrome);
		g_string_append_len(o, " MSN=", 5);
		print_append_u64(o, a->msn);
	} else if (m == QPT_PRINT_VERBOSE) {
		g_string_append_printf(o, "  AETH syndrome 0x%02x (%s %u) MSN %u\n",
				       a->syndrome, qpt_aeth_kind_name(a->kind), a->value,
				       a->msn);
	} else {
		print_json_obj_begin(o, "aeth");
		print_json_first(o, "syndrome", a->syndrome);
		JU(o, "msn", a->msn);
		print_json_str_member(o, "kind", qpt_aeth_kind_name(a->kind));
		if (a->kind == QPT_AETH_ACK)
			JU(o, "credits", a->value);
		else if (a->kind == QPT_AETH_RNR)
			JU(o, "rnr_timer", a->value);
		else if (a->kind == QPT_AETH_NAK) {
			JU(o, "nak_code", a->value);
			print_json_str_member(o, "nak", qpt_nak_name(a->value));
		}
		g_string_append_c(o, '}');
	}
}

static void pr_ATOMICACKETH(GString *o, const struct qpt_pkt *p, enum qpt_print_mode m)
{
	if (m == QPT_PRINT_LINE)
		g_string_append_printf(o, " orig=0x%" PRIx64, p->atomicacketh_orig);
	else if (m == QPT_PRINT_VERBOSE)
		g_string_append_printf(o, "  AtomicAckETH original data 0x%016" PRIx64 "\n",
				       p->atomicacketh_orig);
	else {
		print_json_obj_begin(o, "atomicacketh");
		print_json_first(o, "orig", p->atomicacketh_orig);
		g_string_append_c(o, '}');
	}
}

static void pr_IMMDT(GString *o, const struct qpt_pkt *p, enum qpt_print_mode m)
{
	if (m == QPT_PRINT_LINE)
		g_string_append_printf(o, " imm=0x%08x", p->immdt);
	else if (m == QPT_PRINT_VERBOSE)
		g_string_append_printf(o, "  ImmDt 0x%08x\n", p->immdt);
	else
		JU(o, "immdt", p->immdt);
}

static void pr_IETH(GString *o, const struct qpt_pkt *p, enum qpt_print_mode m)
{
	if (m == QPT_PRINT_LINE)
		g_string_append_printf(o, " inv_rkey=0x%08x", p->ieth);
	else if (m == QPT_PRINT_VERBOSE)
		g_string_append_printf(o, "  IETH R_Key 0x%08x\n", p->ieth);
	else
		JU(o, "ieth", p->ieth);
}

static void (*const ext_print[QPT_H_COUNT])(GString *, const struct qpt_pkt *,
					    enum qpt_print_mode) = {
#define EXT_PR_ROW(a, id, name, len) [QPT_HI_##id] = pr_##id,
	QPT_EXT_HEADERS(EXT_PR_ROW, 0)
#undef EXT_PR_ROW
};

/* The decoded extended headers, in wire order. */
void print_ext(GString *o, const struct qpt_pkt *pkt, enum qpt_print_mode m)
{
	for (unsigned i = 0; i < QPT_H_COUNT; i++)
		if (pkt->flags & (1u << i))
			ext_print[i](o, pkt, m);
}
