//! Wiring whose files change while the harness runs, end to end: Goose's hooks write the
//! recall into `.goosehints` and the MOIM file instead of stdout, `deja aider` refreshes
//! aider's `read:` context file and execs aider with its arguments, and `deja
//! reasonix-ext` answers Reasonix's extension protocol. After any of that, `deja
//! uninstall` still gives every file back byte for byte.

use std::path::Path;
use std::process::Output;

use serde_json::{json, Value};

use crate::e2e::{build_home, Home};

fn run(h: &Home, extra: &[(&str, &Path)], args: &[&str], stdin: Option<&[u8]>) -> Output {
    crate::wiring::deja_in(h, extra, args, stdin)
}

fn ok(out: &Output) {
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

/// `deja doctor --json`'s state of one target.
fn doctor_state(h: &Home, id: &str, target: &str) -> String {
    let out = run(h, &[], &["doctor", "--json"], None);
    let v: Value = serde_json::from_slice(&out.stdout).expect("doctor json");
    let harness = v["harnesses"].as_array().and_then(|hs| hs.iter().find(|x| x["id"] == id)).cloned().unwrap_or_default();
    let t = harness["wiring"].as_array().and_then(|ts| ts.iter().find(|x| x["target"] == target)).cloned().unwrap_or_default();
    t["state"].as_str().unwrap_or_default().to_string()
}

const GOOSE_CONFIG: &str = "# my goose\nGOOSE_PROVIDER: \"openai\"  # mine\nextensions:\n  mine:\n    enabled: true\n    type: stdio\n    cmd: \"/usr/bin/mine\"\n";
const HINTS: &str = "Prefer small commits.\n";

#[test]
fn goose_hooks_write_where_goose_reads_and_uninstall_gives_the_files_back() {
    let h = Home::new();
    build_home(&h);
    h.json(&["index", "--json"]);
    let cfg = h.home.join(".config/goose");
    std::fs::create_dir_all(&cfg).expect("mkdir");
    std::fs::write(cfg.join("config.yaml"), GOOSE_CONFIG).expect("write");
    std::fs::write(cfg.join(".goosehints"), HINTS).expect("write");
    ok(&run(&h, &[], &["install", "goose-auto"], None));
    let moim = cfg.join("deja-recall.md");
    let hooks = std::fs::read_to_string(h.home.join(".agents/plugins/deja/hooks/hooks.json")).expect("plugin hooks");
    assert!(hooks.contains("hook-session-start --goose") && hooks.contains("hook-prompt --goose") && !hooks.contains("matcher"), "{hooks}");

    let prompt = br#"{"event":"UserPromptSubmit","session_id":"g-1","matcher_context":"why does the nightly build time out","message":"why does the nightly build time out"}"#;
    // Without deja's MOIM file named, the prompt hook leaves everything alone.
    let out = run(&h, &[], &["hook-prompt", "--goose"], Some(prompt));
    ok(&out);
    assert!(out.stdout.is_empty() && std::fs::read(&moim).expect("moim").is_empty());
    let out = run(&h, &[("GOOSE_MOIM_MESSAGE_FILE", &moim)], &["hook-prompt", "--goose"], Some(prompt));
    ok(&out);
    assert!(out.stdout.is_empty(), "Goose discards stdout; the hook prints nothing");
    let recall = std::fs::read_to_string(&moim).expect("moim");
    assert!(recall.starts_with("<deja-recall") && recall.contains("nightly"), "{recall}");

    let start = br#"{"event":"SessionStart","session_id":"g-2","cwd":"/src/app"}"#;
    ok(&run(&h, &[("GOOSE_MOIM_MESSAGE_FILE", &moim)], &["hook-session-start", "--goose"], Some(start)));
    let hints = std::fs::read_to_string(cfg.join(".goosehints")).expect("hints");
    assert!(hints.starts_with(HINTS) && hints.contains("<!-- deja recall:start -->"), "{hints}");
    assert_eq!(std::fs::read_to_string(&moim).expect("moim"), recall, "one refresh leaves the other live file as it was");
    // Garbage is silence, and changes nothing.
    ok(&run(&h, &[("GOOSE_MOIM_MESSAGE_FILE", &moim)], &["hook-prompt", "--goose"], Some(b"{not json")));
    assert_eq!(std::fs::read_to_string(&moim).expect("moim"), recall);

    assert_eq!(doctor_state(&h, "goose", "goose-auto"), "wired", "files the hooks refreshed are deja's, not stale");

    ok(&run(&h, &[], &["uninstall", "goose"], None));
    assert_eq!(std::fs::read_to_string(cfg.join(".goosehints")).expect("hints"), HINTS);
    assert_eq!(std::fs::read_to_string(cfg.join("config.yaml")).expect("config"), GOOSE_CONFIG);
    assert!(!moim.exists() && !h.home.join(".agents/plugins").exists());
}

#[cfg(unix)]
#[test]
fn deja_aider_refreshes_the_context_file_then_execs_aider_with_its_arguments() {
    use std::os::unix::fs::PermissionsExt;
    let h = Home::new();
    build_home(&h);
    h.json(&["index", "--json"]);
    let conf = "# mine\nread: CONVENTIONS.md\n";
    std::fs::write(h.home.join(".aider.conf.yml"), conf).expect("write");
    ok(&run(&h, &[], &["install", "aider"], None));
    let context = h.home.join(".config/deja/aider-context.md");
    assert!(std::fs::read_to_string(h.home.join(".aider.conf.yml")).expect("conf").contains(&context.display().to_string()));
    // A stand-in aider: prints its arguments and the context file it would read.
    let bin = h.home.join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let fake = bin.join("aider");
    std::fs::write(&fake, format!("#!/bin/sh\necho \"args: $*\"\ncat '{}'\n", context.display())).expect("write");
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let path = std::env::join_paths([bin.clone()].into_iter().chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())))
        .expect("PATH");
    let out = run(&h, &[("PATH", Path::new(&path))], &["aider", "--model", "x", "--message", "hi there"], None);
    ok(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("args: --model x --message hi there\n# Past sessions (deja)"), "{stdout}");
    assert_eq!(std::fs::read_to_string(h.home.join(".aider.conf.yml")).expect("conf").matches("aider-context.md").count(), 1);
    assert_eq!(doctor_state(&h, "aider", "aider"), "wired");
    ok(&run(&h, &[], &["uninstall", "aider"], None));
    assert_eq!(std::fs::read_to_string(h.home.join(".aider.conf.yml")).expect("conf"), conf);
    assert!(!context.exists() && !h.home.join(".config/deja").exists());
}

