#!/usr/bin/env python3
"""Differential test: `qptrace packets --json` against TShark 4.0.

Usage:
    tests/tshark_diff.py [--tshark PATH] [-v] QPTRACE_BINARY CAPTURE...
    tests/tshark_diff.py --self-test [--tshark PATH]

For each capture, qptrace is run once (`QPTRACE packets --json CAPTURE`, JSON
Lines, one object per RoCE/IB frame) and tshark is run once (`-T fields`,
every frame, every field of interest).  Every frame that either tool considers
RoCE/IB (qptrace: emitted a record; tshark: "infiniband" is a layer in
frame.protocols) is compared field by field.  A field present on one side only
is a mismatch, and so is a frame decoded by one tool only, unless one of the
precise "known TShark 4.0 deviation" rules below explains it; explained
deviations are always printed (frame number and reason), never silently
skipped.

Other Wireshark versions (tools/ws-chroot trixie = 4.4, sid = 4.6): the same
field names and the same rules hold; each rule tests what that tshark printed
(an opcode it shows as Unknown, a CM body it left undecoded, ...), so a rule
only fires where that version still deviates, and the deviation lines name
the tshark that was run.  Measured differences: TShark 4.4 and 4.6 know BTH
opcodes 0x1c/0x1d (FLUSH, ATOMIC WRITE; made/exthdrs.pcap frames 11 and 13),
which are then compared in full instead of as unknown opcodes; everything
else below still applies to 4.4 and 4.6 (LINKTYPE_INFINIBAND included).

Known TShark 4.0 deviations (rules, see classify_* below):
  * BTH opcode TShark does not know (CNP 0x81, XRC, FLUSH, ATOMIC WRITE ...):
    TShark prints "Unknown" and dumps the rest as infiniband.vendor.  Only the
    fields TShark shows are compared (they must still be equal); fields only
    qptrace has are allowed.  "CNP not known to TShark".
  * RoCEv2 frame whose UDP source port is lower than 4791 and owned by another
    dissector (69 -> TFTP ...): the UDP dissector tries the lower port first
    and TShark never reaches infiniband.  "UDP source port P stolen by X".
  * Frame qptrace marks "malformed": only the fields both tools decoded are
    compared (TShark may stop earlier, or later).
  * CM message whose body TShark 4.0 does not decode (MRA, SIDR_*, LAP, APR):
    only cm.msg is compared for that frame.
  * Reliable Datagram opcodes (0x40-0x5f): TShark 4.0 takes the BTH as 20
    bytes and reads RDETH/DETH/... 8 bytes late; only the BTH (and ICRC) are
    compared.
  * MADs after which TShark 4.0 adds no ICRC/VCRC item (SA attr 0x0012,
    PerfMgt, vendor and other classes): the CRC is not compared.
  * LINKTYPE_INFINIBAND (247): TShark 4.0 cannot read it at all ("network type
    247 unknown or unsupported").  We copy the file to a temp dir, relabel the
    link type as DLT_USER0 (147) and map DLT_USER0 to the "infiniband"
    dissector (which starts at the LRH, like the ERF path) with a user_dlts
    UAT; the frames are then compared normally.  Reported as a note.

MAC control frames (ethertype 0x8808: 802.3x PAUSE, 802.1Qbb PFC) are
compared too: every frame TShark decodes as "macc" or qptrace prints with
transport "MAC-control", field by field: macc.opcode, PAUSE macc.pause_time
(qptrace macc.quanta), PFC macc.cbfc.enbv (macc.cev) and
macc.cbfc.pause_time.c0-c7 (macc.quanta[0-7]), the VLAN tags and the time.
A frame qptrace calls malformed (cut by the capture, or shorter than its
opcode's parameters) must be one TShark did not decode whole (flagged
malformed, or some of the times missing), and the opcodes must agree.

TShark is run with `--disable-protocol rpcordma`: TShark's RPC-over-RDMA
heuristic claims small SEND payloads (e.g. perftest sync messages in
linlinw5_rdma_cm.pcap), throws "Malformed" on 16 frames and, worse, when it
claims the payload the infiniband dissector no longer adds the ICRC field.
The IB headers are unaffected by disabling it.

Fields not compared (TShark 4.0 has no field for them): bth.fecn/becn (TShark
shows the byte as "Reserved"), bth.opcode_name, xrceth, feth, icrc.ok and
vcrc.ok (TShark does not verify CRCs), payload_len, cm GIDs.

Output: one line per capture, "ok  CAPTURE: ..." or "FAIL CAPTURE: ..."
followed by indented mismatch / deviation lines, then "N passed, N failed".
Exit status 1 if any capture failed, 2 on usage errors.
"""

import argparse
import ipaddress
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

TIME_TOLERANCE = 1.5e-6  # qptrace prints microseconds; ERF has nanoseconds

