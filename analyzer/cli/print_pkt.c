/* print_pkt.c - the packet view: one line, every field (-v), or JSON Lines
 *
 * The JSON keys are a public contract, documented in README.md.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "output.h"
#include "print_int.h"
#include "reader.h"
#include "qpt_flow.h"
#include "qpt_mad.h"

void qpt_appendf(GString *out, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(buf)) {
		g_string_append_len(out, buf, n);
		return;
	}
	va_start(ap, fmt);
	g_string_append_vprintf(out, fmt, ap);
	va_end(ap);
}

void qpt_json_escape(GString *out, const char *s)
{
	g_string_append_c(out, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			g_string_append_printf(out, "\\%c", c);
		else if (c < 0x20)
			g_string_append_printf(out, "\\u%04x", c);
		else
			g_string_append_c(out, (char)c);
	}
	g_string_append_c(out, '"');
}

static void fmt_gid(const uint8_t *gid, char *buf, size_t len)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (!memcmp(gid, v4mapped, 12))
		inet_ntop(AF_INET, gid + 12, buf, (socklen_t)len);
	else
		inet_ntop(AF_INET6, gid, buf, (socklen_t)len);
}

/* RDMA-CM keeps an IPv4 address in the last four of sixteen bytes. */
static void fmt_cma(const struct qpt_cma_ip *c, const uint8_t *a, char *buf,
		    size_t len)
{
	if (c->ip_version == 4)
		inet_ntop(AF_INET, a + 12, buf, (socklen_t)len);
	else
		inet_ntop(AF_INET6, a, buf, (socklen_t)len);
}

static void fmt_ip6(const uint8_t *a, char *buf, size_t len)
{
	inet_ntop(AF_INET6, a, buf, (socklen_t)len);
}

void qpt_format_addr(const struct qpt_pkt *pkt, bool src, char *buf, size_t len)
{
	if (pkt->ip_version == 4)
		inet_ntop(AF_INET, (src ? pkt->ip_src : pkt->ip_dst) + 12, buf,
			  (socklen_t)len);
	else if (pkt->ip_version == 6)
		fmt_ip6(src ? pkt->ip_src : pkt->ip_dst, buf, len);
	else if (pkt->flags & QPT_HAS_GRH && !(pkt->flags & QPT_HAS_LRH))
		fmt_gid(src ? pkt->grh.sgid : pkt->grh.dgid, buf, len);
	else if (pkt->flags & QPT_HAS_LRH)
		g_snprintf(buf, len, "%u", src ? pkt->lrh.slid : pkt->lrh.dlid);
	else
		g_snprintf(buf, len, "?");
}

static const char *ecn_name(unsigned ecn)
{
	static const char *const n[] = { "Not-ECT", "ECT(1)", "ECT(0)", "CE" };

	return n[ecn & 3];
}

static bool is_roce_ip(const struct qpt_pkt *pkt)
{
	return pkt->transport == QPT_TR_ROCEV2 && pkt->ip_version;
}

static const char *opcode_name(uint8_t op)
{
	const char *n = qpt_opcodes[op].name;

	if (n)
		return n;
	return (op & 0xe0) == QPT_SVC_MANUF ? "Manufacturer specific" : "Reserved";
}

/* ---- one line ------------------------------------------------------- */

/* Numbers without printf: packets writes millions of lines (and JSON
 * members), and a g_string_append_printf() per field was most of its
 * time.  As "%u". */
void print_append_u64(GString *o, uint64_t v)
{
	char b[20], *p = b + sizeof(b);

	do
		*--p = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	g_string_append_len(o, p, b + sizeof(b) - p);
}

/* As "%0*x" (width digits at least, lower case). */
void print_append_hex(GString *o, uint64_t v, unsigned width)
{
	char b[16], *p = b + sizeof(b);

	do
		*--p = "0123456789abcdef"[v & 15];
	while ((v >>= 4) != 0);
	while (b + sizeof(b) - p < (ptrdiff_t)width && p > b)
		*--p = '0';
	g_string_append_len(o, p, b + sizeof(b) - p);
}

/* As "%.6f": t * 1e6 rounded to an integer by hand when t is below 1e6
 * (t * 1e6 then within 2^-12 of the exact product) and not within 1e-3 of
 * a half (where that error could round it the other way than printf, which
 * rounds the exact value); printf otherwise. */
static void append_secs6(GString *o, double t)
{
	double y = t * 1e6, whole = floor(y), frac = y - whole;
	uint64_t r;

	if (signbit(t) || !(t < 1e6) || fabs(frac - 0.5) < 1e-3) {
		qpt_appendf(o, "%.6f", t);
		return;
	}
	r = (uint64_t)whole + (frac > 0.5);
	print_append_u64(o, r / 1000000);
	g_string_append_c(o, '.');
	r %= 1000000;
	for (uint64_t d = 100000; d; d /= 10)
		g_string_append_c(o, (char)('0' + r / d % 10));
}

