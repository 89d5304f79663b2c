/* qpscen frame encoder: Ethernet/VLAN/SLL/SLL2/raw/LRH, IPv4/IPv6/GRH, UDP,
 * BTH + extended headers, payload, pad, ICRC (+ VCRC for native IB). */
#include "qpscen.h"

#include <string.h>
#include <zlib.h>

void pkt_init(pkt_t *p)
{
    memset(p, 0, sizeof *p);
    p->link = LT_ETH;
    p->net = NET_IP4;
    p->ttl = 64;
    p->dport = 4791;
    p->pkey = 0xFFFF;
    p->pad_override = -1;
}

unsigned ext_mask(uint8_t opcode)
{
    if (opcode == OPC_CNP)
        return X_CNP;
    unsigned tr = opcode & 0xE0, lo = opcode & 0x1F, m = 0;
    switch (lo) {
    case OP_SEND_LAST_IMM: case OP_SEND_ONLY_IMM: case OP_WRITE_LAST_IMM: m = X_IMM; break;
    case OP_WRITE_FIRST: case OP_WRITE_ONLY: case OP_READ_REQ: case OP_ATOMIC_WRITE: m = X_RETH; break;
    case OP_WRITE_ONLY_IMM: m = X_RETH | X_IMM; break;
    case OP_READ_RESP_FIRST: case OP_READ_RESP_LAST: case OP_READ_RESP_ONLY: case OP_ACK: m = X_AETH; break;
    case OP_ATOMIC_ACK: m = X_AETH | X_ATACK; break;
    case OP_CMP_SWAP: case OP_FETCH_ADD: m = X_ATOMIC; break;
    case OP_SEND_LAST_INV: case OP_SEND_ONLY_INV: m = X_IETH; break;
    case OP_FLUSH: m = X_FETH | X_RETH; break;
    default: break;
    }
    if (tr == TR_UD)
        m |= X_DETH;
    if (tr == TR_RD) {
        m |= X_RDETH;
        if (!(m & X_AETH) && lo != OP_READ_RESP_MIDDLE)
            m |= X_DETH;
    }
    if (tr == TR_XRC && !(lo >= OP_READ_RESP_FIRST && lo <= OP_ATOMIC_ACK))
        m |= X_XRCETH; /* requests only: responses carry no XRCETH */
    return m;
}

static uint8_t pattern[4096 + 512];
static int pattern_ready;

const uint8_t *pattern_bytes(uint32_t seed, uint32_t len)
{
    if (!pattern_ready) {
        uint32_t x = 0x12345678u;
        for (size_t i = 0; i < sizeof pattern; i++) {
            x = x * 1103515245u + 12345u;
            pattern[i] = (uint8_t)(x >> 16);
        }
        pattern_ready = 1;
    }
    if (len > 4096)
        return NULL;
    return pattern + (seed % 512u);
}

/* CRC-16 used for the IB VCRC: poly 0x100B, reflected (LSB first, i.e. 0xD008),
 * init 0xFFFF, final xor 0xFFFF; stored little-endian on the wire. */
uint16_t ib_vcrc(const uint8_t *buf, size_t len)
{
    uint16_t crc = 0xFFFF;
    for (size_t i = 0; i < len; i++) {
        crc ^= buf[i];
        for (int k = 0; k < 8; k++)
            crc = (crc & 1) ? (uint16_t)((crc >> 1) ^ 0xD008) : (uint16_t)(crc >> 1);
    }
    return (uint16_t)(crc ^ 0xFFFF);
}

static uint16_t ip_csum(const uint8_t *h, size_t n)
{
    uint32_t s = 0;
    for (size_t i = 0; i + 1 < n; i += 2)
        s += (uint32_t)(h[i] << 8 | h[i + 1]);
    while (s >> 16)
        s = (s & 0xFFFF) + (s >> 16);
    return (uint16_t)~s;
}