# --------------------------------------------------------------------------
# Field mapping.  Each entry: (qptrace path, tshark field, kind, required)
#   kind: int | bool | hexbytes (bytes, compared as a big-endian integer) | ip
#   required=True: present on one side only is a mismatch.
#   required=False: compared only when both sides have it (qptrace key names
#   beyond the published contract are guesses from struct qpt_cm).
# --------------------------------------------------------------------------
SIMPLE_FIELDS = [
    ('lrh.vl', 'infiniband.lrh.vl', 'int', True),
    ('lrh.lver', 'infiniband.lrh.lver', 'int', True),
    ('lrh.sl', 'infiniband.lrh.sl', 'int', True),
    ('lrh.lnh', 'infiniband.lrh.lnh', 'int', True),
    ('lrh.dlid', 'infiniband.lrh.dlid', 'int', True),
    ('lrh.pktlen', 'infiniband.lrh.pktlen', 'int', True),
    ('lrh.slid', 'infiniband.lrh.slid', 'int', True),
    ('grh.ipver', 'infiniband.grh.ipver', 'int', True),
    ('grh.tclass', 'infiniband.grh.tclass', 'int', True),
    ('grh.flowlabel', 'infiniband.grh.flowlabel', 'int', True),
    ('grh.paylen', 'infiniband.grh.paylen', 'int', True),
    ('grh.nxthdr', 'infiniband.grh.nxthdr', 'int', True),
    ('grh.hoplmt', 'infiniband.grh.hoplmt', 'int', True),
    ('grh.sgid', 'infiniband.grh.sgid', 'ip', True),
    ('grh.dgid', 'infiniband.grh.dgid', 'ip', True),
    ('bth.opcode', 'infiniband.bth.opcode', 'int', True),
    ('bth.se', 'infiniband.bth.se', 'bool', True),
    ('bth.m', 'infiniband.bth.m', 'bool', True),
    ('bth.pad', 'infiniband.bth.padcnt', 'int', True),
    ('bth.tver', 'infiniband.bth.tver', 'int', True),
    ('bth.pkey', 'infiniband.bth.p_key', 'int', True),
    ('bth.dqpn', 'infiniband.bth.destqp', 'int', True),
    ('bth.ackreq', 'infiniband.bth.a', 'bool', True),
    ('bth.psn', 'infiniband.bth.psn', 'int', True),
    ('rdeth.eecnxt', 'infiniband.rdeth.eecnxt', 'int', True),
    ('deth.qkey', 'infiniband.deth.q_key', 'int', True),
    ('deth.sqpn', 'infiniband.deth.srcqp', 'int', True),
    # reth.va / reth.rkey: see tshark_expected (TShark reuses them in AtomicETH)
    ('reth.dmalen', 'infiniband.reth.dmalen', 'int', True),
    ('atomiceth.swap', 'infiniband.atomiceth.swapdt', 'int', True),
    ('atomiceth.compare', 'infiniband.atomiceth.cmpdt', 'int', True),
    ('aeth.syndrome', 'infiniband.aeth.syndrome', 'int', True),
    ('aeth.msn', 'infiniband.aeth.msn', 'int', True),
    ('aeth.credits', 'infiniband.aeth.syndrome.credit_count', 'int', True),
    ('aeth.rnr_timer', 'infiniband.aeth.syndrome.timer', 'int', True),
    ('aeth.nak_code', 'infiniband.aeth.syndrome.error_code', 'int', True),
    ('atomicacketh.orig', 'infiniband.atomicacketh.origremdt', 'int', True),
    ('immdt', 'infiniband.immdt', 'hexbytes', True),
    ('ieth', 'infiniband.ieth', 'hexbytes', True),
    ('mad.base_version', 'infiniband.mad.baseversion', 'int', True),
    ('mad.mgmt_class', 'infiniband.mad.mgmtclass', 'int', True),
    ('mad.class_version', 'infiniband.mad.classversion', 'int', True),
    ('mad.method', 'infiniband.mad.method', 'int', True),
    ('mad.status', 'infiniband.mad.status', 'int', True),
    ('mad.attr_id', 'infiniband.mad.attributeid', 'int', True),
    ('mad.tid', 'infiniband.mad.transactionid', 'int', True),
    ('mad.attr_mod', 'infiniband.mad.attributemodifier', 'int', True),
    ('icrc.value', 'infiniband.invariant.crc', 'int', True),
    ('vcrc.value', 'infiniband.variant.crc', 'int', True),
]

AETH_KIND = {0: 'ACK', 1: 'RNR', 2: 'RESERVED', 3: 'NAK'}

CM_MSG = {
    0x0010: 'REQ', 0x0011: 'MRA', 0x0012: 'REJ',
    0x0013: 'REP', 0x0014: 'RTU', 0x0015: 'DREQ', 0x0016: 'DREP',
    0x0017: 'SIDR_REQ', 0x0018: 'SIDR_REP', 0x0019: 'LAP', 0x001a: 'APR',
}

# CM body fields per message as TShark 4.0 names them.  (qptrace key, tshark
# field, kind, required).  Messages missing here are not decoded by TShark 4.0.
_CM_COMM = lambda m: [  # noqa: E731
    ('local_comm_id', 'infiniband.cm.%s.localcommid' % m, 'int', True),
    ('remote_comm_id', 'infiniband.cm.%s.remotecommid' % m, 'int', True)]
CM_FIELDS = {
    'REQ': [
        # TShark 4.0 names the REQ Local Communication ID plain "infiniband.cm.req"
        ('local_comm_id', 'infiniband.cm.req', 'int', True),
        ('service_id', 'infiniband.cm.req.serviceid', 'int', True),
        ('local_qpn', 'infiniband.cm.req.localqpn', 'int', True),
        ('starting_psn', 'infiniband.cm.req.startpsn', 'int', True),
        ('local_ca_guid', 'infiniband.cm.req.localcaguid', 'int', False),
        ('local_qkey', 'infiniband.cm.req.localqkey', 'int', False),
        ('transport', 'infiniband.cm.req.transpsvctype', 'int', False),
        ('path_mtu', 'infiniband.cm.req.pppmtu', 'mtu', False),  # qptrace: bytes
        ('pkey', 'infiniband.cm.req.pkey', 'int', False),
        ('responder_resources', 'infiniband.cm.req.responderres', 'int', False),
        ('initiator_depth', 'infiniband.cm.req.initdepth', 'int', False),
        ('retry_count', 'infiniband.cm.req.retrcount', 'int', False),
        ('rnr_retry_count', 'infiniband.cm.req.rnrretrcount', 'int', False),
        ('primary_lid_local', 'infiniband.cm.req.prim_locallid', 'int', False),
        ('primary_lid_remote', 'infiniband.cm.req.prim_remotelid', 'int', False),
        # RDMA-CM IP private data (qptrace "cm.rdma_cm" object)
        ('rdma_cm.ip_version', 'infiniband.cm.req.ip_cm.ipv', 'int', True),
        ('rdma_cm.src_ip', 'infiniband.cm.req.ip_cm.sip4', 'addr', True),
        ('rdma_cm.src_ip', 'infiniband.cm.req.ip_cm.sip6', 'addr', True),
        ('rdma_cm.dst_ip', 'infiniband.cm.req.ip_cm.dip4', 'addr', True),
        ('rdma_cm.dst_ip', 'infiniband.cm.req.ip_cm.dip6', 'addr', True),
        ('rdma_cm.src_port', 'infiniband.cm.req.ip_cm.sport', 'int', True),
        ('rdma_cm.dst_port', 'infiniband.cm.req.serviceid.dport', 'int', True),
        ('rdma_cm.port_space', 'infiniband.cm.req.serviceid.protocol', 'int', True),
    ],
    'REP': [
        # ... and the REP one plain "infiniband.cm.rep"
        ('local_comm_id', 'infiniband.cm.rep', 'int', True),
        ('remote_comm_id', 'infiniband.cm.rep.remotecommid', 'int', True),
        ('local_qpn', 'infiniband.cm.rep.localqpn', 'int', True),
        ('starting_psn', 'infiniband.cm.rep.startpsn', 'int', True),
        ('local_ca_guid', 'infiniband.cm.rep.localcaguid', 'int', False),
        ('local_qkey', 'infiniband.cm.rep.localqkey', 'int', False),
        ('responder_resources', 'infiniband.cm.rep.respres', 'int', False),
        ('initiator_depth', 'infiniband.cm.rep.initdepth', 'int', False),
        ('rnr_retry_count', 'infiniband.cm.rep.rnrretrcount', 'int', False),
    ],
    'RTU': _CM_COMM('rtu'),
    'REJ': _CM_COMM('rej') + [
        ('reason', 'infiniband.cm.rej.reason', 'int', False),
        ('msg_rejected', 'infiniband.cm.rej.msgrej', 'int', False),
    ],
    'DREQ': _CM_COMM('dreq') + [
        # TShark files the DREQ remote QPN under the REQ prefix
        ('remote_qpn', 'infiniband.cm.req.remoteqpneecn', 'int', False),
    ],
    'DREP': _CM_COMM('drsp'),
}

