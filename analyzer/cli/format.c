/* format.c - text shapes the CLI's writers share (see cli.h) */
#include "cli.h"
#include "qpt_verdict.h"

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

