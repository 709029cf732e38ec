// The shop's enhancements (every page works without them): a print button,
// and chips that fill a field in place ("my number", an amount) where
// without script they reload the form filled in.
document.querySelectorAll("[data-print]").forEach((button) => {
  button.hidden = false;
  button.addEventListener("click", () => window.print());
});
document.querySelectorAll("[data-fill]").forEach((chip) => {
  chip.addEventListener("click", (event) => {
    const field = chip.closest("form")?.querySelector(`[name="${chip.dataset.fill}"]`);
    if (!field) return;
    event.preventDefault();
    field.value = chip.dataset.value;
    field.dispatchEvent(new Event("input", { bubbles: true }));
    field.focus();
  });
});
// Bulk buying: a CSV file chosen is read into the rows' text area (without
// script, the rows are pasted there).
document.querySelectorAll("[data-csv-into]").forEach((input) => {
  input.addEventListener("change", async () => {
    const file = input.files?.[0];
    const target = document.getElementById(input.dataset.csvInto);
    if (file && target) target.value = await file.text();
  });
});