# Every path the comparer knows; qptrace keys outside this set are ignored.
KNOWN_PATHS = {}
for _p, _f, _k, _r in SIMPLE_FIELDS:
    KNOWN_PATHS[_p] = _r
for _p in ('reth.va', 'reth.rkey', 'atomiceth.va', 'atomiceth.rkey',
           'aeth.kind', 'cm.msg', 'transport', 'src', 'dst', 'time',
           'sport', 'dport', 'vlan'):
    KNOWN_PATHS[_p] = True
KNOWN_PATHS['ecn'] = False
for _lst in CM_FIELDS.values():
    for _p, _f, _k, _r in _lst:
        KNOWN_PATHS['cm.' + _p] = KNOWN_PATHS.get('cm.' + _p, False) or _r

BASE_FIELDS = ['frame.number', 'frame.protocols', 'frame.time_epoch',
               'frame.len', 'frame.cap_len', '_ws.malformed', '_ws.short',
               'udp.srcport', 'udp.dstport', 'ip.src', 'ip.dst', 'ipv6.src',
               'ipv6.dst', 'ip.dsfield.ecn', 'ipv6.tclass.ecn',
               'vlan.id', 'ieee8021ad.id', 'infiniband.vendor', 'infiniband.reth.va',
               'infiniband.reth.r_key', 'infiniband.aeth.syndrome.opcode',
               'ip.fragment.count', 'macc.opcode', 'macc.pause_time', 'macc.cbfc.enbv'] + \
    ['macc.cbfc.pause_time.c%d' % _i for _i in range(8)]


def tshark_field_list():
    fields = list(BASE_FIELDS)
    for _p, f, _k, _r in SIMPLE_FIELDS:
        fields.append(f)
    for lst in CM_FIELDS.values():
        for _p, f, _k, _r in lst:
            if f not in fields:
                fields.append(f)
    return fields


# --------------------------------------------------------------------------
# Normalization
# --------------------------------------------------------------------------
class Multi(object):
    """TShark printed several different values for one field."""

    def __init__(self, values):
        self.values = values

    def __eq__(self, other):
        return False

    def __repr__(self):
        return 'MULTIPLE[%s]' % ','.join(self.values)


def norm_tshark(kind, raw):
    if kind == 'int':
        return int(raw, 0)
    if kind == 'bool':
        low = raw.lower()
        if low in ('1', 'true'):
            return True
        if low in ('0', 'false'):
            return False
        raise ValueError('not a boolean: %r' % raw)
    if kind == 'hexbytes':
        return int(raw.replace(':', '').replace(' ', ''), 16)
    if kind == 'ip':
        return ipaddress.ip_address(raw).compressed
    if kind == 'addr':
        return norm_addr(raw)
    if kind == 'mtu':
        return MTU_BYTES.get(int(raw, 0), 0)
    if kind == 'str':
        return raw
    raise ValueError(kind)


MTU_BYTES = {1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}


def norm_addr(text):
    """An address as a host would show it: an IPv4-mapped IPv6 address
    (::ffff:a.b.c.d, e.g. a RoCE GID) is the IPv4 address."""
    a = ipaddress.ip_address(text)
    if a.version == 6 and a.ipv4_mapped is not None:
        return str(a.ipv4_mapped)
    return a.compressed


def norm_qptrace(kind, val):
    """Normalize a qptrace JSON value; a wrong JSON type stays as a tagged
    string so that it shows up as a mismatch instead of being coerced."""
    if kind in ('int', 'hexbytes', 'mtu'):
        if isinstance(val, int) and not isinstance(val, bool):
            return val
        return 'BAD-TYPE:%r' % (val,)
    if kind == 'bool':
        if isinstance(val, bool):
            return val
        return 'BAD-TYPE:%r' % (val,)
    if kind in ('ip', 'addr'):
        if isinstance(val, str):
            try:
                return norm_addr(val) if kind == 'addr' else ipaddress.ip_address(val).compressed
            except ValueError:
                return 'BAD-IP:%r' % (val,)
        return 'BAD-TYPE:%r' % (val,)
    if kind == 'intlist':
        if isinstance(val, list) and all(isinstance(x, int) and not isinstance(x, bool)
                                         for x in val):
            return val
        return 'BAD-TYPE:%r' % (val,)
    if kind == 'str':
        return val
    if kind == 'time':
        if isinstance(val, (int, float)) and not isinstance(val, bool):
            return float(val)
        return 'BAD-TYPE:%r' % (val,)
    return val


class Row(object):
    """One tshark output line: field name -> list of raw values."""

    def __init__(self, names, line):
        parts = line.rstrip('\n').split('\t')
        self.raw = {}
        for name, value in zip(names, parts):
            if value != '':
                self.raw[name] = value.split(',') if name != 'frame.protocols' else [value]
        self.number = int(self.raw['frame.number'][0])
        self.protocols = self.raw.get('frame.protocols', [''])[0].split(':')

    def has(self, field):
        return field in self.raw

    def get(self, field, kind='str', first=False):
        vals = self.raw.get(field)
        if not vals:
            return None
        if first:
            return norm_tshark(kind, vals[0])
        # identical repeats are one value (TShark 4.0 prints infiniband.immdt
        # twice: the IMMDT header item and the Immediate Data item share a name)
        uniq = []
        for v in vals:
            if v not in uniq:
                uniq.append(v)
        if len(uniq) > 1:
            return Multi(uniq)
        return norm_tshark(kind, uniq[0])

    def is_ib(self):
        return 'infiniband' in self.protocols

    def is_macc(self):
        return 'macc' in self.protocols

    def layers_before_ib(self):
        return self.protocols[:self.protocols.index('infiniband')]