size_t pkt_build(const pkt_t *p, uint8_t *buf)
{
    uint8_t *w = buf;
    uint16_t ethertype = p->net == NET_IP4 ? 0x0800 : p->net == NET_IP6 ? 0x86DD : 0x8915;
    uint8_t *lrh = NULL;

    switch (p->link) {
    case LT_ETH:
        memcpy(w, p->dmac, 6); w += 6;
        memcpy(w, p->smac, 6); w += 6;
        if (p->nvlan == 2) {
            w = put16(w, 0x88A8);
            w = put16(w, (uint16_t)(p->pcp << 13 | (p->vid[0] & 0xFFF)));
            w = put16(w, 0x8100);
            w = put16(w, (uint16_t)(p->pcp << 13 | (p->vid[1] & 0xFFF)));
        } else if (p->nvlan == 1) {
            w = put16(w, 0x8100);
            w = put16(w, (uint16_t)(p->pcp << 13 | (p->vid[0] & 0xFFF)));
        }
        w = put16(w, ethertype);
        break;
    case LT_SLL:
        w = put16(w, p->sll_pkttype);
        w = put16(w, 1);          /* ARPHRD_ETHER */
        w = put16(w, 6);
        memcpy(w, p->smac, 6); w += 6;
        w = put16(w, 0);
        w = put16(w, ethertype);
        break;
    case LT_SLL2:
        w = put16(w, ethertype);
        w = put16(w, 0);
        w = put32(w, 2);          /* ifindex */
        w = put16(w, 1);          /* ARPHRD_ETHER */
        w = put8(w, (uint8_t)p->sll_pkttype);
        w = put8(w, 6);
        memcpy(w, p->smac, 6); w += 6;
        w = put16(w, 0);
        break;
    case LT_RAW:
        break;
    case LT_IB:
        lrh = w;
        w = put8(w, (uint8_t)(p->vl << 4));
        w = put8(w, (uint8_t)(p->sl << 4 | (p->net == NET_GRH ? 3 : 2)));
        w = put16(w, p->dlid);
        w = put16(w, 0);          /* PktLen, filled later */
        w = put16(w, p->slid);
        break;
    }

    uint8_t *net = w, *udp = NULL;
    if (p->net == NET_IP4) {
        w = put8(w, 0x45);
        w = put8(w, p->tclass);
        w = put16(w, 0);                  /* total length later */
        w = put16(w, p->ipid);
        w = put16(w, 0x4000);             /* DF */
        w = put8(w, p->ttl);
        w = put8(w, 17);
        w = put16(w, 0);
        memcpy(w, p->src + 12, 4); w += 4;
        memcpy(w, p->dst + 12, 4); w += 4;
    } else if (p->net == NET_IP6 || p->net == NET_GRH) {
        w = put32(w, 6u << 28 | (uint32_t)p->tclass << 20 | (p->flow & 0xFFFFF));
        w = put16(w, 0);                  /* payload length later */
        w = put8(w, p->net == NET_IP6 ? (p->v6_ext ? 0 : 17) : 0x1B);
        w = put8(w, p->ttl);
        memcpy(w, p->src, 16); w += 16;
        memcpy(w, p->dst, 16); w += 16;
        if (p->net == NET_IP6 && p->v6_ext) {
            /* RFC 8200: Hop-by-Hop (next: Destination Options), then
             * Destination Options (next: UDP); each 8 bytes, a PadN of 6 */
            static const uint8_t hbh[8] = { 60, 0, 1, 4, 0, 0, 0, 0 };
            static const uint8_t dst[8] = { 17, 0, 1, 4, 0, 0, 0, 0 };
            memcpy(w, hbh, 8); w += 8;
            memcpy(w, dst, 8); w += 8;
        }
    }
    if (p->net == NET_IP4 || p->net == NET_IP6) {
        udp = w;
        w = put16(w, p->sport);
        w = put16(w, p->dport);
        w = put16(w, 0);
        w = put16(w, 0);
    }

    /* BTH */
    uint8_t *bth = w;
    unsigned xm = ext_mask(p->opcode);
    uint32_t paylen = (xm & X_CNP) ? 0 : p->paylen;
    unsigned pad = (4 - (paylen & 3)) & 3;
    unsigned padfield = p->pad_override >= 0 ? (unsigned)p->pad_override : pad;
    if (p->pad_override >= 0)
        pad = 0;
    w = put8(w, p->opcode);
    w = put8(w, (uint8_t)((p->se & 1) << 7 | (p->mig & 1) << 6 | (padfield & 3) << 4));
    w = put16(w, p->pkey);
    w = put8(w, (uint8_t)((p->fecn & 1) << 7 | (p->becn & 1) << 6));
    w = put24(w, p->dqp);
    w = put8(w, (uint8_t)((p->ackreq & 1) << 7));
    w = put24(w, p->psn);

    if (xm & X_RDETH) { w = put8(w, 0); w = put24(w, p->rdeth_eec); }
    if (xm & X_DETH) { w = put32(w, p->deth_qkey); w = put8(w, 0); w = put24(w, p->deth_srcqp); }
    if (xm & X_XRCETH) { w = put8(w, 0); w = put24(w, p->xrc_srq); }
    if (xm & X_FETH) w = put32(w, p->feth);
    if (xm & X_RETH) { w = put64(w, p->reth_va); w = put32(w, p->reth_rkey); w = put32(w, p->reth_len); }
    if (xm & X_ATOMIC) {
        w = put64(w, p->at_va); w = put32(w, p->at_rkey);
        w = put64(w, p->at_swap); w = put64(w, p->at_cmp);
    }
    if (xm & X_AETH) { w = put8(w, p->aeth_syn); w = put24(w, p->aeth_msn); }
    if (xm & X_ATACK) w = put64(w, p->atack_orig);
    if (xm & X_IMM) w = put32(w, p->imm);
    if (xm & X_IETH) w = put32(w, p->ieth_rkey);
    if (xm & X_CNP) { memset(w, 0, 16); w += 16; }

    if (paylen) {
        const uint8_t *src = p->payload ? p->payload : pattern_bytes(p->payseed, paylen);
        if (src) {
            memcpy(w, src, paylen);
        } else {
            for (uint32_t i = 0; i < paylen; i++)
                w[i] = (uint8_t)(p->payseed + i * 7u);
        }
        w += paylen;
    }
    memset(w, 0, pad);
    w += pad;

    uint8_t *icrc = w;
    if (!p->no_icrc)
        w += 4;
    uint8_t *end_icrc = w;

    /* lengths */
    if (p->net == NET_IP4) {
        put16(net + 2, (uint16_t)(end_icrc - net + p->ip_len_delta));
        put16(net + 10, ip_csum(net, 20));
    } else if (p->net == NET_IP6 || p->net == NET_GRH) {
        put16(net + 4, (uint16_t)(end_icrc - net - 40 + p->ip_len_delta));
    }
    if (udp)
        put16(udp + 4, (uint16_t)(end_icrc - udp + p->udp_len_delta));
    if (lrh)
        put16(lrh + 4, (uint16_t)(((end_icrc - lrh) / 4) & 0x7FF));

    if (!p->no_icrc) {
        /* masked prefix, then the rest of the packet as is */
        uint8_t m[8 + 40 + 8 + 12];
        size_t n = 0;
        if (lrh) {
            memcpy(m, lrh, 8);
            if (p->net == NET_GRH)
                memset(m, 0xFF, 8);       /* global packet: whole LRH variant */
            else
                m[0] |= 0xF0;             /* local: VL masked */
        } else {
            memset(m, 0xFF, 8);           /* RoCE: pseudo LRH of ones */
        }
        n = 8;
        if (p->net == NET_IP4) {
            memcpy(m + n, net, 20);
            m[n + 1] = 0xFF;              /* TOS */
            m[n + 8] = 0xFF;              /* TTL */
            m[n + 10] = m[n + 11] = 0xFF; /* checksum */
            n += 20;
        } else if (p->net == NET_IP6 || p->net == NET_GRH) {
            memcpy(m + n, net, 40);
            m[n] |= 0x0F;
            m[n + 1] = m[n + 2] = m[n + 3] = 0xFF; /* tclass + flow label */
            m[n + 7] = 0xFF;                       /* hop limit */
            n += 40;
        }
        if (udp) {
            memcpy(m + n, udp, 8);
            m[n + 6] = m[n + 7] = 0xFF;
            n += 8;
        }
        memcpy(m + n, bth, 12);
        m[n + 4] = 0xFF;
        n += 12;
        uLong crc = crc32(0L, m, (uInt)n);
        crc = crc32(crc, bth + 12, (uInt)(icrc - (bth + 12)));
        uint32_t c = (uint32_t)crc;
        if (p->bad_icrc)
            c ^= 0x5A5AA5A5u;
        icrc[0] = (uint8_t)c;
        icrc[1] = (uint8_t)(c >> 8);
        icrc[2] = (uint8_t)(c >> 16);
        icrc[3] = (uint8_t)(c >> 24);
        if (lrh) {
            uint16_t v = ib_vcrc(lrh, (size_t)(end_icrc - lrh));
            w = put8(w, (uint8_t)v);
            w = put8(w, (uint8_t)(v >> 8));
        }
    }
    return (size_t)(w - buf);
}

