//! Every test of deja-adapter-reasonix, in one test binary: the conformance kit, the
//! generated `events.frames` fixtures (`frames`), then the rules that matter most for
//! Reasonix (which copy of a session wins, host messages, batches, exit codes, files).

mod frames;
mod runtime;

use std::path::{Path, PathBuf};

use deja_adapter_reasonix::{storage_state, ReasonixFormat};
use deja_core::testkit::session as by_id;
use deja_core::{ExitStatus, FileAction, HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(
    ReasonixFormat,
    wires "REASONIX_HOME" => ".reasonix"
);

fn fixture_home() -> PathBuf {
    deja_core::fixture_home!()
}

fn sessions_with(opts: &ParseOptions) -> Vec<Session> {
    deja_core::testkit::read_all(&ReasonixFormat, &StoreEnv::with_home(fixture_home()), opts)
}

fn sessions() -> Vec<Session> {
    sessions_with(&ParseOptions::default())
}

fn rel_sources(env: &StoreEnv, home: &Path) -> Vec<String> {
    ReasonixFormat.discover(env).sources.iter().map(|s| s.path.strip_prefix(home).unwrap_or(&s.path).display().to_string()).collect()
}

#[test]
fn one_copy_of_each_session_is_read() {
    let home = fixture_home();
    let found = rel_sources(&StoreEnv::with_home(&home), &home);
    for kept in [
        ".reasonix/desktop-sessions-v5/by-id/desk-4/events.frames",
        ".reasonix/projects/-w-app/sessions-v4/mirrored-1/events.frames",
        ".reasonix/sessions-v4/migrated-2/events.frames",
        ".reasonix/sessions-v4/fork-3/events.frames",
        ".reasonix/projects/-w-app/sessions/cache-warm.jsonl",
        ".config/reasonix/sessions/legacy-7.jsonl",
        "Library/Application Support/reasonix/sessions/legacy-8.jsonl",
    ] {
        assert!(found.iter().any(|f| f == kept), "{kept} should be read; found {found:?}");
    }
    for dropped in [
        // desktop > sessions-v4
        ".reasonix/sessions-v4/desk-4/events.frames",
        // sessions-v4 > JSONL (a mirror under the same id)
        ".reasonix/projects/-w-app/sessions/mirrored-1.jsonl",
        // migrated (manifest source.path) and desktop-imported (sourceMappings)
        ".reasonix/sessions/old-chat.jsonl",
        ".reasonix/sessions/imported-6.jsonl",
        // the current store has the same file
        "Library/Application Support/reasonix/sessions/cache-warm.jsonl",
        // sidecars, worker logs, the sub-agent tree
        ".reasonix/projects/-w-app/sessions/cache-warm.events.jsonl",
        ".reasonix/projects/-w-app/sessions/cache-warm.wire.jsonl",
        ".reasonix/projects/-w-app/sessions/subagent-1.jsonl",
        ".reasonix/projects/-w-app/sessions/subagents/w1.jsonl",
        ".reasonix/sessions/v0-chat.events.jsonl",
    ] {
        assert!(!found.iter().any(|f| f == dropped), "{dropped} must not be read");
    }
}

#[test]
fn relocation_variables_turn_the_legacy_roots_off() {
    let home = fixture_home();
    let env = StoreEnv::with_home(&home).set("REASONIX_HOME", home.join(".reasonix").display().to_string());
    let found = rel_sources(&env, &home);
    assert!(found.iter().any(|f| f.ends_with("cache-warm.jsonl")));
    assert!(!found.iter().any(|f| f.contains("legacy-")), "legacy roots are not read once REASONIX_HOME is set: {found:?}");
}

#[test]
fn deja_root_at_a_sessions_dir_reads_that_dir_alone() {
    let home = fixture_home();
    let dir = home.join(".reasonix/sessions");
    let env = StoreEnv::with_home("/nonexistent").set("DEJA_REASONIX_ROOT", dir.display().to_string());
    let mut found = rel_sources(&env, &home);
    found.sort();
    // Nothing is dropped here: the 1.x stores that supersede these are not looked at.
    assert_eq!(found, vec![".reasonix/sessions/imported-6.jsonl", ".reasonix/sessions/old-chat.jsonl", ".reasonix/sessions/v0-chat.jsonl"]);
}

#[test]
fn config_toml_storage_state_moves_the_state_root() {
    assert_eq!(storage_state("[ui]\ntheme = \"dark\"\n[storage]\nstate = \"/data/rx\"\n").as_deref(), Some("/data/rx"));
    assert_eq!(storage_state("[storage]\nstate = '~/rx-state'").as_deref(), Some("~/rx-state"));
    assert_eq!(storage_state("[other]\nstate = \"/no\"\n"), None);
    let tmp = tempfile::tempdir().expect("tmp");
    let state = tmp.path().join("state");
    std::fs::create_dir_all(state.join("sessions")).expect("mkdir");
    std::fs::write(state.join("sessions/moved.jsonl"), "{\"role\":\"user\",\"content\":\"moved store\",\"createdAt\":1790000000000}\n")
        .expect("write");
    std::fs::create_dir_all(tmp.path().join(".reasonix")).expect("mkdir");
    std::fs::write(tmp.path().join(".reasonix/config.toml"), format!("[storage]\nstate = \"{}\"\n", state.display())).expect("write");
    let found = ReasonixFormat.discover(&StoreEnv::with_home(tmp.path())).sources;
    assert!(found.iter().any(|s| s.path == state.join("sessions/moved.jsonl")), "{found:?}");
}

#[test]
fn jsonl_roles_host_text_and_meta() {
    let all = sessions();
    let s = by_id(&all, "cache-warm");
    assert_eq!(s.title.as_deref(), Some("cache"), "custom_title wins");
    assert_eq!(s.project.as_deref(), Some("/w/app"));
    let users: Vec<&str> = s.turns.iter().filter(|t| t.role == Role::User).map(|t| t.text.as_str()).collect();
    assert_eq!(users, vec!["why is the cache cold"], "raw_content is indexed; host-authored and system lines are not speech");
    let call = s.turns.iter().find(|t| t.role == Role::ToolCall).expect("bash call");
    assert_eq!(call.tool.as_ref().and_then(|t| t.command.as_deref()), Some("make warm"));
    assert!(call.text.contains("No rule to make target"), "an id-less result folds into the waiting call");
    assert!(!s.turns.iter().any(|t| t.role == Role::Reasoning), "reasoning is off by default");
    let with = sessions_with(&ParseOptions { include_reasoning: true });
    assert!(by_id(&with, "cache-warm").turns.iter().any(|t| t.role == Role::Reasoning && t.text.contains("no warm rule")));
    let tools = by_id(&all, "file-tools");
    assert_eq!(tools.title.as_deref(), Some("loader tidy"), "topic_title when there is no custom_title");
}

#[test]
fn file_tools_name_files_and_spans() {
    let all = sessions();
    let s = by_id(&all, "file-tools");
    let call = |id: &str| {
        s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.call_id.as_deref()) == Some(id)).unwrap_or_else(|| panic!("call {id}"))
    };
    assert_eq!(call("r1").files[0].action, FileAction::Read);
    let edit = call("e1").edit.as_ref().expect("edit span");
    assert_eq!((edit.path.as_str(), edit.old.as_str(), edit.new.as_deref()), ("src/loader.rs", "let x = 1;", Some("let retries = 1;")));
    assert_eq!(call("me1").edit.as_ref().map(|e| e.old.as_str()), Some("mod old_loader;"));
    assert_eq!(call("w1").files[0].action, FileAction::Write);
    assert_eq!(call("n1").edit.as_ref().and_then(|e| e.new.as_deref()), Some("print(bench())"));
    assert!(call("n2").edit.is_none(), "a deleted cell writes nothing");
    assert_eq!(call("dr1").edit.as_ref().map(|e| e.old.as_str()), Some("// TODO: remove the old loader\nfn legacy_shim() {}"));
    assert!(call("dr2").edit.is_none(), "a failed delete_range removed nothing");
    assert_eq!(call("ds1").files[0].path, "src/loader.rs");
    let mv: Vec<_> = call("mv1").files.iter().map(|f| (f.path.as_str(), f.action)).collect();
    assert_eq!(mv, vec![("src/util.rs", FileAction::Delete), ("src/loader/util.rs", FileAction::Write)]);
}