def tshark_expected(row):
    """Build {qptrace path: (value, required, kind)} from a tshark row."""
    exp = {}

    def put(path, val, required, kind):
        if val is not None:
            exp[path] = (val, required, kind)

    atomic = row.has('infiniband.atomiceth.swapdt') or row.has('infiniband.atomiceth.cmpdt')
    for path, field, kind, req in SIMPLE_FIELDS:
        put(path, row.get(field, kind), req, kind)
    # TShark 4.0 prints the AtomicETH VA and R_Key as infiniband.reth.va/r_key
    prefix = 'atomiceth' if atomic else 'reth'
    put(prefix + '.va', row.get('infiniband.reth.va', 'int'), True, 'int')
    put(prefix + '.rkey', row.get('infiniband.reth.r_key', 'int'), True, 'int')

    syn_op = row.get('infiniband.aeth.syndrome.opcode', 'int')
    if syn_op is not None and not isinstance(syn_op, Multi):
        put('aeth.kind', AETH_KIND[syn_op], True, 'str')

    mclass = row.get('infiniband.mad.mgmtclass', 'int')
    attr = row.get('infiniband.mad.attributeid', 'int')
    if mclass == 7 and isinstance(attr, int):
        msg = CM_MSG.get(attr)  # other attributes (ClassPortInfo ...): no cm object
        put('cm.msg', msg, True, 'str')
        for key, field, kind, req in CM_FIELDS.get(msg, []):
            put('cm.' + key, row.get(field, kind), req, kind)

    before = row.layers_before_ib()
    if ('vlan' in before and row.has('vlan.id')) or \
            ('ieee8021ad' in before and row.has('ieee8021ad.id')):
        # QinQ: TShark puts the outer 802.1ad tag in ieee8021ad.id and the
        # inner 802.1Q tag in vlan.id; qptrace lists them outer first.
        tags = [int(v, 0) for v in row.raw.get('ieee8021ad.id', [])]
        tags += [int(v, 0) for v in row.raw.get('vlan.id', [])]
        exp['vlan'] = (tags, True, 'intlist')
    if 'udp' in before:
        put('transport', 'RoCEv2', True, 'str')
        put('sport', row.get('udp.srcport', 'int', first=True), True, 'int')
        put('dport', row.get('udp.dstport', 'int', first=True), True, 'int')
        if 'ipv6' in before:
            put('src', row.get('ipv6.src', 'addr', first=True), True, 'addr')
            put('dst', row.get('ipv6.dst', 'addr', first=True), True, 'addr')
            put('ecn', row.get('ipv6.tclass.ecn', 'int', first=True), False, 'int')
        else:
            put('src', row.get('ip.src', 'addr', first=True), True, 'addr')
            put('dst', row.get('ip.dst', 'addr', first=True), True, 'addr')
            put('ecn', row.get('ip.dsfield.ecn', 'int', first=True), False, 'int')
    elif before and before[-1] in ('ethertype', 'vlan'):
        put('transport', 'RoCEv1', True, 'str')
        # qptrace prints a RoCEv1 GID address like a host address
        put('src', row.get('infiniband.grh.sgid', 'addr'), True, 'addr')
        put('dst', row.get('infiniband.grh.dgid', 'addr'), True, 'addr')
    else:
        put('transport', 'IB', True, 'str')
        put('src', row.get('infiniband.lrh.slid', 'int'), True, 'int')
        put('dst', row.get('infiniband.lrh.dlid', 'int'), True, 'int')
    t = row.get('frame.time_epoch', 'str')
    if t is not None:
        exp['time'] = (float(t), True, 'time')
    return exp


def flatten(rec, prefix=''):
    out = {}
    for k, v in rec.items():
        path = prefix + k
        if isinstance(v, dict):
            out.update(flatten(v, path + '.'))
        else:
            out[path] = v
    return out


def unflatten(flat):
    rec = {}
    for path, v in flat.items():
        cur = rec
        parts = path.split('.')
        for p in parts[:-1]:
            cur = cur.setdefault(p, {})
        cur[parts[-1]] = v
    return rec


# --------------------------------------------------------------------------
# Comparison of one frame
# --------------------------------------------------------------------------
def fmt(v):
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return 'true' if v else 'false'
    if isinstance(v, int) and v > 9:
        return '%d (0x%x)' % (v, v)
    return repr(v)


def unknown_opcode_reason(row, qflat):
    """TShark 4.0 did not know the BTH opcode (it says so by dumping the rest
    of the packet as infiniband.vendor)."""
    op = row.get('infiniband.bth.opcode', 'int')
    if not isinstance(op, int) or not row.has('infiniband.vendor'):
        return None
    if op == 0x81:
        return 'CNP not known to TShark'
    return 'BTH opcode %d (0x%02x) not known to %s' % (op, op, TSHARK)


RD_AFTER_BTH = ('rdeth.', 'deth.', 'reth.', 'atomiceth.', 'aeth.', 'atomicacketh.',
                'immdt', 'ieth', 'mad.', 'cm.')


def rd_reason(row):
    """TShark 4.0 takes the BTH of a Reliable Datagram packet (opcodes
    0x40-0x5f) as 20 bytes long (infiniband.bth size 20), so it reads the
    RDETH, DETH and everything after them 8 bytes late."""
    op = row.get('infiniband.bth.opcode', 'int')
    if isinstance(op, int) and 0x40 <= op <= 0x5f:
        return ('RD opcode %d (0x%02x): %s takes the BTH as 20 bytes and reads '
                'RDETH and later headers 8 bytes late' % (op, op, TSHARK))
    return None


