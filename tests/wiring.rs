//! `deja install` / `uninstall` and the hook subcommands, end to end: configs holding
//! the user's own servers and comments come back byte for byte, a second install changes
//! nothing, `--dry-run` only prints, relocation variables are honoured (a missing
//! `CODEX_HOME` is created and removed again), a config that does not parse is left
//! alone and named; hooks answer in the harness's envelope, once per session, and fail
//! open on garbage, without an index and while one is being built; what a hook hands a
//! harness, written back as the harness records it, is never indexed as the person's words.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};

use crate::e2e::{build_home, Home};

/// `deja` in the home `h`, with deja's data directory beside its index (outside the
/// home, so a home diff sees only the harness's files).
pub(crate) fn deja_in(h: &Home, extra: &[(&str, &Path)], args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_deja"));
    cmd.args(args)
        .env_clear()
        .env("DEJA_WATCH", "off")
        .env("HOME", &h.home)
        .env("DEJA_INDEX_DIR", &h.index)
        .env("DEJA_DATA_DIR", h.index.with_file_name("data"))
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn deja");
    if let Some(bytes) = stdin {
        let mut pipe = child.stdin.take().expect("stdin");
        // A hook may stop reading once it has its value; a closed pipe is no error here.
        let _ = pipe.write_all(bytes);
    }
    child.wait_with_output().expect("wait")
}

fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                out.insert(p.clone(), b"<dir>".to_vec());
                stack.push(p);
            } else {
                out.insert(p.clone(), std::fs::read(&p).expect("read"));
            }
        }
    }
    out
}

const CLAUDE_JSON: &str = "{\n  \"numStartups\": 7,\n  \"mcpServers\": {\n    \"mine\": {\"type\": \"stdio\", \"command\": \"/usr/bin/mine\", \"args\": []}\n  }\n}";
const SETTINGS: &str = "{\n  // the user's hooks\n  \"hooks\": {\n    \"SessionStart\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"echo hi\"}]}]\n  }\n}\n";
const CODEX: &str = "# my codex\nmodel = \"o4\"  # pinned\n\n[mcp_servers.mine]\ncommand = \"/usr/bin/mine\"\n";

fn seed(h: &Home) {
    std::fs::create_dir_all(h.home.join(".claude")).expect("mkdir");
    std::fs::write(h.home.join(".claude.json"), CLAUDE_JSON).expect("write");
    std::fs::write(h.home.join(".claude/settings.json"), SETTINGS).expect("write");
}

#[test]
fn install_twice_then_uninstall_gives_every_byte_back() {
    let h = Home::new();
    seed(&h);
    let codex_home = h.home.with_file_name("codex-home");
    std::fs::create_dir_all(&codex_home).expect("mkdir");
    std::fs::write(codex_home.join("config.toml"), CODEX).expect("write");
    let env = [("CODEX_HOME", codex_home.as_path())];
    let before = (snapshot(&h.home), snapshot(&codex_home));

    let dry = deja_in(&h, &env, &["install", "claude-auto", "codex", "--dry-run"], None);
    assert!(dry.status.success(), "{}", String::from_utf8_lossy(&dry.stderr));
    let diff = String::from_utf8_lossy(&dry.stdout);
    assert!(diff.contains("+    \"deja\": {") && diff.contains("+[mcp_servers.deja]"), "{diff}");
    assert_eq!((snapshot(&h.home), snapshot(&codex_home)), before, "a dry run changes nothing");

    let out = deja_in(&h, &env, &["install", "claude-auto", "codex", "--json"], None);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let claude: Value = serde_json::from_slice(&std::fs::read(h.home.join(".claude.json")).expect("read")).expect("json");
    assert_eq!(claude["mcpServers"]["deja"]["args"], serde_json::json!(["mcp"]));
    assert_eq!(claude["mcpServers"]["mine"]["command"], "/usr/bin/mine");
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_deja")).expect("exe");
    assert_eq!(claude["mcpServers"]["deja"]["command"], exe.display().to_string(), "the absolute path of the running binary");
    let settings = std::fs::read_to_string(h.home.join(".claude/settings.json")).expect("read");
    assert!(settings.contains("// the user's hooks") && settings.contains("echo hi") && settings.contains("hook-prompt"), "{settings}");
    let codex = std::fs::read_to_string(codex_home.join("config.toml")).expect("read");
    assert!(codex.starts_with(CODEX) && codex.contains("[mcp_servers.deja]"), "{codex}");

    let again: Value =
        serde_json::from_slice(&deja_in(&h, &env, &["install", "claude-auto", "codex", "--json"], None).stdout).expect("json");
    assert!(again["files"].as_array().is_some_and(Vec::is_empty), "a second install changes nothing: {again}");

    let out = deja_in(&h, &env, &["uninstall", "claude", "codex"], None);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!((snapshot(&h.home), snapshot(&codex_home)), before, "uninstall gives every file back byte for byte");
}

