// Resolute's own small script. Pages work without it; it only adds comfort.
// - The user menu and navigation toggle on small screens are <details>, no JS needed.
// - Flash messages can be dismissed.
document.addEventListener("click", (e) => {
  const close = e.target.closest("[data-dismiss]");
  if (close) close.closest(".flash")?.remove();
});
// Confirm destructive buttons (forms with data-confirm) before submitting.
document.addEventListener("submit", (e) => {
  const msg = e.target.getAttribute("data-confirm");
  if (msg && !window.confirm(msg)) e.preventDefault();
});
