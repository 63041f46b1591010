// Charts for the scaling report: SVG drawn from the page's embedded data, no library, works offline.
// spec: {id, title, x: {label, log, ticks?: [[value, text]]}, y: {label, log}, series: [{name, kind:
// "points" | "line" | "bars", color, dashed, model, labels, points: [{x, y, lo, hi, label}]}]}
(function () {
  const NS = "http://www.w3.org/2000/svg";
  const W = 640, H = 380, M = {l: 78, r: 16, t: 34, b: 64};
  function el(name, attrs, parent, text) {
    const e = document.createElementNS(NS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function fmt(v) {
    const a = Math.abs(v);
    if (a === 0) return "0";
    if (a >= 1e6) return (v / 1e6).toPrecision(3) + "M";
    if (a >= 1e3) return (v / 1e3).toPrecision(3) + "k";
    if (a >= 1) return v.toPrecision(3);
    return v.toPrecision(2);
  }
  function scale(axis, lo, hi, a, b) {
    if (axis.log) {
      const l0 = Math.log10(lo), l1 = Math.log10(hi);
      return v => a + (Math.log10(v) - l0) / (l1 - l0 || 1) * (b - a);
    }
    return v => a + (v - lo) / (hi - lo || 1) * (b - a);
  }
  function ticks(axis, lo, hi) {
    if (axis.ticks) return axis.ticks;
    const out = [];
    if (axis.log) {
      for (let p = Math.floor(Math.log10(lo)); p <= Math.ceil(Math.log10(hi)); p++)
        for (const m of [1, 2, 5]) { const v = m * Math.pow(10, p); if (v >= lo && v <= hi) out.push([v, fmt(v)]); }
      return out;
    }
    const step = Math.pow(10, Math.floor(Math.log10((hi - lo) / 5 || 1)));
    const nice = [1, 2, 5, 10].map(m => m * step).find(s => (hi - lo) / s <= 6) || step * 10;
    for (let v = Math.ceil(lo / nice) * nice; v <= hi + 1e-9; v += nice) out.push([v, fmt(v)]);
    return out;
  }
  function draw(spec) {
    const host = document.getElementById(spec.id);
    const svg = el("svg", {viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img", "aria-label": spec.title}, host);
    el("text", {x: W / 2, y: 20, "text-anchor": "middle", class: "title"}, svg, spec.title);
    // null is a figure that does not exist (Number.isFinite(null) is false; isFinite(null) is true)
    const drawable = p => Number.isFinite(p.x) && Number.isFinite(p.y) && !(spec.y.log && p.y <= 0) && !(spec.x.log && p.x <= 0);
    const all = spec.series.flatMap(s => s.points).filter(drawable);
    if (!all.length) { el("text", {x: W / 2, y: H / 2, "text-anchor": "middle", class: "empty"}, svg, "no data"); return; }
    const xs = all.map(p => p.x), ys = all.flatMap(p => [p.y].concat([p.lo, p.hi].filter(v => Number.isFinite(v) && !(spec.y.log && v <= 0))));
    let [x0, x1] = [Math.min(...xs), Math.max(...xs)], [y0, y1] = [Math.min(...ys), Math.max(...ys)];
    if (spec.x.log) { x0 /= 1.4; x1 *= 1.4; } else { const pad = (x1 - x0) * 0.08 || 0.5; x0 -= pad; x1 += pad; }
    if (spec.y.log) { y0 /= 1.5; y1 *= 1.5; } else { y0 = Math.min(0, y0); y1 = y1 * 1.12 || 1; }
    const sx = scale(spec.x, x0, x1, M.l, W - M.r), sy = scale(spec.y, y0, y1, H - M.b, M.t);
    const grid = el("g", {class: "grid"}, svg);
    for (const [v, t] of ticks(spec.x, x0, x1)) {
      el("line", {x1: sx(v), x2: sx(v), y1: M.t, y2: H - M.b}, grid);
      el("text", {x: sx(v), y: H - M.b + 16, "text-anchor": "middle"}, grid, t);
    }
    for (const [v, t] of ticks(spec.y, y0, y1)) {
      el("line", {x1: M.l, x2: W - M.r, y1: sy(v), y2: sy(v)}, grid);
      el("text", {x: M.l - 6, y: sy(v) + 4, "text-anchor": "end"}, grid, t);
    }
    el("text", {x: (M.l + W - M.r) / 2, y: H - 24, "text-anchor": "middle", class: "axis"}, svg, spec.x.label);
    el("text", {x: 16, y: (M.t + H - M.b) / 2, "text-anchor": "middle", class: "axis",
                transform: `rotate(-90 16 ${(M.t + H - M.b) / 2})`}, svg, spec.y.label);
    spec.series.forEach((s, i) => {
      const g = el("g", {class: "series " + s.kind + (s.model ? " model" : ""), "data-name": s.name}, svg);
      const pts = s.points.filter(drawable);
      if (s.kind === "band") {
        // the model's band: the area between each point's lo and hi, no marks of its own
        const edge = pts.filter(p => Number.isFinite(p.lo) && Number.isFinite(p.hi));
        const d = edge.map((p, j) => (j ? "L" : "M") + sx(p.x) + " " + sy(p.hi)).join(" ") + " "
          + edge.slice().reverse().map(p => "L" + sx(p.x) + " " + sy(p.lo)).join(" ") + " Z";
        if (edge.length > 1) el("path", {d: d, fill: s.color, "fill-opacity": 0.18, stroke: "none", class: "band-area"}, g);
      }
      if (s.kind === "line") {
        el("path", {d: pts.map((p, j) => (j ? "L" : "M") + sx(p.x) + " " + sy(p.y)).join(" "), fill: "none",
                    stroke: s.color, "stroke-width": 2, "stroke-dasharray": s.dashed ? "7 5" : ""}, g);
      }
      for (const p of (s.kind === "band" ? [] : pts)) {
        const tip = `${s.name}: ${p.label ? p.label + ", " : ""}${spec.x.label} ${fmt(p.x)}, ${spec.y.label} ${fmt(p.y)}`
          + (Number.isFinite(p.lo) && Number.isFinite(p.hi) ? ` (runs ${fmt(p.lo)} to ${fmt(p.hi)})` : "");
        let mark;
        if (s.kind === "bars") {
          const w = (W - M.l - M.r) / (pts.length * 2.5), base = sy(spec.y.log ? y0 : Math.max(y0, 0));
          mark = el("rect", {x: sx(p.x) - w / 2, y: Math.min(sy(p.y), base), width: w, height: Math.abs(base - sy(p.y)),
                             fill: s.color, class: "point"}, g);
        } else {
          if (Number.isFinite(p.lo) && Number.isFinite(p.hi) && p.hi > p.lo)
            el("line", {x1: sx(p.x), x2: sx(p.x), y1: sy(p.lo), y2: sy(p.hi), stroke: s.color, "stroke-width": 2}, g);
          mark = el("circle", {cx: sx(p.x), cy: sy(p.y), r: s.model && !s.heldout ? 3.5 : 5.5,
                               fill: s.model && !s.heldout ? "#fff" : s.color, stroke: s.color, "stroke-width": 2,
                               class: s.heldout ? "point heldout" : "point"}, g);
          if (p.label && s.labels) el("text", {x: sx(p.x) + 8, y: sy(p.y) - 8, class: "label"}, g, p.label);
        }
        el("title", {}, mark, tip);
        mark.addEventListener("mouseenter", () => { readout.textContent = tip; });
      }
      // legend top right, where the curves of this report rarely are
      const ly = M.t + 6 + i * 16, lx = W - M.r - 250;
      el("rect", {x: lx, y: ly - 8, width: 12, height: 4 + (s.kind === "bars" ? 6 : 0), fill: s.color}, svg);
      el("text", {x: lx + 18, y: ly, class: "legend"}, svg, s.name + (s.model ? " (model)" : ""));
    });
    const readout = el("text", {x: M.l, y: H - 6, class: "readout"}, svg, "hover a point for its figures");
  }
  window.addEventListener("DOMContentLoaded", () => {
    const data = JSON.parse(document.getElementById("lab-data").textContent);
    data.charts.forEach(draw);
    document.body.setAttribute("data-charts-drawn", String(data.charts.length));
  });
})();