/* ---- endpoints ---- */
void ep_v4(ep_t *e, uint8_t a, uint8_t b, uint8_t c, uint8_t d, uint32_t qpn)
{
    memset(e, 0, sizeof *e);
    e->addr[10] = e->addr[11] = 0xFF;
    e->addr[12] = a; e->addr[13] = b; e->addr[14] = c; e->addr[15] = d;
    uint8_t mac[6] = { 0x02, 0x00, 0x00, c, 0x00, d };
    memcpy(e->mac, mac, 6);
    e->lid = d;
    e->qpn = qpn;
}

void ep_v6(ep_t *e, const char *txt, uint32_t qpn)
{
    memset(e, 0, sizeof *e);
    /* tiny parser for "fd00::N" style addresses used here */
    e->addr[0] = 0xFD;
    const char *last = strrchr(txt, ':');
    unsigned v = last ? (unsigned)g_ascii_strtoull(last + 1, NULL, 16) : 1;
    e->addr[14] = (uint8_t)(v >> 8);
    e->addr[15] = (uint8_t)v;
    e->v6 = 1;
    uint8_t mac[6] = { 0x02, 0x00, 0x06, 0x00, 0x00, (uint8_t)v };
    memcpy(e->mac, mac, 6);
    e->lid = (uint16_t)v;
    e->qpn = qpn;
}

