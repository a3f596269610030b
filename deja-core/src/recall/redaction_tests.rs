//! The way-out guarantee: an index that holds secrets unredacted — built by an older
//! deja, or before a kind of secret was known — still shows none of them. The
//! session is written here straight into tantivy, as the indexer lays it out but
//! without the ingest step, and then read back through every query surface: search,
//! and every recall answer. It lives with recall, the top of the surfaces it reads
//! through, so the index below never names recall, even in a test.

use tantivy::{doc, Index};

use super::query::{blame, context, fixes, how, recall, Scope};
use super::{frame::frame, render};
use crate::index::records::{add_turn_terms, work_documents};
use crate::index::schema::{build_schema, register_tokenizer, KIND_SESSION, KIND_TURN, SCHEMA_VERSION};
use crate::index::search::SearchRequest;
use crate::index::{IndexPaths, IndexView, TurnExtra};
use crate::model::{Edit, ExitStatus, FileAction, FileTouch, Role, Session, SessionMeta, SourceRef, Timestamp, ToolUse, Turn};

const STRIPE: &str = "sk_live_SQedUStPKR0CsTy4Qwb8DwkN";
const FINE_GRAINED: &str = "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";
const CURL_PW: &str = "hunter22xyz";
const REDIS_PW: &str = "s3cr3tredispw";
const SIGNING: &str = "k3ym4t3r14lsigning";

fn turn(seq: u32, role: Role, text: &str) -> Turn {
    Turn {
        seq,
        role,
        text: text.to_string(),
        time: Some(Timestamp(1_772_323_200_000 + i64::from(seq) * 1000)),
        node: None,
        tool: None,
        files: Vec::new(),
        edit: None,
        partial: false,
    }
}

fn shell(seq: u32, command: &str, exit: i64, output: &str) -> Turn {
    Turn {
        tool: Some(ToolUse {
            name: "bash".into(),
            command: Some(command.into()),
            exit: Some(ExitStatus::Code(exit)),
            ..ToolUse::default()
        }),
        ..turn(seq, Role::ToolCall, output)
    }
}

/// A session whose every field holds a secret, as no ingest redaction left it.
fn leaky_session() -> Session {
    let mut edit = turn(4, Role::ToolCall, "edited");
    edit.tool = Some(ToolUse { name: "edit".into(), ..ToolUse::default() });
    edit.files = vec![FileTouch { path: "/src/app/.env".into(), action: FileAction::Edit }];
    edit.edit = Some(Edit {
        path: "/src/app/.env".into(),
        old: format!("WEBHOOK_SIGNING_KEY={SIGNING}"),
        new: Some(format!("REDIS_URL=redis://:{REDIS_PW}@cache:6379")),
    });
    Session {
        harness: "alpha".into(),
        id: "0a0a0a0a-1111-4222-8333-944445555666".into(),
        title: Some(format!("zebrafish deploy with {STRIPE}")),
        project: Some("/src/app".into()),
        source: SourceRef::default(),
        started: Some(Timestamp(1_772_323_200_000)),
        updated: Some(Timestamp(1_772_323_260_000)),
        parent: None,
        kind: None,
        agent: None,
        turns: vec![
            turn(0, Role::User, &format!("zebrafish deploy fails; the key is {STRIPE} and my token {FINE_GRAINED}")),
            shell(
                1,
                &format!("curl -u admin:{CURL_PW} https://api.example.com/deploy"),
                22,
                &format!("curl: (22) The requested URL returned error: 401 for key {STRIPE}"),
            ),
            turn(2, Role::Assistant, &format!("Fixed: the deploy needs the redis://:{REDIS_PW}@cache URL, so I switched to it.")),
            shell(3, &format!("curl -u admin:{CURL_PW} --fail https://api.example.com/deploy"), 0, "deployed zebrafish"),
            edit,
        ],
        title_by: crate::model::TitleBy::Harness,
    }
}

const SECRETS: &[&str] = &[STRIPE, FINE_GRAINED, CURL_PW, REDIS_PW, SIGNING];

fn assert_clean(what: &str, text: &str) {
    for s in SECRETS {
        assert!(!text.contains(s), "{what} shows {s}:\n{text}");
    }
}

