// The chart component of charts.js: a grid of uPlot panels, one per
// metric, each with its own y axis (ticks with the digits to read apart),
// log scale and smoothing, a tooltip at the cursor listing every line's
// value there as reported, sorted by value, the hovered line highlighted;
// one legend for the grid that folds and filters past eight lines; an x
// axis by batches, epochs or wall time. What fills the panels (a source)
// is charts.js's: window.chartGrid = {Grid, palette}.
//
// A grid's settings live in the URL's fragment, so a reload or a shared
// link shows the same view: KIND.x (the x axis), KIND.log.PANEL=1,
// KIND.smooth.PANEL (the weight), KIND.filter (the legend's filter),
// KIND.hide (the lines hidden, by key) and KIND.zoom (batches MIN-MAX),
// where KIND is the grid's data-chart (experiment, trial, system) and
// PANEL a panel's metric.
//
// A grid whose source is brushable (the experiment's, a line per trial)
// follows the brush where brush.js is loaded (before charts.js): it sets
// the grid's brushed (a Set of trial ids, null when none) and the panels
// draw those trials at full strength, the others faded. The element
// keeps its grid (el.chartGrid), and each panel says how many lines it
// draws highlighted and faded (data-highlighted, data-faded).
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
      const saved = grid.saved;
      if (saved.get("smooth." + key)) this.smooth.value = saved.get("smooth." + key);
      this.log.checked = saved.get("log." + key) === "1";
      this.smooth.addEventListener("change", () => { this.draw(); grid.save(); });
      this.log.addEventListener("change", () => { this.shape = ""; this.draw(); grid.save(); });
    }

    width() { return Math.max(240, this.plot.clientWidth || this.grid.el.clientWidth || 240); }

    // columns aligns the series on the union of their x values (rounded
    // to about two per pixel where there are far more).
    columns() {
      const mode = this.grid.xmode;
      const xOf = mode === "epochs" ? (p) => p.e : mode === "time" ? (p) => p.t : (p) => p.s;
      const ss = [...this.series.values()];
      // Brushed trials drawn last, over the faded ones.
      const br = this.grid.brushed;
      if (br) ss.sort((a, b) => br.has(a.trial) - br.has(b.trial));
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
      const br = this.grid.brushed;
      const next = ss.map((s) => s.key + (br && !br.has(s.trial) ? "-" : "")).join(" ") + this.log.checked + this.grid.xmode + !!br;
      const lit = br ? ss.filter((s) => br.has(s.trial)).length : 0;
      this.fig.dataset.highlighted = br ? String(lit) : "";
      this.fig.dataset.faded = br ? String(ss.length - lit) : "";
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
        // One report alone spans a couple of minutes (or batches), not uPlot's years.
        scales: { x: { time: mode === "time", range: (u, min, max) => (min === max ? [min - (mode === "time" ? 60 : 1), max + (mode === "time" ? 60 : 1)] : [min, max]) }, y: { distr: log ? 3 : 1, range: yRange(log) } },
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
        series: [{ label: xlabels[mode] }].concat(this.cols.ss.map((s) => {
          const br = this.grid.brushed, faded = br && !br.has(s.trial);
          return {
            label: s.label, stroke: faded ? s.color + "30" : s.color, width: br && !faded ? 2.25 : faded ? 1 : 1.5,
            spanGaps: true, points: { size: 4 }, show: this.grid.visible(s.key),
          };
        })),
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
      this.prefix = (el.dataset.chart || "chart") + ".";
      const frag = new URLSearchParams(location.hash.slice(1));
      this.saved = new Map([...frag].filter(([k]) => k.startsWith(this.prefix)).map(([k, v]) => [k.slice(this.prefix.length), v]));
      this.wantX = this.saved.get("x") || src.xmodes[0];
      this.xmode = src.xmodes.includes(this.wantX) ? this.wantX : src.xmodes[0];
      const z = /^(\d+)-(\d+)$/.exec(this.saved.get("zoom") || "");
      this.zoom = z && src.xmodes.includes("batches") ? { min: Number(z[1]), max: Number(z[2]) } : null;
      if (this.zoom) el.dataset.zoom = this.zoom.min + "-" + this.zoom.max;
      this.hidden = new Set((this.saved.get("hide") || "").split(",").filter(Boolean));
      this.filter = this.saved.get("filter") || "";
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
      el.chartGrid = this;
      this.brushed = null;
      if (src.brushable && window.chartBrush) window.chartBrush.follow(this);
      this.empty = el.querySelector(".chart-empty");
      this.xsel.addEventListener("change", () => {
        this.xmode = this.wantX = this.xsel.value;
        this.panels.forEach((p) => p.draw());
        this.save();
      });
      this.seen = new IntersectionObserver((es) => es.forEach((e) => e.isIntersecting && this.visibleNow(e.target)), { rootMargin: "200px" });
      this.xmodes();
    }

    // save writes the grid's settings into the URL's fragment, leaving
    // the rest of the URL (and other grids' settings) as they are.
    save() {
      const h = new URLSearchParams(location.hash.slice(1));
      for (const k of [...h.keys()]) if (k.startsWith(this.prefix)) h.delete(k);
      const set = (k, v) => h.set(this.prefix + k, v);
      if (this.wantX !== this.src.xmodes[0]) set("x", this.wantX);
      for (const p of this.panels.values()) {
        if (p.log.checked) set("log." + p.key, "1");
        if (Number(p.smooth.value)) set("smooth." + p.key, p.smooth.value);
      }
      if (this.filter) set("filter", this.filter);
      if (this.hidden.size) set("hide", [...this.hidden].join(","));
      if (this.zoom) set("zoom", this.zoom.min + "-" + this.zoom.max);
      const frag = h.toString();
      history.replaceState(history.state, "", location.pathname + location.search + (frag ? "#" + frag : ""));
    }

    xmodes() {
      const have = this.src.xmodes.concat(this.anyEpochs() ? ["epochs"] : []);
      // Epochs, asked for by the URL, once a report has them.
      if (this.wantX !== this.xmode && have.includes(this.wantX)) {
        this.xmode = this.wantX;
        this.panels.forEach((p) => p.draw());
      }
      if ([...this.xsel.options].map((o) => o.value).join() === have.join()) return;
      this.xsel.replaceChildren(...have.map((m) => new Option(xlabels[m], m, false, m === this.xmode)));
    }
    anyEpochs() {
      for (const p of this.panels.values()) for (const s of p.series.values()) if (s.pts.some((q) => q.e != null)) return true;
      return false;
    }

    visible(key) {
      const l = this.labels && this.labels.get(key);
      return !this.hidden.has(key) && (!this.filter || !this.folded || l == null || l.toLowerCase().includes(this.filter));
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

    // visibleNow loads a panel that scrolled into view, one panel at a
    // time: the first is drawn sooner than when all ask the server at
    // once.
    visibleNow(fig) {
      this.seen.unobserve(fig);
      const p = [...this.panels.values()].find((q) => q.fig === fig);
      if (!p || !this.src.loadPanel) return;
      this.queue = (this.queue || Promise.resolve()).then(() => this.src.loadPanel(this, p)).catch(() => {});
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
          this.save();
        });
        const label = s.href ? mk("a", null, s.label) : mk("span", null, s.label);
        if (s.href) label.href = s.href;
        li.append(b, label);
        list.append(li);
      }
      this.folded = all.size > collapseAt;
      if (!this.folded) {
        this.legend.replaceChildren(list);
        return;
      }
      const d = mk("details", "legend-fold");
      const open = this.legend.querySelector("details[open]");
      d.open = !!open || (!this.legendShown && !!this.filter);
      this.legendShown = true;
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
        this.save();
      });
      d.append(sum, f, list);
      this.legend.replaceChildren(d);
      if (this.filter) f.dispatchEvent(new Event("input"));
    }

    zoomTo(min, max) {
      this.zoom = { min: Math.floor(min), max: Math.ceil(max) };
      this.el.dataset.zoom = this.zoom.min + "-" + this.zoom.max;
      this.save();
      this.src.load(this);
    }
    unzoom() {
      if (!this.zoom) return;
      this.zoom = null;
      delete this.el.dataset.zoom;
      this.save();
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

  window.chartGrid = { Grid, palette, mk };
})();
