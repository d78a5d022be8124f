// The served review page's one script: accept / reject buttons post a decision to the
// review server, which writes the golden; the page then shows what is decided.
"use strict";

const status = document.getElementById("status");

function show(state) {
  for (const golden of state.goldens) {
    const section = document.querySelector(`section[data-path="${CSS.escape(golden.path)}"]`);
    if (!section) continue;
    for (const holder of section.querySelectorAll("[data-key]")) {
      const decision = holder.dataset.key === "golden" ? golden.whole : golden.decisions[holder.dataset.key];
      if (decision) holder.dataset.decision = decision;
      else delete holder.dataset.decision;
    }
    section.dataset.written = golden.written ? "yes" : "no";
  }
}

async function post(action, body) {
  const response = await fetch(action, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await response.json();
  status.textContent = answer.message;
  status.dataset.ok = response.ok ? "yes" : "no";
  if (response.ok && answer.goldens) show(answer);
  return response.ok;
}

document.addEventListener("click", async (event) => {
  const button = event.target.closest("button");
  if (!button) return;
  if (button.id === "finish") {
    if (await post("finish", {})) {
      for (const b of document.querySelectorAll("button")) b.disabled = true;
    }
    return;
  }
  const section = button.closest("section[data-path]");
  const holder = button.closest("[data-key]");
  if (!section || !holder || !button.dataset.decision) return;
  await post("decide", { path: section.dataset.path, key: holder.dataset.key, decision: button.dataset.decision });
});

fetch("state").then((response) => response.json()).then(show);
