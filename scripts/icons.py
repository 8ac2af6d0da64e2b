#!/usr/bin/env python3
"""Draws the page's app icons (public/icons/*.png): a white exclamation mark on
the page's accent colour, full bleed so that the same file works as a maskable
icon (the mark stays inside the central safe zone). Plain zlib PNG writing, so
nothing needs installing. Run it again only to change the icon."""
import struct
import zlib
from pathlib import Path

ACCENT = (0xC2, 0x41, 0x0C)
WHITE = (0xFF, 0xFF, 0xFF)


def pixel(x, y, n):
    u, v = x / n, y / n
    bar = 0.45 <= u <= 0.55 and 0.25 <= v <= 0.58
    dot = (u - 0.5) ** 2 + (v - 0.70) ** 2 <= 0.055 ** 2
    return WHITE if bar or dot else ACCENT


def png(n):
    rows = b"".join(
        b"\x00" + bytes(c for x in range(n) for c in pixel(x, y, n)) for y in range(n)
    )

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", n, n, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )


out = Path(__file__).resolve().parent.parent / "public" / "icons"
out.mkdir(parents=True, exist_ok=True)
for n in (192, 512):
    (out / f"icon-{n}.png").write_bytes(png(n))
