//! pi's wiring (its page, "Wiring"), under `${PI_CODING_AGENT_DIR:-~/.pi/agent}`:
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `pi` | `mcp.json` | `mcpServers.deja` = `<exe> mcp`, read by the `pi-mcp-adapter` package (pi has no MCP of its own) |
//! | `pi` | `skills/deja-history/SKILL.md` | the skill (its body names the CLI, for pi's bash tool when MCP is absent) |
//! | `pi-auto` | `extensions/deja.ts` | an extension pi discovers: on `before_agent_start` the session-start digest once per session, then prompt recall, as a hidden `deja-recall` message the model receives; `/deja` |
//!
//! The page's footer status (`<exe> warmup-status` on `session_start`) is left out: deja
//! has no such subcommand.

use std::path::PathBuf;

use deja_core::wire::{skill_text, Edit, Surface, Value, WireContext, Wiring, SKILL_NAME};
use deja_core::StoreEnv;

pub struct PiWiring;

fn agent_dir(env: &StoreEnv) -> PathBuf {
    crate::INFO.store.dir_of(env, "PI_CODING_AGENT_DIR")
}

fn extension(cx: &WireContext) -> String {
    format!(
        r#"// deja for pi: recall from past coding-agent sessions before each agent turn, and
// /deja. Written by `deja install pi-auto`; `deja uninstall pi-auto` removes it.
import {{ execFileSync }} from "node:child_process";

const EXE = {exe};

function run(args: string[], payload?: object, timeout = 10000): string {{
  try {{
    return execFileSync(EXE, args, {{
      input: payload ? JSON.stringify(payload) : "",
      timeout,
      encoding: "utf8",
      stdio: ["pipe", "pipe", "ignore"],
    }}).trim();
  }} catch {{
    return "";
  }}
}}

// deja's hooks answer {{"systemMessage"?, "hookSpecificOutput": {{"additionalContext"}}}}.
function answer(out: string): {{ context?: string; receipt?: string }} {{
  try {{
    const v = JSON.parse(out);
    return {{ context: v?.hookSpecificOutput?.additionalContext, receipt: v?.systemMessage }};
  }} catch {{
    return {{}};
  }}
}}

export default function (pi: any) {{
  const digested = new Set<string>();

  pi.on("before_agent_start", async (event: any, ctx: any) => {{
    const session = String(event?.sessionId ?? event?.session_id ?? ctx?.session?.id ?? "");
    const payload = {{ prompt: event?.prompt ?? "", session_id: session, cwd: ctx?.cwd ?? process.cwd() }};
    let got: {{ context?: string; receipt?: string }} = {{}};
    if (!digested.has(session)) {{
      digested.add(session);
      got = answer(run(["hook-session-start"], {{ ...payload, source: "startup" }}));
    }}
    if (!got.context) got = answer(run(["hook-prompt"], payload));
    if (!got.context) return;
    if (got.receipt) ctx?.ui?.notify?.(got.receipt, "info");
    return {{ message: {{ customType: "deja-recall", content: got.context, display: false }} }};
  }});

  pi.registerCommand("deja", {{
    description: "Search past coding-agent sessions on this machine (deja)",
    handler: async (args: string, ctx: any) => {{
      const query = String(args ?? "").trim();
      const out = query ? run(["search", query], undefined, 120000) : "usage: /deja <words>";
      ctx?.ui?.notify?.(out || `deja found nothing for: ${{query}}`, "info");
    }},
  }});
}}
"#,
        exe = Value::from(cx.exe())
    )
}

impl Wiring for PiWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::AutoRecall, Surface::Skill, Surface::Command]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        agent_dir(env).is_dir()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        let dir = agent_dir(cx.env);
        vec![
            Edit::json_member(dir.join("mcp.json"), &["mcpServers", "deja"], cx.mcp_entry(false)),
            Edit::owned_file(dir.join("skills").join(SKILL_NAME).join("SKILL.md"), skill_text(cx)),
        ]
    }

    fn auto(&self, cx: &WireContext) -> Vec<Edit> {
        vec![Edit::owned_file(agent_dir(cx.env).join("extensions/deja.ts"), extension(cx))]
    }

    fn notes(&self) -> &'static [&'static str] {
        &[
            "pi reads MCP servers only through the pi-mcp-adapter package: run `pi install npm:pi-mcp-adapter` once.",
            "Restart pi to load the deja extension (pi-auto).",
        ]
    }
}
