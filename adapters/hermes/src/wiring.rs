//! Hermes Agent's wiring (its page, "Wiring"), under `${HERMES_HOME:-~/.hermes}`:
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `hermes` | `config.yaml` | `mcp_servers.deja` = `<exe> mcp`, enabled (a YAML splice: the shipped section comments stay) |
//! | `hermes` | `skills/deja-history/SKILL.md` | the skill, top level (plugin-bundled skills never reach the system prompt) |
//! | `hermes-auto` | `plugins/deja/plugin.yaml`, `plugins/deja/__init__.py` | the plugin: `pre_llm_call` recall appended to the user message (session-start digest on the first turn, prompt recall after), `/deja` |
//! | `hermes-auto` | `config.yaml` | `deja` in `plugins.enabled` (a discovered plugin is not loaded otherwise; an `enabled: []` is filled) |

use std::path::PathBuf;

use deja_core::wire::{skill_text, yaml, Edit, Surface, WireContext, Wiring, SKILL_NAME};
use deja_core::StoreEnv;

pub struct HermesWiring;

fn hermes_home(env: &StoreEnv) -> PathBuf {
    crate::INFO.store.dir_of(env, "HERMES_HOME")
}

const PLUGIN_YAML: &str = "name: deja\nversion: 1.0.0\ndescription: Recall from past coding-agent sessions on this machine (deja)\n\
provides_hooks:\n  - pre_llm_call\nprovides_commands:\n  - deja\n";

fn plugin_py(cx: &WireContext) -> String {
    format!(
        r#""""deja for Hermes: recall from past coding-agent sessions, appended to the user
message before each model call, and the /deja command. Written by `deja install
hermes-auto`; `deja uninstall hermes-auto` removes it."""

import json
import os
import subprocess

EXE = {exe}


def _run(args, payload=None, timeout=10):
    try:
        out = subprocess.run(
            [EXE, *args],
            input=json.dumps(payload) if payload is not None else "",
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        return out.stdout.strip()
    except Exception:
        return ""


def recall(session_id=None, user_message=None, is_first_turn=False, **kwargs):
    payload = {{"prompt": user_message or "", "session_id": session_id or "", "cwd": os.getcwd()}}
    text = ""
    if is_first_turn:
        text = _run(["hook-session-start", "--plain"], payload)
    if not text and user_message:
        text = _run(["hook-prompt", "--plain"], payload)
    return {{"context": text}} if text else None


def search(raw_args=""):
    query = (raw_args or "").strip()
    if not query:
        return "usage: /deja <words to look for in past sessions>"
    return _run(["search", query], timeout=120) or "deja found nothing for: " + query


def register(ctx):
    ctx.register_hook("pre_llm_call", recall)
    ctx.register_command("deja", handler=search, description="Search past coding-agent sessions (deja)")
"#,
        exe = yaml::quote(&cx.exe())
    )
}

impl Wiring for HermesWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::AutoRecall, Surface::Skill, Surface::Command]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        hermes_home(env).is_dir()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        let home = hermes_home(cx.env);
        vec![
            Edit::yaml_member(
                home.join("config.yaml"),
                &["mcp_servers", "deja"],
                format!("command: {}\nargs:\n  - mcp\nenabled: true\n", yaml::quote(&cx.exe())),
            ),
            Edit::owned_file(home.join("skills").join(SKILL_NAME).join("SKILL.md"), skill_text(cx)),
        ]
    }

    fn auto(&self, cx: &WireContext) -> Vec<Edit> {
        let home = hermes_home(cx.env);
        let plugin = home.join("plugins/deja");
        vec![
            Edit::owned_file(plugin.join("plugin.yaml"), PLUGIN_YAML),
            Edit::owned_file(plugin.join("__init__.py"), plugin_py(cx)),
            Edit::yaml_list_item(home.join("config.yaml"), &["plugins", "enabled"], &["deja"], "deja"),
        ]
    }

    fn notes(&self) -> &'static [&'static str] {
        &[
            "`hermes mcp test deja` needs Hermes' `mcp` extra (`pip install 'hermes-agent[mcp]'`); it exits 0 even when the test fails, so read what it prints.",
            "Restart running Hermes sessions to load the server (and, with hermes-auto, the plugin).",
        ]
    }
}
