// The new-experiment form: a chosen config file is loaded into the editor,
// where it is checked and can be edited, and nothing is lost if the
// submission is refused.
(() => {
  const file = document.getElementById("f-config_file");
  const editor = document.getElementById("f-yaml");
  if (!file || !editor) return;
  file.addEventListener("change", async () => {
    const f = file.files[0];
    if (!f) return;
    editor.value = await f.text();
    file.value = ""; // the editor holds it now
    editor.dispatchEvent(new Event("input", { bubbles: true }));
  });
})();
