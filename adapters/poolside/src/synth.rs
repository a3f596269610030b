//! Poolside's synthetic writer: a [`SynthSession`] as the `pool` CLI writes an interactive
//! trajectory, `trajectory-interactive_<uuid>.ndjson` in the trajectories directory
//! discovery looks in on this OS. Events are `{id, step_id, timestamp, type, <payload>}`
//! with microsecond offsets: `session.start` (workspace, empty prompt), a `session.input`
//! per prompt, then per model step `tool_call.inference.start`, `thought.end`,
//! `assistant_message.end`, `tool_call.inference.end` and the step's
//! `tool_call.parsed` / `tool_call.result` pairs (`shell` with `args.cmd`, `read_file` with
//! `args.path`), `session.exit` last. No exit code is written, as poolside writes none. The
//! page names no edit tool, so an edit is written as an `edit_file` call (`path`,
//! `old_str`, `new_str`), which the reader takes generically like any unnamed tool.

use std::path::{Path, PathBuf};

use deja_core::{StoreEnv, SynthSession, SynthTurn, Timestamp};
use serde_json::{json, Value};

/// Writes `s` where discovery finds it with only `HOME` set and returns the trajectory.
pub fn write(home: &Path, s: &SynthSession) -> std::io::Result<PathBuf> {
    let dir = super::INFO
        .store
        .root(super::ID, &StoreEnv::with_home(home))
        .ok_or_else(|| std::io::Error::other("no poolside store on this OS"))?;
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!("trajectory-interactive_{}.ndjson", s.id));
    std::fs::write(&path, render(s))?;
    Ok(path)
}

/// Poolside's timestamps: UTC with microseconds and a `+00:00` offset.
fn stamp(t: Timestamp) -> String {
    match t.to_datetime() {
        Some(dt) => dt.format("%Y-%m-%dT%H:%M:%S%.6f+00:00").to_string(),
        None => t.to_rfc3339(),
    }
}

struct Events {
    out: String,
    n: u32,
    step: u32,
    /// The model step is open (its inference has started).
    in_step: bool,
    /// The open step's inference has ended (its tool calls follow).
    inferred: bool,
}

impl Events {
    fn event(&mut self, time: Timestamp, kind: &str, payload: Option<Value>) {
        self.n += 1;
        let mut v = json!({"id": format!("e{}", self.n), "timestamp": stamp(time), "type": kind});
        if self.in_step {
            v["step_id"] = Value::from(format!("s{}", self.step));
        }
        if let Some(p) = payload {
            v[kind.replace('.', "_")] = p;
        }
        self.out.push_str(&v.to_string());
        self.out.push('\n');
    }

    fn begin_step(&mut self, time: Timestamp) {
        if !self.in_step {
            self.step += 1;
            self.in_step = true;
            self.inferred = false;
            self.event(time, "tool_call.inference.start", Some(json!({"chat_completion_request": {"model": "malibu"}})));
        }
    }

    /// The model's reply is complete: its usage, before the calls it asked for run.
    fn finish_inference(&mut self, time: Timestamp) {
        if self.in_step && !self.inferred {
            self.inferred = true;
            let usage = json!({"input_tokens": 900, "output_tokens": 40, "cache_read_input_tokens": 0, "cache_write_input_tokens": 0});
            self.event(time, "tool_call.inference.end", Some(usage));
        }
    }

    fn end_step(&mut self, time: Timestamp) {
        self.finish_inference(time);
        self.in_step = false;
    }
}

fn render(s: &SynthSession) -> String {
    let mut w = Events { out: String::new(), n: 0, step: 0, in_step: false, inferred: false };
    let start = json!({"workspace": s.project, "working_directories": [s.project], "prompt": ""});
    w.event(s.started, "session.start", Some(start));
    let (mut inputs, mut calls) = (0u32, 0u32);
    let mut prev = s.started;
    for turn in &s.turns {
        let time = turn.time();
        let last = std::mem::replace(&mut prev, time);
        match turn {
            SynthTurn::User { text, .. } => {
                // A closing record's time is the last turn's, as at the end of the file, so a session
                // grown by more turns re-renders its earlier lines byte for byte (the corpus `grow`).
                w.end_step(Timestamp(last.millis() + 3));
                inputs += 1;
                w.event(time, "session.input", Some(json!({"id": format!("i{inputs}"), "prompt": text, "mode": "agent"})));
            }
            SynthTurn::Reasoning { text, .. } => {
                w.begin_step(time);
                w.event(time, "thought.start", None);
                w.event(time, "thought.end", Some(json!({"thought": text})));
            }
            SynthTurn::Assistant { text, .. } => {
                w.begin_step(time);
                w.event(time, "assistant_message.start", None);
                w.event(time, "assistant_message.end", Some(json!({"assistant_message": text})));
            }
            SynthTurn::Shell { .. } | SynthTurn::Read { .. } | SynthTurn::Edit { .. } => {
                w.begin_step(time);
                calls += 1;
                let id = format!("c{calls}");
                let (name, args, observation, is_error) = match turn {
                    SynthTurn::Shell { command, output, exit_code, .. } => {
                        ("shell", json!({"cmd": command}), output.clone(), *exit_code != 0)
                    }
                    SynthTurn::Read { path, output, .. } => ("read_file", json!({"path": path}), output.clone(), false),
                    SynthTurn::Edit { path, old, new, .. } => {
                        ("edit_file", json!({"path": path, "old_str": old, "new_str": new}), format!("Edited {path}"), false)
                    }
                    _ => continue,
                };
                w.finish_inference(time);
                w.event(time, "tool_call.parsed", Some(json!({"id": id, "name": name, "args": args})));
                let result = json!({"id": id, "tool_name": name, "observation": observation, "is_error": is_error});
                w.event(Timestamp(time.millis() + 1), "tool_call.result", Some(result));
                // The next model call is a new step.
                w.end_step(Timestamp(time.millis() + 2));
            }
        }
    }
    let end = Timestamp(s.turns.last().map_or(s.started, SynthTurn::time).millis() + 3);
    w.end_step(end);
    w.event(end, "session.exit", Some(json!({"reason": "user_exit"})));
    w.out
}