def mad_crc_reason(row, qflat):
    """TShark 4.0 adds no ICRC/VCRC item after MADs of several classes
    (seen: SA attr 0x0012, PerfMgt 0x04 attr 0x0001/0x0012, vendor classes
    0x09-0x0f, 0x10, CC 0x21, 0x30-0x4f, ...)."""
    if not row.has('infiniband.mad.mgmtclass'):
        return None
    missing = [p for p in ('icrc.value', 'vcrc.value')
               if p in qflat and not row.has('infiniband.invariant.crc' if p[0] == 'i'
                                             else 'infiniband.variant.crc')]
    if not missing:
        return None
    return missing, ('%s shows no %s after this MAD (class 0x%02x attr 0x%04x)'
                     % (TSHARK, '/'.join(missing), row.get('infiniband.mad.mgmtclass', 'int'),
                        row.get('infiniband.mad.attributeid', 'int') or 0))


def compare_frame(qrec, row):
    """Returns (fields_compared, mismatches[list of str], deviations[list of str])."""
    n = row.number
    exp = tshark_expected(row)
    qflat = flatten(qrec)
    mism, devs = [], []
    compared = 0

    malformed = qrec.get('malformed')
    unk = unknown_opcode_reason(row, qflat)
    cm_msg = exp.get('cm.msg', (None,))[0]
    cm_body_unknown = cm_msg is not None and cm_msg not in CM_FIELDS

    rd = rd_reason(row)
    if rd:
        for p in list(exp):
            if p.startswith(RD_AFTER_BTH):
                del exp[p]
        devs.append('frame %d: %s; not compared: %s'
                    % (n, rd, ','.join(sorted(p for p in qflat if p.startswith(RD_AFTER_BTH)))
                       or '-'))
        qflat = dict((p, v) for p, v in qflat.items() if not p.startswith(RD_AFTER_BTH))
    madcrc = mad_crc_reason(row, qflat)
    if madcrc:
        devs.append('frame %d: %s' % (n, madcrc[1]))
        for p in madcrc[0]:
            del qflat[p]

    only_q, only_t = [], []
    for path in sorted(set(exp) | set(p for p in qflat if p in KNOWN_PATHS)):
        in_q = path in qflat
        in_t = path in exp
        if in_q and in_t:
            tval, _req, kind = exp[path]
            qval = norm_qptrace(kind, qflat[path])
            compared += 1
            if kind == 'time':
                ok = isinstance(qval, float) and abs(qval - tval) <= TIME_TOLERANCE
                tshow = '%.9f' % tval
            else:
                ok = qval == tval
                tshow = fmt(tval)
            if not ok:
                mism.append('frame %d: %s: qptrace=%s tshark=%s' % (n, path, fmt(qval), tshow))
            continue
        required = exp[path][1] if in_t else KNOWN_PATHS[path]
        if not required:
            continue
        if in_q:
            only_q.append(path)
        else:
            only_t.append(path)

    if malformed is not None:
        devs.append('frame %d: qptrace malformed (%s): compared only fields both decoded%s%s'
                    % (n, malformed,
                       '; qptrace only: ' + ','.join(only_q) if only_q else '',
                       '; tshark only: ' + ','.join(only_t) if only_t else ''))
        return compared, mism, devs

    if unk:
        # TShark stops after the BTH: fields only qptrace has are expected.
        devs.append('frame %d: %s (compared the BTH fields TShark shows; qptrace only: %s)'
                    % (n, unk, ','.join(only_q) or '-'))
        only_q = []
    if cm_body_unknown:
        cm_only = [p for p in only_q if p.startswith('cm.')]
        devs.append('frame %d: CM %s body not decoded by %s (qptrace only: %s)'
                    % (n, cm_msg, TSHARK, ','.join(cm_only) or '-'))
        only_q = [p for p in only_q if not p.startswith('cm.')]
    for p in only_q:
        mism.append('frame %d: %s: qptrace=%s tshark=<absent>' % (n, p, fmt(qflat[p])))
    for p in only_t:
        mism.append('frame %d: %s: qptrace=<absent> tshark=%s' % (n, p, fmt(exp[p][0])))
    if row.has('_ws.malformed'):
        mism.append('frame %d: tshark flags the frame malformed (%s) but qptrace does not'
                    % (n, ','.join(row.raw['_ws.malformed'])))
    return compared, mism, devs


def macc_tags(row):
    tags = [int(v, 0) for v in row.raw.get('ieee8021ad.id', [])]
    tags += [int(v, 0) for v in row.raw.get('vlan.id', [])]
    return tags


def compare_macc(qrec, row):
    """A MAC control frame (PAUSE, PFC): (fields_compared, mismatches, deviations)."""
    n = row.number
    mism, devs = [], []
    compared = 0
    m = qrec.get('macc') if isinstance(qrec.get('macc'), dict) else {}

    def eq(what, qv, tv):
        nonlocal compared
        compared += 1
        if qv != tv:
            mism.append('frame %d: %s: qptrace=%s tshark=%s' % (n, what, fmt(qv), fmt(tv)))

    if qrec.get('transport') != 'MAC-control':
        mism.append('frame %d: TShark decodes MAC control, qptrace transport %s'
                    % (n, qrec.get('transport')))
        return compared, mism, devs
    eq('macc.opcode', m.get('opcode'), row.get('macc.opcode', 'int', first=True))
    eq('vlan', qrec.get('vlan', []), macc_tags(row))
    t = row.get('frame.time_epoch', 'str')
    q_t = qrec.get('time')
    compared += 1
    if t is None or not isinstance(q_t, (int, float)) or abs(float(q_t) - float(t)) > TIME_TOLERANCE:
        mism.append('frame %d: time: qptrace=%s tshark=%s' % (n, q_t, t))
    op = m.get('opcode')
    if op == 0x0101:
        times = [row.get('macc.cbfc.pause_time.c%d' % i, 'int', first=True) for i in range(8)]
        whole = row.has('macc.cbfc.enbv') and None not in times
    elif op == 0x0001:
        times = [row.get('macc.pause_time', 'int', first=True)]
        whole = times[0] is not None
    else:
        times, whole = [], True
    if qrec.get('malformed') is not None:
        if whole and not row.has('_ws.malformed'):
            mism.append('frame %d: qptrace malformed (%s), TShark decoded it whole'
                        % (n, qrec['malformed']))
        else:
            devs.append('frame %d: MAC control frame malformed (%s) for both tools: opcode '
                        'compared' % (n, qrec['malformed']))
        return compared, mism, devs
    if not whole or row.has('_ws.malformed'):
        mism.append('frame %d: TShark did not decode the MAC control frame whole, qptrace '
                    'does not call it malformed' % n)
        return compared, mism, devs
    if op == 0x0101:
        eq('macc.cev', m.get('cev'), row.get('macc.cbfc.enbv', 'int', first=True))
        eq('macc.quanta', m.get('quanta'), times)
    elif op == 0x0001:
        eq('macc.quanta', m.get('quanta'), times[0])
    return compared, mism, devs