#[test]
fn reasonix_ext_speaks_the_extension_protocol_and_fails_open() {
    let h = Home::new();
    build_home(&h);
    h.json(&["index", "--json"]);
    let frames = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "extension/initialize", "params": {"protocolVersion": "2", "protocolId": "reasonix.extension.v2", "session": {"sessionId": "boot-1", "workspaceRoot": "/src/app", "generation": 1}}}),
        json!({"jsonrpc": "2.0", "method": "extension/initialized", "params": {}}),
        json!({"jsonrpc": "2.0", "method": "extension/event", "params": {"event": "session.start", "payload": {"phase": "start", "sessionPath": "rx-1"}}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "extension/intercept", "params": {"event": "input.receive", "seq": 1, "payload": {"text": "why does the nightly build time out"}, "timeoutMillis": 5000}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "extension/intercept", "params": {"event": "tool.after", "seq": 2, "payload": {"name": "read_file", "arguments": "{\"path\": \"a\"}", "result": "x"}, "timeoutMillis": 5000}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "extension/intercept", "params": {"event": "input.receive", "seq": 3, "payload": 7, "timeoutMillis": 5000}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "extension/shutdown", "params": {"timeoutMillis": 5000}}),
    ];
    let input: String = frames.iter().map(|f| format!("{f}\n")).collect();
    let out = run(&h, &[], &["reasonix-ext"], Some(input.as_bytes()));
    ok(&out);
    let replies: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).expect("one JSON object a line")).collect();
    assert_eq!(replies.len(), 5, "notifications get no answer: {replies:?}");
    assert_eq!(replies[0]["result"], json!({"protocolVersion": "2", "name": "deja-recall", "version": "1.0.0", "stateSchemaVersion": 1}));
    assert_eq!(replies[1]["result"]["decision"], "replace", "{}", replies[1]);
    let text = replies[1]["result"]["replacement"]["text"].as_str().expect("text");
    assert!(
        text.starts_with("why does the nightly build time out\n\n<deja-recall") && text.trim_end().ends_with("</deja-recall>"),
        "{text}"
    );
    assert_eq!(replies[2]["result"], json!({"decision": "continue"}));
    assert_eq!(replies[3]["result"], json!({"decision": "continue"}), "a payload of another shape is passed along");
    assert_eq!((replies[4]["id"].as_i64(), &replies[4]["result"]), (Some(5), &json!({})));
}