#[test]
fn a_missing_codex_home_is_created_and_removed_again() {
    let h = Home::new();
    let codex_home = h.home.with_file_name("new-codex-home");
    let env = [("CODEX_HOME", codex_home.as_path())];
    assert!(deja_in(&h, &env, &["install", "codex"], None).status.success());
    assert!(codex_home.join("config.toml").is_file(), "Codex refuses a missing CODEX_HOME, so install creates it");
    assert!(deja_in(&h, &env, &["uninstall", "codex"], None).status.success());
    assert!(!codex_home.exists(), "the directory install created is gone");
}

#[test]
fn a_config_that_does_not_parse_is_left_alone_and_named() {
    let h = Home::new();
    seed(&h);
    let broken = "{\n  \"mcpServers\": {},\n  \"x\": @\n}";
    std::fs::write(h.home.join(".claude.json"), broken).expect("write");
    let out = deja_in(&h, &[], &["install", "claude"], None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(".claude.json") && err.contains("line 3"), "{err}");
    assert_eq!(std::fs::read_to_string(h.home.join(".claude.json")).expect("read"), broken);
}

#[test]
fn unknown_targets_name_the_known_ones() {
    let h = Home::new();
    let out = deja_in(&h, &[], &["install", "claudee"], None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("unknown target `claudee`") && err.contains("claude-auto"), "{err}");
}

fn hook(h: &Home, sub: &str, payload: &[u8]) -> Output {
    deja_in(h, &[], &[sub], Some(payload))
}

#[test]
fn hooks_answer_once_per_session_in_the_envelope() {
    let h = Home::new();
    build_home(&h);
    h.json(&["index", "--json"]);
    let payload =
        br#"{"session_id":"s-1","cwd":"/src/app","hook_event_name":"UserPromptSubmit","prompt":"why does the nightly build time out"}"#;
    let out = hook(&h, "hook-prompt", payload);
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit");
    let block = v["hookSpecificOutput"]["additionalContext"].as_str().expect("context");
    assert!(block.starts_with("<deja-recall") && block.contains("Untrusted") && block.trim_end().ends_with("</deja-recall>"), "{block}");
    assert!(block.len() <= 1536, "within the prompt budget: {}", block.len());
    assert!(hook(&h, "hook-prompt", payload).stdout.is_empty(), "the same block is not injected twice into one session");
    let other = br#"{"session_id":"s-2","cwd":"/src/app","prompt":"why does the nightly build time out"}"#;
    let plain = deja_in(&h, &[], &["hook-prompt", "--plain"], Some(other));
    assert!(String::from_utf8_lossy(&plain.stdout).starts_with("<deja-recall"), "--plain prints the bare block");
    // Kept open and silent, as Codex does: the hook still answers, within its deadline.
    let start = br#"{"session_id":"s-3","cwd":"/src/app","source":"startup"}"#;
    let out = hook(&h, "hook-session-start", start);
    assert!(out.status.success());
    if !out.stdout.is_empty() {
        let v: Value = serde_json::from_slice(&out.stdout).expect("envelope");
        assert!(v["hookSpecificOutput"]["additionalContext"].as_str().is_some_and(|b| b.len() <= 2048));
    }
}

