// The hyperparameters tab: brushing its parallel coordinates, and scatter
// plots drawn with uPlot.
//
// Dragging along an axis of the parallel coordinates (a brush) keeps the
// trials whose line crosses it in that range: the others fade in the plot
// and leave the trials table below; a click on the axis clears its brush.
// Lines carry their y on each axis (data-ys), so this needs no values.
(() => {
  const svg = document.querySelector("#parallel-coordinates svg.parallel");
  if (!svg) return;
  const brushes = new Map(); // axis index → [top, bottom] in SVG units
  const lines = [...svg.querySelectorAll("polyline[data-ys]")].map((p) => ({
    a: p.closest("a"), ys: p.dataset.ys.split(" ").map((v) => (v === "-" ? null : Number(v))),
  }));
  const rows = new Map([...document.querySelectorAll("#hparam-trials tr[data-trial]")].map((r) => [r.dataset.trial, r]));
  const count = document.getElementById("brush-count");
  const plotted = count ? count.textContent : "";
  const svgY = (e) => {
    const pt = svg.createSVGPoint();
    pt.x = e.clientX;
    pt.y = e.clientY;
    return pt.matrixTransform(svg.getScreenCTM().inverse()).y;
  };
  function apply() {
    let n = 0;
    for (const l of lines) {
      const inside = [...brushes].every(([k, [lo, hi]]) => l.ys[k] != null && l.ys[k] >= lo && l.ys[k] <= hi);
      l.a.classList.toggle("dim", !inside);
      const r = rows.get(l.a.dataset.trial);
      if (r) r.hidden = !inside;
      if (inside) n++;
    }
    svg.dataset.selected = String(n);
    if (count) count.textContent = brushes.size ? n + " of " + lines.length + " trials in the brushed ranges" : plotted;
  }
  svg.querySelectorAll("g.axis[data-axis]").forEach((g) => {
    const k = Number(g.dataset.axis), area = g.querySelector(".brush-area");
    let rect = null, from = null, moved = false;
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
      if (!rect) {
        rect = document.createElementNS("http://www.w3.org/2000/svg", "rect");
        rect.setAttribute("class", "brush");
        rect.setAttribute("x", area.getAttribute("x"));
        rect.setAttribute("width", area.getAttribute("width"));
        g.insertBefore(rect, area);
      }
      const lo = Math.min(y, from), hi = Math.max(y, from);
      rect.setAttribute("y", String(lo));
      rect.setAttribute("height", String(hi - lo));
      brushes.set(k, [lo, hi]);
      apply();
    });
    area.addEventListener("pointerup", () => {
      if (from != null && !moved && rect) {
        brushes.delete(k);
        rect.remove();
        rect = null;
        apply();
      }
      from = null;
    });
  });
})();

// Scatter plots of the hyperparameters tab, drawn with uPlot: one per
// hyperparameter ([data-scatter], JSON from the server), its values against
// each trial's best metric. Categorical values sit at their index, labelled
// on the axis; hyperparameters searched on a log scale get a log axis. Hovering shows a trial's values; a click opens the trial.
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
      ],
      cursor: { points: { size: 12 }, dataIdx: (u, s, i) => i },
      hooks: { setCursor: [(u) => { hovered = u.cursor.idx; u.over.style.cursor = hovered != null ? "pointer" : ""; }] },
      legend: { live: true },
    };
    const u = new uPlot(opts, [pts.map((p) => p[0]), pts.map((p) => p[1])], plot);
    u.over.addEventListener("click", () => { if (hovered != null) location.href = "/trials/" + ids[hovered]; });
    window.addEventListener("resize", () => u.setSize({ width: width(), height }));
  }

  if (window.uPlot) document.querySelectorAll("[data-scatter]").forEach(setup);
})();
