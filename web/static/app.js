// Resolute's own small script. Pages work without it; it only adds comfort.
// - The user menu and navigation toggle on small screens are <details>, no JS needed.
// - Flash messages can be dismissed.
document.addEventListener("click", (e) => {
  const close = e.target.closest("[data-dismiss]");
  if (close) close.closest(".flash")?.remove();
});
// Confirm destructive buttons (forms, or the pressed button, with
// data-confirm) before submitting.
document.addEventListener("submit", (e) => {
  const msg = e.submitter?.getAttribute("data-confirm") || e.target.getAttribute("data-confirm");
  if (msg && !window.confirm(msg)) e.preventDefault();
});
// A form that edits in place (hx-post or hx-get), swapped in by a live
// update, is processed by htmx only when the swap settles: submitted before
// that (a key pressed at that moment), the browser would load a whole page.
// Process it now and send it as htmx would. (Forms that ask to confirm are
// left to the browser: asking twice would be worse.)
document.addEventListener("submit", (e) => {
  const f = e.target;
  if (e.defaultPrevented || !window.htmx || f.hasAttribute("data-confirm") || e.submitter?.hasAttribute("data-confirm")) return;
  if (!(f.hasAttribute("hx-post") || f.hasAttribute("hx-get")) || f["htmx-internal-data"]?.initHash) return;
  e.preventDefault();
  htmx.process(f);
  htmx.trigger(f, "submit");
}, true);
// Forms that edit in place (inside [data-swap-errors]) show a refusal (400,
// 409 or 422: the form again, with the error beside the field) where htmx
// would otherwise drop it.
document.addEventListener("htmx:beforeSwap", (e) => {
  const status = e.detail.xhr.status;
  if ((status === 400 || status === 409 || status === 422) && e.detail.elt.closest("[data-swap-errors]")) {
    e.detail.shouldSwap = true;
    e.detail.isError = false;
  }
});
// A folded header's Details (details[data-keep-open]) stays open when a
// live update replaces it.
let keptOpen = [];
document.addEventListener("htmx:beforeSwap", () => {
  keptOpen = [...document.querySelectorAll("details[data-keep-open][open]")].map((d) => d.id);
});
document.addEventListener("htmx:afterSwap", () => {
  keptOpen.forEach((id) => { const d = document.getElementById(id); if (d) d.open = true; });
});
// A followed log (pre.log[data-tail]) opens at its end and stays there
// while new lines arrive, unless the reader scrolled up.
document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("pre.log[data-tail]").forEach((l) => { l.scrollTop = l.scrollHeight; });
});
document.addEventListener("htmx:oobBeforeSwap", (e) => {
  const l = e.detail.target;
  if (l && l.matches("pre.log[data-tail]")) l.dataset.atEnd = l.scrollTop + l.clientHeight >= l.scrollHeight - 8 ? "1" : "";
});
document.addEventListener("htmx:oobAfterSwap", (e) => {
  const l = e.detail.target;
  if (l && l.matches("pre.log[data-tail]") && l.dataset.atEnd === "1") l.scrollTop = l.scrollHeight;
});
// Live regions are pushed: a page with any (hx-trigger naming a "live:"
// event) opens one stream of server-sent events from /events for the
// topics its regions (and charts, data-live) show, and each change (its
// data names the object that changed, e.g. trial:27, or a collection, e.g.
// experiments) is dispatched on <body> as the htmx event "live:<topic>" and
// as a generic "live". A region fetches itself again on the topics it
// shows, e.g. hx-trigger="live:trial:27 from:body, every 30s" with
// hx-swap="outerHTML settle:0ms" (no moment when the replacement does not
// listen yet); the slow poll covers a stream that is down. A region
// swapped in with topics the stream lacks reopens it for them all. A
// hidden tab closes its stream (browsers allow few connections per server)
// and, shown again, asks for all its topics at once. The first stream
// starts from the page's data-live-since, so changes made while the page
// loaded are not lost.
(() => {
  let source = null, subscribed = "";
  // topics are those the page's live regions and charts show, sorted.
  function topics() {
    const all = new Set();
    document.querySelectorAll('[hx-trigger*="live:"]').forEach((el) => {
      for (const t of (el.getAttribute("hx-trigger") || "").split(",")) {
        const name = t.trim().split(/\s+/)[0];
        if (name.startsWith("live:")) all.add(name.slice(5));
      }
    });
    document.querySelectorAll("[data-live]").forEach((el) => el.closest('[hx-trigger*="live:"]') && all.add(el.dataset.live));
    return [...all].sort().join(",");
  }
  function open(resync) {
    const want = topics();
    if (source && want !== subscribed && want.split(",").some((t) => !subscribed.split(",").includes(t))) {
      source.close(); // a region showing more came in
      source = null;
      resync = true;
    }
    if (source || document.hidden || !want) return;
    subscribed = want;
    const q = "/events?topics=" + encodeURIComponent(want);
    // since: what changed while the page was rendered and loaded is told at once.
    source = new EventSource(resync ? q + "&resync=1" : q + "&since=" + (document.body.dataset.liveSince || "0"));
    source.addEventListener("change", (e) => fire(e.data));
  }
  // A topic waits while a region that shows it is being fetched: htmx would
  // queue the event on the region that the response then replaces, and the
  // change would be lost. It is dispatched once that request is done.
  const inflight = new Set();
  const waiting = new Set();
  const shows = (el, topic) => el.isConnected &&
    (el.getAttribute("hx-trigger") || "").split(",").some((t) => t.trim().split(/\s+/)[0] === "live:" + topic);
  function fire(topic) {
    if ([...inflight].some((el) => shows(el, topic))) {
      waiting.add(topic);
      return;
    }
    htmx.trigger(document.body, "live:" + topic);
    htmx.trigger(document.body, "live", { topic });
  }
  document.addEventListener("htmx:beforeRequest", (e) => inflight.add(e.detail.elt));
  function flush() {
    const topics = [...waiting];
    waiting.clear();
    topics.forEach(fire);
  }
  document.addEventListener("htmx:afterRequest", (e) => {
    // A replaced region's event comes from its old parent: the region has
    // left the page, and its replacement already listens (live regions
    // swap with settle:0ms, as htmx processes new content when it settles).
    inflight.delete(e.detail.elt);
    inflight.forEach((r) => r.isConnected || inflight.delete(r));
    setTimeout(flush, 0);
  });
  document.addEventListener("DOMContentLoaded", () => open(false));
  document.addEventListener("htmx:load", () => open(false)); // a live region swapped in later
  document.addEventListener("visibilitychange", () => {
    if (document.hidden && source) {
      source.close();
      source = null;
    } else if (!document.hidden) {
      open(true);
    }
  });
})();
// The trials brushed on an experiment's hyperparameters tab follow its tab
// links: the fragment's brushed=ids (and brush=, the brushes themselves)
// is added to each tab's link, so the overview's charts draw those trials
// highlighted and the trials tab marks their rows. window.brushedTrials
// reads (ids: a Set, or null when nothing is brushed), sets and clears it;
// each change is told as a "brushed:changed" event (detail: the Set).
(() => {
  const frag = () => new URLSearchParams(location.hash.slice(1));
  const ids = () => {
    const h = frag();
    return h.has("brushed") ? new Set(h.get("brushed").split(",").filter(Boolean).map(Number).filter((n) => n > 0)) : null;
  };
  const write = (h) => {
    const f = h.toString();
    history.replaceState(history.state, "", location.pathname + location.search + (f ? "#" + f : ""));
  };
  function links() {
    const h = frag(), keep = new URLSearchParams();
    for (const k of ["brush", "brushed"]) if (h.has(k)) keep.set(k, h.get(k));
    const f = keep.toString();
    document.querySelectorAll("#experiment-tabs a").forEach((a) => { a.href = a.href.split("#")[0] + (f ? "#" + f : ""); });
    rows();
  }
  // rows marks the brushed trials' rows of the trials tab, unless it is
  // already filtered to them (?brushed=), with a note to filter or clear.
  function rows() {
    const table = document.getElementById("trials");
    if (!table || !table.closest("#trials-tab") || document.getElementById("brushed-filter")) return;
    const on = ids();
    let n = 0;
    table.querySelectorAll("tr[data-trial]").forEach((r) => {
      const b = !!on && on.has(Number(r.dataset.trial));
      r.classList.toggle("brushed", b);
      if (b) n++;
    });
    table.dataset.brushed = on ? String(n) : "";
    let note = document.getElementById("brushed-highlight");
    if (!on) {
      if (note) note.remove();
      return;
    }
    if (!note) {
      note = document.createElement("p");
      note.className = "notice";
      note.id = "brushed-highlight";
      document.querySelector("#trials-tab .table-tools")?.after(note);
    }
    const only = document.createElement("a");
    only.href = location.pathname + "?" + new URLSearchParams({ brushed: [...on].sort((a, b) => a - b).join(","), tab: "trials" });
    only.textContent = "Show only them";
    only.id = "brushed-only";
    const clear = document.createElement("button");
    clear.type = "button";
    clear.className = "link";
    clear.id = "brushed-clear";
    clear.textContent = "clear";
    clear.addEventListener("click", () => window.brushedTrials.clear());
    note.replaceChildren(on.size + " brushed trials highlighted (" + n + " on this page) · ", only, " · ", clear);
  }
  function changed() {
    links();
    document.dispatchEvent(new CustomEvent("brushed:changed", { detail: ids() }));
  }
  window.brushedTrials = {
    ids,
    // set keeps ids (null: none brushed) and the brushes (brush=) in the fragment.
    set(on, brush) {
      const h = frag();
      if (brush) h.set("brush", brush);
      else h.delete("brush");
      if (on) h.set("brushed", [...on].sort((a, b) => a - b).join(","));
      else h.delete("brushed");
      write(h);
      changed();
    },
    clear() { window.brushedTrials.set(null, null); },
  };
  document.addEventListener("DOMContentLoaded", links);
  document.addEventListener("htmx:afterSettle", links);
  window.addEventListener("hashchange", changed);
})();
