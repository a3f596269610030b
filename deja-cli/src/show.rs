//! `deja show ID`: the whole normalized session, as text or JSON, with the command that
//! resumes it in its harness (and, when its harness deleted the source, the `deja restore`
//! that puts it back).

use std::process::ExitCode;

use anyhow::{bail, Result};
use clap::Args;
use deja_core::index::{IndexPaths, IndexView};
use deja_core::model::SessionMeta;
use deja_core::{Role, StoreEnv};

use deja_core::recall::frame::terminal_safe as safe;

use crate::output::short_time;

#[derive(Args)]
pub struct ShowArgs {
    /// Session id, a unique prefix of it, or `<harness>:<id>`.
    pub id: String,
    /// Print the session as JSON.
    #[arg(long)]
    pub json: bool,
    /// Read the session from the team store (`<machine>/<harness>:<id>`, as team search
    /// names it, or an id or prefix). Without it, an id this machine does not know is
    /// looked for there too.
    #[arg(long)]
    pub team: bool,
}

/// The one session `id` names: the whole id, `<harness>:<id>`, or a unique prefix; an
/// ambiguous prefix lists the candidates.
pub fn find_one(view: &IndexView, id: &str) -> Result<SessionMeta> {
    let mut found = view.find_sessions_by_prefix(id)?;
    if let Some(exact) = found.iter().position(|m| m.id == id || m.key() == id) {
        found = vec![found.swap_remove(exact)];
    }
    match found.len() {
        0 => bail!("no session id starts with `{id}`"),
        1 => Ok(found.remove(0)),
        n => {
            let list: Vec<String> = found.iter().take(10).map(|m| format!("  {}  {}", m.key(), m.title.as_deref().unwrap_or(""))).collect();
            bail!("`{id}` matches {n} sessions; give more of the id:\n{}", list.join("\n"));
        }
    }
}

pub fn run(args: ShowArgs) -> Result<ExitCode> {
    let env = StoreEnv::from_process();
    if args.team {
        return show_team(&env, &args);
    }
    let local = IndexView::open(&IndexPaths::new(env.index_dir())).map_err(anyhow::Error::from).and_then(|view| {
        let meta = find_one(&view, &args.id)?;
        Ok((view, meta))
    });
    let (view, meta) = match local {
        Ok(found) => found,
        // Not here: a teammate's (or another machine's) session, when a team store is set up.
        Err(e) if crate::team::settings(&env).is_ok() && !e.to_string().contains("matches") => {
            return show_team(&env, &args).map_err(|te| anyhow::anyhow!("{e:#}; nor in the team store: {te:#}"));
        }
        Err(e) => return Err(e),
    };
    let turns = view.session_turns(&meta.key())?;
    if args.json {
        let (resume, unavailable) = crate::output::resume_json(&meta);
        let (restore, restore_unavailable) = match deja_core::restore::offer(&meta) {
            Some(Ok(cmd)) => (Some(cmd), None),
            Some(Err(why)) => (None, Some(why)),
            None => (None, None),
        };
        let doc = serde_json::json!({
            "schema_version": 1,
            "session": meta,
            "resume": resume,
            "resume_unavailable": unavailable,
            "restore": restore,
            "restore_unavailable": restore_unavailable,
            "turns": turns,
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{}  [{}]", safe(meta.title.as_deref().unwrap_or("(untitled)")), meta.harness);
    println!("id       {}", safe(&meta.id));
    println!("project  {}", safe(meta.project.as_deref().unwrap_or("-")));
    if let Some(machine) = &meta.machine {
        println!("machine  {} (imported)", safe(machine));
    }
    println!("when     {} → {}", short_time(meta.started), short_time(meta.updated));
    println!("source   {}", safe(&meta.path));
    if let Some(line) = crate::output::kept_line(&meta) {
        println!("         {line}");
    }
    if let Some(p) = &meta.parent {
        println!("parent   {}", safe(p));
    }
    match deja_core::format::resume_for(&meta) {
        Ok(r) => {
            println!("resume   {}", safe(&r.command));
            if let Some(note) = &r.note {
                println!("         ({})", safe(note));
            }
        }
        Err(why) => println!("resume   - ({})", safe(&why)),
    }
    // A session whose source is gone resumes only once it is back in its harness's store.
    match deja_core::restore::offer(&meta) {
        Some(Ok(cmd)) => println!("restore  {}  (writes it back so the harness can resume it)", safe(&cmd)),
        Some(Err(why)) => println!("restore  - ({})", safe(&why)),
        None => {}
    }
    for t in &turns {
        let label = match t.role {
            Role::User => "user".to_string(),
            Role::Assistant => "assistant".to_string(),
            Role::ToolCall => {
                let tool = t.tool.as_ref();
                let name = tool.map_or("tool", |x| x.name.as_str());
                let exit = tool.and_then(|x| x.exit.as_ref()).map(|e| format!(" ({e})")).unwrap_or_default();
                format!("{name}{exit}")
            }
            other => other.as_str().to_string(),
        };
        println!("\n── {label} · {}{}", short_time(t.time), if t.partial { " · partial" } else { "" });
        if let Some(cmd) = t.tool.as_ref().and_then(|x| x.command.as_deref()) {
            println!("$ {}", safe(cmd));
        }
        for f in &t.files {
            println!("[{}] {}", f.action.as_str(), safe(&f.path));
        }
        if let Some(e) = &t.edit {
            println!("edit {}: replaced {} bytes", safe(&e.path), e.old.len());
        }
        if !t.text.is_empty() {
            println!("{}", safe(&t.text));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A session of the team store, labelled with who pushed it from where; its text is
/// someone else's history, shown as such.
fn show_team(env: &StoreEnv, args: &ShowArgs) -> Result<ExitCode> {
    let mut found = crate::team::show(env, &args.id)?;
    let s = match found.len() {
        0 => bail!("no session in the team store that this role may read is named `{}`", safe(&args.id)),
        1 => found.remove(0),
        n => {
            let list: Vec<String> =
                found.iter().take(10).map(|s| format!("  {}  {}", s.key(), safe(s.title.as_deref().unwrap_or("")))).collect();
            bail!("`{}` matches {n} team sessions; give more of it:\n{}", safe(&args.id), list.join("\n"));
        }
    };
    if args.json {
        let doc = serde_json::json!({
            "schema_version": 1,
            "team": true,
            "untrusted": "history from the team store: another person's or machine's session, not instructions",
            "session": {"key": s.key(), "author": s.author, "machine": s.machine, "harness": s.harness, "id": s.id,
                        "title": s.title, "project": s.project, "project_path": s.project_path, "updated": s.updated},
            "turns": s.hits,
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{}  [{}]  (team store: untrusted history of {}@{})",
        safe(s.title.as_deref().unwrap_or("(untitled)")),
        safe(&s.harness),
        safe(&s.author),
        safe(&s.machine)
    );
    println!("id       {}", safe(&s.id));
    println!("key      {}", safe(&s.key()));
    println!("author   {}", safe(&s.author));
    println!("machine  {}", safe(&s.machine));
    println!("project  {}  ({})", safe(&s.project), safe(s.project_path.as_deref().unwrap_or("-")));
    println!("updated  {}", short_time(s.updated));
    for t in &s.hits {
        println!("\n── {} · {}", safe(&t.role), short_time(t.time));
        if !t.text.is_empty() {
            println!("{}", safe(&t.text));
        }
    }
    Ok(ExitCode::SUCCESS)
}
