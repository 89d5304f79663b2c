/* qpt_opcode.c - the BTH opcode table (IBA vol 1 table 38, rxe_opcode.c)
 *
 * Each transport's operations come from one of four lists; a transport
 * adds the extended headers it puts on requests (RD: RDETH+DETH, XRC:
 * XRCETH) and on responses (RD: RDETH).  Names are built from the list, so
 * nothing is typed twice.
 */
#include "qpt_opcode.h"
#include "qpt_verdict.h"

#define HL(h) QPT_HDRS_LEN(h)
#define E(T, TN, low, sn, nm, fl, hd, opv, fixed)                              \
	[(T) | (low)] = {                                                      \
		.name = TN " " nm,                                             \
		.short_name = sn,                                              \
		.flags = QPT_O_VALID | (fl),                                   \
		.hdrs = (hd),                                                  \
		.ext_len = HL(hd),                                             \
		.op = (opv),                                                   \
		.fixed_payload = (fixed),                                      \
	},

enum {
	RQ_ = QPT_O_REQ,
	RS_ = QPT_O_RESP,
	F_ = QPT_O_FIRST,
	M_ = QPT_O_MIDDLE,
	L_ = QPT_O_LAST,
	O_ = QPT_O_ONLY,
	P_ = QPT_O_PAYLOAD,
	SND = QPT_O_SEND | QPT_O_REQ | QPT_O_PAYLOAD,
	WR = QPT_O_WRITE | QPT_O_REQ | QPT_O_PAYLOAD,
};

/* SEND and RDMA WRITE: every transport but UD.  R: request headers. */
#define SEND_WRITE_OPS(T, TN, R)                                               \
	E(T, TN, 0x00, "SEND_FIRST", "SEND First", SND | F_, R, QPT_OP_SEND, 0) \
	E(T, TN, 0x01, "SEND_MIDDLE", "SEND Middle", SND | M_, R, QPT_OP_SEND, 0) \
	E(T, TN, 0x02, "SEND_LAST", "SEND Last", SND | L_, R, QPT_OP_SEND, 0)  \
	E(T, TN, 0x03, "SEND_LAST_IMM", "SEND Last with Immediate",            \
	  SND | L_ | QPT_O_IMM, R | QPT_H_IMMDT, QPT_OP_SEND_IMM, 0)           \
	E(T, TN, 0x04, "SEND_ONLY", "SEND Only", SND | O_, R, QPT_OP_SEND, 0)  \
	E(T, TN, 0x05, "SEND_ONLY_IMM", "SEND Only with Immediate",            \
	  SND | O_ | QPT_O_IMM, R | QPT_H_IMMDT, QPT_OP_SEND_IMM, 0)           \
	E(T, TN, 0x06, "WRITE_FIRST", "RDMA WRITE First", WR | F_,             \
	  R | QPT_H_RETH, QPT_OP_WRITE, 0)                                     \
	E(T, TN, 0x07, "WRITE_MIDDLE", "RDMA WRITE Middle", WR | M_, R,        \
	  QPT_OP_WRITE, 0)                                                     \
	E(T, TN, 0x08, "WRITE_LAST", "RDMA WRITE Last", WR | L_, R,            \
	  QPT_OP_WRITE, 0)                                                     \
	E(T, TN, 0x09, "WRITE_LAST_IMM", "RDMA WRITE Last with Immediate",     \
	  WR | L_ | QPT_O_IMM, R | QPT_H_IMMDT, QPT_OP_WRITE_IMM, 0)           \
	E(T, TN, 0x0a, "WRITE_ONLY", "RDMA WRITE Only", WR | O_,               \
	  R | QPT_H_RETH, QPT_OP_WRITE, 0)                                     \
	E(T, TN, 0x0b, "WRITE_ONLY_IMM", "RDMA WRITE Only with Immediate",     \
	  WR | O_ | QPT_O_IMM, R | QPT_H_RETH | QPT_H_IMMDT, QPT_OP_WRITE_IMM, 0)

/* READ, ACK and atomics: RC, RD, XRC.  S: response headers. */
#define READ_ATOMIC_OPS(T, TN, R, S)                                           \
	E(T, TN, 0x0c, "READ_REQUEST", "RDMA READ Request",                    \
	  RQ_ | O_ | QPT_O_READ, R | QPT_H_RETH, QPT_OP_READ, 0)               \
	E(T, TN, 0x0d, "READ_RESPONSE_FIRST", "RDMA READ Response First",      \
	  RS_ | F_ | P_ | QPT_O_READ, S | QPT_H_AETH, QPT_OP_READ, 0)          \
	E(T, TN, 0x0e, "READ_RESPONSE_MIDDLE", "RDMA READ Response Middle",    \
	  RS_ | M_ | P_ | QPT_O_READ, S, QPT_OP_READ, 0)                       \
	E(T, TN, 0x0f, "READ_RESPONSE_LAST", "RDMA READ Response Last",        \
	  RS_ | L_ | P_ | QPT_O_READ, S | QPT_H_AETH, QPT_OP_READ, 0)          \
	E(T, TN, 0x10, "READ_RESPONSE_ONLY", "RDMA READ Response Only",        \
	  RS_ | O_ | P_ | QPT_O_READ, S | QPT_H_AETH, QPT_OP_READ, 0)          \
	E(T, TN, 0x11, "ACK", "Acknowledge", RS_ | O_ | QPT_O_ACK,             \
	  S | QPT_H_AETH, QPT_OP_NONE, 0)                                      \
	E(T, TN, 0x12, "ATOMIC_ACK", "ATOMIC Acknowledge",                     \
	  RS_ | O_ | QPT_O_ATOMIC, S | QPT_H_AETH | QPT_H_ATOMICACKETH,        \
	  QPT_OP_NONE, 0)                                                      \
	E(T, TN, 0x13, "CMP_SWAP", "CmpSwap",                                  \
	  RQ_ | O_ | QPT_O_ATOMIC | QPT_O_CMPSWAP, R | QPT_H_ATOMICETH,        \
	  QPT_OP_CMP_SWAP, 0)                                                  \
	E(T, TN, 0x14, "FETCH_ADD", "FetchAdd",                                \
	  RQ_ | O_ | QPT_O_ATOMIC | QPT_O_FETCHADD, R | QPT_H_ATOMICETH,       \
	  QPT_OP_FETCH_ADD, 0)

