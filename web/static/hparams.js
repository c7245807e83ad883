// The hyperparameters tab: brushing its parallel coordinates, and scatter
// plots drawn with uPlot.
//
// Dragging along an axis of the parallel coordinates (a brush) keeps the
// trials whose line crosses it in that range: the others fade in the plot
// and in the scatter plots, and leave the trials table below; a click on
// the axis clears its brush. Lines carry their y on each axis (data-ys),
// so this needs no values. The brushes live in the URL's fragment
// (#brush=axis:top:bottom,...), so a reload or a shared link brushes the
// same; a link opens the brushed trials in the Trials tab (?brushed=ids).
(() => {
  const svg = document.querySelector("#parallel-coordinates svg.parallel");
  if (!svg) return;
  const brushes = new Map(); // axis index → [top, bottom] in SVG units
  const lines = [...svg.querySelectorAll("polyline[data-ys]")].map((p) => ({
    a: p.closest("a"), ys: p.dataset.ys.split(" ").map((v) => (v === "-" ? null : Number(v))),
  }));
  const rows = new Map([...document.querySelectorAll("#hparam-trials tr[data-trial]")].map((r) => [r.dataset.trial, r]));
  const count = document.getElementById("brush-count");
  const link = document.getElementById("brushed-link");
  const plotted = count ? count.textContent : "";
  const svgY = (e) => {
    const pt = svg.createSVGPoint();
    pt.x = e.clientX;
    pt.y = e.clientY;
    return pt.matrixTransform(svg.getScreenCTM().inverse()).y;
  };
  const rects = new Map(); // axis index → its brush's rect
  function drawBrush(k) {
    const g = svg.querySelector('g.axis[data-axis="' + k + '"]');
    let rect = rects.get(k);
    if (!brushes.has(k)) {
      if (rect) rect.remove();
      rects.delete(k);
      return;
    }
    if (!rect && g) {
      const area = g.querySelector(".brush-area");
      rect = document.createElementNS("http://www.w3.org/2000/svg", "rect");
      rect.setAttribute("class", "brush");
      rect.setAttribute("x", area.getAttribute("x"));
      rect.setAttribute("width", area.getAttribute("width"));
      g.insertBefore(rect, area);
      rects.set(k, rect);
    }
    if (!rect) return;
    const [lo, hi] = brushes.get(k);
    rect.setAttribute("y", String(lo));
    rect.setAttribute("height", String(hi - lo));
  }
  // save keeps the brushes in the fragment, and the trials inside them
  // (brushed=ids, which the tab links carry to the overview's charts and
  // the trials tab; see app.js), the rest of the URL as it is.
  let inside = null;
  function save() {
    const brush = brushes.size ? [...brushes].map(([k, [lo, hi]]) => k + ":" + lo.toFixed(1) + ":" + hi.toFixed(1)).join(",") : null;
    if (window.brushedTrials) window.brushedTrials.set(brushes.size ? inside : null, brush);
  }
  function apply() {
    let n = 0;
    inside = new Set();
    for (const l of lines) {
      const ok = [...brushes].every(([k, [lo, hi]]) => l.ys[k] != null && l.ys[k] >= lo && l.ys[k] <= hi);
      l.a.classList.toggle("dim", !ok);
      const r = rows.get(l.a.dataset.trial);
      if (r) r.hidden = !ok;
      if (ok) {
        n++;
        inside.add(Number(l.a.dataset.trial));
      }
    }
    svg.dataset.selected = String(n);
    if (count) count.textContent = brushes.size ? n + " of " + lines.length + " trials in the brushed ranges" : plotted;
    const on = brushes.size ? inside : null;
    if (link) {
      link.hidden = !on || !n;
      const a = link.querySelector("a");
      const q = new URLSearchParams({ brushed: [...inside].sort((x, y) => x - y).join(","), tab: "trials" });
      a.href = on ? a.dataset.base.split("?")[0] + "?" + q : a.dataset.base;
      a.textContent = "Show the " + n + " brushed trials in the Trials tab";
    }
    document.dispatchEvent(new CustomEvent("hparams:brushed", { detail: on }));
  }
  svg.querySelectorAll("g.axis[data-axis]").forEach((g) => {
    const k = Number(g.dataset.axis), area = g.querySelector(".brush-area");
    let from = null, moved = false;
    area.addEventListener("pointerdown", (e) => {
      e.preventDefault();
      area.setPointerCapture(e.pointerId);
      from = svgY(e);
      moved = false;
    });
    area.addEventListener("pointermove", (e) => {
      if (from == null) return;
      const y = svgY(e);
      if (!moved && Math.abs(y - from) < 3) return;
      moved = true;
      brushes.set(k, [Math.min(y, from), Math.max(y, from)]);
      drawBrush(k);
      apply();
    });
    area.addEventListener("pointerup", () => {
      if (from != null && !moved && brushes.has(k)) {
        brushes.delete(k);
        drawBrush(k);
        apply();
      }
      if (from != null) save();
      from = null;
    });
  });
  // The brushes of the URL, once the scatter plots (below) listen.
  const axes = svg.querySelectorAll("g.axis[data-axis]").length;
  for (const b of (new URLSearchParams(location.hash.slice(1)).get("brush") || "").split(",")) {
    const [k, lo, hi] = b.split(":").map(Number);
    if (Number.isInteger(k) && k >= 0 && k < axes && Number.isFinite(lo) && Number.isFinite(hi)) {
      brushes.set(k, [Math.min(lo, hi), Math.max(lo, hi)]);
      drawBrush(k);
    }
  }
  if (brushes.size) setTimeout(() => { apply(); save(); });
  // Brushes cleared elsewhere (the overview's clear, the trials tab's).
  document.addEventListener("brushed:changed", (e) => {
    if (e.detail || !brushes.size) return;
    const ks = [...brushes.keys()];
    brushes.clear();
    ks.forEach(drawBrush);
    apply();
  });
})();

