//! omp's wiring (its page, "Wiring"), under `<agent>` = `~/.omp/agent` (the default
//! profile; named profiles read their own `mcp.json`):
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `omp` | `<agent>/mcp.json` | `mcpServers.deja` = `<exe> mcp` (offered as the `xd://mcp__deja_deja` device); plain JSON only: omp ignores the whole file at a `//` comment, so deja refuses to add to such a file and doctor names it |
//! | `omp` | `~/.agents/skills/deja-history/SKILL.md` | the shared skill (omp's `agents` provider reads it) |
//! | `omp` | `<agent>/commands/deja.md` | `/deja` (`$ARGUMENTS`) |
//! | `omp-auto` | `<agent>/extensions/deja/index.js` | extension: on `context`, the last user message's recall (`deja hook-prompt --plain`) prepended to it |
//!
//! `context` fires once per provider request, so the extension caches the recall per
//! prompt; it is the only seam that reaches the model (`input` never fires in print
//! mode, `before_agent_start` cannot change the context).

use std::path::PathBuf;

use deja_core::wire::{command_markdown, json, shared_skill, Edit, Surface, WireContext, Wiring};
use deja_core::StoreEnv;

pub struct OmpWiring;

/// `~/.omp/agent`.
fn agent_dir(env: &StoreEnv) -> PathBuf {
    env.home().join(".omp/agent")
}

/// The extension: every error swallowed (extensions run in-process).
fn extension(cx: &WireContext) -> String {
    format!(
        r#"// deja: recall from your past coding-agent sessions. Written by `deja install omp-auto`;
// `deja uninstall omp-auto` removes it.
import {{ execFileSync }} from "node:child_process";

const DEJA = {exe};

function textOf(content) {{
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.filter((p) => p?.type === "text" && typeof p.text === "string").map((p) => p.text).join("\n");
}}

export default function extension(pi) {{
  const cache = new Map();
  pi.on("context", async (event, ctx) => {{
    try {{
      const messages = Array.isArray(event?.messages) ? event.messages : [];
      let at = -1;
      for (let i = messages.length - 1; i >= 0; i--) {{
        if (messages[i]?.role === "user") {{
          at = i;
          break;
        }}
      }}
      if (at < 0) return;
      const prompt = textOf(messages[at].content);
      if (!prompt.trim()) return;
      if (!cache.has(prompt)) {{
        let recall = "";
        try {{
          recall = execFileSync(DEJA, ["hook-prompt", "--plain"], {{
            input: JSON.stringify({{ prompt, cwd: ctx?.cwd ?? process.cwd(), hook_event_name: "UserPromptSubmit" }}),
            encoding: "utf8",
            timeout: 10000,
            stdio: ["pipe", "pipe", "ignore"],
          }}).trim();
        }} catch {{}}
        cache.set(prompt, recall);
      }}
      const recall = cache.get(prompt);
      if (!recall) return;
      const message = messages[at];
      const content = typeof message.content === "string" ? [{{ type: "text", text: message.content }}] : [...message.content];
      const copy = [...messages];
      copy[at] = {{ ...message, content: [{{ type: "text", text: recall }}, ...content] }};
      return {{ messages: copy }};
    }} catch {{
      return;
    }}
  }});
}}
"#,
        exe = json!(cx.exe())
    )
}

impl Wiring for OmpWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::AutoRecall, Surface::Skill, Surface::Command]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        env.home().join(".omp").is_dir()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        let agent = agent_dir(cx.env);
        vec![
            // omp parses mcp.json as plain JSON and drops every server in it at a comment.
            Edit::json_member(agent.join("mcp.json"), &["mcpServers", "deja"], cx.mcp_entry(false)).strict_json(),
            shared_skill(cx),
            Edit::owned_file(agent.join("commands/deja.md"), command_markdown(cx, false)),
        ]
    }

    fn auto(&self, cx: &WireContext) -> Vec<Edit> {
        vec![Edit::owned_file(agent_dir(cx.env).join("extensions/deja/index.js"), extension(cx))]
    }

    fn notes(&self) -> &'static [&'static str] {
        &[
            "omp has no MCP listing (`omp mcp list` starts a session); a headless turn (`omp -p`) shows deja as the \
             `xd://mcp__deja_deja` device",
            "named profiles (`omp --profile`) read their own `mcp.json`: this wrote the default profile's",
        ]
    }
}