static void line_cm(GString *o, const struct qpt_pkt *pkt)
{
	const struct qpt_cm *cm = &pkt->cm;
	const char *n = qpt_cm_msg_name(cm->msg);

	g_string_append_printf(o, " CM %s", n ? n : "?");
	switch (cm->msg) {
	case QPT_CM_REQ:
		g_string_append_printf(o,
				       " comm=0x%08x qpn=0x%06x psn=%u sid=0x%016" PRIx64
				       " mtu=%u",
				       cm->local_comm_id, cm->local_qpn,
				       cm->starting_psn, cm->service_id,
				       qpt_mtu_bytes(cm->path_mtu));
		break;
	case QPT_CM_REP:
		g_string_append_printf(o, " comm=0x%08x remote=0x%08x qpn=0x%06x psn=%u",
				       cm->local_comm_id, cm->remote_comm_id,
				       cm->local_qpn, cm->starting_psn);
		break;
	case QPT_CM_REJ:
		g_string_append_printf(o, " comm=0x%08x remote=0x%08x reason=%u",
				       cm->local_comm_id, cm->remote_comm_id,
				       cm->reason);
		break;
	case QPT_CM_SIDR_REQ:
		g_string_append_printf(o, " req=0x%08x sid=0x%016" PRIx64,
				       cm->local_comm_id, cm->service_id);
		break;
	case QPT_CM_SIDR_REP:
		g_string_append_printf(o, " req=0x%08x status=%u qpn=0x%06x",
				       cm->local_comm_id, cm->status, cm->local_qpn);
		break;
	default:
		g_string_append_printf(o, " comm=0x%08x remote=0x%08x",
				       cm->local_comm_id, cm->remote_comm_id);
		break;
	}
}

static void print_line(GString *o, const struct qpt_frame *f,
		       const struct qpt_pkt *pkt, double t0)
{
	char s[64], d[64];
	double t = (double)f->ts_sec + f->ts_nsec / 1e9 - t0;

	qpt_format_addr(pkt, true, s, sizeof(s));
	qpt_format_addr(pkt, false, d, sizeof(d));
	print_append_u64(o, f->number);
	g_string_append_c(o, ' ');
	append_secs6(o, t);
	g_string_append_c(o, ' ');
	g_string_append(o, s);
	g_string_append_len(o, " > ", 3);
	g_string_append(o, d);
	g_string_append_c(o, ' ');
	g_string_append(o, qpt_transport_name(pkt->transport));
	if (pkt->flags & QPT_HAS_BTH) {
		const struct qpt_bth *b = &pkt->bth;

		g_string_append_c(o, ' ');
		g_string_append(o, opcode_name(b->opcode));
		g_string_append_len(o, " QP=0x", 6);
		print_append_hex(o, b->dqpn, 6);
		g_string_append_len(o, " PSN=", 5);
		print_append_u64(o, b->psn);
		if (b->ackreq)
			g_string_append_len(o, " A", 2);
		if (b->fecn)
			g_string_append(o, " FECN");
		if (b->becn)
			g_string_append(o, " BECN");
	} else if (pkt->flags & QPT_HAS_LRH && pkt->error == QPT_E_OK) {
		g_string_append_printf(o, " raw LNH=%u", pkt->lrh.lnh);
	}
	print_ext(o, pkt, QPT_PRINT_LINE);
	if (pkt->flags & QPT_HAS_CM)
		line_cm(o, pkt);
	else if (pkt->flags & QPT_HAS_MAD)
		g_string_append_printf(o, " MAD %s %s attr=0x%04x",
				       qpt_mad_class_name(pkt->mad.mgmt_class),
				       qpt_mad_method_name(pkt->mad.method),
				       pkt->mad.attr_id);
	if (pkt->flags & QPT_HAS_BTH && !(pkt->flags & QPT_HAS_MAD)) {
		g_string_append_len(o, " len=", 5);
		print_append_u64(o, pkt->payload_len);
	}
	if (is_roce_ip(pkt) && pkt->ip_ecn == 3)
		g_string_append(o, " ECN=CE");
	if (pkt->icrc_checked && !pkt->icrc_ok)
		g_string_append_printf(o, " [bad ICRC 0x%08x, expected 0x%08x]",
				       pkt->icrc, pkt->icrc_computed);
	if (pkt->flags & QPT_HAS_VCRC && pkt->vcrc != pkt->vcrc_computed &&
	    pkt->icrc_checked)
		g_string_append_printf(o, " [bad VCRC 0x%04x, expected 0x%04x]",
				       pkt->vcrc, pkt->vcrc_computed);
	if (pkt->error != QPT_E_OK)
		g_string_append_printf(o, " [malformed: %s]", qpt_strerror(pkt->error));
	print_delivery(o, pkt, QPT_PRINT_LINE);
	g_string_append_c(o, '\n');
}