#[test]
fn v0_sessions_use_meta_json_and_event_stamps() {
    let all = sessions();
    let s = by_id(&all, "v0-chat");
    assert_eq!((s.title.as_deref(), s.project.as_deref()), (Some("lockfile bump"), Some("/w/lib")));
    assert_eq!(s.started.map(|t| t.to_rfc3339()).as_deref(), Some("2025-06-01T09:00:00.000Z"));
    let call = s.turns.iter().find(|t| t.role == Role::ToolCall).expect("nested function call");
    assert_eq!(call.tool.as_ref().and_then(|t| t.command.as_deref()), Some("cargo update -p serde"));
}

#[test]
fn frames_replay_finished_verified_batches() {
    let all = sessions();
    let s = by_id(&all, "mirrored-1");
    assert_eq!(s.project.as_deref(), Some("/w/app"), "from the host's session-context line");
    assert_eq!(s.title.as_deref(), Some("prefix cache misses"));
    let texts: Vec<&str> = s.turns.iter().map(|t| t.text.as_str()).collect();
    assert!(texts.contains(&"why does the prefix cache miss after a restart"));
    assert!(texts.iter().any(|t| t.contains("embeds the start time")), "message/upsert replaced the draft");
    for gone in ["draft answer that is replaced", "a retracted aside", "corrupted batch text", "unfinished batch text", "/status"] {
        assert!(!texts.iter().any(|t| t.contains(gone)), "`{gone}` must not be indexed");
    }
    assert!(!texts.iter().any(|t| t.contains("Current workspace")), "the host's context is not speech");
    let probe = s.turns.iter().find(|t| t.role == Role::ToolCall).expect("probe call");
    assert_eq!(probe.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(2)));
    assert!(probe.text.contains("system prompt hash"), "raw_content: the uncut result");
    let user = s.turns.iter().find(|t| t.role == Role::User).expect("user");
    assert_eq!(user.time.map(|t| t.0), Some(1_790_000_001_000), "createdAt on user messages");
    let answer = s.turns.iter().find(|t| t.text.contains("embeds the start time")).expect("answer");
    assert_eq!(answer.time.map(|t| t.0), Some(1_790_000_004_000), "others take their batch's time");
}

