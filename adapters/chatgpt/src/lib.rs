//! ChatGPT desktop app (`chatgpt`): the macOS app keeps one conversation per file under
//! `~/Library/Application Support/com.openai.chat/conversations-*/`, rewritten whole
//! (not append-only), and the account data export is one `conversations.json` array
//! (plus numbered `conversations-*.json` parts) of the same conversation objects.
//!
//! No family reader: the conversation `mapping` tree is ChatGPT's own. Three directory
//! generations: `conversations-<uuid>/` (v1) holds plain JSON; `conversations-v2-<uuid>/`
//! and `conversations-v3-<uuid>/` hold AES-256-GCM files (`nonce(12) ‖ ciphertext ‖
//! tag(16)`, plaintext the same JSON). Those are decrypted only with a key the user
//! exported from the Keychain themselves and put in `DEJA_CHATGPT_KEY` (32 bytes,
//! base64); deja never touches the Keychain. Without the key each encrypted file is
//! discovered as [`Discovery::locked`] (not a source, so nothing is re-read each refresh),
//! and `deja index` and `deja harnesses` say how many could not be opened and why; with
//! a wrong key each fails with a `FormatError` naming the variable. The key is read from the
//! process environment at parse time (parsing gets no `StoreEnv`, and a key must never
//! travel in a `SourceRef`, which the index stores); [`parse_with_key`] takes it
//! explicitly.
//!
//! `aes-gcm` (RustCrypto, default features off: no RNG is needed to decrypt) and
//! `base64` are workspace dependencies for this; hand-written AES-GCM would be code
//! nobody reviews.
//!
//! `DEJA_CHATGPT_ROOT` names the app directory (the one holding the `conversations-*`
//! directories); `DEJA_CHATGPT_EXPORT` names an export: the `conversations.json` file, or
//! the directory it was unzipped into (its `conversations.json` and
//! `conversations-<n>.json` parts). The export has no default location, so it is read
//! only when named. Files over 100 MB are refused.
//!
//! | record / field | Turn | rule |
//! | --- | --- | --- |
//! | `mapping` node, `message.author.role` `user` | `User` | `content.parts[]` strings joined with `\n` (images and other non-string parts skipped), else `content.text`; `content_type` `user_editable_context` (custom instructions) and `metadata.is_visually_hidden_from_conversation` skipped as injected |
//! | `assistant` | `Assistant` | same text rule |
//! | `tool` | `ToolOutput` | browsing / code-interpreter output, tool name `author.name`; no call record to fold into |
//! | `system`, other roles | skipped | |
//!
//! Order: the active branch, walked from `current_node` up the `parent` chain; without a
//! usable `current_node`, every node by `create_time` (float seconds, may be null).
//! Session: id `id`/`conversation_id`, else the file stem; title `title`; no project;
//! times the messages' and the conversation's `create_time`/`update_time`.

use std::collections::HashSet;
use std::path::Path;

use aes_gcm::aead::{Aead, KeyInit};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::Engine;
use deja_core::discover::{find_files, subdirs};
use deja_core::family::json_docs::first_str;
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::read::{at, parse_json_document, read_source, str_at};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, Locked, ParseOptions, ParseStats, Role,
    SessionBuilder, SessionSink, SourceRef, StoreEnv, Timestamp, ToolUse, Turn,
};
use serde_json::Value;

const ID: &str = "chatgpt";
const MAX_BYTES: u64 = 100 << 20;
/// The variable holding the base64 key of the encrypted generations.
pub const KEY_VAR: &str = "DEJA_CHATGPT_KEY";

/// The ChatGPT desktop app adapter.
pub struct ChatGptFormat;

