/* qpt_mad.h - management datagrams on QP0/QP1 (IBA 13.4) and the
 * Communication Manager messages (IBA 12.6). */
#ifndef QPT_MAD_H
#define QPT_MAD_H

#include "qpt_decode.h"
#include "qpt_read.h"

#define QPT_MAD_CLASS_SUBN_LID 0x01
#define QPT_MAD_CLASS_SUBN_ADM 0x03
#define QPT_MAD_CLASS_PERF 0x04
#define QPT_MAD_CLASS_CM 0x07
#define QPT_MAD_CLASS_SUBN_DR 0x81

/* Decode the MAD in mad (the captured UD payload, at least 24 bytes). */
void qpt_decode_mad(struct qpt_pkt *pkt, const struct qpt_buf *mad);

const char *qpt_mad_class_name(unsigned mgmt_class);
const char *qpt_mad_method_name(unsigned method);

#endif
