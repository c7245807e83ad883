// Metric charts: what fills the chart grids of chartgrid.js (a panel per
// metric) on the experiment, compare and trial pages, from the JSON API.
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
  if (!window.chartGrid) return;
  const { Grid, palette } = window.chartGrid;
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
    const src = { xmodes: ["batches", "time"], noun: multi ? "lines" : "trials", brushable: !multi };
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
        trial: t.trialId,
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
      // The searcher's metric first, then validation's, then the rest.
      const rank = (n) => (n === el.dataset.metric ? 0 : names.get(n).has("validation") ? 1 : 2);
      for (const name of [...names.keys()].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0))) {
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

  // usage charts historical usage (Cluster → Usage): a panel per grouping
  // (data-groups: [field, title] of the aggregated API's byUsername,
  // byResourcePool, byWorkspace), a line per user, pool or workspace, its
  // slot-hours each period, over time.
  function usage(el) {
    const groups = JSON.parse(el.dataset.groups || "[]");
    const src = { xmodes: ["time"], noun: "lines" };
    src.load = async (grid) => {
      const body = await json(el.dataset.url);
      const entries = body ? body.resourceEntries : [];
      for (const [field, title] of groups) {
        const names = [...new Set(entries.flatMap((e) => Object.keys(e[field] || {})))].sort();
        if (!names.length) continue;
        const p = grid.panel(field, title, "usage-chart-" + slug(field));
        p.series = new Map(names.map((n, i) => [field + ":" + n, {
          key: field + ":" + n, label: n, color: palette[i % palette.length],
          pts: entries.map((e, x) => point(x, (e[field][n] || 0) / 3600, e.periodStart)),
        }]));
      }
      grid.redraw();
    };
    src.start = (grid) => src.load(grid);
    return src;
  }

  const kinds = { experiment, trial, system, usage };
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
