// Brushing for the chart grids of chartgrid.js, on the pages that chart an
// experiment's trials (loaded after chartgrid.js, before charts.js): a
// brushable grid draws the trials brushed on the hyperparameters tab
// (app.js's brushedTrials, the fragment's brushed=ids) at full strength
// and the others faded, with a note to clear the brush, and follows the
// brush as it changes. window.chartBrush = {follow}; the grid's element
// says which trials are brushed (data-brushed).
(() => {
  if (!window.chartGrid) return;
  const { mk } = window.chartGrid;

  // follow makes grid follow the brush: brushed now, and as it changes
  // (cleared, here or on another tab's page, or dragged on the
  // hyperparameters tab).
  function follow(grid) {
    if (!window.brushedTrials) return;
    const note = mk("p", "notice chart-brushed");
    note.hidden = true;
    grid.bar.after(note);
    let timer = null;
    const key = (x) => (x ? [...x].sort((a, b) => a - b).join(",") : "-");
    // brush draws the trials of on (a Set of trial ids; null: none
    // brushed) highlighted, the others faded.
    const brush = (on) => {
      if (key(on) === key(grid.brushed) && !note.hidden === !!on) return;
      grid.brushed = on ? new Set(on) : null;
      grid.el.dataset.brushed = on ? key(on) : "";
      note.hidden = !on;
      if (on) {
        const clear = mk("button", "link", "clear");
        clear.type = "button";
        clear.id = "chart-brush-clear";
        clear.addEventListener("click", () => window.brushedTrials.clear());
        note.replaceChildren(on.size + " brushed " + (on.size === 1 ? "trial" : "trials") + " highlighted · ", clear);
        note.id = "chart-brushed";
      }
      // Redrawn at most every 80 ms while a brush is dragged: each
      // redraw builds the panels' plots anew, the brushed lines last.
      if (timer) return;
      timer = setTimeout(() => {
        timer = null;
        grid.panels.forEach((p) => { if (p.cols) p.draw(); });
      }, 80);
    };
    brush(window.brushedTrials.ids());
    document.addEventListener("brushed:changed", (e) => brush(e.detail));
    document.addEventListener("hparams:brushed", (e) => brush(e.detail));
  }

  window.chartBrush = { follow };
})();
