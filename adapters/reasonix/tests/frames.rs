//! The `events.frames` fixtures, described here and written by this code: frames are
//! binary (RX4F header + zstd), so the committed files are generated, never hand-edited.
//! `frames_fixtures_match_their_description` fails when a committed file no longer
//! decodes to its description; regenerate with
//! `DEJA_WRITE_FRAMES=1 cargo test -p deja-adapter-reasonix frames_fixtures`.
//! (The comparison is by decoded records, so a zstd release that compresses differently
//! does not fail it.)

use base64::Engine;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// How a batch ends.
#[derive(Clone, Copy)]
pub enum End {
    /// `batch/end` with the SHA-256 of the batch's records.
    Good,
    /// `batch/end` with a digest that does not match: the batch must be dropped.
    BadDigest,
    /// No `batch/end`: a write in progress (only ever the last batch).
    Missing,
}

pub struct Batch {
    pub time: i64,
    /// Event records as written (`{type, payload: <base64>}` …).
    pub events: Vec<Value>,
    pub end: End,
}

/// `{type, payload}` with the payload base64-encoded JSON, as the page shows.
pub fn event(kind: &str, payload: Value) -> Value {
    let b64 = base64::engine::general_purpose::STANDARD.encode(payload.to_string());
    json!({"type": kind, "payload": b64})
}

/// One frame: `RX4F`, compressed size, raw size (uint32 big-endian), one zstd frame.
pub fn frame(raw: &[u8]) -> Vec<u8> {
    let z = zstd::encode_all(raw, 3).expect("zstd");
    let mut out = b"RX4F".to_vec();
    out.extend((z.len() as u32).to_be_bytes());
    out.extend((raw.len() as u32).to_be_bytes());
    out.extend(z);
    out
}

/// The bytes of a frame log.
pub fn build(batches: &[Batch]) -> Vec<u8> {
    let mut out = Vec::new();
    for batch in batches {
        let mut records = vec![json!({"type": "batch/begin", "time": batch.time})];
        records.extend(batch.events.iter().cloned());
        let mut hash = Sha256::new();
        for r in &records {
            let raw = serde_json::to_vec(r).expect("json");
            hash.update(&raw);
            out.extend(frame(&raw));
        }
        let digest: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
        let end = match batch.end {
            End::Good => Some(digest),
            End::BadDigest => Some("0".repeat(64)),
            End::Missing => None,
        };
        if let Some(d) = end {
            out.extend(frame(&serde_json::to_vec(&json!({"type": "batch/end", "sha256": d})).expect("json")));
        }
    }
    out
}

/// The records of a frame log, decoded (for the comparison with the description).
pub fn records(bytes: &[u8]) -> Vec<Value> {
    let mut out = Vec::new();
    let mut off = 0;
    while off + 12 <= bytes.len() {
        let csize = u32::from_be_bytes(bytes[off + 4..off + 8].try_into().expect("4 bytes")) as usize;
        let raw = zstd::decode_all(&bytes[off + 12..off + 12 + csize]).expect("a frame decodes");
        out.push(serde_json::from_slice(&raw).expect("a record is JSON"));
        off += 12 + csize;
    }
    out
}

fn msg(v: Value) -> Value {
    json!({ "message": v })
}

const T0: i64 = 1_790_000_000_000;

