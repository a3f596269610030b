// deja's Cline plugin: written by `deja install cline-auto`, removed by `deja uninstall cline-auto`.
// Recall from the user's past coding-agent sessions, framed as untrusted history.
import { execFileSync } from "node:child_process";

const EXE = __DEJA_EXE__;

// Runs one deja hook with a JSON payload; any failure is silence.
function hook(args, payload) {
  try {
    return execFileSync(EXE, args, {
      input: JSON.stringify(payload),
      encoding: "utf8",
      timeout: 5000,
      stdio: ["pipe", "pipe", "ignore"],
    });
  } catch {
    return "";
  }
}

function textOf(message) {
  const content = message && message.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((part) => part && part.type === "text" && typeof part.text === "string")
    .map((part) => part.text)
    .join("\n");
}

function stripInputTags(text) {
  return text.replace(/<\/?user_input[^>]*>/g, "").trim();
}

export default {
  name: "deja",
  manifest: { capabilities: ["rules", "commands", "skills"] },
  setup(api, ctx) {
    const sessionId = () => (ctx && ctx.session && ctx.session.sessionId) || undefined;
    const cwd = () => (ctx && ctx.workspaceInfo && ctx.workspaceInfo.rootPath) || process.cwd();
    // `build` runs more than once per prompt and only its last return counts: the
    // recall is cached per prompt, never skipped.
    const recalled = new Map();

    api.registerMessageBuilder({
      id: "deja:prompt",
      name: "deja:prompt",
      source: "deja",
      build(messages) {
        if (!Array.isArray(messages)) return messages;
        let at = messages.length - 1;
        while (at >= 0 && !(messages[at] && messages[at].role === "user" && stripInputTags(textOf(messages[at])))) at--;
        if (at < 0) return messages;
        const message = messages[at];
        const prompt = stripInputTags(textOf(message));
        if (prompt.includes("<deja-recall")) return messages;
        if (!recalled.has(prompt)) {
          recalled.set(prompt, hook(["hook-prompt", "--plain"], { prompt, session_id: sessionId(), cwd: cwd() }));
        }
        const recall = recalled.get(prompt);
        if (!recall) return messages;
        const parts = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
        const out = messages.slice();
        out[at] = { ...message, content: [{ type: "text", text: recall }, ...parts] };
        return out;
      },
    });

    api.registerRule({
      id: "deja:recall",
      source: "deja",
      content: () => hook(["hook-session-start", "--plain"], { session_id: sessionId(), cwd: cwd() }),
    });

    api.registerCommand({
      name: "deja",
      description: "Search past coding-agent sessions on this machine (deja)",
      handler: (input) => {
        const words = String(input || "").trim();
        if (!words) return "Usage: /deja <words>";
        try {
          return execFileSync(EXE, ["search", words], { encoding: "utf8", timeout: 10000, stdio: ["ignore", "pipe", "pipe"] });
        } catch (e) {
          return `deja search failed: ${(e && e.message) || e}`;
        }
      },
    });
  },
};
