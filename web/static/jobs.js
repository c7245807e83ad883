// The Job Queue page's comfort: drag to reorder (SortableJS) and live
// updates (server-sent events from /jobs/events). Without it the page still
// works: the move buttons and the row forms post and come back.
(() => {
  const region = () => document.getElementById("job-queue");
  if (!region()) return;
  const message = document.getElementById("queue-message");
  let dragging = false;
  let pressing = false; // a pointer is down in the table: a click is under way
  let pending = false;

  function show(text) {
    message.textContent = text;
    message.hidden = !text;
  }

  // Typing in a row's priority or weight, and the click on its Set, are
  // not wiped by a refresh: a row swapped between a click's press and its
  // release would lose the click, and the form would never be sent.
  function editing() {
    const el = document.activeElement;
    return el && region().contains(el) && el.matches("input, select, button");
  }

  function busy() {
    return dragging || pressing || editing();
  }

  async function refresh() {
    if (busy()) {
      pending = true;
      return;
    }
    pending = false;
    const resp = await fetch("/jobs/table", { credentials: "same-origin" });
    if (!resp.ok) return;
    const html = (await resp.text()).trim();
    if (busy()) { // it began while the table was on its way
      pending = true;
      return;
    }
    const box = document.createElement("div");
    box.innerHTML = html;
    const fresh = box.firstElementChild;
    if (fresh && fresh.id === "job-queue") {
      region().replaceWith(fresh);
      sortable();
    }
  }

  // sentence makes the API's message read as a sentence, as the page's
  // own forms show them (handlers.sentence): no API field names, a capital,
  // a full stop.
  function sentence(msg) {
    const fields = { priority: "Priority", weight: "Weight" };
    const m = /^([A-Za-z]+): (.*)$/s.exec(msg);
    if (m) msg = fields[m[1]] ? `${fields[m[1]]} ${m[2]}` : m[2];
    msg = msg.charAt(0).toUpperCase() + msg.slice(1);
    return /[.!?]$/.test(msg) ? msg : msg + ".";
  }

  // move asks the master to put the dropped row ahead of the row now below
  // it, or behind the one above when it was dropped last.
  async function move(ev) {
    const row = ev.item;
    const next = row.nextElementSibling;
    const prev = row.previousElementSibling;
    const update = { jobId: row.dataset.jobId };
    if (next) update.aheadOf = next.dataset.jobId;
    else if (prev) update.behindOf = prev.dataset.jobId;
    else return;
    const resp = await fetch("/api/v1/job-queues", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ updates: [update] }),
    });
    if (!resp.ok) {
      const body = await resp.json().catch(() => ({}));
      throw new Error(body.error && body.error.message ? sentence(body.error.message) : `Moving ${update.jobId} failed (${resp.status}).`);
    }
  }

  // restore puts a row back where it was dragged from.
  function restore(ev) {
    const rows = ev.from.children;
    ev.from.insertBefore(ev.item, rows[ev.oldIndex < ev.newIndex ? ev.oldIndex : ev.oldIndex + 1] || null);
  }

  // sortable makes the table's rows draggable, and marks the table so
  // (data-sortable): a drag before that would do nothing.
  function sortable() {
    if (!window.Sortable) return;
    region().dataset.sortable = "true";
    region().querySelectorAll("tbody[data-pool]").forEach((tbody) => {
      Sortable.create(tbody, {
        handle: ".drag-handle",
        draggable: "tr",
        animation: 120,
        onStart: () => { dragging = true; },
        onEnd: async (ev) => {
          dragging = false;
          if (ev.oldIndex !== ev.newIndex) {
            try {
              await move(ev);
              show("");
            } catch (err) {
              restore(ev);
              show(err.message);
            }
          }
          refresh();
        },
      });
    });
  }

  if (window.EventSource) {
    const events = new EventSource("/jobs/events");
    events.addEventListener("queue", (e) => {
      if (e.data !== region().dataset.version) refresh();
    });
  }
  document.addEventListener("pointerdown", (e) => {
    if (region().contains(e.target)) pressing = true;
  });
  for (const type of ["pointerup", "pointercancel"]) {
    document.addEventListener(type, () => {
      setTimeout(() => {
        pressing = false;
        if (pending) refresh();
      }, 0);
    });
  }
  document.addEventListener("focusout", () => {
    setTimeout(() => { if (pending) refresh(); }, 0);
  });
  sortable();
})();
