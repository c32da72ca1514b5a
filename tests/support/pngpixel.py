#!/usr/bin/env python3
"""pngpixel.py FILE X Y: print the colour of one pixel of a PNG as "R G B".

A small reader of 8-bit RGB/RGBA PNG files (what Chromium's screenshots
are), using only the standard library: chunks, zlib, the five row filters.
"""
import struct
import sys
import zlib


def read(path):
    data = open(path, 'rb').read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        sys.exit('%s: not a PNG file' % path)
    pos, idat, hdr = 8, b'', None
    while pos + 8 <= len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b'IHDR':
            hdr = struct.unpack('>IIBBBBB', body)
        elif kind == b'IDAT':
            idat += body
        elif kind == b'IEND':
            break
        pos += 12 + n
    if not hdr:
        sys.exit('%s: no IHDR chunk' % path)
    w, h, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        sys.exit('%s: only 8-bit RGB or RGBA without interlace is read' % path)
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pr) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


def main():
    if len(sys.argv) != 4:
        sys.exit('usage: pngpixel.py FILE X Y')
    w, h, bpp, rows = read(sys.argv[1])
    x, y = int(sys.argv[2]), int(sys.argv[3])
    if not (0 <= x < w and 0 <= y < h):
        sys.exit('%s: pixel %d,%d is outside %dx%d' % (sys.argv[1], x, y, w, h))
    px = rows[y][x * bpp:x * bpp + 3]
    print('%d %d %d' % tuple(px))


main()