/// The hook command lines installed configs hold keep working: each harness's old
/// `--NAME` flag is the envelope an adapter declares, the same as `--envelope NAME`.
#[test]
fn installed_hook_command_lines_still_answer_in_their_harness_envelope() {
    let h = Home::new();
    build_home(&h);
    h.json(&["index", "--json"]);
    let prompt = |session: &str| json!({"session_id": session, "cwd": "/src/app", "prompt": "why does the nightly build time out"});
    let parsed = |out: &Output| -> Value {
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
    };

    // Crush (`hook-tool --crush` in crush.json): the flat reply, either spelling.
    let old = parsed(&deja_in(&h, &[], &["hook-prompt", "--crush"], Some(prompt("crush-1").to_string().as_bytes())));
    let new = parsed(&deja_in(&h, &[], &["hook-prompt", "--envelope", "crush"], Some(prompt("crush-2").to_string().as_bytes())));
    assert_eq!(old["version"], 1, "{old}");
    assert!(old["context"].as_str().is_some_and(|c| c.starts_with("<deja-recall")), "{old}");
    assert_eq!(old, new, "`--crush` is `--envelope crush`");

    // Antigravity (`hook-session-start --antigravity`): `{}` after the first invocation.
    let later = json!({"invocationNum": 2, "workspacePaths": ["/src/app"]}).to_string();
    let out = deja_in(&h, &[], &["hook-session-start", "--antigravity"], Some(later.as_bytes()));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "{}\n");

    // CodeWhale (`hook-prompt --digest --codewhale`): the person's text first, then the block.
    let submit =
        json!({"event": "message_submit", "text": "why does the nightly build time out", "session_id": "cw-1", "workspace": "/src/app"});
    let v = parsed(&deja_in(&h, &[], &["hook-prompt", "--digest", "--codewhale"], Some(submit.to_string().as_bytes())));
    let text = v["text"].as_str().unwrap_or_else(|| panic!("{v}"));
    assert!(text.starts_with("why does the nightly build time out\n\n<deja-recall"), "{text}");

    // An envelope no adapter declares is a usage error, not a silent default.
    let out = deja_in(&h, &[], &["hook-prompt", "--envelope", "nosuch"], Some(b"{}"));
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Writes `lines` as a JSONL file at `rel` under the home.
fn write_lines(h: &Home, rel: &str, lines: &[Value]) {
    let path = h.home.join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let text: String = lines.iter().map(|v| format!("{v}\n")).collect();
    std::fs::write(path, text).expect("write");
}

/// The text of a session's turns of `role`, as `deja show` gives them.
fn shown_texts(h: &Home, id: &str, role: &str) -> Vec<String> {
    let shown = h.json(&["show", id, "--json"]);
    let turns = shown["turns"].as_array().unwrap_or_else(|| panic!("{id}: {shown}"));
    turns.iter().filter(|t| t["role"] == role).filter_map(|t| t["text"].as_str().map(str::to_string)).collect()
}

