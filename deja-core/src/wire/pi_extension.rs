//! The pi extension deja writes for the pi-family harnesses that load pi's extension
//! `.ts` modules unchanged (gjc, kimchi, senpi, prime): the pi page's shape, `export
//! default function (pi)` with
//!
//! | event | what |
//! | --- | --- |
//! | `before_agent_start` | until a digest went in once this session, `deja hook-session-start`; then `deja hook-prompt` for each prompt; a hit is returned as `{message: {customType: "deja-recall", content, display: false}}` and its receipt shown with `ctx.ui.notify` |
//! | `tool_result` | after a failed tool, `deja hook-tool-after`; after a tool naming a file, `deja hook-tool`; the block appended to the result's `content` |
//! | `session_compact` | `deja hook-precompact` |
//! | `/deja` (`pi.registerCommand`) | `deja search <args>` (120 s), shown with `ctx.ui.notify` |
//!
//! Hook calls use `execFileSync` with a 10 s timeout and swallow every error:
//! extensions run in-process, and a throw would take the session down.
//!
//! Checked with pi itself (`@earendil-works/pi-coding-agent` 1.6.0, 2026-12-01), the
//! loader these harnesses inherit: the module loaded from `~/.pi/agent/extensions/`, and
//! a `pi -p` turn against a mock model carried the `before_agent_start` message with
//! deja's `<deja-recall>` block.

use super::{json, WireContext};

/// The extension's text; `target` (`gjc-auto`) names the install target in its header.
pub fn text(cx: &WireContext, target: &str) -> String {
    let exe = json!(cx.exe()).to_string();
    format!(
        r#"// deja: recall from your past coding-agent sessions. Written by `deja install {target}`;
// `deja uninstall {target}` removes it.
import {{ execFileSync }} from "node:child_process";

const DEJA = {exe};

function run(args, payload, timeout = 10000) {{
  try {{
    return execFileSync(DEJA, args, {{ input: JSON.stringify(payload ?? {{}}), encoding: "utf8", timeout, stdio: ["pipe", "pipe", "ignore"] }});
  }} catch {{
    return "";
  }}
}}

function hook(args, payload) {{
  try {{
    const v = JSON.parse(run(args, payload));
    return {{ text: v?.hookSpecificOutput?.additionalContext ?? "", receipt: v?.systemMessage ?? "" }};
  }} catch {{
    return {{ text: "", receipt: "" }};
  }}
}}

function sessionOf(event, ctx) {{
  try {{
    return event?.sessionId ?? event?.session_id ?? ctx?.session?.id ?? ctx?.sessionManager?.getSessionId?.();
  }} catch {{
    return undefined;
  }}
}}

function textOf(content) {{
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.filter((p) => p?.type === "text" && typeof p.text === "string").map((p) => p.text).join("\n");
}}

export default function (pi) {{
  const digested = new Set();

  pi.on("before_agent_start", async (event, ctx) => {{
    try {{
      const session_id = sessionOf(event, ctx);
      const cwd = ctx?.cwd ?? process.cwd();
      let got = {{ text: "", receipt: "" }};
      const key = session_id ?? cwd;
      if (!digested.has(key)) {{
        got = hook(["hook-session-start"], {{ session_id, cwd, hook_event_name: "SessionStart" }});
        if (got.text) digested.add(key);
      }}
      if (!got.text && typeof event?.prompt === "string") {{
        got = hook(["hook-prompt"], {{ prompt: event.prompt, session_id, cwd, hook_event_name: "UserPromptSubmit" }});
      }}
      if (!got.text) return;
      if (got.receipt) ctx?.ui?.notify?.(got.receipt, "info");
      return {{ message: {{ customType: "deja-recall", content: got.text, display: false }} }};
    }} catch {{
      return;
    }}
  }});

  pi.on("tool_result", async (event, ctx) => {{
    try {{
      const session_id = sessionOf(event, ctx);
      const cwd = ctx?.cwd ?? process.cwd();
      const input = event?.input ?? {{}};
      const base = {{ session_id, cwd, tool_name: event?.toolName, tool_input: input }};
      let got;
      if (event?.isError) {{
        got = hook(["hook-tool-after"], {{ ...base, hook_event_name: "PostToolUse", tool_response: {{ is_error: true, output: textOf(event?.content) }} }});
      }} else if (typeof (input.path ?? input.file_path ?? input.filePath) === "string") {{
        got = hook(["hook-tool"], {{ ...base, hook_event_name: "PreToolUse" }});
      }}
      if (!got?.text || !Array.isArray(event?.content)) return;
      return {{ content: [...event.content, {{ type: "text", text: got.text }}] }};
    }} catch {{
      return;
    }}
  }});

  pi.on("session_compact", async (event, ctx) => {{
    try {{
      run(["hook-precompact"], {{ session_id: sessionOf(event, ctx), cwd: ctx?.cwd ?? process.cwd(), hook_event_name: "PreCompact" }});
    }} catch {{}}
  }});

  pi.registerCommand("deja", {{
    description: "Search your own past coding sessions (deja)",
    handler: async (args, ctx) => {{
      try {{
        const words = String(args ?? "").trim();
        if (!words) {{
          ctx?.ui?.notify?.("usage: /deja <words>", "info");
          return;
        }}
        const out = execFileSync(DEJA, ["search", words], {{ encoding: "utf8", timeout: 120000, stdio: ["ignore", "pipe", "pipe"] }});
        ctx?.ui?.notify?.(out.trim() || "deja: no past sessions match", "info");
      }} catch (e) {{
        ctx?.ui?.notify?.(`deja: ${{String(e?.stderr ?? e?.message ?? e).trim()}}`, "warning");
      }}
    }},
  }});
}}
"#
    )
}