deja_core::inventory::submit!(deja_core::Registration(&ChatGptFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "ChatGPT desktop app",
    container: "JSON, one conversation per file (v2/v3 AES-256-GCM encrypted); account export: one conversations.json array",
    store: StoreSpec::new(&[
        Store {
            name: "",
            roots: &[Root::any("~/Library/Application Support/com.openai.chat")],
            layout: Layout::Custom { shape: "conversations-<uuid>/*.json, conversations-v{2,3}-<uuid>/*.data", walk: Some(walk_app) },
        },
        // A `conversations.json` export (the file, or the folder of its parts); it has no
        // default place.
        Store { name: "export", roots: &[], layout: Layout::Custom { shape: "conversations.json", walk: Some(walk_export) } },
    ])
    .deja_vars(&[KEY_VAR])
    .aliases(&[("DEJA_CHATGPT_EXPORT", "DEJA_CHATGPT_EXPORT_ROOT")]),
    needs: &["the v2/v3 encryption key, exported from the Keychain by the user, in DEJA_CHATGPT_KEY (base64)"],
    format_summary: "The macOS app keeps each conversation as a JSON object (`id`, `title`, `create_time`, `mapping` of \
        tree nodes `{parent, children, message}`, `current_node`) in `conversations-<uuid>/`; the v2 and v3 directory \
        generations encrypt the same object with AES-256-GCM under a Keychain key. Messages carry `author.role`, \
        `content.parts` and `create_time` in float seconds; the active branch is the parent chain from `current_node`. \
        The account data export's `conversations.json` is an array of the same objects.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Unsupported("the desktop app has no local MCP client configuration deja can write"),
        auto_recall: Capability::Unknown,
        skill: Capability::Unknown,
        command: Capability::Unknown,
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch { resume: Resume::Unknown, handoff: Handoff::Paste("no start-with-prompt command is known") },
};

/// The app's conversation folders: each generation's files, an encrypted one without
/// the key counted as locked (not retried on every refresh; setting the key makes it a
/// new source).
fn walk_app(root: &Path, env: &StoreEnv, found: &mut Discovery) {
    let have_key = env.var(KEY_VAR).is_some_and(|k| !k.trim().is_empty());
    for dir in subdirs(root) {
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let Some(generation) = dir_generation(&name) else { continue };
        for f in find_files(&dir, 0, &|n| n.ends_with(".json") || n.ends_with(".data")) {
            if generation >= 2 && !have_key && !starts_as_json(&f) {
                let reason = format!("encrypted (conversations-v{generation}); set {KEY_VAR} to the base64 key exported from the Keychain");
                found.locked.push(Locked { path: f, reason });
                continue;
            }
            let mut src = SourceRef::file(f);
            src.generation = Some(generation);
            found.sources.push(src);
        }
    }
}

/// An export: the `conversations.json` file named, or the parts in a folder.
fn walk_export(root: &Path, _env: &StoreEnv, found: &mut Discovery) {
    if root.is_dir() {
        found.sources.extend(find_files(root, 0, &is_export_part).into_iter().map(SourceRef::file));
    } else if root.is_file() {
        found.sources.push(SourceRef::file(root));
    }
}

impl HarnessFormat for ChatGptFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let key = std::env::var(KEY_VAR).ok().filter(|k| !k.trim().is_empty());
        parse_with_key(src, key.as_deref(), opts, out)
    }
}

/// Whether a file's first non-blank byte opens a JSON object (an encrypted-generation
/// file that is plain after all); unreadable counts as not.
fn starts_as_json(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 64];
    let n = std::fs::File::open(path).and_then(|mut f| f.read(&mut head)).unwrap_or(0);
    head[..n].iter().find(|b| !b.is_ascii_whitespace()).is_some_and(|b| *b == b'{' || *b == b'[')
}

/// The directory generation: `conversations-v2-…` → 2, `conversations-v3-…` → 3, any
/// other `conversations-…` → 1.
fn dir_generation(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("conversations-")?;
    if let Some((v, _)) = rest.split_once('-') {
        if let Some(n) = v.strip_prefix('v').and_then(|n| n.parse::<u32>().ok()) {
            return Some(n);
        }
    }
    Some(1)
}

/// `conversations.json` and its numbered parts `conversations-<n>.json`.
fn is_export_part(name: &str) -> bool {
    name == "conversations.json"
        || name
            .strip_prefix("conversations-")
            .and_then(|r| r.strip_suffix(".json"))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// [`HarnessFormat::parse`] with the encryption key (base64) given rather than read from
/// `DEJA_CHATGPT_KEY`.
pub fn parse_with_key(
    src: &SourceRef,
    key: Option<&str>,
    _opts: &ParseOptions,
    out: &mut dyn SessionSink,
) -> Result<ParseStats, FormatError> {
    let mut stats = ParseStats::default();
    if std::fs::metadata(&src.path).is_ok_and(|m| m.len() > MAX_BYTES) {
        return Err(FormatError::corrupt(&src.path, "over 100 MB; not read"));
    }
    let raw = read_source(&src.path, &mut stats)?.bytes;
    // A file in an encrypted generation that is already JSON is read as it is.
    let plain = raw.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&raw).trim_ascii_start().starts_with(b"{");
    let encrypted = src.generation.is_some_and(|g| g >= 2) && !plain;
    let bytes = if encrypted { decrypt(&src.path, &raw, key, src.generation.unwrap_or(2))? } else { raw };
    let doc = parse_json_document(&bytes, &src.path)?;
    let stem = src.path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "conversation".into());
    match doc {
        Value::Array(items) => {
            for (i, c) in items.iter().enumerate() {
                stats.records += 1;
                if !c.is_object() {
                    stats.skip(|| format!("{}: conversation {i} is not an object", src.path.display()));
                    continue;
                }
                conversation(src, c, &format!("{stem}-{i}"), out);
            }
        }
        c @ Value::Object(_) => {
            stats.records += 1;
            conversation(src, &c, &stem, out);
        }
        _ => return Err(FormatError::corrupt(&src.path, "neither a conversation nor an array of them")),
    }
    Ok(stats)
}