/* ---- every field (-v) ------------------------------------------------ */

static void verbose_cm(GString *o, const struct qpt_pkt *pkt)
{
	const struct qpt_cm *cm = &pkt->cm;
	const char *n = qpt_cm_msg_name(cm->msg);

	g_string_append_printf(o, "  CM %s\n", n ? n : "?");
	g_string_append_printf(o, "    local comm ID 0x%08x, remote comm ID 0x%08x\n",
			       cm->local_comm_id, cm->remote_comm_id);
	if (cm->msg == QPT_CM_REQ || cm->msg == QPT_CM_SIDR_REQ ||
	    cm->msg == QPT_CM_SIDR_REP)
		g_string_append_printf(o, "    service ID 0x%016" PRIx64 "\n",
				       cm->service_id);
	if (cm->msg == QPT_CM_REQ || cm->msg == QPT_CM_REP) {
		g_string_append_printf(o,
				       "    local QPN 0x%06x, starting PSN %u, local Q_Key 0x%08x, CA GUID 0x%016" PRIx64 "\n",
				       cm->local_qpn, cm->starting_psn, cm->local_qkey,
				       cm->local_ca_guid);
		g_string_append_printf(o,
				       "    responder resources %u, initiator depth %u, RNR retry %u\n",
				       cm->responder_resources, cm->initiator_depth,
				       cm->rnr_retry_count);
	}
	if (cm->msg == QPT_CM_REQ) {
		char a[64], b[64];

		fmt_gid(cm->primary_gid_local, a, sizeof(a));
		fmt_gid(cm->primary_gid_remote, b, sizeof(b));
		g_string_append_printf(o,
				       "    transport %u, path MTU %u (%u bytes), P_Key 0x%04x, retry %u\n",
				       cm->transport, cm->path_mtu,
				       qpt_mtu_bytes(cm->path_mtu), cm->pkey,
				       cm->retry_count);
		g_string_append_printf(o, "    primary path LID %u -> %u, GID %s -> %s\n",
				       cm->primary_lid_local, cm->primary_lid_remote, a, b);
	}
	if (cm->msg == QPT_CM_DREQ || cm->msg == QPT_CM_LAP)
		g_string_append_printf(o, "    remote QPN 0x%06x\n", cm->remote_qpn);
	if (cm->msg == QPT_CM_REJ)
		g_string_append_printf(o, "    message rejected %u, reason %u\n",
				       cm->msg_rejected, cm->reason);
	if (cm->msg == QPT_CM_SIDR_REP || cm->msg == QPT_CM_APR)
		g_string_append_printf(o, "    status %u, QPN 0x%06x, Q_Key 0x%08x\n",
				       cm->status, cm->local_qpn, cm->local_qkey);
	if (pkt->flags & QPT_HAS_CMA_IP) {
		char a[64], b[64];

		fmt_cma(&pkt->cma, pkt->cma.src, a, sizeof(a));
		fmt_cma(&pkt->cma, pkt->cma.dst, b, sizeof(b));
		g_string_append_printf(o,
				       "  RDMA-CM IP: version %u, %s port %u -> %s port %u (port space 0x%02x)\n",
				       pkt->cma.ip_version, a, pkt->cma.port, b,
				       pkt->cma.dst_port, pkt->cma.port_space);
	}
}

