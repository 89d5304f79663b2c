/* qpt_names.h - the engine's name tables (qpt_names.c): value -> name
 *
 * Apart from the verdict and counter tables (qpt_verdict.h, which includes
 * this). */
#ifndef QPT_NAMES_H
#define QPT_NAMES_H

#include <stdint.h>

/* value -> name, ended by { 0, NULL } (the layout of Wireshark's
 * value_string: the plugin uses these tables as they are). */
struct qpt_name {
	uint32_t value;
	const char *name;
};
/* The name of v in t, or dflt. */
const char *qpt_name_of(const struct qpt_name *t, uint32_t v, const char *dflt);
/* The value of name in t (exact), or -1. */
int64_t qpt_value_of(const struct qpt_name *t, const char *name);

#define QPT_NAK_KINDS 5 /* AETH NAK codes 0..4 that have names */
extern const struct qpt_name qpt_nak_names[];	   /* "PSN_SEQ_ERR", ... */
extern const struct qpt_name qpt_nak_descr[];	   /* "PSN Sequence Error", ... */
extern const struct qpt_name qpt_aeth_kind_names[]; /* "ACK", "RNR", "NAK" */
extern const struct qpt_name qpt_aeth_kind_descr[]; /* "ACK", "RNR NAK", ... */
extern const struct qpt_name qpt_transport_names[]; /* "RoCEv2", "RoCEv1", "IB" */
extern const struct qpt_name qpt_service_names[];   /* opcode & 0xe0: "RC", ... */
extern const struct qpt_name qpt_op_names[];	   /* enum qpt_op: "SEND", ... */
extern const struct qpt_name qpt_trigger_names[];   /* enum qpt_trigger */
extern const struct qpt_name qpt_trigger_descr[];   /* its words */
extern const struct qpt_name qpt_paired_by_names[]; /* enum qpt_paired_by */
extern const struct qpt_name qpt_cm_msg_names[];    /* attribute ID: "REQ", ... */
extern const struct qpt_name qpt_cm_rej_reasons[];  /* "no QP", ... */
extern const struct qpt_name qpt_mad_class_names[]; /* short: "SubnMgt", ... */
extern const struct qpt_name qpt_mad_class_descr[]; /* long: "Subnet Management ..." */
extern const struct qpt_name qpt_mad_method_names[];
extern const struct qpt_name qpt_ulp_names[];	   /* RDMA-CM TCP port: "NVMe-oF", ... */

#endif
