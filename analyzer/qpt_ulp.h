/* qpt_ulp.h - the upper-layer protocol of a conversation, from its CM
 * service ID
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef QPT_ULP_H
#define QPT_ULP_H

#include <stdint.h>

struct qpt_conv_ident;

/* The port of an RDMA-CM service ID in the TCP port space
 * (0x0000000001 06 PPPP), or -1 when it is not one. */
int32_t qpt_sid_tcp_port(uint64_t service_id);
/* The name of the upper layer a service ID says ("NVMe-oF", "iSER",
 * "NFS/RDMA", "SMB Direct": qpt_ulp_names), or NULL. */
const char *qpt_sid_ulp(uint64_t service_id);
/* The upper layer of a conversation set up by CM, or NULL (no CM, or a
 * service ID that names none). */
const char *qpt_conv_ulp(const struct qpt_conv_ident *c);

#endif
