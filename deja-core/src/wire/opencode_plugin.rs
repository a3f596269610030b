//! The plugin deja writes for the opencode-shaped harnesses (opencode, Kilo): an ES
//! module in the config's `plugins/` directory, in the opencode 1.x shape (a named
//! async factory returning the hooks; Kilo rejects the 2.x default export):
//!
//! | hook | what |
//! | --- | --- |
//! | `experimental.chat.system.transform` | the session's digest (`deja hook-session-start`, once per session) prepended to the one system element |
//! | `experimental.chat.messages.transform` | `deja hook-prompt` for the last user prompt, appended to it (once per prompt) |
//! | `tool.execute.before` / `.after` (`tool_results`) | after a failed `bash`, `deja hook-tool-after`; after a file tool, `deja hook-tool`; the block appended to the tool's output |
//! | `experimental.session.compacting` | `deja hook-precompact` |
//!
//! Every call is bounded (10 s) and every error swallowed: memory must never break a turn.
//! Checked against opencode 1.18.33 and Kilo CLI 7.8.1 (a turn against a mock model
//! carried the digest in the system prompt and the recall after the prompt).

use super::{json, WireContext};

/// JavaScript lines the tool-result hooks need.
const FILE_TOOLS: &str =
    "const FILE_TOOLS = new Set([\"read\", \"edit\", \"write\", \"multiedit\", \"patch\", \"notebook_read\", \"notebook_edit\"]);\n";
const CALLS: &str = "  const calls = new Map();\n";
const TOOL_HOOKS: &str = r#"    "tool.execute.before": async (input, output) => {
      try {
        if (input?.callID) calls.set(input.callID, output?.args ?? {});
      } catch {}
    },
    "tool.execute.after": async (input, output) => {
      try {
        const args = calls.get(input?.callID) ?? input?.args ?? {};
        calls.delete(input?.callID);
        const base = { session_id: input?.sessionID, cwd: directory, tool_name: input?.tool };
        let text = "";
        if (input?.tool === "bash") {
          const exit = output?.metadata?.exit;
          if (typeof exit === "number" && exit !== 0) {
            text = context(run(["hook-tool-after"], { ...base, hook_event_name: "PostToolUse", tool_input: { command: args.command }, tool_response: { exit_code: exit, output: String(output?.output ?? "") } })).text;
          }
        } else if (FILE_TOOLS.has(input?.tool)) {
          const file = args.filePath ?? args.file_path ?? args.path;
          if (typeof file === "string") {
            text = context(run(["hook-tool"], { ...base, hook_event_name: "PreToolUse", tool_input: { file_path: file } })).text;
          }
        }
        if (text && typeof output?.output === "string") output.output = `${output.output}\n\n${text}`;
      } catch {}
    },
"#;

/// The plugin text for `target` (the `-auto` target that writes it, named in its header
/// comment); `tool_results` adds the tool-result hooks.
pub fn plugin(cx: &WireContext, target: &str, tool_results: bool) -> String {
    let exe = json!(cx.exe()).to_string();
    let (file_tools, calls, tool_hooks) = if tool_results { (FILE_TOOLS, CALLS, TOOL_HOOKS) } else { ("", "", "") };
    format!(
        r#"// deja: recall from your past coding-agent sessions. Written by `deja install {target}`;
// `deja uninstall {target}` removes it.
import {{ spawnSync }} from "node:child_process";

const DEJA = {exe};
{file_tools}
function run(args, payload) {{
  try {{
    const r = spawnSync(DEJA, args, {{ input: JSON.stringify(payload ?? {{}}), encoding: "utf8", timeout: 10000 }});
    return r.status === 0 && typeof r.stdout === "string" ? r.stdout : "";
  }} catch {{
    return "";
  }}
}}

function context(out) {{
  try {{
    const v = JSON.parse(out);
    return {{ text: v?.hookSpecificOutput?.additionalContext ?? "", receipt: v?.systemMessage ?? "" }};
  }} catch {{
    return {{ text: "", receipt: "" }};
  }}
}}

export const DejaPlugin = async ({{ client, directory }}) => {{
  const digests = new Map();
  const recalls = new Map();
{calls}  const toast = async (message) => {{
    try {{
      await client.tui.showToast({{ body: {{ message, variant: "info", duration: 6000 }} }});
    }} catch {{}}
  }};
  return {{
    "experimental.chat.system.transform": async (input, output) => {{
      try {{
        const sid = input?.sessionID;
        if (!sid || !Array.isArray(output?.system)) return;
        if (!digests.has(sid)) {{
          const got = context(run(["hook-session-start"], {{ session_id: sid, cwd: directory, hook_event_name: "SessionStart" }}));
          digests.set(sid, got.text);
          if (got.text && got.receipt) await toast(got.receipt);
        }}
        const text = digests.get(sid);
        if (!text) return;
        // One system element: OpenAI-compatible endpoints reject a second one.
        if (output.system.length > 0) output.system[0] = `${{text}}\n\n${{output.system[0]}}`;
        else output.system.push(text);
      }} catch {{}}
    }},
    "experimental.chat.messages.transform": async (_input, output) => {{
      try {{
        const messages = output?.messages ?? [];
        const last = [...messages].reverse().find((m) => m?.info?.role === "user");
        if (!last) return;
        const texts = (last.parts ?? []).filter((p) => p?.type === "text" && typeof p.text === "string");
        if (texts.length === 0) return;
        const prompt = texts.map((p) => p.text).join("\n");
        const sid = last.info.sessionID;
        const key = `${{sid}}\u0000${{prompt}}`;
        if (!recalls.has(key)) {{
          recalls.set(key, context(run(["hook-prompt"], {{ prompt, session_id: sid, cwd: directory, hook_event_name: "UserPromptSubmit" }})).text);
        }}
        const recall = recalls.get(key);
        if (recall) texts[texts.length - 1].text = `${{texts[texts.length - 1].text}}\n\n${{recall}}`;
      }} catch {{}}
    }},
{tool_hooks}    "experimental.session.compacting": async (input) => {{
      try {{
        run(["hook-precompact"], {{ session_id: input?.sessionID, cwd: directory, hook_event_name: "PreCompact" }});
      }} catch {{}}
    }},
  }};
}};
"#
    )
}
