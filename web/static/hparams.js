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