/// `s`'s metadata as its session document stores it, nothing redacted.
fn meta_of(s: &Session, source: &str) -> SessionMeta {
    SessionMeta {
        harness: s.harness.clone(),
        id: s.id.clone(),
        title: s.title.clone(),
        project: s.project.clone(),
        path: source.into(),
        started: s.started,
        updated: s.updated,
        parent: None,
        kind: None,
        agent: None,
        machine: None,
        turns: s.turns.len() as u32,
        source_deleted: None,
    }
}

/// Writes `s` as the indexer lays out its documents, without redacting anything.
fn write_unredacted(paths: &IndexPaths, s: &Session) {
    std::fs::create_dir_all(paths.tantivy()).expect("index dir");
    let (schema, f) = build_schema();
    let index = Index::create_in_dir(paths.tantivy(), schema).expect("create index");
    register_tokenizer(&index);
    std::fs::write(paths.version(), format!("{SCHEMA_VERSION}\n")).expect("version");
    let mut writer = index.writer_with_num_threads(1, 15_000_000).expect("writer");
    let sid = s.key();
    let sid_hash = xxhash_rust::xxh3::xxh3_64(sid.as_bytes());
    let source = "test-source";
    for t in &s.turns {
        let extra =
            TurnExtra { tool: t.tool.clone(), files: t.files.clone(), edit: t.edit.clone(), node: None, partial: false, role: t.role };
        let mut d = doc!(
            f.kind => KIND_TURN,
            f.sid => sid.as_str(),
            f.sid_hash => sid_hash,
            f.harness => s.harness.as_str(),
            f.source => source,
            f.role => t.role.as_str(),
            f.seq => u64::from(t.seq),
            f.time => t.time.map_or(0, |x| x.0),
            f.extra => serde_json::to_string(&extra).expect("extra"),
        );
        if t.tool.as_ref().is_some_and(|x| x.command.is_some()) {
            d.add_text(f.role, "command");
        }
        add_turn_terms(&mut d, &f, t);
        d.add_text(f.text, &t.text);
        if let Some(cmd) = t.tool.as_ref().and_then(|x| x.command.as_deref()) {
            d.add_text(f.text, cmd);
        }
        writer.add_document(d).expect("turn doc");
    }
    for d in work_documents(&f, s, source, &[], 0) {
        writer.add_document(d).expect("record doc");
    }
    let meta = meta_of(s, source);
    let mut d = doc!(
        f.kind => KIND_SESSION,
        f.sid => sid.as_str(),
        f.sid_hash => sid_hash,
        f.harness => s.harness.as_str(),
        f.source => source,
        f.time => s.updated.map_or(0, |x| x.0),
        f.extra => serde_json::to_string(&meta).expect("meta"),
    );
    if let Some(t) = &meta.title {
        d.add_text(f.text, t);
    }
    if let Some(p) = &meta.project {
        d.add_text(f.text, p);
        crate::index::records::add_project_terms(&mut d, &f, p);
    }
    writer.add_document(d).expect("session doc");
    writer.commit().expect("commit");
    // The turns' text, where the index reads it: the archive, also unredacted.
    let archive = crate::archive::Archive::new(paths.root.with_file_name("archive"));
    let mut w = archive.writer();
    w.session(&meta, &s.turns).expect("archive");
    w.commit().expect("archive commit");
    paths.link_archive(&archive.dir).expect("link");
}