void ep_ib(ep_t *e, uint16_t lid, uint64_t guid, uint32_t qpn)
{
    memset(e, 0, sizeof *e);
    e->addr[0] = 0xFE; e->addr[1] = 0x80;
    put64(e->addr + 8, guid);
    e->v6 = 1;
    e->lid = lid;
    e->qpn = qpn;
}

void ep_str(const ep_t *e, int link, char *out, size_t n)
{
    if (!e->v6) {
        g_snprintf(out, n, "%u.%u.%u.%u", e->addr[12], e->addr[13], e->addr[14], e->addr[15]);
        return;
    }
    if (link == LT_IB && e->addr[0] == 0xFE) {
        g_snprintf(out, n, "LID %u", e->lid);
        return;
    }
    GString *s = g_string_new(NULL);
    for (int i = 0; i < 16; i += 2) {
        if (i) g_string_append_c(s, ':');
        g_string_append_printf(s, "%x", (unsigned)(e->addr[i] << 8 | e->addr[i + 1]));
    }
    g_strlcpy(out, s->str, n);
    g_string_free(s, TRUE);
}

void pkt_addr(pkt_t *p, const path_t *path, const ep_t *src, const ep_t *dst)
{
    p->link = path->link;
    p->net = path->net;
    p->nvlan = path->nvlan;
    p->vid[0] = path->vid[0];
    p->vid[1] = path->vid[1];
    p->v6_ext = path->v6_ext;
    p->ip4_frag = path->ip4_frag;
    memcpy(p->smac, src->mac, 6);
    memcpy(p->dmac, dst->mac, 6);
    memcpy(p->src, src->addr, 16);
    memcpy(p->dst, dst->addr, 16);
    p->slid = src->lid;
    p->dlid = dst->lid;
    p->tclass = (uint8_t)(path->dscp << 2 | (path->ecn & 3));
    p->sport = (uint16_t)(0xC000 | (src->qpn & 0x3FFF));
    p->flow = src->qpn & 0xFFFFF;
    p->sll_pkttype = src->addr[15] == 1 ? 4 : 0; /* host .1 is "us" (outgoing) */
}