def stolen_port_reason(qrec, row):
    """RoCEv2 frame to UDP 4791 whose lower source port belongs to another
    TShark dissector: TShark's UDP dissector tries the lower port first."""
    if row is None or qrec.get('transport') != 'RoCEv2' or 'udp' not in row.protocols:
        return None
    sport = row.get('udp.srcport', 'int', first=True)
    dport = row.get('udp.dstport', 'int', first=True)
    if dport != 4791 or sport is None or sport >= dport:
        return None
    after = row.protocols[row.protocols.index('udp') + 1:]
    if not after or after[0] in ('infiniband', 'data'):
        return None
    return 'frame %d: UDP source port %d stolen by %s' % (row.number, sport, after[0])


def compare_capture(qrecs, rows):
    """qrecs: list of qptrace records; rows: {frame number: Row}.
    Returns (frames_compared, fields_compared, mismatches, deviations)."""
    mism, devs = [], []
    q = {}
    for rec in qrecs:
        fr = rec.get('frame')
        if not isinstance(fr, int) or isinstance(fr, bool):
            mism.append('qptrace record without an integer "frame": %s' % json.dumps(rec)[:120])
            continue
        if fr in q:
            mism.append('frame %d: qptrace emitted the frame twice' % fr)
            continue
        q[fr] = rec
    t_ib = set(n for n, r in rows.items() if r.is_ib())
    t_macc = set(n for n, r in rows.items() if r.is_macc())
    frames = fields = 0
    for n in sorted(set(q) | t_ib | t_macc):
        row = rows.get(n)
        if n in t_macc or (n in q and q[n].get('transport') == 'MAC-control'):
            if n not in q:
                mism.append('frame %d: MAC control (opcode %s) decoded by tshark only'
                            % (n, row.raw.get('macc.opcode', ['?'])[0]))
                continue
            if n not in t_macc:
                mism.append('frame %d: MAC control decoded by qptrace only (tshark protocols: %s)'
                            % (n, ':'.join(row.protocols) if row else 'no such frame'))
                continue
            c, m, d = compare_macc(q[n], row)
            frames += 1
            fields += c
            mism += m
            devs += d
            continue
        if n in q and n in t_ib:
            c, m, d = compare_frame(q[n], row)
            frames += 1
            fields += c
            mism += m
            devs += d
        elif n in q:
            rec = q[n]
            why = stolen_port_reason(rec, row)
            if why:
                devs.append(why)
            elif rec.get('malformed') is not None:
                devs.append('frame %d: qptrace malformed (%s); TShark did not reach infiniband (%s)'
                            % (n, rec['malformed'], ':'.join(row.protocols) if row else 'no such frame'))
            elif row is None:
                mism.append('frame %d: qptrace emitted a frame number TShark does not have' % n)
            else:
                mism.append('frame %d: decoded as %s by qptrace only (tshark protocols: %s)'
                            % (n, rec.get('transport'), ':'.join(row.protocols)))
        elif row.get('ip.fragment.count', 'int', first=True):
            # TShark reassembled IPv4 fragments into this frame; qptrace
            # keeps no state across frames and names the first fragment
            # instead (its ip_fragment event), so the RoCE packet is
            # TShark's only.
            devs.append('frame %d: RoCE reassembled by TShark from %d IPv4 fragments; qptrace '
                        'does not reassemble (reports the fragments)'
                        % (n, row.get('ip.fragment.count', 'int', first=True)))
        else:
            hint = ''
            sport = row.get('udp.srcport', 'int', first=True)
            dport = row.get('udp.dstport', 'int', first=True)
            if sport == 4791 and dport != 4791:
                hint = (' [TShark matches UDP *source* port 4791 too; qptrace keys on the '
                        'destination port only: which is right is an open question]')
            mism.append('frame %d: decoded by tshark only (protocols: %s)%s'
                        % (n, ':'.join(row.protocols), hint))
    return frames, fields, mism, devs


# --------------------------------------------------------------------------
# Running the tools
# --------------------------------------------------------------------------
class ToolError(Exception):
    pass


