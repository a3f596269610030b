//! OpenClaw's wiring (its page, "Wiring"), under `<state>` =
//! `${OPENCLAW_STATE_DIR:-~/.openclaw}`:
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `openclaw` | `<state>/openclaw.json` (JSON5) | `mcp.servers.deja` = `<exe> mcp` |
//! | `openclaw` | `~/.agents/skills/deja-history/SKILL.md` | the shared skill, also the `/deja-history` command; under a relocated `OPENCLAW_STATE_DIR`, `<state>/skills/deja-history/SKILL.md` |
//! | `openclaw-auto` | `<state>/hooks/deja-recall/{HOOK.md,handler.js}` | hook pack on `agent:bootstrap`: the digest as a Project Context file |
//! | `openclaw-auto` | `<state>/extensions/deja/{package.json,openclaw.plugin.json,index.mjs}` | plugin: `before_prompt_build` → `prependContext` with the prompt's recall |
//! | `openclaw-auto` | `<state>/openclaw.json` | `hooks.internal.enabled`, `hooks.internal.entries.deja-recall.enabled`, `plugins.entries.deja` = `{enabled, hooks.allowConversationAccess}` |
//!
//! Beyond the page: OpenClaw 2026.9.6 runs a non-bundled plugin's `before_prompt_build`
//! only when `plugins.entries.deja.hooks.allowConversationAccess` is `true` (without it the
//! plugin is listed `enabled` and never called); the session id is in the hook's second
//! argument, not the event. It reads the personal skills root `~/.agents/skills` only
//! when the state dir is the default `~/.openclaw` (`isDefaultStateDir`); a relocated
//! state dir reads its own managed `<state>/skills` instead, so the skill goes there.
//!
//! `openclaw.json` is JSON5; the engine's CST splice (jsonc-parser) reads comments,
//! unquoted keys and trailing commas and changes only deja's members. `plugins.allow`
//! is advisory and left alone.

use std::path::PathBuf;

use deja_core::wire::{json, shared_skill, skill_text, to_pretty, Edit, Surface, WireContext, Wiring, SKILL_NAME};
use deja_core::StoreEnv;

pub struct OpenclawWiring;

/// `${OPENCLAW_STATE_DIR:-~/.openclaw}`.
fn state_dir(env: &StoreEnv) -> PathBuf {
    crate::INFO.store.dir_of(env, "OPENCLAW_STATE_DIR")
}

const HOOK_MD: &str = "---\nname: deja-recall\ndescription: \"Hands the agent what was decided in this project before, from your past \
coding-agent sessions (deja)\"\nmetadata: {\"openclaw\": {\"emoji\": \"🧠\", \"events\": [\"agent:bootstrap\"]}}\n---\n\n\
# deja-recall\n\nOn `agent:bootstrap`, runs `deja hook-session-start --plain` and adds its digest to the Project Context as \
`DEJA-RECALL.md`. Written by `deja install openclaw-auto`; `deja uninstall openclaw-auto` removes it.\n";

/// A JS string literal for the exe.
fn exe_literal(cx: &WireContext) -> String {
    json!(cx.exe()).to_string()
}

/// The hook pack's handler: the digest as a bootstrap file; every error swallowed.
fn handler(cx: &WireContext) -> String {
    format!(
        r#"// deja: the project digest at agent bootstrap (`deja install openclaw-auto`).
import {{ spawnSync }} from "node:child_process";

const DEJA = {exe};

export default async (event) => {{
  try {{
    if (event?.type !== "agent" || event?.action !== "bootstrap") return;
    const files = event?.context?.bootstrapFiles;
    if (!Array.isArray(files)) return;
    const cwd = event?.context?.workspaceDir ?? event?.context?.cwd ?? process.cwd();
    const r = spawnSync(DEJA, ["hook-session-start", "--plain"], {{
      input: JSON.stringify({{ cwd, session_id: event?.sessionKey ?? event?.context?.sessionId, hook_event_name: "SessionStart" }}),
      encoding: "utf8",
      timeout: 10000,
    }});
    const digest = r.status === 0 && typeof r.stdout === "string" ? r.stdout.trim() : "";
    if (digest) files.push({{ name: "DEJA-RECALL.md", path: "deja://recall", content: digest, missing: false }});
  }} catch {{}}
}};
"#,
        exe = exe_literal(cx)
    )
}

