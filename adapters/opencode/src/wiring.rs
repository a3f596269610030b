//! opencode's wiring (its page, "Wiring"), under `<config>` =
//! `${XDG_CONFIG_HOME:-~/.config}/opencode`:
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `opencode` | `<config>/opencode.json` (`opencode.jsonc` when only that exists) | `mcp.deja = {"type": "local", "command": ["<exe>", "mcp"]}` |
//! | `opencode` | `<config>/skills/deja-history/SKILL.md` | the skill |
//! | `opencode` | `<config>/commands/deja.md` | `/deja` (`$ARGUMENTS`) |
//! | `opencode-auto` | `<config>/plugins/deja.js` | the plugin: digest folded into the first system element, per-prompt recall appended to the last prompt, `hook-precompact` on compaction |
//!
//! Both config files are JSONC to the engine's CST splice, so comments survive either
//! way. Any file in `plugins/` makes opencode npm-install `@opencode-ai/plugin` into
//! `<config>` at its next start (`package.json`, `package-lock.json`, `node_modules/`);
//! those are opencode's files and uninstall leaves them (the notes say so).

use std::path::PathBuf;

use deja_core::wire::{command_markdown, json, skill_text, Edit, Surface, WireContext, Wiring};
use deja_core::StoreEnv;

pub struct OpencodeWiring;

/// `${XDG_CONFIG_HOME:-~/.config}/opencode`.
fn config_dir(env: &StoreEnv) -> PathBuf {
    env.xdg_config_home().join("opencode")
}

/// `opencode.json`, or `opencode.jsonc` when only that exists.
fn config_file(env: &StoreEnv) -> PathBuf {
    let dir = config_dir(env);
    let (json, jsonc) = (dir.join("opencode.json"), dir.join("opencode.jsonc"));
    if !json.exists() && jsonc.is_file() {
        jsonc
    } else {
        json
    }
}

/// The plugin (opencode 1.x shape: a named async factory returning the hooks). Every
/// call is bounded and every error swallowed: memory must never break a turn.
fn plugin(cx: &WireContext) -> String {
    let exe = json!(cx.exe()).to_string();
    format!(
        r#"// deja: recall from your past coding-agent sessions. Written by `deja install opencode-auto`;
// `deja uninstall opencode-auto` removes it.
import {{ spawnSync }} from "node:child_process";

const DEJA = {exe};

function run(args, payload) {{
  try {{
    const r = spawnSync(DEJA, args, {{ input: JSON.stringify(payload ?? {{}}), encoding: "utf8", timeout: 10000 }});
    return r.status === 0 && typeof r.stdout === "string" ? r.stdout : "";
  }} catch {{
    return "";
  }}
}}

function envelope(out) {{
  try {{
    const v = JSON.parse(out);
    return {{ context: v?.hookSpecificOutput?.additionalContext ?? "", receipt: v?.systemMessage ?? "" }};
  }} catch {{
    return {{ context: "", receipt: "" }};
  }}
}}

export const DejaPlugin = async ({{ client, directory }}) => {{
  const digests = new Map();
  const recalls = new Map();
  const toast = async (message) => {{
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
          const {{ context, receipt }} = envelope(run(["hook-session-start"], {{ session_id: sid, cwd: directory, hook_event_name: "SessionStart" }}));
          digests.set(sid, context);
          if (context && receipt) await toast(receipt);
        }}
        const context = digests.get(sid);
        if (!context) return;
        // One system element: OpenAI-compatible endpoints reject a second one.
        if (output.system.length > 0) output.system[0] = `${{context}}\n\n${{output.system[0]}}`;
        else output.system.push(context);
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
          recalls.set(key, envelope(run(["hook-prompt"], {{ prompt, session_id: sid, cwd: directory, hook_event_name: "UserPromptSubmit" }})).context);
        }}
        const recall = recalls.get(key);
        if (recall) texts[texts.length - 1].text = `${{texts[texts.length - 1].text}}\n\n${{recall}}`;
      }} catch {{}}
    }},
    "experimental.session.compacting": async (input) => {{
      try {{
        run(["hook-precompact"], {{ session_id: input?.sessionID, cwd: directory, hook_event_name: "PreCompact" }});
      }} catch {{}}
    }},
  }};
}};
"#
    )
}

impl Wiring for OpencodeWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::AutoRecall, Surface::Skill, Surface::Command]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        config_dir(env).is_dir() || env.xdg_data_home().join("opencode").is_dir()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        let dir = config_dir(cx.env);
        vec![
            Edit::json_member(config_file(cx.env), &["mcp", "deja"], json!({"type": "local", "command": [cx.exe(), "mcp"]})),
            Edit::owned_file(dir.join("skills/deja-history/SKILL.md"), skill_text(cx)),
            Edit::owned_file(dir.join("commands/deja.md"), command_markdown(cx, false)),
        ]
    }

    fn auto(&self, cx: &WireContext) -> Vec<Edit> {
        vec![Edit::owned_file(config_dir(cx.env).join("plugins/deja.js"), plugin(cx))]
    }

    fn notes(&self) -> &'static [&'static str] {
        &[
            "restart opencode; `opencode mcp list` should show `✓ deja connected`",
            "opencode-auto: with a plugin in its config dir opencode npm-installs `@opencode-ai/plugin` there at its next start \
             (needs the network, about a minute; offline the start hangs — `OPENCODE_PURE=1` skips plugins). The \
             `package.json`, lock file and `node_modules/` it writes are opencode's: uninstall leaves them",
        ]
    }
}
