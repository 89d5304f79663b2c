/* qpt_ulp.c - the upper-layer protocol of a conversation, from its CM
 * service ID (RDMA-CM's IP service IDs, IBA annex A11.2: prefix
 * 0x0000000001, then the port space, 0x06 for TCP, and the port; the
 * kernel's NVMe-oF, iSER, NFS/RDMA and SMB Direct use the port their TCP
 * service has over RDMA, qpt_ulp_names).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qpt_ulp.h"

#include "qpt_flow.h"
#include "qpt_verdict.h"

#define RDMA_IP_CM_SID_MASK 0xffffffffff000000ull
#define RDMA_IP_CM_SID_PREFIX 0x0000000001000000ull
#define RDMA_PS_TCP 0x06

int32_t qpt_sid_tcp_port(uint64_t service_id)
{
	if ((service_id & RDMA_IP_CM_SID_MASK) != RDMA_IP_CM_SID_PREFIX ||
	    ((service_id >> 16) & 0xff) != RDMA_PS_TCP)
		return -1;
	return (int32_t)(service_id & 0xffff);
}

const char *qpt_sid_ulp(uint64_t service_id)
{
	int32_t port = qpt_sid_tcp_port(service_id);

	return port < 0 ? NULL : qpt_name_of(qpt_ulp_names, (uint32_t)port, NULL);
}

const char *qpt_conv_ulp(const struct qpt_conv_ident *c)
{
	return c && c->has_cm ? qpt_sid_ulp(c->cm->service_id) : NULL;
}