#[test]
fn an_index_holding_secrets_shows_none_of_them() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let paths = IndexPaths::new(tmp.path().join("index"));
    let s = leaky_session();
    write_unredacted(&paths, &s);
    let view = IndexView::open(&paths).expect("open");
    let sid = s.key();

    // The index really holds them: the test bypassed ingest.
    let searcher = view.searcher();
    let addrs = searcher.search(&view.kind_term(KIND_TURN), &tantivy::collector::DocSetCollector).expect("turns");
    let raw: String = addrs
        .into_iter()
        .map(|a| {
            let t = view.stored_turn(&searcher.doc(a).expect("doc"));
            format!("{} {:?} {:?}", t.text, t.tool, t.edit)
        })
        .collect();
    for secret in SECRETS {
        assert!(raw.contains(secret), "the planted {secret} is not in the index");
    }

    // `show`: the session's turns and metadata.
    let turns = view.session_turns(&sid).expect("turns");
    assert_eq!(turns.len(), s.turns.len());
    let shown = serde_json::to_string(&turns).expect("json");
    assert_clean("session_turns", &shown);
    assert!(shown.contains("[redacted:stripe_key]") && shown.contains("[redacted:github_fine_grained_token]"), "{shown}");
    assert!(shown.contains("[redacted:curl_user]") && shown.contains("[redacted:secret_assignment]"), "{shown}");
    assert!(shown.contains("deployed zebrafish"), "the rest of the text is kept: {shown}");
    let metas = serde_json::to_string(&view.all_sessions(None).expect("sessions")).expect("json");
    assert_clean("all_sessions", &metas);
    assert_clean("session_meta", &serde_json::to_string(&view.session_meta(&searcher, &sid).expect("meta")).expect("json"));

    // Search: hits, their turns and snippets, for a word and for the secret itself
    // (an old index has the secret's terms, so it is found — but never shown).
    for q in ["zebrafish deploy", STRIPE, CURL_PW, "redis cache"] {
        let r = view.search(&SearchRequest { query: q.to_string(), limit: 5, ..SearchRequest::default() }).expect("search");
        assert!(!r.hits.is_empty(), "{q} found nothing");
        assert_clean(&format!("search {q}"), &serde_json::to_string(&r).expect("json"));
    }

    // Recall: every answer, as JSON and as the framed text MCP and the CLI print.
    let scope = Scope::default();
    let fix = fixes(&view, "curl: (22) The requested URL returned error: 401", &scope, 5).expect("fix");
    assert!(!fix.fixes.is_empty(), "the planted fix was not found: {fix:?}");
    assert_clean("fix", &serde_json::to_string(&fix).expect("json"));
    assert_clean("fix framed", &frame(&render::fix(&fix), 0, 8192));
    let h = how(&view, "curl", &scope, 5).expect("how");
    assert!(!h.commands.is_empty());
    assert_clean("how", &serde_json::to_string(&h).expect("json"));
    assert_clean("how plain", &render::plain(&render::how(&h, "curl")));
    let b = blame(&view, ".env", &scope, 5).expect("blame");
    assert_clean("blame", &serde_json::to_string(&b).expect("json"));
    let c = context(&view, &sid, &scope).expect("context").expect("a context");
    assert_clean("context", &serde_json::to_string(&c).expect("json"));
    assert_clean("context framed", &frame(&render::context(&c), 0, 8192));
    let r = recall(&view, "zebrafish", &scope, 5).expect("recall");
    assert_clean("recall framed", &frame(&render::recall(&r, "zebrafish"), 0, 8192));
}

#[test]
fn session_metadata_is_trusted_only_when_this_binarys_rules_marked_it() {
    let s = leaky_session();
    let meta = SessionMeta { project: Some(format!("/src/{STRIPE}")), ..meta_of(&s, "/logs/a.jsonl") };
    // What an index run stores is redacted before it is marked, whatever it was given.
    let stored = meta.stored_json();
    assert_clean("stored metadata", &stored);
    let read = SessionMeta::from_stored(&stored).expect("parsed");
    assert_eq!(read.title.as_deref(), Some("zebrafish deploy with [redacted:stripe_key]"));
    assert_eq!((read.id.as_str(), read.turns), (s.id.as_str(), 5));

    // Marked by other rules, or not at all: redacted on the way out.
    let plain = serde_json::to_string(&meta).expect("json");
    let foreign = format!("{},\"redacted_with\":{}}}", plain.trim_end_matches('}'), crate::redact::fingerprint() ^ 1);
    for json in [plain, foreign] {
        let read = SessionMeta::from_stored(&json).expect("parsed");
        assert_clean("metadata read back", &serde_json::to_string(&read).expect("json"));
        assert!(read.title.as_deref().is_some_and(|t| t.starts_with("zebrafish deploy with [redacted:")), "{read:?}");
    }
    // The mark is not part of the metadata a caller sees.
    assert!(!serde_json::to_string(&read).expect("json").contains("redacted_with"));
}
