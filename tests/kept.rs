//! History the harness deletes, end to end: `deja doctor` and `deja index` say what
//! Claude Code's own sweep (`cleanupPeriodDays`) deletes this week and whether deja
//! keeps it.

use std::path::Path;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::e2e::{build_home, Home};

const DAY: Duration = Duration::from_secs(86_400);

fn age(path: &Path, days: u32) {
    let f = std::fs::File::options().write(true).open(path).expect("open");
    f.set_modified(SystemTime::now() - DAY * days).expect("set mtime");
}

fn claude_retention(v: &Value) -> Value {
    v["retention"].as_array().into_iter().flatten().find(|r| r["harness"] == "claude").cloned().unwrap_or(Value::Null)
}

#[test]
fn doctor_and_index_say_what_claude_deletes_this_week_and_that_deja_keeps_it() {
    let h = Home::new();
    let (claude, _, _) = build_home(&h);
    // Past the default 30 days: deleted at Claude's next start.
    age(&claude, 35);

    let before = claude_retention(&h.json(&["doctor", "--json", "--harness", "claude"]));
    assert_eq!(before["policy"]["max_age_secs"], 30 * 86_400, "{before}");
    assert_eq!(before["policy"]["from"], "default", "{before}");
    assert_eq!(before["due"]["overdue"], 1, "{before}");
    assert_eq!(before["lost"], 1, "not archived yet: {before}");
    let text = String::from_utf8_lossy(&h.deja(&["doctor", "--harness", "claude"]).stdout).into_owned();
    assert!(text.contains("1 not yet archived"), "{text}");

    let after = claude_retention(&h.json(&["index", "--json"]));
    assert_eq!((after["kept"].as_u64(), after["lost"].as_u64()), (Some(1), Some(0)), "{after}");
    let text = String::from_utf8_lossy(&h.deja(&["doctor", "--harness", "claude"]).stdout).into_owned();
    assert!(text.contains("1 of its 1 sessions will be deleted within 7 days") && text.contains("deja keeps all of them"), "{text}");

    // The user's own setting: a year keeps it on disk; nothing is due.
    std::fs::write(h.home.join(".claude/settings.json"), r#"{"cleanupPeriodDays": 365}"#).expect("settings");
    let year = claude_retention(&h.json(&["doctor", "--json", "--harness", "claude"]));
    assert_eq!(year["policy"]["from"], "settings file", "{year}");
    assert_eq!(year["due"]["overdue"].as_u64().unwrap_or(9) + year["due"]["within"].as_u64().unwrap_or(9), 0, "{year}");
    // deja only reads it.
    assert_eq!(std::fs::read_to_string(h.home.join(".claude/settings.json")).expect("read"), r#"{"cleanupPeriodDays": 365}"#);

    // Excluded from deja: what Claude deletes is lost, and doctor says so.
    std::fs::write(h.home.join(".claude/settings.json"), "{}").expect("settings");
    let config = h.home.join(".config/deja/config.toml");
    std::fs::create_dir_all(config.parent().expect("parent")).expect("mkdir");
    std::fs::write(&config, "[exclude]\nharnesses = [\"claude\"]\n").expect("config");
    let excluded = claude_retention(&h.json(&["doctor", "--json", "--harness", "claude"]));
    assert!(excluded["excluded"].is_string() && excluded["lost"] == 1, "{excluded}");
}

fn deleted_keys(h: &Home, args: &[&str]) -> Vec<String> {
    let mut all = vec!["search", "--deleted", "--json", "--no-refresh"];
    all.extend_from_slice(args);
    let v = h.json(&all);
    v["hits"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|x| format!("{}:{}", x["session"]["harness"].as_str().unwrap_or(""), x["session"]["id"].as_str().unwrap_or("")))
        .collect()
}

#[test]
fn a_session_whose_source_is_gone_is_marked_listed_and_counted_and_unmarked_when_it_is_back() {
    let h = Home::new();
    let (claude, _, _) = build_home(&h);
    let key = format!("claude:{}", crate::e2e::CLAUDE_SESSION);
    let r = h.json(&["index", "--json"]);
    assert_eq!(r["sources_gone"], 0, "{r}");
    assert!(deleted_keys(&h, &[]).is_empty(), "nothing is deleted yet");

    let kept = std::fs::read(&claude).expect("read");
    std::fs::remove_file(&claude).expect("the harness sweeps it");
    let r = h.json(&["index", "--json"]);
    assert_eq!(r["sources_gone"], 1, "{r}");
    assert_eq!(deleted_keys(&h, &[]), vec![key.clone()], "listed with no words");
    assert_eq!(deleted_keys(&h, &["nightly"]), vec![key.clone()], "and by its words");
    assert!(deleted_keys(&h, &["invoice"]).is_empty(), "the codex session is not deleted");
    let plain = h.json(&["search", "nightly", "--json", "--no-refresh"]);
    let noticed = &plain["hits"][0]["session"]["source_deleted"]["noticed"];
    assert!(noticed.is_string(), "every search says so: {plain}");

    let shown = h.json(&["show", crate::e2e::CLAUDE_SESSION, "--json"]);
    assert_eq!(&shown["session"]["source_deleted"]["noticed"], noticed, "{shown}");
    let text = String::from_utf8_lossy(&h.deja(&["show", crate::e2e::CLAUDE_SESSION]).stdout).into_owned();
    assert!(text.contains("its harness deleted the source"), "{text}");
    assert!(text.contains(&format!("restore  deja restore {key}")), "show offers restore next to resume: {text}");
    assert_eq!(shown["restore"], format!("deja restore {key}"), "{shown}");
    let harnesses = h.json(&["harnesses", "--json"]);
    let claude_row = harnesses["harnesses"].as_array().into_iter().flatten().find(|x| x["id"] == "claude").cloned().unwrap_or_default();
    assert_eq!((claude_row["sessions"].as_u64(), claude_row["source_deleted"].as_u64()), (Some(1), Some(1)), "{claude_row}");
    let recall = String::from_utf8_lossy(&h.deja(&["ctx", "nightly build"]).stdout).into_owned();
    assert!(recall.contains("deja kept it"), "recall (and so MCP) says it: {recall}");

    // A rebuild keeps the label and its first date.
    ok_json(&h, &["index", "--rebuild", "--json"]);
    let again = h.json(&["search", "nightly", "--json", "--no-refresh"]);
    assert_eq!(&again["hits"][0]["session"]["source_deleted"]["noticed"], noticed, "{again}");

    // Back on disk: no longer deleted.
    std::fs::write(&claude, kept).expect("put back");
    let r = h.json(&["index", "--json"]);
    assert_eq!(r["sources_back"], 1, "{r}");
    assert!(deleted_keys(&h, &[]).is_empty());
}

fn ok_json(h: &Home, args: &[&str]) -> Value {
    h.json(args)
}

#[test]
fn restore_writes_a_deleted_claude_session_back_where_claude_reads_it_and_never_overwrites() {
    let h = Home::new();
    let (claude, _, _) = build_home(&h);
    let id = crate::e2e::CLAUDE_SESSION;
    h.json(&["index", "--json"]);
    std::fs::remove_file(&claude).expect("the harness sweeps it");
    h.json(&["index", "--json"]);

    let dry = h.json(&["restore", id, "--dry-run", "--json"]);
    let r = &dry["restored"][0];
    assert_eq!(r["path"].as_str().map(std::path::PathBuf::from), Some(claude.clone()), "{dry}");
    assert!(r["bytes"].as_u64().unwrap_or(0) > 0 && r["written"] == false, "{dry}");
    assert!(!claude.exists(), "a dry run writes nothing");

    let done = h.json(&["restore", id, "--json"]);
    let r = &done["restored"][0];
    assert_eq!(r["written"], true, "{done}");
    assert!(r["redacted_turns"].as_u64().unwrap_or(0) >= 1, "the prompt held keys, kept redacted: {done}");
    assert!(r["resume"].as_str().is_some_and(|c| c.contains(&format!("claude --resume {id}"))), "{done}");
    let text = std::fs::read_to_string(&claude).expect("restored");
    assert!(!text.contains("AKIAIOSFODNN7EXAMPLE") && text.contains("[redacted:"), "secrets stay redacted");
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).expect("every line is JSON");
        if v["type"] == "user" || v["type"] == "assistant" {
            for field in ["uuid", "sessionId", "cwd", "version", "timestamp"] {
                assert!(v[field].is_string(), "{field} missing in {line}");
            }
            assert_eq!(v["sessionId"], id);
        }
    }
    // Read back through deja: the session is the harness's again, with its turns.
    let r = h.json(&["index", "--json"]);
    assert_eq!(r["sources_back"], 1, "{r}");
    let shown = h.json(&["show", id, "--json"]);
    assert!(shown["session"]["source_deleted"].is_null(), "{shown}");
    let turns = shown["turns"].as_array().cloned().unwrap_or_default();
    assert!(
        turns.iter().any(|t| t["tool"]["command"] == "cd ci && make nightly"
            && t["tool"]["is_error"] == true
            && t["text"] == "make: *** [nightly] Error 124"),
        "{shown}"
    );

    // Never over a file; --force writes a copy under a new id beside it.
    let again = h.deja(&["restore", id]);
    assert!(!again.status.success() && String::from_utf8_lossy(&again.stderr).contains("exists already"), "{again:?}");
    assert_eq!(std::fs::read_to_string(&claude).expect("same"), text, "untouched");
    let beside = h.json(&["restore", id, "--force", "--json"]);
    let copy = &beside["restored"][0];
    assert_eq!(copy["beside"], true, "{beside}");
    assert_ne!(copy["id"], id, "{beside}");
    assert!(std::path::Path::new(copy["path"].as_str().unwrap_or("")).exists(), "{beside}");

    // A session deja does not know is an error naming it.
    let unknown = h.deja(&["restore", "no-such-session"]);
    assert!(!unknown.status.success() && String::from_utf8_lossy(&unknown.stderr).contains("no-such-session"));
}