/// The plugin's module: the prompt's recall prepended before the prompt is built.
fn index_mjs(cx: &WireContext) -> String {
    format!(
        r#"// deja: recall from your past coding-agent sessions (`deja install openclaw-auto`).
import {{ spawnSync }} from "node:child_process";

const DEJA = {exe};

export default {{
  id: "deja",
  name: "deja",
  register(api) {{
    api.on(
      "before_prompt_build",
      async (event, ctx) => {{
        try {{
          const prompt = typeof event?.prompt === "string" ? event.prompt : "";
          if (!prompt.trim()) return;
          const session_id = event?.sessionId ?? event?.session_id ?? event?.session?.id ?? ctx?.sessionId ?? ctx?.sessionKey;
          const cwd = event?.cwd ?? ctx?.workspaceDir ?? process.cwd();
          const r = spawnSync(DEJA, ["hook-prompt", "--plain"], {{
            input: JSON.stringify({{ prompt, session_id, cwd, hook_event_name: "UserPromptSubmit" }}),
            encoding: "utf8",
            timeout: 10000,
          }});
          const recall = r.status === 0 && typeof r.stdout === "string" ? r.stdout.trim() : "";
          if (recall) return {{ prependContext: recall }};
        }} catch {{}}
      }},
      {{ timeoutMs: 15000 }},
    );
  }},
}};
"#,
        exe = exe_literal(cx)
    )
}

impl Wiring for OpenclawWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::AutoRecall, Surface::Skill, Surface::Command]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        state_dir(env).is_dir()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        let state = state_dir(cx.env);
        // 2026.9.6 reads `~/.agents/skills` only when the state dir is the default one;
        // under a relocated `OPENCLAW_STATE_DIR` the skill goes to its managed `<state>/skills`.
        let skill = if state == cx.env.home().join(".openclaw") {
            shared_skill(cx)
        } else {
            Edit::owned_file(state.join("skills").join(SKILL_NAME).join("SKILL.md"), skill_text(cx))
        };
        vec![Edit::json_member(state.join("openclaw.json"), &["mcp", "servers", "deja"], cx.mcp_entry(false)), skill]
    }

    fn auto(&self, cx: &WireContext) -> Vec<Edit> {
        let state = state_dir(cx.env);
        let config = state.join("openclaw.json");
        let pack = state.join("hooks/deja-recall");
        let ext = state.join("extensions/deja");
        let package = json!({"name": "openclaw-deja", "type": "module", "private": true, "openclaw": {"extensions": ["./index.mjs"]}});
        let manifest = json!({
            "id": "deja",
            "name": "deja",
            "description": "Recall from your past coding-agent sessions (deja)",
            "activation": {"onStartup": true},
            "configSchema": {"type": "object", "additionalProperties": false}
        });
        vec![
            Edit::owned_file(pack.join("HOOK.md"), HOOK_MD),
            Edit::owned_file(pack.join("handler.js"), handler(cx)),
            Edit::owned_file(ext.join("package.json"), format!("{}\n", to_pretty(&package))),
            Edit::owned_file(ext.join("openclaw.plugin.json"), format!("{}\n", to_pretty(&manifest))),
            Edit::owned_file(ext.join("index.mjs"), index_mjs(cx)),
            Edit::json_member(&config, &["hooks", "internal", "enabled"], json!(true)),
            Edit::json_member(&config, &["hooks", "internal", "entries", "deja-recall"], json!({"enabled": true})),
            // 2026.9.6 calls a non-bundled plugin's `before_prompt_build` only with conversation access.
            Edit::json_member(
                &config,
                &["plugins", "entries", "deja"],
                json!({"enabled": true, "hooks": {"allowConversationAccess": true}}),
            ),
        ]
    }

    fn notes(&self) -> &'static [&'static str] {
        &[
            "`openclaw mcp probe deja` should list deja's one tool",
            "openclaw-auto: the bootstrap hook pack runs in gateway mode only, when an agent workspace is first bootstrapped \
             (`openclaw agent --local` never emits it); the prompt plugin runs in both; restart the gateway",
        ]
    }
}