def run_qptrace(binary, capture):
    try:
        p = subprocess.run([binary, 'packets', '--json', capture], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
    except OSError as e:
        raise ToolError('cannot run qptrace: %s' % e)
    if p.returncode != 0:
        raise ToolError('qptrace exited %d: %s' % (p.returncode, p.stderr.strip()[:500]))
    recs = []
    for i, line in enumerate(p.stdout.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError as e:
            raise ToolError('qptrace output line %d is not JSON (%s): %s' % (i, e, line[:120]))
        if not isinstance(rec, dict):
            raise ToolError('qptrace output line %d is not a JSON object' % i)
        recs.append(rec)
    return recs


USER_DLT = 147  # DLT_USER0
USER_DLT_UAT = 'uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""'


def relabel_linktype_247(capture, tmpdir):
    """If capture is a pcap/pcapng with LINKTYPE_INFINIBAND (247), write a copy
    labelled DLT_USER0 and return its path; otherwise None."""
    with open(capture, 'rb') as f:
        data = bytearray(f.read())
    if len(data) < 24:
        return None
    magic = data[:4]
    changed = False
    if magic in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1'):  # little-endian pcap
        if struct.unpack_from('<I', data, 20)[0] & 0x0fffffff == 247:
            struct.pack_into('<I', data, 20, USER_DLT)
            changed = True
    elif magic in (b'\xa1\xb2\xc3\xd4', b'\xa1\xb2\x3c\x4d'):
        if struct.unpack_from('>I', data, 20)[0] & 0x0fffffff == 247:
            struct.pack_into('>I', data, 20, USER_DLT)
            changed = True
    elif magic == b'\x0a\x0d\x0d\x0a':  # pcapng: patch every IDB
        off, endian = 0, '<'
        while off + 12 <= len(data):
            btype = struct.unpack_from(endian + 'I', data, off)[0]
            if btype == 0x0A0D0D0A:
                endian = '<' if data[off + 8:off + 12] == b'\x4d\x3c\x2b\x1a' else '>'
            blen = struct.unpack_from(endian + 'I', data, off + 4)[0]
            if btype == 1 and struct.unpack_from(endian + 'H', data, off + 8)[0] == 247:
                struct.pack_into(endian + 'H', data, off + 8, USER_DLT)
                changed = True
            if blen < 12:
                break
            off += blen
    if not changed:
        return None
    out = os.path.join(tmpdir, 'dlt147_' + os.path.basename(capture))
    with open(out, 'wb') as f:
        f.write(data)
    return out


def run_tshark(tshark, capture):
    """Returns ({frame number: Row}, notes)."""
    fields = tshark_field_list()
    notes = []
    with tempfile.TemporaryDirectory(prefix='tshark_diff.') as tmp:
        path = capture
        extra = []
        relabelled = relabel_linktype_247(capture, tmp)
        if relabelled:
            path = relabelled
            extra = ['-o', USER_DLT_UAT]
            notes.append('note: LINKTYPE_INFINIBAND (247) is unreadable by ' + TSHARK + '; '
                         'read via a DLT_USER0 copy mapped to the "infiniband" dissector')
        # --disable-protocol rpcordma: see the module docstring
        cmd = [tshark, '-n', '--disable-protocol', 'rpcordma'] + extra + [
            '-r', path, '-T', 'fields', '-E', 'separator=/t', '-E', 'occurrence=a',
            '-E', 'aggregator=,', '-E', 'quote=n']
        for f in fields:
            cmd += ['-e', f]
        env = dict(os.environ)
        env.setdefault('LC_ALL', 'C')
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               universal_newlines=True, timeout=600, env=env)
        except OSError as e:
            raise ToolError('cannot run tshark: %s' % e)
    if p.returncode != 0:
        err = '\n'.join(l for l in p.stderr.splitlines() if 'Running as user' not in l)
        raise ToolError('tshark exited %d: %s' % (p.returncode, err.strip()[:500]))
    rows = {}
    for line in p.stdout.splitlines():
        if not line.strip():
            continue
        row = Row(fields, line)
        rows[row.number] = row
    return rows, notes


def check_one(qptrace, tshark, capture, verbose):
    """Prints the capture's report; returns True when it passed."""
    try:
        qrecs = run_qptrace(qptrace, capture)
        rows, notes = run_tshark(tshark, capture)
    except ToolError as e:
        print('FAIL %s: %s' % (capture, e))
        return False
    frames, fields, mism, devs = compare_capture(qrecs, rows)
    summary = '%s: %d frames compared, %d fields compared, %d known tshark deviations' % (
        capture, frames, fields, len(devs))
    if frames == 0 and not devs and not mism:
        mism.append('no RoCE/IB frame in the capture according to either tool')
    if mism:
        print('FAIL %s, %d mismatches' % (summary, len(mism)))
    else:
        print('ok  %s' % summary)
    for line in notes:
        print('    ' + line)
    for line in devs:
        print('    deviation: ' + line)
    limit = None if verbose else 50
    for line in mism[:limit]:
        print('    MISMATCH ' + line)
    if limit is not None and len(mism) > limit:
        print('    ... %d more mismatches (use -v)' % (len(mism) - limit))
    return not mism


# --------------------------------------------------------------------------
# Self-test
# --------------------------------------------------------------------------
def _pcap(path, linktype, frames):
    with open(path, 'wb') as f:
        f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, linktype))
        for i, (data, wirelen) in enumerate(frames):
            f.write(struct.pack('<IIII', 1700000000 + i, 123456, len(data), wirelen or len(data)))
            f.write(data)


