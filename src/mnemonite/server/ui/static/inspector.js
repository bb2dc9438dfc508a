// mnemonite inspector: the only script the pages load (the Content-Security-Policy allows no other).
// "Facts over time" has two clocks on two axes; a click replays the clock clicked at the moment clicked:
// on the world-time axis (valid) what was true then, on the system-time axis (believed) what memory believed then.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const table = document.getElementById("facts");
  const form = document.getElementById("replay-form");
  if (!table || !form) return;
  const fields = { valid: form.elements.namedItem("valid_at"), believed: form.elements.namedItem("as_of") };
  for (const head of table.querySelectorAll("th[data-axis]")) {
    const kind = head.dataset.axis;
    const start = Date.parse(head.dataset.start);
    const end = Date.parse(head.dataset.end);
    for (const svg of table.querySelectorAll(`svg[data-axis="${kind}"]`)) {
      svg.addEventListener("click", (event) => {
        const box = svg.getBoundingClientRect();
        const share = Math.min(Math.max((event.clientX - box.left) / box.width, 0), 1);
        for (const field of Object.values(fields)) field.value = "";  // one clock at a time: the other is now
        fields[kind].value = new Date(start + share * (end - start)).toISOString().slice(0, 23);
        form.submit();
      });
    }
  }
});
