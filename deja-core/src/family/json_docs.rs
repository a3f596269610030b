//! Small readers shared by harnesses that keep each session as whole JSON documents
//! (Continue, CodeWhale, OpenHands, Cortex Code, Codebuff, Amp): not one format, but the
//! same few chores every such parser does — text out of a string-or-blocks `content`,
//! tool arguments that may be an object or a JSON string, the first non-empty of several
//! alias keys, a file's mtime as the fallback time, and one tool call turned into a
//! `ToolCall` turn (command, files, edit span) from its input by a [`ToolMap`] and the
//! dialect's key aliases.
//!
//! Each adapter keeps its own record → role table and parser; this module decides no
//! roles.

use std::path::Path;

use serde_json::Value;

use crate::model::{cap_text, Edit, FileAction, FileTouch, Role, Timestamp, ToolUse, Turn, MAX_EDIT_BYTES};
use crate::patch::join_cwd;
use crate::work::{ToolKind, ToolMap};

/// The first of `keys` whose value is a non-blank string.
pub fn first_str<'a>(v: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|k| v.get(k).and_then(Value::as_str).filter(|s| !s.trim().is_empty()))
}

/// The text of a message `content`: a string as itself, or the `text` of every text
/// block of an array (`{"type":"text","text":…}`, or a block with `text` and no type),
/// blank ones dropped, joined with `\n`. Anything else is empty.
pub fn text_blocks(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.trim().to_string(),
        Some(Value::Array(items)) => items
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str).is_none_or(|t| t == "text"))
            .filter_map(|b| b.as_str().or_else(|| b.get("text").and_then(Value::as_str)))
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Tool arguments that are an object, or an object encoded as a JSON string
/// (OpenAI-style `function.arguments`); anything else is `Null`.
pub fn json_arg(v: Option<&Value>) -> Value {
    match v {
        Some(Value::String(s)) => serde_json::from_str::<Value>(s).ok().filter(|v| v.is_object() || v.is_array()).unwrap_or(Value::Null),
        Some(v @ (Value::Object(_) | Value::Array(_))) => v.clone(),
        _ => Value::Null,
    }
}

/// A file's modification time, for stores whose documents carry no time of their own.
pub fn file_mtime(path: &Path) -> Option<Timestamp> {
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    let ms = modified.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis();
    i64::try_from(ms).ok().map(Timestamp)
}

/// Where one dialect's tool inputs keep their details, first alias first.
#[derive(Debug, Clone, Copy)]
pub struct ToolKeys {
    pub command: &'static [&'static str],
    pub path: &'static [&'static str],
    /// The replaced text of an edit.
    pub old: &'static [&'static str],
    /// The written text of an edit (or a write's whole content).
    pub new: &'static [&'static str],
}

/// The usual aliases: `command`/`cmd`, `path`/`file_path`/`filePath`,
/// `old_string`/`old_str`/`oldText`/`old_text`, `new_string`/`new_str`/`newText`/`new_text`/`content`.
pub const COMMON_KEYS: ToolKeys = ToolKeys {
    command: &["command", "cmd"],
    path: &["path", "file_path", "filePath", "target_file"],
    old: &["old_string", "old_str", "oldText", "old_text"],
    new: &["new_string", "new_str", "newText", "new_text", "content"],
};

/// A `ToolCall` turn for a call of `name` with `input`: a shell tool's command line, a
/// file tool's path (as `files`, the action from `tools`) and, for edits and writes, the
/// edit span (old text, written text; a write has no old side). A relative path is
/// joined onto `cwd`. Text stays empty: the result is folded in later.
pub fn call_turn(tools: &ToolMap, keys: &ToolKeys, name: &str, input: &Value, cwd: Option<&str>, time: Option<Timestamp>) -> Turn {
    let mut turn = Turn::new(Role::ToolCall, "").at(time);
    let mut tool = ToolUse { name: name.to_string(), ..ToolUse::default() };
    let kind = tools.kind(name);
    if kind == ToolKind::Shell {
        tool.command = first_str(input, keys.command).map(|c| c.trim().to_string());
    }
    if let (Some(action), Some(path)) = (tools.file_action(name), first_str(input, keys.path)) {
        let path = join_cwd(path.trim(), cwd);
        turn.files.push(FileTouch { path: path.clone(), action });
        if matches!(kind, ToolKind::Edit | ToolKind::Write) {
            let capped = |s: &str| {
                let mut s = s.to_string();
                cap_text(&mut s, MAX_EDIT_BYTES);
                s
            };
            let old = first_str(input, keys.old).unwrap_or("");
            let new = first_str(input, keys.new);
            if !old.is_empty() || new.is_some() {
                turn.edit = Some(Edit { path, old: capped(old), new: new.map(capped) });
            }
        }
    }
    turn.tool = Some(tool);
    turn
}

