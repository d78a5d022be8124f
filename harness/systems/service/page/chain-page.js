// The chain progress page: sends a query as a chain request over the WebSocket, shows
// the chain's progress live (bar, spinner on the running step, the steps with their
// status icons, type labels and summaries) and, when the chain has ended, the result as
// a normal assistant message — citations and reasoning filtered out, a citation count
// instead. Message shapes: docs/chain-service.md.

import { filterContext, filterPreview, stripInstructions } from "./mcp-context.js";

const LABELS = { TOOL: "Tool", LLM: "LLM", RAG_QUERY: "RAG", POLICY_GATE: "Gate", UNKNOWN: "Step" };
const ICONS = {
  PENDING: ["○", "pending"], EXECUTING: ["", "running"], COMPLETED: ["✓", "done"],
  FAILED: ["✗", "failed"], GATED: ["⛔", "gated"], SKIPPED: ["⏭", "skipped"], UNKNOWN: ["?", "unknown"],
};

const $ = (id) => document.getElementById(id);

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  node.append(...children);
  return node;
}

function plural(count, word) {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

/** One chain's progress, fed by its events (the seed's newChainStream). */
class ChainStream {
  constructor(started) {
    this.planId = started.planId;
    this.planUri = started.planUri;
    this.steps = new Map();  // number -> {type, status, summary}
    for (const step of started.steps ?? []) {
      this.steps.set(step.number, { type: step.type, status: step.status, summary: step.summary });
    }
    this.currentStep = 0;
    this.totalSteps = started.totalSteps ?? this.steps.size;
    this.isRunning = true;
    this.ended = "";  // how the chain ended, once its ending event has come
    this.finished = false;  // its result has come: the progress view gives way to it
    this.note = this.steps.size ? "" : "The model is planning the steps.";
  }

  step(event, status, summary) {
    const known = this.steps.get(event.stepNumber) ?? {};
    this.steps.set(event.stepNumber, {
      type: event.stepType ?? known.type ?? "UNKNOWN",
      status,
      summary: summary ?? known.summary ?? "",
    });
  }

  onstepStart(event) {
    this.currentStep = event.stepNumber;
    this.totalSteps = event.totalSteps;
    this.step(event, "EXECUTING", event.stepSummary);
  }

  onstepComplete(event) {
    this.totalSteps = event.totalSteps;
    this.step(event, event.stepStatus ?? "COMPLETED", event.stepSummary ?? event.outputPreview);
  }

  onstepError(event) {
    this.step(event, "FAILED", event.errorMessage);
  }

  onstepsInserted(event) {
    // New steps go right after the current one: the planned steps after it move down.
    // Step 0 is the plan itself: the model planned the steps of a query-only request.
    const added = event.totalSteps - this.totalSteps;
    const moved = [...this.steps].filter(([number]) => number > event.stepNumber);
    for (const [number] of moved) this.steps.delete(number);
    for (const [number, step] of moved) this.steps.set(number + added, step);
    const summary = event.stepNumber ? "inserted by the model" : "planned by the model";
    for (let n = 1; n <= added; n += 1) {
      this.steps.set(event.stepNumber + n, { type: "UNKNOWN", status: "PENDING", summary });
    }
    this.totalSteps = event.totalSteps;
    this.note = event.stepSummary ?? "";
  }

  onroutingError(event) {
    this.note = event.errorMessage ?? "";
  }

  // The endings: the progress view says how the chain ended (and why) until its result comes.
  end(event, how) {
    this.isRunning = false;
    this.ended = how;
    this.note = event.errorMessage ?? "";
  }

  onchainComplete(event) { this.end(event, event.errorMessage ? "Halted" : "Completed"); }

  onchainMaxSteps(event) { this.end(event, "Stopped at the step limit"); }

  onchainStalled(event) { this.end(event, "Stalled"); }

  onchainCancelled(event) {
    for (const step of this.steps.values()) if (step.status === "EXECUTING") step.status = "SKIPPED";
    this.end(event, "Cancelled");
  }
}

function stepItem(number, type, status, summary) {
  const [glyph, name] = ICONS[status] ?? ICONS.UNKNOWN;
  return element("li", { "data-step": String(number), "data-status": status },
    element("span", { class: status === "EXECUTING" ? "icon spinner" : `icon ${name}`, role: "img",
                      "aria-label": name, text: glyph }),
    element("span", { class: "label", text: LABELS[type] ?? type }),
    element("span", { class: "summary", text: filterPreview(summary) }));
}

class ChainPage {
  constructor() {
    this.socket = null;
    this.authenticated = false;
    this.pending = null;  // a chain request waiting for the socket
    this.stream = null;
    const token = new URLSearchParams(location.hash.slice(1)).get("token");
    if (token) {
      $("token").value = token;
      history.replaceState(null, "", location.pathname + location.search);  // not left in the address bar
    }
    $("chain-form").addEventListener("submit", (e) => { e.preventDefault(); this.send(); });
    $("cancel").addEventListener("click", () => this.cancel());
  }

  say(text, kind = "info") {
    const status = $("status");
    status.textContent = text;
    status.dataset.kind = kind;
  }

  request() {
    const request = { type: "chain", planQuery: $("query").value };
    const steps = $("steps-json").value.trim();
    if (steps) request.steps = JSON.parse(steps);
    const references = $("data-references").value.split("\n").map((s) => s.trim()).filter(Boolean);
    if (references.length) request.dataReferences = references;
    const maxSteps = parseInt($("max-steps").value, 10);
    if (maxSteps) request.maxSteps = maxSteps;
    return request;
  }

  send() {
    if (this.stream?.isRunning) return;
    let request;
    try {
      request = this.request();
    } catch (error) {
      this.say(`The steps are not valid JSON: ${error.message}`, "error");
      return;
    }
    this.pending = request;
    $("send").disabled = true;
    this.addMessage("user", stripInstructions(request.planQuery));
    $("query").value = "";
    this.say("Sending the chain request…");
    if (this.socket && this.authenticated) this.flush();
    else if (!this.socket) this.connect();
  }

  connect() {
    const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/chat/chain/ws`;
    const socket = new WebSocket(url);
    this.socket = socket;
    this.authenticated = false;
    socket.addEventListener("open", () => socket.send(JSON.stringify({ type: "auth", token: $("token").value })));
    socket.addEventListener("message", (e) => this.receive(JSON.parse(e.data)));
    socket.addEventListener("close", () => {
      if (this.socket === socket) this.socket = null;
      $("send").disabled = false;
    });
  }

  flush() {
    if (this.pending) this.socket.send(JSON.stringify(this.pending));
    this.pending = null;
  }

  cancel() {
    if (this.stream?.isRunning && this.socket) {
      this.socket.send(JSON.stringify({ type: "cancel", planId: this.stream.planId }));
      this.say("Cancelling…");
    }
  }

  receive(message) {
    if (Array.isArray(message.chirps)) {
      const [kind, eventType, json] = message.chirps;
      if (kind !== "chainEvent" || !this.stream) return;
      const event = JSON.parse(json);
      if (event.mcpContextUri !== this.stream.planUri) return;
      this.stream[`on${eventType}`]?.(event);
      this.renderProgress();
      return;
    }
    switch (message.type) {
      case "authenticated":
        this.authenticated = true;
        this.say(`Signed in as ${message.user} (${message.organization}).`);
        this.flush();
        break;
      case "chainStarted":
        this.stream = new ChainStream(message);
        this.say("The chain is running.");
        this.renderProgress();
        break;
      case "chainResult":
        if (this.stream && message.planId === this.stream.planId) this.finish(message);
        break;
      case "error":
        this.say(`Error ${message.status}: ${message.detail}`, "error");
        if (!this.stream?.isRunning) $("send").disabled = false;
        break;
      default:
        break;
    }
  }

  renderProgress() {
    const stream = this.stream;
    $("progress").hidden = stream.finished;
    $("cancel").hidden = !stream.isRunning;
    const total = Math.max(stream.totalSteps, stream.currentStep, 1);
    const bar = $("progress-bar");
    bar.max = total;
    bar.value = stream.currentStep;
    const at = `Step ${stream.currentStep} of ${total}`;
    $("progress-text").textContent = stream.ended ? `${stream.ended} at ${at.toLowerCase()}` : at;
    $("progress-note").textContent = filterPreview(stream.note);
    const items = [];
    for (let number = 1; number <= total; number += 1) {
      const step = stream.steps.get(number);
      items.push(step ? stepItem(number, step.type, step.status, step.summary)
                      : stepItem(number, "UNKNOWN", "PENDING", "waiting"));
    }
    $("steps").replaceChildren(...items);
  }

  finish(result) {
    this.stream.isRunning = false;
    this.stream.finished = true;
    $("progress").hidden = true;
    $("send").disabled = false;
    const messages = result.chatHistory?.messages ?? [];
    const citations = messages.reduce((n, m) => n + filterContext(m.content).citations.length, 0);
    const answer = [...messages].reverse().find((m) => m.role === "assistant");
    let text;
    if (result.status === "completed" && answer) text = filterContext(answer.content).content;
    else if (result.status === "gated") text = `The chain was halted by a policy gate: ${result.error}`;
    else if (result.status === "cancelled") text = "The chain was cancelled.";
    else if (result.status === "maxSteps") text = `The chain stopped at its step limit: ${result.error}`;
    else if (result.status === "stalled") text = `The chain stalled: ${result.error}`;
    else text = `The chain failed: ${result.error ?? "no reason given"}`;
    const reasoning = answer ? filterContext(answer.content).reasoning.length : 0;
    const notes = [];
    if (citations) notes.push(plural(citations, "citation"));
    if (reasoning) notes.push("reasoning hidden");
    const steps = element("details", { class: "chain-steps" },
      element("summary", { text: `${plural(result.steps.length, "step")} (${result.status})` }),
      element("ol", {}, ...result.steps.map((s) => stepItem(s.number, s.type, s.status, s.summary))));
    this.addMessage("assistant", text, result.status, notes.join(" · "), steps);
    this.say(`The chain ${result.status === "completed" ? "completed" : `ended: ${result.status}`}.`);
  }

  addMessage(role, text, status = "", note = "", ...extra) {
    const message = element("article", { class: `message ${role}`, "data-role": role },
      element("div", { class: "content", text }));
    if (status) message.dataset.status = status;
    if (note) message.append(element("p", { class: "context-note", text: note }));
    message.append(...extra);
    $("chat").append(message);
  }
}

window.chainPage = new ChainPage();
