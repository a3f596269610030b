//! What the linked adapters declare for running deja once it is wired in: every hook
//! envelope and runtime (by name), every wiring's edits, and the live files deja
//! rewrites while a harness runs, with their refresh.
//!
//! These walk the adapter registry, so they sit beside the adapter contract
//! ([`crate::format`]) rather than in [`crate::wire`], which the contract itself
//! names (a harness's `Wiring`) and so must not reach back up to the registry.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::env::StoreEnv;
use crate::wire::engine::Engine;
use crate::wire::hook::{HookEnvelope, Plain};
use crate::wire::live::{body_in, with_body, Refreshed};
use crate::wire::runtime::Runtime;
use crate::wire::{Edit, WireContext, WireError};

/// Every envelope a hook command line can name: [`Plain`], then each linked adapter's
/// (by harness id). The default ([`Nested`]) is what a hook uses when none is named.
pub fn envelopes() -> Vec<&'static dyn HookEnvelope> {
    let mut all: Vec<&'static dyn HookEnvelope> = vec![&Plain];
    all.extend(crate::registry().into_iter().filter_map(|f| f.wiring()?.envelope()));
    all
}

/// The envelope called `name`.
pub fn envelope(name: &str) -> Option<&'static dyn HookEnvelope> {
    envelopes().into_iter().find(|e| e.name() == name)
}

/// Every linked adapter's runtime.
pub fn runtimes() -> Vec<&'static dyn Runtime> {
    crate::registry().into_iter().filter_map(|f| f.wiring()?.runtime()).collect()
}

/// The runtime `deja <name>` runs.
pub fn runtime(name: &str) -> Option<&'static dyn Runtime> {
    runtimes().into_iter().find(|r| r.name() == name)
}

/// The edits of every known target (`<id>` and `<id>-auto`), installed or not: removal
/// and a live file's refresh need them all.
pub fn all_edits(cx: &WireContext) -> BTreeMap<String, Vec<Edit>> {
    let mut map = BTreeMap::new();
    for f in crate::registry() {
        let Some(w) = f.wiring() else { continue };
        let id = f.info().id;
        let plain = w.plain(cx);
        let auto = w.auto(cx);
        if !auto.is_empty() {
            map.insert(format!("{id}-auto"), plain.iter().cloned().chain(auto).collect());
        }
        map.insert(id.to_string(), plain);
    }
    map
}

/// Every linked adapter's live files.
pub fn live_files(env: &StoreEnv) -> Vec<PathBuf> {
    crate::registry().into_iter().filter_map(|f| f.wiring()).flat_map(|w| w.live_files(env)).collect()
}

/// `edits` with each live file's body as deja last wrote it (for `deja doctor`: a
/// refreshed context file is wired, not stale). A live file someone else changed keeps
/// the install's body, so it still reads as changed.
pub fn as_written(env: &StoreEnv, edits: &mut [Edit]) {
    let live = live_files(env);
    let Ok(state) = Engine::new(env.data_dir().join("wiring")).load() else { return };
    for e in edits.iter_mut().filter(|e| live.iter().any(|f| f == e.file())) {
        let Ok(bytes) = std::fs::read(e.file()) else { continue };
        if state.files.get(e.file()).is_none_or(|r| !r.holds(&bytes)) {
            continue;
        }
        if let Some(now) = std::str::from_utf8(&bytes).ok().and_then(|text| body_in(e, text)) {
            *e = with_body(e, &now);
        }
    }
}

/// Makes `file` hold `body` in place of what its installed edit wrote.
pub fn refresh(env: &StoreEnv, file: &Path, body: &str) -> Result<Refreshed, WireError> {
    let exe = crate::wire::current_exe().map_err(|source| WireError::Io { path: PathBuf::from("the running deja binary"), source })?;
    let cx = WireContext { env, exe };
    let engine = Engine::new(env.data_dir().join("wiring"));
    let state = engine.load()?;
    let mut edits = all_edits(&cx);
    // Other files refreshed the same way (`.goosehints` while the MOIM file is written)
    // keep what deja last wrote in them.
    let mut live: BTreeMap<PathBuf, Option<Vec<u8>>> = BTreeMap::new();
    for list in edits.values_mut() {
        for e in list.iter_mut() {
            if e.file() == file {
                *e = with_body(e, body);
            } else if matches!(e, Edit::OwnedFile { .. } | Edit::Block { .. }) {
                let current = live.entry(e.file().to_path_buf()).or_insert_with(|| {
                    let bytes = std::fs::read(e.file()).ok()?;
                    let ours = state.files.get(e.file()).is_some_and(|r| r.holds(&bytes));
                    ours.then_some(bytes)
                });
                if let Some(text) = current.as_deref().and_then(|b| std::str::from_utf8(b).ok()) {
                    if let Some(now) = body_in(e, text) {
                        *e = with_body(e, &now);
                    }
                }
            }
        }
    }
    let installed = state.targets.iter().any(|t| edits.get(t).is_some_and(|l| l.iter().any(|e| e.file() == file)));
    if !installed {
        return Ok(Refreshed::NotInstalled);
    }
    let plan = engine.plan(&state.targets, &edits, false)?;
    if let Some(r) = plan.refused.first() {
        return Ok(Refreshed::Refused(format!("{}: {}", r.path.display(), r.error)));
    }
    let changed: Vec<_> = plan.changes.iter().filter(|c| c.before != c.after || c.kept.is_some()).collect();
    if let Some(c) = changed.iter().find(|c| c.path != file) {
        return Ok(Refreshed::Refused(format!(
            "{} differs from what `deja install` would write; run `deja install` again",
            c.path.display()
        )));
    }
    if let Some(reason) = changed.iter().find_map(|c| c.kept.clone()) {
        return Ok(Refreshed::Refused(format!("{}: {reason}", file.display())));
    }
    if changed.is_empty() {
        return Ok(Refreshed::Unchanged);
    }
    engine.apply(&plan)?;
    Ok(Refreshed::Written)
}
