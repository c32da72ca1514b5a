#!/usr/bin/env python3
"""A CPU pprof as libdatadog's profilers (dd-trace-py, -rb, -php, .NET)
write it: the span labels are numbers (Label.num), not strings.

  dd_pprof.py OUT TIME_NANOS [DURATION_NANOS]

Two stack records, gzipped: main;handler;charge with 30 samples labelled
"span id" 12345 and "local root span id" 999, and main;idle_work with 70
samples labelled span 777 under root 555. Its time_nanos and
duration_nanos are the numbers given (duration 10 s unless given).
"""
import gzip
import sys


def varint(n):
    out = b''
    while True:
        b = n & 0x7f
        n >>= 7
        if not n:
            return out + bytes([b])
        out += bytes([b | 0x80])


def num(field, n):
    return varint(field << 3) + varint(n)


def msg(field, body):
    return varint(field << 3 | 2) + varint(len(body)) + body


def packed(field, xs):
    return msg(field, b''.join(varint(x) for x in xs))


strs = ['']


def s(text):
    if text not in strs:
        strs.append(text)
    return strs.index(text)


def label(key, n):
    return msg(3, num(1, s(key)) + num(3, n))


prof = msg(1, num(1, s('cpu-samples')) + num(2, s('count')))
prof += msg(1, num(1, s('cpu-time')) + num(2, s('nanoseconds')))
for i, name in enumerate(['main', 'handler', 'charge', 'idle_work'], 1):
    prof += msg(5, num(1, i) + num(2, s(name)) + num(3, s(name)) + num(4, s('app.py')))
    prof += msg(4, num(1, i) + num(3, 0x1000 * i) + msg(4, num(1, i) + num(2, 10 * i)))
prof += msg(2, packed(1, [3, 2, 1]) + packed(2, [30, 300000000]) +
            label('local root span id', 999) + label('span id', 12345))
prof += msg(2, packed(1, [4, 1]) + packed(2, [70, 700000000]) +
            label('local root span id', 555) + label('span id', 777))
for text in strs:
    prof += msg(6, text.encode())
duration = int(sys.argv[3]) if len(sys.argv) > 3 else 10 * 10**9
prof += num(9, int(sys.argv[2])) + num(10, duration) + num(12, 10000000)
with open(sys.argv[1], 'wb') as f:
    f.write(gzip.compress(prof))