static void print_verbose(GString *o, const struct qpt_frame *f,
			  const struct qpt_pkt *pkt, double t0)
{
	char a[64], b[64];

	print_line(o, f, pkt, t0);
	g_string_append_printf(o, "  frame %u bytes captured, %u on the wire, link type %u\n",
			       f->caplen, f->wirelen, f->linktype);
	print_delivery(o, pkt, QPT_PRINT_VERBOSE);
	for (unsigned i = 0; i < pkt->vlan_count; i++)
		g_string_append_printf(o, "  802.1Q VLAN %u PCP %u\n",
				       pkt->vlan_tci[i] & 0xfff, pkt->vlan_tci[i] >> 13);
	if (pkt->ip_version) {
		qpt_format_addr(pkt, true, a, sizeof(a));
		qpt_format_addr(pkt, false, b, sizeof(b));
		g_string_append_printf(o, "  IPv%u %s > %s DSCP %u ECN %s TTL %u",
				       pkt->ip_version, a, b, pkt->ip_dscp,
				       ecn_name(pkt->ip_ecn), pkt->ip_ttl);
		if (pkt->ip_version == 6)
			g_string_append_printf(o, " flow label 0x%05x", pkt->ip_flowlabel);
		g_string_append_c(o, '\n');
	}
	if (pkt->flags & QPT_HAS_UDP || pkt->transport == QPT_TR_ROCEV2)
		g_string_append_printf(o, "  UDP %u > %u length %u\n", pkt->udp_sport,
				       pkt->udp_dport, pkt->udp_len);
	if (pkt->flags & QPT_HAS_LRH) {
		const struct qpt_lrh *l = &pkt->lrh;

		g_string_append_printf(o,
				       "  LRH VL %u LVer %u SL %u LNH %u DLID %u PktLen %u SLID %u\n",
				       l->vl, l->lver, l->sl, l->lnh, l->dlid, l->pktlen,
				       l->slid);
	}
	if (pkt->flags & QPT_HAS_GRH) {
		const struct qpt_grh *g = &pkt->grh;

		fmt_ip6(g->sgid, a, sizeof(a));
		fmt_ip6(g->dgid, b, sizeof(b));
		g_string_append_printf(o,
				       "  GRH IPVer %u TClass 0x%02x FlowLabel 0x%05x PayLen %u NxtHdr 0x%02x HopLmt %u\n"
				       "      SGID %s DGID %s\n",
				       g->ipver, g->tclass, g->flowlabel, g->paylen,
				       g->nxthdr, g->hoplmt, a, b);
	}
	if (pkt->flags & QPT_HAS_BTH) {
		const struct qpt_bth *h = &pkt->bth;

		g_string_append_printf(o,
				       "  BTH opcode 0x%02x (%s) SE %u M %u Pad %u TVer %u P_Key 0x%04x\n"
				       "      FECN %u BECN %u Resv6a 0x%02x DestQP 0x%06x A %u Resv7 0x%02x PSN %u\n",
				       h->opcode, opcode_name(h->opcode), h->se, h->m,
				       h->pad, h->tver, h->pkey, h->fecn, h->becn,
				       h->resv8a, h->dqpn, h->ackreq, h->resv7, h->psn);
	}
	print_ext(o, pkt, QPT_PRINT_VERBOSE);
	if (pkt->flags & QPT_HAS_MAD) {
		const struct qpt_mad *m = &pkt->mad;

		g_string_append_printf(o,
				       "  MAD base version %u class 0x%02x (%s) version %u method 0x%02x (%s)\n"
				       "      status 0x%04x TID 0x%016" PRIx64 " attribute 0x%04x modifier 0x%08x\n",
				       m->base_version, m->mgmt_class,
				       qpt_mad_class_name(m->mgmt_class), m->class_version,
				       m->method, qpt_mad_method_name(m->method), m->status,
				       m->tid, m->attr_id, m->attr_mod);
	}
	if (pkt->flags & QPT_HAS_CM)
		verbose_cm(o, pkt);
	if (pkt->flags & QPT_HAS_BTH)
		g_string_append_printf(o, "  payload %u bytes\n", pkt->payload_len);
	if (pkt->flags & QPT_HAS_ICRC) {
		if (pkt->icrc_checked)
			g_string_append_printf(o, "  ICRC 0x%08x [%s]\n", pkt->icrc,
					       pkt->icrc_ok ? "correct" : "incorrect");
		else
			g_string_append_printf(o, "  ICRC 0x%08x [not checked]\n", pkt->icrc);
	}
	if (pkt->flags & QPT_HAS_VCRC)
		g_string_append_printf(o, "  VCRC 0x%04x [%s]\n", pkt->vcrc,
				       pkt->icrc_checked ?
					       (pkt->vcrc_ok ? "correct" : "incorrect") :
					       "not checked");
}

/* ---- JSON Lines -------------------------------------------------------- */

void print_json_key(GString *o, bool comma, const char *k)
{
	if (comma)
		g_string_append_c(o, ',');
	g_string_append_c(o, '"');
	g_string_append(o, k);
	g_string_append_len(o, "\":", 2);
}

void print_json_obj_begin(GString *o, const char *key)
{
	print_json_key(o, true, key);
	g_string_append_c(o, '{');
}

/* Objects are written as {"a":1,"b":2}: the first member has no comma. */
void print_json_first(GString *o, const char *k, uint64_t v)
{
	print_json_key(o, false, k);
	print_append_u64(o, v);
}

void print_json_str_member(GString *o, const char *k, const char *v)
{
	print_json_key(o, true, k);
	qpt_json_escape(o, v);
}

