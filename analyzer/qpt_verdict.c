/* qpt_verdict.c - the verdict and counter tables
 * and the one endpoint formatter (see qpt_verdict.h) */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "qpt_decode.h"
#include "qpt_flow.h"
#include "qpt_mad.h"

const struct qpt_verdict_info qpt_verdicts[QPT_VB_COUNT] = {
#define QPT_V_ROW(id, k, l, e, g, s, i, val, ck, cd, dt, pl, ctr, inpl)                  \
	[QPT_VB_##id] = { .key = k, .label = l, .expert = e, .group = QPT_GRP_##g,      \
			  .severity = QPT_SEV_##s, .info = i, .value = QPT_VAL_##val,    \
			  .count_key = ck, .code = QPT_CODE_##cd, .detail_in_text = dt, \
			  .plot = pl, .counter = ctr, .in_plugin = inpl },
	QPT_VERDICTS(QPT_V_ROW)
#undef QPT_V_ROW
};

const char *qpt_verdict_name(unsigned kind)
{
	return kind < QPT_VB_COUNT ? qpt_verdicts[kind].key : "?";
}

const struct qpt_event *qpt_verdict_event(const struct qpt_verdict *v, unsigned kind)
{
	for (unsigned i = 0; i < v->nevents; i++)
		if (v->ev[i].kind == kind)
			return &v->ev[i];
	return NULL;
}

const struct qpt_lat qpt_lat_none;

const struct qpt_counter_info qpt_counters[QPT_C_COUNT] = {
#define QPT_C_ROW(f, k, l, col, alw, w)                                             \
	[QPT_C_##f] = { .key = k, .label = l, .column = col,                        \
			.offset = offsetof(struct qpt_dir_stats, f), .always = alw },
	QPT_DIR_COUNTERS(QPT_C_ROW)
#undef QPT_C_ROW
};

uint64_t qpt_counter(const struct qpt_dir_stats *d, unsigned c)
{
	uint64_t v;

	if (c >= QPT_C_COUNT)
		return 0;
	memcpy(&v, (const char *)d + qpt_counters[c].offset, sizeof(v));
	return v;
}

/* ---- endpoints --------------------------------------------------------- */

char *qpt_addr_format(const uint8_t addr[16], uint8_t family, char buf[QPT_ADDR_STRLEN])
{
	if (family == 'L')
		snprintf(buf, QPT_ADDR_STRLEN, "LID %u", addr[0] << 8 | addr[1]);
	else if (family == 4 || !memcmp(addr, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12))
		inet_ntop(AF_INET, addr + 12, buf, QPT_ADDR_STRLEN); /* IPv4-mapped GID */
	else
		inet_ntop(AF_INET6, addr, buf, QPT_ADDR_STRLEN);
	return buf;
}

char *qpt_endpoint_addr(const struct qpt_endpoint *e, char buf[QPT_ADDR_STRLEN])
{
	return qpt_addr_format(e->addr, e->family, buf);
}

char *qpt_format_endpoint_qp(const struct qpt_endpoint *e, char buf[QPT_ENDPOINT_QP_STRLEN])
{
	char a[QPT_ADDR_STRLEN];

	qpt_endpoint_addr(e, a);
	if (e->qpn_known)
		g_snprintf(buf, QPT_ENDPOINT_QP_STRLEN, "%s QP 0x%06x", a, e->qpn);
	else
		g_snprintf(buf, QPT_ENDPOINT_QP_STRLEN, "%s QP ?", a);
	return buf;
}
