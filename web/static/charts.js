// Metric charts drawn with uPlot from the JSON API. A [data-chart=trial]
// element charts every metric of one group of a trial against batches; a
// [data-chart=experiment] element charts the metric its select picks, one
// line per trial, and a click on a line or its legend entry opens the
// trial. With data-experiments (the compare page) it charts several
// experiments' trials, labelled and coloured by experiment, and with
// data-trials only those trials. Each asks for about as many points as it is wide (the server
// downsamples) and, when its trial or experiment reports (pushed as its
// data-live topic, see app.js) while it sits inside a live region (an
// [hx-get] ancestor: the trial or experiment still runs), fetches only the
// points past its last (after_step) and appends them. Dragging
// across a chart zooms into those batches and fetches them in detail (again
// about as many points as the chart is wide); a double-click zooms back out.
// The elements carry hx-preserve, so those polls keep them and their
// canvases.
(() => {
  const colors = ["#2b6cb0", "#b42318", "#1e7a46", "#9a6700", "#6b46c1", "#0e7490", "#be185d", "#4d7c0f", "#475569", "#c2410c"];
  const height = 260;

  // trialColumns turns a group's reports into uPlot's columns: batches,
  // then one per numeric metric.
  function trialColumns(reports) {
    const avg = (r) => (r.metrics && r.metrics.avg_metrics) || {};
    const names = [...new Set(reports.flatMap((r) => Object.keys(avg(r)).filter((k) => typeof avg(r)[k] === "number")))].sort();
    const data = [reports.map((r) => r.stepsCompleted)];
    for (const n of names) data.push(reports.map((r) => (typeof avg(r)[n] === "number" ? avg(r)[n] : null)));
    return { labels: names, data };
  }

  // experimentColumns aligns trials' series on the union of their batches;
  // trials tagged with exp (an index into exps) are labelled and coloured
  // by experiment.
  function experimentColumns(trials, exps) {
    const xs = [...new Set(trials.flatMap((t) => t.points.map((p) => p.stepsCompleted)))].sort((a, b) => a - b);
    const at = new Map(xs.map((x, i) => [x, i]));
    const data = [xs];
    for (const t of trials) {
      const col = new Array(xs.length).fill(null);
      for (const p of t.points) col[at.get(p.stepsCompleted)] = p.value;
      data.push(col);
    }
    const multi = exps.length > 1;
    return {
      labels: trials.map((t) => (multi ? "exp " + exps[t.exp] + " / trial " : "Trial ") + t.trialId),
      colors: trials.map((t, i) => colors[(multi ? t.exp : i) % colors.length]),
      ids: trials.map((t) => t.trialId), data,
    };
  }

  function setup(el) {
    const plot = el.querySelector(".chart-plot");
    const empty = el.querySelector(".chart-empty");
    const logBox = el.querySelector("input[data-log]");
    const smoothBox = el.querySelector("select[data-smooth]");
    const picker = el.querySelector("select[data-metric-picker]");
    const experiment = el.dataset.chart === "experiment";
    const exps = (el.dataset.experiments || "").split(" ").filter(Boolean);
    let u = null, shape = "", cols = null, metric = el.dataset.metric || "", timer = 0, focused = null;
    // What was fetched: a trial chart's reports, an experiment chart's trials.
    let reports = [], trials = [];
    let zoom = null; // {min, max}: the batches a drag zoomed into, fetched in detail

    const width = () => Math.max(240, plot.clientWidth);

    function url(after) {
      const q = new URLSearchParams({ max_points: String(width()) });
      if (after != null && after >= 0) q.set("after_step", String(after)); // -1: it has none yet
      if (zoom) {
        q.set("min_batches", String(Math.floor(zoom.min)));
        q.set("max_batches", String(Math.ceil(zoom.max)));
      }
      if (experiment) {
        const o = picker.selectedOptions[0];
        q.set("group", o.dataset.group);
        q.set("metric", o.dataset.metric);
      } else {
        q.set("group", el.dataset.group);
        if (metric) q.set("metric", metric);
      }
      return "?" + q;
    }

    // fetchJSON is one chart URL's body, or null if the server refused.
    const fetchJSON = async (u, after) => {
      const resp = await fetch(u + url(after), { headers: { Accept: "application/json" } });
      return resp.ok ? resp.json() : null;
    };

    // fetchTrials gets the trials' series, from every compared experiment,
    // only those of data-trials if it names some.
    async function fetchTrials() {
      const only = el.dataset.trials && el.dataset.trials.split(" ").map(Number);
      const bodies = exps.length < 2 ? [await fetchJSON(el.dataset.url)]
        : await Promise.all(exps.map((id) => fetchJSON("/api/v1/experiments/" + id + "/metrics")));
      return bodies.flatMap((b, exp) => b.trials.map((t) => ({ ...t, exp }))).filter((t) => !only || only.includes(t.trialId));
    }

    // logged drops values a log scale cannot show.
    const logged = (data) => (logBox.checked ? data.map((c, i) => (i === 0 ? c : c.map((v) => (v > 0 ? v : null)))) : data);

    // smoothed is each series as a debiased exponential moving average
    // (TensorBoard's smoothing) over its points, gaps left as gaps.
    const smoothed = (data) => {
      const w = smoothBox ? Number(smoothBox.value) : 0;
      if (!w) return data;
      return data.map((c, i) => {
        if (i === 0) return c;
        let last = 0, n = 0;
        return c.map((v) => {
          if (v == null || !Number.isFinite(v)) return v;
          last = last * w + (1 - w) * v;
          n++;
          return last / (1 - Math.pow(w, n));
        });
      });
    };
    const shown = (data) => logged(smoothed(data));

    function options() {
      const opts = {
        width: width(), height,
        scales: { x: { time: false }, y: { distr: logBox.checked ? 3 : 1 } },
        axes: [{ label: "Batches" }, { size: 64 }],
        series: [{ label: "Batches" }].concat(cols.labels.map((label, i) => ({
          label, stroke: cols.colors ? cols.colors[i] : colors[i % colors.length], width: 1.5, spanGaps: true, points: { size: 4 },
        }))),
      };
      opts.hooks = {
        // A drag selects batches: fetch them in detail.
        setSelect: [(u) => {
          if (u.select.width < 2) return;
          zoom = { min: u.posToVal(u.select.left, "x"), max: u.posToVal(u.select.left + u.select.width, "x") };
          el.dataset.zoom = Math.floor(zoom.min) + "-" + Math.ceil(zoom.max);
          load();
        }],
      };
      if (experiment) {
        opts.cursor = { focus: { prox: 24 } };
        opts.focus = { alpha: 0.3 };
        opts.hooks.setSeries = [(u, i, o) => { if (o && "focus" in o) { focused = i; u.over.style.cursor = i ? "pointer" : ""; } }];
      }
      return opts;
    }

    function draw() {
      empty.hidden = cols.data[0].length > 0;
      const next = cols.labels.join("\n") + logBox.checked;
      if (u && next === shape) {
        // A refresh keeps a range the reader zoomed into (drag; double-click resets).
        const xs = u.data[0], x = u.scales.x;
        u.setData(shown(cols.data), !(x.min > xs[0] || x.max < xs[xs.length - 1]));
        return;
      }
      if (u) u.destroy();
      u = null;
      shape = next;
      if (!empty.hidden) return;
      u = new uPlot(options(), shown(cols.data), plot);
      u.over.addEventListener("dblclick", () => {
        if (!zoom) return;
        zoom = null;
        delete el.dataset.zoom;
        shape = ""; // a new chart over all batches, not the zoomed scale
        load();
      });
      if (experiment) {
        const trialPage = (i) => el.dataset.trialUrl + cols.ids[i - 1];
        u.over.addEventListener("click", () => { if (focused) location.href = trialPage(focused); });
        u.root.querySelectorAll(".u-legend .u-series").forEach((row, i) => {
          const label = row.querySelector(".u-label");
          if (i === 0 || !label) return;
          const a = document.createElement("a");
          a.href = trialPage(i);
          a.textContent = label.textContent;
          a.addEventListener("click", (e) => e.stopPropagation());
          label.replaceChildren(a);
        });
      }
    }

    // While the chart is live it appends what its trial or experiment
    // reported (the pushed "live:<data-live>", see app.js), one fetch at a
    // time, and loads again in full every 30 s (and when zoomed, at most
    // every 2 s).
    let loading = false, dirty = false, lastLoad = 0;
    function soon() {
      clearTimeout(timer);
      if (zoom) timer = setTimeout(load, Math.max(0, lastLoad + 2000 - Date.now()));
      else timer = setTimeout(append, 0);
    }
    if (el.dataset.live) document.body.addEventListener("live:" + el.dataset.live, () => {
      if (!el.isConnected || !el.closest("[hx-get]")) return;
      dirty = true;
      if (!loading) soon();
    });
    const lastStep = (points) => (points.length ? points[points.length - 1].stepsCompleted : -1);
    // append fetches the points past the last one the chart has and draws
    // them; a new trial, or a series grown past twice the chart's width,
    // loads in full (downsampled) instead.
    async function append() {
      if (!cols || (experiment && !picker.value)) return load();
      loading = true;
      dirty = false;
      let full = false;
      try {
        if (experiment) {
          const after = trials.length ? Math.min(...trials.map((t) => lastStep(t.points))) : -1;
          const body = await fetchJSON(el.dataset.url, after);
          if (!body) return;
          const only = el.dataset.trials && el.dataset.trials.split(" ").map(Number);
          const got = body.trials.filter((t) => !only || only.includes(t.trialId));
          const known = new Map(trials.map((t) => [t.trialId, t]));
          full = got.some((t) => !known.has(t.trialId));
          for (const t of got) {
            const have = known.get(t.trialId);
            if (have) have.points.push(...t.points.filter((p) => p.stepsCompleted > lastStep(have.points)));
          }
          full = full || trials.some((t) => t.points.length > 2 * width());
          if (!full) cols = experimentColumns(trials, exps);
        } else {
          const body = await fetchJSON(el.dataset.url, lastStep(reports));
          if (!body) return;
          reports.push(...body.metrics.filter((r) => r.stepsCompleted > lastStep(reports)));
          full = reports.length > 2 * width();
          if (!full) cols = trialColumns(reports);
        }
        if (!full) draw();
      } finally {
        loading = false;
        if (full) load();
        else if (dirty) soon();
        else if (el.closest("[hx-get]")) timer = setTimeout(load, 30000);
      }
    }
    async function load() {
      clearTimeout(timer);
      if (experiment && !picker.value) {
        empty.hidden = false; // no metric to pick yet
        return;
      }
      loading = true;
      dirty = false;
      lastLoad = Date.now();
      try {
        if (experiment) cols = experimentColumns(trials = await fetchTrials(), exps);
        else cols = trialColumns(reports = (await fetchJSON(el.dataset.url)).metrics);
        if (!metric && cols.labels.length) metric = cols.labels[0]; // keeps its spikes in the downsampling
        draw();
      } finally {
        loading = false;
        clearTimeout(timer);
        if (el.closest("[hx-get]")) {
          if (dirty) soon();
          else timer = setTimeout(load, 30000);
        }
      }
    }

    // afterSwap runs after each refresh of a live region: it adds the
    // metrics reported since the page loaded (#experiment-chart-options) to
    // the kept picker, and draws the final data once the region stops
    // being polled.
    let live = !!el.closest("[hx-get]");
    function afterSwap() {
      let reload = live && !el.closest("[hx-get]");
      live = !!el.closest("[hx-get]");
      const tpl = document.getElementById("experiment-chart-options");
      if (picker && tpl) {
        const empty = !picker.value;
        const have = new Set([...picker.options].map((o) => o.value));
        for (const o of tpl.content.querySelectorAll("option")) {
          if (have.has(o.value)) continue;
          let group = [...picker.querySelectorAll("optgroup")].find((g) => g.label === o.dataset.group);
          if (!group) {
            group = document.createElement("optgroup");
            group.label = o.dataset.group;
            picker.append(group);
          }
          const added = o.cloneNode(true);
          added.selected = false;
          group.append(added);
        }
        if (empty && picker.options.length) {
          picker.selectedIndex = 0; // the first metric reported
          reload = true;
        }
      }
      if (reload) { shape = ""; load(); }
    }

    logBox.addEventListener("change", () => cols && draw());
    if (smoothBox) smoothBox.addEventListener("change", () => cols && u && u.setData(shown(cols.data), false));
    if (picker) picker.addEventListener("change", () => { shape = ""; load(); });
    document.addEventListener("htmx:afterSettle", afterSwap);
    window.addEventListener("resize", () => u && u.setSize({ width: width(), height }));
    load();
  }

  // systemColumns turns a group's system metric reports (the profiler's:
  // {agent: {name: value | {gpu or mount: {name: value}}}}) into uPlot's
  // columns: report times in seconds, then one per metric, named after its
  // GPU or mount where it has one, and its agent where there are several.
  function systemColumns(reports) {
    const avg = (r) => (r.metrics && r.metrics.avg_metrics) || {};
    const multi = new Set(reports.flatMap((r) => Object.keys(avg(r)))).size > 1;
    const names = new Set();
    const rows = reports.map((r) => {
      const flat = {};
      for (const [agent, m] of Object.entries(avg(r))) {
        const pre = multi ? agent + " " : "";
        for (const [k, v] of Object.entries(m || {})) {
          if (typeof v === "number") flat[pre + k] = v;
          else if (v && typeof v === "object") {
            for (const [k2, v2] of Object.entries(v)) if (typeof v2 === "number") flat[pre + k2 + " (" + k + ")"] = v2;
          }
        }
      }
      Object.keys(flat).forEach((n) => names.add(n));
      return [Date.parse(r.reportTime) / 1000, flat];
    });
    const labels = [...names].sort();
    return { labels, data: [rows.map((r) => r[0])].concat(labels.map((n) => rows.map((r) => (n in r[1] ? r[1][n] : null)))) };
  }

  // setupSystem draws a [data-chart=system] element: one group of a trial's
  // system metrics over time. It fetches the group again (about as many
  // points as it is wide) when the trial's profiler reports (its data-live
  // topic) while it sits in a live region, and every 30 s there.
  function setupSystem(el) {
    if (el.dataset.ready) return;
    el.dataset.ready = "true";
    const plot = el.querySelector(".chart-plot");
    const empty = el.querySelector(".chart-empty");
    const logBox = el.querySelector("input[data-log]");
    let u = null, shape = "", cols = null, timer = 0, loading = false, dirty = false;
    const width = () => Math.max(240, plot.clientWidth);
    const logged = (data) => (logBox.checked ? data.map((c, i) => (i === 0 ? c : c.map((v) => (v > 0 ? v : null)))) : data);
    function draw() {
      empty.hidden = cols.data[0].length > 0;
      el.dataset.points = String(cols.data[0].length);
      const next = cols.labels.join("\n") + logBox.checked;
      if (u && next === shape) return u.setData(logged(cols.data));
      if (u) u.destroy();
      u = null;
      shape = next;
      if (!empty.hidden) return;
      u = new uPlot({
        width: width(), height,
        // One report alone spans a couple of minutes, not uPlot's years.
        scales: { x: { time: true, range: (u, min, max) => (u.data[0].length === 1 ? [u.data[0][0] - 60, u.data[0][0] + 60] : [min, max]) }, y: { distr: logBox.checked ? 3 : 1 } },
        axes: [{}, { size: 72 }],
        series: [{ label: "Time" }].concat(cols.labels.map((label, i) => ({
          label, stroke: colors[i % colors.length], width: 1.5, spanGaps: true, points: { size: 4 },
        }))),
      }, logged(cols.data), plot);
    }
    async function load() {
      clearTimeout(timer);
      loading = true;
      dirty = false;
      try {
        const q = new URLSearchParams({ group: el.dataset.group, max_points: String(width()) });
        const resp = await fetch(el.dataset.url + "?" + q, { headers: { Accept: "application/json" } });
        if (resp.ok) {
          cols = systemColumns((await resp.json()).metrics);
          draw();
        }
      } finally {
        loading = false;
        if (dirty) timer = setTimeout(load, 0);
        else if (el.closest("[hx-get]")) timer = setTimeout(load, 30000);
      }
    }
    if (el.dataset.live) document.body.addEventListener("live:" + el.dataset.live, () => {
      if (!el.isConnected || !el.closest("[hx-get]")) return;
      if (loading) dirty = true;
      else load();
    });
    logBox.addEventListener("change", () => cols && draw());
    window.addEventListener("resize", () => u && u.setSize({ width: width(), height }));
    load();
  }

  if (window.uPlot) {
    document.querySelectorAll("[data-chart]").forEach((el) => (el.dataset.chart === "system" ? setupSystem(el) : setup(el)));
    // A system chart that a live region's refresh brings (the profiler was
    // turned on after the page loaded) is set up as it arrives.
    document.addEventListener("htmx:load", (e) => {
      const root = e.target instanceof Element ? e.target : document;
      root.querySelectorAll('[data-chart="system"]').forEach(setupSystem);
    });
  }
})();