#[test]
fn migrations_forks_and_desktop_sessions() {
    let all = sessions();
    let migrated = by_id(&all, "migrated-2");
    assert!(migrated.parent.is_none(), "a migration from a transcript is not a fork");
    assert!(migrated.turns.iter().any(|t| t.text == "port the retry loop to tokio"), "legacy/import");
    assert!(migrated.turns.iter().any(|t| t.text.contains("retry storm")), "the payloadRef content object");
    let fork = by_id(&all, "fork-3");
    assert_eq!((fork.parent.as_deref(), fork.kind.as_deref()), (Some("migrated-2"), Some("fork")));
    let desk = by_id(&all, "desk-4");
    assert_eq!((desk.project.as_deref(), desk.title.as_deref()), (Some("/w/desk"), Some("config loader rename")));
    assert!(!desk.turns.iter().any(|t| t.text.contains("older sessions-v4 copy")));
    let edit = desk.turns.iter().find_map(|t| t.edit.as_ref()).expect("edit");
    assert_eq!(edit.old, "fn load_cfg()");
    assert_eq!(by_id(&all, "desk-5").project.as_deref(), Some("/w/imported"), "from workspace-state-v1.json");
}

#[test]
fn release_1_38_11_session_reads_whole() {
    let all = sessions();
    let s = by_id(&all, "cc61c01afe90b3c925106ffba260a7b2");
    assert_eq!(s.project.as_deref(), Some("/home/dev/projects/shop"), "from the session-context snapshot");
    let users: Vec<&str> = s.turns.iter().filter(|t| t.role == Role::User).map(|t| t.text.as_str()).collect();
    assert_eq!(users, vec!["Please fix the jwt refresh bug in auth.rs", "Now add a test for the jwt refresh expiry"]);
    let bash = s.turns.iter().find(|t| t.tool.as_ref().is_some_and(|x| x.name == "bash")).expect("bash call");
    assert_eq!(bash.tool.as_ref().and_then(|t| t.command.as_deref()), Some("cargo test jwt_refresh"));
    assert_eq!(bash.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(101)));
    let edit = s.turns.iter().find(|t| t.tool.as_ref().is_some_and(|x| x.name == "edit_file")).expect("edit call");
    assert!(edit.tool.as_ref().is_some_and(|t| t.is_error), "tool_run_state failed");
    assert_eq!(edit.edit.as_ref().map(|e| e.old.as_str()), Some("exp < now"));
    let write = s.turns.iter().find(|t| t.tool.as_ref().is_some_and(|x| x.name == "write_file")).expect("write call");
    assert_eq!(write.files.iter().map(|f| (f.path.as_str(), f.action)).collect::<Vec<_>>(), vec![("tests/jwt.rs", FileAction::Write)]);
    assert!(!s.turns.iter().any(|t| t.role == Role::Reasoning));
    assert!(!s.turns.iter().any(|t| t.text.contains("session-context") || t.text.contains("You are Reasonix")));
    assert_eq!(s.started.map(|t| t.to_rfc3339()).as_deref(), Some("2026-12-01T11:50:08.376Z"), "the manifest's createdAt");
}

