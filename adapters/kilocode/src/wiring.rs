//! Kilo Code's wiring (its page, "Wiring"), with `<config>` =
//! `${XDG_CONFIG_HOME:-~/.config}/kilo`:
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `kilocode` | `<config>/kilo.jsonc` (`kilo.json` when that is the file present) | the CLI's `mcp.deja = {"type": "local", "command": ["<exe>", "mcp"]}` (opencode's block) |
//! | `kilocode` | `<globalStorage>/kilocode.kilo-code/settings/mcp_settings.json`, each editor host that has the extension | `mcpServers.deja` = `<exe> mcp` |
//! | `kilocode` | `~/.kilocode/skills/deja-history/SKILL.md` | the skill (Kilo's loader looks there first) |
//! | `kilocode` | `<config>/commands/deja.md` | `/deja` (`$ARGUMENTS`) |
//! | `kilocode-auto` | `<config>/plugins/deja.js` | the opencode 1.x plugin shape: digest folded into the first system element, per-prompt recall, a file's line after `read`/`edit`/`write`, the earlier fix after a failed `bash`, `hook-precompact` on compaction |
//!
//! The page's session-end stamp has no deja hook subcommand in the design, so the
//! plugin does not register one. Any file in `plugins/` makes kilo npm-install
//! `@kilocode/plugin` into `<config>` at its next start; those files are kilo's and
//! uninstall leaves them.

use std::path::PathBuf;

use deja_core::family::cline_tasks;
use deja_core::wire::{command_markdown, json, skill_text, Edit, Surface, WireContext, Wiring};
use deja_core::StoreEnv;

use crate::EXTENSION_ID;

pub struct KiloWiring;

/// `${XDG_CONFIG_HOME:-~/.config}/kilo`.
fn config_dir(env: &StoreEnv) -> PathBuf {
    env.xdg_config_home().join("kilo")
}

/// `kilo.jsonc`, or `kilo.json` when that is the file present.
fn config_file(env: &StoreEnv) -> PathBuf {
    let dir = config_dir(env);
    let (jsonc, json) = (dir.join("kilo.jsonc"), dir.join("kilo.json"));
    if !jsonc.exists() && json.is_file() {
        json
    } else {
        jsonc
    }
}

/// The extension's folder under each editor host that has it.
fn extension_dirs(env: &StoreEnv) -> Vec<PathBuf> {
    cline_tasks::global_storage_roots(env, EXTENSION_ID).into_iter().filter(|d| d.is_dir()).collect()
}

/// The plugin (opencode 1.x shape: a named async factory returning the hooks; Kilo
/// rejects the 2.x default export). Every call is bounded and every error swallowed.
fn plugin(cx: &WireContext) -> String {
    let exe = json!(cx.exe()).to_string();
    format!(
        r#"// deja: recall from your past coding-agent sessions. Written by `deja install kilocode-auto`;
// `deja uninstall kilocode-auto` removes it.
import {{ spawnSync }} from "node:child_process";

const DEJA = {exe};
const FILE_TOOLS = new Set(["read", "edit", "write", "multiedit", "patch", "notebook_read", "notebook_edit"]);

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
  const calls = new Map();
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
    "tool.execute.before": async (input, output) => {{
      try {{
        if (input?.callID) calls.set(input.callID, output?.args ?? {{}});
      }} catch {{}}
    }},
    "tool.execute.after": async (input, output) => {{
      try {{
        const args = calls.get(input?.callID) ?? input?.args ?? {{}};
        calls.delete(input?.callID);
        const base = {{ session_id: input?.sessionID, cwd: directory, tool_name: input?.tool }};
        let text = "";
        if (input?.tool === "bash") {{
          const exit = output?.metadata?.exit;
          if (typeof exit === "number" && exit !== 0) {{
            text = context(run(["hook-tool-after"], {{ ...base, hook_event_name: "PostToolUse", tool_input: {{ command: args.command }}, tool_response: {{ exit_code: exit, output: String(output?.output ?? "") }} }})).text;
          }}
        }} else if (FILE_TOOLS.has(input?.tool)) {{
          const file = args.filePath ?? args.file_path ?? args.path;
          if (typeof file === "string") {{
            text = context(run(["hook-tool"], {{ ...base, hook_event_name: "PreToolUse", tool_input: {{ file_path: file }} }})).text;
          }}
        }}
        if (text && typeof output?.output === "string") output.output = `${{output.output}}\n\n${{text}}`;
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

impl Wiring for KiloWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::AutoRecall, Surface::Skill, Surface::Command]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        config_dir(env).is_dir() || env.xdg_data_home().join("kilo").is_dir() || !extension_dirs(env).is_empty()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        let dir = config_dir(cx.env);
        let mut edits =
            vec![Edit::json_member(config_file(cx.env), &["mcp", "deja"], json!({"type": "local", "command": [cx.exe(), "mcp"]}))];
        for ext in extension_dirs(cx.env) {
            edits.push(Edit::json_member(ext.join("settings/mcp_settings.json"), &["mcpServers", "deja"], cx.mcp_entry(false)));
        }
        edits.push(Edit::owned_file(cx.env.home().join(".kilocode/skills/deja-history/SKILL.md"), skill_text(cx)));
        edits.push(Edit::owned_file(dir.join("commands/deja.md"), command_markdown(cx, false)));
        edits
    }

    fn auto(&self, cx: &WireContext) -> Vec<Edit> {
        vec![Edit::owned_file(config_dir(cx.env).join("plugins/deja.js"), plugin(cx))]
    }

    fn notes(&self) -> &'static [&'static str] {
        &[
            "restart kilo (and reload the VS Code window for the extension); `kilo mcp list` should show `✓ deja connected`",
            "kilocode-auto: with a plugin in its config dir kilo npm-installs `@kilocode/plugin` there at its next start \
             (needs the network; offline the start hangs — `KILO_PURE=1` skips plugins). The `package.json`, lock file \
             and `node_modules/` it writes are kilo's: uninstall leaves them",
        ]
    }
}
