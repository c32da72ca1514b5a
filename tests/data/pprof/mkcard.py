#!/usr/bin/env python3
# A hand-encoded pprof whose strings carry a card number: labels, comments,
# a function system_name, the mapping file name (a command line), its build id,
# drop_frames, an unreferenced string. A second mapping, of runtime.main, has
# a GNU build id (40 hex digits). Writes the gzipped profile to stdout.
import gzip, sys, struct
def varint(n):
    out=b''
    if n<0: n+=1<<64
    while True:
        b=n&0x7f; n>>=7
        if n: out+=bytes([b|0x80])
        else: out+=bytes([b]); return out
def key(f,wt): return varint((f<<3)|wt)
def fv(f,n): return key(f,0)+varint(n)
def fb(f,b): return key(f,2)+varint(len(b))+b
def packed(f,ns): return fb(f,b''.join(varint(n) for n in ns))
S=[""]
def s(x):
    if x not in S: S.append(x)
    return S.index(x)
PAN="4111111111111111"
out=b''
# sample_type (1): ValueType type=1 unit=2
out+=fb(1, fv(1,s("samples"))+fv(2,s("count")))
out+=fb(1, fv(1,s("cpu"))+fv(2,s("nanoseconds")))
# functions (5)
fn=[(1,"main.handler","main.handler card="+PAN,"/src/main.go"),
    (2,"main.computeTax","main.computeTax","/src/tax.go"),
    (3,"runtime.main","runtime.main","/usr/lib/go/src/runtime/proc.go")]
funcs=b''
for i,n,sn,f in fn:
    funcs+=fb(5, fv(1,i)+fv(2,s(n))+fv(3,s(sn))+fv(4,s(f))+fv(5,10))
# mapping (3)
mp=fb(3, fv(1,1)+fv(2,0x400000)+fv(3,0x800000)+fv(4,0)+fv(5,s("/app/bin "+PAN+" --card="+PAN))+fv(6,s("buildid-"+PAN))+fv(7,1)+fv(8,1)+fv(9,1))
GNU_ID="5d2b9c6f0e8a41b7c3d9e2f1a0b4c8d7e6f5a493"
mp+=fb(3, fv(1,2)+fv(2,0x7f0000000000)+fv(3,0x7f0000100000)+fv(4,0)+fv(5,s("/usr/lib/libgo.so"))+fv(6,s(GNU_ID))+fv(7,1)+fv(8,1)+fv(9,1))
# locations (4): id, mapping_id, address, line(4){function_id,line}
locs=b''
for i in (1,2,3):
    m,base=(2,0x7f0000001000) if i==3 else (1,0x401000)
    locs+=fb(4, fv(1,i)+fv(2,m)+fv(3,base+i)+fb(4, fv(1,i)+fv(2,20+i)))
# samples (2): location_id packed (1), value packed (2), label (3)
samp=b''
lab=fb(3, fv(1,s("span_id"))+fv(2,s("00f067aa0ba902b7")))
lab2=fb(3, fv(1,s("card"))+fv(2,s(PAN)))
lab3=fb(3, fv(1,s("amount"))+fv(3,12345)+fv(4,s("cents-"+PAN)))
samp+=fb(2, packed(1,[2,1,3])+packed(2,[50,50000000])+lab+lab2+lab3)
samp+=fb(2, packed(1,[1,3])+packed(2,[30,30000000])+lab2)
samp+=fb(2, packed(1,[3])+packed(2,[20,20000000]))
s("unreferenced "+PAN)
drop=s("drop.*"+PAN)
comment=s("comment cvv=123 "+PAN)
out+=samp+mp+locs+funcs
body=out
# string table (6)
tail=b''
tail+=fv(7,drop)+fv(8,s("keep"+PAN))
tail+=fv(9,1700000000*10**9)+fv(10,10*10**9)
tail+=fb(11, fv(1,s("cpu"))+fv(2,s("nanoseconds")))+fv(12,10000000)
tail+=packed(13,[comment])+fv(14,1)
st=b''.join(fb(6,x.encode()) for x in S)
sys.stdout.buffer.write(gzip.compress(body+st+tail))
