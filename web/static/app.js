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
