// Metric charts drawn with uPlot from the JSON API: one component, a grid
// of panels ([data-chart] elements), one panel per metric, each with its
// own y axis, its own log scale and smoothing, a tooltip at the cursor
// with every line's value there at full precision (sorted by value, the
// hovered line highlighted), and one legend for the grid that collapses
// and filters when there are many lines. The x axis is batches, epochs
// (when the reports carry "epochs" or "epoch") or wall time.
//
// - [data-chart=experiment]: a panel per metric the experiment's trials
//   reported (its <template data-metrics> options, and those a live
//   region's refresh brings in #experiment-chart-options), a line per
//   trial; with data-experiments (the compare page) several experiments'
//   trials, coloured by experiment, with data-trials only those trials. A
//   panel fetches its metric when it first scrolls into view.
// - [data-chart=trial]: a panel per metric name of one trial's groups
//   (data-groups), a line per group (training and validation loss share a
//   panel).
// - [data-chart=system]: a panel per system metric group of a trial, over
//   wall time, a line per metric.
//
// Each asks for about as many points as a panel is wide (the server
// downsamples) and, told its trial or experiment reported (its data-live
// topic, see app.js) while it sits inside a live region (an [hx-get]
// ancestor), fetches only the points past its last (after_step) and
// appends them. Dragging across a panel zooms into those batches and
// fetches them in detail; a double-click zooms back out. The elements
// carry hx-preserve, so the live region's polls keep them.
(() => {
  const palette = ["#2b6cb0", "#b42318", "#1e7a46", "#9a6700", "#6b46c1", "#0e7490", "#be185d", "#4d7c0f", "#475569", "#c2410c",
    "#1d4ed8", "#991b1b", "#15803d", "#a16207", "#7e22ce", "#0f766e", "#9d174d", "#3f6212", "#334155", "#9a3412"];
  const collapseAt = 8; // more lines than this and the legend folds
  const tipRows = 20; // the most lines a tooltip lists
  const height = () => (window.innerWidth < 600 ? 240 : 320);
  const xlabels = { batches: "Batches", epochs: "Epochs", time: "Time" };
  const mk = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  };

  // tickLabels writes each split with the fewest significant digits that
  // name it exactly, so that close ticks (0.0100, 0.0102) read apart.
  function tickLabels(splits) {
    const vs = splits.filter((v) => v != null);
    let gap = Infinity;
    for (let i = 1; i < vs.length; i++) gap = Math.min(gap, Math.abs(vs[i] - vs[i - 1]));
    if (!Number.isFinite(gap) || gap === 0) gap = Math.abs(vs[0] || 1);
    const short = (v) => {
      const a = Math.abs(v);
      return a !== 0 && (a >= 1e6 || a < 1e-4) ? v.toExponential().replace("e+", "e") : String(v);
    };
    for (let p = 1; p <= 15; p++) {
      const ls = splits.map((v) => (v == null ? null : +v.toPrecision(p)));
      if (ls.every((l, i) => l == null || Math.abs(l - splits[i]) <= gap * 1e-6)) return ls.map((l) => (l == null ? "" : short(l)));
    }
    return splits.map((v) => (v == null ? "" : short(v)));
  }

  // linSplits are about n round ticks between min and max.
  function linSplits(min, max, n) {
    const raw = (max - min || Math.abs(max) || 1) / n;
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw);
    const out = [];
    for (let v = Math.ceil(min / step) * step; v <= max + step * 1e-9; v += step) out.push(+v.toPrecision(12));
    return out;
  }
  // logSplits are powers of ten (and 2 and 5 times them over few
  // decades); a range within a decade or so gets round linear ticks.
  function logSplits(min, max, n) {
    if (!(min > 0) || max / min < 20) return linSplits(min, max, n);
    const decades = Math.log10(max / min), out = [];
    const ms = decades <= 3 ? [1, 2, 5] : [1];
    for (let e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e++) {
      for (const m of ms) {
        const v = +(m * Math.pow(10, e)).toPrecision(12);
        if (v >= min * (1 - 1e-9) && v <= max * (1 + 1e-9)) out.push(v);
      }
    }
    const every = Math.ceil(out.length / Math.max(2, n));
    return out.filter((_, i) => i % every === 0);
  }
  // yRange pads the data's range a little, and never flattens one value.
  function yRange(log) {
    return (u, min, max) => {
      if (min == null || max == null) return [0, 1];
      if (log) {
        const r = max > min ? Math.pow(max / min, 0.05) : 1.1;
        return [min / r, max * r];
      }
      const pad = max > min ? (max - min) * 0.05 : Math.abs(min) * 0.1 || 1;
      return [min - pad, max + pad];
    };
  }

  // smooth is each column as a debiased exponential moving average
  // (TensorBoard's smoothing) over its points, gaps left as gaps.
  function smooth(col, w) {
    if (!w) return col;
    let last = 0, n = 0;
    return col.map((v) => {
      if (v == null || !Number.isFinite(v)) return v;
      last = last * w + (1 - w) * v;
      n++;
      return last / (1 - Math.pow(w, n));
    });
  }

  // A Panel is one metric's chart: its series (a key, label, colour,
  // link and points {s: batches, t: seconds, e: epochs, v: value}), drawn
  // against the grid's x axis.
  class Panel {
    constructor(grid, key, title, id) {
      this.grid = grid;
      this.key = key;
      this.series = new Map();
      this.u = null;
      this.shape = "";
      this.focused = null;
      this.fig = mk("figure", "panel chart");
      this.fig.id = id;
      this.fig.dataset.metric = key;
      const cap = mk("figcaption");
      this.fig.append(cap);
      cap.append(mk("strong", "chart-title", title));
      const sm = mk("label", "smoothing", "Smoothing ");
      this.smooth = mk("select");
      this.smooth.dataset.smooth = "";
      for (const w of ["0", "0.6", "0.8", "0.9", "0.95", "0.99"]) this.smooth.append(new Option(w === "0" ? "none" : w, w));
      sm.append(this.smooth);
      const lg = mk("label", "log-toggle");
      this.log = mk("input");
      this.log.type = "checkbox";
      this.log.dataset.log = "";
      lg.append(this.log, " Log");
      cap.append(sm, lg);
      this.plot = mk("div", "chart-plot");
      this.empty = mk("p", "muted chart-empty", "No points yet.");
      this.fig.append(this.plot, this.empty);
      this.smooth.addEventListener("change", () => this.draw());
      this.log.addEventListener("change", () => { this.shape = ""; this.draw(); });
    }

    width() { return Math.max(240, this.plot.clientWidth || this.grid.el.clientWidth || 240); }

    // columns aligns the series on the union of their x values (rounded
    // to about two per pixel where there are far more).
    columns() {
      const mode = this.grid.xmode;
      const xOf = mode === "epochs" ? (p) => p.e : mode === "time" ? (p) => p.t : (p) => p.s;
      const ss = [...this.series.values()];
      let xs = [...new Set(ss.flatMap((s) => s.pts.map(xOf)).filter((x) => x != null))].sort((a, b) => a - b);
      let round = (x) => x;
      if (xs.length > 4 * this.width()) {
        const q = (xs[xs.length - 1] - xs[0]) / (2 * this.width());
        round = (x) => xs[0] + Math.round((x - xs[0]) / q) * q;
        xs = [...new Set(xs.map(round))];
      }
      const at = new Map(xs.map((x, i) => [x, i]));
      const data = [xs];
      for (const s of ss) {
        const col = new Array(xs.length).fill(null);
        for (const p of s.pts) if (xOf(p) != null && p.v != null) col[at.get(round(xOf(p)))] = p.v;
        data.push(col);
      }
      return { ss, data };
    }

    // shown is what uPlot draws: smoothed, and without what a log scale
    // cannot show.
    shown() {
      const w = Number(this.smooth.value), log = this.log.checked;
      return this.cols.data.map((c, i) => (i === 0 ? c : smooth(c, w).map((v) => (log && !(v > 0) ? null : v))));
    }

    draw() {
      this.cols = this.columns();
      const { ss, data } = this.cols;
      this.empty.hidden = data[0].length > 0;
      this.fig.dataset.points = String(data.slice(1).reduce((n, c) => n + c.filter((v) => v != null).length, 0));
      const next = ss.map((s) => s.key).join(" ") + this.log.checked + this.grid.xmode;
      if (this.u && next === this.shape) {
        const xs = this.u.data[0], x = this.u.scales.x;
        this.u.setData(this.shown(), !(x.min > xs[0] || x.max < xs[xs.length - 1]));
        this.showSeries();
        return;
      }
      if (this.u) this.u.destroy();
      this.u = null;
      this.shape = next;
      if (!data[0].length) return;
      this.u = new uPlot(this.options(), this.shown(), this.plot);
      this.tip = mk("div", "chart-tip");
      this.tip.hidden = true;
      this.u.over.append(this.tip);
      this.u.over.addEventListener("mouseleave", () => { this.tip.hidden = true; });
      this.u.over.addEventListener("dblclick", () => this.grid.unzoom());
      this.u.over.addEventListener("click", () => {
        const s = this.focused && this.cols.ss[this.focused - 1];
        if (s && s.href) location.href = s.href;
      });
    }

    showSeries() {
      this.cols.ss.forEach((s, i) => {
        const on = this.grid.visible(s.key);
        if (this.u.series[i + 1].show !== on) this.u.setSeries(i + 1, { show: on });
      });
    }

    options() {
      const log = this.log.checked, mode = this.grid.xmode, fig = this.fig;
      const size = (u, vals) => (vals ? Math.max(40, 16 + 7 * Math.max(...vals.map((v) => String(v).length))) : 40);
      return {
        width: this.width(), height: height(),
        legend: { show: false },
        cursor: { focus: { prox: 30 }, drag: { x: true, y: false } },
        focus: { alpha: 0.25 },
        scales: { x: { time: mode === "time" }, y: { distr: log ? 3 : 1, range: yRange(log) } },
        axes: [
          mode === "time" ? { label: xlabels[mode] } : { label: xlabels[mode], values: (u, sp) => tickLabels(sp) },
          {
            size,
            splits: (u, ai, min, max) => (log ? logSplits : linSplits)(min, max, Math.max(3, Math.round(height() / 60))),
            values: (u, sp) => {
              const l = tickLabels(sp);
              fig.dataset.yTicks = l.join(" ");
              return l;
            },
          },
        ],
        series: [{ label: xlabels[mode] }].concat(this.cols.ss.map((s) => ({
          label: s.label, stroke: s.color, width: 1.5, spanGaps: true, points: { size: 4 }, show: this.grid.visible(s.key),
        }))),
        hooks: {
          setCursor: [(u) => this.showTip(u)],
          setSeries: [(u, i, o) => {
            if (o && "focus" in o) {
              this.focused = i;
              u.over.style.cursor = i && this.cols.ss[i - 1] && this.cols.ss[i - 1].href ? "pointer" : "";
              this.showTip(u);
            }
          }],
          setSelect: [(u) => {
            if (u.select.width < 2 || mode !== "batches") return;
            this.grid.zoomTo(u.posToVal(u.select.left, "x"), u.posToVal(u.select.left + u.select.width, "x"));
          }],
        },
      };
    }

    // showTip lists every shown line's value at the cursor, as reported
    // (and smoothed, when smoothing), largest first; with many lines, the
    // ones nearest the cursor.
    showTip(u) {
      const i = u.cursor.idx, tip = this.tip;
      if (!tip) return;
      if (i == null || u.cursor.left == null || u.cursor.left < 0) {
        tip.hidden = true;
        return;
      }
      const sm = Number(this.smooth.value) ? u.data : null;
      let rows = [];
      this.cols.ss.forEach((s, k) => {
        const v = this.cols.data[k + 1][i];
        if (v != null && u.series[k + 1].show) rows.push({ s, v, k: k + 1, m: sm && sm[k + 1][i] });
      });
      if (!rows.length) {
        tip.hidden = true;
        return;
      }
      const more = rows.length - tipRows;
      if (more > 0) {
        const y = u.posToVal(u.cursor.top, "y");
        rows = rows.sort((a, b) => Math.abs(a.v - y) - Math.abs(b.v - y)).slice(0, tipRows);
      }
      rows.sort((a, b) => b.v - a.v);
      const x = this.cols.data[0][i], mode = this.grid.xmode;
      const head = mk("div", "tip-head", mode === "time" ? new Date(x * 1000).toLocaleString() : xlabels[mode] + " " + x);
      tip.replaceChildren(head);
      for (const r of rows) {
        const row = mk("div", "tip-row" + (r.k === this.focused ? " on" : ""));
        const sw = mk("i");
        sw.style.background = r.s.color;
        row.append(sw, mk("span", "tip-label", r.s.label), mk("b", "tip-value", String(r.v)));
        if (r.m != null) row.append(mk("span", "muted", " ~" + String(+r.m.toPrecision(6))));
        tip.append(row);
      }
      if (more > 0) tip.append(mk("div", "muted", "+" + more + " more"));
      tip.hidden = false;
      const w = tip.offsetWidth, h = tip.offsetHeight, ow = u.over.clientWidth, oh = u.over.clientHeight;
      let left = u.cursor.left + 14, top = u.cursor.top + 14;
      if (left + w > ow) left = Math.max(0, u.cursor.left - w - 14);
      if (top + h > oh) top = Math.max(0, oh - h);
      tip.style.left = left + "px";
      tip.style.top = top + "px";
    }

    resize() { if (this.u) this.u.setSize({ width: this.width(), height: height() }); }
  }

  // A Grid is the panels of one [data-chart] element, their shared x axis
  // and legend, and what loads them (src, see the sources below).
  class Grid {
    constructor(el, src) {
      this.el = el;
      this.src = src;
      this.panels = new Map();
      this.xmode = src.xmodes[0];
      this.zoom = null;
      this.hidden = new Set();
      this.filter = "";
      this.bar = mk("div", "chart-bar");
      this.xsel = mk("select");
      this.xsel.dataset.xaxis = "";
      this.xsel.setAttribute("aria-label", "X axis");
      const xl = mk("label", "chart-x", "X axis ");
      xl.append(this.xsel);
      this.legend = mk("div", "chart-legend");
      this.bar.append(xl, this.legend);
      if (src.xmodes.length < 2) xl.hidden = true;
      this.body = mk("div", "charts chart-grid");
      el.append(this.bar, this.body);
      this.empty = el.querySelector(".chart-empty");
      this.xsel.addEventListener("change", () => {
        this.xmode = this.xsel.value;
        this.panels.forEach((p) => p.draw());
      });
      this.seen = new IntersectionObserver((es) => es.forEach((e) => e.isIntersecting && this.visibleNow(e.target)), { rootMargin: "200px" });
      this.xmodes();
    }

    xmodes() {
      const have = this.src.xmodes.concat(this.anyEpochs() ? ["epochs"] : []);
      if ([...this.xsel.options].map((o) => o.value).join() === have.join()) return;
      this.xsel.replaceChildren(...have.map((m) => new Option(xlabels[m], m, false, m === this.xmode)));
    }
    anyEpochs() {
      for (const p of this.panels.values()) for (const s of p.series.values()) if (s.pts.some((q) => q.e != null)) return true;
      return false;
    }

    visible(key) {
      return !this.hidden.has(key) && (!this.filter || this.labels.get(key).toLowerCase().includes(this.filter));
    }

    // panel is the panel of key, made (in order) when first needed.
    panel(key, title, id) {
      let p = this.panels.get(key);
      if (!p) {
        p = new Panel(this, key, title, id);
        this.panels.set(key, p);
        this.body.append(p.fig);
        if (this.empty) this.empty.hidden = true;
      }
      return p;
    }

    visibleNow(fig) {
      this.seen.unobserve(fig);
      const p = [...this.panels.values()].find((q) => q.fig === fig);
      if (p && this.src.loadPanel) this.src.loadPanel(this, p);
    }

    // redraw draws the panels and the legend after a fetch.
    redraw(panels) {
      (panels || this.panels).forEach((p) => p.draw());
      this.xmodes();
      this.drawLegend();
    }

    // drawLegend lists every line once: inline when few, folded with a
    // filter when many. A click hides or shows a line in every panel.
    drawLegend() {
      const all = new Map();
      for (const p of this.panels.values()) for (const s of p.series.values()) if (!all.has(s.key)) all.set(s.key, s);
      this.labels = new Map([...all].map(([k, s]) => [k, s.label]));
      const have = [...all.keys()].join(" ");
      if (have === this.legendKeys) return;
      this.legendKeys = have;
      const list = mk("ul", "legend-items");
      for (const s of all.values()) {
        const li = mk("li");
        li.dataset.key = s.key;
        const b = mk("button", "legend-toggle");
        b.type = "button";
        b.title = "Show or hide";
        b.setAttribute("aria-pressed", String(!this.hidden.has(s.key)));
        const sw = mk("i");
        sw.style.background = s.color;
        b.append(sw);
        b.addEventListener("click", () => {
          if (this.hidden.has(s.key)) this.hidden.delete(s.key);
          else this.hidden.add(s.key);
          b.setAttribute("aria-pressed", String(!this.hidden.has(s.key)));
          this.panels.forEach((p) => p.u && p.showSeries());
        });
        const label = s.href ? mk("a", null, s.label) : mk("span", null, s.label);
        if (s.href) label.href = s.href;
        li.append(b, label);
        list.append(li);
      }
      if (all.size <= collapseAt) {
        this.legend.replaceChildren(list);
        return;
      }
      const d = mk("details", "legend-fold");
      const open = this.legend.querySelector("details[open]");
      d.open = !!open;
      const sum = mk("summary", null, all.size + " " + this.src.noun + " · filter");
      const f = mk("input");
      f.type = "search";
      f.placeholder = "Filter " + this.src.noun;
      f.setAttribute("aria-label", "Filter " + this.src.noun);
      f.value = this.filter;
      f.addEventListener("input", () => {
        this.filter = f.value.trim().toLowerCase();
        list.querySelectorAll("li").forEach((li) => { li.hidden = !this.labels.get(li.dataset.key).toLowerCase().includes(this.filter); });
        this.panels.forEach((p) => p.u && p.showSeries());
      });
      d.append(sum, f, list);
      this.legend.replaceChildren(d);
      if (this.filter) f.dispatchEvent(new Event("input"));
    }

    zoomTo(min, max) {
      this.zoom = { min: Math.floor(min), max: Math.ceil(max) };
      this.el.dataset.zoom = this.zoom.min + "-" + this.zoom.max;
      this.src.load(this);
    }
    unzoom() {
      if (!this.zoom) return;
      this.zoom = null;
      delete this.el.dataset.zoom;
      this.panels.forEach((p) => { p.shape = ""; });
      this.src.load(this);
    }

    // query is a series request's parameters.
    query(extra) {
      const q = new URLSearchParams({ max_points: String(this.body.clientWidth ? Math.max(240, Math.round(this.body.clientWidth / 2)) : 600) });
      if (this.zoom) {
        q.set("min_batches", String(this.zoom.min));
        q.set("max_batches", String(this.zoom.max));
      }
      for (const [k, v] of Object.entries(extra)) if (v != null && v !== "") q.set(k, String(v));
      return "?" + q;
    }

    // live calls fn when the grid's topic reports while it sits in a live
    // region, one at a time (coalescing what comes meanwhile), and reloads
    // every 30 s there.
    live(fn) {
      let busy = false, again = false;
      const run = async () => {
        if (busy) { again = true; return; }
        busy = true;
        try { await fn(); } finally {
          busy = false;
          if (again) { again = false; run(); }
        }
      };
      if (this.el.dataset.live) document.body.addEventListener("live:" + this.el.dataset.live, () => {
        if (this.el.isConnected && this.el.closest("[hx-get]")) run();
      });
      setInterval(() => { if (this.el.isConnected && this.el.closest("[hx-get]")) this.src.load(this); }, 30000);
      // The final data, once the region stops being polled.
      let was = !!this.el.closest("[hx-get]");
      document.addEventListener("htmx:afterSettle", () => {
        const now = !!this.el.closest("[hx-get]");
        if (was && !now) this.src.load(this);
        was = now;
        if (this.src.added) this.src.added(this);
      });
    }
  }

  const json = async (url) => {
    const r = await fetch(url, { headers: { Accept: "application/json" } });
    return r.ok ? r.json() : null;
  };
  const point = (s, v, time, e) => ({ s, v, t: time ? Date.parse(time) / 1000 : null, e: typeof e === "number" ? e : null });
  const lastStep = (s) => (s.pts.length ? s.pts[s.pts.length - 1].s : -1);
  const slug = (s) => s.replace(/[^A-Za-z0-9_-]+/g, "_");

  // experiment charts a panel per metric, a line per trial, each panel
  // fetched when it first shows and appended to when the experiment
  // reports.
  function experiment(el) {
    const exps = (el.dataset.experiments || "").split(" ").filter(Boolean);
    const only = el.dataset.trials ? el.dataset.trials.split(" ").map(Number) : null;
    const multi = exps.length > 1;
    const src = { xmodes: ["batches", "time"], noun: multi ? "lines" : "trials" };
    const metrics = new Map(); // key → {group, name}
    const addMetrics = (grid, root) => {
      if (!root) return;
      const opts = [...root.querySelectorAll("option")];
      const names = opts.map((o) => o.dataset.metric);
      for (const o of opts) {
        const key = o.dataset.group + "/" + o.dataset.metric;
        if (metrics.has(key)) continue;
        metrics.set(key, { group: o.dataset.group, name: o.dataset.metric });
        const twice = names.filter((n) => n === o.dataset.metric).length > 1;
        const p = grid.panel(key, o.dataset.metric + (twice ? " (" + o.dataset.group + ")" : ""), "chart-" + slug(o.dataset.group + "-" + o.dataset.metric));
        p.fig.dataset.group = o.dataset.group;
        grid.seen.observe(p.fig);
      }
    };
    const fetchPanel = async (grid, p, after) => {
      const m = metrics.get(p.key);
      const q = grid.query({ group: m.group, metric: m.name, after_step: after });
      const urls = multi ? exps.map((id) => "/api/v1/experiments/" + id + "/metrics" + q) : [el.dataset.url + q];
      const bodies = await Promise.all(urls.map(json));
      return bodies.flatMap((b, x) => (b ? b.trials : []).filter((t) => !only || only.includes(t.trialId)).map((t, i) => ({
        key: (multi ? exps[x] + ":" : "") + t.trialId,
        label: (multi ? "exp " + exps[x] + " / trial " : "Trial ") + t.trialId,
        color: palette[(multi ? x : i) % palette.length],
        href: (el.dataset.trialUrl || "/trials/") + t.trialId,
        pts: t.points.map((q) => point(q.stepsCompleted, q.value, q.reportTime, q.epoch)),
      })));
    };
    src.loadPanel = async (grid, p) => {
      p.loaded = true;
      const got = await fetchPanel(grid, p);
      p.series = new Map(got.map((s) => [s.key, s]));
      grid.redraw([p]);
    };
    src.load = (grid) => Promise.all([...grid.panels.values()].filter((p) => p.loaded).map((p) => src.loadPanel(grid, p)));
    src.append = async (grid) => {
      for (const p of grid.panels.values()) {
        if (!p.loaded) continue;
        if (grid.zoom) { await src.loadPanel(grid, p); continue; }
        const have = [...p.series.values()];
        const after = have.length ? Math.min(...have.map(lastStep)) : -1;
        const got = await fetchPanel(grid, p, after);
        if (got.some((s) => !p.series.has(s.key)) || have.some((s) => s.pts.length > 2 * p.width())) {
          await src.loadPanel(grid, p);
          continue;
        }
        for (const s of got) {
          const h = p.series.get(s.key), last = lastStep(h);
          h.pts.push(...s.pts.filter((q) => q.s > last));
        }
        grid.redraw([p]);
      }
    };
    src.added = (grid) => addMetrics(grid, document.getElementById("experiment-chart-options")?.content);
    src.start = (grid) => {
      addMetrics(grid, el.querySelector("template[data-metrics]")?.content);
      src.added(grid);
      grid.live(() => src.append(grid));
    };
    return src;
  }

  // trial charts a panel per metric name of a trial's groups, a line per
  // group; one fetch per group gives every panel its points.
  function trial(el) {
    const groups = el.dataset.groups.split(" ").filter(Boolean);
    const src = { xmodes: ["batches", "time"], noun: "lines" };
    const reports = new Map(groups.map((g) => [g, []]));
    const fetchGroup = (grid, g, after) => json(el.dataset.url + grid.query({ group: g, after_step: after, metric: g === "validation" ? el.dataset.metric : "" }));
    const build = (grid) => {
      const names = new Map(); // name → groups
      for (const [g, rs] of reports) {
        for (const r of rs) {
          const m = (r.metrics && r.metrics.avg_metrics) || {};
          for (const [k, v] of Object.entries(m)) if (typeof v === "number") (names.get(k) || names.set(k, new Set()).get(k)).add(g);
        }
      }
      for (const name of [...names.keys()].sort()) {
        const p = grid.panel(name, name, "chart-" + slug(name));
        p.series = new Map([...names.get(name)].map((g) => [g, {
          key: g, label: g, color: palette[groups.indexOf(g) % palette.length],
          pts: reports.get(g).filter((r) => typeof r.metrics.avg_metrics[name] === "number").map((r) => {
            const m = r.metrics.avg_metrics;
            return point(r.stepsCompleted, m[name], r.reportTime, m.epochs != null ? m.epochs : m.epoch);
          }),
        }]));
      }
      grid.redraw();
    };
    src.load = async (grid) => {
      const bodies = await Promise.all(groups.map((g) => fetchGroup(grid, g)));
      groups.forEach((g, i) => reports.set(g, bodies[i] ? bodies[i].metrics : []));
      build(grid);
    };
    src.append = async (grid) => {
      if (grid.zoom) return src.load(grid);
      let full = false;
      for (const g of groups) {
        const rs = reports.get(g), last = rs.length ? rs[rs.length - 1].stepsCompleted : -1;
        const body = await fetchGroup(grid, g, last);
        if (body) rs.push(...body.metrics.filter((r) => r.stepsCompleted > last));
        full = full || rs.length > 2 * grid.body.clientWidth;
      }
      if (full) return src.load(grid);
      build(grid);
    };
    src.start = (grid) => {
      src.load(grid);
      grid.live(() => src.append(grid));
    };
    return src;
  }

  // system charts a panel per group of a trial's system metrics (the
  // profiler's: {agent: {name: value | {gpu or mount: {name: value}}}})
  // over wall time, a line per metric, named after its GPU or mount where
  // it has one and its agent where there are several.
  function system(el) {
    const groups = el.dataset.groups.split(" ").filter(Boolean);
    const titles = JSON.parse(el.dataset.titles || "{}");
    const src = { xmodes: ["time"], noun: "metrics" };
    const series = (reports) => {
      const avg = (r) => (r.metrics && r.metrics.avg_metrics) || {};
      const multi = new Set(reports.flatMap((r) => Object.keys(avg(r)))).size > 1;
      const out = new Map();
      const add = (name, r, v) => {
        if (!out.has(name)) out.set(name, { key: name, label: name, pts: [] });
        out.get(name).pts.push(point(r.stepsCompleted, v, r.reportTime));
      };
      for (const r of reports) {
        for (const [agent, m] of Object.entries(avg(r))) {
          const pre = multi ? agent + " " : "";
          for (const [k, v] of Object.entries(m || {})) {
            if (typeof v === "number") add(pre + k, r, v);
            else if (v && typeof v === "object") for (const [k2, v2] of Object.entries(v)) if (typeof v2 === "number") add(pre + k2 + " (" + k + ")", r, v2);
          }
        }
      }
      return new Map([...out.entries()].sort().map(([k, s], i) => [k, { ...s, color: palette[i % palette.length] }]));
    };
    src.load = async (grid) => {
      const bodies = await Promise.all(groups.map((g) => json(el.dataset.url + grid.query({ group: g }))));
      groups.forEach((g, i) => {
        const p = grid.panel(g, titles[g] || g, "system-" + slug(g));
        if (bodies[i]) p.series = series(bodies[i].metrics);
      });
      grid.redraw();
    };
    src.start = (grid) => {
      src.load(grid);
      grid.live(() => src.load(grid));
    };
    return src;
  }

  const kinds = { experiment, trial, system };
  function setup(el) {
    if (el.dataset.ready || !kinds[el.dataset.chart]) return;
    el.dataset.ready = "true";
    const src = kinds[el.dataset.chart](el);
    const grid = new Grid(el, src);
    src.start(grid);
    window.addEventListener("resize", () => grid.panels.forEach((p) => p.resize()));
  }

  if (window.uPlot) {
    document.querySelectorAll("[data-chart]").forEach(setup);
    // A chart that a live region's refresh brings (the profiler was
    // turned on after the page loaded) is set up as it arrives.
    document.addEventListener("htmx:load", (e) => {
      const root = e.target instanceof Element ? e.target : document;
      root.querySelectorAll("[data-chart]").forEach(setup);
    });
  }
})();