/// An RX4F frame around `z`, claiming `raw` decoded bytes.
fn bomb_frame(z: &[u8], raw: u32) -> Vec<u8> {
    let mut out = b"RX4F".to_vec();
    out.extend((z.len() as u32).to_be_bytes());
    out.extend(raw.to_be_bytes());
    out.extend(z);
    out
}

#[test]
fn bomb_frames_are_bounded_one_by_one_and_together() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("sessions-v4/bomb-1/events.frames");
    std::fs::create_dir_all(log.parent().expect("parent")).expect("mkdir");
    let parse = || ReasonixFormat.parse(&deja_core::SourceRef::file(&log), &ParseOptions::default(), &mut Vec::new());

    // Each frame stays under the allowance one frame always has (1 MiB), but 400 of
    // them from 20 KB are 400 MiB: the file as a whole is refused, not decoded.
    let one_mib = deja_core::read::zstd_rle_bomb(1 << 20);
    let many: Vec<u8> = (0..400).flat_map(|_| bomb_frame(&one_mib, 1 << 20)).collect();
    std::fs::write(&log, &many).expect("write");
    let err = parse().expect_err("refused");
    assert!(matches!(&err, deja_core::FormatError::Refused { .. }), "{err}");
    assert!(err.to_string().contains("decompression bomb"), "{err}");

    // One frame claiming 16 MiB from a few hundred bytes is over the ratio: skipped,
    // never allocated, and the file is still read.
    let big = deja_core::read::zstd_rle_bomb(16 << 20);
    std::fs::write(&log, bomb_frame(&big, 16 << 20)).expect("write");
    let stats = parse().expect("read");
    assert_eq!(stats.records, 1);
}