fn decrypt(path: &Path, raw: &[u8], key: Option<&str>, generation: u32) -> Result<Vec<u8>, FormatError> {
    let need = || {
        FormatError::corrupt(
            path,
            format!("encrypted (conversations-v{generation}); set {KEY_VAR} to the base64 key exported from the Keychain"),
        )
    };
    let key = key.ok_or_else(need)?;
    let key = base64::engine::general_purpose::STANDARD
        .decode(key.trim())
        .map_err(|e| FormatError::corrupt(path, format!("{KEY_VAR} is not base64: {e}")))?;
    let cipher = Aes256Gcm::new_from_slice(&key).map_err(|_| FormatError::corrupt(path, format!("{KEY_VAR} is not a 32-byte key")))?;
    if raw.len() < 12 + 16 {
        return Err(FormatError::corrupt(path, "encrypted file too short for nonce and tag"));
    }
    let (nonce, body) = raw.split_at(12);
    cipher
        .decrypt(Nonce::from_slice(nonce), body)
        .map_err(|_| FormatError::corrupt(path, format!("cannot decrypt (conversations-v{generation}): wrong {KEY_VAR} or damaged file")))
}

fn conversation(src: &SourceRef, c: &Value, fallback_id: &str, out: &mut dyn SessionSink) {
    let id = first_str(c, &["id", "conversation_id"]).unwrap_or(fallback_id);
    let mut b = SessionBuilder::new(ID, id, src.clone());
    b.session_mut().title = first_str(c, &["title"]).map(|t| t.trim().to_string());
    let Some(Value::Object(mapping)) = c.get("mapping") else {
        return;
    };
    let mut nodes: Vec<&Value> = Vec::new();
    // The active branch: from `current_node` up the parents (a cycle stops the walk).
    if let Some(mut cur) = first_str(c, &["current_node"]).filter(|n| mapping.contains_key(*n)) {
        let mut seen = HashSet::new();
        while seen.insert(cur.to_string()) {
            let Some(node) = mapping.get(cur) else { break };
            nodes.push(node);
            match first_str(node, &["parent"]) {
                Some(p) => cur = p,
                None => break,
            }
        }
        nodes.reverse();
    } else {
        nodes = mapping.values().collect();
        // Stable: nodes without a time keep their place relative to each other.
        nodes.sort_by(|a, b| {
            let t = |n: &Value| at(n, &["message", "create_time"]).and_then(Value::as_f64).unwrap_or(f64::NEG_INFINITY);
            t(a).total_cmp(&t(b))
        });
    }
    for node in nodes {
        if let Some(m) = node.get("message").filter(|m| m.is_object()) {
            message(&mut b, m);
        }
    }
    if b.turn_count() > 0 {
        for k in ["create_time", "update_time"] {
            b.touch(c.get(k).and_then(Timestamp::from_json).filter(|t| t.millis() > 0));
        }
    }
    if let Some(s) = b.finish() {
        out.session(s);
    }
}

fn message(b: &mut SessionBuilder, m: &Value) {
    let time = at(m, &["create_time"]).and_then(Value::as_f64).filter(|t| *t > 0.0).and_then(Timestamp::from_secs_f64);
    let content = m.get("content").unwrap_or(&Value::Null);
    let hidden = at(m, &["metadata", "is_visually_hidden_from_conversation"]).and_then(Value::as_bool) == Some(true);
    if hidden || str_at(content, &["content_type"]) == Some("user_editable_context") {
        return;
    }
    let text = match content.get("parts") {
        Some(Value::Array(parts)) => {
            parts.iter().filter_map(Value::as_str).map(str::trim).filter(|s| !s.is_empty()).collect::<Vec<_>>().join("\n")
        }
        _ => first_str(content, &["text"]).unwrap_or("").trim().to_string(),
    };
    let role = match str_at(m, &["author", "role"]) {
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some("tool") => {
            let mut turn = Turn::new(Role::ToolOutput, text).at(time);
            turn.tool = Some(ToolUse {
                name: str_at(m, &["author", "name"]).filter(|n| !n.trim().is_empty()).unwrap_or("tool").to_string(),
                ..ToolUse::default()
            });
            if !turn.text.is_empty() {
                b.push(turn);
            }
            return;
        }
        _ => return,
    };
    b.push(Turn::new(role, text).at(time));
}
