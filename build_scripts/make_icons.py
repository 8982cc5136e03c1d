"""Draw Attention Explorer's application icon set into ``resources/icons/``.

The icon is drawn once, as SVG (a rounded indigo square holding a 4 x 4
attention heatmap: query rows, key columns, amber where the weight is large). Qt then renders that SVG to
PNGs (16 ... 512 px), a Windows ``.ico`` and a macOS ``.icns``. Only Qt
(PySide6-Essentials) is needed; it runs headless (``QT_QPA_PLATFORM=offscreen``).

Usage::

    QT_QPA_PLATFORM=offscreen python build_scripts/make_icons.py [--out resources/icons]

Writes ``attention-explorer.svg``, ``attention-explorer-<N>.png`` for
N in 16, 24, 32, 48, 64, 128, 256, 512, ``attention-explorer.png`` (256 px),
``attention-explorer.ico`` and ``attention-explorer.icns``. The generated
files are committed; re-run this script only when the drawing changes.
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
from pathlib import Path

NAME = "attention-explorer"
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
ICNS_SIZES = (16, 32, 64, 128, 256, 512)

# A 4 x 4 attention map (query rows, key columns; each row sums to 1), drawn as a heatmap.
ATTENTION = (
    (0.70, 0.10, 0.15, 0.05),
    (0.45, 0.35, 0.05, 0.15),
    (0.10, 0.55, 0.25, 0.10),
    (0.30, 0.05, 0.15, 0.50),
)


def icon_svg() -> str:
    """The icon as an SVG document (a 512 x 512 user-unit canvas): an attention heatmap on indigo."""
    n = len(ATTENTION)
    left = top = 88
    gap = 12
    cell = (512 - 2 * left - (n - 1) * gap) // n  # 75 units
    cells = []
    for i, row in enumerate(ATTENTION):
        peak = max(row)
        for j, w in enumerate(row):
            x, y = left + j * (cell + gap), top + i * (cell + gap)
            strength = w / peak
            cells.append(
                f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" rx="14" fill="#ffffff" fill-opacity="0.12"/>'
            )
            cells.append(
                f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" rx="14" fill="#ffb347" '
                f'fill-opacity="{0.08 + 0.92 * strength ** 1.3:.2f}"/>'
            )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<svg xmlns="http://www.w3.org/2000/svg" width="512" height="512" viewBox="0 0 512 512">\n'
        "  <defs>\n"
        '    <linearGradient id="bg" x1="0" y1="0" x2="0" y2="1">\n'
        '      <stop offset="0" stop-color="#4b4fd6"/>\n'
        '      <stop offset="1" stop-color="#23246e"/>\n'
        "    </linearGradient>\n"
        "  </defs>\n"
        '  <rect x="16" y="16" width="480" height="480" rx="96" fill="url(#bg)"/>\n'
        + "".join(f"  {c}\n" for c in cells)
        + "</svg>\n"
    )


def ico_bytes(pngs: dict[int, bytes]) -> bytes:
    """A multi-size Windows ``.ico`` whose entries are PNG streams (valid since Windows Vista).

    Args:
        pngs: square edge in pixels (1..256) -> PNG file bytes.
    """
    header = struct.pack("<HHH", 0, 1, len(pngs))
    offset = 6 + 16 * len(pngs)
    entries, blobs = b"", b""
    for size, data in sorted(pngs.items()):
        edge = 0 if size >= 256 else size  # 0 means 256 in the ICONDIRENTRY
        entries += struct.pack("<BBBBHHII", edge, edge, 0, 0, 1, 32, len(data), offset)
        blobs += data
        offset += len(data)
    return header + entries + blobs


ICNS_TYPES = {16: b"icp4", 32: b"icp5", 64: b"icp6", 128: b"ic07", 256: b"ic08", 512: b"ic09"}


def icns_bytes(pngs: dict[int, bytes]) -> bytes:
    """A macOS ``.icns`` whose elements are PNG streams (types icp4 ... ic09, 16 ... 512 px)."""
    body = b"".join(ICNS_TYPES[s] + struct.pack(">I", 8 + len(d)) + d for s, d in sorted(pngs.items()))
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def _png_bytes(image) -> bytes:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice

    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buf, "PNG")
    buf.close()
    return bytes(data.data())


def main(argv: list[str] | None = None) -> int:
    """Write the icon set; returns a process exit code (0 on success)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "resources" / "icons")
    args = parser.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

    from PySide6.QtCore import QByteArray, Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841 (keeps Qt alive)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    svg = icon_svg()
    (out / f"{NAME}.svg").write_text(svg, encoding="utf-8")
    renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
    if not renderer.isValid():
        print("error: the generated SVG did not parse", file=sys.stderr)
        return 1

    images: dict[int, QImage] = {}
    for size in sorted(set(PNG_SIZES) | set(ICO_SIZES) | set(ICNS_SIZES)):
        img = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
        img.fill(Qt.GlobalColor.transparent)
        painter = QPainter(img)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        images[size] = img
    for size in PNG_SIZES:
        images[size].save(str(out / f"{NAME}-{size}.png"), "PNG")
    images[256].save(str(out / f"{NAME}.png"), "PNG")

    pngs = {size: _png_bytes(images[size]) for size in images}
    (out / f"{NAME}.ico").write_bytes(ico_bytes({s: pngs[s] for s in ICO_SIZES}))
    (out / f"{NAME}.icns").write_bytes(icns_bytes({s: pngs[s] for s in ICNS_SIZES}))
    print(f"wrote icons to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
