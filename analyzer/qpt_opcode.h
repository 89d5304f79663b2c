/* qpt_opcode.h - the one BTH opcode table (IBA vol 1, 9.2.1 / table 38)
 *
 * Modelled on the Linux rxe driver's rxe_opcode.c: each of the 256 opcodes
 * is described once by a mask of the extended headers that follow the BTH
 * and of its semantics.  Header order after the BTH is fixed by the spec
 * (RDETH, DETH, XRCETH, FETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt,
 * IETH), so offsets are derived from the mask, never typed by hand.
 */
#ifndef QPT_OPCODE_H
#define QPT_OPCODE_H

#include <stdint.h>

/* Transport service, the opcode's upper three bits. */
enum qpt_service {
	QPT_SVC_RC = 0x00,
	QPT_SVC_UC = 0x20,
	QPT_SVC_RD = 0x40,
	QPT_SVC_UD = 0x60,
	QPT_SVC_CNP = 0x80,
	QPT_SVC_XRC = 0xa0,
	QPT_SVC_MANUF = 0xc0, /* 0xc0..0xff manufacturer specific */
};

/* The extended headers, one row each, in wire order: X(ID, name, bytes).
 * A new header is a row here, its decode function (qpt_decode_iba.c,
 * ext_decode[]) and its print function (cli/print_ext.c, ext_print[]). */
#define QPT_EXT_HEADERS(X, a)                                                  \
	X(a, RDETH, "RDETH", 4)                                                \
	X(a, DETH, "DETH", 8)                                                  \
	X(a, XRCETH, "XRCETH", 4)                                              \
	X(a, FETH, "FETH", 4) /* FLUSH */                                      \
	X(a, RETH, "RETH", 16)                                                 \
	X(a, ATOMICETH, "AtomicETH", 28)                                       \
	X(a, AETH, "AETH", 4)                                                  \
	X(a, ATOMICACKETH, "AtomicAckETH", 8)                                  \
	X(a, IMMDT, "ImmDt", 4)                                                \
	X(a, IETH, "IETH", 4)

/* Header index (QPT_HI_*) and bit (QPT_H_*). */
enum {
#define QPT_HI_ROW(a, id, name, len) QPT_HI_##id,
	QPT_EXT_HEADERS(QPT_HI_ROW, 0)
#undef QPT_HI_ROW
	QPT_H_COUNT
};
enum {
#define QPT_H_ROW(a, id, name, len) QPT_H_##id = 1u << QPT_HI_##id,
	QPT_EXT_HEADERS(QPT_H_ROW, 0)
#undef QPT_H_ROW
};
/* The bytes the headers in mask h take (a constant expression). */
#define QPT_HDRS_LEN_ROW(h, id, name, len) +(((h) & QPT_H_##id) ? (len) : 0)
#define QPT_HDRS_LEN(h) (0 QPT_EXT_HEADERS(QPT_HDRS_LEN_ROW, h))

/* Semantic bits. */
enum {
	QPT_O_VALID = 1u << 0,
	QPT_O_REQ = 1u << 1,	 /* sent by the requester */
	QPT_O_RESP = 1u << 2,	 /* sent by the responder (ACKs, READ/atomic responses) */
	QPT_O_FIRST = 1u << 3,
	QPT_O_MIDDLE = 1u << 4,
	QPT_O_LAST = 1u << 5,
	QPT_O_ONLY = QPT_O_FIRST | QPT_O_LAST,
	QPT_O_PAYLOAD = 1u << 6,
	QPT_O_SEND = 1u << 7,
	QPT_O_WRITE = 1u << 8,
	QPT_O_READ = 1u << 9,	 /* READ request or READ response */
	QPT_O_ATOMIC = 1u << 10, /* CmpSwap / FetchAdd request, atomic ACK */
	QPT_O_ACK = 1u << 11,	 /* plain ACK / NAK */
	QPT_O_IMM = 1u << 12,
	QPT_O_INV = 1u << 13,
	QPT_O_FLUSH = 1u << 14,
	QPT_O_ATOMIC_WRITE = 1u << 15,
	QPT_O_CNP = 1u << 16,
	QPT_O_CMPSWAP = 1u << 17,
	QPT_O_FETCHADD = 1u << 18,
};

/* The operation a request packet belongs to, used for message accounting. */
enum qpt_op {
	QPT_OP_NONE,
	QPT_OP_SEND,
	QPT_OP_SEND_IMM,
	QPT_OP_SEND_INV,
	QPT_OP_WRITE,
	QPT_OP_WRITE_IMM,
	QPT_OP_READ,
	QPT_OP_CMP_SWAP,
	QPT_OP_FETCH_ADD,
	QPT_OP_ATOMIC_WRITE,
	QPT_OP_FLUSH,
	QPT_OP_COUNT,
};

struct qpt_opcode_info {
	const char *name;      /* "RC RDMA WRITE First" */
	const char *short_name; /* "WRITE_FIRST" */
	uint32_t flags;	       /* QPT_O_* */
	uint16_t hdrs;	       /* QPT_H_* */
	uint8_t ext_len;       /* bytes of extended headers after the BTH */
	uint8_t op;	       /* enum qpt_op for requests, READ for READ responses */
	uint8_t fixed_payload; /* bytes of payload the opcode always carries (CNP 16, ATOMIC WRITE 8) */
};

extern const struct qpt_opcode_info qpt_opcodes[256];

const char *qpt_service_name(uint8_t opcode); /* "RC", "UC", ..., "CNP" */
const char *qpt_op_name(enum qpt_op op);       /* "SEND", "WRITE_IMM", ... */
unsigned qpt_hdr_len(unsigned hdr_bit);	       /* length of one QPT_H_* header */
const char *qpt_hdr_name(unsigned hdr_bit);
/* Byte offset of header hdr_bit after the BTH for this opcode, or -1. */
int qpt_hdr_offset(uint8_t opcode, unsigned hdr_bit);

#endif