static void print_json(GString *o, const struct qpt_frame *f,
		       const struct qpt_pkt *pkt)
{
	char a[64];

	g_string_append(o, "{\"schema\":\"" QPT_SCHEMA_BASE "packets-" QPT_SCHEMA_VERSION
			   "\",\"frame\":");
	print_append_u64(o, f->number);
	g_string_append(o, ",\"time\":");
	qpt_format_epoch(o, f->ts_sec * 1000000000 + (int64_t)f->ts_nsec); /* checked by the reader */
	print_json_str_member(o, "transport", qpt_transport_name(pkt->transport));
	if (pkt->ip_version || (pkt->flags & QPT_HAS_GRH && !(pkt->flags & QPT_HAS_LRH))) {
		qpt_format_addr(pkt, true, a, sizeof(a));
		print_json_str_member(o, "src", a);
		qpt_format_addr(pkt, false, a, sizeof(a));
		print_json_str_member(o, "dst", a);
	} else if (pkt->flags & QPT_HAS_LRH) {
		JU(o, "src", pkt->lrh.slid);
		JU(o, "dst", pkt->lrh.dlid);
	}
	if (pkt->flags & QPT_HAS_UDP) {
		JU(o, "sport", pkt->udp_sport);
		JU(o, "dport", pkt->udp_dport);
	}
	if (pkt->vlan_count) {
		g_string_append(o, ",\"vlan\":[");
		for (unsigned i = 0; i < pkt->vlan_count; i++)
			g_string_append_printf(o, "%s%u", i ? "," : "",
					       pkt->vlan_tci[i] & 0xfff);
		g_string_append_c(o, ']');
	}
	if (pkt->flags & QPT_HAS_LRH) {
		const struct qpt_lrh *l = &pkt->lrh;

		print_json_obj_begin(o, "lrh");
		print_json_first(o, "vl", l->vl);
		JU(o, "lver", l->lver);
		JU(o, "sl", l->sl);
		JU(o, "lnh", l->lnh);
		JU(o, "dlid", l->dlid);
		JU(o, "pktlen", l->pktlen);
		JU(o, "slid", l->slid);
		g_string_append_c(o, '}');
	}
	if (pkt->flags & QPT_HAS_GRH) {
		const struct qpt_grh *g = &pkt->grh;

		print_json_obj_begin(o, "grh");
		print_json_first(o, "ipver", g->ipver);
		JU(o, "tclass", g->tclass);
		JU(o, "flowlabel", g->flowlabel);
		JU(o, "paylen", g->paylen);
		JU(o, "nxthdr", g->nxthdr);
		JU(o, "hoplmt", g->hoplmt);
		fmt_ip6(g->sgid, a, sizeof(a));
		print_json_str_member(o, "sgid", a);
		fmt_ip6(g->dgid, a, sizeof(a));
		print_json_str_member(o, "dgid", a);
		g_string_append_c(o, '}');
	}
	if (pkt->flags & QPT_HAS_BTH) {
		const struct qpt_bth *h = &pkt->bth;

		print_json_obj_begin(o, "bth");
		print_json_first(o, "opcode", h->opcode);
		print_json_str_member(o, "opcode_name", opcode_name(h->opcode));
		JB(o, "se", h->se);
		JB(o, "m", h->m);
		JU(o, "pad", h->pad);
		JU(o, "tver", h->tver);
		JU(o, "pkey", h->pkey);
		JB(o, "fecn", h->fecn);
		JB(o, "becn", h->becn);
		JU(o, "dqpn", h->dqpn);
		JB(o, "ackreq", h->ackreq);
		JU(o, "psn", h->psn);
		g_string_append_c(o, '}');
	}
	print_ext(o, pkt, QPT_PRINT_JSON);
	if (pkt->flags & QPT_HAS_MAD) {
		const struct qpt_mad *m = &pkt->mad;

		print_json_obj_begin(o, "mad");
		print_json_first(o, "base_version", m->base_version);
		JU(o, "mgmt_class", m->mgmt_class);
		JU(o, "class_version", m->class_version);
		JU(o, "method", m->method);
		JU(o, "status", m->status);
		JU(o, "attr_id", m->attr_id);
		JU(o, "tid", m->tid);
		JU(o, "attr_mod", m->attr_mod);
		g_string_append_c(o, '}');
	}
	if (pkt->flags & QPT_HAS_CM) {
		const struct qpt_cm *cm = &pkt->cm;

		g_string_append(o, ",\"cm\":{\"msg\":");
		qpt_json_escape(o, qpt_cm_msg_name(cm->msg));
		JU(o, "local_comm_id", cm->local_comm_id);
		switch (cm->msg) {
		case QPT_CM_REQ:
			JU(o, "service_id", cm->service_id);
			JU(o, "local_qpn", cm->local_qpn);
			JU(o, "starting_psn", cm->starting_psn);
			JU(o, "transport", cm->transport);
			JU(o, "path_mtu", qpt_mtu_bytes(cm->path_mtu));
			JU(o, "pkey", cm->pkey);
			JU(o, "local_ca_guid", cm->local_ca_guid);
			break;
		case QPT_CM_REP:
			JU(o, "remote_comm_id", cm->remote_comm_id);
			JU(o, "local_qpn", cm->local_qpn);
			JU(o, "starting_psn", cm->starting_psn);
			JU(o, "local_ca_guid", cm->local_ca_guid);
			break;
		case QPT_CM_DREQ:
		case QPT_CM_LAP:
			JU(o, "remote_comm_id", cm->remote_comm_id);
			JU(o, "remote_qpn", cm->remote_qpn);
			break;
		case QPT_CM_REJ:
			JU(o, "remote_comm_id", cm->remote_comm_id);
			JU(o, "reason", cm->reason);
			JU(o, "msg_rejected", cm->msg_rejected);
			break;
		case QPT_CM_SIDR_REQ:
			JU(o, "service_id", cm->service_id);
			JU(o, "pkey", cm->pkey);
			break;
		case QPT_CM_SIDR_REP:
			JU(o, "status", cm->status);
			JU(o, "local_qpn", cm->local_qpn);
			JU(o, "service_id", cm->service_id);
			JU(o, "qkey", cm->local_qkey);
			break;
		case QPT_CM_APR:
			JU(o, "remote_comm_id", cm->remote_comm_id);
			JU(o, "status", cm->status);
			break;
		default:
			JU(o, "remote_comm_id", cm->remote_comm_id);
			break;
		}
		if (pkt->flags & QPT_HAS_CMA_IP) {
			g_string_append(o, ",\"rdma_cm\":{");
			print_json_first(o, "ip_version", pkt->cma.ip_version);
			fmt_cma(&pkt->cma, pkt->cma.src, a, sizeof(a));
			print_json_str_member(o, "src_ip", a);
			JU(o, "src_port", pkt->cma.port);
			fmt_cma(&pkt->cma, pkt->cma.dst, a, sizeof(a));
			print_json_str_member(o, "dst_ip", a);
			JU(o, "dst_port", pkt->cma.dst_port);
			JU(o, "port_space", pkt->cma.port_space);
			g_string_append_c(o, '}');
		}
		g_string_append_c(o, '}');
	}
	if (pkt->flags & QPT_HAS_ICRC) {
		print_json_obj_begin(o, "icrc");
		print_json_first(o, "value", pkt->icrc);
		if (pkt->icrc_checked) {
			JB(o, "ok", pkt->icrc_ok);
			if (!pkt->icrc_ok)
				JU(o, "expected", pkt->icrc_computed);
		}
		g_string_append_c(o, '}');
	}
	if (pkt->flags & QPT_HAS_VCRC) {
		print_json_obj_begin(o, "vcrc");
		print_json_first(o, "value", pkt->vcrc);
		if (pkt->icrc_checked) {
			JB(o, "ok", pkt->vcrc_ok);
			if (!pkt->vcrc_ok)
				JU(o, "expected", pkt->vcrc_computed);
		}
		g_string_append_c(o, '}');
	}
	if (pkt->ip_version)
		JU(o, "ecn", pkt->ip_ecn);
	if (pkt->flags & QPT_HAS_BTH)
		JU(o, "payload_len", pkt->payload_len);
	if (pkt->error != QPT_E_OK)
		print_json_str_member(o, "malformed", qpt_strerror(pkt->error));
	print_delivery(o, pkt, QPT_PRINT_JSON);
	g_string_append(o, "}\n");
}