(() => {
  const height = 240;

  function setup(el) {
    const d = JSON.parse(el.dataset.scatter);
    const plot = el.querySelector(".chart-plot");
    const pts = d.points.slice().sort((a, b) => a[0] - b[0]);
    const ids = pts.map((p) => p[2]);
    const cats = d.categories;
    const width = () => Math.max(240, plot.clientWidth);
    let hovered = null;
    const opts = {
      width: width(), height,
      scales: { x: { time: false, distr: d.log ? 3 : 1, range: cats ? [-0.5, cats.length - 0.5] : undefined } },
      axes: [
        { label: d.name, values: cats ? (u, splits) => splits.map((v) => (Number.isInteger(v) && cats[v] !== undefined ? cats[v] : "")) : undefined, incrs: cats ? [1] : undefined },
        { label: d.metric, size: 64 },
      ],
      series: [
        { label: d.name, value: (u, v) => (v == null ? "–" : cats ? cats[v] : String(+v.toPrecision(6))) },
        { label: d.metric, stroke: "#2b6cb0", fill: "#2b6cb055", paths: () => null, points: { show: true, size: 8, width: 1 } },
        { label: "not brushed", stroke: "#94a3b855", fill: "#94a3b822", paths: () => null, points: { show: true, size: 6, width: 1 } },
      ],
      cursor: { points: { size: 12 }, dataIdx: (u, s, i) => i },
      hooks: { setCursor: [(u) => { hovered = u.cursor.idx; u.over.style.cursor = hovered != null ? "pointer" : ""; }] },
      legend: { live: true },
    };
    const xs = pts.map((p) => p[0]);
    const data = (on) => [xs, pts.map((p) => (!on || on.has(p[2]) ? p[1] : null)), pts.map((p) => (on && !on.has(p[2]) ? p[1] : null))];
    const u = new uPlot(opts, data(null), plot);
    // Brushing the parallel coordinates: the trials outside fade to grey.
    document.addEventListener("hparams:brushed", (e) => {
      u.setData(data(e.detail), false);
      el.dataset.brushed = e.detail ? String(pts.filter((p) => e.detail.has(p[2])).length) : "";
    });
    u.over.addEventListener("click", () => { if (hovered != null) location.href = "/trials/" + ids[hovered]; });
    window.addEventListener("resize", () => u.setSize({ width: width(), height }));
  }

  if (window.uPlot) document.querySelectorAll("[data-scatter]").forEach(setup);
})();
