// Copy buttons, confirmations, and the phone's card layout of tables; the
// pages work without this script too (a table then scrolls sideways).
// A table marked .cards names each cell's column for its card layout, from
// its header, where the page did not (`data-label`).
for (const table of document.querySelectorAll("table.cards")) {
  const names = [...table.querySelectorAll("thead th")].map((th) => th.textContent.trim());
  for (const row of table.querySelectorAll("tbody tr")) {
    [...row.cells].forEach((cell, i) => {
      if (!cell.dataset.label && names[i]) cell.dataset.label = names[i];
    });
  }
}

document.addEventListener("click", (event) => {
  const copy = event.target.closest("[data-copy]");
  if (copy) {
    const text = document.getElementById(copy.dataset.copy).textContent;
    navigator.clipboard?.writeText(text).then(() => { copy.textContent = "Copied"; });
    return;
  }
  const confirmed = event.target.closest("[data-confirm]");
  if (confirmed && !window.confirm(confirmed.dataset.confirm)) {
    event.preventDefault();
  }
});
