/* qpt_names.c - the engine's name tables (value -> name; see qpt_names.h)
 *
 * Apart from the verdict and counter tables (qpt_verdict.c): words for
 * codes, read by every front end and by the plugin as value_strings. */
#include <string.h>

#include "qpt_decode.h"
#include "qpt_flow.h"
#include "qpt_mad.h"

/* ---- name tables ------------------------------------------------------- */

const char *qpt_name_of(const struct qpt_name *t, uint32_t v, const char *dflt)
{
	for (; t->name; t++)
		if (t->value == v)
			return t->name;
	return dflt;
}

int64_t qpt_value_of(const struct qpt_name *t, const char *name)
{
	for (; t->name; t++)
		if (!strcmp(t->name, name))
			return t->value;
	return -1;
}

const struct qpt_name qpt_nak_names[] = {
	{ QPT_NAK_PSN_SEQ_ERR, "PSN_SEQ_ERR" }, { QPT_NAK_INVALID_REQ, "INVALID_REQ" },
	{ QPT_NAK_REMOTE_ACCESS, "REMOTE_ACCESS" }, { QPT_NAK_REMOTE_OP, "REMOTE_OP" },
	{ QPT_NAK_INVALID_RD, "INVALID_RD" }, { 0, NULL },
};
const struct qpt_name qpt_nak_descr[] = {
	{ QPT_NAK_PSN_SEQ_ERR, "PSN Sequence Error" },
	{ QPT_NAK_INVALID_REQ, "Invalid Request" },
	{ QPT_NAK_REMOTE_ACCESS, "Remote Access Error" },
	{ QPT_NAK_REMOTE_OP, "Remote Operational Error" },
	{ QPT_NAK_INVALID_RD, "Invalid RD Request" }, { 0, NULL },
};
const struct qpt_name qpt_aeth_kind_names[] = {
	{ QPT_AETH_ACK, "ACK" }, { QPT_AETH_RNR, "RNR" }, { QPT_AETH_NAK, "NAK" },
	{ 0, NULL },
};
const struct qpt_name qpt_aeth_kind_descr[] = {
	{ QPT_AETH_ACK, "ACK" }, { QPT_AETH_RNR, "RNR NAK" },
	{ QPT_AETH_RESERVED, "Reserved" }, { QPT_AETH_NAK, "NAK" }, { 0, NULL },
};
const struct qpt_name qpt_transport_names[] = {
	{ QPT_TR_NONE, "none" }, { QPT_TR_ROCEV2, "RoCEv2" }, { QPT_TR_ROCEV1, "RoCEv1" },
	{ QPT_TR_IB, "IB" }, { 0, NULL },
};
const struct qpt_name qpt_service_names[] = {
	{ QPT_SVC_RC, "RC" }, { QPT_SVC_UC, "UC" }, { QPT_SVC_RD, "RD" },
	{ QPT_SVC_UD, "UD" }, { QPT_SVC_CNP, "CNP" }, { QPT_SVC_XRC, "XRC" },
	{ QPT_SVC_MANUF, "MANUF" }, { 0, NULL },
};
const struct qpt_name qpt_op_names[] = {
	{ QPT_OP_NONE, "NONE" }, { QPT_OP_SEND, "SEND" }, { QPT_OP_SEND_IMM, "SEND_IMM" },
	{ QPT_OP_SEND_INV, "SEND_INV" }, { QPT_OP_WRITE, "WRITE" },
	{ QPT_OP_WRITE_IMM, "WRITE_IMM" }, { QPT_OP_READ, "READ" },
	{ QPT_OP_CMP_SWAP, "CMP_SWAP" }, { QPT_OP_FETCH_ADD, "FETCH_ADD" },
	{ QPT_OP_ATOMIC_WRITE, "ATOMIC_WRITE" }, { QPT_OP_FLUSH, "FLUSH" }, { 0, NULL },
};
const struct qpt_name qpt_trigger_names[] = {
	{ QPT_TRIGGER_NAK, "nak" }, { QPT_TRIGGER_TIMEOUT, "timeout" },
	{ QPT_TRIGGER_READ_RETRY, "read_retry" }, { QPT_TRIGGER_RESEND, "resend" },
	{ 0, NULL },
};
const struct qpt_name qpt_trigger_descr[] = {
	{ QPT_TRIGGER_NAK, "go-back-N after NAK" },
	{ QPT_TRIGGER_TIMEOUT, "go-back-N after silence (timeout)" },
	{ QPT_TRIGGER_READ_RETRY, "go-back-N: READ re-issued after a gap in its responses" },
	{ QPT_TRIGGER_RESEND, "go-back-N without a captured NAK or a silence" },
	{ 0, NULL },
};
const struct qpt_name qpt_paired_by_names[] = {
	{ QPT_PAIR_NONE, "none" }, { QPT_PAIR_CM, "cm" }, { QPT_PAIR_TRAFFIC, "traffic" },
	{ 0, NULL },
};
const struct qpt_name qpt_cm_msg_names[] = {
	{ QPT_CM_CLASSPORTINFO, "ClassPortInfo" }, { QPT_CM_REQ, "REQ" },
	{ QPT_CM_MRA, "MRA" }, { QPT_CM_REJ, "REJ" }, { QPT_CM_REP, "REP" },
	{ QPT_CM_RTU, "RTU" }, { QPT_CM_DREQ, "DREQ" }, { QPT_CM_DREP, "DREP" },
	{ QPT_CM_SIDR_REQ, "SIDR_REQ" }, { QPT_CM_SIDR_REP, "SIDR_REP" },
	{ QPT_CM_LAP, "LAP" }, { QPT_CM_APR, "APR" }, { 0, NULL },
};
/* As the Linux CM words them (ib_cm.h, ibcm_rej_reason_strs). */
const struct qpt_name qpt_cm_rej_reasons[] = {
	{ 1, "no QP" }, { 2, "no EEC" }, { 3, "no resources" }, { 4, "timeout" },
	{ 5, "unsupported request" }, { 6, "invalid comm ID" },
	{ 7, "invalid comm instance" }, { 8, "invalid service ID" },
	{ 9, "invalid transport type" }, { 10, "stale connection" },
	{ 11, "RDC does not exist" }, { 12, "invalid GID" }, { 13, "invalid LID" },
	{ 14, "invalid SL" }, { 15, "invalid traffic class" },
	{ 16, "invalid hop limit" }, { 17, "invalid packet rate" },
	{ 18, "invalid alternate GID" }, { 19, "invalid alternate LID" },
	{ 20, "invalid alternate SL" }, { 21, "invalid alternate traffic class" },
	{ 22, "invalid alternate hop limit" }, { 23, "invalid alternate packet rate" },
	{ 24, "port CM redirect" }, { 25, "port redirect" }, { 26, "invalid path MTU" },
	{ 27, "insufficient responder resources" }, { 28, "consumer defined" },
	{ 29, "invalid RNR retry count" }, { 30, "duplicate local comm ID" },
	{ 31, "unsupported class version" }, { 32, "invalid flow label" },
	{ 33, "invalid alternate flow label" }, { 35, "vendor option not supported" },
	{ 0, NULL },
};
const struct qpt_name qpt_mad_class_names[] = {
	{ QPT_MAD_CLASS_SUBN_LID, "SubnMgt" }, { QPT_MAD_CLASS_SUBN_DR, "SubnMgt(DR)" },
	{ QPT_MAD_CLASS_SUBN_ADM, "SubnAdm" }, { QPT_MAD_CLASS_PERF, "Perf" },
	{ 0x05, "BM" }, { 0x06, "DevMgt" }, { QPT_MAD_CLASS_CM, "CM" }, { 0x08, "SNMP" },
	{ 0, NULL },
};
const struct qpt_name qpt_mad_class_descr[] = {
	{ QPT_MAD_CLASS_SUBN_LID, "Subnet Management (LID routed)" },
	{ QPT_MAD_CLASS_SUBN_ADM, "Subnet Administration" },
	{ QPT_MAD_CLASS_PERF, "Performance Management" },
	{ 0x05, "Baseboard Management" }, { 0x06, "Device Management" },
	{ QPT_MAD_CLASS_CM, "Communication Management" }, { 0x08, "SNMP Tunneling" },
	{ QPT_MAD_CLASS_SUBN_DR, "Subnet Management (directed route)" }, { 0, NULL },
};
const struct qpt_name qpt_mad_method_names[] = {
	{ 0x01, "Get" }, { 0x02, "Set" }, { 0x03, "Send" }, { 0x05, "Trap" },
	{ 0x06, "Report" }, { 0x07, "TrapRepress" }, { 0x12, "GetTable" },
	{ 0x13, "GetTraceTable" }, { 0x14, "GetMulti" }, { 0x15, "Delete" },
	{ 0x81, "GetResp" }, { 0x86, "ReportResp" }, { 0x92, "GetTableResp" },
	{ 0x94, "GetMultiResp" }, { 0x95, "DeleteResp" }, { 0, NULL },
};

const char *qpt_trigger_name(unsigned trigger)
{
	return qpt_name_of(qpt_trigger_names, trigger, "?");
}

const char *qpt_paired_by_name(enum qpt_paired_by p)
{
	return qpt_name_of(qpt_paired_by_names, p, "none");
}

/* ---- upper-layer protocols --------------------------------------------- */

/* The upper layer a connection carries, by the port of its RDMA-CM service
 * ID in the TCP port space (IBA annex A11: 0x0000000001, port space 0x06,
 * port): the ports these protocols are given over RDMA. */
const struct qpt_name qpt_ulp_names[] = {
	{ 445, "SMB Direct" },	 { 3260, "iSER" },	  { 4420, "NVMe-oF" },
	{ 5445, "SMB Direct" },	 { 20049, "NFS/RDMA" }, { 0, NULL },
};