/* SEND with Invalidate: RC, XRC. */
#define INV_OPS(T, TN, R)                                                      \
	E(T, TN, 0x16, "SEND_LAST_INV", "SEND Last with Invalidate",           \
	  SND | L_ | QPT_O_INV, R | QPT_H_IETH, QPT_OP_SEND_INV, 0)            \
	E(T, TN, 0x17, "SEND_ONLY_INV", "SEND Only with Invalidate",           \
	  SND | O_ | QPT_O_INV, R | QPT_H_IETH, QPT_OP_SEND_INV, 0)

/* Persistence extensions (IBA 1.5 annex): FLUSH and ATOMIC WRITE. */
#define PERSIST_OPS(T, TN, R)                                                  \
	E(T, TN, 0x1c, "FLUSH", "FLUSH", RQ_ | O_ | QPT_O_FLUSH,               \
	  R | QPT_H_FETH | QPT_H_RETH, QPT_OP_FLUSH, 0)                        \
	E(T, TN, 0x1d, "ATOMIC_WRITE", "ATOMIC WRITE",                         \
	  RQ_ | O_ | P_ | QPT_O_ATOMIC_WRITE, R | QPT_H_RETH,                  \
	  QPT_OP_ATOMIC_WRITE, 8)

const struct qpt_opcode_info qpt_opcodes[256] = {
	SEND_WRITE_OPS(QPT_SVC_RC, "RC", 0)
	READ_ATOMIC_OPS(QPT_SVC_RC, "RC", 0, 0)
	INV_OPS(QPT_SVC_RC, "RC", 0)
	PERSIST_OPS(QPT_SVC_RC, "RC", 0)

	SEND_WRITE_OPS(QPT_SVC_UC, "UC", 0)

	SEND_WRITE_OPS(QPT_SVC_RD, "RD", QPT_H_RDETH | QPT_H_DETH)
	READ_ATOMIC_OPS(QPT_SVC_RD, "RD", QPT_H_RDETH | QPT_H_DETH, QPT_H_RDETH)
	E(QPT_SVC_RD, "RD", 0x15, "RESYNC", "RESYNC", RQ_ | O_,
	  QPT_H_RDETH | QPT_H_DETH, QPT_OP_NONE, 0)

	E(QPT_SVC_UD, "UD", 0x04, "SEND_ONLY", "SEND Only", SND | O_,
	  QPT_H_DETH, QPT_OP_SEND, 0)
	E(QPT_SVC_UD, "UD", 0x05, "SEND_ONLY_IMM", "SEND Only with Immediate",
	  SND | O_ | QPT_O_IMM, QPT_H_DETH | QPT_H_IMMDT, QPT_OP_SEND_IMM, 0)

	/* Congestion Notification Packet (RoCEv2 annex A17.9.2): BTH and
	 * 16 reserved bytes. */
	E(QPT_SVC_CNP, "RoCEv2", 0x01, "CNP", "CNP", QPT_O_CNP, 0, QPT_OP_NONE,
	  16)

	SEND_WRITE_OPS(QPT_SVC_XRC, "XRC", QPT_H_XRCETH)
	READ_ATOMIC_OPS(QPT_SVC_XRC, "XRC", QPT_H_XRCETH, 0)
	INV_OPS(QPT_SVC_XRC, "XRC", QPT_H_XRCETH)
	PERSIST_OPS(QPT_SVC_XRC, "XRC", QPT_H_XRCETH)
};

static const struct {
	const char *name;
	uint8_t len;
} hdr_desc[QPT_H_COUNT] = {
#define HDR_ROW(a, id, nm, ln) [QPT_HI_##id] = { nm, ln },
	QPT_EXT_HEADERS(HDR_ROW, 0)
#undef HDR_ROW
};

static unsigned bit_index(unsigned bit)
{
	/* the lowest bit set; QPT_H_COUNT or more when none is a header's */
	return bit ? (unsigned)__builtin_ctz(bit) : QPT_H_COUNT;
}

unsigned qpt_hdr_len(unsigned hdr_bit)
{
	unsigned i = bit_index(hdr_bit);

	return i < QPT_H_COUNT ? hdr_desc[i].len : 0;
}

const char *qpt_hdr_name(unsigned hdr_bit)
{
	unsigned i = bit_index(hdr_bit);

	return i < QPT_H_COUNT ? hdr_desc[i].name : "?";
}

int qpt_hdr_offset(uint8_t opcode, unsigned hdr_bit)
{
	const struct qpt_opcode_info *oi = &qpt_opcodes[opcode];
	unsigned off = 0;

	if (!(oi->hdrs & hdr_bit))
		return -1;
	for (unsigned i = 0; i < QPT_H_COUNT && (1u << i) != hdr_bit; i++)
		if (oi->hdrs & (1u << i))
			off += hdr_desc[i].len;
	return (int)off;
}

const char *qpt_service_name(uint8_t opcode)
{
	return qpt_name_of(qpt_service_names, opcode & 0xe0u, "MANUF");
}

const char *qpt_op_name(enum qpt_op op)
{
	return qpt_name_of(qpt_op_names, op, "?");
}