/// A `ToolCall` turn for a store whose page names no tool's keys (Shelley, Omnigent,
/// Piebald): decoded from `input` alone with [`COMMON_KEYS`]. A command key makes it a
/// shell call; otherwise a path key makes it a file call, the action guessed from the
/// input and the tool's name (an `old` text or a name with `edit`/`patch`/`replace` is an
/// edit; `write`/`create` or a `content` key a write; else a read), with the edit span for
/// edits and writes. A relative path is joined onto `cwd`.
pub fn guessed_call_turn(name: &str, input: &Value, cwd: Option<&str>, time: Option<Timestamp>) -> Turn {
    let mut turn = Turn::new(Role::ToolCall, "").at(time);
    let mut tool = ToolUse { name: name.to_string(), ..ToolUse::default() };
    if let Some(cmd) = first_str(input, COMMON_KEYS.command) {
        tool.command = Some(cmd.trim().to_string());
    } else if let Some(path) = first_str(input, COMMON_KEYS.path) {
        let path = join_cwd(path.trim(), cwd);
        let lower = name.to_ascii_lowercase();
        let old = first_str(input, COMMON_KEYS.old);
        let action = if old.is_some() || lower.contains("edit") || lower.contains("patch") || lower.contains("replace") {
            FileAction::Edit
        } else if lower.contains("write") || lower.contains("create") || input.get("content").is_some() {
            FileAction::Write
        } else {
            FileAction::Read
        };
        if action != FileAction::Read {
            let capped = |s: &str| {
                let mut s = s.to_string();
                cap_text(&mut s, MAX_EDIT_BYTES);
                s
            };
            let new = first_str(input, COMMON_KEYS.new);
            if old.is_some() || new.is_some() {
                turn.edit = Some(Edit { path: path.clone(), old: capped(old.unwrap_or("")), new: new.map(capped) });
            }
        }
        turn.files.push(FileTouch { path, action });
    }
    turn.tool = Some(tool);
    turn
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const TOOLS: ToolMap = ToolMap { shell: &["bash"], read: &["read"], edit: &["edit"], write: &["write"] };

    #[test]
    fn text_of_strings_and_blocks() {
        assert_eq!(text_blocks(Some(&json!(" hi "))), "hi");
        let blocks = json!([{"type":"text","text":"a"},{"type":"thinking","thinking":"no"},{"text":"b"},{"type":"text","text":"  "}]);
        assert_eq!(text_blocks(Some(&blocks)), "a\nb");
        assert_eq!(text_blocks(Some(&json!(3))), "");
        assert_eq!(text_blocks(None), "");
    }

    #[test]
    fn arguments_as_object_or_json_string() {
        assert_eq!(json_arg(Some(&json!("{\"command\":\"ls\"}")))["command"], "ls");
        assert_eq!(json_arg(Some(&json!({"a":1})))["a"], 1);
        assert_eq!(json_arg(Some(&json!("not json"))), Value::Null);
        assert_eq!(json_arg(Some(&json!("7"))), Value::Null);
        assert_eq!(first_str(&json!({"a":" ","b":"x"}), &["a", "b"]), Some("x"));
    }

    #[test]
    fn calls_carry_command_files_and_edit() {
        let shell = call_turn(&TOOLS, &COMMON_KEYS, "bash", &json!({"cmd":"cargo test"}), None, None);
        assert_eq!(shell.tool.as_ref().and_then(|t| t.command.as_deref()), Some("cargo test"));
        assert!(shell.files.is_empty());
        let edit = call_turn(&TOOLS, &COMMON_KEYS, "edit", &json!({"path":"a.rs","old_str":"x","new_str":"y"}), Some("/w"), None);
        assert_eq!(edit.files, vec![FileTouch { path: "/w/a.rs".into(), action: FileAction::Edit }]);
        assert_eq!(edit.edit, Some(Edit { path: "/w/a.rs".into(), old: "x".into(), new: Some("y".into()) }));
        let read = call_turn(&TOOLS, &COMMON_KEYS, "read", &json!({"file_path":"/abs/b.rs","content":"ignored"}), Some("/w"), None);
        assert_eq!((read.files[0].path.as_str(), read.edit), ("/abs/b.rs", None));
        let other = call_turn(&TOOLS, &COMMON_KEYS, "grep", &json!({"path":"c"}), None, None);
        assert!(other.files.is_empty() && other.tool.is_some_and(|t| t.command.is_none()));
    }

    #[test]
    fn guessed_calls_from_input_and_name() {
        let shell = guessed_call_turn("run", &json!({"cmd": " ls "}), None, None);
        assert_eq!(shell.tool.as_ref().and_then(|t| t.command.as_deref()), Some("ls"));
        let edit = guessed_call_turn("str_replace", &json!({"path": "a.rs", "old_str": "x", "new_str": "y"}), Some("/w"), None);
        assert_eq!((edit.files[0].path.as_str(), edit.files[0].action), ("/w/a.rs", FileAction::Edit));
        assert_eq!(edit.edit.as_ref().map(|e| e.old.as_str()), Some("x"));
        let write = guessed_call_turn("save", &json!({"path": "/b.md", "content": "hi"}), None, None);
        assert_eq!(write.files[0].action, FileAction::Write);
        let read = guessed_call_turn("view", &json!({"path": "/c.md"}), None, None);
        assert_eq!((read.files[0].action, read.edit.is_none()), (FileAction::Read, true));
    }
}
