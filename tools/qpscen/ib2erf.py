#!/usr/bin/env python3
# Wrap a LINKTYPE_INFINIBAND (247) pcap into ERF type 21 records (LINKTYPE_ERF 197) so that
# Wireshark/tshark 4.0, which cannot open 247 pcaps, can dissect it:  ib2erf.py in.pcap out.pcap
import struct,sys
d=open(sys.argv[1],'rb').read()
assert struct.unpack('<I',d[20:24])[0]==247
out=bytearray(d[:20]+struct.pack('<I',197))
off=24
while off<len(d):
    ts,tu,cl,wl=struct.unpack('<IIII',d[off:off+16]); p=d[off+16:off+16+cl]; off+=16+cl
    erfts=(ts<<32)|int(tu*(2**32)/1e6)
    h=struct.pack('<Q',erfts)+struct.pack('>BBHHH',21,0x04,16+len(p),0,wl)
    out+=struct.pack('<IIII',ts,tu,cl+16,wl+16)+h+p
open(sys.argv[2],'wb').write(out)
