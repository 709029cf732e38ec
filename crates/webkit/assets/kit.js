// Copy buttons and confirmations; the pages work without this script too.
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