#[test]
fn a_recall_block_the_harness_wraps_is_not_indexed_as_the_persons_words() {
    // The hook round trip: deja's real hook output, wrapped the way the harness records
    // hook context, written into a transcript and indexed. deja must never recall its
    // own recall, and the wrapper is the harness's, not the person's.
    let h = Home::new();
    build_home(&h);
    h.json(&["index", "--json"]);
    const PROMPT: &str = "why does the nightly build time out";
    let payload =
        |session: &str| json!({"session_id": session, "cwd": "/src/app", "hook_event_name": "UserPromptSubmit", "prompt": PROMPT});

    // Qwen Code (`qwen-auto`: `hook-prompt --digest`, Claude's envelope): the context is
    // HTML-escaped, wrapped in `<qwen:user-prompt-submit-context>` and recorded as a text
    // part of its own after the prompt's.
    let out = deja_in(&h, &[], &["hook-prompt", "--digest"], Some(payload("qwen-s").to_string().as_bytes()));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    let context = v["hookSpecificOutput"]["additionalContext"].as_str().expect("context");
    assert!(context.contains("<deja-recall") && context.contains("Untrusted"), "{context}");
    let escaped = context.replace('<', "&lt;").replace('>', "&gt;");
    let wrapped = format!("<qwen:user-prompt-submit-context>\n{escaped}\n</qwen:user-prompt-submit-context>");
    let qwen_id = "4d5e6f70-0000-4000-8000-0000000000e1";
    write_lines(
        &h,
        &format!(".qwen/projects/-src-app/chats/{qwen_id}.jsonl"),
        &[
            json!({"uuid": "u1", "parentUuid": null, "sessionId": qwen_id, "timestamp": "2026-05-01T09:00:00.000Z", "type": "user", "cwd": "/src/app", "version": "0.15.10", "message": {"role": "user", "parts": [{"text": PROMPT}, {"text": wrapped}]}, "systemPayload": {"displayText": PROMPT}}),
            json!({"uuid": "a1", "parentUuid": "u1", "sessionId": qwen_id, "timestamp": "2026-05-01T09:00:04.000Z", "type": "assistant", "cwd": "/src/app", "version": "0.15.10", "message": {"role": "model", "parts": [{"text": "The cache step hangs; raising its timeout."}]}}),
        ],
    );

    // Kimi Code (`kimi-auto`: `hook-prompt --plain`): what the hook printed becomes a
    // message of its own, wrapped in `<hook_result hook_event="UserPromptSubmit">`.
    let plain = deja_in(&h, &[], &["hook-prompt", "--plain"], Some(payload("kimi-s").to_string().as_bytes()));
    let block = String::from_utf8_lossy(&plain.stdout).trim().to_string();
    assert!(block.starts_with("<deja-recall"), "{block}");
    let kimi_id = "5e6f7081-0000-4000-8000-0000000000e2";
    let dir = format!(".kimi-code/sessions/wd_app_0123456789ab/{kimi_id}");
    let text = |t: &str| json!([{"type": "text", "text": t}]);
    write_lines(
        &h,
        &format!("{dir}/agents/main/wire.jsonl"),
        &[
            json!({"type": "metadata", "protocol_version": "1.4", "created_at": 1788000000000u64}),
            json!({"type": "context.append_message", "message": {"role": "user", "content": text(PROMPT), "toolCalls": [], "origin": {"kind": "user"}}, "time": 1788000001000u64}),
            json!({"type": "context.append_message", "message": {"role": "user", "content": text(&format!("<hook_result hook_event=\"UserPromptSubmit\">\n{block}\n</hook_result>")), "toolCalls": [], "origin": {"kind": "hook_result", "event": "UserPromptSubmit"}}, "time": 1788000001100u64}),
            json!({"type": "context.append_loop_event", "event": {"type": "step.begin", "uuid": "s1", "turnId": "t1", "step": 0}, "time": 1788000002000u64}),
            json!({"type": "context.append_loop_event", "event": {"type": "content.part", "stepUuid": "s1", "part": {"type": "text", "text": "The cache step hangs; raising its timeout."}}, "time": 1788000002100u64}),
            json!({"type": "context.append_loop_event", "event": {"type": "step.end", "stepUuid": "s1"}, "time": 1788000002200u64}),
        ],
    );
    std::fs::write(
        h.home.join(format!("{dir}/state.json")),
        json!({"workDir": "/src/app", "createdAt": "2026-05-01T09:00:00Z"}).to_string(),
    )
    .expect("state");

    h.json(&["index", "--json"]);
    for id in [qwen_id, kimi_id] {
        assert_eq!(shown_texts(&h, id, "user"), [PROMPT], "{id}: the prompt alone is the person's");
        for role in ["user", "assistant"] {
            for t in shown_texts(&h, id, role) {
                assert!(
                    !t.contains("deja-recall") && !t.contains("Untrusted") && !t.contains("hook_result") && !t.contains("qwen:"),
                    "{id}: {t}"
                );
            }
        }
    }
    let leaked = h.json(&["search", "untrusted historical data", "--json"]);
    assert!(leaked["hits"].as_array().is_some_and(Vec::is_empty), "deja's own block came back: {leaked}");
}