/// Every frames fixture: its home-relative path and its batches.
pub fn fixtures() -> Vec<(&'static str, Vec<Batch>)> {
    vec![
        // A CLI workspace session (no header.json: the workspace comes from the host's
        // session-context message), mirroring the JSONL transcript `mirrored-1`.
        (
            ".reasonix/projects/-w-app/sessions-v4/mirrored-1/events.frames",
            vec![
                Batch {
                    time: T0,
                    events: vec![
                        event(
                            "message/complete",
                            msg(json!({"id": "m0", "role": "system", "origin": "host", "content": "You are a coding agent."})),
                        ),
                        event(
                            "message/complete",
                            msg(
                                json!({"id": "m1", "role": "user", "origin": "host", "content": "Session context.\nCurrent workspace: \"/w/app\"\nShell: bash"}),
                            ),
                        ),
                        event(
                            "message/complete",
                            msg(
                                json!({"id": "m2", "role": "user", "origin": "user", "content": "why does the prefix cache miss after a restart", "createdAt": T0 + 1_000}),
                            ),
                        ),
                    ],
                    end: End::Good,
                },
                Batch {
                    time: T0 + 4_000,
                    events: vec![
                        event(
                            "message/complete",
                            msg(
                                json!({"id": "m3", "role": "assistant", "content": "Running the cache probe.", "tool_calls": [{"id": "c1", "name": "bash", "arguments": "{\"command\":\"make cache-probe\"}"}]}),
                            ),
                        ),
                        event(
                            "message/complete",
                            msg(
                                json!({"id": "m4", "role": "tool", "tool_call_id": "c1", "content": "probe: miss (cut)", "raw_content": "probe: miss\nkey prefix changed: system prompt hash", "tool_execution": {"exitCode": 2}}),
                            ),
                        ),
                        event(
                            "message/complete",
                            msg(json!({"id": "m5", "role": "assistant", "content": "draft answer that is replaced"})),
                        ),
                        event(
                            "message/complete",
                            msg(json!({"id": "m6", "role": "user", "origin": "user", "local_only": true, "content": "/status"})),
                        ),
                    ],
                    end: End::Good,
                },
                Batch {
                    time: T0 + 6_000,
                    events: vec![
                        event(
                            "message/upsert",
                            msg(
                                json!({"id": "m5", "role": "assistant", "content": "The system prompt embeds the start time, so every restart changes the cache key."}),
                            ),
                        ),
                        event("message/complete", msg(json!({"id": "m7", "role": "assistant", "content": "a retracted aside"}))),
                        event("message/retract", json!({"messageIds": ["m7"]})),
                        event("session/title", json!({"title": "prefix cache misses"})),
                    ],
                    end: End::Good,
                },
                // A batch whose digest does not match: dropped whole.
                Batch {
                    time: T0 + 7_000,
                    events: vec![event(
                        "message/complete",
                        msg(json!({"id": "m8", "role": "assistant", "content": "corrupted batch text"})),
                    )],
                    end: End::BadDigest,
                },
                // The write in progress: no batch/end yet.
                Batch {
                    time: T0 + 8_000,
                    events: vec![event(
                        "message/complete",
                        msg(json!({"id": "m9", "role": "assistant", "content": "unfinished batch text"})),
                    )],
                    end: End::Missing,
                },
            ],
        ),
        // A global session migrated from the JSONL transcript `old-chat` (named in the
        // manifest's source.path), imported whole with `legacy/import`; one payload is a
        // payloadRef into the store's content objects.
        (
            ".reasonix/sessions-v4/migrated-2/events.frames",
            vec![
                Batch {
                    time: T0 + 60_000,
                    events: vec![event(
                        "legacy/import",
                        json!({"messages": [
                            {"id": "l1", "role": "user", "content": "port the retry loop to tokio", "createdAt": T0 + 60_000},
                            {"id": "l2", "role": "assistant", "content": "Ported; the backoff doubles up to 8 s."}
                        ]}),
                    )],
                    end: End::Good,
                },
                Batch {
                    time: T0 + 90_000,
                    events: vec![
                        json!({"type": "message/complete", "payloadRef": {"sha256": REF_SHA, "size": 70000}}),
                        event("model/context-replace", json!({"messages": []})),
                    ],
                    end: End::Good,
                },
            ],
        ),
        // A fork of `migrated-2` (source.path names its directory): the parent stays.
        (
            ".reasonix/sessions-v4/fork-3/events.frames",
            vec![Batch {
                time: T0 + 120_000,
                events: vec![
                    event(
                        "history/replace",
                        json!({"messages": [
                            {"id": "f1", "role": "user", "content": "port the retry loop to tokio", "createdAt": T0 + 60_000}
                        ]}),
                    ),
                    event(
                        "message/complete",
                        msg(
                            json!({"id": "f2", "role": "user", "origin": "user", "content": "now try jittered backoff instead", "createdAt": T0 + 120_000}),
                        ),
                    ),
                    event(
                        "message/complete",
                        msg(json!({"id": "f3", "role": "assistant", "content": "Jitter added: full jitter over the same cap."})),
                    ),
                ],
                end: End::Good,
            }],
        ),
        // A desktop session with header.json (cwd); its id also exists in sessions-v4,
        // which loses.
        (
            ".reasonix/desktop-sessions-v5/by-id/desk-4/events.frames",
            vec![Batch {
                time: T0 + 200_000,
                events: vec![
                    event(
                        "message/complete",
                        msg(
                            json!({"id": "d1", "role": "user", "origin": "user", "content": "rename the config loader", "createdAt": T0 + 200_000}),
                        ),
                    ),
                    event(
                        "message/complete",
                        msg(
                            json!({"id": "d2", "role": "assistant", "content": "", "tool_calls": [{"id": "e1", "name": "edit_file", "arguments": "{\"path\":\"src/config.rs\",\"old_string\":\"fn load_cfg()\",\"new_string\":\"fn load_config()\"}"}]}),
                        ),
                    ),
                    event(
                        "message/complete",
                        msg(
                            json!({"id": "d3", "role": "tool", "tool_call_id": "e1", "content": "edited src/config.rs", "tool_execution": {"exitCode": 0}}),
                        ),
                    ),
                    event("session/title", json!({"title": "config loader rename"})),
                ],
                end: End::Good,
            }],
        ),
        (
            ".reasonix/sessions-v4/desk-4/events.frames",
            vec![Batch {
                time: T0 + 190_000,
                events: vec![event(
                    "message/complete",
                    msg(json!({"id": "d1", "role": "user", "content": "older sessions-v4 copy of desk-4", "createdAt": T0 + 190_000})),
                )],
                end: End::Good,
            }],
        ),
        // A desktop session without header.json: its workspace is the desktop registry's.
        (
            ".reasonix/desktop-sessions-v5/by-id/desk-5/events.frames",
            vec![Batch {
                time: T0 + 300_000,
                events: vec![
                    event(
                        "message/complete",
                        msg(
                            json!({"id": "g1", "role": "user", "origin": "user", "content": "what does the imported transcript say about lint", "createdAt": T0 + 300_000}),
                        ),
                    ),
                    event("message/complete", msg(json!({"id": "g2", "role": "assistant", "content": "It ran clippy with -D warnings."}))),
                ],
                end: End::Good,
            }],
        ),
    ]
}