def _synthetic_frames():
    def csum(b):
        s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
        s = (s & 0xffff) + (s >> 16)
        s = (s & 0xffff) + (s >> 16)
        return (~s) & 0xffff

    def ipv4(payload, tos=0):
        h = struct.pack('!BBHHHBBH4s4s', 0x45, tos, 20 + len(payload), 1, 0x4000, 64, 17, 0,
                        bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
        return h[:10] + struct.pack('!H', csum(h)) + h[12:] + payload

    def eth(p):
        return bytes.fromhex('0200000000020200000000010800') + p

    def udp(sp, dp, p):
        return struct.pack('!HHHH', sp, dp, 8 + len(p), 0) + p

    def bth(op, dqp, psn, ack=True):
        return struct.pack('!BBHII', op, 0, 0xffff, dqp, (ack << 31) | psn)

    icrc = b'\x11\x22\x33\x44'
    return [
        eth(ipv4(udp(50000, 4791, bth(0x81, 0x11, 0, False) + bytes(16) + icrc), tos=2)),  # CNP
        eth(ipv4(udp(69, 4791, bth(4, 0x11, 5) + b'abcd' + icrc))),                     # TFTP
        eth(ipv4(udp(50002, 4791, bth(11, 0x12, 8) + struct.pack('!QII', 0x2000, 0x66, 0)
                     + b'\xde\xad\xbe\xef' + icrc))),                                    # WRITE imm
        eth(ipv4(udp(50003, 4791, bth(17, 0x12, 9, False) + struct.pack('!I', 0x63000007)
                     + icrc))),                                                           # NAK
        eth(ipv4(udp(50004, 4791, bth(20, 0x12, 10) + struct.pack('!QIQQ', 0x3000, 0x77, 1, 0)
                     + icrc))),                                                           # FetchAdd
    ]


def _fake_records(rows):
    """What a correct qptrace would print for the synthetic capture."""
    recs = []
    for n in sorted(rows):
        row = rows[n]
        if not row.is_ib():
            continue
        flat = dict((p, v[0]) for p, v in tshark_expected(row).items())
        if flat.get('bth.opcode') == 0x81:
            flat['icrc.value'] = 0x11223344  # beyond where TShark stops
        flat['frame'] = n
        recs.append(unflatten(flat))
    # frame 2 (UDP source port 69): qptrace decodes it, TShark says TFTP
    recs.append({'frame': 2, 'transport': 'RoCEv2', 'bth': {'opcode': 4, 'psn': 5}})
    recs.sort(key=lambda r: r['frame'])
    return recs


def self_test(tshark):
    failures = []

    def expect(cond, what):
        print('%s %s' % ('ok  ' if cond else 'FAIL', what))
        if not cond:
            failures.append(what)

    # 1. Pure comparer tests on a hand-made TShark row (no tshark needed).
    fields = tshark_field_list()
    vals = {'frame.number': '7', 'frame.protocols': 'eth:ethertype:ip:udp:infiniband',
            'frame.time_epoch': '1700000000.123456000', 'ip.src': '10.0.0.1',
            'ip.dst': '10.0.0.2', 'udp.srcport': '50000', 'udp.dstport': '4791',
            'ip.dsfield.ecn': '0',
            'infiniband.bth.opcode': '11', 'infiniband.bth.se': '0', 'infiniband.bth.m': '0',
            'infiniband.bth.padcnt': '0', 'infiniband.bth.tver': '0',
            'infiniband.bth.p_key': '65535', 'infiniband.bth.destqp': '0x000023',
            'infiniband.bth.a': '1', 'infiniband.bth.psn': '123',
            'infiniband.reth.va': '0x0000735781b30000', 'infiniband.reth.r_key': '0x0000588f',
            'infiniband.reth.dmalen': '0', 'infiniband.immdt': 'deadbeef,deadbeef',
            'infiniband.invariant.crc': '0x6c1a65c2'}
    row = Row(fields, '\t'.join(vals.get(f, '') for f in fields))
    good = {'frame': 7, 'time': 1700000000.123456, 'transport': 'RoCEv2', 'src': '10.0.0.1',
            'dst': '10.0.0.2', 'sport': 50000, 'dport': 4791, 'ecn': 0,
            'bth': {'opcode': 11, 'opcode_name': 'RC RDMA WRITE Only with Immediate', 'se': False,
                    'm': False, 'pad': 0, 'tver': 0, 'pkey': 65535, 'fecn': False, 'becn': False,
                    'dqpn': 0x23, 'ackreq': True, 'psn': 123},
            'reth': {'va': 0x735781b30000, 'rkey': 0x588f, 'dmalen': 0},
            'immdt': 0xdeadbeef, 'icrc': {'value': 0x6c1a65c2, 'ok': True}, 'payload_len': 0}
    c, m, d = compare_frame(good, row)
    expect(not m and c == 21, 'comparer accepts a matching record (%d fields, %s)' % (c, m))

    def mutated(fn, what):
        rec = json.loads(json.dumps(good))
        fn(rec)
        _c, m2, _d = compare_frame(rec, row)
        expect(len(m2) >= 1, 'comparer reports %s: %s' % (what, m2[:1]))

    mutated(lambda r: r['bth'].__setitem__('psn', 124), 'an altered bth.psn')
    mutated(lambda r: r['bth'].__setitem__('ackreq', False), 'a flipped boolean')
    mutated(lambda r: r['bth'].__setitem__('ackreq', 1), 'a boolean printed as a number')
    mutated(lambda r: r.__setitem__('immdt', 0xefbeadde), 'a byte-swapped immdt')
    mutated(lambda r: r['icrc'].__setitem__('value', 0xc2651a6c), 'a byte-swapped icrc')
    mutated(lambda r: r.pop('reth'), 'a missing header')
    mutated(lambda r: r.__setitem__('aeth', {'syndrome': 31, 'msn': 1}), 'an extra header')
    mutated(lambda r: r.__setitem__('time', 1700000000.123466), 'a wrong timestamp')
    mutated(lambda r: r.__setitem__('src', '10.0.0.9'), 'a wrong source address')
    _f, _fl, m, _d = compare_capture([good, dict(good, frame=8)], {7: row})
    expect(any('frame 8' in x for x in m), 'comparer reports a frame only qptrace has')
    _f, _fl, m, _d = compare_capture([], {7: row})
    expect(any('tshark only' in x for x in m), 'comparer reports a frame only tshark has')

    # 2. End to end through tshark with a synthetic capture and a fake qptrace.
    if not shutil.which(tshark):
        expect(False, 'tshark (%s) not found: end-to-end part skipped' % tshark)
    else:
        with tempfile.TemporaryDirectory(prefix='tshark_diff_selftest.') as tmp:
            cap = os.path.join(tmp, 'synthetic.pcap')
            _pcap(cap, 1, [(f, None) for f in _synthetic_frames()])
            rows, _n = run_tshark(tshark, cap)
            recs = _fake_records(rows)

            def write_fake(records):
                js = os.path.join(tmp, 'out.jsonl')
                with open(js, 'w') as f:
                    for r in records:
                        f.write(json.dumps(r) + '\n')
                fake = os.path.join(tmp, 'fake_qptrace')
                with open(fake, 'w') as f:
                    f.write('#!/bin/sh\ncat %s\n' % js)
                os.chmod(fake, 0o755)
                return fake

            print('--- end-to-end, correct fake qptrace (expect ok with 2 deviations):')
            ok = check_one(write_fake(recs), tshark, cap, True)
            expect(ok, 'end-to-end run passes with a correct fake qptrace')
            bad = json.loads(json.dumps(recs))
            for r in bad:
                if r['frame'] == 3:
                    r['reth']['rkey'] ^= 1
            print('--- end-to-end, altered reth.rkey in frame 3 (expect FAIL):')
            ok = check_one(write_fake(bad), tshark, cap, True)
            expect(not ok, 'end-to-end run fails with an altered qptrace record')
    print('self-test: %d failure(s)' % len(failures))
    return 0 if not failures else 1


# The tshark under test, as the deviation lines name it (main() asks it).
TSHARK = 'TShark 4.0'


def tshark_name(tshark):
    """'TShark 4.6.9' from the first line of `tshark --version`."""
    try:
        out = subprocess.run([tshark, '--version'], capture_output=True, text=True).stdout
    except OSError:
        return None
    m = re.search(r'\b(\d+\.\d+\.\d+)', out.splitlines()[0] if out else '')
    return 'TShark ' + m.group(1) if m else None


def main(argv=None):
    global TSHARK
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--self-test', action='store_true', help='prove the comparer can fail')
    ap.add_argument('--tshark', default='tshark', help='tshark binary (default: tshark)')
    ap.add_argument('-v', '--verbose', action='store_true', help='print every mismatch')
    ap.add_argument('qptrace', nargs='?', help='qptrace binary')
    ap.add_argument('captures', nargs='*', help='pcap/pcapng files')
    args = ap.parse_args(argv)
    if args.self_test:
        return self_test(args.tshark)
    if not args.qptrace or not args.captures:
        ap.print_usage(sys.stderr)
        return 2
    TSHARK = tshark_name(args.tshark) or TSHARK
    print('comparing with %s' % TSHARK)
    passed = failed = 0
    for cap in args.captures:
        if check_one(args.qptrace, args.tshark, cap, args.verbose):
            passed += 1
        else:
            failed += 1
        sys.stdout.flush()
    print('%d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
