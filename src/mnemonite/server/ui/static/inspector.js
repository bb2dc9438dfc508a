// mnemonite inspector: the only script the pages load (the Content-Security-Policy allows no other).
// Clicking a time axis on "Facts over time" replays memory as of the moment clicked.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const table = document.getElementById("facts");
  const input = document.getElementById("as-of");
  if (!table || !input || !table.dataset.start) return;
  const start = Date.parse(table.dataset.start);
  const end = Date.parse(table.dataset.end);
  for (const svg of table.querySelectorAll("svg.bars, svg.axis")) {
    svg.addEventListener("click", (event) => {
      const box = svg.getBoundingClientRect();
      const share = Math.min(Math.max((event.clientX - box.left) / box.width, 0), 1);
      input.value = new Date(start + share * (end - start)).toISOString().slice(0, 19);
      input.form.submit();
    });
  }
});