/* ---- MAC control: PAUSE (802.3x) and PFC (802.1Qbb) ------------------ */

static void fmt_mac(const uint8_t *m, char *buf, size_t len)
{
	g_snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

static const char *macc_kind(const struct qpt_macc *m)
{
	return m->opcode == QPT_MACC_PFC ? "PFC" : m->opcode == QPT_MACC_PAUSE ? "PAUSE" : NULL;
}

/* "PFC P3=65535 P4=0", "PAUSE quanta=0", "opcode=0x0003", then what is wrong. */
static void macc_words(GString *o, const struct qpt_macc *m)
{
	const char *kind = macc_kind(m);

	if (!kind) {
		g_string_append_printf(o, " opcode=0x%04x", m->opcode);
	} else if (m->error != QPT_E_OK) { /* the times were not all there */
		g_string_append_printf(o, " %s", kind);
	} else if (m->opcode == QPT_MACC_PAUSE) {
		g_string_append_printf(o, " PAUSE quanta=%u", m->quanta[0]);
	} else {
		g_string_append(o, " PFC");
		for (unsigned p = 0; p < 8; p++)
			if (m->cev & (1u << p))
				g_string_append_printf(o, " P%u=%u", p, m->quanta[p]);
		if (!(m->cev & 0xff))
			g_string_append(o, " (no priority enabled)");
		if (m->cev >> 8)
			g_string_append_printf(o, " [reserved class-enable bits 0x%04x]",
					       m->cev & 0xff00);
	}
	if (m->error != QPT_E_OK)
		g_string_append_printf(o, " [malformed: %s]", qpt_strerror(m->error));
}

static void macc_line(GString *o, const struct qpt_frame *f, const struct qpt_pkt *pkt,
		      double t0)
{
	char s[24], d[24];
	double t = (double)f->ts_sec + f->ts_nsec / 1e9 - t0;

	fmt_mac(pkt->eth_src, s, sizeof(s));
	fmt_mac(pkt->eth_dst, d, sizeof(d));
	g_string_append_printf(o, "%" G_GUINT64_FORMAT " %.6f %s > %s MAC-control", f->number,
			       t, s, d);
	macc_words(o, &pkt->macc);
	g_string_append_c(o, '\n');
}

static void macc_verbose(GString *o, const struct qpt_frame *f, const struct qpt_pkt *pkt,
			 double t0)
{
	const struct qpt_macc *m = &pkt->macc;

	macc_line(o, f, pkt, t0);
	g_string_append_printf(o, "  frame %u bytes captured, %u on the wire, link type %u\n",
			       f->caplen, f->wirelen, f->linktype);
	for (unsigned i = 0; i < pkt->vlan_count; i++)
		g_string_append_printf(o, "  802.1Q VLAN %u PCP %u\n",
				       pkt->vlan_tci[i] & 0xfff, pkt->vlan_tci[i] >> 13);
	g_string_append_printf(o, "  MAC control opcode 0x%04x", m->opcode);
	if (macc_kind(m))
		g_string_append_printf(o, " (%s)", macc_kind(m));
	if (m->opcode == QPT_MACC_PFC && m->error == QPT_E_OK)
		g_string_append_printf(o, " class-enable vector 0x%04x", m->cev);
	g_string_append_c(o, '\n');
	if (m->error != QPT_E_OK)
		return;
	if (m->opcode == QPT_MACC_PAUSE)
		g_string_append_printf(o, "  all priorities: %u quanta (%s)\n", m->quanta[0],
				       m->quanta[0] ? "XOFF" : "XON");
	if (m->opcode == QPT_MACC_PFC)
		for (unsigned p = 0; p < 8; p++)
			g_string_append_printf(o, "  priority %u: %u quanta%s\n", p, m->quanta[p],
					       !(m->cev & (1u << p)) ? " (not enabled)" :
					       m->quanta[p] ? " (XOFF)" : " (XON)");
}

static void macc_json(GString *o, const struct qpt_frame *f, const struct qpt_pkt *pkt)
{
	const struct qpt_macc *m = &pkt->macc;
	char a[24];

	g_string_append(o, "{\"schema\":\"" QPT_SCHEMA_BASE "packets-" QPT_SCHEMA_VERSION
			   "\",\"frame\":");
	print_append_u64(o, f->number);
	g_string_append(o, ",\"time\":");
	qpt_format_epoch(o, f->ts_sec * 1000000000 + (int64_t)f->ts_nsec);
	print_json_str_member(o, "transport", "MAC-control");
	if (pkt->flags & QPT_HAS_ETH) {
		fmt_mac(pkt->eth_src, a, sizeof(a));
		print_json_str_member(o, "eth_src", a);
		fmt_mac(pkt->eth_dst, a, sizeof(a));
		print_json_str_member(o, "eth_dst", a);
	}
	if (pkt->vlan_count) {
		g_string_append(o, ",\"vlan\":[");
		for (unsigned i = 0; i < pkt->vlan_count; i++)
			g_string_append_printf(o, "%s%u", i ? "," : "", pkt->vlan_tci[i] & 0xfff);
		g_string_append_c(o, ']');
	}
	print_json_obj_begin(o, "macc");
	print_json_first(o, "opcode", m->opcode);
	if (macc_kind(m))
		print_json_str_member(o, "kind", macc_kind(m));
	if (m->opcode == QPT_MACC_PAUSE && m->error == QPT_E_OK)
		JU(o, "quanta", m->quanta[0]);
	if (m->opcode == QPT_MACC_PFC && m->error == QPT_E_OK) {
		JU(o, "cev", m->cev);
		g_string_append(o, ",\"quanta\":[");
		for (unsigned p = 0; p < 8; p++)
			g_string_append_printf(o, "%s%u", p ? "," : "", m->quanta[p]);
		g_string_append_c(o, ']');
	}
	g_string_append_c(o, '}');
	if (m->error != QPT_E_OK)
		print_json_str_member(o, "malformed", qpt_strerror(m->error));
	g_string_append(o, "}\n");
}

void qpt_print_pkt(GString *out, const struct qpt_frame *f,
		   const struct qpt_pkt *pkt, enum qpt_print_mode mode, double t0)
{
	if (pkt->flags & QPT_HAS_MACC) {
		if (mode == QPT_PRINT_JSON)
			macc_json(out, f, pkt);
		else if (mode == QPT_PRINT_VERBOSE)
			macc_verbose(out, f, pkt, t0);
		else
			macc_line(out, f, pkt, t0);
		return;
	}
	switch (mode) {
	case QPT_PRINT_LINE:
		print_line(out, f, pkt, t0);
		break;
	case QPT_PRINT_VERBOSE:
		print_verbose(out, f, pkt, t0);
		break;
	case QPT_PRINT_JSON:
		print_json(out, f, pkt);
		break;
	}
}

/* (see output.h; here, so that the fuzz replay of the printers links it) */
void qpt_format_epoch(GString *out, int64_t ns)
{
	/* the magnitude in unsigned arithmetic: INT64_MIN has no positive */
	uint64_t m = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;

	g_string_append_printf(out, "%s%" G_GUINT64_FORMAT ".%06u", ns < 0 ? "-" : "",
			       m / 1000000000u, (unsigned)(m % 1000000000u / 1000u));
}

const char *qpt_event_link_name(unsigned kind)
{
	return kind == QPT_VB_GBN_START || kind == QPT_VB_TIMEOUT_RESEND ? "trigger" :
	       kind == QPT_VB_CM_REJECT ? "REQ" :
	       kind == QPT_VB_RNR_RETRY ? "RNR NAK" : "original";
}

/* The frame v's own event of kind links to (its original_frame), 0 none. */
static uint64_t own_link(const struct qpt_verdict *v, unsigned kind)
{
	for (unsigned i = 0; i < v->nevents; i++)
		if (v->ev[i].kind == kind && (!v->ev[i].frame || v->ev[i].frame == v->frame))
			return v->ev[i].original_frame;
	return 0;
}

/* Wireshark's Info column tags of the verdict, in the table's order. */
static void info_tags(GString *o, const struct qpt_verdict *v)
{
	for (unsigned k = 0; k < QPT_VB_COUNT; k++)
		if (v->flags & (1u << k) && qpt_verdicts[k].info[0])
			g_string_append(o, qpt_verdicts[k].info);
}

/* -v's line of the analysis: the conversation, each verdict kind with the
 * frame it links to. */
static void analysis_line(GString *out, const struct qpt_verdict *v)
{
	bool first = true;

	g_string_append(out, "  analysis:");
	if (v->conv >= 0)
		g_string_append_printf(out, " conversation %d%s", v->conv,
				       v->dir < 0 ? "" : v->dir ? " b->a" : " a->b");
	for (unsigned k = 0; k < QPT_VB_COUNT; k++) {
		if (!(v->flags & (1u << k)))
			continue;
		uint64_t link = own_link(v, k);

		g_string_append_printf(out, "%s%s", first ? "; " : ", ", qpt_verdicts[k].key);
		if (link)
			g_string_append_printf(out, " (%s frame %" G_GUINT64_FORMAT ")",
					       qpt_event_link_name(k), link);
		first = false;
	}
	g_string_append_c(out, '\n');
}

void qpt_print_pkt_v(GString *out, const struct qpt_frame *f, const struct qpt_pkt *pkt,
		     enum qpt_print_mode mode, double t0, const struct qpt_verdict *v)
{
	gsize start = out->len;

	qpt_print_pkt(out, f, pkt, mode, t0);
	if (!v)
		return;
	if (mode == QPT_PRINT_JSON) {
		bool first = true;

		/* the object ends "}\n": the analysis goes before it */
		g_string_truncate(out, out->len - 2);
		if (v->conv >= 0)
			g_string_append_printf(out, ",\"conv\":%d", v->conv);
		else
			g_string_append(out, ",\"conv\":null");
		if (v->dir >= 0)
			g_string_append_printf(out, ",\"dir\":%d", v->dir);
		if (qpt_rtt_sample(v, pkt))
			g_string_append_printf(out, ",\"ack_rtt_us\":%.3f",
					       (double)v->ack_rtt_ns / 1000.0);
		g_string_append(out, ",\"verdicts\":[");
		for (unsigned k = 0; k < QPT_VB_COUNT; k++) {
			if (!(v->flags & (1u << k)))
				continue;
			g_string_append_printf(out, "%s\"%s\"", first ? "" : ",", qpt_verdicts[k].key);
			first = false;
		}
		g_string_append(out, "]}\n");
		return;
	}
	if (v->flags) { /* (most frames have no tag) */
		const char *nl = strchr(out->str + start, '\n');
		GString *tags = g_string_new("");
		gsize at = nl ? (gsize)(nl - out->str) : out->len;

		info_tags(tags, v);
		g_string_insert(out, (gssize)at, tags->str);
		g_string_free(tags, TRUE);
	}
	if (mode == QPT_PRINT_VERBOSE && (v->conv >= 0 || v->flags))
		analysis_line(out, v);
}

void qpt_print_revision(GString *out, enum qpt_print_mode mode, uint64_t at,
			const struct qpt_verdict *v)
{
	if (mode == QPT_PRINT_JSON)
		return;
	g_string_append_printf(out, "# frame %" G_GUINT64_FORMAT ", decided ", v->frame);
	if (at == UINT64_MAX)
		g_string_append(out, "at the end of the input:");
	else
		g_string_append_printf(out, "at frame %" G_GUINT64_FORMAT ":", at);
	info_tags(out, v);
	g_string_append_c(out, '\n');
	if (mode == QPT_PRINT_VERBOSE)
		analysis_line(out, v);
}
