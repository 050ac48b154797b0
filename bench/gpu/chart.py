"""The SVG chart of BENCHMARKS.md's GPU sections: one row per case, a bar from 1 to segkit's time over
its peer's (log scale, left of 1 = segkit faster), and a grey bar for a "before" build where present.
Used by compare.py (top-k) and compare-segmented.py (reduce, scan, sort, batched copy)."""
import math


def ratio_chart(rows, path, title, subtitle, footer=""):
    """rows: dicts with "case", "over" (segkit / peer time) and optionally "beforeOver"."""
    data = [r for r in rows if r.get("over") is not None]
    if not data:
        return False
    has_before = any(r.get("beforeOver") is not None for r in data)
    lo, hi = 1 / 16, 16
    label_w, plot_w, row_h, top = 330, 520, 30 if has_before else 22, 54
    width, height = label_w + plot_w + 90, top + row_h * len(data) + 46

    def x(v):
        v = min(max(v, lo), hi)
        return label_w + plot_w * (math.log2(v) - math.log2(lo)) / (math.log2(hi) - math.log2(lo))

    esc = lambda s: str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2}" y="18" text-anchor="middle" font-size="14" font-weight="bold">{esc(title)}</text>',
           f'<text x="{width / 2}" y="36" text-anchor="middle" fill="#555">{esc(subtitle)}</text>']
    for v in (1 / 16, 1 / 8, 1 / 4, 1 / 2, 1, 2, 4, 8, 16):
        out.append(f'<line x1="{x(v):.1f}" y1="{top - 6}" x2="{x(v):.1f}" y2="{top + row_h * len(data)}" stroke="{"#333" if v == 1 else "#ddd"}" stroke-width="{1.5 if v == 1 else 1}"/>')
        lab = f"{v:g}" if v >= 1 else f"1/{round(1 / v)}"
        out.append(f'<text x="{x(v):.1f}" y="{top + row_h * len(data) + 16}" text-anchor="middle" fill="#555">{lab}</text>')
    for i, r in enumerate(data):
        y0 = top + i * row_h
        out.append(f'<text x="{label_w - 8}" y="{y0 + row_h / 2 + 4}" text-anchor="end">{esc(r["case"])}</text>')
        bars = [("#bbb", r.get("beforeOver"), "before")] if has_before else []
        bars.append(("#2a7" if r["over"] <= 1 else "#d54", r["over"], "after" if has_before else ""))
        h = (row_h - 6) / len(bars)
        for j, (color, v, name) in enumerate(bars):
            if v is None:
                continue
            yb = y0 + 3 + j * h
            x1, x2 = sorted((x(1), x(v)))
            out.append(f'<rect x="{x1:.1f}" y="{yb:.1f}" width="{max(x2 - x1, 1):.1f}" height="{h - 1:.1f}" fill="{color}"><title>{esc(r["case"])} {name}: {v:.2f}x</title></rect>')
            out.append(f'<text x="{max(x(v), x(1)) + 4:.1f}" y="{yb + h / 2 + 4:.1f}" fill="#333" font-size="10">{v:.2f}</text>')
    legend = "grey: before, colored: after; " if has_before else ""
    out.append(f'<text x="{label_w}" y="{height - 8}" fill="#555" font-size="11">{esc(legend)}green: segkit faster, red: slower. {esc(footer)}</text>')
    out.append("</svg>")
    open(path, "w").write("\n".join(out) + "\n")
    return True