#[test]
fn hooks_fail_open() {
    let h = Home::new();
    build_home(&h);
    let prompt = br#"{"session_id":"s","cwd":"/src/app","prompt":"why does the nightly build time out"}"#;
    // No index yet: nothing, exit 0, and no index built inline.
    for sub in ["hook-session-start", "hook-prompt", "hook-tool", "hook-tool-after"] {
        let out = hook(&h, sub, prompt);
        assert!(out.status.success() && out.stdout.is_empty(), "{sub}: {}", String::from_utf8_lossy(&out.stdout));
    }
    assert!(!h.index.join("current").exists(), "a hook never builds the index");
    h.json(&["index", "--json"]);
    for garbage in [&b"not json at all {{{"[..], b"", &[0xff, 0xfe, 0x00, 0x7b], b"[1,2,3]"] {
        let out = hook(&h, "hook-prompt", garbage);
        assert!(out.status.success() && out.stdout.is_empty(), "garbage {garbage:?}: {}", String::from_utf8_lossy(&out.stdout));
    }
    // A first build in progress elsewhere (the writer lock held, progress recorded).
    let generation = std::fs::read_to_string(h.index.join("current")).expect("current");
    std::fs::remove_file(h.index.join(generation.trim()).join("manifest")).expect("remove the manifest");
    let lock = std::fs::File::options().read(true).write(true).open(h.index.join("writer.lock")).expect("lock");
    lock.lock().expect("lock");
    std::fs::write(h.index.join("first-build"), r#"{"pid":1,"jobs":3,"total_bytes":10,"parsed":1,"parsed_bytes":1}"#).expect("progress");
    let out = hook(&h, "hook-prompt", prompt);
    assert!(out.status.success() && out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
    // An empty HOME: still exit 0 and silent.
    let out = Command::new(env!("CARGO_BIN_EXE_deja"))
        .arg("hook-prompt")
        .env_clear()
        .env("DEJA_WATCH", "off")
        .env("HOME", "")
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert!(out.status.success() && out.stdout.is_empty());
}

#[test]
fn omp_mcp_json_with_a_comment_is_refused_and_named_by_doctor() {
    // omp parses ~/.omp/agent/mcp.json as plain JSON and drops every server in it at a
    // `//` comment: deja must not write into such a file, and doctor must say why.
    let h = Home::new();
    let mcp = h.home.join(".omp/agent/mcp.json");
    std::fs::create_dir_all(mcp.parent().expect("parent")).expect("mkdir");
    let commented = "{\n  // my servers\n  \"mcpServers\": {\"mine\": {\"command\": \"/usr/bin/mine\"}}\n}\n";
    std::fs::write(&mcp, commented).expect("write");
    let out = deja_in(&h, &[], &["install", "omp"], None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("mcp.json") && err.contains("plain JSON") && err.contains("line 2"), "{err}");
    assert_eq!(std::fs::read_to_string(&mcp).expect("read"), commented, "left alone");
    let out = deja_in(&h, &[], &["doctor", "--json", "--harness", "omp"], None);
    assert_eq!(out.status.code(), Some(1), "a file omp ignores is a problem");
    let v: Value = serde_json::from_slice(&out.stdout).expect("doctor json");
    let omp = v["harnesses"].as_array().and_then(|hs| hs.iter().find(|x| x["id"] == "omp")).cloned().expect("omp");
    let target = omp["wiring"].as_array().and_then(|ts| ts.iter().find(|t| t["target"] == "omp")).cloned().expect("omp target");
    assert_eq!(target["state"], "broken", "{target}");
    assert!(target["detail"].to_string().contains("ignores all of it"), "{target}");

    // Without the comment, deja's entry goes in and the file stays plain JSON.
    std::fs::write(&mcp, "{\"mcpServers\": {\"mine\": {\"command\": \"/usr/bin/mine\"}}}\n").expect("write");
    let out = deja_in(&h, &[], &["install", "omp"], None);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&mcp).expect("read");
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert!(v["mcpServers"]["deja"]["command"].is_string() && v["mcpServers"]["mine"].is_object(), "{text}");
}

#[test]
fn doctor_tells_wired_from_stale_and_broken() {
    let h = Home::new();
    seed(&h);
    assert!(deja_in(&h, &[], &["install", "claude"], None).status.success());
    let target = |v: &Value, id: &str, t: &str| -> Value {
        v["harnesses"]
            .as_array()
            .and_then(|hs| hs.iter().find(|x| x["id"] == id))
            .and_then(|x| x["wiring"].as_array())
            .and_then(|ts| ts.iter().find(|x| x["target"] == t))
            .cloned()
            .unwrap_or(Value::Null)
    };
    let out = deja_in(&h, &[], &["doctor", "--json"], None);
    let v: Value = serde_json::from_slice(&out.stdout).expect("doctor json");
    assert_eq!(target(&v, "claude", "claude")["state"], "wired", "{v}");
    assert_eq!(target(&v, "claude", "claude-auto")["state"], "not wired");
    assert!(v["index"]["writer_lock"].is_string());
    // The binary moved: the entry names another one.
    let moved = std::fs::read_to_string(h.home.join(".claude.json")).expect("read").replace(env!("CARGO_BIN_EXE_deja"), "/old/place/deja");
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_deja")).expect("exe").display().to_string();
    let moved = moved.replace(&exe, "/old/place/deja");
    std::fs::write(h.home.join(".claude.json"), moved).expect("write");
    let v: Value = serde_json::from_slice(&deja_in(&h, &[], &["doctor", "--json"], None).stdout).expect("json");
    let t = target(&v, "claude", "claude");
    assert_eq!(t["state"], "stale", "{t}");
    assert_eq!(t["fix"], "deja install claude");
    std::fs::write(h.home.join(".claude.json"), "{\n  \"mcpServers\": @\n}").expect("write");
    let out = deja_in(&h, &[], &["doctor", "--json"], None);
    assert_eq!(out.status.code(), Some(1), "problems give a non-zero status");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let t = target(&v, "claude", "claude");
    assert_eq!(t["state"], "broken", "{t}");
    assert!(t["detail"].to_string().contains("line 2"), "{t}");
}