/// The content object a `payloadRef` in `migrated-2` points at (> 64 KiB in real life;
/// its size does not matter to the reader).
pub const REF_SHA: &str = "ab12cd34000000000000000000000000000000000000000000000000000000ef";

pub fn ref_object() -> Value {
    json!({"message": {"id": "l3", "role": "user", "content": "a very long pasted log about the retry storm", "createdAt": 1_790_000_090_000_i64}})
}

pub fn ref_object_path() -> String {
    format!(".reasonix/sessions-v4/.content-v1/objects/{}/{}/{}", &REF_SHA[..2], &REF_SHA[2..4], REF_SHA)
}

/// A commit as Reasonix 1.38.11 writes it: `recordType` records with `schemaVersion` and
/// `codec`, events wrapped as `batch/event` `{event: {id, seq, kind, payload}}`, the
/// begin stamped with an RFC 3339 `createdAt` (the events' `createdAt` is Go's zero
/// time), the end naming the begin's `commitId`/`eventCount` and a `sha256` deja cannot
/// reproduce (written here as a hash of the commit id, which matches no scheme either).
pub struct Commit {
    pub commit: &'static str,
    pub time: &'static str,
    pub events: Vec<(&'static str, Value)>,
}

pub fn build_v1_38(commits: &[Commit]) -> Vec<u8> {
    let head = json!({"schemaVersion": 4, "codec": "reasonix.session.linear/v4"});
    let with = |extra: Value| {
        let mut v = head.clone();
        if let (Some(m), Value::Object(e)) = (v.as_object_mut(), extra) {
            m.extend(e);
        }
        v
    };
    let mut out = Vec::new();
    let mut seq = 1;
    for c in commits {
        let n = c.events.len();
        let begin = with(json!({"recordType": "batch/begin", "commitId": c.commit, "operationId": format!("runtime:{}", c.commit),
            "operationHash": "0".repeat(64), "firstSeq": seq, "eventCount": n, "writerGeneration": 1, "createdAt": c.time}));
        out.extend(frame(&serde_json::to_vec(&begin).expect("json")));
        let first = seq;
        for (kind, payload) in &c.events {
            let b64 = base64::engine::general_purpose::STANDARD.encode(payload.to_string());
            let ev = with(json!({"recordType": "batch/event", "createdAt": "0001-01-01T00:00:00Z",
                "event": {"id": format!("{:032x}", seq), "seq": seq, "kind": kind, "payload": b64}}));
            out.extend(frame(&serde_json::to_vec(&ev).expect("json")));
            seq += 1;
        }
        let digest: String = Sha256::digest(c.commit.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
        let end = with(json!({"recordType": "batch/end", "commitId": c.commit, "firstSeq": first, "eventCount": n,
            "createdAt": "0001-01-01T00:00:00Z", "sha256": digest}));
        out.extend(frame(&serde_json::to_vec(&end).expect("json")));
    }
    out
}

/// The session a `reasonix run` then `reasonix run -c` of 1.38.11 wrote (shape kept,
/// text our own): system prompt, the host's session-context snapshot, a prompt, a bash
/// call and its result, a failed edit_file, the answer with reasoning, a second prompt.
fn release_1_38_11() -> Vec<Commit> {
    let m = |v: Value| json!({ "message": v });
    let ctx = "<session-context version=\"1\">\nThis host-generated snapshot supersedes every earlier session-context snapshot.\n\n## Environment\n\n- OS: linux/amd64\n- Shell: bash\n\n## Workspace\n\nCurrent workspace: \"/home/dev/projects/shop\"\n</session-context>";
    vec![
        Commit {
            commit: "5d774bdc5b3de84317616faed650dff5",
            time: "2026-12-01T11:50:08.632718376Z",
            events: vec![
                (
                    "message/complete",
                    m(json!({"role": "system", "id": "01M8RQ1NZR6Q5JEFMAH0Z371K9", "content": "You are Reasonix, a coding agent."})),
                ),
                ("session/config", json!({"modelIdentity": "", "modelRef": "mock/mock-model"})),
            ],
        },
        Commit {
            commit: "a8c132aa18b87587f6ebd3edae0da93b",
            time: "2026-12-01T11:50:08.700000000Z",
            events: vec![("turn/start", json!({"status": "in_progress"}))],
        },
        Commit {
            commit: "0a8dd74c0bba6a0a7a0ba59e9101b4aa",
            time: "2026-12-01T11:50:08.840000000Z",
            events: vec![
                ("message/complete", m(json!({"role": "user", "id": "01M8RQ1P67D581T8ATFDKDGFMA", "origin": "host", "content": ctx}))),
                (
                    "message/complete",
                    m(
                        json!({"role": "user", "id": "01M8RQ1P67QVYPJDFY34CAKPTX", "origin": "user", "content": "Please fix the jwt refresh bug in auth.rs", "raw_content": "Please fix the jwt refresh bug in auth.rs", "createdAt": 1_796_125_808_839_i64}),
                    ),
                ),
            ],
        },
        Commit {
            commit: "575242f31dd7affc0e91c1db3e4e33ea",
            time: "2026-12-01T11:50:08.900000000Z",
            events: vec![(
                "assistant/attempt",
                json!({"action": "begin", "attempt": 1, "id": "01M8RQ1P68RJR2JFJV12SE5QT8", "max": 4, "messageId": "01M8RQ1P68RJR2JFJV12SE5QT8", "reason": ""}),
            )],
        },
        Commit {
            commit: "15000e83cc1dced4a21d1e5a9ed0634f",
            time: "2026-12-01T11:50:08.930000000Z",
            events: vec![(
                "tool/call",
                json!({"args": "{\"command\": \"cargo test jwt_refresh\"}", "id": "call_1fd810dcbe", "name": "bash"}),
            )],
        },
        Commit {
            commit: "c5f82068473055f5d9691cec0e7b4bc2",
            time: "2026-12-01T11:50:08.933000000Z",
            events: vec![(
                "message/complete",
                m(
                    json!({"role": "assistant", "id": "01M8RQ1P68RJR2JFJV12SE5QT8", "tool_calls": [{"id": "call_1fd810dcbe", "name": "bash", "arguments": "{\"command\": \"cargo test jwt_refresh\"}"}], "workDurationMs": 93}),
                ),
            )],
        },
        Commit {
            commit: "38772672772df6aba300ccbd7ac3159a",
            time: "2026-12-01T11:50:08.950000000Z",
            events: vec![("tool/start", json!({"id": "call_1fd810dcbe", "name": "bash"}))],
        },
        Commit {
            commit: "3c7b8fea2fca1921dfa5a3224cf9520b",
            time: "2026-12-01T11:50:09.030000000Z",
            events: vec![
                (
                    "message/complete",
                    m(
                        json!({"role": "tool", "id": "01M8RQ1PJVYW47P05R4V44BJGB", "content": "error: exit status 101\ntest jwt_refresh ... FAILED\n", "tool_call_id": "call_1fd810dcbe", "name": "bash",
                "tool_execution": {"kind": "shell", "shell": "bash", "platform": "linux", "supportsAndAnd": true, "state": "failed", "failurePhase": "execution", "exitCode": 101, "outputTail": "test jwt_refresh ... FAILED\n", "mutationRisk": "may_be_partial", "verification": "not_verification", "durationMs": 95}, "tool_run_state": "failed"}),
                    ),
                ),
                ("tool/result", json!({"id": "call_1fd810dcbe", "name": "bash", "args": "{\"command\": \"cargo test jwt_refresh\"}"})),
            ],
        },
        Commit {
            commit: "c5f82068473055f5d9691cec0e7b4bc3",
            time: "2026-12-01T11:50:09.500000000Z",
            events: vec![(
                "message/complete",
                m(
                    json!({"role": "assistant", "id": "01M8RQ1PJVP657BT4C5BHSFFAC", "tool_calls": [{"id": "call_e188d16028", "name": "edit_file", "arguments": "{\"new_string\": \"exp <= now\", \"old_string\": \"exp < now\", \"path\": \"auth.rs\"}"}], "workDurationMs": 465}),
                ),
            )],
        },
        Commit {
            commit: "3af85541ea40b518abc5896eb8089388",
            time: "2026-12-01T11:50:09.560000000Z",
            events: vec![(
                "message/complete",
                m(
                    json!({"role": "tool", "id": "01M8RQ1PNVD0NFPWWSM37WES0T", "content": "error: FS_NOT_FOUND: read auth.rs: the old text was not found\n", "tool_call_id": "call_e188d16028", "name": "edit_file",
                "tool_run_state": "failed", "tool_diagnostic": {"code": "FS_NOT_FOUND", "path": "/home/dev/projects/shop/auth.rs", "operation_id": "call_e188d16028", "recovery": "read the target again"}}),
                ),
            )],
        },
        Commit {
            commit: "e4aa7f2607aa85b9e6b9c02b6bac583e",
            time: "2026-12-01T11:50:10.100000000Z",
            events: vec![(
                "message/complete",
                m(
                    json!({"role": "assistant", "id": "01M8RQ1PNWQMFAWC93RZS9AC54", "content": "The refresh check used < instead of <=; the test shows it.", "reasoning_content": "The expiry comparison is off by one.", "reasoning_state": "complete", "workDurationMs": 533}),
                ),
            )],
        },
        Commit {
            commit: "7d210b2f200aa4bacf2a3a93c241c2ea",
            time: "2026-12-01T11:50:10.150000000Z",
            events: vec![
                (
                    "message/complete",
                    m(
                        json!({"role": "assistant", "id": "01M8RQ9JQCH7G53R31QMWD4WRT", "tool_calls": [{"id": "call_e383cd9f92", "name": "write_file", "arguments": "{\"content\": \"#[test] fn refresh_expiry() {}\\n\", \"path\": \"tests/jwt.rs\"}",
                "diff": "--- a//home/dev/projects/shop/tests/jwt.rs\n+++ b//home/dev/projects/shop/tests/jwt.rs\n@@ -0,0 +1 @@\n+#[test] fn refresh_expiry() {}\n", "added": 1}], "workDurationMs": 1137}),
                    ),
                ),
                (
                    "message/complete",
                    m(
                        json!({"role": "tool", "id": "01M8RQ9K6E0EKDB7SB5MY6ZW0R", "content": "wrote 31 bytes to /home/dev/projects/shop/tests/jwt.rs", "tool_call_id": "call_e383cd9f92", "name": "write_file", "tool_run_state": "completed"}),
                    ),
                ),
            ],
        },
        Commit {
            commit: "0ae982302d6ea7268e0ffa6be3618092",
            time: "2026-12-01T11:50:10.200000000Z",
            events: vec![("turn/end", json!({"status": "completed"}))],
        },
        Commit {
            commit: "6c54714c712a6faf0ebe2c362bed5fa2",
            time: "2026-12-01T11:50:11.620000000Z",
            events: vec![
                ("message/complete", m(json!({"role": "user", "id": "01M8RQ1RX1F1Z6XV92KY91RN4B", "origin": "host", "content": ctx}))),
                (
                    "message/complete",
                    m(
                        json!({"role": "user", "id": "01M8RQ1RX1T27GED4SEBDX6W1P", "origin": "user", "content": "Now add a test for the jwt refresh expiry", "raw_content": "Now add a test for the jwt refresh expiry", "createdAt": 1_796_125_811_617_i64}),
                    ),
                ),
            ],
        },
        Commit {
            commit: "b6b03191bbd3d7c9c8080b458d56361d",
            time: "2026-12-01T11:50:12.400000000Z",
            events: vec![(
                "message/complete",
                m(
                    json!({"role": "assistant", "id": "01M8RQ1SNSY6GHT9WPVK9TWDJA", "content": "Added jwt_refresh_expiry_is_inclusive.", "reasoning_content": "One test is enough.", "reasoning_state": "complete", "workDurationMs": 1010}),
                ),
            )],
        },
    ]
}

/// The release fixture's home-relative path.
pub const RELEASE_1_38_11: &str = ".reasonix/projects/-home-dev-projects-shop/sessions-v4/cc61c01afe90b3c925106ffba260a7b2/events.frames";

#[test]
fn frames_fixtures_match_their_description() {
    let home = deja_core::fixture_home!();
    let write = std::env::var("DEJA_WRITE_FRAMES").is_ok_and(|v| v == "1");
    let mut all: Vec<(&str, Vec<u8>)> = fixtures().into_iter().map(|(rel, batches)| (rel, build(&batches))).collect();
    all.push((RELEASE_1_38_11, build_v1_38(&release_1_38_11())));
    for (rel, want) in all {
        let path = home.join(rel);
        if write {
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, &want).expect("write");
        }
        let got = std::fs::read(&path).unwrap_or_else(|e| panic!("{rel}: {e} (regenerate with DEJA_WRITE_FRAMES=1)"));
        assert_eq!(records(&got), records(&want), "{rel} is stale: regenerate with DEJA_WRITE_FRAMES=1");
    }
    let obj = home.join(ref_object_path());
    if write {
        std::fs::create_dir_all(obj.parent().expect("parent")).expect("mkdir");
        std::fs::write(&obj, ref_object().to_string()).expect("write");
    }
    let got: Value = serde_json::from_slice(&std::fs::read(&obj).expect("content object")).expect("json");
    assert_eq!(got, ref_object());
}
