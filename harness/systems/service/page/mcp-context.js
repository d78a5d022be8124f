// The MCP context filter of the progress page: a mirror of harness/systems/chain/mcp_context.py's
// parse_context / filter_context, so the page shows a message as a user should read it —
// without RAG citations, other ephemeral blocks and reasoning traces — and can say how
// many citations it set aside. Keep the two in step (tests compare them on the same input).
//
// A block:  <mcp:context type="resource" uri="..." ephemeral="true"> JSON or text </mcp:context>

export const CITATION_SCHEMA = "urn:am7:vector:search-result";

const BLOCK = /<mcp:context\b([^>]*)>([\s\S]*?)<\/mcp:context>/g;
const ATTRIBUTE = /([\w:-]+)="([^"]*)"/g;
const ENTITIES = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
const INSTRUCTIONS = /<\|instruction_start\|>[\s\S]*?<\|instruction_end\|>/g;

// Python's html.unescape, for the entities html.escape writes (and numeric ones).
function unescapeHtml(text) {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, name) => {
    if (name[0] === "#") {
      const code = name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return String.fromCodePoint(code);
    }
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

function parseBody(raw) {
  const body = raw.trim();
  try {
    return JSON.parse(body);
  } catch {
    return body.replaceAll("<\\/mcp:context", "</mcp:context");
  }
}

function schemaOf(block) {
  const data = block.data;
  return data !== null && typeof data === "object" && !Array.isArray(data) ? data.schema : undefined;
}

// Python's html.escape (quote=True).
function escapeHtml(text) {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
             .replace(/"/g, "&quot;").replace(/'/g, "&#x27;");
}

function render(block) {
  let attributes = `type="${escapeHtml(block.type)}"`;
  if (block.uri !== undefined) attributes += ` uri="${escapeHtml(block.uri)}"`;
  if (block.ephemeral) attributes += ' ephemeral="true"';
  const body = typeof block.data === "string"
    ? block.data.replaceAll("</mcp:context", "<\\/mcp:context")
    : JSON.stringify(block.data).replaceAll("</", "<\\/");
  return `<mcp:context ${attributes}>\n${body}\n</mcp:context>`;
}

/** Split text into its MCP context blocks and the rest ({content, blocks}). Never throws. */
export function parseContext(text) {
  const blocks = [];
  for (const match of text.matchAll(BLOCK)) {
    const attributes = {};
    for (const [, key, value] of match[1].matchAll(ATTRIBUTE)) attributes[key] = unescapeHtml(value);
    blocks.push({ type: attributes.type ?? "resource", uri: attributes.uri, ephemeral: attributes.ephemeral === "true",
                  data: parseBody(match[2]) });
  }
  const content = text.replace(BLOCK, "").replace(/\n{3,}/g, "\n\n").trim();
  return { content, blocks };
}

/** Text as a user should read it: {content, citations, reasoning, resources}. */
export function filterContext(text, { showEphemeral = false, showReasoning = false } = {}) {
  const parsed = parseContext(text);
  const citations = parsed.blocks.filter((b) => schemaOf(b) === CITATION_SCHEMA);
  const reasoning = parsed.blocks.filter((b) => b.type === "reasoning");
  const resources = parsed.blocks.filter((b) => b.type === "resource" && schemaOf(b) !== CITATION_SCHEMA);
  const shown = parsed.blocks.filter((b) => (b.type === "reasoning" && showReasoning)
                                            || (b.type !== "reasoning" && showEphemeral));
  let content = parsed.content;
  if (shown.length) content = [content, ...shown.map(render)].join("\n").trim();
  return { content, citations, reasoning, resources };
}

/** filterContext for a preview cut short: a block opened but never closed is dropped too. */
export function filterPreview(text) {
  return filterContext(text ?? "").content.replace(/<mcp:context\b[\s\S]*$/, "").trim();
}

/** The text without the mock's instruction blocks (as harness.systems.quoting drops them). */
export function stripInstructions(text) {
  return text.replace(INSTRUCTIONS, "").trim();
}
